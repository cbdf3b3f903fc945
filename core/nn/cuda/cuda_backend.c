/* CUDA backend: context (device, stream, cuDNN/cuBLAS handles), device
 * memory, the fused SGD update and the backend tables by name. */
#include "cuda.h"
#include "cuda_cudnn_parts.h"
#include "cuda_half.h"
#include "cuda_device.h"
#include "cuda_module.h"
#include "cuda_seq.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dlg_cuda_err(cudaError_t e, const char *what, char *err, size_t errlen)
{
    if (e == cudaSuccess)
        return 0;
    if (e == cudaErrorMemoryAllocation) {
        snprintf(err, errlen, "%s: out of memory (CUDA error %d)", what, (int)e);
        return -DLG_ENOMEM;
    }
    snprintf(err, errlen, "%s: %s (CUDA error %d)", what, cudaGetErrorString(e), (int)e);
    return -DLG_ENOTSUP;
}

/* cuDNN 9's codes for memory it could not get (CUDNN_STATUS_ALLOC_FAILED
 * is the host one's old name) */
static const char *cudnn_out_of(cudnnStatus_t s)
{
    if (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
        return "host";
    return s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ? "GPU" : NULL;
}

int dlg_cudnn_err(cudnnStatus_t s, const char *what, char *err, size_t errlen)
{
    if (s == CUDNN_STATUS_SUCCESS)
        return 0;
    const char *out_of = cudnn_out_of(s);
    if (out_of) {
        snprintf(err, errlen, "%s: out of %s memory (%s)", what, out_of, cudnnGetErrorString(s));
        return -DLG_ENOMEM;
    }
    snprintf(err, errlen, "%s: %s", what, cudnnGetErrorString(s));
    /* cuDNN 9 refines codes within a category (NOT_SUPPORTED_SHAPE = 3002) */
    return CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED ? -DLG_ENOTSUP : -DLG_EINTERNAL;
}

int dlg_cublas_err(cublasStatus_t s, const char *what, char *err, size_t errlen)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return 0;
    if (s == CUBLAS_STATUS_ALLOC_FAILED) {
        snprintf(err, errlen, "%s: out of memory (CUBLAS_STATUS_ALLOC_FAILED)", what);
        return -DLG_ENOMEM;
    }
    snprintf(err, errlen, "%s: cuBLAS status %d", what, (int)s);
    return -DLG_ENOTSUP; /* as dlg_cuda_err: no usable GPU (NOT_INITIALIZED, ARCH_MISMATCH) */
}

void dlg_cuda_note_once(dlg_cuda_ctx *c, unsigned kind, const char *msg)
{
    if (c->noted & kind)
        return;
    c->noted |= kind;
    fprintf(stderr, "dlgauge: cuda: %s\n", msg);
}

int dlg_cuda_ok(cudaError_t e)
{
    return e == cudaSuccess ? 0 : e == cudaErrorMemoryAllocation ? -DLG_ENOMEM : -DLG_EINTERNAL;
}

int dlg_cudnn_ok(cudnnStatus_t s)
{
    return s == CUDNN_STATUS_SUCCESS ? 0 : cudnn_out_of(s) ? -DLG_ENOMEM : -DLG_EINTERNAL;
}

int dlg_cublas_ok(cublasStatus_t s)
{
    return s == CUBLAS_STATUS_SUCCESS        ? 0
           : s == CUBLAS_STATUS_ALLOC_FAILED ? -DLG_ENOMEM
                                             : -DLG_EINTERNAL;
}

int dlg_cuda_desc_fits(const dlg_shape *s, char *err, size_t errlen)
{
    int64_t n = dlg_shape_count(s);
    if (n <= INT32_MAX)
        return 0;
    char dims[160] = "";
    size_t used = 0;
    for (int i = 0; i < s->ndim && used < sizeof dims; i++)
        used += (size_t)snprintf(dims + used, sizeof dims - used, "%s%lld", i ? "x" : "",
                                 (long long)s->d[i]);
    snprintf(err, errlen,
             "a %s tensor has %lld elements, more than cuDNN's tensor descriptors take "
             "(%d); use a smaller batch",
             dims, (long long)n, INT32_MAX);
    return -DLG_ENOTSUP;
}

