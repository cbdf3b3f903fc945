/* The diag plugin (stream, sleep) through the mock host. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>

#include "llc.h"
#include "mock_host.h"
#include "pool.h"
#include "stream_kernels.h"

#define MAXOPT 8
#define MS 1000000ull

/* ---- a report API that records fields and checks them against the table */
struct dlg_fields {
    const dlg_metric *table;
    int n;
    char key[16][64];
    double val[16];
    dlg_field_type type[16];
};

static void put(dlg_fields *f, const char *key, double v, dlg_field_type t)
{
    const dlg_metric *m = f->table;
    while (m->name && strcmp(m->name, key) != 0)
        m++;
    if (!m->name)
        fail_msg("field %s is not in the metric table", key);
    assert_int_equal(m->type, t);
    assert_true(f->n < 16);
    snprintf(f->key[f->n], sizeof f->key[0], "%s", key);
    f->val[f->n] = v;
    f->type[f->n++] = t;
}
static void add_double(dlg_fields *f, const char *key, double v) { put(f, key, v, DLG_FIELD_DOUBLE); }
static void add_int(dlg_fields *f, const char *key, int64_t v) { put(f, key, (double)v, DLG_FIELD_INT); }
static void add_string(dlg_fields *f, const char *key, const char *v) { put(f, key, 0, DLG_FIELD_STRING); }
static const dlg_report_api report_api = {add_double, add_int, add_string};

static bool field(const dlg_fields *f, const char *key, double *v)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->key[i], key)) {
            *v = f->val[i];
            return true;
        }
    return false;
}

static double must_field(const dlg_fields *f, const char *key)
{
    double v = 0;
    if (!field(f, key, &v))
        fail_msg("report has no %s", key);
    return v;
}

/* ---- setup helpers ------------------------------------------------------- */
typedef struct fixture {
    mock_host m;
    const dlg_plugin_desc *d;
    const dlg_workload_ops *ops;
    dlg_value vals[MAXOPT];
    dlg_job_info job;
    void *state;
} fixture;

static int start(fixture *fx, const char *name, const char *const *overrides, int cpus, uint64_t seed)
{
    memset(fx, 0, sizeof *fx);
    mock_host_init(&fx->m);
    fx->d = mock_load_plugin("diag.so", DLG_KIND_WORKLOAD, name);
    assert_non_null(fx->d);
    fx->ops = fx->d->ops;
    assert_int_equal(mock_options(fx->d->options, fx->vals, overrides), 0);
    fx->job = (dlg_job_info){.struct_size = sizeof(dlg_job_info), .job = "test", .cpus = cpus, .seed = seed};
    return fx->ops->setup(&fx->m.host, fx->vals, &fx->job, &fx->state);
}

