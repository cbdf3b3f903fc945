#define _GNU_SOURCE
#include "proc_limits.h"

#include "cgroup.h"
#include "proc_file.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Whether getrlimit gives the resource in bytes, which ulimit shows in
 * KiB (-v, -d, -s, -l, -m). */
static bool in_bytes(int resource)
{
    return resource == RLIMIT_AS || resource == RLIMIT_DATA || resource == RLIMIT_STACK ||
           resource == RLIMIT_MEMLOCK || resource == RLIMIT_RSS;
}

void dlg_rlimit_text(int resource, char *buf, size_t len)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
        snprintf(buf, len, "unlimited");
        return;
    }
    unsigned long long v = (unsigned long long)rl.rlim_cur;
    if (!in_bytes(resource))
        snprintf(buf, len, "%llu", v);
    else if (v >= 1ull << 30) /* ulimit's number, then one a reader takes in at once */
        snprintf(buf, len, "%llu (%.1f GiB)", v / 1024, (double)v / (1ull << 30));
    else
        snprintf(buf, len, "%llu (%.1f MiB)", v / 1024, (double)v / (1ull << 20));
}

/* This process's pids cgroup under /sys/fs/cgroup (v1's pids hierarchy,
 * else v2's); false when it has none. */
static bool pids_cgroup(char *dir, size_t len)
{
    char own[1024];
    if (dlg_cgroup_own_path(NULL, "pids", own, sizeof own) == 0)
        snprintf(dir, len, "/sys/fs/cgroup/pids%s", own);
    else if (dlg_cgroup_own_path(NULL, NULL, own, sizeof own) == 0)
        snprintf(dir, len, "/sys/fs/cgroup%s", own);
    else
        return false;
    return true;
}

/* The smallest pids.max of dir and its ancestors; UINT64_MAX for none. */
static uint64_t smallest_pids_max(char *dir)
{
    uint64_t least = UINT64_MAX;
    for (;;) {
        char path[1200], v[32];
        snprintf(path, sizeof path, "%s/pids.max", dir);
        unsigned long long n = dlg_file_line(path, v, sizeof v) == 0 ? strtoull(v, NULL, 10) : 0;
        if (v[0] >= '0' && v[0] <= '9' && n < least)
            least = n;
        char *slash = strrchr(dir, '/');
        if (!slash || strcmp(slash, "/pids") == 0 || strcmp(dir, "/sys/fs/cgroup") == 0)
            return least;
        *slash = '\0';
    }
}

void dlg_proc_limits_text(char *buf, size_t len)
{
    char nproc[32], as[32], dir[1100], pids[32] = "unknown (no pids cgroup)";
    dlg_rlimit_text(RLIMIT_NPROC, nproc, sizeof nproc);
    dlg_rlimit_text(RLIMIT_AS, as, sizeof as);
    if (pids_cgroup(dir, sizeof dir)) {
        uint64_t least = smallest_pids_max(dir);
        if (least == UINT64_MAX)
            snprintf(pids, sizeof pids, "max");
        else
            snprintf(pids, sizeof pids, "%" PRIu64, least);
    }
    snprintf(buf, len, "ulimit -u is %s / pids.max is %s%s%s", nproc, pids,
             strcmp(as, "unlimited") ? " / ulimit -v is " : "", strcmp(as, "unlimited") ? as : "");
}

/* A probe thread: it lives until the caller has started all of them. */
static void *wait_for_all(void *gate)
{
    pthread_mutex_lock(gate);
    pthread_mutex_unlock(gate);
    return NULL;
}

int dlg_threads_startable(int n, char *why, size_t len)
{
    if (n <= 1)
        return 0;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!t) {
        snprintf(why, len, "could not start %d threads: out of memory", n);
        return -1;
    }
    pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&gate);
    int started = 0, e = 0;
    while (started < n - 1 && (e = pthread_create(&t[started], NULL, wait_for_all, &gate)) == 0)
        started++;
    pthread_mutex_unlock(&gate);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    pthread_mutex_destroy(&gate);
    if (e == 0)
        return 0;
    char limits[256];
    dlg_proc_limits_text(limits, sizeof limits);
    snprintf(why, len, "could not start %d threads: %s; %s", n, strerror(e), limits);
    return -1;
}
