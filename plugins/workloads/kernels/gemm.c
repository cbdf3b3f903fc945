/* gemm: C = op(A) op(B), M x N x K, fp32, with oneDNN's dnnl_sgemm (the
 * library the engine already links; row-major).  One step = one gemm;
 * items are FLOPs (2MNK), so throughput is FLOP/s. */
#include "kernels.h"

#include "gemm_check.h"
#include "cpu/omp_team.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdlib.h>

enum { G_M, G_N, G_K, G_TA, G_TB, G_COUNT };

static const dlg_option gemm_options[] = {
    [G_M] = {"m", DLG_OPT_INT, "1024", "1", "1000000", NULL, "rows of C", 0},
    [G_N] = {"n", DLG_OPT_INT, "1024", "1", "1000000", NULL, "columns of C", 0},
    [G_K] = {"k", DLG_OPT_INT, "1024", "1", "1000000", NULL, "inner dimension", 0},
    [G_TA] = {"transa", DLG_OPT_BOOL, "false", NULL, NULL, NULL, "use A transposed (A is K x M)", 0},
    [G_TB] = {"transb", DLG_OPT_BOOL, "false", NULL, NULL, NULL, "use B transposed (B is N x K)", 0},
    [G_COUNT] = {0}};

static const dlg_metric gemm_metrics[] = {
    KERNEL_METRIC_ROWS,
    {"max_abs_error", DLG_FIELD_DOUBLE, "",
     "largest |C - exact| over 64 sampled entries of C, against a double-precision product of "
     "the same A and B (the report fails past fp32 rounding)"},
    {NULL, 0, NULL, NULL}};

typedef struct gemm {
    const dlg_host *h;
    int64_t m, n, k;
    char ta, tb;
    int threads;
    float *a, *b, *c;
    kernel_stats st;
} gemm;

static float *filled(size_t count, uint32_t seed)
{
    float *p = malloc(count * sizeof(float));
    for (size_t i = 0; p && i < count; i++) { /* touched here, not in the timed loop */
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) * 0x1p-24f - 0.5f;
    }
    return p;
}

static void gemm_teardown(void *state)
{
    gemm *g = state;
    if (!g)
        return;
    free(g->a);
    free(g->b);
    free(g->c);
    free(g);
}

/* The matrices' size against the fixed limit: the workload's check, and
 * setup's first step. */
static int gemm_opts_check(const dlg_host *h, const dlg_value *o)
{
    double m = (double)o[G_M].i, n = (double)o[G_N].i, k = (double)o[G_K].i;
    double bytes = 4.0 * (m * k + k * n + m * n);
    if (bytes > 64e9)
        return h->error(h, DLG_ENOMEM, "m, n, k = %lld, %lld, %lld: the matrices need %.1f GB",
                        (long long)o[G_M].i, (long long)o[G_N].i, (long long)o[G_K].i, bytes / 1e9);
    return 0;
}

static int gemm_ops_check(const dlg_host *h, const dlg_value *o, const dlg_job_info *job)
{
    return gemm_opts_check(h, o);
}

static int gemm_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *job, void **state)
{
    *state = NULL;
    gemm *g = calloc(1, sizeof *g);
    if (!g)
        return h->error(h, DLG_ENOMEM, "out of memory");
    g->h = h;
    g->m = o[G_M].i, g->n = o[G_N].i, g->k = o[G_K].i;
    g->ta = o[G_TA].i ? 'T' : 'N';
    g->tb = o[G_TB].i ? 'T' : 'N';
    g->threads = job && job->cpus > 0 ? job->cpus : 1;
    dlg_omp_team(g->threads); /* pool threads onto this cell's CPUs */
    double bytes = 4.0 * ((double)g->m * g->k + (double)g->k * g->n + (double)g->m * g->n);
    int rc = gemm_opts_check(h, o);
    if (rc < 0) {
        gemm_teardown(g);
        return rc;
    }
    g->a = filled((size_t)(g->m * g->k), 1);
    g->b = filled((size_t)(g->k * g->n), 2);
    g->c = filled((size_t)(g->m * g->n), 3);
    if (!g->a || !g->b || !g->c) {
        gemm_teardown(g);
        return h->error(h, DLG_ENOMEM, "gemm: out of memory for %.1f GB of matrices", bytes / 1e9);
    }
    g->st.flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    dlg_peak_detect(&g->st.peak, g->threads);
    *state = g;
    return 0;
}

/* The product as dnnl_sgemm takes it: row-major, op(A) is M x K. */
static gemm_operands operands(const gemm *g)
{
    return (gemm_operands){g->ta, g->tb, g->m, g->n, g->k, g->ta == 'N' ? g->k : g->m,
                           g->tb == 'N' ? g->n : g->k, g->n, g->a, g->b, g->c};
}

static int gemm_step(void *state, dlg_step *out)
{
    gemm *g = state;
    omp_set_num_threads(g->threads); /* per thread in OpenMP: set where it runs */
    gemm_operands op = operands(g);
    uint64_t t0 = kernel_now_ns();
    dnnl_status_t s = dnnl_sgemm(op.ta, op.tb, op.m, op.n, op.k, 1.0f, op.a, op.lda, op.b, op.ldb,
                                 0.0f, g->c, op.ldc);
    uint64_t t1 = kernel_now_ns();
    if (s != dnnl_success)
        return g->h->error(g->h, DLG_EINTERNAL, "dnnl_sgemm failed (status %d)", (int)s);
    kernel_count(&g->st, t0, t1);
    out->items = (uint64_t)g->st.flops;
    return 0;
}

/* C after the timed steps, checked as STREAM checks its arrays. */
static int gemm_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    gemm *g = state;
    if (g->st.steps > 0) {
        gemm_operands op = operands(g);
        bool ok = true;
        int64_t i = 0, j = 0;
        double err = gemm_check(&op, &ok, &i, &j);
        if (!ok)
            return g->h->error(g->h, DLG_EINTERNAL,
                               "gemm: wrong result: C[%lld][%lld] differs from the double-precision "
                               "product by more than fp32 rounding (largest error %.3g; m, n, k = "
                               "%lld, %lld, %lld)",
                               (long long)i, (long long)j, err, (long long)g->m, (long long)g->n,
                               (long long)g->k);
        api->add_double(f, "max_abs_error", err);
    }
    return kernel_report(&g->st, api, f);
}

static int gemm_begin_timed(void *state)
{
    kernel_begin_timed(&((gemm *)state)->st);
    return 0;
}

static const dlg_workload_ops gemm_ops = {3,           "flops",          gemm_setup, gemm_step, gemm_report,
                                          gemm_teardown, gemm_begin_timed, gemm_ops_check};

const dlg_plugin_desc gemm_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "gemm", "1.0",
                                   "DeepBench-style fp32 GEMM on oneDNN (GFLOP/s, % of peak)",
                                   gemm_options, gemm_metrics, &gemm_ops};
