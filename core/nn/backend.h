/* The backend interface: one vtable per backend (ref, cpu/oneDNN, later
 * cuda).  The net owns shapes, ordering and planning; a backend owns memory
 * and kernels.  Per-layer backend state (oneDNN primitives, cuDNN
 * descriptors and algorithm choices) is created once by setup() at plan
 * time, so forward/backward only execute. */
#ifndef DLG_NN_BACKEND_H
#define DLG_NN_BACKEND_H

#include "tensor.h"

#include <dlgauge/plugin.h> /* DLG_E* codes */

typedef struct dlg_backend_opts {
    int threads; /* 0: runtime default */
    /* from dlg_plan_opts (see nn.h); zero = default, ignored where moot */
    const char *algo_cache;
    uint64_t workspace_bytes;
    bool deterministic;
    dlg_graphs graphs;
    bool half_nchw;
    bool direct_conv;
    /* dlg_plan_opts.stop (NULL: none), for a kernel setup that takes long
     * (cpu: a convolution timing its algorithms) to cut it short; the plan
     * itself fails after that layer */
    bool (*stop)(void *ctx);
    void *stop_ctx;
    /* dlg_plan_opts.note (NULL: stderr), during the plan only */
    void (*note)(void *ctx, const char *line);
    void *note_ctx;
} dlg_backend_opts;

/* One whole step for run_step: launch() enqueues it eagerly through the
 * kernels (forward; with sgd also backward and the SGD update) and returns
 * 0 or -DLG_E* with the failing layer named in err.  It changes no engine
 * state, so a backend may call it inside a capture and, if the capture
 * fails, call it again. */
typedef struct dlg_step_fn {
    int (*launch)(void *arg, char *err, size_t errlen);
    void *arg;
    const dlg_sgd *sgd; /* NULL: forward only */
    bool train;         /* the net's phase (batch-norm/dropout mode) */
    /* NULL, or the first layer whose kernels cannot be captured (they
     * sync with the host, allocate, or run on the fallback backend) */
    const char *blocker;
    /* dlg_net_clip_grads(max_norm) between backward and SGD (part of the
     * graph key: a captured graph holds max_norm) */
    bool clip;
    double max_norm;
    /* where launch() and run_step describe a failure of the step */
    char *err;
    size_t errlen;
} dlg_step_fn;

typedef struct dlg_kernels {
    /* Create per-layer state; say how much shared scratch forward/backward
     * need; set the tops' layout (see dlg_tensor).  Runs in topological
     * order before memory is allocated, so it sees no data pointers.
     * -DLG_ENOTSUP lets the net use the backend's fallback. */
    int (*setup)(void *ctx, const dlg_layer *l, void **state, size_t *ws_bytes, char *err,
                 size_t errlen);
    int (*forward)(void *ctx, dlg_layer *l, void *state);
    int (*backward)(void *ctx, dlg_layer *l, void *state);
    void (*destroy)(void *ctx, void *state);
    /* Optional: false if these kernels cannot run this layer (the net then
     * uses the fallback's), decided before any layout is chosen. */
    bool (*accepts)(const dlg_layer *l);
    /* The kernels read inputs in any layout of this backend. */
    bool any_layout;
    /* Batch norm, add and convolution: honour dlg_bn_param.relu /
     * dlg_add_param.relu / dlg_conv_param.relu, so the planner may fold a
     * ReLU that alone reads the output into them (one pass, one blob
     * less).  A convolution's backward then first zeroes dy in place where
     * its output y is not > 0 (it reads its top: bwd_reads_top). */
    bool fuses_relu;
    /* Convolution only: honours dlg_conv_param.bn, .residual and .relu, so
     * an inference plan may fold the batch norm, eltwise add and ReLU that
     * alone read the output into the convolution's epilogue: no pass and no
     * blob for each of them. */
    bool fuses_epilogue;
    /* Batch norm only: honours dlg_bn_param.residual and top_parts, so a
     * training plan may fold the eltwise add that alone reads the output
     * (a ResNet block's bn -> add -> ReLU) into it: the add's pass and the
     * batch norm's output are gone, and backward writes the residual's
     * gradient in the pass that sums the split's. */
    bool fuses_residual;
    /* Add only: honours dlg_layer.top_parts, so a training plan may fold
     * the backward of the split that alone reads the output into the add:
     * one pass sums the split's output gradients, applies a folded ReLU and
     * writes both input gradients, and the output's gradient is not
     * stored. */
    bool sums_top_parts;
    /* Backward reads no bottom / no top data, so a training plan may reuse
     * that memory once forward is done with it.  Both false: reads all. */
    bool bwd_no_bottom_data, bwd_no_top_data;
    /* Optional: whether this layer's backward reads its top data, where a
     * plan-time fusion decides it (an add or, in training, a convolution
     * that took over a ReLU); NULL: !bwd_no_top_data. */
    bool (*bwd_reads_top)(const dlg_layer *l);
    /* Forward/backward sync with the host, allocate or branch on device
     * results, so a step that runs them cannot be captured (CUDA graphs). */
    bool no_graph;
    /* Optional: which implementation setup chose for this layer (e.g.
     * oneDNN's "jit:avx2", "winograd"), for dlg_net_layer_impl; NULL: the
     * backend's name.  The string lives as long as the state. */
    const char *(*impl)(const void *state);
    /* Optional, convolutions offered in_place_ok: whether setup chose to
     * accumulate into bottom[1]'s memory, which top[0] must then be. */
    bool (*in_place)(const void *state);
} dlg_kernels;

