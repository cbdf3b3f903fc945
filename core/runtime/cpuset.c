#include "cpuset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dlg_cpuset_init(dlg_cpuset *s, int nbits)
{
    if (nbits < CPU_SETSIZE)
        nbits = CPU_SETSIZE;
    s->size = CPU_ALLOC_SIZE(nbits);
    s->nbits = (int)(s->size * 8);
    s->bits = CPU_ALLOC(s->nbits);
    if (!s->bits) {
        memset(s, 0, sizeof *s); /* an empty set that has, counts and frees nothing */
        return -1;
    }
    CPU_ZERO_S(s->size, s->bits);
    return 0;
}

void dlg_cpuset_fini(dlg_cpuset *s)
{
    if (s->bits)
        CPU_FREE(s->bits);
    memset(s, 0, sizeof *s);
}

/* Room for ids below nbits, the ids in s kept. */
static int grow(dlg_cpuset *s, int nbits)
{
    if (nbits <= s->nbits)
        return 0;
    dlg_cpuset bigger;
    if (dlg_cpuset_init(&bigger, nbits) != 0)
        return -1;
    memcpy(bigger.bits, s->bits, s->size);
    dlg_cpuset_fini(s);
    *s = bigger;
    return 0;
}

int dlg_cpuset_add(dlg_cpuset *s, int id)
{
    if (id < 0 || id >= DLG_CPU_ID_LIMIT || grow(s, id + 1) != 0)
        return -1;
    CPU_SET_S((size_t)id, s->size, s->bits);
    return 0;
}

bool dlg_cpuset_has(const dlg_cpuset *s, int id)
{
    return id >= 0 && id < s->nbits && CPU_ISSET_S((size_t)id, s->size, s->bits);
}

int dlg_cpuset_count(const dlg_cpuset *s) { return CPU_COUNT_S(s->size, s->bits); }

int dlg_cpuset_copy(dlg_cpuset *dst, const dlg_cpuset *src)
{
    if (grow(dst, src->nbits) != 0)
        return -1;
    CPU_ZERO_S(dst->size, dst->bits);
    memcpy(dst->bits, src->bits, src->size);
    return 0;
}

int dlg_cpuset_get_affinity(dlg_cpuset *s)
{
    for (;;) {
        if (sched_getaffinity(0, s->size, s->bits) == 0)
            return 0;
        /* EINVAL: the kernel's mask is bigger than ours */
        if (errno != EINVAL || s->nbits * 2 > DLG_CPU_ID_LIMIT || grow(s, s->nbits * 2) != 0)
            return -1;
    }
}

int dlg_cpuset_set_affinity(const dlg_cpuset *s) { return sched_setaffinity(0, s->size, s->bits); }

/* One id of a list: digits, below DLG_CPU_ID_LIMIT; -1 if not. */
static long list_id(const char *p, char **end)
{
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    long v = strtol(p, end, 10);
    return errno == 0 && v < DLG_CPU_ID_LIMIT ? v : -1;
}

int dlg_cpuset_parse_list(const char *text, dlg_cpuset *s)
{
    CPU_ZERO_S(s->size, s->bits);
    if (strcmp(text, "") == 0 || strcmp(text, "\n") == 0)
        return 0; /* e.g. node/has_cpu on a machine without such nodes */
    const char *p = text;
    for (;;) {
        char *end;
        long first = list_id(p, &end), last = first;
        if (first >= 0 && *end == '-')
            last = list_id(end + 1, &end);
        if (first < 0 || last < first || grow(s, (int)last + 1) != 0)
            return -1;
        for (long id = first; id <= last; id++)
            CPU_SET_S((size_t)id, s->size, s->bits);
        if (*end == ',')
            p = end + 1;
        else if (*end == '\0' || (*end == '\n' && end[1] == '\0'))
            return dlg_cpuset_count(s);
        else
            return -1;
    }
}

void dlg_cpuset_format(const dlg_cpuset *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int c = 0; c < s->nbits && o < len; c++) {
        if (!dlg_cpuset_has(s, c))
            continue;
        int e = c;
        while (dlg_cpuset_has(s, e + 1))
            e++;
        o += (size_t)snprintf(buf + o, len - o, e > c ? "%s%d-%d" : "%s%d", o ? "," : "", c, e);
        c = e;
    }
}
