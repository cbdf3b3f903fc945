/* Per-cell cgroups and the environment's own limits, on a fake cgroup tree
 * (v2, v1, hybrid) so that every layout is checked on any machine and
 * without privileges; and the cell process's side: its thread counts and
 * a cgroup it cannot join. */
#define _GNU_SOURCE
#include "affinity.h"
#include "cell_exec.h"
#include "cgroup.h"
#include "rt_oom.h"
#include "cpuset.h"
#include "rt_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static void read_back(const rt_dir *d, const char *name, char *buf, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d->path, name);
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)len, f))
            buf[0] = '\0';
        fclose(f);
    }
}

static bool exists(const rt_dir *d, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d->path, name);
    return access(path, F_OK) == 0;
}

/* A pure v2 host: dlgauge in /job, cpu and memory delegated to it. */
static dlg_cgroup_fs fake_v2(const rt_dir *d, const char *subtree, char *root, char *self)
{
    char p[512];
    rt_write(d, "cg/cgroup.controllers", "cpuset cpu io memory pids\n", p, sizeof p);
    rt_write(d, "cg/job/cgroup.controllers", "cpuset cpu io memory pids\n", p, sizeof p);
    if (subtree)
        rt_write(d, "cg/job/cgroup.subtree_control", subtree, p, sizeof p);
    /* what the kernel would create in the cell's directory */
    rt_write(d, "cg/job/dlgauge-1-1/cpu.max", "max 100000\n", p, sizeof p);
    rt_write(d, "cg/job/dlgauge-1-1/memory.max", "max\n", p, sizeof p);
    rt_write(d, "self", "0::/job\n", self, 512);
    snprintf(root, 512, "%s/cg", d->path);
    return (dlg_cgroup_fs){root, self};
}

/* cpu_quota without a memory limit used v2 only when memory had chosen v2:
 * on a pure v2 host it was never enforced. */
static void test_v2_cpu_quota_alone(void **state)
{
    const rt_dir *d = *state;
    char root[512], self[512], why[1024], buf[64];
    dlg_cgroup_fs fs = fake_v2(d, "cpu memory\n", root, self);
    dlg_cgroup cg;
    assert_int_equal(dlg_cgroup_create_at(&fs, &cg, "dlgauge-1-1", 0, 1.5, why, sizeof why), 0);
    assert_non_null(strstr(cg.cpu_dir, "/cg/job/dlgauge-1-1"));
    read_back(d, "cg/job/dlgauge-1-1/cpu.max", buf, sizeof buf);
    assert_string_equal(buf, "150000 100000");
    assert_string_equal(cg.mem_dir, "");
}

/* A controller the parent does not pass on (and cannot: EBUSY, or here no
 * file at all) is named in one line, and nothing is claimed. */
static void test_v2_controller_not_delegated(void **state)
{
    const rt_dir *d = *state;
    char root[512], self[512], why[1024];
    dlg_cgroup_fs fs = fake_v2(d, NULL, root, self);
    dlg_cgroup cg;
    assert_int_equal(dlg_cgroup_create_at(&fs, &cg, "dlgauge-1-1", 64 << 20, 1, why, sizeof why), -1);
    assert_string_equal(cg.mem_dir, "");
    assert_string_equal(cg.cpu_dir, "");
    assert_non_null(strstr(why, "memory_enforced = false: cgroup v2: the memory controller is not enabled for children"));
    assert_non_null(strstr(why, "; cpu_quota_enforced = false: cgroup v2: the cpu controller"));
    assert_null(strchr(why, '\n'));
}

