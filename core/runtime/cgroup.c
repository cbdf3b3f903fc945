#define _GNU_SOURCE
#include "cgroup.h"

#include "proc_file.h"
#include "units.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CELL_PREFIX "dlgauge-"

static const char *fs_root(const dlg_cgroup_fs *fs) { return fs && fs->root ? fs->root : "/sys/fs/cgroup"; }
static const char *fs_self(const dlg_cgroup_fs *fs) { return fs && fs->self ? fs->self : "/proc/self/cgroup"; }

typedef struct own_find {
    const char *controller;
    char *out;
    size_t len;
    bool found;
} own_find;

/* One /proc/self/cgroup line, "ID:CONTROLLERS:PATH": PATH into out if it
 * is the controller's (v2's, with no controllers, for NULL). */
static bool own_line(const char *text, void *ctx)
{
    own_find *o = ctx;
    char line[1024];
    snprintf(line, sizeof line, "%s", text);
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
        return true;
    *c2 = '\0';
    const char *ctrls = c1 + 1, *path = c2 + 1;
    bool match = o->controller ? false : ctrls[0] == '\0';
    if (o->controller) {
        char copy[256];
        snprintf(copy, sizeof copy, "%s", ctrls);
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
            match |= strcmp(t, o->controller) == 0;
    }
    if (match) {
        snprintf(o->out, o->len, "%s", strcmp(path, "/") == 0 ? "" : path);
        o->found = true;
    }
    return !match;
}

/* These files are read without allocating (proc_file.h): a reading lost
 * for want of memory would say "no limit", or no OOM kill, where there
 * was one. */
int dlg_cgroup_own_path(const dlg_cgroup_fs *fs, const char *controller, char *out, size_t len)
{
    own_find o = {controller, out, len, false};
    return dlg_file_lines(fs_self(fs), own_line, &o) == 0 && o.found ? 0 : -1;
}

/* Async-signal-safe (dlg_cgroup_enter runs between fork and exec). */
static int write_file(const char *dir, const char *file, const char *value)
{
    char path[768];
    size_t dl = strlen(dir), fl = strlen(file);
    if (dl + fl + 2 > sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, dl);
    path[dl] = '/';
    memcpy(path + dl + 1, file, fl + 1);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, value, strlen(value));
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* The first line of dir/file: 0, or -1 when it is missing or empty. */
static int read_text(const char *dir, const char *file, char *buf, size_t len)
{
    char path[768];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return dlg_file_line(path, buf, len) == 0 && buf[0] ? 0 : -1;
}

static int64_t read_int(const char *dir, const char *file)
{
    char buf[64];
    return read_text(dir, file, buf, sizeof buf) == 0 ? strtoll(buf, NULL, 10) : -1;
}

typedef struct key_line {
    const char *key;
    long long v;
} key_line;

static bool key_number(const char *line, void *ctx)
{
    key_line *k = ctx;
    size_t kl = strlen(k->key);
    if (strncmp(line, k->key, kl) == 0 && line[kl] == ' ')
        k->v = strtoll(line + kl + 1, NULL, 10);
    return true;
}

/* "key value" line of a flat-keyed file such as memory.events. */
static int64_t read_key(const char *dir, const char *file, const char *key)
{
    char path[768];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    key_line k = {key, -1};
    return dlg_file_lines(path, key_number, &k) == 0 ? k.v : -1;
}

/* Whether a space-separated list file (cgroup.controllers, ...) names ctrl:
 * a whole word, so that "cpuset" is not "cpu". */
static bool list_has(const char *dir, const char *file, const char *ctrl)
{
    char buf[512];
    if (read_text(dir, file, buf, sizeof buf) != 0)
        return false;
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        if (strcmp(t, ctrl) == 0)
            return true;
    return false;
}

/* The cgroup v2 mount that has controllers: the root itself, or "unified"
 * of a hybrid layout (where it usually has none: v1 holds them). */
