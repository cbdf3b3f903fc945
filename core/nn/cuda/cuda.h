/* The CUDA backend: cuDNN + cuBLAS for the heavy layers, small kernels
 * (cuda_kernels.cu) for the rest.  Everything runs on one stream per net;
 * memory is allocated at plan time only.
 *
 * Backend names: "cuda", "cuda:N" (fp32, no tensor-op rounding) and
 * "cuda-tf32", "cuda-tf32:N" (TF32 tensor-core math for conv and fc) and
 * "cuda-bf16", "cuda-bf16:N" (bf16 mixed precision: activations and their
 * gradients stored as bf16, params, their gradients and all arithmetic in
 * fp32; see cuda_half.h) and "cuda-fp16", "cuda-fp16:N" (the same with
 * IEEE fp16 storage, plus dynamic loss scaling: cuda_scaler.h).
 * Options come from the plan (dlg_backend_opts, read once at open()):
 * algo_cache (conv algorithm choices kept on disk), workspace_bytes
 * (per-layer cuDNN workspace limit; default a quarter of the free memory,
 * <= 16 GiB), deterministic, graphs (cuda_step.c). */
#ifndef DLG_NN_CUDA_H
#define DLG_NN_CUDA_H

#include "../backend.h"
#include "cuda_algo_cache.h"
#include "cuda_graph_sm.h"
#include "cuda_kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

/* BF16 and FP16 are the half-storage (mixed precision) maths. */
typedef enum dlg_cuda_math {
    DLG_CUDA_FP32 = 0,
    DLG_CUDA_TF32 = 1,
    DLG_CUDA_BF16 = 2,
    DLG_CUDA_FP16 = 3
} dlg_cuda_math;

/* One captured step (cuda_step.c): [0] the training step, [1] forward. */
typedef struct dlg_cuda_graph {
    bool ready; /* sm initialised (eligibility known) */
    dlg_graph_sm sm;
    cudaGraphExec_t exec;
} dlg_cuda_graph;

typedef struct dlg_cuda_ctx {
    int device;
    dlg_cuda_math math;
    cudaStream_t stream;
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    size_t ws_limit;
    bool deterministic;
    /* Bad-label flag: set by the loss kernel, never cleared (sticky), read
     * back without a sync (flag_event) or at sync/download time. */
    int *flag_host; /* pinned */
    int *flag_dev;
    cudaEvent_t flag_event;
    bool flag_pending; /* a read-back is in flight */
    /* Multi-tensor SGD: the param table on the device, built on the first
     * call for this list of params (key) and reused after. */
    void *sgd_tab;
    int sgd_nchunks, sgd_ntensors;
    const void *sgd_key;
    unsigned noted; /* DLG_CUDA_NOTE_* bits already printed */
    /* gradient clipping (cuda_clip.c): DLG_CUK_SUMSQ_SLOTS partial sums
     * and the total on the device, the total's pinned host copy; the
     * device-side clip's state (dlg_cuk_clip) and its pinned host copy */
    double *norm_dev, *norm_host;
    struct dlg_cuk_clip *clip_dev, *clip_host;
    /* fp16 only: dynamic loss scaling state in device memory (cuda_scaler.h) */
    dlg_scaler *scaler;
    /* the input path (cuda_input.c): copy stream and wait events, made on
     * the first asynchronous input write; NULL until then */
    struct dlg_cuda_input *input;
    dlg_algo_cache cache;
    char cache_path[512];
    /* whole steps (cuda_step.c): graphs, and the step timer's two event
     * pairs (begin, end), used alternately */
    dlg_graphs graphs;
    dlg_cuda_graph graph[2];
    dlg_step_stats stats;
    bool capturing; /* the stream is being captured: no host reads */
    cudaEvent_t timer[2][2];
    int timer_cur;
    bool timer_open;
    /* profile = true (cuda_prof.c): the marks' events; prof_n 0: none,
     * and then steps may be captured */
    cudaEvent_t *prof_ev;
    int prof_n;
    /* dlg_net_read_async's event ring (cuda_read.c), made on the first read */
    struct dlg_cuda_reads *reads;
    void *blas_ws; /* cuBLAS workspace: set once, so capture allocates nothing */
    /* half maths: 4-d activations stored channels-last (cuda_nhwc.h);
     * off for fp32/tf32 and with dlg_plan_opts.half_nchw */
    bool nhwc;
    /* collectives (cuda_coll.c): NCCL and the communicator, loaded at the
     * first coll_id/coll_open; NULL until then */
    struct dlg_cuda_coll *coll;
} dlg_cuda_ctx;

