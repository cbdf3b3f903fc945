/* Small helpers shared by the tools workloads. */
#define _GNU_SOURCE
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t tools_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *tools_after_prefix(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    if (!text || strncmp(text, prefix, n) != 0 || text[n] != ':')
        return NULL;
    return text + n + 1;
}

char *tools_concat(const char *a, const char *b)
{
    char *s = NULL;
    return asprintf(&s, "%s%s", a, b) < 0 ? NULL : s;
}

int tools_rank(const dlg_host *h, int *size)
{
    *size = 1;
    if (!DLG_HOST_HAS(h, comm_info))
        return 0;
    dlg_rank_info ri = {.struct_size = sizeof ri};
    h->comm_info(h, &ri);
    if (ri.size <= 1 || ri.rank < 0 || ri.rank >= ri.size)
        return 0;
    *size = ri.size;
    return ri.rank;
}
