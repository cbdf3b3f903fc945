/* dlgauge nn — a small Caffe-like engine: build a net, plan it on a
 * backend, run forward/backward/SGD.
 *
 * Model code is a sequence of builder calls that return blob ids:
 *
 *     dlg_net *net; dlg_net_create(&net, "alexnet");
 *     int x = dlg_input(net, "data", 32, 3, 227, 227);
 *     int y = dlg_labels(net, "label", 32);
 *     x = dlg_conv(net, "conv1", x, 96, 11, 4, 0, 1);
 *     x = dlg_relu(net, "relu1", x);
 *     ...
 *     dlg_softmax_loss(net, "loss", x, y);
 *     if (dlg_net_status(net) < 0) puts(dlg_net_error(net));
 *
 * Errors are sticky: once a builder call fails, every later one returns the
 * same negative DLG_E* code, so model code checks once at the end.  Shapes,
 * parameter counts and multiply-adds are known right after building; memory
 * is allocated once by dlg_net_plan(); forward/backward/SGD allocate nothing.
 */
#ifndef DLGAUGE_NN_H
#define DLGAUGE_NN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dlg_net dlg_net;

#define DLG_NN_MAX_DIMS 5

/* Element types.  Only F32 is implemented; the others are reserved so that
 * mixed-precision backends slot in without renumbering. */
typedef enum dlg_dtype { DLG_F32 = 0, DLG_F16 = 1, DLG_BF16 = 2 } dlg_dtype;

/* NCHW (or NCDHW) shape; unused trailing dims are 1. */
typedef struct dlg_shape {
    int ndim;
    int64_t d[DLG_NN_MAX_DIMS];
} dlg_shape;

/* Parameter initialisation, as Caffe's fillers (fan_in = count / out). */
typedef enum dlg_fill_type {
    DLG_FILL_CONSTANT = 0, /* value */
    DLG_FILL_GAUSSIAN = 1, /* N(0, value^2) */
    DLG_FILL_XAVIER = 2,   /* U(-sqrt(3/fan_in), +sqrt(3/fan_in)) */
    DLG_FILL_MSRA = 3      /* N(0, 2/fan_in)  (He) */
} dlg_fill_type;

typedef struct dlg_filler {
    dlg_fill_type type;
    float value;
} dlg_filler;

/* ---- building ---------------------------------------------------------- */
int dlg_net_create(dlg_net **out, const char *name);
void dlg_net_destroy(dlg_net *net);
/* 0, or the first builder/plan/run error (negative DLG_E*). */
int dlg_net_status(const dlg_net *net);
/* The message of the last error ("" if none). */
const char *dlg_net_error(const dlg_net *net);
/* Fillers used by the next conv/fc calls (default: gaussian 0.01, bias 0). */
void dlg_net_set_fillers(dlg_net *net, dlg_filler weight, dlg_filler bias);

int dlg_input(dlg_net *net, const char *name, int n, int c, int h, int w);
/* Integer class labels 0..K-1 stored as floats, one per image. */
int dlg_labels(dlg_net *net, const char *name, int n);

/* Convolution with bias; square kernel/stride/pad. */
int dlg_conv(dlg_net *net, const char *name, int x, int out_c, int k, int stride, int pad,
             int groups);
int dlg_conv_dilated(dlg_net *net, const char *name, int x, int out_c, int k, int stride,
                     int pad, int dilation, int groups);
typedef struct dlg_conv_spec {
    int out_c;
    int kh, kw, sh, sw, ph, pw, dh, dw; /* dilation 1 = dense */
    int groups;
    bool no_bias; /* e.g. before batch-norm */
} dlg_conv_spec;
int dlg_conv_ex(dlg_net *net, const char *name, int x, const dlg_conv_spec *s);

/* How the pooling calls after it round their output size (default CEIL;
 * it holds until set again, as the fillers do).
 *   DLG_POOL_CEIL   Caffe's: ceil((H + 2p - k) / s) + 1, minus one if the
 *                   last window would start inside the padding or past the
 *                   input (a stride above the kernel; PyTorch's ceil mode
 *                   drops it too).  Caffe-era nets (AlexNet, GoogLeNet, VGG).
 *   DLG_POOL_FLOOR  PyTorch's default and MXNet's 'valid' convention:
 *                   floor((H + 2p - k) / s) + 1; input rows past the last
 *                   window are left out.  torchvision's nets.
 * Average pooling divides by the window clipped to H + pad, as Caffe does;
 * in floor mode no window passes H + pad, so that is always k*k (PyTorch's
 * and MXNet's count_include_pad).  Any other value is a sticky error. */