typedef struct dlg_backend {
    const char *name;
    int (*open)(const dlg_backend_opts *o, void **ctx, char *err, size_t errlen);
    void (*close)(void *ctx);
    /* Device memory.  alloc returns zeroed memory or NULL. */
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p);
    int (*upload)(void *ctx, void *dst, const void *host, size_t bytes);
    int (*download)(void *ctx, void *host, const void *src, size_t bytes);
    int (*zero)(void *ctx, void *dst, size_t bytes);
    int (*sync)(void *ctx);
    /* Called on the thread that runs forward/backward/SGD before it does:
     * thread-local runtime settings (OpenMP thread count, CUDA device). */
    int (*bind)(void *ctx);
    /* One parameter tensor: Caffe SGD (see dlg_sgd in nn.h), lr already
     * multiplied by the param's lr_mult, decay by its decay_mult. */
    int (*sgd)(void *ctx, dlg_tensor *w, float lr, float momentum, float decay);
    /* Optional: all n trained params of the net in one call (a GPU backend
     * launches one kernel), param i with lr * lr_mult[i] and weight decay
     * * decay_mult[i].  The list is the same on every call for a planned
     * net.  NULL: sgd() per param. */
    int (*sgd_all)(void *ctx, dlg_tensor *const *w, const float *lr_mult, const float *decay_mult,
                   int n, const dlg_sgd *sgd);
    /* Optional: dynamic loss scaling (cuda fp16).  The factor the param
     * gradients carry between backward and the SGD step (the loss scale)
     * and the SGD steps skipped for an inf/NaN gradient; waits for the
     * device.  Returns 1 if the backend scales, 0 (1.0, 0) if not. */
    int (*loss_scale)(void *ctx, float *scale, int64_t *skipped);
    /* Host copies of a tensor in a backend-specific layout (mem is its data
     * or diff), converting from/to plain NCHW.  Needed only by backends
     * whose kernels choose such layouts. */
    int (*read_opaque)(void *ctx, const dlg_tensor *t, const void *mem, float *host);
    int (*write_opaque)(void *ctx, const dlg_tensor *t, void *mem, const float *host);
    /* Kernels per layer type; NULL entries use the fallback's. */
    const dlg_kernels *kernels[DLG_L_NTYPES];
    /* A backend sharing this one's memory (cpu -> ref), or NULL. */
    const struct dlg_backend *fallback;
    /* Optional: run one whole step (see dlg_step_fn), eagerly or by
     * capturing and replaying it.  NULL: the engine calls launch(). */
    int (*run_step)(void *ctx, const dlg_step_fn *step);
    /* Optional with run_step: how its steps ran (dlg_step_stats, nn.h). */
    void (*step_stats)(void *ctx, dlg_step_stats *out);
    /* Optional: step timing on the device timeline (see
     * dlg_net_timer_begin in nn.h).  NULL: -DLG_ENOTSUP. */
    int (*timer_begin)(void *ctx);
    int (*timer_end)(void *ctx, uint64_t *elapsed_ns);
    /* Optional, all or none: per-layer times on the device timeline for
     * dlg_plan_opts.profile (profile.c), where kernels run asynchronously
     * and a host clock around a call times its launch only.  prof_open
     * makes n marks, once, at plan time (then whole steps run eagerly:
     * marks between the layers of a replayed graph would time nothing the
     * eager step does); prof_mark records mark i in stream order after the
     * work so far; prof_read waits for mark n-1 and sets ns[i] to the time
     * from mark i to mark i+1, for i < n-1.  NULL: the host clock. */
    int (*prof_open)(void *ctx, int n, char *err, size_t errlen);
    int (*prof_mark)(void *ctx, int i);
    int (*prof_read)(void *ctx, int n, uint64_t *ns);
    /* Optional: gradient clipping on the device (dlg_net_grad_norm,
     * dlg_net_scale_grads in clip.c).  grad_sumsq: the sum of squares of n
     * float arrays (p[i] holds c[i] floats), waited for and returned on
     * the host; grad_scale: p[i][0 .. c[i]) *= f.  NULL: clip.c reads and
     * writes the gradients through download/upload. */
    int (*grad_sumsq)(void *ctx, const float *const *p, const int64_t *c, int n, double *out);
    int (*grad_scale)(void *ctx, float *const *p, const int64_t *c, int n, float f);
    /* Optional: clipping without waiting for the device (dlg_net_clip_grads,
     * nn.h): the sum of squares as grad_sumsq, the norm divided by any
     * loss scale, and with max_norm > 0 and norm > max_norm every p[i]
     * scaled by max_norm / (norm + 1e-6), all decided on the device and
     * only enqueued (no host wait: a step may be captured with it).
     * clip_stats waits and reads the last such norm and how many calls
     * scaled, since open. */
    int (*grad_clip)(void *ctx, float *const *p, const int64_t *c, int n, double max_norm);
    int (*clip_stats)(void *ctx, double *last_norm, int64_t *clipped);
    /* Optional: the input path (input.c).  host_alloc/host_free: host
     * memory the device copies from fastest (cuda: pinned), 64-byte
     * aligned; NULL: aligned malloc.  The rest, all or none (NULL:
     * dlg_net_write_async writes synchronously): in_slot_open/close, the
     * device state of one staging buffer (ready and read marks); in_copy,
     * on a copy stream: after the slot's last read if after_read, host src
     * -> device stage, then mark it ready; in_take, on the compute stream:
     * wait for the n slots' ready marks (that wait is timed), then stage[i]
     * -> dst[i] and mark each slot read; in_mark, on the compute stream:
     * the end of a step's work; in_wait: the host waits for every in_copy
     * so far; in_stall: the last step's time waiting for its inputs on the
     * device (see dlg_net_input_stall in nn.h). */
    void *(*host_alloc)(void *ctx, size_t bytes);
    void (*host_free)(void *ctx, void *p);
    int (*in_slot_open)(void *ctx, void **slot);
    void (*in_slot_close)(void *ctx, void *slot);
    int (*in_copy)(void *ctx, void *slot, void *stage, const void *src, size_t bytes,
                   bool after_read);
    int (*in_take)(void *ctx, void *const *slot, void *const *dst, void *const *stage,
                   const size_t *bytes, int n);
    int (*in_mark)(void *ctx);
    int (*in_wait)(void *ctx);
    int (*in_stall)(void *ctx, uint64_t *ns);
    /* Optional: dlg_net_copy_blob without the host: bytes from device src
     * to device dst, enqueued after the work so far (no host wait, may be
     * captured).  NULL: host memory is copied in place, else through the
     * host. */
    int (*copy)(void *ctx, void *dst, const void *src, size_t bytes);
    /* Optional, both or none: dlg_net_read_async/_wait.  read_async
     * enqueues device src -> host dst after the work so far and returns a
     * ticket > 0; read_wait(ticket) returns once that copy and every
     * earlier one landed, waiting only if they have not; -DLG_EINVAL when a
     * step before the copy saw a bad input.  NULL: plain reads. */
    int (*read_async)(void *ctx, void *dst, const void *src, size_t bytes, uint64_t *ticket);
    int (*read_wait)(void *ctx, uint64_t ticket);
    /* Optional, all or none: collectives among ranks on the device (cuda:
     * NCCL, dlopened when first asked; dlg_net_set_device_reduce and
     * dlg_dev_* in nn.h).  coll_id: a new communicator id into id (at most
     * DLG_COLL_ID_BYTES), on rank 0; coll_open: join it as rank of ranks,
     * collective (every rank together), one communicator per ctx, closed
     * by close(); coll_allreduce: sum count elements of type t (dlg_dev_type)
     * from send into recv (equal: in place), enqueued on the compute stream
     * after the work so far (may be captured); coll_sendrecv: send to rank
     * `to` and receive from rank `from` in one group, likewise.  Errors:
     * -DLG_E* with a line in err (coll_id: -DLG_ENOTSUP when no collective
     * library can be loaded, saying which was looked for; with id NULL it
     * only loads the library, a probe for the ranks other than 0: making
     * an id may start a listener, as NCCL's does). */
    int (*coll_id)(void *ctx, void *id, size_t *len, char *err, size_t errlen);
    int (*coll_open)(void *ctx, int ranks, int rank, const void *id, size_t len, char *err,
                     size_t errlen);
    int (*coll_allreduce)(void *ctx, const void *send, void *recv, size_t count, int t,
                          char *err, size_t errlen);
    int (*coll_sendrecv)(void *ctx, const void *send, int to, void *recv, int from, size_t count,
                         int t, char *err, size_t errlen);
    /* With them: n in-place float sums (p[i] holds c[i] floats) as one
     * group, which NCCL runs as few fused launches instead of n (a net's
     * gradients, dlg_net_set_device_reduce: ~160 for ResNet-50). */
    int (*coll_allreduce_n)(void *ctx, float *const *p, const int64_t *c, int n, char *err,
                            size_t errlen);
} dlg_backend;

/* Bytes of a collective communicator's id (NCCL_UNIQUE_ID_BYTES). */
#define DLG_COLL_ID_BYTES 128

/* Registered backends, by name; NULL if unknown or not built. */
const dlg_backend *dlg_backend_find(const char *name);
/* The same with the reason for a NULL in why: an unknown name, or a CUDA
 * backend whose module is missing or from another build (cuda_module.h). */
const dlg_backend *dlg_backend_lookup(const char *name, char *why, size_t whylen);
/* 0 when the cpu-bf16 backend can run here (oneDNN's bf16 kernels: an
 * AVX-512 CPU, within ONEDNN_MAX_CPU_ISA), else -DLG_ENOTSUP with the line
 * its open() fails with, so a workload's check refuses what setup would. */
int dlg_cpu_bf16_usable(char *err, size_t errlen);

/* Per-channel scale and shift of a batch norm running on its running
 * statistics (inference): bn(v) = scale * v + shift, scale = gamma /
 * sqrt(var + eps), shift = beta - mean * scale.  For folded convolutions;
 * host memory (cpu and ref backends). */
void dlg_bn_fold(const dlg_layer *bn, float *scale, float *shift);

#endif