static bool v2_mount(const dlg_cgroup_fs *fs, char *out, size_t len)
{
    const char *sub[] = {"", "/unified"};
    for (size_t i = 0; i < 2; i++) {
        char dir[600], buf[512];
        snprintf(dir, sizeof dir, "%s%s", fs_root(fs), sub[i]);
        if (read_text(dir, "cgroup.controllers", buf, sizeof buf) == 0 && buf[strspn(buf, " ")]) {
            snprintf(out, len, "%s", dir);
            return true;
        }
    }
    return false;
}

/* Appends "; " and a formatted reason to why[]. */
static void add_why(char *why, size_t whylen, const char *fmt, ...)
{
    size_t o = strlen(why);
    if (o && o + 2 < whylen)
        o += (size_t)snprintf(why + o, whylen - o, "; ");
    va_list ap;
    va_start(ap, fmt);
    if (o < whylen)
        vsnprintf(why + o, whylen - o, fmt, ap);
    va_end(ap);
}

/* Removes cell cgroups (dlgauge-PID-N) left under dir by a dlgauge that is
 * gone (kill -9, a crash): nothing else would.  rmdir refuses a cgroup that
 * still holds a process, so a live cell is never touched. */
static void sweep_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        if (strncmp(e->d_name, CELL_PREFIX, strlen(CELL_PREFIX)) != 0)
            continue;
        long pid = strtol(e->d_name + strlen(CELL_PREFIX), &end, 10);
        if (pid <= 0 || *end != '-' || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rmdir(path);
    }
    closedir(d);
}

/* dir = parent/name, created (or reused) after sweeping stale siblings. */
static int make_dir(char *dst, size_t len, const char *parent, const char *name)
{
    sweep_stale(parent);
    snprintf(dst, len, "%s/%s", parent, name);
    if (mkdir(dst, 0755) != 0 && errno != EEXIST) {
        dst[0] = '\0';
        return -1;
    }
    return 0;
}

/* In v2 a child cgroup has a controller only when its parent lists it in
 * cgroup.subtree_control; the kernel refuses that (EBUSY) while the parent
 * itself holds processes, unless it is the root. */
static int v2_enable(const char *base, const char *ctrl, char *why, size_t whylen)
{
    if (list_has(base, "cgroup.subtree_control", ctrl))
        return 0;
    char plus[32];
    snprintf(plus, sizeof plus, "+%s", ctrl);
    if (write_file(base, "cgroup.subtree_control", plus) == 0)
        return 0;
    int e = errno;
    add_why(why, whylen,
            "cgroup v2: the %s controller is not enabled for children of %s and enabling it failed (%s)%s", ctrl,
            base, strerror(e),
            e == EBUSY ? ": a cgroup that holds processes cannot pass controllers on; run dlgauge alone in a "
                         "delegated cgroup whose parent enables them"
                       : "");
    return -1;
}

/* v2: <own>/<name> with ctrl enabled, in dst[]; 1 when v2 has no ctrl here
 * (try v1), -1 with why[] when it has but it cannot be used. */
static int v2_dir(const dlg_cgroup_fs *fs, const char *ctrl, const char *name, char *dst, size_t len, char *why,
                  size_t whylen)
{
    char mount[600], own[512], base[1200];
    if (!v2_mount(fs, mount, sizeof mount) || dlg_cgroup_own_path(fs, NULL, own, sizeof own) != 0)
        return 1;
    snprintf(base, sizeof base, "%s%s", mount, own);
    if (!list_has(base, "cgroup.controllers", ctrl))
        return 1;
    if (v2_enable(base, ctrl, why, whylen) != 0)
        return -1;
    if (make_dir(dst, len, base, name) != 0) {
        add_why(why, whylen, "cannot create the cell's cgroup under %s (%s)", base, strerror(errno));
        return -1;
    }
    return 0;
}

