#define _GNU_SOURCE
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Path of our cgroup for a v1 controller (e.g. "memory"), or for v2 when
 * controller is NULL, from /proc/self/cgroup. */
static int own_path(const char *controller, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return -1;
    char line[1024];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1, *path = c2 + 1;
        bool match = controller ? false : ctrls[0] == '\0';
        if (controller) {
            char copy[256];
            snprintf(copy, sizeof copy, "%s", ctrls);
            for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
                match |= strcmp(t, controller) == 0;
        }
        if (match) {
            snprintf(out, len, "%s", path);
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

static int write_file(const char *dir, const char *file, const char *value)
{
    char path[768];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, value, strlen(value));
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)strlen(value) ? 0 : -1;
}

static int64_t read_int(const char *dir, const char *file)
{
    char path[768], buf[64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long v = -1;
    if (fgets(buf, sizeof buf, f))
        v = strtoll(buf, NULL, 10);
    fclose(f);
    return v;
}

/* "key value" line of a flat-keyed file such as memory.events. */
static int64_t read_key(const char *dir, const char *file, const char *key)
{
    char path[768], line[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ' ')
            v = strtoll(line + kl + 1, NULL, 10);
    fclose(f);
    return v;
}

static bool v2_has(const char *dir, const char *ctrl)
{
    char path[768], buf[512] = "";
    snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, sizeof buf, f) && strstr(buf, ctrl);
    fclose(f);
    return ok;
}

static int make_dir(char *dst, size_t len, const char *root, const char *own, const char *name)
{
    snprintf(dst, len, "%s%s/%s", root, strcmp(own, "/") == 0 ? "" : own, name);
    if (mkdir(dst, 0755) != 0 && errno != EEXIST) {
        dst[0] = '\0';
        return -1;
    }
    return 0;
}

static int setup_memory(dlg_cgroup *cg, const char *name, int64_t bytes, char *why, size_t whylen)
{
    char own[512], val[32];
    snprintf(val, sizeof val, "%lld", (long long)bytes);
    if (own_path(NULL, own, sizeof own) == 0 && access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
        char base[768];
        snprintf(base, sizeof base, "/sys/fs/cgroup%s", strcmp(own, "/") == 0 ? "" : own);
        if (v2_has(base, "memory") && make_dir(cg->mem_dir, sizeof cg->mem_dir, "/sys/fs/cgroup", own, name) == 0) {
            cg->v2 = true;
            if (write_file(cg->mem_dir, "memory.max", val) == 0) {
                write_file(cg->mem_dir, "memory.swap.max", "0");
                return 0;
            }
        }
    }
    if (own_path("memory", own, sizeof own) == 0 &&
        make_dir(cg->mem_dir, sizeof cg->mem_dir, "/sys/fs/cgroup/memory", own, name) == 0) {
        cg->v2 = false;
        if (write_file(cg->mem_dir, "memory.limit_in_bytes", val) == 0) {
            /* memsw (memory+swap) where the kernel accounts swap: no escape to swap */
            write_file(cg->mem_dir, "memory.memsw.limit_in_bytes", val);
            return 0;
        }
    }
    snprintf(why, whylen, "no writable memory cgroup under this process's own (%s)", strerror(errno));
    if (cg->mem_dir[0])
        rmdir(cg->mem_dir);
    cg->mem_dir[0] = '\0';
    return -1;
}

static int setup_cpu(dlg_cgroup *cg, const char *name, double quota, char *why, size_t whylen)
{
    char own[512], val[64];
    const long period = 100000;
    long q = (long)(quota * period + 0.5);
    if (cg->v2 && own_path(NULL, own, sizeof own) == 0 &&
        make_dir(cg->cpu_dir, sizeof cg->cpu_dir, "/sys/fs/cgroup", own, name) == 0) {
        snprintf(val, sizeof val, "%ld %ld", q, period);
        if (write_file(cg->cpu_dir, "cpu.max", val) == 0)
            return 0;
    }
    if (own_path("cpu", own, sizeof own) == 0 &&
        make_dir(cg->cpu_dir, sizeof cg->cpu_dir, "/sys/fs/cgroup/cpu", own, name) == 0) {
        snprintf(val, sizeof val, "%ld", period);
        write_file(cg->cpu_dir, "cpu.cfs_period_us", val);
        snprintf(val, sizeof val, "%ld", q);
        if (write_file(cg->cpu_dir, "cpu.cfs_quota_us", val) == 0)
            return 0;
    }
    snprintf(why, whylen, "no writable cpu cgroup under this process's own (%s)", strerror(errno));
    if (cg->cpu_dir[0] && strcmp(cg->cpu_dir, cg->mem_dir) != 0)
        rmdir(cg->cpu_dir);
    cg->cpu_dir[0] = '\0';
    return -1;
}

int dlg_cgroup_create(dlg_cgroup *cg, const char *name, int64_t memory_bytes, double cpu_quota, char *why,
                      size_t whylen)
{
    memset(cg, 0, sizeof *cg);
    int rc = 0;
    if (memory_bytes > 0 && setup_memory(cg, name, memory_bytes, why, whylen) != 0)
        rc = -1;
    if (cpu_quota > 0 && setup_cpu(cg, name, cpu_quota, why, whylen) != 0)
        rc = -1;
    return rc;
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

void dlg_cgroup_destroy(dlg_cgroup *cg)
{
    /* a just-reaped child may still be leaving: retry briefly */
    for (int i = 0; i < 50 && cg->mem_dir[0] && rmdir(cg->mem_dir) != 0 && errno == EBUSY; i++)
        usleep(2000);
    if (cg->cpu_dir[0] && strcmp(cg->cpu_dir, cg->mem_dir) != 0)
        for (int i = 0; i < 50 && rmdir(cg->cpu_dir) != 0 && errno == EBUSY; i++)
            usleep(2000);
    cg->mem_dir[0] = cg->cpu_dir[0] = '\0';
}
