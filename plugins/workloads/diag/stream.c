/* stream: STREAM memory bandwidth (McCalpin), run on a persistent thread
 * pool.  Each worker owns a fixed slice of the three arrays: it touches the
 * slice first (so the pages live near it) and runs every kernel on it. */
#define _GNU_SOURCE
#include "diag.h"
#include "llc.h"
#include "phys_fit.h"
#include "pool.h"
#include "stream_kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_ARRAY_SIZE, OPT_KERNEL, OPT_THREADS };
#define KERNEL_ALL STREAM_NKERNELS /* enum index of "all" */
#define MIN_ARRAY_BYTES 1024
#define MAX_THREADS 1024
/* Pool commands beyond the kernel numbers 0..3. */
enum { CMD_FILL = STREAM_NKERNELS, CMD_CHECK };

static const dlg_option stream_options[] = {
    {"array_size", DLG_OPT_SIZE, "64MiB", "1KiB", NULL, NULL,
     "bytes per array (3 arrays of doubles); STREAM's rule: at least 4x the last-level cache (llc_bytes); "
     "arrays a kernel touches that fit in it measure cache bandwidth (the report says cache-bound)", 0},
    {"kernel", DLG_OPT_ENUM, "triad", NULL, NULL, "copy|scale|add|triad|all",
     "kernel one step runs; all = copy, scale, add, triad in order", 0},
    {"threads", DLG_OPT_INT, "0", "0", "1024", NULL, "worker threads; 0 = one per job cpu", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};

static const dlg_metric stream_metrics[] = {
    {"copy_bytes_per_s", DLG_FIELD_DOUBLE, "bytes/s", "best copy rate over the repetition's timed steps"},
    {"scale_bytes_per_s", DLG_FIELD_DOUBLE, "bytes/s", "best scale rate over the repetition's timed steps"},
    {"add_bytes_per_s", DLG_FIELD_DOUBLE, "bytes/s", "best add rate over the repetition's timed steps"},
    {"triad_bytes_per_s", DLG_FIELD_DOUBLE, "bytes/s", "best triad rate over the repetition's timed steps"},
    {"array_bytes", DLG_FIELD_INT, "bytes", "bytes per array"},
    {"threads", DLG_FIELD_INT, "", "worker threads"},
    {"llc_bytes", DLG_FIELD_INT, "bytes",
     "last-level cache of the worker threads' CPUs, summed over distinct caches, from sysfs; absent "
     "when sysfs does not give it (setup then warns; sysconf's CPUID figure is not trusted). The report "
     "calls a cell cache-bound where the arrays a kernel touches fit in it, and notes partial cache hits "
     "where arrays are under 4x it"},
    {NULL, 0, NULL, NULL}};

/* One worker's validation result; padded to a cache line. */
struct check_slot {
    double err[3];
    uint64_t bad[3];
    char pad[16];
};

struct stream {
    const dlg_host *h;
    double *a, *b, *c;
    size_t n; /* elements per array */
    int nthreads;
    int kernel; /* 0..3, or KERNEL_ALL */
    double llc; /* bytes of last-level cache the workers share; 0 = unknown */
    diag_pool *pool;
    struct check_slot *slots; /* [nthreads] */
    stream_expect expect;
    uint64_t best_ns[STREAM_NKERNELS]; /* since begin_timed (or setup) */
    uint64_t passes[STREAM_NKERNELS];
};

static const char *txt(const dlg_value *v) { return v->text ? v->text : "(unset)"; }

/* Worker tid's slice, in whole cache lines so that no two workers write
 * the same line. */
static void slice(size_t n, int tid, int nthreads, size_t *lo, size_t *hi)
{
    size_t lines = (n + 7) / 8;
    size_t l0 = lines * (size_t)tid / (size_t)nthreads;
    size_t l1 = lines * (size_t)(tid + 1) / (size_t)nthreads;
    *lo = l0 * 8 < n ? l0 * 8 : n;
    *hi = l1 * 8 < n ? l1 * 8 : n;
}

static void work(void *arg, int tid, int nthreads, int cmd)
{
    struct stream *s = arg;
    size_t lo, hi;
    slice(s->n, tid, nthreads, &lo, &hi);
    if (cmd < STREAM_NKERNELS) {
        stream_kernel_run(cmd, s->a, s->b, s->c, lo, hi);
    } else if (cmd == CMD_FILL) {
        stream_fill(s->a, s->b, s->c, lo, hi);
    } else if (cmd == CMD_CHECK) {
        struct check_slot *r = &s->slots[tid];
        stream_error(s->a, lo, hi, s->expect.a, &r->err[0], &r->bad[0]);
        stream_error(s->b, lo, hi, s->expect.b, &r->err[1], &r->bad[1]);
        stream_error(s->c, lo, hi, s->expect.c, &r->err[2], &r->bad[2]);
    }
}

static void stream_teardown(void *state)
{
    struct stream *s = state;
    if (!s)
        return;
    diag_pool_free(s->pool);
    free(s->a);
    free(s->b);
    free(s->c);
    free(s->slots);
    free(s);
}

static void reset_best(struct stream *s)
{
    for (int k = 0; k < STREAM_NKERNELS; k++) {
        s->best_ns[k] = UINT64_MAX;
        s->passes[k] = 0;
    }
}

/* Last-level cache the run's threads can hold data in (llc_bytes_run), or
 * 0 after saying that it is unknown and what that leaves out. */
static double llc_bytes(const dlg_host *h, int nthreads)
{
    char dir[512];
    double b = llc_bytes_run(nthreads, dir, sizeof dir);
    if (!(b > 0))
        h->log(h, DLG_LOG_WARN,
               "stream: the last-level cache size is unknown (%s/cpuN/cache does not give it; sysconf's "
               "CPUID figure is not trusted): llc_bytes is left out, and neither STREAM's 4x rule nor the "
               "report's cache-bound note can be applied",
               dir);
    return b;
}

/* Arrays the kernel(s) a step runs touch: 2 for copy and scale, 3 for
 * add and triad (all: triad's 3). */
static int arrays_touched(int kernel)
{
    return (int)(stream_kernel_bytes(kernel == KERNEL_ALL ? STREAM_TRIAD : kernel, 1) / sizeof(double));
}

/* STREAM's rule (each array at least 4x the last-level caches in use) is
 * advice: small arrays are legitimate (cache bandwidth), so this only
 * warns.  Arrays that fit measure the cache alone; larger ones under the
 * rule, memory with part of the traffic served by the cache. */
static void warn_if_cached(const dlg_host *h, size_t bytes, int nthreads, int kernel, double llc)
{
    if (!(llc > 0) || (double)bytes >= 4.0 * llc)
        return;
    char have[32], cache[32], want[32];
    dlg_bytes_txt(have, sizeof have, (double)bytes);
    dlg_bytes_txt(cache, sizeof cache, llc);
    dlg_bytes_txt(want, sizeof want, 4.0 * llc);
    int arrays = arrays_touched(kernel);
    h->log(h, DLG_LOG_WARN,
           "array_size %s is below 4x the %s last-level cache (%s) of the %d thread%s CPUs: %s", have,
           cache, want, nthreads, nthreads == 1 ? "'s" : "s'",
           (double)bytes * arrays <= llc ? "the arrays fit in it, this measures cache, not memory, bandwidth"
                                         : "part of the traffic hits the cache, overstating memory bandwidth");
}

static int check_options(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job,
                         size_t *n, int *nthreads)
{
    int64_t bytes = opts[OPT_ARRAY_SIZE].i;
    if (bytes < MIN_ARRAY_BYTES)
        return h->error(h, DLG_EINVAL, "array_size = %s: must be at least 1KiB",
                        txt(&opts[OPT_ARRAY_SIZE]));
    int64_t kernel = opts[OPT_KERNEL].i;
    if (kernel < 0 || kernel > KERNEL_ALL)
        return h->error(h, DLG_EINVAL, "kernel = %s: must be one of copy|scale|add|triad|all",
                        txt(&opts[OPT_KERNEL]));
    int64_t threads = opts[OPT_THREADS].i;
    if (threads < 0 || threads > MAX_THREADS)
        return h->error(h, DLG_EINVAL,
                        "threads = %s: must be between 0 (one per job cpu) and %d",
                        txt(&opts[OPT_THREADS]), MAX_THREADS);
    int cpus = DLG_JOB_HAS(job, cpus) ? job->cpus : 0;
    *nthreads = threads > 0 ? (int)threads : cpus > 0 ? (cpus < MAX_THREADS ? cpus : MAX_THREADS) : 1;
    *n = (size_t)bytes / sizeof(double);

    char a[DLG_BYTES_TXT], b[DLG_BYTES_TXT];
    if (!dlg_phys_fits(3.0 * (double)*n * sizeof(double), a, b))
        return h->error(h, DLG_EINVAL, "array_size = %s: the 3 arrays need %s, the machine has %s",
                        txt(&opts[OPT_ARRAY_SIZE]), a, b);
    return 0;
}

/* The workload's check: check_options, as setup applies it. */
static int stream_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job)
{
    size_t n;
    int nthreads;
    return check_options(h, opts, job, &n, &nthreads);
}