static void report(fixture *fx, dlg_fields *f)
{
    memset(f, 0, sizeof *f);
    f->table = fx->d->metrics;
    int rc = fx->ops->report(fx->state, &report_api, f);
    if (rc != 0)
        fail_msg("report: %d: %s", rc, fx->m.last_error);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- stream -------------------------------------------------------------- */
static void test_stream_tables(void **st)
{
    const dlg_plugin_desc *d = mock_load_plugin("diag.so", DLG_KIND_WORKLOAD, "stream");
    assert_non_null(d);
    const dlg_workload_ops *ops = d->ops;
    assert_string_equal(ops->unit, "bytes");
    assert_string_equal(d->options[0].name, "array_size");
    assert_string_equal(d->options[0].def, "64MiB");
    assert_string_equal(d->options[1].choices, "copy|scale|add|triad|all");
    assert_string_equal(d->options[1].def, "triad");
    assert_string_equal(d->options[2].name, "threads");
}

static void test_stream_all(void **st)
{
    fixture fx;
    const char *o[] = {"array_size=64KiB", "kernel=all", "threads=3", NULL};
    assert_int_equal(start(&fx, "stream", o, 2, 1), 0);
    for (int r = 0; r < 2; r++) { /* two repetitions on one state */
        for (int i = 0; i < 10; i++) {
            dlg_step s = {0};
            assert_int_equal(fx.ops->step(fx.state, &s), 0);
            assert_true(s.items == 10u * 65536u); /* 2+2+3+3 arrays */
        }
        dlg_fields f;
        report(&fx, &f);
        const char *k[] = {"copy_bytes_per_s", "scale_bytes_per_s", "add_bytes_per_s",
                           "triad_bytes_per_s"};
        for (int i = 0; i < 4; i++) {
            double v = must_field(&f, k[i]);
            assert_true(isfinite(v) && v > 1e6);
        }
        assert_true(must_field(&f, "array_bytes") == 65536);
        assert_true(must_field(&f, "threads") == 3);
    }
    assert_int_equal(fx.m.errors, 0);
    fx.ops->teardown(fx.state);
}

/* One kernel per run; an odd size that splits unevenly over 4 threads;
 * threads = 0 takes the job's cpus. */
static void test_stream_each_kernel(void **st)
{
    const char *names[] = {"copy", "scale", "add", "triad"};
    const uint64_t arrays[] = {2, 2, 3, 3};
    for (int k = 0; k < 4; k++) {
        char kopt[32];
        snprintf(kopt, sizeof kopt, "kernel=%s", names[k]);
        const char *o[] = {"array_size=1032", kopt, NULL}; /* 129 doubles */
        fixture fx;
        assert_int_equal(start(&fx, "stream", o, 4, 1), 0);
        for (int i = 0; i < 5; i++) {
            dlg_step s = {0};
            assert_int_equal(fx.ops->step(fx.state, &s), 0);
            assert_true(s.items == arrays[k] * 129 * 8);
        }
        dlg_fields f;
        report(&fx, &f);
        double llc;
        /* this kernel's rate, array_bytes, threads (and llc_bytes, if known) */
        assert_int_equal(f.n, field(&f, "llc_bytes", &llc) ? 4 : 3);
        char key[64];
        snprintf(key, sizeof key, "%s_bytes_per_s", names[k]);
        assert_true(must_field(&f, key) > 0);
        assert_true(must_field(&f, "array_bytes") == 1032);
        assert_true(must_field(&f, "threads") == 4);
        fx.ops->teardown(fx.state);
    }
}

/* The last-level cache the threads' CPUs have (sysfs, as llc.c reads it),
 * or 0 where this host does not say. */
static double sysfs_llc(int nthreads)
{
    dlg_cpuset cpus;
    double b = 0;
    if (dlg_cpuset_init(&cpus, 0) == 0 && dlg_cpuset_get_affinity(&cpus) == 0)
        b = llc_bytes_used("/sys/devices/system/cpu", &cpus, nthreads);
    dlg_cpuset_fini(&cpus);
    return b;
}

/* One short run of triad with arrays of `bytes`: its llc_bytes field (0
 * when absent) and the warning setup gave ("" when none). */
static double llc_run(long long bytes, char *warning, size_t len)
{
    char size[48];
    snprintf(size, sizeof size, "array_size=%lld", bytes);
    const char *o[] = {size, "threads=2", NULL};
    fixture fx;
    assert_int_equal(start(&fx, "stream", o, 2, 1), 0);
    snprintf(warning, len, "%s", fx.m.warnings ? fx.m.last_log : "");
    dlg_step s = {0};
    assert_int_equal(fx.ops->step(fx.state, &s), 0);
    dlg_fields f;
    report(&fx, &f);
    double llc = 0;
    if (field(&f, "llc_bytes", &llc))
        assert_true(llc > 0); /* absent, not 0, when unknown */
    fx.ops->teardown(fx.state);
    return llc;
}

/* The report tells cache from memory bandwidth by llc_bytes: the cache
 * the run's 2 threads had, as sysfs gives it.  Setup's warning says
 * whether the 3 arrays fit in it (cache bandwidth) or only break STREAM's
 * 4x rule (memory, partly cached). */
static void test_stream_llc_field(void **st)
{
    (void)st;
    char warning[1024];
    double want = sysfs_llc(2), llc = llc_run(65536, warning, sizeof warning);
    print_message("llc_bytes %.0f (sysfs %.0f): %s\n", llc, want, warning);
    if (want > 0)
        assert_true(llc == want);
    if (!(llc > 0))
        skip(); /* this host does not say: nothing to warn by */
    assert_non_null(strstr(warning, "the arrays fit in it, this measures cache, not memory, bandwidth"));
    if (llc > 64.0 * 1048576)
        return; /* half of it, 3 times over, is too much memory for a unit test */
    (void)llc_run((long long)(llc / 2), warning, sizeof warning);
    assert_non_null(strstr(warning, "part of the traffic hits the cache, overstating memory bandwidth"));
}

/* ---- the pool stream runs on ------------------------------------------ */
/* A kernel built for 2048 possible CPUs (nr_cpu_ids) refuses to report an
 * affinity into a mask smaller than its own, as a cpu_set_t is: EINVAL.
 * Linked with --wrap (tests/measure/CMakeLists.txt), so the pool's calls
 * meet it too; big_kernel switches it on for one test. */
static int big_kernel;
#define BIG_KERNEL_MASK_BYTES (2048 / 8)
int __real_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set);
int __real_pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set);
int __wrap_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set);
int __wrap_pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set);

