#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sbuf_reserve(dlg_sbuf *b, size_t extra)
{
    if (b->cap - b->len > extra)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len <= extra) {
        if (cap > SIZE_MAX / 2)
            return -DLG_ENOMEM;
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p)
        return -DLG_ENOMEM;
    if (!b->p)
        p[0] = '\0';
    b->p = p;
    b->cap = cap;
    return 0;
}

int sbuf_add(dlg_sbuf *b, const void *s, size_t n)
{
    if (sbuf_reserve(b, n) != 0)
        return -DLG_ENOMEM;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int sbuf_adds(dlg_sbuf *b, const char *s) { return sbuf_add(b, s, strlen(s)); }

int sbuf_addc(dlg_sbuf *b, char c) { return sbuf_add(b, &c, 1); }

int sbuf_printf(dlg_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || sbuf_reserve(b, (size_t)n) != 0)
        return -DLG_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void sbuf_truncate(dlg_sbuf *b, size_t len)
{
    if (b->p && len < b->len) {
        b->len = len;
        b->p[len] = '\0';
    }
}

void sbuf_free(dlg_sbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
