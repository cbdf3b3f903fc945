/* Whether a cell got the CPUs it was ready to run on: the scheduler's run
 * delay of the process's threads (/proc/self/task/TID/schedstat: on-CPU ns,
 * run-queue wait ns), the hypervisor's steal ticks of the CPUs the cell
 * may run on (/proc/stat's cpuN lines), and what other processes ran on
 * them (those CPUs' busy ticks less this process's own, /proc/self/stat),
 * read at both ends of a window. */
#ifndef DLG_SCHED_STAT_H
#define DLG_SCHED_STAT_H

#include "cpuset.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct dlg_sched_thread {
    pid_t tid;
    uint64_t oncpu_ns, delay_ns;
} dlg_sched_thread;

/* A window shorter than this many USER_HZ ticks per CPU (0.5 s at the
 * usual 100) gives no cpu_other_share: every reading is cut to whole
 * ticks, a tick per CPU at each end. */
#define DLG_SCHED_OTHER_MIN_TICKS 50

/* One reading.  Ticks are /proc/stat's (USER_HZ). */
typedef struct dlg_sched_snap {
    dlg_sched_thread *threads; /* by tid, ascending */
    size_t nthreads;
    bool have_threads; /* schedstat read for the process (CONFIG_SCHEDSTATS) */
    uint64_t steal, ticks; /* ticks: all of the CPUs' time, idle included */
    bool have_steal;   /* every CPU's line had a steal column */
    uint64_t busy;     /* user nice system irq softirq of the CPUs */
    int ncpus;         /* the CPUs' lines read */
    bool have_busy;    /* every CPU's line had those columns */
    uint64_t own;      /* this process's CPU time: utime stime cutime cstime */
    bool have_own;
} dlg_sched_snap;

/* What windows added up to: the result's cpu_wait_share, cpu_steal_share
 * and cpu_other_share. */
typedef struct dlg_sched_totals {
    uint64_t oncpu_ns, delay_ns;
    uint64_t steal, ticks;
    uint64_t busy, own, span; /* span: all of the CPUs' ticks */
    int ncpus;
    bool have_wait, have_steal, have_other;
} dlg_sched_totals;

/* Reads proc ("/proc", or a fake tree's root) for this process's threads,
 * its CPU time and the CPUs of cpus (NULL: the calling thread's affinity).  What cannot
 * be read is left out (have_* false); never fails. */
void dlg_sched_snap_take(dlg_sched_snap *s, const char *proc, const dlg_cpuset *cpus);
void dlg_sched_snap_free(dlg_sched_snap *s);
/* Adds the window from a to b to t: each thread alive at b counts from its
 * reading at a, or from its start when created since; one that exited in
 * between is not counted (its counters went with it). */
void dlg_sched_add(dlg_sched_totals *t, const dlg_sched_snap *a, const dlg_sched_snap *b);
/* run delay / (run delay + on-CPU time), steal / ticks; -1 where unknown. */
double dlg_sched_wait_share(const dlg_sched_totals *t);
double dlg_sched_steal_share(const dlg_sched_totals *t);
/* (busy - own) / span, within [0, 1]: the share of the CPUs' time other
 * processes ran on them; -1 where unknown or the windows add up to under
 * DLG_SCHED_OTHER_MIN_TICKS per CPU. */
double dlg_sched_other_share(const dlg_sched_totals *t);

#endif