int __wrap_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
    if (big_kernel && size < BIG_KERNEL_MASK_BYTES) {
        errno = EINVAL;
        return -1;
    }
    return __real_sched_getaffinity(pid, size, set);
}

int __wrap_pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set)
{
    if (big_kernel && size < BIG_KERNEL_MASK_BYTES)
        return EINVAL;
    return __real_pthread_getaffinity_np(t, size, set);
}

struct where {
    int ncpus, cpu;
};

static void record_cpus(void *arg, int tid, int nthreads, int cmd)
{
    (void)nthreads, (void)cmd;
    struct where *w = &((struct where *)arg)[tid];
    dlg_cpuset m; /* no cmocka asserts off the test's thread */
    w->ncpus = w->cpu = -1;
    if (dlg_cpuset_init(&m, 0) == 0 && dlg_cpuset_get_affinity(&m) == 0) {
        w->ncpus = dlg_cpuset_count(&m);
        for (int c = 0; c < m.nbits && w->cpu < 0; c++)
            if (dlg_cpuset_has(&m, c))
                w->cpu = c;
    }
    dlg_cpuset_fini(&m);
}

/* First touch puts a worker's slice on its NUMA node only if the worker
 * stays there: each is pinned to its own CPU of the job's set, and the
 * caller gets its own set back when the pool goes. */
static void pool_pins_workers(void)
{
    dlg_cpuset before, after;
    assert_int_equal(dlg_cpuset_init(&before, 0), 0);
    assert_int_equal(dlg_cpuset_init(&after, 0), 0);
    assert_int_equal(dlg_cpuset_get_affinity(&before), 0);
    if (dlg_cpuset_count(&before) < 2) {
        dlg_cpuset_fini(&before);
        dlg_cpuset_fini(&after);
        skip(); /* one CPU: nothing to pin */
    }
    struct where w[2];
    diag_pool *p = NULL;
    assert_int_equal(diag_pool_new(2, record_cpus, w, &p), 0);
    diag_pool_run(p, 0);
    diag_pool_free(p);
    for (int t = 0; t < 2; t++) {
        if (w[t].ncpus != 1)
            fail_msg("worker %d may run on %d CPUs", t, w[t].ncpus);
        assert_true(dlg_cpuset_has(&before, w[t].cpu));
    }
    assert_int_not_equal(w[0].cpu, w[1].cpu);
    assert_int_equal(dlg_cpuset_get_affinity(&after), 0);
    assert_int_equal(before.size, after.size);
    assert_memory_equal(before.bits, after.bits, before.size);
    dlg_cpuset_fini(&before);
    dlg_cpuset_fini(&after);
}