static double *alloc_array(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 4096, n * sizeof(double)) == 0 ? p : NULL;
}

static int stream_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job,
                        void **state)
{
    *state = NULL;
    size_t n = 0;
    int nthreads = 1;
    int rc = check_options(h, opts, job, &n, &nthreads);
    if (rc < 0)
        return rc;
    double llc = llc_bytes(h, nthreads);
    warn_if_cached(h, n * sizeof(double), nthreads, (int)opts[OPT_KERNEL].i, llc);

    struct stream *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->n = n;
    s->nthreads = nthreads;
    s->kernel = (int)opts[OPT_KERNEL].i;
    s->llc = llc;
    s->a = alloc_array(n);
    s->b = alloc_array(n);
    s->c = alloc_array(n);
    s->slots = calloc((size_t)nthreads, sizeof *s->slots);
    if (!s->a || !s->b || !s->c || !s->slots) {
        char need[32];
        dlg_bytes_txt(need, sizeof need, 3.0 * (double)n * sizeof(double));
        stream_teardown(s);
        return h->error(h, DLG_ENOMEM, "stream: cannot allocate 3 arrays (%s)", need);
    }
    rc = diag_pool_new(nthreads, work, s, &s->pool);
    if (rc != 0) {
        stream_teardown(s);
        return h->error(h, DLG_ENOMEM, "stream: cannot start %d threads: %s", nthreads,
                        strerror(rc));
    }
    diag_pool_run(s->pool, CMD_FILL); /* first touch by the owning worker */
    stream_expect_init(&s->expect);
    reset_best(s);
    *state = s;
    return 0;
}

