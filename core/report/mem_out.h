/* A stdio stream into a growing buffer that says when it could not grow.
 * open_memstream does not: glibc drops a character it has no room for
 * without setting the stream's error flag, and a failed last realloc in
 * fclose leaves the buffer NULL and returns 0, so a report rendered into
 * one could come out short and pass for whole. */
#ifndef DLG_REPORT_MEM_OUT_H
#define DLG_REPORT_MEM_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct rep_mem_out {
    char *buf; /* what was written, NUL-terminated once closed (malloc'd) */
    size_t len, cap;
    bool lost; /* a write found no memory: buf is short */
} rep_mem_out;

/* A write-only stream into *m (zeroed here), or NULL (out of memory). */
FILE *rep_mem_open(rep_mem_out *m);
/* Closes f: 0 when m->buf holds all that was written, else ENOMEM (buf
 * freed).  The caller frees m->buf. */
int rep_mem_close(FILE *f, rep_mem_out *m);

#endif
