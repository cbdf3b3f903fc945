/* Confining a cell to N CPUs (sched_setaffinity on the calling thread, so
 * every thread the workload creates afterwards inherits it). */
#ifndef DLG_AFFINITY_H
#define DLG_AFFINITY_H

#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>

/* Number of CPUs this process may run on. */
int dlg_cpus_available(void);
/* n == 0: keep the current set.  Saves the old set in *saved.  Returns the
 * number of CPUs now allowed, or -1 with why[] filled. */
int dlg_pin_cpus(int n, cpu_set_t *saved, char *why, size_t whylen);
void dlg_unpin_cpus(const cpu_set_t *saved);

#endif