/* v1: <mount of ctrl>/<own>/<name> in dst[]; -1 with why[]. */
static int v1_dir(const dlg_cgroup_fs *fs, const char *ctrl, const char *name, char *dst, size_t len, char *why,
                  size_t whylen)
{
    char own[512], base[1200];
    if (dlg_cgroup_own_path(fs, ctrl, own, sizeof own) != 0) {
        add_why(why, whylen, "no %s cgroup controller (cgroup v1 or v2) for this process", ctrl);
        return -1;
    }
    snprintf(base, sizeof base, "%s/%s%s", fs_root(fs), ctrl, own);
    if (make_dir(dst, len, base, name) != 0) {
        add_why(why, whylen, "cannot create the cell's cgroup under %s (%s)", base, strerror(errno));
        return -1;
    }
    return 0;
}

/* Writes a limit; on failure removes dir (unless keep) and explains. */
static int set_limit(char *dir, const char *keep, const char *file, const char *val, char *why, size_t whylen)
{
    if (write_file(dir, file, val) == 0)
        return 0;
    add_why(why, whylen, "cannot set %s/%s to %s (%s)", dir, file, val, strerror(errno));
    if (!keep || strcmp(dir, keep) != 0)
        rmdir(dir);
    dir[0] = '\0';
    return -1;
}

static int setup_memory(const dlg_cgroup_fs *fs, dlg_cgroup *cg, const char *name, int64_t bytes, char *why,
                        size_t whylen)
{
    dlg_cgroup_limits env;
    dlg_cgroup_env_limits(fs, &env);
    if (env.memory_bytes > 0 && bytes > env.memory_bytes) {
        char want[32], have[32];
        dlg_format_size(bytes, want, sizeof want);
        dlg_format_size(env.memory_bytes, have, sizeof have);
        add_why(why, whylen, "memory = %s is more than this process's own cgroup allows (%s, %s): the cell could "
                "not have it", want, have, env.memory_where);
        return -1;
    }
    char val[32];
    snprintf(val, sizeof val, "%lld", (long long)bytes);
    int rc = v2_dir(fs, "memory", name, cg->mem_dir, sizeof cg->mem_dir, why, whylen);
    if (rc == 0) {
        cg->v2 = true;
        if (set_limit(cg->mem_dir, NULL, "memory.max", val, why, whylen) != 0)
            return -1;
        write_file(cg->mem_dir, "memory.swap.max", "0"); /* no escape to swap */
        return 0;
    }
    if (rc < 0 || v1_dir(fs, "memory", name, cg->mem_dir, sizeof cg->mem_dir, why, whylen) != 0)
        return -1;
    if (set_limit(cg->mem_dir, NULL, "memory.limit_in_bytes", val, why, whylen) != 0)
        return -1;
    /* memsw (memory+swap) where the kernel accounts swap: no escape to swap */
    write_file(cg->mem_dir, "memory.memsw.limit_in_bytes", val);
    return 0;
}

static int setup_cpu(const dlg_cgroup_fs *fs, dlg_cgroup *cg, const char *name, double quota, char *why,
                     size_t whylen)
{
    dlg_cgroup_limits env;
    dlg_cgroup_env_limits(fs, &env);
    if (env.cpu_quota > 0 && quota > env.cpu_quota + 1e-6) {
        add_why(why, whylen, "cpu_quota = %.2f is more than this process's own cgroup allows (%.2f CPUs, %s): the "
                "cell could not have it", quota, env.cpu_quota, env.cpu_where);
        return -1;
    }
    char val[64];
    const long period = 100000;
    long q = (long)(quota * period + 0.5);
    /* v2 on its own, not only when memory took v2 too: a cpu_quota without
     * a memory limit must work there as well */
    int rc = v2_dir(fs, "cpu", name, cg->cpu_dir, sizeof cg->cpu_dir, why, whylen);
    if (rc == 0) {
        snprintf(val, sizeof val, "%ld %ld", q, period);
        return set_limit(cg->cpu_dir, cg->mem_dir, "cpu.max", val, why, whylen);
    }
    if (rc < 0 || v1_dir(fs, "cpu", name, cg->cpu_dir, sizeof cg->cpu_dir, why, whylen) != 0)
        return -1;
    snprintf(val, sizeof val, "%ld", period);
    write_file(cg->cpu_dir, "cpu.cfs_period_us", val);
    snprintf(val, sizeof val, "%ld", q);
    return set_limit(cg->cpu_dir, cg->mem_dir, "cpu.cfs_quota_us", val, why, whylen);
}

