/* Test helper: a growable in-memory output for writers. */
#ifndef DLG_TEST_MEMOUT_H
#define DLG_TEST_MEMOUT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data_source.h"

typedef struct memout {
    uint8_t *buf;
    size_t len, cap;
    int calls;
} memout;

static inline int64_t memout_write(void *ctx, const void *p, size_t n)
{
    memout *m = ctx;
    if (m->len + n > m->cap) {
        size_t cap = m->cap ? m->cap : 256;
        while (cap < m->len + n)
            cap *= 2;
        uint8_t *b = realloc(m->buf, cap);
        if (!b)
            return -DLG_ENOMEM;
        m->buf = b;
        m->cap = cap;
    }
    memcpy(m->buf + m->len, p, n);
    m->len += n;
    m->calls++;
    return (int64_t)n;
}

static inline void memout_init(memout *m, dlg_output *o, const char *name)
{
    memset(m, 0, sizeof *m);
    o->write = memout_write;
    o->ctx = m;
    o->name = name;
}

#endif
