/* Where dataset bytes come from and go to.  Readers see only a positioned
 * read callback, so the same code reads through any storage backend
 * (posix, direct, uring, throttle...) or from memory. */
#ifndef DLG_DATA_SOURCE_H
#define DLG_DATA_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "data_error.h"

/* Reads up to n bytes at off into buf: returns bytes read (short only at
 * end of file) or -DLG_E* code. */
typedef int64_t (*dlg_pread_fn)(void *ctx, void *buf, size_t n, uint64_t off);

/* Appends n bytes: returns n or -DLG_E* code. */
typedef int64_t (*dlg_write_fn)(void *ctx, const void *buf, size_t n);

#define DLG_SIZE_UNKNOWN UINT64_MAX

typedef struct dlg_source {
    dlg_pread_fn pread;
    void *ctx;
    uint64_t size;    /* total bytes, or DLG_SIZE_UNKNOWN */
    const char *name; /* used in error messages (a path); not owned */
    /* Where pread records why it failed (NULL, or no code: it does not
     * say): the storage's reason, whose line then stands. */
    const dlg_data_err *why;
} dlg_source;

typedef struct dlg_output {
    dlg_write_fn write;
    void *ctx;
    const char *name; /* used in error messages; not owned */
} dlg_output;

/* An in-memory file; the caller keeps `mem` alive as long as the source. */
typedef struct dlg_mem_file {
    const void *data;
    size_t len;
} dlg_mem_file;

void dlg_source_mem(dlg_source *s, dlg_mem_file *mem, const void *data, size_t len,
                    const char *name);

/* A source over an open fd (pread(2)); size from fstat.  The fd stays the
 * caller's.  Returns 0 or -code. */
int dlg_source_fd(dlg_source *s, int fd, const char *name, dlg_data_err *err);

/* Opens path read-only as a source; close with dlg_source_close_fd(). */
int dlg_source_open_path(dlg_source *s, const char *path, dlg_data_err *err);
void dlg_source_close_fd(dlg_source *s);

/* Reads exactly what is there: loops over short reads until n bytes or EOF.
 * Returns bytes read or -code (message in err, naming the source). */
int64_t dlg_source_read(const dlg_source *s, void *buf, size_t n, uint64_t off,
                        dlg_data_err *err);

/* Reads the whole source into a new NUL-terminated buffer (free() it).
 * For small text files (.idx, .lst); refuses more than max_len bytes. */
int dlg_source_slurp(const dlg_source *s, size_t max_len, char **out, size_t *len,
                     dlg_data_err *err);

/* An output that write(2)s to fd (retrying short writes and EINTR). */
void dlg_output_fd(dlg_output *o, int fd, const char *name);

#endif
