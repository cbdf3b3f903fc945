#define _GNU_SOURCE
#include "sched_stat.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool read_schedstat(const char *path, uint64_t *oncpu, uint64_t *delay)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    unsigned long long a = 0, b = 0;
    bool ok = fscanf(f, "%llu %llu", &a, &b) == 2;
    fclose(f);
    *oncpu = a;
    *delay = b;
    return ok;
}

static void take_threads(dlg_sched_snap *s, const char *proc)
{
    char path[512];
    snprintf(path, sizeof path, "%s/self/task", proc);
    DIR *d = opendir(path);
    if (!d)
        return;
    size_t cap = 0;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end)
            continue;
        if (s->nthreads == cap) {
            cap = cap ? 2 * cap : 64;
            dlg_sched_thread *t = realloc(s->threads, cap * sizeof *t);
            if (!(ok = t != NULL))
                break;
            s->threads = t;
        }
        dlg_sched_thread *t = &s->threads[s->nthreads];
        snprintf(path, sizeof path, "%s/self/task/%s/schedstat", proc, e->d_name);
        t->tid = (pid_t)tid;
        /* a thread that exits as it is read is simply not there */
        if (read_schedstat(path, &t->oncpu_ns, &t->delay_ns))
            s->nthreads++;
    }
    closedir(d);
    /* no memory: a partial list would miscount; none of it is used */
    s->have_threads = ok && s->nthreads > 0;
}

/* /proc/stat's cpuN lines for the CPUs in cpus: user nice system idle
 * iowait irq softirq steal [guest guest_nice], guest already in user. */
static void take_steal(dlg_sched_snap *s, const char *proc, const dlg_cpuset *cpus)
{
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/stat", proc);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int seen = 0;
    bool ok = true;
    while (fgets(line, sizeof line, f)) {
        int id;
        unsigned long long v[8];
        /* "cpu  ..." is all CPUs: its first number is no CPU id */
        if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9' || sscanf(line + 3, "%d", &id) != 1 ||
            !dlg_cpuset_has(cpus, id))
            continue;
        seen++;
        int n = sscanf(line + 3, "%*d %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                       &v[5], &v[6], &v[7]);
        if (n < 8) {
            ok = false; /* no steal column (or a line cut short) */
            continue;
        }
        for (int i = 0; i < 8; i++)
            s->ticks += v[i];
        s->steal += v[7];
    }
    fclose(f);
    s->have_steal = ok && seen > 0;
}

void dlg_sched_snap_take(dlg_sched_snap *s, const char *proc, const dlg_cpuset *cpus)
{
    memset(s, 0, sizeof *s);
    take_threads(s, proc);
    dlg_cpuset mine;
    if (!cpus && dlg_cpuset_init(&mine, 0) == 0) {
        if (dlg_cpuset_get_affinity(&mine) == 0)
            take_steal(s, proc, &mine);
        dlg_cpuset_fini(&mine);
    } else if (cpus) {
        take_steal(s, proc, cpus);
    }
}

void dlg_sched_snap_free(dlg_sched_snap *s)
{
    free(s->threads);
    memset(s, 0, sizeof *s);
}

static const dlg_sched_thread *find_thread(const dlg_sched_snap *s, pid_t tid)
{
    for (size_t i = 0; i < s->nthreads; i++)
        if (s->threads[i].tid == tid)
            return &s->threads[i];
    return NULL;
}

void dlg_sched_add(dlg_sched_totals *t, const dlg_sched_snap *a, const dlg_sched_snap *b)
{
    if (a->have_threads && b->have_threads) {
        t->have_wait = true;
        for (size_t i = 0; i < b->nthreads; i++) {
            const dlg_sched_thread *now = &b->threads[i], *was = find_thread(a, now->tid);
            /* counters that went back belong to a new thread of a reused id */
            if (was && (was->oncpu_ns > now->oncpu_ns || was->delay_ns > now->delay_ns))
                was = NULL;
            t->oncpu_ns += now->oncpu_ns - (was ? was->oncpu_ns : 0);
            t->delay_ns += now->delay_ns - (was ? was->delay_ns : 0);
        }
    }
    /* the same CPUs at both ends (the cell's affinity), counters that only grow */
    if (a->have_steal && b->have_steal && b->ticks >= a->ticks && b->steal >= a->steal) {
        t->have_steal = true;
        t->ticks += b->ticks - a->ticks;
        t->steal += b->steal - a->steal;
    }
}

double dlg_sched_wait_share(const dlg_sched_totals *t)
{
    uint64_t runnable = t->oncpu_ns + t->delay_ns;
    return t->have_wait && runnable ? (double)t->delay_ns / (double)runnable : -1;
}

double dlg_sched_steal_share(const dlg_sched_totals *t)
{
    return t->have_steal && t->ticks ? (double)t->steal / (double)t->ticks : -1;
}