extern const dlg_kernels dlg_cuda_conv, dlg_cuda_fc, dlg_cuda_pool, dlg_cuda_lrn, dlg_cuda_bn,
    dlg_cuda_softmax, dlg_cuda_loss, dlg_cuda_relu, dlg_cuda_dropout, dlg_cuda_concat,
    dlg_cuda_add, dlg_cuda_split;

/* A one-line note on stderr, once per context and kind: a faster path
 * that cuDNN refused (the run goes on, slower, on the fallback). */
enum { DLG_CUDA_NOTE_FUSED_BIAS = 1, DLG_CUDA_NOTE_HALF_BN = 2 };
void dlg_cuda_note_once(dlg_cuda_ctx *c, unsigned kind, const char *msg);
enum {
    DLG_CUDA_NOTE_GRAPH = 1u << 8,        /* graphs not used (why) */
    DLG_CUDA_NOTE_GRAPH_CHURN = 1u << 9,  /* re-captured every step: off */
    DLG_CUDA_NOTE_GRAPH_FAILED = 1u << 10 /* a capture or graph launch failed: eager */
};

/* Whole steps (cuda_step.c): the backend's run_step, timer_begin/_end,
 * and what close() frees of them. */
int dlg_cuda_run_step(void *ctx, const dlg_step_fn *f);
int dlg_cuda_timer_begin(void *ctx);
int dlg_cuda_timer_end(void *ctx, uint64_t *elapsed_ns);
void dlg_cuda_step_stats(void *ctx, dlg_step_stats *out);
void dlg_cuda_step_free(dlg_cuda_ctx *c);

/* Per-layer times on the device timeline (cuda_prof.c; the backend's
 * prof_open, prof_mark, prof_read hooks, see backend.h) and what close()
 * frees of them. */
int dlg_cuda_prof_open(void *ctx, int n, char *err, size_t errlen);
int dlg_cuda_prof_mark(void *ctx, int i);
int dlg_cuda_prof_read(void *ctx, int n, uint64_t *ns);
void dlg_cuda_prof_free(dlg_cuda_ctx *c);

/* Device copies and reads without a host wait (cuda_read.c; the backend's
 * copy, read_async and read_wait hooks) and what close() frees of them. */
int dlg_cuda_copy_d2d(void *ctx, void *dst, const void *src, size_t bytes);
int dlg_cuda_read_async(void *ctx, void *dst, const void *src, size_t bytes, uint64_t *ticket);
int dlg_cuda_read_wait(void *ctx, uint64_t ticket);
void dlg_cuda_reads_close(dlg_cuda_ctx *c);

/* Collectives among ranks through NCCL (cuda_coll.c; the backend's coll_*
 * hooks, see backend.h) where nccl.h was there to build with: CMake says
 * so in DLG_CUDA_HAVE_NCCL (1 or 0), other builds look for the header.
 * dlg_cuda_coll_check: 0, or the error of a failed asynchronous collective
 * with its line; dlg_cuda_coll_close: what close() frees of them. */
#ifndef DLG_CUDA_HAVE_NCCL
#if defined(__has_include)
#if __has_include(<nccl.h>)
#define DLG_CUDA_HAVE_NCCL 1
#endif
#endif
#endif
#if DLG_CUDA_HAVE_NCCL
int dlg_cuda_coll_id(void *ctx, void *id, size_t *len, char *err, size_t errlen);
int dlg_cuda_coll_open(void *ctx, int ranks, int rank, const void *id, size_t len, char *err,
                       size_t errlen);
