/* Tensors and layer descriptions shared by the engine core and backends.
 * Backends see only these structs, never the net, so a new backend needs
 * nothing beyond tensor.h and backend.h. */
#ifndef DLG_NN_TENSOR_H
#define DLG_NN_TENSOR_H

#include <dlgauge/nn.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A tensor's memory is owned by the backend that planned it.  `diff` is
 * NULL when no gradient is needed; `hist` (SGD momentum) only for params.
 * Data and diff share one layout: plain NCHW unless the producing kernel
 * chose a backend-specific one (oneDNN blocked, say), which it may only do
 * when the net set opaque_ok (every reader of the tensor understands it).
 * A parameter read by one layer only may take that layer's layout too
 * (oneDNN's blocked convolution weights): SGD is element-wise, and host
 * reads and writes convert. */
typedef struct dlg_tensor {
    dlg_shape shape;
    dlg_dtype dtype;
    int64_t count;
    void *data;
    void *diff;
    void *hist;
    bool opaque_ok;      /* set by the net before the producer's setup */
    const void *layout;  /* set by the producer's setup; NULL = plain */
    int64_t alloc_count; /* elements to allocate (>= count when padded) */
    /* Bumped whenever the host or SGD changes `data` (params and inputs):
     * a kernel caching something derived from a tensor (a batch norm
     * folded into convolution weights) rebuilds it when this moves. */
    uint64_t version;
} dlg_tensor;

typedef enum dlg_layer_type {
    DLG_L_INPUT = 0,
    DLG_L_CONV,
    DLG_L_POOL,
    DLG_L_LRN,
    DLG_L_RELU,
    DLG_L_BN,
    DLG_L_FC,
    DLG_L_DROPOUT,
    DLG_L_CONCAT,
    DLG_L_ADD,
    DLG_L_SOFTMAX,
    DLG_L_LOSS,
    DLG_L_SPLIT, /* inserted at plan time: one blob read by several layers */
    DLG_L_EMBED, /* token ids -> rows of a table (core/nn/seq.c) */
    DLG_L_LSTM,  /* one LSTM layer over a whole sequence (core/nn/seq.c) */
    DLG_L_NTYPES
} dlg_layer_type;

typedef enum dlg_pool_mode { DLG_POOL_MAX = 0, DLG_POOL_AVG = 1 } dlg_pool_mode;

/* The epilogue an inference plan may fold into a convolution (kernels say
 * fuses_epilogue), in this order:
 *   bn        the batch norm that alone read the output: scale * v + shift
 *             with dlg_bn_fold's per-channel scale/shift (NULL: none);
 *   residual  an eltwise add that alone read it: + bottom[1], the add's
 *             other operand (ResNet's shortcut);
 *   relu      a ReLU that alone read the result (a batch norm's folded
 *             ReLU moves here too): max(0, v).
 * y = relu?(residual?(bn?(conv(x) + bias))). */
struct dlg_layer;
typedef struct dlg_conv_param {
    int kh, kw, sh, sw, ph, pw, dh, dw, groups;
    bool bias;
    const struct dlg_layer *bn;
    bool residual, relu;
    /* Set by the planner before setup: nothing reads the residual after
     * this layer, so top[0] may take bottom[1]'s memory (the kernel adds
     * the convolution into it; its in_place() then says so). */
    bool in_place_ok;
} dlg_conv_param;

typedef struct dlg_pool_param {
    dlg_pool_mode mode;
    int kh, kw, sh, sw, ph, pw;
    bool global;
    bool floor; /* output size rounded down (DLG_POOL_FLOOR), else Caffe's ceil */
} dlg_pool_param;

typedef struct dlg_lrn_param {
    int size;
    float alpha, beta, k;
} dlg_lrn_param;

/* relu: the planner folded the following ReLU into this layer (the kernels
 * said fuses_relu): y = max(0, bn(x)), and backward masks dy by y > 0.
 * residual: a training plan folded the eltwise add that alone read the
 * output into it (the kernels said fuses_residual), its other operand now
 * bottom[1]: y = bn(x) + bottom[1] (then the ReLU), and backward gives
 * bottom[1] the output's gradient (masked by y > 0) as the add did. */
typedef struct dlg_bn_param {
    float eps, momentum;
    bool relu, residual;
} dlg_bn_param;

/* Eltwise add; relu: the planner folded the following ReLU into it (the
 * kernels said fuses_relu): y = max(0, a + b), and backward passes dy
 * where y > 0 to both inputs. */
typedef struct dlg_add_param {
    bool relu;
} dlg_add_param;

/* Embedding: `accumulate` when the table is shared with a later layer
 * (tied decoder) whose backward already wrote its gradient. */
typedef struct dlg_embed_param {
    int64_t vocab;
    bool accumulate;
} dlg_embed_param;

/* LSTM over T steps: bottoms x (T*B rows, time-major), h0, c0 (B x H);
 * tops y (T*B x H), hT, cT; params Wx (I x 4H), Wh (H x 4H), bias (4H),
 * gate order i, f, g, o (oneDNN's and PyTorch's). */
typedef struct dlg_lstm_param {
    int steps, hidden;
} dlg_lstm_param;

#define DLG_LAYER_MAX_PARAMS 4

/* What a kernel sees of one layer.  BN params: 0 gamma, 1 beta, 2 running
 * mean, 3 running variance (the last two are not trained). */
typedef struct dlg_layer {
    dlg_layer_type type;
    const char *name;
    union {
        dlg_conv_param conv;
        dlg_pool_param pool;
        dlg_lrn_param lrn;
        dlg_bn_param bn;
        dlg_add_param add;
        float dropout_ratio;
        float loss_weight; /* softmax loss: its gradient is scaled by this */
        dlg_embed_param embed;
        dlg_lstm_param lstm;
    } p;
    int nbottom, ntop, nparam;
    dlg_tensor **bottom; /* [nbottom] */
    dlg_tensor **top;    /* [ntop] */
    dlg_tensor *param[DLG_LAYER_MAX_PARAMS];
    bool *prop_down; /* [nbottom]: write bottom[i]->diff in backward */
    /* Add in training: the planner folded into this layer the backward of
     * the split that alone reads top[0] (kernels say sums_top_parts), so
     * top[0]'s gradient is the sum of these tensors' diffs (the split's
     * outputs) and top[0]->diff is not stored.  0: it is top[0]->diff. */
    int ntop_parts;
    dlg_tensor **top_parts; /* [ntop_parts] */
    bool param_grad; /* write param diffs in backward */
    bool train;      /* net phase (dlg_net_set_train can flip it) */
    bool backward;   /* backward() will be called: planned for training */
    uint64_t seed;   /* per layer: dropout masks */
    void *ws;        /* shared scratch of the size setup() asked for */
} dlg_layer;

static inline int64_t dlg_shape_count(const dlg_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= s->d[i];
    return n;
}

/* Elements stored: count, or more for a padded backend layout (whose
 * padding is zero, so element-wise updates may run over all of it). */
static inline int64_t dlg_tensor_elems(const dlg_tensor *t)
{
    return t->alloc_count > t->count ? t->alloc_count : t->count;
}

/* Elements per image: count / N. */
static inline int64_t dlg_shape_inner(const dlg_shape *s)
{
    return s->d[0] ? dlg_shape_count(s) / s->d[0] : 0;
}

/* An LSTM layer's sizes: T steps, B streams, I inputs, H hidden (its input
 * holds T*B rows of I, time-major; dlg_lstm_param). */
typedef struct dlg_lstm_dims {
    int64_t T, B, I, H;
} dlg_lstm_dims;

/* B is 0 for steps < 1 (the planner refuses it; no division by zero). */
static inline dlg_lstm_dims dlg_lstm_dims_of(const dlg_layer *l)
{
    const dlg_shape *x = &l->bottom[0]->shape;
    int64_t T = l->p.lstm.steps;
    return (dlg_lstm_dims){T, T > 0 ? x->d[0] / T : 0, dlg_shape_inner(x), l->p.lstm.hidden};
}

#endif