int dlg_cgroup_create_at(const dlg_cgroup_fs *fs, dlg_cgroup *cg, const char *name, int64_t memory_bytes,
                         double cpu_quota, char *why, size_t whylen)
{
    memset(cg, 0, sizeof *cg);
    if (whylen)
        why[0] = '\0';
    char part[1024] = "";
    int rc = 0;
    if (memory_bytes > 0 && setup_memory(fs, cg, name, memory_bytes, part, sizeof part) != 0) {
        add_why(why, whylen, "memory_enforced = false: %s", part);
        rc = -1;
    }
    part[0] = '\0';
    if (cpu_quota > 0 && setup_cpu(fs, cg, name, cpu_quota, part, sizeof part) != 0) {
        add_why(why, whylen, "cpu_quota_enforced = false: %s", part);
        rc = -1;
    }
    return rc;
}

int dlg_cgroup_create(dlg_cgroup *cg, const char *name, int64_t memory_bytes, double cpu_quota, char *why,
                      size_t whylen)
{
    return dlg_cgroup_create_at(NULL, cg, name, memory_bytes, cpu_quota, why, whylen);
}

int dlg_cgroup_enter(const dlg_cgroup *cg)
{
    int rc = 0;
    if (cg->mem_dir[0] && write_file(cg->mem_dir, "cgroup.procs", "0") != 0)
        rc = -1;
    if (cg->cpu_dir[0] && strcmp(cg->cpu_dir, cg->mem_dir) != 0 && write_file(cg->cpu_dir, "cgroup.procs", "0") != 0)
        rc = -1;
    return rc;
}

int64_t dlg_cgroup_oom_kills(const dlg_cgroup *cg)
{
    if (!cg->mem_dir[0])
        return -1;
    if (cg->v2)
        return read_key(cg->mem_dir, "memory.events", "oom_kill");
    int64_t v = read_key(cg->mem_dir, "memory.oom_control", "oom_kill");
    if (v < 0) /* kernels before 4.13: failcnt at least says the limit was hit */
        v = read_int(cg->mem_dir, "memory.failcnt") > 0 ? 1 : 0;
    return v;
}

uint64_t dlg_cgroup_peak_bytes(const dlg_cgroup *cg)
{
    if (!cg->mem_dir[0])
        return 0;
    int64_t v = read_int(cg->mem_dir, cg->v2 ? "memory.peak" : "memory.max_usage_in_bytes");
    return v > 0 ? (uint64_t)v : 0;
}

/* A line of cgroup.procs: its process killed, unless it is this one. */
static bool kill_pid(const char *line, void *ctx)
{
    (void)ctx;
    long pid = strtol(line, NULL, 10);
    if (pid > 0 && pid != (long)getpid())
        kill((pid_t)pid, SIGKILL);
    return true;
}

/* Kills whatever is still in the cgroup: a process the cell left outside
 * its process group (setsid, a daemon) would keep running, and keep the
 * cgroup from being removed. */
static void kill_members(const char *dir)
{
    if (write_file(dir, "cgroup.kill", "1") == 0) /* v2, Linux 5.14 on */
        return;
    char path[768];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    dlg_file_lines(path, kill_pid, NULL);
}

static void remove_dir(const char *dir)
{
    /* a just-reaped child may still be leaving: retry briefly */
    for (int i = 0; i < 100 && rmdir(dir) != 0 && errno == EBUSY; i++) {
        kill_members(dir);
        usleep(2000);
    }
}

void dlg_cgroup_destroy(dlg_cgroup *cg)
{
    if (cg->mem_dir[0])
        remove_dir(cg->mem_dir);
    if (cg->cpu_dir[0] && strcmp(cg->cpu_dir, cg->mem_dir) != 0)
        remove_dir(cg->cpu_dir);
    cg->mem_dir[0] = cg->cpu_dir[0] = '\0';
}

/* ---- the environment's own limits ---- */

