#include "prep_testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void kv_add(kv *k, const char *fmt, ...)
{
    if (k->n >= (int)(sizeof k->buf / sizeof k->buf[0]))
        abort(); /* a test with more overrides than room: grow buf */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->buf[k->n], sizeof k->buf[0], fmt, ap);
    va_end(ap);
    k->ptr[k->n] = k->buf[k->n];
    k->ptr[++k->n] = NULL;
}

int fx_fresh_dir(const char *dir, int make)
{
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'%s%s%s", dir, make ? " && mkdir -p '" : "", make ? dir : "",
             make ? "'" : "");
    return system(cmd) == 0 ? 0 : -1;
}