typedef enum dlg_pool_rounding { DLG_POOL_CEIL = 0, DLG_POOL_FLOOR = 1 } dlg_pool_rounding;
void dlg_net_set_pool_rounding(dlg_net *net, dlg_pool_rounding rounding);
/* Square kernel/stride/pad, rounded as set above. */
int dlg_max_pool(dlg_net *net, const char *name, int x, int k, int stride, int pad);
int dlg_avg_pool(dlg_net *net, const char *name, int x, int k, int stride, int pad);
int dlg_global_avg_pool(dlg_net *net, const char *name, int x);
/* Across-channel LRN: y = x / (k + alpha/size * sum x^2)^beta. */
int dlg_lrn(dlg_net *net, const char *name, int x, int size, float alpha, float beta, float k);
int dlg_relu(dlg_net *net, const char *name, int x);
/* Caffe BatchNorm followed by Scale (with bias): batch statistics when
 * training, running ones (momentum 0.1) otherwise. */
int dlg_batchnorm(dlg_net *net, const char *name, int x, float eps);
/* Inner product: flattens C*H*W, out x 1 x 1. */
int dlg_fc(dlg_net *net, const char *name, int x, int out);
/* Inverted dropout: scales kept units by 1/(1-ratio) while training. */
int dlg_dropout(dlg_net *net, const char *name, int x, float ratio);
/* Concatenation along channels. */
int dlg_concat(dlg_net *net, const char *name, int n, const int *xs);
int dlg_add(dlg_net *net, const char *name, int a, int b);
int dlg_softmax(dlg_net *net, const char *name, int x);
/* Mean softmax cross-entropy over the batch.  The result blob holds three
 * floats: loss, top-1 accuracy, top-5 accuracy (fractions of the batch). */
int dlg_softmax_loss(dlg_net *net, const char *name, int logits, int labels);
/* The same with the loss's gradient scaled by weight (> 0).  A net may
 * have several losses (e.g. an auxiliary classifier weighted 0.4): backward
 * then trains on their weighted sum; each result blob holds its own
 * unweighted loss (every backend). */
int dlg_softmax_loss_weighted(dlg_net *net, const char *name, int logits, int labels,
                              float weight);

/* ---- sequences (core/nn/seq.c) -------------------------------------------
 * A sequence batch of T steps and B streams is T*B rows in time-major order
 * (row t*B + b), so fc, dropout and dlg_softmax_loss apply per token; the
 * loss is then the mean over all T*B tokens, as in PyTorch's word LM. */
/* Token ids (floats holding integers 0..vocab-1, e.g. a dlg_labels blob of
 * T*B rows) -> rows of a vocab x dim table: T*B x dim x 1 x 1.  The table
 * starts U(-0.1, 0.1) as in PyTorch's word_language_model. */
int dlg_embedding(dlg_net *net, const char *name, int ids, int vocab, int dim);
/* One LSTM layer over `steps` time steps.  x: T*B x I x 1 x 1; h0, c0:
 * B x hidden x 1 x 1 (e.g. dlg_input blobs that carry the state between
 * truncated-BPTT segments).  Returns y (T*B x hidden x 1 x 1) and sets
 * *hT, *cT to the final state blobs.  Parameters: Wx (I x 4H), Wh
 * (H x 4H), bias (4H), gates i, f, g, o, all U(-1/sqrt(H), 1/sqrt(H)) as
 * PyTorch initialises nn.LSTM.  Multiply-adds are counted per token. */
int dlg_lstm(dlg_net *net, const char *name, int x, int h0, int c0, int hidden, int steps,
             int *hT, int *cT);
/* Ties fc layer `fc`'s weight (vocab x dim) to embedding layer `embedding`'s
 * table (Press & Wolf; PyTorch's --tied): one parameter, gradients summed.
 * The fc layer must come after the embedding.  Before dlg_net_plan. */
int dlg_net_tie(dlg_net *net, const char *fc, const char *embedding);
/* Overrides a parameter blob's lr and decay multipliers (e.g. 1 / 0 for
 * a bias where PyTorch's plain SGD is wanted, instead of Caffe's 2 / 0).
 * Before dlg_net_plan. */
