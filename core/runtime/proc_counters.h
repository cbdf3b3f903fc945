/* Counters the runner reads around a repetition's timed steps: the
 * process's own (/proc/self) and its machine's (/proc/stat,
 * /proc/diskstats), read without allocating.  A file that cannot be read
 * gives 0. */
#ifndef DLG_RUNTIME_PROC_COUNTERS_H
#define DLG_RUNTIME_PROC_COUNTERS_H

#include <stdint.h>

/* CPU time of every thread of this process, in ns (rusage has us). */
uint64_t dlg_proc_cpu_ns(void);
/* /proc/self/io read_bytes: what the process made block devices read. */
uint64_t dlg_proc_read_bytes(void);
/* Peak RSS since the last dlg_proc_reset_hwm (VmHWM), in bytes. */
uint64_t dlg_proc_hwm_bytes(void);
void dlg_proc_reset_hwm(void);
/* All CPUs' jiffies and their iowait part (/proc/stat's cpu line). */
void dlg_host_cpu_times(uint64_t *total, uint64_t *iowait);
/* Bytes read by the machine's disks (/proc/diskstats sectors x 512,
 * whole disks only, as listed in /sys/block; not loop, ram, zram). */
uint64_t dlg_disk_read_bytes(void);

#endif
