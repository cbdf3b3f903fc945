/* The net: named blobs and layers in topological order.  Private to
 * core/nn; model code uses include/dlgauge/nn.h, backends tensor.h. */
#ifndef DLG_NN_NET_H
#define DLG_NN_NET_H

#include "backend.h"
#include "tensor.h"

#include <dlgauge/plugin.h>

typedef struct dlg_blob {
    char *name;
    dlg_tensor t;
    int producer; /* layer index, -1 for inputs and params */
    int alias_of; /* split outputs share this blob's data; -1 otherwise */
    bool is_param;
    bool is_state; /* a param the layer updates itself (batch-norm statistics), never trained */
    bool is_input, is_label;
    bool needs_grad; /* decided at plan time */
    bool keep;       /* never shares memory (dlg_net_keep) */
    bool shared_data, shared_diff; /* in an arena, reused by other blobs */
    bool dead;       /* never stored: the layer reading it was folded into its producer */
    float lr_mult, decay_mult;
    dlg_filler fill;
    int64_t fan_in;
} dlg_blob;

/* A parameter SGD updates and gradient clipping measures: it has a
 * gradient and a learning rate.  A frozen one (lr_mult 0) may still get a
 * gradient, when a sibling in its layer is trained. */
static inline bool dlg_blob_trained(const dlg_blob *b)
{
    return b->is_param && b->t.diff && b->lr_mult > 0;
}

typedef struct dlg_node {
    dlg_layer l;  /* the kernel's view, tensors bound at plan time */
    int *bottoms; /* blob ids */
    int *tops;
    int params[DLG_LAYER_MAX_PARAMS];
    int64_t nparams, macs; /* macs: forward multiply-adds per image */
    bool need_backward;
    bool fused; /* folded into the layer before it (ReLU into batch norm, batch
                 * norm into convolution): runs nothing */
    int bwd_into;   /* >= 0: that layer runs this one's backward (a split
                     * whose sum an add took over); -1: itself */
    int grad_split; /* >= 0: this layer sums that split's output gradients */
    const dlg_kernels *k;
    void *kctx;
    void *state;
    size_t ws;
    uint64_t fwd_ns, bwd_ns, fwd_calls; /* dlg_plan_opts.profile */
} dlg_node;

struct dlg_net {
    char *name;
    int err;
    char msg[512];
    dlg_blob *blobs;
    int nblobs, cap_blobs;
    dlg_node *nodes;
    int nnodes, cap_nodes;
    dlg_filler wfill, bfill;
    bool pool_floor; /* dlg_net_set_pool_rounding: next pools round down */
    /* after dlg_net_plan */
    bool planned, train, input_grads;
    uint64_t seed;
    const dlg_backend *bk;
    void *ctx, *fctx;
    void *ws;
    bool keep_all;         /* no memory sharing (dlg_plan_opts.keep_all) */
    bool profile;          /* time every layer call (dlg_plan_opts.profile) */
    /* the profile on a device timeline (profile.c; prof_cap 0: the host
     * clock times each call): per mark recorded and not yet read, the node
     * it ends (node * 2, + 1 for its backward) or -1 where a pass starts */
    int prof_cap, prof_used;
    int *prof_what;
    uint64_t *prof_ns; /* prof_read's times, prof_cap - 1 of them */
    bool timer_open;   /* between dlg_net_timer_begin and _end */
    /* dlg_plan_opts.stop, while dlg_net_plan runs (NULL after) */
    bool (*stop)(void *ctx);
    void *stop_ctx;
    void *arena[2];        /* shared activations, shared gradients */
    size_t arena_bytes[2];
    size_t own_bytes;      /* blobs, gradients and momentum outside the arenas */
    uint64_t steps;        /* dlg_net_train_step/infer_step calls that worked */
    uint64_t read_ticket; /* the last dlg_net_read_async ticket given (blob_ops.c) */
    struct dlg_input *input; /* asynchronous input writes (input.c); NULL: none yet */
    /* the trained params' gradients as (pointer, floats) lists for a
     * backend's clip hooks (clip.c): sized at plan time, so a clip inside a
     * timed or captured step allocates nothing */
    float **grad_p;
    int64_t *grad_c;
    int grad_cap;
    /* data-parallel training (grad_reduce.c, dlg_net_set_grad_reduce):
     * reduce_fn NULL: none; the bucket is allocated when it is set */
    dlg_grad_reduce_fn reduce_fn;
    void *reduce_ctx;
    int reduce_ranks;
    float *reduce_buf;
    size_t reduce_cap; /* floats in reduce_buf */
    /* data-parallel training on a device (dev_reduce.c,
     * dlg_net_set_device_reduce): dev_ranks 0: none.  The ctx's
     * communicator is opened at the first step that reduces; comm_ranks/
     * comm_rank say for what (0: not yet), as it lives until close() */
    int dev_ranks, dev_rank;
    dlg_id_bcast_fn dev_bcast;
    void *dev_bcast_ctx;
    unsigned char dev_id[DLG_COLL_ID_BYTES]; /* rank 0's, made when set */
    size_t dev_id_len;
    int comm_ranks, comm_rank;
    /* a train step ran on this ctx; the device reduce was set or removed
     * after one: a captured step would replay the old one, so train steps
     * run eagerly from then (step.c) */
    bool trained, dev_eager;
    /* > 1: the stored gradients are the sum over this many ranks (set by
     * the reduce, cleared by backward); clip and update divide by it */
    int grad_sum;
};