int dlg_cuda_coll_allreduce(void *ctx, const void *send, void *recv, size_t count, int t,
                            char *err, size_t errlen);
int dlg_cuda_coll_sendrecv(void *ctx, const void *send, int to, void *recv, int from,
                           size_t count, int t, char *err, size_t errlen);
int dlg_cuda_coll_allreduce_n(void *ctx, float *const *p, const int64_t *c, int n, char *err,
                              size_t errlen);
#define DLG_CUDA_COLL_ENTRIES                                                                  \
    .coll_id = dlg_cuda_coll_id, .coll_open = dlg_cuda_coll_open,                              \
    .coll_allreduce = dlg_cuda_coll_allreduce, .coll_sendrecv = dlg_cuda_coll_sendrecv,        \
    .coll_allreduce_n = dlg_cuda_coll_allreduce_n,
#else
#define DLG_CUDA_COLL_ENTRIES
#endif
int dlg_cuda_coll_check(dlg_cuda_ctx *c, char *err, size_t errlen);
void dlg_cuda_coll_close(dlg_cuda_ctx *c);

/* The input path (cuda_input.c; the backend's host_alloc .. in_stall
 * hooks, see backend.h) and what close() frees of it. */
void *dlg_cuda_host_alloc(void *ctx, size_t bytes);
void dlg_cuda_host_free(void *ctx, void *p);
int dlg_cuda_in_slot_open(void *ctx, void **slot);
void dlg_cuda_in_slot_close(void *ctx, void *slot);
int dlg_cuda_in_copy(void *ctx, void *slot, void *stage, const void *src, size_t bytes,
                     bool after_read);
int dlg_cuda_in_take(void *ctx, void *const *slot, void *const *dst, void *const *stage,
                     const size_t *bytes, int n);
int dlg_cuda_in_mark(void *ctx);
int dlg_cuda_in_wait(void *ctx);
int dlg_cuda_in_stall(void *ctx, uint64_t *ns);
void dlg_cuda_input_close(dlg_cuda_ctx *c);

/* Batch norm's saved mean and inverse std (2 x C floats) in its state. */
float *dlg_cuda_bn_saved(void *state);

/* Backend for a name as above; NULL if the name is not a CUDA one. */
const dlg_backend *dlg_cuda_backend_find(const char *name);

/* Turn a CUDA/cuDNN/cuBLAS status into -DLG_E* with a message: a
 * library's out-of-memory status is -DLG_ENOMEM, said as "out of memory"
 * (cuDNN's as out of host or GPU memory) before the library's own name. */
int dlg_cuda_err(cudaError_t e, const char *what, char *err, size_t errlen);
int dlg_cudnn_err(cudnnStatus_t s, const char *what, char *err, size_t errlen);
int dlg_cublas_err(cublasStatus_t s, const char *what, char *err, size_t errlen);
/* 0, -DLG_ENOMEM for an out-of-memory status, else -DLG_EINTERNAL, for
 * calls inside forward/backward (no message; the net's says which code). */
int dlg_cuda_ok(cudaError_t e);
int dlg_cudnn_ok(cudnnStatus_t s);
int dlg_cublas_ok(cublasStatus_t s);

/* -DLG_EINVAL if a loss kernel has seen a bad label: without a sync,
 * from the last read-back that has completed (then a new one starts). */
int dlg_cuda_flag_poll(dlg_cuda_ctx *c);
/* The same after the stream is synchronised (exact). */
int dlg_cuda_flag_check_synced(dlg_cuda_ctx *c);

/* cuDNN's legacy descriptors take int dims and at most 2^31 - 1 elements:
 * 0, or -DLG_ENOTSUP with a line naming the tensor's size. */
