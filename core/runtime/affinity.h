/* Confining a cell to its CPUs (sched_setaffinity on the calling thread, so
 * every thread the workload creates afterwards inherits it; a cell's child
 * process pins itself before anything else starts). */
#ifndef DLG_AFFINITY_H
#define DLG_AFFINITY_H

#define _GNU_SOURCE
#include "cgroup.h"
#include "cpuset.h"

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

/* Number of CPUs this process may run on. */
int dlg_cpus_available(void);
/* Fails (why[] filled) when n vCPUs picked for `cpus` are more than the
 * CPU time the environment's cgroups allow (a container's cpu.max). */
int dlg_cpus_check_limits(const char *cpus, int n, const dlg_cgroup_limits *env, char *why, size_t whylen);
/* The ranks on this node whose affinity is this process's own (mpirun did
 * not bind them: --bind-to none, or more ranks than cores): this one's
 * place among them and how many they are; {0, 1} alone or bound apart
 * (cpu_share.h finds it). */
typedef struct dlg_cpu_share {
    int index, count;
} dlg_cpu_share;
#define DLG_CPU_SHARE_ALONE ((dlg_cpu_share){0, 1})

/* Pins to the CPUs that `cpus` (a count or a range, see topology.h) picks;
 * saves the old set in *saved (initialized, see cpuset.h) and the chosen
 * list ("0,2-3") in list[].  Ranks that share one set take slices of it
 * (share.index's, see dlg_cpus_slice); a range is taken as given.
 * Returns the number of CPUs now allowed, or -1 with why[] filled (also
 * when env, the environment's limits, has a CPU quota below that number;
 * -DLG_ENOMEM where out of memory). */
int dlg_pin_cpus(const char *cpus, const dlg_cgroup_limits *env, dlg_cpu_share share, dlg_cpuset *saved, char *list,
                 size_t listlen, char *why, size_t whylen);
/* Slot share.index of share.count ranks that share `allowed`: cpus = N
 * takes the index-th N CPUs in topology.c's order (each slot chosen out of
 * what the slots before it left), cpus = 0 an even part of them (at least
 * one CPU); more slots than fit wrap around to the first.  Returns the
 * number chosen into out (initialized), or -1 with why[] filled
 * (-DLG_ENOMEM where out of memory). */
int dlg_cpus_slice(const char *cpus, const dlg_cpuset *allowed, dlg_cpu_share share, dlg_cpuset *out, char *why,
                   size_t whylen);
/* Whether share.count slices of `cpus` out of `avail` CPUs overlap; warn[]
 * then says so (one line, no prefix). */
bool dlg_cpus_slices_overlap(const char *cpus, int avail, dlg_cpu_share share, char *warn, size_t warnlen);
void dlg_unpin_cpus(const dlg_cpuset *saved);
/* The vCPUs a cell of `count` CPUs (0 = all `available` to it) is granted,
 * by which its thread pools are sized and its row's cpus_used reads: an
 * explicit count stands (cpus = 4 with cpu_quota = 2 is a burstable 4-vCPU
 * shape); cpus = 0 under a CPU quota (the cell's own, or its environment's,
 * 0 = none) is the tighter quota rounded down, at least 1. */
int dlg_cpus_granted(int count, int available, double cell_quota, double env_quota);

#endif
