/* Confining a cell to its CPUs (sched_setaffinity on the calling thread, so
 * every thread the workload creates afterwards inherits it; a cell's child
 * process pins itself before anything else starts). */
#ifndef DLG_AFFINITY_H
#define DLG_AFFINITY_H

#define _GNU_SOURCE
#include "cgroup.h"
#include "cpuset.h"

#include <sched.h>
#include <stddef.h>

/* Number of CPUs this process may run on. */
int dlg_cpus_available(void);
/* Fails (why[] filled) when n vCPUs picked for `cpus` are more than the
 * CPU time the environment's cgroups allow (a container's cpu.max). */
int dlg_cpus_check_limits(const char *cpus, int n, const dlg_cgroup_limits *env, char *why, size_t whylen);
/* Pins to the CPUs that `cpus` (a count or a range, see topology.h) picks;
 * saves the old set in *saved (initialized, see cpuset.h) and the chosen
 * list ("0,2-3") in list[].
 * Returns the number of CPUs now allowed, or -1 with why[] filled (also
 * when env, the environment's limits, has a CPU quota below that number). */
int dlg_pin_cpus(const char *cpus, const dlg_cgroup_limits *env, dlg_cpuset *saved, char *list, size_t listlen,
                 char *why, size_t whylen);
void dlg_unpin_cpus(const dlg_cpuset *saved);
/* The vCPUs a cell of `count` CPUs (0 = all `available` to it) is granted,
 * by which its thread pools are sized and its row's cpus_used reads: an
 * explicit count stands (cpus = 4 with cpu_quota = 2 is a burstable 4-vCPU
 * shape); cpus = 0 under a CPU quota (the cell's own, or its environment's,
 * 0 = none) is the tighter quota rounded down, at least 1. */
int dlg_cpus_granted(int count, int available, double cell_quota, double env_quota);

#endif