static void test_pool_pins_workers(void **st)
{
    (void)st;
    pool_pins_workers();
}

/* the pool read its CPUs into a cpu_set_t: EINVAL there, and no worker
 * was pinned */
static void test_pool_pins_on_big_kernel(void **st)
{
    (void)st;
    big_kernel = 1;
    pool_pins_workers();
}

static int real_kernel(void **st)
{
    (void)st;
    big_kernel = 0;
    return 0;
}

/* A worker's own fault reaches the process's handler (in-process, the
 * crash line that names the cell): the pool blocked SIGSEGV in its workers,
 * so the kernel killed the process without running any handler. */
static void on_fault(int sig)
{
    (void)sig;
    _exit(7);
}

static void fault_in_worker(void *arg, int tid, int nthreads, int cmd)
{
    (void)arg, (void)nthreads, (void)cmd;
    volatile uintptr_t bad = 16;
    if (tid == 1)
        *(volatile int *)bad = 1;
}

static void test_pool_worker_fault_handled(void **st)
{
    (void)st;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fault;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
        diag_pool *p = NULL;
        if (diag_pool_new(2, fault_in_worker, NULL, &p) == 0)
            diag_pool_run(p, 0);
        _exit(3);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 7)
        fail_msg("the worker's SIGSEGV did not reach the handler (%s %d)", WIFSIGNALED(status) ? "signal" : "exit",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* ---- the last-level cache STREAM's size rule counts ---------------------- */
static void put_attr(const char *root, int cpu, int index, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cpu%d/cache/index%d", root, cpu, index);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    snprintf(path + strlen(path), sizeof path - strlen(path), "/%s", name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", text);
    fclose(f);
}

/* Two sockets (or CCDs) of 2 CPUs, each pair sharing a 32 MiB L3 (with
 * private L1d, L1i and L2 that do not count): threads on both pairs have
 * 64 MiB of cache, so STREAM wants arrays of 256 MiB, not 128 MiB. */
static void test_llc_sums_caches(void **st)
{
    (void)st;
    char root[64];
    snprintf(root, sizeof root, "/tmp/test_diag_llc_%d", (int)getpid());
    for (int cpu = 0; cpu < 4; cpu++) {
        char own[8];
        snprintf(own, sizeof own, "%d", cpu);
        put_attr(root, cpu, 0, "level", "1"), put_attr(root, cpu, 0, "type", "Data");
        put_attr(root, cpu, 0, "size", "48K"), put_attr(root, cpu, 0, "shared_cpu_list", own);
        put_attr(root, cpu, 1, "level", "1"), put_attr(root, cpu, 1, "type", "Instruction");
        put_attr(root, cpu, 1, "size", "32K"), put_attr(root, cpu, 1, "shared_cpu_list", own);
        put_attr(root, cpu, 2, "level", "2"), put_attr(root, cpu, 2, "type", "Unified");
        put_attr(root, cpu, 2, "size", "512K"), put_attr(root, cpu, 2, "shared_cpu_list", own);
        put_attr(root, cpu, 3, "level", "3"), put_attr(root, cpu, 3, "type", "Unified");
        put_attr(root, cpu, 3, "size", "32768K");
        put_attr(root, cpu, 3, "shared_cpu_list", cpu < 2 ? "0-1" : "2-3");
    }
    dlg_cpuset all, upper;
    assert_int_equal(dlg_cpuset_init(&all, 0), 0);
    assert_int_equal(dlg_cpuset_init(&upper, 0), 0);
    assert_int_equal(dlg_cpuset_parse_list("0-3", &all), 4);
    assert_int_equal(dlg_cpuset_parse_list("2-3", &upper), 2);
    const double mib = 1048576.0;
    assert_true(llc_bytes_used(root, &all, 4) == 64 * mib);
    assert_true(llc_bytes_used(root, &all, 3) == 64 * mib);
    assert_true(llc_bytes_used(root, &all, 2) == 32 * mib); /* cpus 0, 1: one L3 */
    assert_true(llc_bytes_used(root, &all, 64) == 64 * mib);
    assert_true(llc_bytes_used(root, &upper, 2) == 32 * mib);
    assert_true(llc_bytes_used("/nonexistent", &all, 4) == 0);
    /* CPU ids past 1023 (a cpu_set_t's end) have caches too */
    put_attr(root, 1500, 0, "level", "3"), put_attr(root, 1500, 0, "type", "Unified");
    put_attr(root, 1500, 0, "size", "16384K"), put_attr(root, 1500, 0, "shared_cpu_list", "1500");
    assert_int_equal(dlg_cpuset_add(&upper, 1500), 0);
    assert_true(llc_bytes_used(root, &upper, 3) == 48 * mib);
    dlg_cpuset_fini(&all);
    dlg_cpuset_fini(&upper);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* The cache comes from sysfs alone ($DLG_SYSFS_ROOT, here a fake tree):
 * where sysfs does not give it, llc_bytes is absent and setup says so,
 * rather than take glibc's sysconf guess (320 MiB of L3 on a 32 MiB EPYC
 * VM, which would call memory-bound arrays cache-bound). */
