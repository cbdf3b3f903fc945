#define _GNU_SOURCE
#include "sched_stat.h"

#include "proc_file.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool read_schedstat(const char *path, uint64_t *oncpu, uint64_t *delay)
{
    char line[128];
    unsigned long long a = 0, b = 0;
    bool ok = dlg_file_line(path, line, sizeof line) == 0 && sscanf(line, "%llu %llu", &a, &b) == 2;
    *oncpu = a;
    *delay = b;
    return ok;
}

static int tid_cmp(const void *a, const void *b)
{
    pid_t x = ((const dlg_sched_thread *)a)->tid, y = ((const dlg_sched_thread *)b)->tid;
    return (x > y) - (x < y);
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
    /* by tid, for dlg_sched_add's merge of two readings */
    if (s->have_threads)
        qsort(s->threads, s->nthreads, sizeof *s->threads, tid_cmp);
}

typedef struct cpu_lines {
    dlg_sched_snap *s;
    const dlg_cpuset *cpus;
    bool steal_ok, busy_ok;
} cpu_lines;

static bool take_cpu_line(const char *line, void *ctx)
{
    cpu_lines *c = ctx;
    dlg_sched_snap *s = c->s;
    int id;
    unsigned long long v[8] = {0};
    /* "cpu  ..." is all CPUs: its first number is no CPU id */
    if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9' || sscanf(line + 3, "%d", &id) != 1 ||
        !dlg_cpuset_has(c->cpus, id))
        return true;
    s->ncpus++;
    int n = sscanf(line + 3, "%*d %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]);
    c->steal_ok = c->steal_ok && n == 8; /* no steal column (before 2.6.11) */
    c->busy_ok = c->busy_ok && n >= 7;   /* a line cut short */
    for (int i = 0; i < 8; i++)
        s->ticks += v[i];
    s->steal += v[7];
    s->busy += v[0] + v[1] + v[2] + v[5] + v[6];
    return true;
}

/* /proc/stat's cpuN lines for the CPUs in cpus: user nice system idle
 * iowait irq softirq steal [guest guest_nice], guest already in user. */
static void take_cpus(dlg_sched_snap *s, const char *proc, const dlg_cpuset *cpus)
{
    char path[512];
    snprintf(path, sizeof path, "%s/stat", proc);
    cpu_lines c = {s, cpus, true, true};
    if (dlg_file_lines(path, take_cpu_line, &c) != 0)
        c.steal_ok = c.busy_ok = false; /* a part of them would miscount */
    s->have_steal = c.steal_ok && s->ncpus > 0;
    s->have_busy = c.busy_ok && s->ncpus > 0;
}

/* /proc/self/stat's utime stime cutime cstime (fields 14-17, in the ticks
 * of /proc/stat): every thread's, ended ones too, and the children the
 * process reaped. */
static void take_own(dlg_sched_snap *s, const char *proc)
{
    char path[512], buf[1024];
    snprintf(path, sizeof path, "%s/self/stat", proc);
    if (dlg_file_line(path, buf, sizeof buf) != 0)
        return;
    /* the command's name, in parentheses, may hold spaces and ')' */
    const char *p = strrchr(buf, ')');
    long long v[4];
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld %lld %lld", &v[0], &v[1], &v[2],
                     &v[3]) != 4)
        return;
    for (int i = 0; i < 4; i++) {
        if (v[i] < 0)
            return;
        s->own += (uint64_t)v[i];
    }
    s->have_own = true;
}

/* The CPUs' lines and the process's own time, one right after the other:
 * their difference is what other processes ran. */
static void take_cpu_time(dlg_sched_snap *s, const char *proc, const dlg_cpuset *cpus)
{
    take_cpus(s, proc, cpus);
    take_own(s, proc);
}

void dlg_sched_snap_take(dlg_sched_snap *s, const char *proc, const dlg_cpuset *cpus)
{
    memset(s, 0, sizeof *s);
    take_threads(s, proc);
    dlg_cpuset mine;
    if (!cpus && dlg_cpuset_init(&mine, 0) == 0) {
        if (dlg_cpuset_get_affinity(&mine) == 0)
            take_cpu_time(s, proc, &mine);
        dlg_cpuset_fini(&mine);
    } else if (cpus) {
        take_cpu_time(s, proc, cpus);
    }
}

void dlg_sched_snap_free(dlg_sched_snap *s)
{
    free(s->threads);
    memset(s, 0, sizeof *s);
}

/* Adds the run delay of b's threads since a: both by tid, one merge. */
static void add_threads(dlg_sched_totals *t, const dlg_sched_snap *a, const dlg_sched_snap *b)
{
    size_t j = 0;
    for (size_t i = 0; i < b->nthreads; i++) {
        const dlg_sched_thread *now = &b->threads[i], *was = NULL;
        while (j < a->nthreads && a->threads[j].tid < now->tid)
            j++; /* ended before b */
        if (j < a->nthreads && a->threads[j].tid == now->tid)
            was = &a->threads[j];
        /* counters that went back belong to a new thread of a reused id */
        if (was && (was->oncpu_ns > now->oncpu_ns || was->delay_ns > now->delay_ns))
            was = NULL;
        t->oncpu_ns += now->oncpu_ns - (was ? was->oncpu_ns : 0);
        t->delay_ns += now->delay_ns - (was ? was->delay_ns : 0);
    }
}

/* The CPUs' busy ticks and the process's own, over the same CPUs at both
 * ends (the cell's affinity), counters that only grow. */
static void add_other(dlg_sched_totals *t, const dlg_sched_snap *a, const dlg_sched_snap *b)
{
    if (!(a->have_busy && b->have_busy && a->have_own && b->have_own) || a->ncpus != b->ncpus ||
        b->busy < a->busy || b->own < a->own || b->ticks < a->ticks)
        return;
    t->have_other = true;
    t->ncpus = b->ncpus;
    t->busy += b->busy - a->busy;
    t->own += b->own - a->own;
    t->span += b->ticks - a->ticks;
}

void dlg_sched_add(dlg_sched_totals *t, const dlg_sched_snap *a, const dlg_sched_snap *b)
{
    if (a->have_threads && b->have_threads) {
        t->have_wait = true;
        add_threads(t, a, b);
    }
    /* the same CPUs at both ends (the cell's affinity), counters that only grow */
    if (a->have_steal && b->have_steal && b->ticks >= a->ticks && b->steal >= a->steal) {
        t->have_steal = true;
        t->ticks += b->ticks - a->ticks;
        t->steal += b->steal - a->steal;
    }
    add_other(t, a, b);
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

double dlg_sched_other_share(const dlg_sched_totals *t)
{
    if (!t->have_other || t->ncpus <= 0 || t->span < (uint64_t)t->ncpus * DLG_SCHED_OTHER_MIN_TICKS)
        return -1;
    /* own time spent on CPUs outside the set, or cut to ticks differently,
     * can exceed the CPUs' busy ticks */
    double v = ((double)t->busy - (double)t->own) / (double)t->span;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}