int dlg_cuda_tensor_desc(cudnnTensorDescriptor_t *d, const dlg_shape *s, char *err, size_t errlen)
{
    return dlg_cuda_tensor_desc_t(d, s, CUDNN_DATA_FLOAT, err, errlen);
}

int dlg_cuda_tensor_desc_t(cudnnTensorDescriptor_t *d, const dlg_shape *s, cudnnDataType_t t,
                           char *err, size_t errlen)
{
    int rc = dlg_cuda_desc_fits(s, err, errlen);
    if (rc)
        return rc;
    int64_t n = s->d[0], c = s->ndim > 1 ? s->d[1] : 1, h = s->ndim > 2 ? s->d[2] : 1;
    int64_t w = s->d[0] && c && h ? dlg_shape_count(s) / (n * c * h) : 1;
    rc = dlg_cudnn_err(cudnnCreateTensorDescriptor(d), "cudnnCreateTensorDescriptor", err, errlen);
    return rc ? rc
              : dlg_cuda_desc_set(d, cudnnSetTensor4dDescriptor(*d, CUDNN_TENSOR_NCHW, t, (int)n,
                                                                (int)c, (int)h, (int)w),
                                  err, errlen);
}

int dlg_cuda_desc_set(cudnnTensorDescriptor_t *d, cudnnStatus_t st, char *err, size_t errlen)
{
    int rc = dlg_cudnn_err(st, "cudnnSetTensor4dDescriptor", err, errlen);
    if (rc) { /* the caller's destroy then sees NULL, which cuDNN accepts */
        cudnnDestroyTensorDescriptor(*d);
        *d = NULL;
    }
    return rc;
}

int dlg_cuda_setup_none(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                        size_t errlen)
{
    *state = NULL;
    *ws = 0;
    return 0;
}

static void cuda_close(void *vctx)
{
    dlg_cuda_ctx *c = vctx;
    if (!c)
        return;
    if (c->cache_path[0] && c->cache.dirty) {
        char err[256];
        if (dlg_algo_cache_save(&c->cache, c->cache_path, err, sizeof err) < 0)
            fprintf(stderr, "dlgauge: cuda: algorithm cache not saved: %s\n", err);
    }
    dlg_algo_cache_free(&c->cache);
    if (c->stream) /* nothing may still write into what is freed below */
        cudaStreamSynchronize(c->stream);
    dlg_cuda_coll_close(c); /* before the stream its work ran on */
    dlg_cuda_step_free(c);
    dlg_cuda_prof_free(c);
    dlg_cuda_reads_close(c);
    dlg_cuda_input_close(c);
    dlg_cuda_clip_close(c);
    dlg_cuda_scaler_close(c);
    if (c->sgd_tab)
        cudaFree(c->sgd_tab);
    if (c->flag_event)
        cudaEventDestroy(c->flag_event);
    if (c->blas)
        cublasDestroy(c->blas);
    if (c->blas_ws)
        cudaFree(c->blas_ws);
    if (c->dnn)
        cudnnDestroy(c->dnn);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    if (c->flag_host)
        cudaFreeHost(c->flag_host);
    if (c->flag_dev)
        cudaFree(c->flag_dev);
    free(c);
}

static int open_handles(dlg_cuda_ctx *c, char *err, size_t errlen)
{
    int rc = dlg_cuda_err(cudaSetDevice(c->device), "cudaSetDevice", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking),
                          "cudaStreamCreate", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaHostAlloc((void **)&c->flag_host, sizeof(int), 0), "cudaHostAlloc",
                          err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMalloc((void **)&c->flag_dev, sizeof(int)), "cudaMalloc", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMemsetAsync(c->flag_dev, 0, sizeof(int), c->stream), "cudaMemset",
                          err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaEventCreateWithFlags(&c->flag_event, cudaEventDisableTiming),
                          "cudaEventCreate", err, errlen);
    if (!rc) {
        dlg_cudnn_load_parts(true);
        rc = dlg_cudnn_err(cudnnCreate(&c->dnn), "cudnnCreate", err, errlen);
    }
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetStream(c->dnn, c->stream), "cudnnSetStream", err, errlen);
    if (!rc)
        rc = dlg_cublas_err(cublasCreate(&c->blas), "cublasCreate", err, errlen);
    if (!rc && (cublasSetStream(c->blas, c->stream) != CUBLAS_STATUS_SUCCESS ||
                cublasSetMathMode(c->blas, c->math == DLG_CUDA_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                    : CUBLAS_DEFAULT_MATH) !=
                    CUBLAS_STATUS_SUCCESS)) {
        snprintf(err, errlen, "cuBLAS stream/math mode failed");
        rc = -DLG_EINTERNAL;
    }
    /* after cublasSetStream, which resets it: with its own workspace cuBLAS
     * allocates nothing while a step is captured (32 MiB: NVIDIA's advice
     * for Hopper, more than enough before it) */
    if (!rc)
        rc = dlg_cuda_err(cudaMalloc(&c->blas_ws, (size_t)32 << 20), "cuBLAS workspace", err,
                          errlen);
    if (!rc && cublasSetWorkspace(c->blas, c->blas_ws, (size_t)32 << 20) != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublasSetWorkspace failed");
        rc = -DLG_EINTERNAL;
    }
    return rc;
}