int dlg_net_fail(dlg_net *net, int code, const char *fmt, ...) DLG_PRINTF(3, 4);
/* The same message without making the error sticky (misused host IO). */
int dlg_net_complain(dlg_net *net, int code, const char *fmt, ...) DLG_PRINTF(3, 4);
int dlg_net_add_blob(dlg_net *net, const char *name, const dlg_shape *shape);
/* Shape inference, parameter creation and counting for a new node. */
int dlg_layer_infer(dlg_net *net, dlg_node *n);
const char *dlg_layer_type_name(dlg_layer_type t);
/* Inserts split layers, binds tensors, allocates, initialises params. */
int dlg_net_plan_memory(dlg_net *net);
void dlg_net_free_memory(dlg_net *net);
/* The profile on a device timeline (profile.c), where the backend has
 * prof_mark: dlg_net_prof_open makes the marks at plan time (0 with no
 * profile or no such backend); before each forward or backward pass,
 * dlg_net_prof_pass makes room for it (reading the marks so far when it
 * would not fit: a wait) and records its start; dlg_net_prof_node records
 * the end of node i's call; dlg_net_prof_read adds the times of the marks
 * recorded so far to their nodes (a wait for the last); dlg_net_prof_free
 * frees the engine's side (the backend's, at close). */
int dlg_net_prof_open(dlg_net *net);
int dlg_net_prof_pass(dlg_net *net);
int dlg_net_prof_node(dlg_net *net, int i, bool backward);
int dlg_net_prof_read(dlg_net *net);
/* After a public forward, backward or step call: the marks read, unless a
 * step timer is running (dlg_net_timer_end reads them then, so that the
 * read's wait falls outside the timed step); a failure is the net's. */
int dlg_net_prof_settle(dlg_net *net);
void dlg_net_prof_free(dlg_net *net);
/* Folds ReLUs into batch norms where the backend can (fuse.c). */
int dlg_net_fuse(dlg_net *net);
/* Blob memory, shared by lifetime where allowed (share.c). */
int dlg_net_alloc_blobs(dlg_net *net);
/* In-place residuals (share.c): before setup, offers in_place_ok to the
 * convolutions of an inference plan that alone last read their residual;
 * after setup, makes the top of each that took it share the residual's
 * memory. */
void dlg_net_offer_in_place(dlg_net *net);
void dlg_net_take_in_place(dlg_net *net);
void dlg_net_free_blobs(dlg_net *net);
int dlg_net_init_params(dlg_net *net);
/* Whether the plan's caller asks it to stop (dlg_plan_opts.stop): then
 * the net fails with DLG_ESTOP and this returns true. */
bool dlg_net_plan_stopped(dlg_net *net);

/* For layer files beside layers.c (seq.c): append a node with a prototype
 * (as the builders do), add its first top, add a trained parameter. */
int dlg_net_add_node(dlg_net *net, const char *name, dlg_layer_type type, int nb,
                     const int *bottoms, const dlg_node *proto);
int dlg_layer_add_top(dlg_net *net, dlg_node *n, const char *name, dlg_shape s);
int dlg_layer_add_param(dlg_net *net, dlg_node *n, dlg_shape s, dlg_filler f, int64_t fan_in,
                        float lr_mult, float decay_mult);
/* 0 if the net is planned and without a sticky error (run.c); _bound
 * also binds the calling thread to the backend. */
