/* Which CPUs a cell of N vCPUs gets: CPUs of one NUMA node first, and
 * distinct physical cores before hyper-thread siblings (read from sysfs),
 * as a cloud instance's vCPUs would be.  An explicit range "A-B" is taken
 * as given. */
#ifndef DLG_TOPOLOGY_H
#define DLG_TOPOLOGY_H

#define _GNU_SOURCE
#include "cpuset.h"

#include <sched.h>
#include <stddef.h>

/* Parses a cpus value: "N" (a count, 0 = all) or "A-B" (CPU ids). */
int dlg_cpus_parse(const char *text, int *count, int *first, int *last, char *why, size_t whylen);

/* Picks the CPUs for a cpus value out of `allowed` into out (initialized,
 * see cpuset.h).  Returns how many were chosen, or -1 with why[] filled
 * (-DLG_ENOMEM where out of memory). */
int dlg_cpus_choose(const char *text, const dlg_cpuset *allowed, dlg_cpuset *out, char *why, size_t whylen);

/* Sockets, physical cores and hardware threads of the online CPUs, read
 * from SYSFS/devices/system/cpu (online, cpuN/topology/physical_package_id
 * and core_id; sysfs: "/sys", or a fake tree's root), CPU ids of any size.
 * 0, or -1 when sysfs does not say for every online CPU. */
typedef struct dlg_cpu_topology {
    int sockets, cores, threads;
} dlg_cpu_topology;
int dlg_cpu_topology_read(const char *sysfs, dlg_cpu_topology *t);

/* NUMA nodes online, from SYSFS/devices/system/node/online (sysfs: "/sys",
 * or a fake tree's root): nodes may have gaps (0-1,3 is 3 nodes).  1 when
 * the kernel has no NUMA or the list cannot be read. */
int dlg_numa_nodes(const char *sysfs);

#endif