int dlg_net_set_param_mult(dlg_net *net, int param_blob, float lr_mult, float decay_mult);
/* Global L2 norm of all parameter gradients (after dlg_net_backward);
 * gradient clipping = dlg_net_scale_grads by min(1, max_norm / norm), or,
 * with weight_decay 0, the SGD step's lr scaled by that factor.  Under
 * dynamic loss scaling (cuda fp16) the stored gradients carry the loss
 * scale until the SGD step removes it: the norm is divided by it, so it is
 * the true gradient's (inf on an overflowed step, which the SGD step then
 * skips); scaling the stored gradients by a factor is the same either way. */
int dlg_net_grad_norm(dlg_net *net, double *norm);
int dlg_net_scale_grads(dlg_net *net, float factor);
/* What dlg_net_clip_grads saw, for the report; zero it once per net. */
typedef struct dlg_clip_stats {
    double norm;     /* the last call's global gradient norm, before clipping */
    int64_t clipped; /* calls whose gradients were scaled */
} dlg_clip_stats;
/* torch.nn.utils.clip_grad_norm_ after dlg_net_backward: with max_norm > 0
 * and the global gradient norm (dlg_net_grad_norm's) above it, every
 * param gradient times max_norm / (norm + 1e-6); max_norm <= 0 measures
 * only.  On a backend that clips on the device (cuda) the norm, the
 * decision and the scaling stay there: nothing waits and the step can be
 * captured; st is then filled by dlg_net_clip_read, which waits (call it
 * when reporting).  Elsewhere st is updated at once, and where lr_factor
 * is not NULL the gradients are left as they are and *lr_factor gets the
 * factor (1 if none) for the caller's SGD step: with weight decay 0,
 * scaling the step is scaling the gradients, without a pass over them.
 * That holds for this engine's Caffe momentum (dlg_sgd: h = m*h + lr*g,
 * the lr applied before the history), not for PyTorch's (h = m*h + g;
 * w -= lr*h), where a scaled lr would also scale the history.
 * On the device path *lr_factor is 1. */
int dlg_net_clip_grads(dlg_net *net, double max_norm, dlg_clip_stats *st, float *lr_factor);
/* st from the device where dlg_net_clip_grads left it there (waits for
 * the device); a no-op elsewhere. */
int dlg_net_clip_read(dlg_net *net, dlg_clip_stats *st);
/* Dynamic loss scaling (cuda fp16; see core/nn/cuda/README.md): the
 * current loss scale and the SGD steps skipped so far because a gradient
 * was inf or NaN.  Returns 1 if the backend scales the loss, 0 if not
 * (then 1.0 and 0), or a negative code.  It waits for the device: read it
 * at the end of a run, not per step. */
int dlg_net_loss_scale(dlg_net *net, float *scale, int64_t *skipped);

/* ---- inspecting ---------------------------------------------------------- */
int dlg_net_blob(const dlg_net *net, const char *name);  /* id or -DLG_EINVAL */
/* Id of a layer's parameter blob (0 = weights/gamma, 1 = bias/beta). */
int dlg_net_param(const dlg_net *net, const char *layer, int index);
int dlg_net_shape(const dlg_net *net, int blob, dlg_shape *out);
int64_t dlg_net_param_total(const dlg_net *net);
/* Forward multiply-adds per image, counting convolutions and inner
 * products (the convention of published model sizes). */
int64_t dlg_net_macs_total(const dlg_net *net);
/* Multiply-adds per image of one step as planned: each layer's forward
 * and, in training, its weight gradient where it trains parameters and
 * its data gradient where a bottom takes one, each as many as its
 * forward (so not 3x the forward: the first convolution's input takes no
 * gradient).  -DLG_EINVAL before dlg_net_plan. */
int64_t dlg_net_step_macs(const dlg_net *net);

typedef struct dlg_layer_info {
    const char *name;
    const char *type; /* "conv", "pool", "lrn", ... */
    int64_t params;
    int64_t macs;  /* per image */
    dlg_shape out; /* shape of the first output */
} dlg_layer_info;
int dlg_net_layer_count(const dlg_net *net);
int dlg_net_layer_info(const dlg_net *net, int index, dlg_layer_info *out);
/* After planning: the kernel that runs layer `index`, e.g. "jit:avx2"
 * (oneDNN's implementation), "winograd F(4x4,3x3) avx2", "cudnn
 * f:precomp d:1 w:1 nhwc" (cuDNN's algorithms), "ref" (the reference
 * fallback), "fused" (folded into the layer before it); NULL
 * for a bad index or an unplanned net.  Valid until the net is destroyed. */
