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

/* Where the cgroup file systems are mounted and where this process's
 * membership is read; NULL means the real ones (/sys/fs/cgroup and
 * /proc/self/cgroup).  Tests point them at a fake tree. */
typedef struct dlg_cgroup_fs {
    const char *root;
    const char *self;
} dlg_cgroup_fs;

typedef struct dlg_cgroup {
    bool v2;
    char mem_dir[512];  /* "" when no memory controller could be used */
    char cpu_dir[512];  /* "" when no cpu controller could be used */
} dlg_cgroup;

/* Creates <own cgroup>/<name> for memory (and cpu when cpu_quota > 0).
 * memory_bytes == 0 and cpu_quota == 0 create nothing.  Cgroups of cells
 * whose dlgauge was killed (dlgauge-PID-N, PID gone) are removed first.
 * On failure returns -1 with why[] saying what could not be enforced (every
 * limit that could not, by its result field); the cell may still run.  A
 * memory or cpu_quota above what this process's own cgroups allow is not
 * enforced either: the cell could never have it. */
int dlg_cgroup_create(dlg_cgroup *cg, const char *name, int64_t memory_bytes, double cpu_quota,
                      char *why, size_t whylen);
int dlg_cgroup_create_at(const dlg_cgroup_fs *fs, dlg_cgroup *cg, const char *name, int64_t memory_bytes,
                         double cpu_quota, char *why, size_t whylen);
/* Moves the calling process into the cgroup (call in the child, pre-exec).
 * Async-signal-safe. */
int dlg_cgroup_enter(const dlg_cgroup *cg);
/* OOM kills counted by the cgroup so far, or -1 if unknown. */
int64_t dlg_cgroup_oom_kills(const dlg_cgroup *cg);
/* Peak memory (page cache included) charged to the cgroup, or 0. */
uint64_t dlg_cgroup_peak_bytes(const dlg_cgroup *cg);
/* Removes the cgroup (call after the child is reaped); whatever the cell
 * left running in it is killed first. */
void dlg_cgroup_destroy(dlg_cgroup *cg);

/* The limits this process already runs under: the smallest CPU quota and
 * memory limit of its own cgroups and their ancestors (a container's
 * cpu.max or cfs quota, a memory.max), leaving out a cell's own
 * dlgauge-* cgroup.  0 where there is none. */
typedef struct dlg_cgroup_limits {
    int version;            /* 2, 1, or 0 when no cgroup is mounted */
    double cpu_quota;       /* CPUs' worth of time per period */
    char cpu_where[600];    /* the file that sets it */
    int64_t memory_bytes;
    char memory_where[600];
} dlg_cgroup_limits;
void dlg_cgroup_env_limits(const dlg_cgroup_fs *fs, dlg_cgroup_limits *out);

/* This process's cgroup for v1 controller (e.g. "pids"), or v2's when
 * controller is NULL, from /proc/self/cgroup (fs NULL: the real files),
 * relative to that hierarchy's mount ("" for its root): 0, or -1 when it
 * has none. */
int dlg_cgroup_own_path(const dlg_cgroup_fs *fs, const char *controller, char *out, size_t len);

#endif
