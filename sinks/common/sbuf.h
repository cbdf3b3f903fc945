/* A growable byte buffer for building output text (rows, lines, bodies).
 * Sinks keep one per instance and reset it, so steady-state writes do not
 * allocate. */
#ifndef DLG_SBUF_H
#define DLG_SBUF_H

#include <stddef.h>

#include <dlgauge/plugin.h>

typedef struct dlg_sbuf {
    char *p;    /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
} dlg_sbuf;

/* All return 0 or -DLG_ENOMEM; on failure the buffer is unchanged. */
int sbuf_reserve(dlg_sbuf *b, size_t extra);
int sbuf_add(dlg_sbuf *b, const void *s, size_t n);
int sbuf_adds(dlg_sbuf *b, const char *s);
int sbuf_addc(dlg_sbuf *b, char c);
int sbuf_printf(dlg_sbuf *b, const char *fmt, ...) DLG_PRINTF(2, 3);
void sbuf_truncate(dlg_sbuf *b, size_t len);
void sbuf_free(dlg_sbuf *b);

#endif