const char *dlg_net_layer_impl(const dlg_net *net, int index);
/* With dlg_plan_opts.profile: nanoseconds layer `index` spent in forward
 * and backward calls, and its forward calls, summed since planning or the
 * last reset (0 for a fused layer: its time is its host's).  -DLG_EINVAL
 * for a bad index, -DLG_ENOTSUP when the plan did not ask to profile. */
int dlg_net_layer_time(const dlg_net *net, int index, uint64_t *fwd_ns, uint64_t *bwd_ns,
                       uint64_t *calls);
/* Zero every layer's profile (e.g. after warm-up steps). */
void dlg_net_layer_time_reset(dlg_net *net);
/* The profile summed by layer type and kernel (fused layers left out):
 * up to max kinds into out, slowest first; returns how many kinds there
 * are (may exceed max), or -DLG_ENOTSUP without a profile. */
typedef struct dlg_layer_kind {
    const char *type, *impl; /* as dlg_layer_info.type, dlg_net_layer_impl */
    uint64_t fwd_ns, bwd_ns;
    int layers;
} dlg_layer_kind;
int dlg_net_layer_kinds(const dlg_net *net, dlg_layer_kind *out, int max);
/* Up to max layer indices, slowest (forward + backward) first; returns how
 * many were written, or -DLG_ENOTSUP without a profile. */
int dlg_net_layers_by_time(const dlg_net *net, int *layers, int max);

/* ---- planning and running ------------------------------------------------ */
/* Whether a backend may capture whole steps (CUDA graphs) and replay them.
 * AUTO: where the net allows; ON: the same, with a note saying why not
 * when it does not; OFF: every step runs eagerly. */
typedef enum dlg_graphs { DLG_GRAPHS_AUTO = 0, DLG_GRAPHS_ON = 1, DLG_GRAPHS_OFF = 2 } dlg_graphs;

typedef struct dlg_plan_opts {
    const char *backend; /* "cpu" (oneDNN fp32, default), "cpu-bf16" (oneDNN bf16,
                          * AVX-512), "ref" (plain C), or "cuda[-tf32|-bf16|-fp16][:N]"
                          * (cuDNN/cuBLAS, loaded on demand) */
    int threads;         /* the job's vCPUs (dlg_job_info.cpus); 0: runtime default.
                          * cpu backend: omp_set_num_threads on the thread that
                          * runs forward/backward (oneDNN 2.6 uses OpenMP) */
    bool train;          /* allocate gradients; batch-norm/dropout train mode */
    uint64_t seed;       /* parameter init and dropout masks */
    bool input_grads;    /* also gradients of dlg_input blobs (gradient checks) */
    /* Memory is shared by lifetime: an inference net's activations, and a
     * training net's gradients, reuse buffers whose last reader has run, so
     * only inputs, params, outputs (blobs no layer reads, e.g. the loss) and
     * blobs marked with dlg_net_keep stay readable; reading another one is
     * an error.  keep_all turns sharing off (tests comparing every blob). */
    bool keep_all;
    /* Backend options, appended: zero is each one's default.  The cpu and
     * ref backends ignore them (they have no algorithm search, workspace
     * limit, nondeterministic kernels or graphs).  cuda: */
    const char *algo_cache;   /* file of conv algorithm choices, read at plan
                               * time, rewritten at destroy; NULL: none */
    uint64_t workspace_bytes; /* per-layer cuDNN workspace limit; 0: a
                               * quarter of the free memory, at most 16 GiB */
    bool deterministic;       /* only deterministic conv algorithms */
    dlg_graphs graphs;        /* capture dlg_net_train_step/infer_step */
    /* cuda-bf16/cuda-fp16: keep 4-d activations in NCHW order instead of
     * channels-last (NHWC, the default: cuDNN's tensor-core kernels and
     * persistent batch norm want it); for comparisons and tests */
    bool half_nchw;
    /* cpu: oneDNN's direct kernels for every convolution, no Winograd for
     * 3x3, 1x7/7x1 or 1x3/3x1 stride-1 layers (comparisons, tests) */
    bool direct_conv;
    /* time every layer's forward and backward call (dlg_net_layer_time):
     * the host clock around each call on the cpu backends; on cuda, events
     * recorded between the layers on the device's timeline (a layer's
     * time runs from the end of the layer before it to the end of its own
     * work), read at the end of each step or dlg_net_forward/_backward
     * call, or when dlg_net_timer_end returns if a step timer runs; steps
     * then run eagerly, never as CUDA graphs */
    bool profile;
    /* Asked between the layers' kernel setups (a cpu convolution times its
     * algorithms there, cuda searches them) and every million parameter
     * values initialised: true ends the plan at once with -DLG_ESTOP
     * (sticky, as any failed plan: destroy the net).  A workload passes
     * its host's stopping() (a Ctrl-C), so that a large net's setup ends
     * in moments rather than seconds.  NULL: never asked. */
    bool (*stop)(void *ctx);
    void *stop_ctx;
    /* What the plan has to tell besides an error (cpu: a convolution's
     * algorithms timed and kept in the tuning record), a line at a time,
     * during dlg_net_plan only.  A workload passes its host's log (INFO:
     * shown with dlgauge -v).  NULL: on stderr after "dlgauge: ". */
    void (*note)(void *ctx, const char *line);
    void *note_ctx;
} dlg_plan_opts;
int dlg_net_plan(dlg_net *net, const dlg_plan_opts *opts);
/* Keep a blob's data and gradient readable after forward/backward (its own
 * memory, never shared).  Before dlg_net_plan. */
