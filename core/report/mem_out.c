#define _GNU_SOURCE
#include "mem_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static ssize_t mem_write(void *c, const char *buf, size_t n)
{
    rep_mem_out *m = c;
    if (m->lost)
        return 0; /* stdio: an error */
    if (m->len + n + 1 > m->cap) {
        size_t cap = m->cap ? m->cap : 4096;
        while (cap < m->len + n + 1)
            cap *= 2;
        char *b = realloc(m->buf, cap);
        if (!b) {
            m->lost = true;
            return 0;
        }
        m->buf = b;
        m->cap = cap;
    }
    memcpy(m->buf + m->len, buf, n);
    m->len += n;
    m->buf[m->len] = '\0';
    return (ssize_t)n;
}

FILE *rep_mem_open(rep_mem_out *m)
{
    memset(m, 0, sizeof *m);
    return fopencookie(m, "w", (cookie_io_functions_t){.write = mem_write});
}

int rep_mem_close(FILE *f, rep_mem_out *m)
{
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0; /* its last flush */
    if (!bad && !m->lost && (m->buf || (m->buf = calloc(1, 1))))
        return 0;
    free(m->buf);
    m->buf = NULL;
    m->len = 0;
    return ENOMEM;
}
