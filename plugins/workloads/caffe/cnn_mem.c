/* Plan size estimate and available memory (see cnn_mem.h). */
#define _GNU_SOURCE
#include "cnn_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t cnn_mem_floor_bytes(const dlg_net *net, bool train)
{
    uint64_t largest = 0;
    dlg_shape s;
    for (int b = 0; dlg_net_shape(net, b, &s) == 0; b++) {
        uint64_t c = 1;
        for (int i = 0; i < s.ndim; i++)
            c *= (uint64_t)s.d[i];
        largest = c > largest ? c : largest;
    }
    uint64_t params = (uint64_t)dlg_net_param_total(net);
    return (train ? 3 * params + 2 * largest : params + largest) * sizeof(float);
}

/* First number after `key` in a /proc/meminfo-style file, times mult. */
static uint64_t meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    uint64_t v = 0;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0) {
            v = strtoull(line + kl, NULL, 10) * 1024; /* kB */
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* A one-number file (memory.max / memory.current); false if absent or "max". */
static bool read_u64(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    char buf[64] = "";
    bool ok = f && fgets(buf, sizeof buf, f) && buf[0] >= '0' && buf[0] <= '9';
    if (f)
        fclose(f);
    if (ok)
        *out = strtoull(buf, NULL, 10);
    return ok;
}

/* Smallest memory.max - memory.current over our cgroup and its parents. */
static uint64_t cgroup_headroom(char *where, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[4096] = "", dir[4200];
    uint64_t best = UINT64_MAX;
    bool got = f && fgets(line, sizeof line, f) && strncmp(line, "0::", 3) == 0;
    if (f)
        fclose(f);
    if (!got)
        return best;
    line[strcspn(line, "\n")] = '\0';
    for (char *p = line + 3; *p;) {
        uint64_t max, cur;
        snprintf(dir, sizeof dir, "/sys/fs/cgroup%s/memory.max", p);
        if (read_u64(dir, &max)) {
            snprintf(dir, sizeof dir, "/sys/fs/cgroup%s/memory.current", p);
            cur = 0;
            read_u64(dir, &cur);
            uint64_t room = max > cur ? max - cur : 0;
            if (room < best) {
                best = room;
                snprintf(where, n, "cgroup %s memory.max", p);
            }
        }
        char *slash = strrchr(p, '/');
        if (!slash || slash == p)
            break;
        *slash = '\0';
    }
    return best;
}

uint64_t cnn_mem_available(char *how, size_t n)
{
    uint64_t avail = meminfo("MemAvailable:");
    snprintf(how, n, "MemAvailable");
    char where[256] = "";
    uint64_t room = cgroup_headroom(where, sizeof where);
    if (room < avail || avail == 0) {
        avail = room == UINT64_MAX ? 0 : room;
        snprintf(how, n, "%s", where);
    }
    return avail;
}

int cnn_mem_check(const dlg_host *h, uint64_t need, bool at_least, const char *what,
                  const char *hint)
{
    char how[300];
    uint64_t avail = cnn_mem_available(how, sizeof how);
    if (avail == 0 || need <= avail)
        return 0;
    return h->error(h, DLG_ENOMEM,
                    "%s needs %s%.2f GiB (%llu bytes) but only %.2f GiB (%llu bytes) is "
                    "available (%s)%s",
                    what, at_least ? "at least " : "", (double)need / 1073741824.0,
                    (unsigned long long)need, (double)avail / 1073741824.0,
                    (unsigned long long)avail, how, hint);
}