static int cuda_open(const dlg_backend_opts *o, void **ctx, char *err, size_t errlen, int device,
                     dlg_cuda_math math)
{
    *ctx = NULL;
    int n = 0;
    char why[200];
    if (dlg_cudart_device_count(&n, why, sizeof why) < 0 || device >= n) {
        if (n > 0)
            snprintf(err, errlen, "no CUDA device %d (this machine has %d)", device, n);
        else
            snprintf(err, errlen, "no CUDA device %d: %s", device, n ? "" : why);
        return -DLG_ENOTSUP;
    }
    dlg_cuda_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return -DLG_ENOMEM;
    c->device = device;
    c->math = math;
    c->deterministic = o && o->deterministic;
    c->graphs = o ? o->graphs : DLG_GRAPHS_AUTO;
    c->nhwc = dlg_nhwc_wanted(math == DLG_CUDA_BF16 || math == DLG_CUDA_FP16, o && o->half_nchw);
    int rc = open_handles(c, err, errlen);
    if (!rc)
        rc = dlg_cuda_clip_open(c, err, errlen);
    if (!rc)
        rc = dlg_cuda_scaler_open(c, err, errlen);
    size_t free_b = 0, total_b = 0;
    /* a small limit keeps cuDNN from its fastest algorithms (FFT, Winograd
     * nonfused); the net allocates only the largest layer's workspace */
    if (!rc && cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        free_b = (size_t)4 << 30;
    c->ws_limit = o && o->workspace_bytes ? (size_t)o->workspace_bytes
                  : free_b / 4 < ((size_t)16 << 30) ? free_b / 4
                                                    : (size_t)16 << 30;
    if (!rc) {
        struct cudaDeviceProp p;
        char tag[128];
        /* the tag names the GPU; unread, p.name would be stack garbage */
        if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
            cudaGetLastError();
            snprintf(p.name, sizeof p.name, "cuda%d", device);
        }
        snprintf(tag, sizeof tag, "%s_cudnn%zu_%s", p.name, cudnnGetVersion(),
                 math == DLG_CUDA_TF32   ? "tf32"
                 : math == DLG_CUDA_BF16 ? "bf16"
                 : math == DLG_CUDA_FP16 ? "fp16"
                                         : "fp32");
        dlg_algo_cache_init(&c->cache, tag);
        const char *path = o ? o->algo_cache : NULL;
        if (path && *path) {
            snprintf(c->cache_path, sizeof c->cache_path, "%s", path);
            rc = dlg_algo_cache_load(&c->cache, path, err, errlen);
        }
    }
    if (rc < 0) {
        cuda_close(c);
        return rc;
    }
    *ctx = c;
    return 0;
}

static void *cuda_alloc(void *vctx, size_t bytes)
{
    dlg_cuda_ctx *c = vctx;
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 256) != cudaSuccess)
        return NULL;
    if (cudaMemsetAsync(p, 0, bytes, c->stream) != cudaSuccess ||
        cudaStreamSynchronize(c->stream) != cudaSuccess) {
        cudaFree(p);
        return NULL;
    }
    return p;
}

static void cuda_free(void *vctx, void *p)
{
    if (p)
        cudaFree(p);
}

