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

/* llc_bytes_used for the first n CPUs of the calling thread's affinity,
 * under $DLG_SYSFS_ROOT/devices/system/cpu (a fake tree, for tests; else
 * /sys); writes the directory it read to dir.  0 when sysfs does not say:
 * glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) is no fallback, it trusts CPUID
 * leaves a hypervisor fills in as it likes (320 MiB on a 32 MiB EPYC VM)
 * and gives one cache, not the sum over sockets. */
double llc_bytes_run(int n, char *dir, size_t len);

#endif
