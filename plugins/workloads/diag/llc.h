/* The last-level cache a run can use, as STREAM sizes its arrays by it:
 * the sum of every distinct last-level cache of the CPUs it runs on (two
 * sockets, or an EPYC's L3 per CCD, add up), read from sysfs. */
#ifndef DLG_DIAG_LLC_H
#define DLG_DIAG_LLC_H

#include "cpuset.h"

/* Bytes of last-level cache shared by the first `n` CPUs (round robin, as
 * pool.c pins workers) of `cpus`, under `root` (/sys/devices/system/cpu);
 * 0 if sysfs does not say. */
double llc_bytes_used(const char *root, const dlg_cpuset *cpus, int n);

#endif