int dlg_net_keep(dlg_net *net, int blob);
/* Bytes the plan allocated for blobs, gradients, momentum and workspace
 * (shared arenas counted once); 0 before planning. */
uint64_t dlg_net_memory_bytes(const dlg_net *net);
/* Switch batch-norm/dropout between train and test behaviour. */
int dlg_net_set_train(dlg_net *net, bool train);

int dlg_net_forward(dlg_net *net);
/* Backward from the loss layer (gradient 1), or, in a net without a loss,
 * from the diffs the caller wrote into the output blobs. */
int dlg_net_backward(dlg_net *net);

/* Caffe SGD: h = m*h + lr*lr_mult*(g + decay*decay_mult*w); w -= h.
 * Weights use lr_mult 1 / decay_mult 1, biases 2 / 0, batch-norm 1 / 0. */
typedef struct dlg_sgd {
    float lr, momentum, weight_decay;
} dlg_sgd;
int dlg_net_sgd_step(dlg_net *net, const dlg_sgd *sgd);

/* One whole step: forward, backward and dlg_net_sgd_step(sgd), the same
 * result as the three calls.  A backend may run the first steps eagerly,
 * then capture one and replay it (cuda: CUDA graphs; see
 * core/nn/cuda/README.md); inputs written with dlg_net_write before the
 * call are what the step reads.  Changing sgd between steps is allowed
 * (the backend re-captures, or runs eagerly if it changes every step). */
int dlg_net_train_step(dlg_net *net, const dlg_sgd *sgd);
/* The same with dlg_net_clip_grads(net, max_norm, st, ...) between
 * backward and the SGD step (torch.nn.utils.clip_grad_norm_; max_norm <= 0
 * measures the norm only).  On cuda the clip is decided and applied on the
 * device, so forward, backward, clip and SGD are one graph replay (max_norm
 * is part of what a captured graph holds) and st is filled by
 * dlg_net_clip_read.  On the host (cpu, ref) st is updated at once and,
 * with weight_decay 0, the clip factor scales the SGD step's lr instead of
 * the gradients (no pass over them); with weight decay the gradients are
 * scaled. */
int dlg_net_train_step_clip(dlg_net *net, const dlg_sgd *sgd, double max_norm,
                            dlg_clip_stats *st);
