/* Confining a cell to its CPUs (sched_setaffinity on the calling thread, so
 * every thread the workload creates afterwards inherits it; a cell's child
 * process pins itself before anything else starts). */
#ifndef DLG_AFFINITY_H
#define DLG_AFFINITY_H

#define _GNU_SOURCE
#include "cgroup.h"

#include <sched.h>
#include <stddef.h>

/* Number of CPUs this process may run on. */
int dlg_cpus_available(void);
/* Fails (why[] filled) when n vCPUs picked for `cpus` are more than the
 * CPU time the environment's cgroups allow (a container's cpu.max). */
int dlg_cpus_check_limits(const char *cpus, int n, const dlg_cgroup_limits *env, char *why, size_t whylen);
/* Pins to the CPUs that `cpus` (a count or a range, see topology.h) picks;
 * saves the old set in *saved and the chosen list ("0,2-3") in list[].
 * Returns the number of CPUs now allowed, or -1 with why[] filled (also
 * when the environment's CPU quota is below that number). */
int dlg_pin_cpus(const char *cpus, cpu_set_t *saved, char *list, size_t listlen, char *why, size_t whylen);
void dlg_unpin_cpus(const cpu_set_t *saved);
/* "0,2-3" for a set. */
void dlg_cpuset_format(const cpu_set_t *set, char *buf, size_t len);

#endif