static char fake_sysfs[64];

static int drop_fake_sysfs(void **st)
{
    (void)st;
    unsetenv("DLG_SYSFS_ROOT");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fake_sysfs);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_stream_llc_sysfs_only(void **st)
{
    (void)st;
    snprintf(fake_sysfs, sizeof fake_sysfs, "/tmp/test_diag_sysfs_%d", (int)getpid());
    char cpu_dir[128], cmd[200], warning[1024];
    snprintf(cpu_dir, sizeof cpu_dir, "%s/devices/system/cpu", fake_sysfs);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", cpu_dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(setenv("DLG_SYSFS_ROOT", fake_sysfs, 1), 0);
    double llc = llc_run(65536, warning, sizeof warning);
    print_message("no cache in sysfs: llc_bytes %.0f: %s\n", llc, warning);
    assert_true(llc == 0);
    assert_non_null(strstr(warning, "last-level cache size is unknown"));
    assert_non_null(strstr(warning, cpu_dir));
    /* one 6 MiB L3 shared by every CPU the run may use */
    dlg_cpuset cpus;
    assert_int_equal(dlg_cpuset_init(&cpus, 0), 0);
    assert_int_equal(dlg_cpuset_get_affinity(&cpus), 0);
    for (int cpu = 0; cpu < cpus.nbits; cpu++)
        if (dlg_cpuset_has(&cpus, cpu)) {
            put_attr(cpu_dir, cpu, 0, "level", "3"), put_attr(cpu_dir, cpu, 0, "type", "Unified");
            put_attr(cpu_dir, cpu, 0, "size", "6144K"), put_attr(cpu_dir, cpu, 0, "shared_cpu_list", "all");
        }
    dlg_cpuset_fini(&cpus);
    llc = llc_run(65536, warning, sizeof warning);
    assert_true(llc == 6 * 1048576.0);
    assert_non_null(strstr(warning, "the arrays fit in it"));
}

static void expect_setup_error(const char *name, const char *opt, const char *needle)
{
    const char *o[] = {opt, NULL};
    fixture fx;
    assert_int_equal(start(&fx, name, o, 2, 1), -DLG_EINVAL);
    assert_null(fx.state);
    assert_int_equal(fx.m.errors, 1);
    if (!strstr(fx.m.last_error, needle))
        fail_msg("%s: error \"%s\" does not name %s", opt, fx.m.last_error, needle);
}

