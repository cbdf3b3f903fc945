/* Sets of CPU (or NUMA node) ids of any size.  glibc's cpu_set_t holds ids
 * below 1024 only, and sched_getaffinity refuses a mask smaller than the
 * kernel's (EINVAL) on a machine configured for more CPUs, so a fixed set
 * would leave such a machine without pinning or CPU counts. */
#ifndef DLG_CPUSET_H
#define DLG_CPUSET_H

#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

/* Ids at or above this are refused as malformed (kernels allow 8192 CPUs
 * at most): a typo cannot make a set of gigabytes. */
#define DLG_CPU_ID_LIMIT 65536

typedef struct dlg_cpuset {
    cpu_set_t *bits; /* CPU_ALLOC'ed */
    size_t size;     /* bytes, for the CPU_*_S macros and sched_*affinity */
    int nbits;       /* ids below this fit */
} dlg_cpuset;

/* An empty set that holds ids below nbits (at least 1024); -1 out of
 * memory, s then a set of no ids that dlg_cpuset_fini may still be given. */
int dlg_cpuset_init(dlg_cpuset *s, int nbits);
void dlg_cpuset_fini(dlg_cpuset *s);
/* Adds id, growing the set; -1 out of memory or id out of range. */
int dlg_cpuset_add(dlg_cpuset *s, int id);
bool dlg_cpuset_has(const dlg_cpuset *s, int id);
int dlg_cpuset_count(const dlg_cpuset *s);
/* dst (initialized) becomes a copy of src; -1 out of memory. */
int dlg_cpuset_copy(dlg_cpuset *dst, const dlg_cpuset *src);
/* This thread's affinity into s (initialized), grown until the kernel's
 * mask fits; -1 with errno set. */
int dlg_cpuset_get_affinity(dlg_cpuset *s);
int dlg_cpuset_set_affinity(const dlg_cpuset *s);
/* Parses a kernel id list as sysfs writes it ("0-3,8-11", "0,2", "" for
 * none; a trailing newline is allowed) into s (initialized).  Returns how
 * many ids it names, or -1 when it is malformed, names an id of
 * DLG_CPU_ID_LIMIT or more, or memory ran out. */
int dlg_cpuset_parse_list(const char *text, dlg_cpuset *s);
/* "0,2-3" for a set. */
void dlg_cpuset_format(const dlg_cpuset *s, char *buf, size_t len);

#endif