int dlg_cuda_desc_fits(const dlg_shape *s, char *err, size_t errlen);
/* An NCHW float descriptor for a tensor (trailing dims folded into W). */
int dlg_cuda_tensor_desc(cudnnTensorDescriptor_t *d, const dlg_shape *s, char *err, size_t errlen);
/* The same with a data type (CUDNN_DATA_BFLOAT16 for bf16 activations). */
int dlg_cuda_tensor_desc_t(cudnnTensorDescriptor_t *d, const dlg_shape *s, cudnnDataType_t t,
                           char *err, size_t errlen);
/* st: the status of setting *d; on failure *d is destroyed (NULL) and err says why. */
int dlg_cuda_desc_set(cudnnTensorDescriptor_t *d, cudnnStatus_t st, char *err, size_t errlen);
int dlg_cuda_setup_none(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                        size_t errlen);

/* Device state that a layer's fp32 and half kernels share.
 * Pooling (cuda_dnn.c): Caffe's window geometry from the layer, and the
 * argmax per output when max pooling trains (mask NULL otherwise).
 * Dropout (cuda_simple.c): the mask (0 or 1/(1-ratio)) and a step counter
 * on the device, zeroed on stream, from which each step draws a new seed,
 * so a captured step needs no new arguments.  _init fills *p (zeroed by
 * the caller) or returns -DLG_E* with err set; _free takes a partial one. */
typedef struct dlg_cuda_pool_dev {
    dlg_cuk_pool g;
    int *mask;
} dlg_cuda_pool_dev;
int dlg_cuda_pool_dev_init(const dlg_layer *l, dlg_cuda_pool_dev *p, char *err, size_t errlen);
void dlg_cuda_pool_dev_free(dlg_cuda_pool_dev *p);

typedef struct dlg_cuda_dropout_dev {
    float *mask;
    uint64_t seed;
    uint64_t *step; /* device, starts at 0 */
} dlg_cuda_dropout_dev;
int dlg_cuda_dropout_dev_init(const dlg_cuda_ctx *c, const dlg_layer *l, dlg_cuda_dropout_dev *d,
                              char *err, size_t errlen);
void dlg_cuda_dropout_dev_free(dlg_cuda_dropout_dev *d);

/* fp16 loss scaling (cuda_scale.c): the device state, allocated at open
 * for DLG_CUDA_FP16 only (c->scaler stays NULL otherwise); the SGD step
 * through it (check, scaled or skipped update, scale update); and the
 * backend's loss_scale query (1 and the state if scaling, else 0). */
int dlg_cuda_scaler_open(dlg_cuda_ctx *c, char *err, size_t errlen);
void dlg_cuda_scaler_close(dlg_cuda_ctx *c);
int dlg_cuda_sgd_scaled(dlg_cuda_ctx *c, const dlg_cuk_sgd_tensor *t, const dlg_cuk_sgd_chunk *ch,
                        int nchunks, const dlg_sgd *sgd);
int dlg_cuda_loss_scale(void *ctx, float *scale, int64_t *skipped);

/* Half storage: the 16-bit type of activations for this context's math. */
static inline bool dlg_cuda_is_half(const dlg_cuda_ctx *c)
{
    return c->math == DLG_CUDA_BF16 || c->math == DLG_CUDA_FP16;
}
static inline dlg_cuk_htype dlg_cuda_htype(const dlg_cuda_ctx *c)
{
    return c->math == DLG_CUDA_FP16 ? DLG_CUK_FP16 : DLG_CUK_BF16;
}
static inline cudnnDataType_t dlg_cuda_half_dnn(const dlg_cuda_ctx *c)
{
    return c->math == DLG_CUDA_FP16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
}
static inline cudaDataType_t dlg_cuda_half_blas(const dlg_cuda_ctx *c)
{
    return c->math == DLG_CUDA_FP16 ? CUDA_R_16F : CUDA_R_16BF;
}

#define CF(t) ((float *)(t)->data)
#define CG(t) ((float *)(t)->diff)

#endif
