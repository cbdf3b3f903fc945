/* A dlg_host with just error(): keeps the last message, counts the calls
 * (for plugin parsers fed by the fuzzers and their regression tests). */
#ifndef DLG_FUZZ_HOST_H
#define DLG_FUZZ_HOST_H

#include <stdarg.h>
#include <stdio.h>

#include <dlgauge/plugin.h>

typedef struct fuzz_host {
    dlg_host host;
    char msg[1024];
    int errors;
} fuzz_host;

static inline int fuzz_host_error(const dlg_host *h, int code, const char *fmt, ...)
{
    fuzz_host *f = h->ctx;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
    f->errors++;
    return -code;
}

static inline void fuzz_host_init(fuzz_host *f)
{
    *f = (fuzz_host){.host = {.struct_size = sizeof(dlg_host), .error = fuzz_host_error}};
    f->host.ctx = f;
}

#endif
