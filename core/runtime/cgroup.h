/* Per-cell control groups: a child of the cgroup dlgauge itself runs in
 * (read from /proc/self/cgroup, never elsewhere), with a memory limit that
 * counts the page cache and, optionally, a CPU quota.  cgroup v2 where the
 * controllers live there, else v1 (memory.limit_in_bytes, cfs_quota_us). */
#ifndef DLG_CGROUP_H
#define DLG_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct dlg_cgroup {
    bool v2;
    char mem_dir[512];  /* "" when no memory controller could be used */
    char cpu_dir[512];  /* "" when no cpu controller could be used */
} dlg_cgroup;

/* Creates <own cgroup>/<name> for memory (and cpu when cpu_quota > 0).
 * memory_bytes == 0 and cpu_quota == 0 create nothing.  On failure returns
 * -1 with why[] saying what could not be enforced; the cell may still run. */
int dlg_cgroup_create(dlg_cgroup *cg, const char *name, int64_t memory_bytes, double cpu_quota,
                      char *why, size_t whylen);
/* Moves the calling process into the cgroup (call in the child, pre-exec). */
int dlg_cgroup_enter(const dlg_cgroup *cg);
/* OOM kills counted by the cgroup so far, or -1 if unknown. */
int64_t dlg_cgroup_oom_kills(const dlg_cgroup *cg);
/* Peak memory (page cache included) charged to the cgroup, or 0. */
uint64_t dlg_cgroup_peak_bytes(const dlg_cgroup *cg);
/* Removes the cgroup (it must be empty: call after the child is reaped). */
void dlg_cgroup_destroy(dlg_cgroup *cg);

#endif