static int cuda_copy(dlg_cuda_ctx *c, void *dst, const void *src, size_t bytes,
                     enum cudaMemcpyKind kind)
{
    int rc = dlg_cuda_ok(cudaMemcpyAsync(dst, src, bytes, kind, c->stream));
    return rc ? rc : dlg_cuda_ok(cudaStreamSynchronize(c->stream));
}

int dlg_cuda_flag_poll(dlg_cuda_ctx *c)
{
    if (c->capturing) /* an event query is illegal there; polled after the launch */
        return 0;
    if (c->flag_pending) {
        cudaError_t e = cudaEventQuery(c->flag_event);
        if (e == cudaErrorNotReady) {
            cudaGetLastError(); /* not an error: leave nothing for a later launch check */
            return 0;
        }
        if (e != cudaSuccess)
            return -DLG_EINTERNAL;
        c->flag_pending = false;
        if (*c->flag_host)
            return -DLG_EINVAL;
    }
    int rc = dlg_cuda_ok(cudaMemcpyAsync(c->flag_host, c->flag_dev, sizeof(int),
                                         cudaMemcpyDeviceToHost, c->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaEventRecord(c->flag_event, c->stream));
    c->flag_pending = rc == 0;
    return rc;
}

int dlg_cuda_flag_check_synced(dlg_cuda_ctx *c)
{
    int v = 0;
    if (cudaMemcpy(&v, c->flag_dev, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess)
        return -DLG_EINTERNAL;
    return v ? -DLG_EINVAL : 0;
}

static int cuda_upload(void *vctx, void *dst, const void *host, size_t bytes)
{
    return cuda_copy(vctx, dst, host, bytes, cudaMemcpyHostToDevice);
}

/* Results read after a bad label are an error (the loss is meaningless). */
static int cuda_download(void *vctx, void *host, const void *src, size_t bytes)
{
    int rc = cuda_copy(vctx, host, src, bytes, cudaMemcpyDeviceToHost);
    return rc ? rc : dlg_cuda_flag_check_synced(vctx);
}

static int cuda_zero(void *vctx, void *dst, size_t bytes)
{
    dlg_cuda_ctx *c = vctx;
    return dlg_cuda_ok(cudaMemsetAsync(dst, 0, bytes, c->stream));
}

static int cuda_sync(void *vctx)
{
    dlg_cuda_ctx *c = vctx;
    int rc = dlg_cuda_ok(cudaStreamSynchronize(c->stream));
    char why[256]; /* the line comes from coll_allreduce with count 0 (cuda_coll.c) */
    if (!rc)
        rc = dlg_cuda_coll_check(c, why, sizeof why);
    return rc ? rc : dlg_cuda_flag_check_synced(c);
}

static int cuda_bind(void *vctx)
{
    dlg_cuda_ctx *c = vctx;
    return dlg_cuda_ok(cudaSetDevice(c->device));
}

static int cuda_sgd(void *vctx, dlg_tensor *w, float lr, float momentum, float decay)
{
    dlg_cuda_ctx *c = vctx;
    if (c->scaler) /* fp16: unscaling and skipping need the whole list (sgd_all) */
        return -DLG_ENOTSUP;
    return dlg_cuda_ok(
        (cudaError_t)dlg_cuk_sgd(c->stream, CF(w), CG(w), w->hist, w->count, lr, momentum, decay));
}

/* The param table for sgd_all: built (cudaMalloc + copy) on the first
 * call, the warm-up step, then reused while the list stays the same. */
static int sgd_table(dlg_cuda_ctx *c, dlg_tensor *const *w, const float *lr_mult,
                     const float *decay_mult, int n)
{
    if (c->sgd_tab && c->sgd_key == w[0]->data && c->sgd_ntensors == n)
        return 0;
    int64_t nch = 0;
    for (int i = 0; i < n; i++)
        nch += (w[i]->count + DLG_CUK_SGD_CHUNK - 1) / DLG_CUK_SGD_CHUNK;
    if (nch > INT32_MAX)
        return -DLG_ENOTSUP;
    size_t tb = (size_t)n * sizeof(dlg_cuk_sgd_tensor), bytes = tb + (size_t)nch * sizeof(dlg_cuk_sgd_chunk);
    char *host = malloc(bytes);
    if (!host)
        return -DLG_ENOMEM;
    dlg_cuk_sgd_tensor *t = (dlg_cuk_sgd_tensor *)host;
    dlg_cuk_sgd_chunk *ch = (dlg_cuk_sgd_chunk *)(host + tb);
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        t[i] = (dlg_cuk_sgd_tensor){CF(w[i]), CG(w[i]), w[i]->hist, w[i]->count, lr_mult[i],
                                    decay_mult[i]};
        for (int64_t s = 0; s < w[i]->count; s += DLG_CUK_SGD_CHUNK)
            ch[k++] = (dlg_cuk_sgd_chunk){i, s};
    }
    if (c->sgd_tab)
        cudaFree(c->sgd_tab);
    c->sgd_tab = NULL;
    int rc = dlg_cuda_ok(cudaStreamSynchronize(c->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaMalloc(&c->sgd_tab, bytes));
    /* on the net's stream: a legacy-stream cudaMemcpy from pageable memory
     * may return before its DMA lands, unordered with this stream's SGD */
    if (!rc)
        rc = cuda_copy(c, c->sgd_tab, host, bytes, cudaMemcpyHostToDevice);
    free(host);
    if (rc) {
        if (c->sgd_tab)
            cudaFree(c->sgd_tab);
        c->sgd_tab = NULL;
        return rc;
    }
    c->sgd_key = w[0]->data;
    c->sgd_ntensors = n;
    c->sgd_nchunks = (int)nch;
    return 0;
}

static int cuda_sgd_all(void *vctx, dlg_tensor *const *w, const float *lr_mult,
                        const float *decay_mult, int n, const dlg_sgd *sgd)
{
    dlg_cuda_ctx *c = vctx;
    if (n <= 0)
        return 0;
    int rc = sgd_table(c, w, lr_mult, decay_mult, n);
    if (rc)
        return rc;
    const dlg_cuk_sgd_tensor *t = c->sgd_tab;
    const dlg_cuk_sgd_chunk *ch = (const dlg_cuk_sgd_chunk *)(t + n);
    if (c->scaler)
        return dlg_cuda_sgd_scaled(c, t, ch, c->sgd_nchunks, sgd);
    return dlg_cuda_ok((cudaError_t)dlg_cuk_sgd_multi(c->stream, t, ch, c->sgd_nchunks, sgd->lr,
                                                      sgd->momentum, sgd->weight_decay));
}

/* One open() per (device, math): the vtable is all a backend gets. */
#define DLG_CUDA_OPEN(dev, math, suffix)                                                       \
    static int open_##suffix##dev(const dlg_backend_opts *o, void **ctx, char *err,            \
                                  size_t errlen)                                             \
    {                                                                                          \
        return cuda_open(o, ctx, err, errlen, dev, math);                                      \
    }
#define DLG_CUDA_OPENS(dev)                                                                    \
    DLG_CUDA_OPEN(dev, DLG_CUDA_FP32, f)                                                       \
    DLG_CUDA_OPEN(dev, DLG_CUDA_TF32, t)                                                       \
    DLG_CUDA_OPEN(dev, DLG_CUDA_BF16, b) DLG_CUDA_OPEN(dev, DLG_CUDA_FP16, h)
DLG_CUDA_OPENS(0)
DLG_CUDA_OPENS(1)
DLG_CUDA_OPENS(2)
DLG_CUDA_OPENS(3)
DLG_CUDA_OPENS(4)
DLG_CUDA_OPENS(5)
DLG_CUDA_OPENS(6)
DLG_CUDA_OPENS(7)

/* The entries every CUDA backend shares, so that a hook added to the
 * engine is given to fp32 and half alike (a macro: designated
 * initialisers of one static table) */
#define DLG_CUDA_COMMON_OPS(nm, openf)                                                         \
    .name = nm, .open = openf, .close = cuda_close, .alloc = cuda_alloc, .free = cuda_free,    \
    .upload = cuda_upload, .download = cuda_download, .zero = cuda_zero, .sync = cuda_sync,    \
    .bind = cuda_bind, .sgd = cuda_sgd, .sgd_all = cuda_sgd_all,                               \
    .run_step = dlg_cuda_run_step, .step_stats = dlg_cuda_step_stats,                          \
    .loss_scale = dlg_cuda_loss_scale, .timer_begin = dlg_cuda_timer_begin,                    \
    .timer_end = dlg_cuda_timer_end, .prof_open = dlg_cuda_prof_open,                          \
    .prof_mark = dlg_cuda_prof_mark, .prof_read = dlg_cuda_prof_read,                          \
    .grad_sumsq = dlg_cuda_sumsq, .grad_scale = dlg_cuda_scale, .grad_clip = dlg_cuda_clip,    \
    .clip_stats = dlg_cuda_clip_stats, .host_alloc = dlg_cuda_host_alloc,                      \
    .host_free = dlg_cuda_host_free, .in_slot_open = dlg_cuda_in_slot_open,                    \
    .in_slot_close = dlg_cuda_in_slot_close, .in_copy = dlg_cuda_in_copy,                      \
    .in_take = dlg_cuda_in_take, .in_mark = dlg_cuda_in_mark, .in_wait = dlg_cuda_in_wait,     \
    .in_stall = dlg_cuda_in_stall, .copy = dlg_cuda_copy_d2d, .read_async = dlg_cuda_read_async, \
    .read_wait = dlg_cuda_read_wait, DLG_CUDA_COLL_ENTRIES .fallback = NULL

#define DLG_CUDA_BACKEND(nm, openf)                                                            \
    {                                                                                          \
        DLG_CUDA_COMMON_OPS(nm, openf),                                                        \
        .kernels =                                                                             \
            {                                                                                  \
                [DLG_L_CONV] = &dlg_cuda_conv,                                                 \
                [DLG_L_POOL] = &dlg_cuda_pool,                                                 \
                [DLG_L_LRN] = &dlg_cuda_lrn,                                                   \
                [DLG_L_RELU] = &dlg_cuda_relu,                                                 \
                [DLG_L_BN] = &dlg_cuda_bn,                                                     \
                [DLG_L_FC] = &dlg_cuda_fc,                                                     \
                [DLG_L_DROPOUT] = &dlg_cuda_dropout,                                           \
                [DLG_L_CONCAT] = &dlg_cuda_concat,                                             \
                [DLG_L_ADD] = &dlg_cuda_add,                                                   \
                [DLG_L_SOFTMAX] = &dlg_cuda_softmax,                                           \
                [DLG_L_LOSS] = &dlg_cuda_loss,                                                 \
                [DLG_L_SPLIT] = &dlg_cuda_split,                                               \
                [DLG_L_EMBED] = &dlg_cuda_embed,                                               \
                [DLG_L_LSTM] = &dlg_cuda_lstm,                                                 \
            },                                                                                 \
    }

/* bf16 and fp16 (half storage): their own kernels, and host reads/writes that convert */
#define DLG_CUDA_HALF_BACKEND(nm, openf)                                                       \
    {                                                                                          \
        DLG_CUDA_COMMON_OPS(nm, openf), .read_opaque = dlg_cuda_half_read,                     \
        .write_opaque = dlg_cuda_half_write,                                                   \
        .kernels =                                                                             \
            {                                                                                  \
                [DLG_L_CONV] = &dlg_cuda_conv_h,                                               \
                [DLG_L_POOL] = &dlg_cuda_pool_h,                                               \
                [DLG_L_LRN] = &dlg_cuda_staged_h,                                              \
                [DLG_L_RELU] = &dlg_cuda_relu_h,                                               \
                [DLG_L_BN] = &dlg_cuda_bn_h,                                                   \
                [DLG_L_FC] = &dlg_cuda_fc_h,                                                   \
                [DLG_L_DROPOUT] = &dlg_cuda_dropout_h,                                         \
                [DLG_L_CONCAT] = &dlg_cuda_concat_h,                                           \
                [DLG_L_ADD] = &dlg_cuda_add_h,                                                 \
                [DLG_L_SOFTMAX] = &dlg_cuda_staged_h,                                          \
                [DLG_L_LOSS] = &dlg_cuda_loss_h,                                               \
                [DLG_L_SPLIT] = &dlg_cuda_split_h,                                             \
                [DLG_L_EMBED] = &dlg_cuda_embed, /* fp32: neighbours convert */                \
                [DLG_L_LSTM] = &dlg_cuda_lstm,                                                 \
            },                                                                                 \
    }

static const dlg_backend backends[4][DLG_CUDA_MAX_DEVICES] = {
    {DLG_CUDA_BACKEND("cuda:0", open_f0), DLG_CUDA_BACKEND("cuda:1", open_f1),
     DLG_CUDA_BACKEND("cuda:2", open_f2), DLG_CUDA_BACKEND("cuda:3", open_f3),
     DLG_CUDA_BACKEND("cuda:4", open_f4), DLG_CUDA_BACKEND("cuda:5", open_f5),
     DLG_CUDA_BACKEND("cuda:6", open_f6), DLG_CUDA_BACKEND("cuda:7", open_f7)},
    {DLG_CUDA_BACKEND("cuda-tf32:0", open_t0), DLG_CUDA_BACKEND("cuda-tf32:1", open_t1),
     DLG_CUDA_BACKEND("cuda-tf32:2", open_t2), DLG_CUDA_BACKEND("cuda-tf32:3", open_t3),
     DLG_CUDA_BACKEND("cuda-tf32:4", open_t4), DLG_CUDA_BACKEND("cuda-tf32:5", open_t5),
     DLG_CUDA_BACKEND("cuda-tf32:6", open_t6), DLG_CUDA_BACKEND("cuda-tf32:7", open_t7)},
    {DLG_CUDA_HALF_BACKEND("cuda-bf16:0", open_b0), DLG_CUDA_HALF_BACKEND("cuda-bf16:1", open_b1),
     DLG_CUDA_HALF_BACKEND("cuda-bf16:2", open_b2), DLG_CUDA_HALF_BACKEND("cuda-bf16:3", open_b3),
     DLG_CUDA_HALF_BACKEND("cuda-bf16:4", open_b4), DLG_CUDA_HALF_BACKEND("cuda-bf16:5", open_b5),
     DLG_CUDA_HALF_BACKEND("cuda-bf16:6", open_b6), DLG_CUDA_HALF_BACKEND("cuda-bf16:7", open_b7)},
    {DLG_CUDA_HALF_BACKEND("cuda-fp16:0", open_h0), DLG_CUDA_HALF_BACKEND("cuda-fp16:1", open_h1),
     DLG_CUDA_HALF_BACKEND("cuda-fp16:2", open_h2), DLG_CUDA_HALF_BACKEND("cuda-fp16:3", open_h3),
     DLG_CUDA_HALF_BACKEND("cuda-fp16:4", open_h4), DLG_CUDA_HALF_BACKEND("cuda-fp16:5", open_h5),
     DLG_CUDA_HALF_BACKEND("cuda-fp16:6", open_h6), DLG_CUDA_HALF_BACKEND("cuda-fp16:7", open_h7)},
};

const dlg_backend *dlg_cuda_backend_find(const char *name)
{
    int device, math;
    if (dlg_cuda_parse_backend(name, &device, &math) < 0)
        return NULL;
    return &backends[math][device];
}

/* cudart's versions, then the cuBLAS and cuDNN this module loaded. */
static void module_versions(char *buf, size_t len)
{
    dlg_cudart_versions(buf, len);
    int v[3] = {0, 0, 0};
    cublasGetProperty(MAJOR_VERSION, &v[0]);
    cublasGetProperty(MINOR_VERSION, &v[1]);
    cublasGetProperty(PATCH_LEVEL, &v[2]);
    dlg_cudnn_load_parts(false);
    size_t dnn = cudnnGetVersion(), used = strlen(buf);
    /* cuDNN 9: 10000 * major + 100 * minor + patch */
    snprintf(buf + used, len - used, ", cuBLAS %d.%d.%d, cuDNN %zu.%zu.%zu", v[0], v[1], v[2],
             dnn / 10000, dnn % 10000 / 100, dnn % 100);
}

/* cuda.so's one export: what the engine's loader looks up (cuda_module.h). */
__attribute__((visibility("default"))) const dlg_cuda_module dlg_cuda_module_v1 = {
    .abi = DLG_CUDA_MODULE_ABI,
    .engine_sig = DLG_CUDA_ENGINE_SIG,
    .device_count = dlg_cudart_device_count,
    .backend_find = dlg_cuda_backend_find,
    .device_props = dlg_cudart_device_props,
    .versions = module_versions,
};