static void test_option_errors(void **st)
{
    expect_setup_error("stream", "threads=-1", "threads = -1");
    expect_setup_error("stream", "threads=5000", "threads = 5000");
    expect_setup_error("stream", "array_size=512", "array_size = 512");
    expect_setup_error("stream", "array_size=100000G", "array_size = 100000G"); /* > RAM */
    expect_setup_error("sleep", "sleep=-1ms", "sleep = -1ms");
    expect_setup_error("sleep", "sleep=7200s", "sleep = 7200s");
    expect_setup_error("sleep", "jitter=-3ms", "jitter = -3ms");
}

/* The kernels and the check used by report(): correct arrays pass, one
 * wrong element or a NaN fails, and long "all" runs stay finite. */
static void test_stream_validation(void **st)
{
    enum { n = 1000 };
    static double a[n], b[n], c[n];
    stream_expect e;
    stream_expect_init(&e);
    stream_fill(a, b, c, 0, n);
    for (int step = 0; step < 50; step++)
        for (int k = 0; k < STREAM_NKERNELS; k++) {
            stream_kernel_run(k, a, b, c, 0, n / 2); /* two slices, as workers do */
            stream_kernel_run(k, a, b, c, n / 2, n);
            stream_expect_step(&e, k);
        }
    double err;
    uint64_t bad;
    const double *arr[3] = {a, b, c};
    const double want[3] = {e.a, e.b, e.c};
    for (int i = 0; i < 3; i++) {
        stream_error(arr[i], 0, n, want[i], &err, &bad);
        assert_int_equal(bad, 0);
        assert_true(stream_rel_error(err, n, want[i]) <= STREAM_EPSILON);
    }
    /* Independent of the recurrence: after copy,scale,add,triad from
     * (1, 2, 0) the values are a = s(2+s) = 1, b = s, c = 1 + s. */
    assert_true(fabs(e.b - STREAM_SCALAR) < 1e-12 && fabs(e.c - 1 - STREAM_SCALAR) < 1e-12);
    assert_true(fabs(e.a - 1.0) < 1e-12);
    assert_true(fabs(a[n - 1] - 1.0) < 1e-12);

    b[n / 3] += 1e-6;
    stream_error(b, 0, n, e.b, &err, &bad);
    assert_int_equal(bad, 1);
    assert_true(stream_rel_error(err, n, e.b) > STREAM_EPSILON);
    c[7] = NAN;
    stream_error(c, 0, n, e.c, &err, &bad);
    assert_int_equal(bad, 1);

    stream_expect_init(&e);
    for (int step = 0; step < 100000; step++)
        for (int k = 0; k < STREAM_NKERNELS; k++)
            stream_expect_step(&e, k);
    assert_true(fabs(e.a - 1.0) < 1e-9);
    assert_int_equal(stream_kernel_bytes(STREAM_TRIAD, 10), 240);
    assert_int_equal(stream_kernel_bytes(STREAM_COPY, 10), 160);
}

/* ---- sleep --------------------------------------------------------------- */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_sleep_accuracy(void **st)
{
    fixture fx;
    const char *o[] = {"sleep=5ms", NULL};
    assert_int_equal(start(&fx, "sleep", o, 1, 1), 0);
    assert_string_equal(fx.ops->unit, "steps");
    uint64_t t[20];
    for (int i = 0; i < 20; i++) {
        dlg_step s = {0};
        uint64_t t0 = now_ns();
        assert_int_equal(fx.ops->step(fx.state, &s), 0);
        t[i] = now_ns() - t0;
        assert_int_equal(s.items, 1);
        assert_true(t[i] >= 5 * MS); /* never early */
    }
    qsort(t, 20, sizeof t[0], cmp_u64);
    uint64_t median = t[10];
    if (median > 7 * MS)
        fail_msg("median step %.3f ms, want 5..7 ms", median / 1e6);
    dlg_fields f;
    report(&fx, &f);
    assert_true(must_field(&f, "sleep_ns") == 5e6);
    assert_true(must_field(&f, "jitter_ns") == 0);
    assert_true(must_field(&f, "requested_ns_mean") == 5e6);
    assert_true(must_field(&f, "oversleep_ns_mean") >= 0);
    assert_true(must_field(&f, "oversleep_ns_max") >= must_field(&f, "oversleep_ns_mean"));
    fx.ops->teardown(fx.state);
}