/* "cpuset" in cgroup.controllers is not the cpu controller. */
static void test_v2_cpuset_is_not_cpu(void **state)
{
    const rt_dir *d = *state;
    char p[512], why[1024];
    rt_write(d, "cg/cgroup.controllers", "cpuset memory\n", p, sizeof p);
    rt_write(d, "cg/job/cgroup.controllers", "cpuset memory\n", p, sizeof p);
    rt_write(d, "self", "0::/job\n", p, sizeof p);
    char root[512];
    snprintf(root, sizeof root, "%s/cg", d->path);
    dlg_cgroup_fs fs = {root, p};
    dlg_cgroup cg;
    assert_int_equal(dlg_cgroup_create_at(&fs, &cg, "dlgauge-1-1", 0, 1, why, sizeof why), -1);
    assert_string_equal(cg.cpu_dir, "");
    assert_non_null(strstr(why, "cpu_quota_enforced = false: no cpu cgroup controller"));
}

/* v1 (this development machine): limits in memory.limit_in_bytes and
 * cfs_quota_us; cells' cgroups of a dlgauge that was killed (-9) are gone
 * after the next cell's, a live dlgauge's are kept. */
static void test_v1_limits_and_stale_sweep(void **state)
{
    const rt_dir *d = *state;
    char p[512], self[512], why[1024], buf[64], live[64], dead[64];
    rt_write(d, "self", "5:memory:/job\n4:cpu,cpuacct:/\n0::/\n", self, sizeof self);
    rt_write(d, "cg/memory/job/dlgauge-9-2/memory.limit_in_bytes", "", p, sizeof p);
    rt_write(d, "cg/cpu/dlgauge-9-2/cpu.cfs_quota_us", "-1\n", p, sizeof p);
    rt_write(d, "cg/cpu/dlgauge-9-2/cpu.cfs_period_us", "100000\n", p, sizeof p);
    /* a process that is gone: a child we reaped */
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    assert_true(gone > 0);
    waitpid(gone, NULL, 0);
    snprintf(dead, sizeof dead, "cg/memory/job/dlgauge-%d-7", (int)gone);
    snprintf(live, sizeof live, "cg/memory/job/dlgauge-%d-7", (int)getppid());
    snprintf(p, sizeof p, "%s/%s", d->path, dead);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/%s", d->path, live);
    assert_int_equal(mkdir(p, 0755), 0);
    char root[512];
    snprintf(root, sizeof root, "%s/cg", d->path);
    dlg_cgroup_fs fs = {root, self};
    dlg_cgroup cg;
    assert_int_equal(dlg_cgroup_create_at(&fs, &cg, "dlgauge-9-2", 256 << 20, 0.5, why, sizeof why), 0);
    read_back(d, "cg/memory/job/dlgauge-9-2/memory.limit_in_bytes", buf, sizeof buf);
    assert_string_equal(buf, "268435456");
    read_back(d, "cg/cpu/dlgauge-9-2/cpu.cfs_quota_us", buf, sizeof buf);
    assert_string_equal(buf, "50000");
    assert_false(exists(d, dead));
    assert_true(exists(d, live));
}

/* The environment's limits: the smallest along the path up to the mount,
 * a cell's own dlgauge-* cgroup left out; v2 and v1. */