/* Where ctrl's hierarchy is for this process: dir[] is its own cgroup
 * there, *stop the length of the mount path; 2 (v2), 1 (v1) or 0 (none). */
static int own_dir(const dlg_cgroup_fs *fs, const char *ctrl, char *dir, size_t len, size_t *stop)
{
    char mount[600], own[512];
    if (v2_mount(fs, mount, sizeof mount) && list_has(mount, "cgroup.controllers", ctrl) &&
        dlg_cgroup_own_path(fs, NULL, own, sizeof own) == 0) {
        *stop = (size_t)snprintf(dir, len, "%s", mount);
        snprintf(dir + *stop, len - *stop, "%s", own);
        return 2;
    }
    *stop = (size_t)snprintf(dir, len, "%s/%s", fs_root(fs), ctrl);
    if (access(dir, F_OK) != 0)
        return 0;
    if (dlg_cgroup_own_path(fs, ctrl, own, sizeof own) == 0)
        snprintf(dir + *stop, len - *stop, "%s", own);
    return 1;
}

/* Drops the last path component of dir; false at the mount (len `stop`). */
static bool up(char *dir, size_t stop)
{
    char *slash = strrchr(dir, '/');
    if (!slash || (size_t)(slash - dir) < stop)
        return false;
    *slash = '\0';
    return true;
}

static void keep_min_mem(dlg_cgroup_limits *out, const char *dir, const char *file, int64_t v)
{
    if (v > 0 && v < ((int64_t)1 << 62) && (out->memory_bytes == 0 || v < out->memory_bytes)) {
        out->memory_bytes = v;
        snprintf(out->memory_where, sizeof out->memory_where, "%s/%s", dir, file);
    }
}

static void keep_min_cpu(dlg_cgroup_limits *out, const char *dir, const char *file, double q)
{
    if (q > 0 && (out->cpu_quota == 0 || q < out->cpu_quota)) {
        out->cpu_quota = q;
        snprintf(out->cpu_where, sizeof out->cpu_where, "%s/%s", dir, file);
    }
}

/* One level's limit: v2 memory.max / cpu.max, v1 limit_in_bytes / cfs.
 * v1's "unlimited" is a page-rounded LLONG_MAX, v2's "max". */
static void level_limit(const char *dir, bool memory, int v, dlg_cgroup_limits *out)
{
    char buf[128];
    long long q, p;
    if (memory && v == 2 && read_text(dir, "memory.max", buf, sizeof buf) == 0 && strcmp(buf, "max") != 0)
        keep_min_mem(out, dir, "memory.max", strtoll(buf, NULL, 10));
    else if (memory && v == 1)
        keep_min_mem(out, dir, "memory.limit_in_bytes", read_int(dir, "memory.limit_in_bytes"));
    else if (!memory && v == 2 && read_text(dir, "cpu.max", buf, sizeof buf) == 0 &&
             sscanf(buf, "%lld %lld", &q, &p) == 2 && p > 0)
        keep_min_cpu(out, dir, "cpu.max", (double)q / (double)p);
    else if (!memory && v == 1 && (q = read_int(dir, "cpu.cfs_quota_us")) > 0 &&
             (p = read_int(dir, "cpu.cfs_period_us")) > 0)
        keep_min_cpu(out, dir, "cpu.cfs_quota_us", (double)q / (double)p);
}

void dlg_cgroup_env_limits(const dlg_cgroup_fs *fs, dlg_cgroup_limits *out)
{
    memset(out, 0, sizeof *out);
    for (int m = 0; m < 2; m++) {
        char dir[1200];
        size_t stop;
        int v = own_dir(fs, m ? "memory" : "cpu", dir, sizeof dir, &stop);
        if (v > out->version)
            out->version = v;
        /* each level up to the mount (a container's own limit is there) */
        for (bool more = v > 0; more; more = up(dir, stop)) {
            const char *base = strrchr(dir, '/'); /* a cell's own limits are not the environment's */
            if (!base || strncmp(base + 1, CELL_PREFIX, strlen(CELL_PREFIX)) != 0)
                level_limit(dir, m == 1, v, out);
        }
    }
}