/* ---- data-parallel training across ranks (core/nn/grad_reduce.c) ----------
 * Every rank trains the same net on its own shard of the data; fn sums n
 * floats of buf in place across the ranks (an allreduce: every rank gets
 * the sum) and returns 0 or a negative DLG_E* code.  Installed on a net
 * planned for training, dlg_net_train_step and _clip call it between
 * backward and the update on every trained parameter's gradient (batch-norm
 * scale and shift included): a large one where it lies, the small ones
 * packed into a buffer of at most DLG_NN_REDUCE_BUCKET floats allocated
 * here (at most that many floats a call; nothing allocated per step).  Each
 * rank then updates with the mean gradient of the ranks' batches, as Caffe's
 * multi-GPU P2PSync, Horovod and PyTorch's DDP do, so the ranks' weights
 * stay identical: the gradients keep the sum and the update divides by the
 * ranks (lr / ranks and weight decay x ranks: the same SGD step, without a
 * pass that scales the gradients), as dlg_net_grad_norm and the clip of
 * _clip do: the clip sees the reduced gradient's global norm.
 * Batch-norm running statistics are not reduced: each rank keeps its own
 * (DDP without SyncBatchNorm, Caffe multi-GPU), and frozen parameters
 * (lr_mult 0) are left out.  dlg_net_backward + dlg_net_sgd_step called
 * apart do not reduce.  The ranks must plan the same net on the same
 * backend and CPU (a blocked layout's padding is part of the buffer).
 * fn NULL removes it, and so does planning again.  Host-memory backends
 * (cpu, cpu-bf16, ref) only: elsewhere -DLG_ENOTSUP with the reason in
 * dlg_net_error (not sticky). */
#define DLG_NN_REDUCE_BUCKET ((size_t)1 << 22) /* 16 MiB of floats */
typedef int (*dlg_grad_reduce_fn)(void *ctx, float *buf, size_t n);
int dlg_net_set_grad_reduce(dlg_net *net, dlg_grad_reduce_fn fn, void *ctx, int ranks);
/* ---- data-parallel training on a device (cuda: NCCL; core/nn/dev_reduce.c) ---
 * The same contract as dlg_net_set_grad_reduce, for a net whose gradients
 * live in device memory: after backward every trained gradient is summed
 * over the ranks in place by the backend's own collective library (NCCL,
 * on the compute stream: no host copy, no host wait), and the update
 * divides by the ranks.  The ranks' host transport carries only the
 * communicator's id: bcast(ctx, buf, bytes) must give every rank rank 0's
 * bytes (the host's comm_bcast).  Nothing collective happens here: the
 * communicator is created at the first training step after this call
 * (every rank reaches it together), so this may be called in setup.
 * rank in 0 .. ranks-1.  -DLG_ENOTSUP with the reason in dlg_net_error
 * (not sticky) on a host-memory backend (use dlg_net_set_grad_reduce) or
 * where the backend has no collectives (no NCCL found).  ranks 0 or bcast
 * NULL removes it, and so does planning again. */
typedef int (*dlg_id_bcast_fn)(void *ctx, void *buf, size_t bytes);
int dlg_net_set_device_reduce(dlg_net *net, int ranks, int rank, dlg_id_bcast_fn bcast,
                              void *ctx);
/* Whether the net's planned backend keeps its memory on the host (cpu,
 * cpu-bf16, ref: dlg_net_set_grad_reduce) or on a device (cuda:
 * dlg_net_set_device_reduce). */
bool dlg_net_host_memory(const dlg_net *net);

/* ---- device buffers and collectives outside a net (core/nn/dev_coll.c) ----
 * For collective benchmarks (the allreduce and p2p workloads on a GPU):
 * a backend opened by name ("cuda:1"; a host backend works too and its
 * collectives copy on one rank only), its memory, and NCCL's
 * collectives on its stream.  Every call but dlg_dev_coll_open and
 * dlg_dev_sync only enqueues work; errors are negative DLG_E* codes with
 * the line in dlg_dev_error. */
typedef struct dlg_dev dlg_dev;
typedef enum dlg_dev_type { DLG_DEV_F32 = 0, DLG_DEV_F64 = 1, DLG_DEV_I64 = 2 } dlg_dev_type;
int dlg_dev_open(const char *backend, dlg_dev **out, char *err, size_t errlen);
void dlg_dev_close(dlg_dev *d);
const char *dlg_dev_error(const dlg_dev *d);
/* zeroed device memory, freed by dlg_dev_close; NULL when out of memory */
void *dlg_dev_alloc(dlg_dev *d, size_t bytes);
int dlg_dev_upload(dlg_dev *d, void *dst, const void *host, size_t bytes);
int dlg_dev_download(dlg_dev *d, void *host, const void *src, size_t bytes);
/* the host waits for everything enqueued so far (and reports a failed
 * collective) */