static void test_env_limits(void **state)
{
    const rt_dir *d = *state;
    char p[512], self[512], root[512];
    snprintf(root, sizeof root, "%s/cg", d->path);
    rt_write(d, "cg/cgroup.controllers", "cpu memory\n", p, sizeof p);
    rt_write(d, "cg/pod/cpu.max", "200000 100000\n", p, sizeof p);
    rt_write(d, "cg/pod/memory.max", "4294967296\n", p, sizeof p);
    rt_write(d, "cg/pod/job/cpu.max", "max 100000\n", p, sizeof p);
    rt_write(d, "cg/pod/job/memory.max", "2147483648\n", p, sizeof p);
    rt_write(d, "cg/pod/job/dlgauge-1-1/cpu.max", "50000 100000\n", p, sizeof p);
    rt_write(d, "self", "0::/pod/job/dlgauge-1-1\n", self, sizeof self);
    dlg_cgroup_fs fs = {root, self};
    dlg_cgroup_limits env;
    dlg_cgroup_env_limits(&fs, &env);
    assert_int_equal(env.version, 2);
    assert_true(env.cpu_quota > 1.999 && env.cpu_quota < 2.001);
    assert_non_null(strstr(env.cpu_where, "/cg/pod/cpu.max"));
    assert_int_equal(env.memory_bytes, 2147483648);
    assert_non_null(strstr(env.memory_where, "/cg/pod/job/memory.max"));
    if (rt_oom_possible()) { /* read without allocating: no limit goes unseen for want of memory */
        dlg_cgroup_limits again;
        rt_oom_arm(1);
        dlg_cgroup_env_limits(&fs, &again);
        assert_int_equal(rt_oom_disarm(), 0);
        assert_int_equal(again.memory_bytes, env.memory_bytes);
        assert_true(again.cpu_quota == env.cpu_quota);
    }

    /* v1 in a hybrid layout: "unified" holds no cpu or memory */
    rt_write(d, "v1/unified/cgroup.controllers", "hugetlb\n", p, sizeof p);
    rt_write(d, "v1/cpu/cpu.cfs_quota_us", "-1\n", p, sizeof p);
    rt_write(d, "v1/cpu/box/cpu.cfs_quota_us", "150000\n", p, sizeof p);
    rt_write(d, "v1/cpu/box/cpu.cfs_period_us", "100000\n", p, sizeof p);
    rt_write(d, "v1/memory/memory.limit_in_bytes", "9223372036854771712\n", p, sizeof p);
    rt_write(d, "self", "4:memory:/\n3:cpu,cpuacct:/box\n0::/\n", self, sizeof self);
    snprintf(root, sizeof root, "%s/v1", d->path);
    dlg_cgroup_env_limits(&fs, &env);
    assert_int_equal(env.version, 1);
    assert_true(env.cpu_quota > 1.499 && env.cpu_quota < 1.501);
    assert_int_equal(env.memory_bytes, 0); /* "unlimited" */

    /* a cell that asks more memory than the environment has is not claimed */
    char why[1024];
    rt_write(d, "self", "0::/pod/job\n", self, sizeof self);
    snprintf(root, sizeof root, "%s/cg", d->path);
    dlg_cgroup cg;
    assert_int_equal(dlg_cgroup_create_at(&fs, &cg, "dlgauge-1-2", (int64_t)4 << 30, 0, why, sizeof why), -1);
    assert_string_equal(cg.mem_dir, "");
    assert_non_null(strstr(why, "memory = 4GiB is more than this process's own cgroup allows (2GiB"));
    assert_int_equal(dlg_cgroup_create_at(&fs, &cg, "dlgauge-1-2", 0, 3, why, sizeof why), -1);
    assert_string_equal(cg.cpu_dir, "");
    assert_non_null(strstr(why, "cpu_quota = 3.00 is more than this process's own cgroup allows (2.00 CPUs"));
}

/* A cell's OOM kills from its cgroup's memory.events (v2) or
 * memory.oom_control (v1), read with every allocation failing too: a
 * kill read as none would report a killed cell as a crash. */
static void test_oom_kills(void **state)
{
    const rt_dir *d = *state;
    char p[512];
    rt_write(d, "v2/memory.events", "low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\noom_group_kill 0\n", p, sizeof p);
    rt_write(d, "v1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n", p, sizeof p);
    rt_write(d, "old/memory.failcnt", "12\n", p, sizeof p);
    dlg_cgroup v2 = {.v2 = true}, v1 = {.v2 = false}, old = {.v2 = false}, none = {.v2 = true};
    snprintf(v2.mem_dir, sizeof v2.mem_dir, "%s/v2", d->path);
    snprintf(v1.mem_dir, sizeof v1.mem_dir, "%s/v1", d->path);
    snprintf(old.mem_dir, sizeof old.mem_dir, "%s/old", d->path);
    bool armed = rt_oom_possible();
    if (armed)
        rt_oom_arm(1);
    int64_t k2 = dlg_cgroup_oom_kills(&v2), k1 = dlg_cgroup_oom_kills(&v1), k0 = dlg_cgroup_oom_kills(&old);
    int64_t kn = dlg_cgroup_oom_kills(&none);
    if (armed)
        assert_int_equal(rt_oom_disarm(), 0);
    assert_int_equal(k2, 2);
    assert_int_equal(k1, 5);
    assert_int_equal(k0, 1); /* before 4.13: the limit was hit */
    assert_int_equal(kn, -1);
}

