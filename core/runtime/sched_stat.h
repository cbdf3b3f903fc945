/* Whether a cell got the CPUs it was ready to run on: the scheduler's run
 * delay of the process's threads (/proc/self/task/TID/schedstat: on-CPU ns,
 * run-queue wait ns) and the hypervisor's steal ticks of the CPUs the cell
 * may run on (/proc/stat's cpuN lines), read at both ends of a window. */
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

/* One reading. */
typedef struct dlg_sched_snap {
    dlg_sched_thread *threads;
    size_t nthreads;
    bool have_threads; /* schedstat read for the process (CONFIG_SCHEDSTATS) */
    uint64_t steal, ticks;
    bool have_steal;   /* every CPU's line had a steal column */
} dlg_sched_snap;

/* What windows added up to: the result's cpu_wait_share/cpu_steal_share. */
typedef struct dlg_sched_totals {
    uint64_t oncpu_ns, delay_ns;
    uint64_t steal, ticks;
    bool have_wait, have_steal;
} dlg_sched_totals;

/* Reads proc ("/proc", or a fake tree's root) for this process's threads
 * and the CPUs of cpus (NULL: the calling thread's affinity).  What cannot
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

#endif