int dlg_dev_sync(dlg_dev *d);
/* Whether this rank could join a device communicator of several: the
 * collective library (NCCL) loads, nothing collective (a workload's setup,
 * on every rank, so a rank without it is refused there); 0 at once on a
 * host-memory backend, which dlg_dev_coll_open refuses across ranks. */
int dlg_dev_coll_probe(dlg_dev *d);
/* Join the ranks' device communicator: collective, every rank together
 * (never in a workload's setup); the id travels through bcast as above. */
int dlg_dev_coll_open(dlg_dev *d, int ranks, int rank, dlg_id_bcast_fn bcast, void *ctx);
/* out-of-place (send != recv) or in-place sum of count elements over the
 * ranks (ncclAllReduce) */
int dlg_dev_allreduce(dlg_dev *d, const void *send, void *recv, size_t count, dlg_dev_type t);
/* count elements to rank `to` and from rank `from` at once (ncclSend and
 * ncclRecv in one group) */
int dlg_dev_sendrecv(dlg_dev *d, const void *send, int to, void *recv, int from, size_t count,
                     dlg_dev_type t);
/* Time on the device's own clock between two calls (events on the stream);
 * end waits. */
int dlg_dev_timer_begin(dlg_dev *d);
int dlg_dev_timer_end(dlg_dev *d, uint64_t *elapsed_ns);

/* A 62-bit hash of a training plan's trained parameters as stored (the
 * ones the reduce keeps identical across ranks; running statistics left
 * out), for checking that the ranks' weights agree: equal weights in equal
 * layouts, equal hashes. */
int dlg_net_param_hash(dlg_net *net, uint64_t *hash);
/* One forward pass (inference, or a training net's forward alone), which a
 * backend may capture and replay in the same way. */
int dlg_net_infer_step(dlg_net *net);
/* How the steps above ran so far: eagerly, captured (and run), replayed.
 * A backend without graphs counts every step as eager. */
typedef struct dlg_step_stats {
    uint64_t eager, captured, replayed;
} dlg_step_stats;
int dlg_net_step_stats(const dlg_net *net, dlg_step_stats *out);

/* Step timing on the device's own clock: begin before the step's work
 * (input writes included), end after it; end waits for the step to finish
 * and gives its elapsed time.  -DLG_ENOTSUP (not sticky) on a backend
 * without a device timeline (cpu, ref): time the step with a host clock. */
int dlg_net_timer_begin(dlg_net *net);
int dlg_net_timer_end(dlg_net *net, uint64_t *elapsed_ns);

typedef enum dlg_which { DLG_DATA = 0, DLG_DIFF = 1 } dlg_which;
/* Copy count floats between host memory and a blob (activation or param),
 * converting from/to plain NCHW if the backend keeps it in another layout.
 * A wrong id or count, or a blob without a gradient, is an error that is
 * not sticky. */
int dlg_net_write(dlg_net *net, int blob, dlg_which which, const float *src, size_t count);
int dlg_net_read(dlg_net *net, int blob, dlg_which which, float *dst, size_t count);
/* Blob src's data copied into blob dst's (the same number of floats), e.g.
 * an LSTM's hT into the next segment's h0 (truncated BPTT): on the device,
 * after the work launched so far, without waiting (cuda: an asynchronous
 * copy on the net's stream); blobs in different backend layouts go through
 * the host.  Like dlg_net_write, it replaces a pending dlg_net_write_async
 * of dst. */
int dlg_net_copy_blob(dlg_net *net, int src, int dst);
/* dst's data set to zeros, in the same way (an LSTM state at an epoch
 * start). */
int dlg_net_zero_blob(dlg_net *net, int blob);
/* dlg_net_read(net, blob, DLG_DATA, dst, count) that may return before the
 * copy is done: it is enqueued after the work launched so far (cuda: on the
 * net's stream, into dst from dlg_net_host_alloc, which must stay until the
 * wait).  *ticket names it for dlg_net_read_wait.  A blob in a backend
 * layout, and cpu and ref: a plain dlg_net_read, done at return (ticket 0). */
int dlg_net_read_async(dlg_net *net, int blob, float *dst, size_t count, uint64_t *ticket);
/* Returns once the read with that ticket (and every earlier one) has
 * landed; it waits for the device only if it has not yet (after
 * dlg_net_timer_end of the step that read, it has).  -DLG_EINVAL if a step
 * before the read saw a bad input (the values are meaningless), as
 * dlg_net_read. */
int dlg_net_read_wait(dlg_net *net, uint64_t ticket);