/* cpus = N above the environment's CPU quota cannot be given; 0 can. */
static void test_cpus_within_quota(void **state)
{
    (void)state;
    dlg_cgroup_limits env = {.version = 2, .cpu_quota = 1.5, .cpu_where = "/x/cpu.max"};
    char why[512];
    assert_int_equal(dlg_cpus_check_limits("1", 1, &env, why, sizeof why), 0);
    assert_int_equal(dlg_cpus_check_limits("0", 16, &env, why, sizeof why), 0);
    assert_int_equal(dlg_cpus_check_limits("2", 2, &env, why, sizeof why), -1);
    assert_non_null(strstr(why, "cpus = 2, but this process's own cgroup allows only 1.50 CPUs of time (/x/cpu.max)"));
    assert_int_equal(dlg_cpus_check_limits("0-3", 4, &env, why, sizeof why), -1);
    env.cpu_quota = 0;
    assert_int_equal(dlg_cpus_check_limits("64", 64, &env, why, sizeof why), 0);
}

/* cpus = 0 under a quota gets the quota's whole CPUs (the tighter of the
 * cell's and its environment's), never more threads than CPU time. */
static void test_cpus_granted(void **state)
{
    (void)state;
    assert_int_equal(dlg_cpus_granted(0, 64, 0, 0), 64);
    assert_int_equal(dlg_cpus_granted(0, 64, 0, 2.0), 2);  /* docker --cpus=2 */
    assert_int_equal(dlg_cpus_granted(0, 64, 1.5, 0), 1);
    assert_int_equal(dlg_cpus_granted(0, 64, 3.0, 2.5), 2); /* the environment's is tighter */
    assert_int_equal(dlg_cpus_granted(0, 64, 2.5, 8.0), 2); /* the cell's is */
    assert_int_equal(dlg_cpus_granted(0, 64, 0.5, 0), 1);
    assert_int_equal(dlg_cpus_granted(0, 2, 4.0, 0), 2);    /* a quota above the CPUs changes nothing */
    assert_int_equal(dlg_cpus_granted(0, 4, 0, 3.9999999), 4);
    assert_int_equal(dlg_cpus_granted(4, 64, 2.0, 0), 4);   /* an explicit count is a burstable shape */
}

static int run_sh(const char *script, const dlg_cgroup *cg, int threads, dlg_cell_outcome *oc)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    dlg_cell_spawn sp = {"/bin/sh", argv, cg, threads, 0};
    char err[256];
    return dlg_cell_exec(&sp, NULL, NULL, oc, err, sizeof err);
}

/* cpus = 0 under a taskset of one CPU: the cell's OpenMP/BLAS pools are
 * sized to that one CPU, not to an inherited OMP_NUM_THREADS = 8. */