int dlg_net_ready(dlg_net *net);
int dlg_net_ready_bound(dlg_net *net);
/* The checks of a host read or write of count floats of a blob (run.c):
 * 0 and the blob's data or diff memory, or a non-sticky error. */
int dlg_net_host_io(dlg_net *net, int blob, dlg_which which, size_t count, void **mem);
/* The eager passes (run.c): errors come back with a message in err and
 * are not made sticky, so a backend may retry them (step.c). */
int dlg_net_run_forward(dlg_net *net, char *err, size_t errlen);
int dlg_net_run_backward(dlg_net *net, char *err, size_t errlen);
int dlg_net_run_sgd(dlg_net *net, const dlg_sgd *sgd, char *err, size_t errlen);
/* Whether the backend's memory is host memory (ref, and cpu which shares
 * it): read and written in place (clip.c). */
bool dlg_bk_host_memory(const dlg_backend *bk);
/* The backend's coll_id (dev_coll.c), for dlg_net_set_device_reduce and
 * dlg_dev_*: with id, rank 0's new communicator id (*len: id's room in,
 * its bytes out); with id NULL a probe that only loads the library (NCCL),
 * so a rank without it is refused in setup, not in the first step's join.
 * -DLG_E* with one line in err.  The caller binds the thread. */
int dlg_bk_coll_id(const dlg_backend *b, void *ctx, void *id, size_t *len, char *err,
                   size_t errlen);
/* Whether the backend clips on the device (hooks grad_clip and
 * clip_stats): nothing decided on the host, so a step may be captured. */
bool dlg_net_clips_on_device(const dlg_net *net);
/* dlg_net_clip_grads inside a step (clip.c): the device hook where the
 * backend has it (enqueued, capturable), else the host norm; *lr_factor as
 * dlg_net_clip_grads's (NULL: the gradients are scaled).  Binds nothing. */
int dlg_net_run_clip(dlg_net *net, double max_norm, dlg_clip_stats *st, float *lr_factor,
                     char *err, size_t errlen);
/* The gradients summed across ranks through the net's reduce callback
 * (grad_reduce.c; grad_sum says so after); 0 at once without one.  Between
 * backward and the clip/update of a train step; errors in err, not sticky. */
int dlg_net_run_reduce(dlg_net *net, char *err, size_t errlen);
/* sgd for gradients that hold a sum over grad_sum ranks: the update of
 * their mean (lr / N, weight decay x N); sgd itself otherwise. */
dlg_sgd dlg_net_reduced_sgd(const dlg_net *net, const dlg_sgd *sgd);
/* Both reduces removed (planning again: the ctx, and its communicator,
 * closes with the memory). */
void dlg_net_free_reduce(dlg_net *net);
/* The device reduce (dev_reduce.c): dlg_net_dev_reduce_open joins the
 * ranks' communicator at the first step that reduces (collective, outside
 * any capture; errors sticky); dlg_net_run_dev_reduce sums the trained
 * gradients in place on the compute stream (enqueued, capturable; errors
 * in err, not sticky), 0 at once without one. */
int dlg_net_dev_reduce_open(dlg_net *net);
int dlg_net_run_dev_reduce(dlg_net *net, char *err, size_t errlen);
void dlg_net_clear_dev_reduce(dlg_net *net);
/* The gradient lists of the clip hooks (clip.c), for a training plan;
 * freed by dlg_net_free_grad_list (from dlg_net_free_memory). */
int dlg_net_plan_grad_list(dlg_net *net);
/* Those lists filled with the trained gradients (their memory now), n of
 * them. */
int dlg_net_list_grads(dlg_net *net, int *n);
void dlg_net_free_grad_list(dlg_net *net);

/* Shapes and parameters of embedding and LSTM nodes (seq.c). */
int dlg_layer_infer_seq(dlg_net *net, dlg_node *n);

/* Elements one blob may hold (2^48 floats, 1 PiB): a blob's padded bytes
 * then never overflow, and the builder refuses larger shapes up front. */
#define DLG_NN_MAX_COUNT ((int64_t)1 << 48)
/* What a backend's sticky bad-input flag (-DLG_EINVAL from a read) means. */
#define DLG_NN_BAD_INPUT "nn: a step saw a bad input (e.g. a label outside 0..K-1)"

/* *out = a * b, false if that overflows int64 (a, b >= 0). */
static inline bool dlg_mul_ok(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

static inline dlg_shape dlg_shape4(int64_t n, int64_t c, int64_t h, int64_t w)
{
    dlg_shape s = {4, {n, c, h, w, 1}};
    return s;
}

#endif
