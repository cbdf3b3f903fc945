/* Which CPUs a cell of N vCPUs gets: CPUs of one NUMA node first, and
 * distinct physical cores before hyper-thread siblings (read from sysfs),
 * as a cloud instance's vCPUs would be.  An explicit range "A-B" is taken
 * as given. */
#ifndef DLG_TOPOLOGY_H
#define DLG_TOPOLOGY_H

#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>

/* Parses a cpus value: "N" (a count, 0 = all) or "A-B" (CPU ids). */
int dlg_cpus_parse(const char *text, int *count, int *first, int *last, char *why, size_t whylen);

/* Picks the CPUs for a cpus value out of `allowed`.  Returns how many were
 * chosen, or -1 with why[] filled. */
int dlg_cpus_choose(const char *text, const cpu_set_t *allowed, cpu_set_t *out, char *why, size_t whylen);

#endif