static void test_cell_threads_follow_affinity(void **state)
{
    const rt_dir *d = *state;
    dlg_cpuset old, one; /* of any size: a machine of more than 1024 CPUs too */
    assert_int_equal(dlg_cpuset_init(&old, 0), 0);
    assert_int_equal(dlg_cpuset_init(&one, 0), 0);
    assert_int_equal(dlg_cpuset_get_affinity(&old), 0);
    for (int c = 0; c < old.nbits; c++)
        if (dlg_cpuset_has(&old, c)) {
            assert_int_equal(dlg_cpuset_add(&one, c), 0);
            break;
        }
    assert_int_equal(dlg_cpuset_set_affinity(&one), 0);
    setenv("OMP_NUM_THREADS", "8", 1);
    char script[600], buf[64];
    snprintf(script, sizeof script, "printf %%s \"$OMP_NUM_THREADS $OPENBLAS_NUM_THREADS\" > %s/env.txt", d->path);
    dlg_cell_outcome oc;
    assert_int_equal(run_sh(script, NULL, 0, &oc), 0);
    dlg_cpuset_set_affinity(&old);
    dlg_cpuset_fini(&old);
    dlg_cpuset_fini(&one);
    unsetenv("OMP_NUM_THREADS");
    assert_int_equal(oc.exit_code, 0);
    read_back(d, "env.txt", buf, sizeof buf);
    assert_string_equal(buf, "1 1");
    dlg_cell_outcome_free(&oc);
}

/* A cell that cannot join its cgroup does not run unlimited under a row
 * that claims the limit. */
static void test_cell_cannot_join_cgroup(void **state)
{
    const rt_dir *d = *state;
    dlg_cgroup cg = {0};
    snprintf(cg.mem_dir, sizeof cg.mem_dir, "%s/no-such-cgroup", d->path);
    char script[600];
    snprintf(script, sizeof script, "touch %s/ran", d->path);
    dlg_cell_outcome oc;
    assert_int_equal(run_sh(script, &cg, 1, &oc), 0);
    assert_int_equal(oc.exit_code, DLG_CELL_EXIT_CGROUP);
    assert_false(exists(d, "ran"));
    dlg_cell_outcome_free(&oc);
}

/* Running, not a zombie that init has yet to reap. */
static bool alive(pid_t pid)
{
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(stat, sizeof stat, f) != NULL;
    fclose(f);
    const char *st = ok ? strrchr(stat, ')') : NULL;
    return st && st[1] == ' ' && st[2] != 'Z' && st[2] != 'X';
}

/* On the machine's real cgroups (skipped without a writable one): a cell
 * that left a process outside its process group (setsid) does not keep its
 * cgroup, nor that process, alive after it is destroyed. */
static void test_destroy_kills_leftovers(void **state)
{
    const rt_dir *d = *state;
    dlg_cgroup cg;
    char why[1024], name[64];
    snprintf(name, sizeof name, "dlgauge-%d-999", (int)getpid());
    if (dlg_cgroup_create(&cg, name, 64 << 20, 0, why, sizeof why) != 0) {
        dlg_cgroup_destroy(&cg);
        skip(); /* no writable memory cgroup here (not root, or read-only) */
    }
    char script[600], pidtext[32];
    snprintf(script, sizeof script, "setsid sleep 30 </dev/null >/dev/null 2>&1 3>&- & echo $! > %s/pid", d->path);
    dlg_cell_outcome oc;
    assert_int_equal(run_sh(script, &cg, 1, &oc), 0);
    dlg_cell_outcome_free(&oc);
    read_back(d, "pid", pidtext, sizeof pidtext);
    pid_t left = (pid_t)atoi(pidtext);
    assert_true(left > 0);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", cg.mem_dir);
    dlg_cgroup_destroy(&cg);
    bool dir_left = access(dir, F_OK) == 0;
    bool proc_left = false;
    for (int i = 0; i < 100 && (proc_left = alive(left)); i++)
        usleep(10000); /* SIGKILLed: it is reparented and reaped by init */
    if (proc_left)
        kill(left, SIGKILL);
    if (dir_left)
        rmdir(dir);
    assert_false(dir_left);
    assert_false(proc_left);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_v2_cpu_quota_alone, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_v2_controller_not_delegated, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_v2_cpuset_is_not_cpu, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_v1_limits_and_stale_sweep, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_env_limits, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_oom_kills, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(test_cpus_within_quota),
        cmocka_unit_test(test_cpus_granted),
        cmocka_unit_test_setup_teardown(test_cell_threads_follow_affinity, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_cell_cannot_join_cgroup, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_destroy_kills_leftovers, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