static double jitter_mean(uint64_t seed)
{
    fixture fx;
    const char *o[] = {"sleep=0", "jitter=2ms", NULL};
    assert_int_equal(start(&fx, "sleep", o, 1, seed), 0);
    uint64_t total = 0;
    for (int i = 0; i < 10; i++) {
        dlg_step s = {0};
        uint64_t t0 = now_ns();
        assert_int_equal(fx.ops->step(fx.state, &s), 0);
        total += now_ns() - t0;
    }
    dlg_fields f;
    report(&fx, &f);
    double mean = must_field(&f, "requested_ns_mean");
    assert_true(mean > 0 && mean <= 2e6);
    assert_true((double)total / 10 >= mean); /* the sleeps really happened */
    fx.ops->teardown(fx.state);
    return mean;
}

static void test_sleep_jitter_seeded(void **st)
{
    double a = jitter_mean(42), b = jitter_mean(42), c = jitter_mean(43);
    assert_true(a == b);
    assert_true(a != c);
}

static void on_alarm(int sig) { (void)sig; }

/* Signals interrupt clock_nanosleep; the absolute deadline resumes it. */
static void test_sleep_eintr(void **st)
{
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_alarm; /* no SA_RESTART: EINTR for sure */
    sigaction(SIGALRM, &sa, &old);
    struct itimerval it = {{0, 2000}, {0, 2000}}, off = {{0, 0}, {0, 0}};
    fixture fx;
    const char *o[] = {"sleep=30ms", NULL};
    assert_int_equal(start(&fx, "sleep", o, 1, 1), 0);
    setitimer(ITIMER_REAL, &it, NULL);
    dlg_step s = {0};
    uint64_t t0 = now_ns();
    int rc = fx.ops->step(fx.state, &s);
    uint64_t dt = now_ns() - t0;
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    assert_int_equal(rc, 0);
    assert_true(dt >= 30 * MS);
    assert_true(dt < 200 * MS);
    fx.ops->teardown(fx.state);
}

/* A long sleep notices host->stopping() within its poll interval. */
static void test_sleep_stopping(void **st)
{
    fixture fx;
    const char *o[] = {"sleep=10s", NULL};
    assert_int_equal(start(&fx, "sleep", o, 1, 1), 0);
    fx.m.stop = true;
    dlg_step s = {0};
    uint64_t t0 = now_ns();
    assert_int_equal(fx.ops->step(fx.state, &s), -DLG_ESTOP);
    assert_true(now_ns() - t0 < 1000 * MS);
    assert_int_equal(s.items, 0);
    fx.ops->teardown(fx.state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_tables),     cmocka_unit_test(test_stream_all),
        cmocka_unit_test(test_stream_each_kernel), cmocka_unit_test(test_stream_llc_field),
        cmocka_unit_test(test_pool_pins_workers), cmocka_unit_test_teardown(test_pool_pins_on_big_kernel, real_kernel),
        cmocka_unit_test(test_pool_worker_fault_handled),
        cmocka_unit_test(test_llc_sums_caches), cmocka_unit_test(test_option_errors),
        cmocka_unit_test_teardown(test_stream_llc_sysfs_only, drop_fake_sysfs),
        cmocka_unit_test(test_stream_validation), cmocka_unit_test(test_sleep_accuracy),
        cmocka_unit_test(test_sleep_jitter_seeded), cmocka_unit_test(test_sleep_eintr),
        cmocka_unit_test(test_sleep_stopping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
