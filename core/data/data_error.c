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