static int stream_step(void *state, dlg_step *out)
{
    struct stream *s = state;
    int first = s->kernel == KERNEL_ALL ? 0 : s->kernel;
    int last = s->kernel == KERNEL_ALL ? STREAM_NKERNELS - 1 : s->kernel;
    uint64_t items = 0;
    uint64_t t0 = s->h->now_ns(s->h);
    for (int k = first; k <= last; k++) {
        diag_pool_run(s->pool, k);
        uint64_t t1 = s->h->now_ns(s->h);
        uint64_t dt = t1 > t0 ? t1 - t0 : 1;
        if (dt < s->best_ns[k])
            s->best_ns[k] = dt;
        s->passes[k]++;
        stream_expect_step(&s->expect, k);
        items += stream_kernel_bytes(k, s->n);
        t0 = t1;
    }
    out->items = items;
    return 0;
}

/* STREAM's checkSTREAMresults: average relative error per array. */
static int validate(struct stream *s)
{
    diag_pool_run(s->pool, CMD_CHECK);
    static const char names[3] = {'a', 'b', 'c'};
    const double want[3] = {s->expect.a, s->expect.b, s->expect.c};
    for (int arr = 0; arr < 3; arr++) {
        double err = 0.0;
        uint64_t bad = 0;
        for (int t = 0; t < s->nthreads; t++) {
            err += s->slots[t].err[arr];
            bad += s->slots[t].bad[arr];
        }
        double rel = stream_rel_error(err, s->n, want[arr]);
        if (bad > 0 || !(rel <= STREAM_EPSILON))
            return s->h->error(s->h, DLG_EINTERNAL,
                               "stream: validation failed: array %c has %llu of %zu elements "
                               "wrong (average relative error %.3g, expected %.17g, tolerance %g)",
                               names[arr], (unsigned long long)bad, s->n, rel, want[arr],
                               STREAM_EPSILON);
    }
    return 0;
}

static int stream_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    struct stream *s = state;
    int rc = validate(s);
    if (rc < 0)
        return rc;
    for (int k = 0; k < STREAM_NKERNELS; k++) {
        if (s->passes[k] == 0)
            continue;
        char key[32];
        snprintf(key, sizeof key, "%s_bytes_per_s", stream_kernel_name(k));
        api->add_double(f, key, (double)stream_kernel_bytes(k, s->n) * 1e9 / (double)s->best_ns[k]);
    }
    api->add_int(f, "array_bytes", (int64_t)(s->n * sizeof(double)));
    api->add_int(f, "threads", s->nthreads);
    if (s->llc > 0) /* the report tells cache from memory bandwidth by it */
        api->add_int(f, "llc_bytes", (int64_t)s->llc);
    reset_best(s);
    return 0;
}

/* Warm-up passes (first touch after setup, a cold TLB) are no best rate. */
static int stream_begin_timed(void *state)
{
    reset_best(state);
    return 0;
}

static const dlg_workload_ops stream_ops = {
    .version = 3,
    .check = stream_check,
    .unit = "bytes",
    .setup = stream_setup,
    .step = stream_step,
    .report = stream_report,
    .teardown = stream_teardown,
    .begin_timed = stream_begin_timed,
};

const dlg_plugin_desc stream_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "stream",
    .version = "1.0",
    .summary = "STREAM memory bandwidth (copy, scale, add, triad) on a persistent thread pool",
    .options = stream_options,
    .metrics = stream_metrics,
    .ops = &stream_ops,
};