/* ---- the input path (see core/nn/README.md, "Input path") ----------------
 * Host memory that the backend copies from fastest: pinned (page-locked)
 * on cuda, so a copy from it is a DMA transfer that runs while the device
 * computes; 64-byte aligned plain memory on cpu and ref.  After
 * dlg_net_plan; free it with dlg_net_host_free on the same net before
 * dlg_net_destroy.  Give it to the loader (dlg_loader_config.alloc) to
 * have batches decoded straight into it.  NULL: out of memory. */
void *dlg_net_host_alloc(dlg_net *net, size_t bytes);
void dlg_net_host_free(dlg_net *net, void *p);
/* dlg_net_write(net, blob, DLG_DATA, src, count) for an input or label
 * blob (dlg_input, dlg_labels) that may return before the copy is done.
 * cuda: the copy runs on a copy stream into a device staging buffer (two
 * per blob, used alternately); the next step (dlg_net_train_step,
 * dlg_net_infer_step, dlg_net_forward) waits for it on the device, not on
 * the host, and copies it into the blob before its first kernel.  So
 * writing batch k+1 right after launching step k overlaps its copy with
 * step k.  src must stay unchanged until dlg_net_write_wait returns (or
 * the step that reads it has ended: dlg_net_timer_end, dlg_net_read);
 * memory from dlg_net_host_alloc makes the copy asynchronous.  The blob
 * holds the new values once a step has taken them; a second write before
 * that step, or a dlg_net_write of the blob, replaces this one.  A blob in
 * a backend layout, and cpu and ref: a plain dlg_net_write. */
int dlg_net_write_async(dlg_net *net, int blob, const float *src, size_t count);
/* Waits on the host until every dlg_net_write_async so far has read its
 * source (then the source may be reused).  0 at once on cpu and ref. */
int dlg_net_write_wait(dlg_net *net);
/* Data wait of the last step on the device timeline: how long its compute
 * stream waited for the copies of its asynchronous inputs, plus how long
 * the device sat idle between the end of the step's work and
 * dlg_net_timer_end (the host still fetching the next batch).  Read it
 * after the step's dlg_net_timer_end, before the next step.
 * -DLG_ENOTSUP (not sticky) on cpu and ref, or when the last step took
 * no asynchronous input: there the caller's host-side wait is the figure. */
int dlg_net_input_stall(dlg_net *net, uint64_t *ns);

/* ---- reference models (core/nn/models) ----------------------------------- */
/* Build the model's training net on `net` for batch n, ending in a
 * softmax loss over `classes`.  Return the loss blob or a negative code. */
int dlg_model_alexnet(dlg_net *net, int n, int classes);   /* BVLC, 227 crop */
int dlg_model_googlenet(dlg_net *net, int n, int classes); /* BVLC, main head */
int dlg_model_resnet50(dlg_net *net, int n, int classes);  /* torchvision's v1.5 */
int dlg_model_vgg16(dlg_net *net, int n, int classes);
/* torchvision's Inception-v3: crop x crop input (0: 299; any crop from
 * 75: its pools round down, as torchvision's), batch-norm (eps 1e-3) after
 * every bias-free convolution, factorised 1x7/7x1 and 1x3/3x1 convolutions.
 * aux adds the auxiliary classifier after Mixed_6e (logits "aux/logits",
 * its own loss "aux/loss" weighted 0.4 into backward; needs crop >=
 * DLG_INCEPTION_AUX_MIN_CROP).
 * 27.16 M parameters with aux, 23.83 M without; 5.71 GMACs. */
#define DLG_INCEPTION_AUX_MIN_CROP 299 /* torchvision's aux head (5x5 pool / 3, 5x5 conv) fits from here */
int dlg_model_inception_v3(dlg_net *net, int n, int classes, int crop, bool aux);
/* By name: "alexnet", "googlenet", "googlenet-aux" (with BVLC's two
 * auxiliary classifiers, as its train_val), "resnet50", "vgg16",
 * "inception-v3", "inception-v3-aux". */
int dlg_model_build(dlg_net *net, const char *model, int n, int classes);
/* The same with a crop x crop input (0: the model's own, 227 or 224).  A crop
 * too small for the net's pooling is a builder error naming the layer. */
int dlg_model_build_crop(dlg_net *net, const char *model, int n, int classes, int crop);

#ifdef __cplusplus
}
#endif
#endif
