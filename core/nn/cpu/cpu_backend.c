/* The cpu backend: oneDNN engine and stream, host memory, threads.
 *
 * Threads: Debian's libdnnl2 (oneDNN 2.6) is built with the OpenMP
 * runtime (DNNL_CPU_RUNTIME_OMP, libgomp), so primitives use the calling
 * thread's OpenMP team size.  bind() sets it with omp_set_num_threads on
 * the thread that runs the net, since that setting is per thread, and
 * open() on the thread that plans it: a primitive splits its work by the
 * team size when it is made (jit kernels keep that count), so one made
 * under libgomp's default (every CPU the process had when libgomp was
 * loaded) would start that many threads on a cell's fewer CPUs. */
#include "cpu.h"
#include "../ref/ref.h"
#include "omp_team.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef DLG_NN_HAVE_OMP
#include <omp.h>
#endif

static int cpu_open(const dlg_backend_opts *o, void **ctx, char *err, size_t errlen)
{
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return -DLG_ENOMEM;
    dnnl_status_t st = dnnl_engine_create(&c->eng, dnnl_cpu, 0);
    if (st == dnnl_success)
        st = dnnl_stream_create(&c->stream, c->eng, dnnl_stream_default_flags);
    if (st != dnnl_success) {
        int rc = cpu_fail(st, "engine", err, errlen);
        if (c->eng)
            dnnl_engine_destroy(c->eng);
        free(c);
        return rc;
    }
    c->threads = o->threads;
    c->winograd = !o->direct_conv;
    c->stop = o->stop;
    c->stop_ctx = o->stop_ctx;
    c->note = o->note;
    c->note_ctx = o->note_ctx;
    *ctx = c;
    /* before the plan makes its primitives; also moves pool threads an
     * earlier in-process cell left on other CPUs */
    dlg_omp_team(c->threads);
    return 0;
}

/* oneDNN 2.6 has bf16 kernels on AVX-512 only (natively with AVX512_BF16,
 * emulated on plain AVX-512); elsewhere bf16 runs its reference loops, a
 * figure nobody should read as this machine's bf16 speed. */
int dlg_cpu_bf16_usable(char *err, size_t errlen)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    if ((isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core)
        return 0;
    snprintf(err, errlen,
             "precision = bf16 on the cpu needs AVX-512 (oneDNN's bf16 kernels), which this CPU (or "
             "ONEDNN_MAX_CPU_ISA) does not give oneDNN: use precision = fp32");
    return -DLG_ENOTSUP;
}

static int cpu_open_bf16(const dlg_backend_opts *o, void **ctx, char *err, size_t errlen)
{
    int rc = dlg_cpu_bf16_usable(err, errlen);
    if (rc == 0)
        rc = cpu_open(o, ctx, err, errlen);
    if (rc == 0) {
        cpu_ctx *c = *ctx;
        c->bf16 = true;
        c->winograd = false; /* cpu_winograd.c is fp32 (and AVX2) */
    }
    return rc;
}

static void cpu_close(void *ctx)
{
    cpu_ctx *c = ctx;
    if (!c)
        return;
    dnnl_stream_destroy(c->stream);
    dnnl_engine_destroy(c->eng);
    free(c);
}

int cpu_team_size(const cpu_ctx *c)
{
#ifdef DLG_NN_HAVE_OMP
    return c->threads > 0 ? c->threads : omp_get_max_threads();
#else
    return 1;
#endif
}

static int cpu_bind(void *ctx)
{
#ifdef DLG_NN_HAVE_OMP
    cpu_ctx *c = ctx;
    if (c->threads > 0)
        omp_set_num_threads(c->threads);
#endif
    return 0;
}

/* Memory is the reference backend's (host, 64-byte aligned). */
static void *cpu_alloc(void *ctx, size_t bytes) { return dlg_backend_ref.alloc(NULL, bytes); }
static void cpu_free(void *ctx, void *p) { dlg_backend_ref.free(NULL, p); }
static int cpu_upload(void *ctx, void *d, const void *s, size_t n)
{
    return dlg_backend_ref.upload(NULL, d, s, n);
}
static int cpu_download(void *ctx, void *d, const void *s, size_t n)
{
    return dlg_backend_ref.download(NULL, d, s, n);
}
static int cpu_zero(void *ctx, void *d, size_t n) { return dlg_backend_ref.zero(NULL, d, n); }
static int cpu_sync(void *ctx) { return 0; }

static int cpu_sgd(void *ctx, dlg_tensor *w, float lr, float momentum, float decay)
{
    float *x = w->data, *g = w->diff, *h = w->hist;
    int64_t n = dlg_tensor_elems(w); /* blocked weights: zero padding stays zero */
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++) {
        h[i] = momentum * h[i] + lr * (g[i] + decay * x[i]);
        x[i] -= h[i];
    }
    return 0;
}

/* The same kernels for both but the batch norm's (cpu-bf16's folds a
 * residual add); and open(). */
#define CPU_BACKEND_COMMON(bn)                                                                               \
    .close = cpu_close, .alloc = cpu_alloc, .free = cpu_free, .upload = cpu_upload, .download = cpu_download, \
    .zero = cpu_zero, .sync = cpu_sync, .bind = cpu_bind, .sgd = cpu_sgd, .read_opaque = cpu_read_opaque,   \
    .write_opaque = cpu_write_opaque,                                                                        \
    .kernels = {[DLG_L_CONV] = &dlg_cpu_conv,                                                                \
                [DLG_L_POOL] = &dlg_cpu_pool,                                                                \
                [DLG_L_LRN] = &dlg_cpu_lrn,                                                                  \
                [DLG_L_RELU] = &dlg_cpu_relu,                                                                \
                [DLG_L_BN] = bn,                                                                             \
                [DLG_L_FC] = &dlg_cpu_fc,                                                                    \
                [DLG_L_SOFTMAX] = &dlg_cpu_softmax,                                                          \
                [DLG_L_ADD] = &dlg_cpu_add,                                                                  \
                [DLG_L_SPLIT] = &dlg_cpu_split,                                                              \
                [DLG_L_CONCAT] = &dlg_cpu_concat,                                                            \
                [DLG_L_LSTM] = &dlg_cpu_lstm,                                                                \
                [DLG_L_LOSS] = &dlg_cpu_loss},                                                               \
    /* dropout (and concat of odd channel counts): memory-bound,                                             \
     * reference loops on plain data */                                                                      \
    .fallback = &dlg_backend_ref

const dlg_backend dlg_backend_cpu = {.name = "cpu", .open = cpu_open, CPU_BACKEND_COMMON(&dlg_cpu_bn)};
const dlg_backend dlg_backend_cpu_bf16 = {.name = "cpu-bf16", .open = cpu_open_bf16,
                                          CPU_BACKEND_COMMON(&dlg_cpu_bn_bf16)};
