/* A dlg_host with error() (keeps the last message, counts the calls),
 * log() (counts warnings) and, with fuzz_host_files, plain POSIX reads of
 * files: for plugin parsers fed by the fuzzers and their regression tests. */
#ifndef DLG_FUZZ_HOST_H
#define DLG_FUZZ_HOST_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

typedef struct fuzz_host {
    dlg_host host;
    char msg[1024];
    int errors;
    int warnings;
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

static inline void fuzz_host_log(const dlg_host *h, dlg_log_level lvl, const char *fmt, ...)
{
    fuzz_host *f = h->ctx;
    f->warnings += lvl <= DLG_LOG_WARN;
    (void)fmt;
}

/* no stop is ever asked (readers poll it between pieces) */
static inline bool fuzz_host_stopping(const dlg_host *h)
{
    (void)h;
    return false;
}

static inline void fuzz_host_init(fuzz_host *f)
{
    *f = (fuzz_host){.host = {.struct_size = sizeof(dlg_host), .error = fuzz_host_error,
                              .log = fuzz_host_log, .stopping = fuzz_host_stopping}};
    f->host.ctx = f;
}

/* ---- files, read with pread ---- */
typedef struct fuzz_file {
    dlg_file base;
    int fd;
} fuzz_file;

static inline int fuzz_file_open(const dlg_host *h, const char *storage, const char *path, dlg_file **out)
{
    (void)h;
    (void)storage;
    fuzz_file *f = calloc(1, sizeof *f);
    if (!f)
        return -DLG_ENOMEM;
    if ((f->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        free(f);
        return -DLG_EIO;
    }
    *out = &f->base;
    return 0;
}

static inline int64_t fuzz_file_read(const dlg_host *h, dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)h;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(((fuzz_file *)f)->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0)
            return -DLG_EIO;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (int64_t)got;
}

static inline int fuzz_file_size(const dlg_host *h, dlg_file *f, uint64_t *size)
{
    (void)h;
    struct stat st;
    if (fstat(((fuzz_file *)f)->fd, &st) != 0)
        return -DLG_EIO;
    *size = (uint64_t)st.st_size;
    return 0;
}

static inline void fuzz_file_close(const dlg_host *h, dlg_file *f)
{
    (void)h;
    close(((fuzz_file *)f)->fd);
    free(f);
}

/* Adds file_open, file_read, file_size and file_close. */
static inline void fuzz_host_files(fuzz_host *f)
{
    f->host.file_open = fuzz_file_open;
    f->host.file_read = fuzz_file_read;
    f->host.file_size = fuzz_file_size;
    f->host.file_close = fuzz_file_close;
}

#endif
