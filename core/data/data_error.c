#include "data_error.h"

#include <stdio.h>

int dlg_data_fail(dlg_data_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return -code;
}

void dlg_data_err_clear(dlg_data_err *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

const char *dlg_data_printable(char *buf, size_t len, const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        bool plain = b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\';
        size_t need = plain ? 1 : 4;
        if (o + need + 4 > len) { /* room for "..." and the NUL */
            snprintf(buf + o, len - o, "...");
            return buf;
        }
        if (plain)
            buf[o++] = (char)b[i];
        else
            o += (size_t)snprintf(buf + o, len - o, "\\x%02x", b[i]);
    }
    buf[o] = '\0';
    return buf;
}
