/* The LSTM layer on cuDNN's v8 RNN API: one cuDNN RNN of one layer per
 * engine layer.
 *
 * Mapping (checked against ref_lstm.c and the cuDNN 9.19 headers):
 * - cell: CUDNN_LSTM, unidirectional, CUDNN_LINEAR_INPUT, no projection
 *   (projSize = hiddenSize), no cell clipping, no dropout (a zero-rate
 *   dropout descriptor, as PyTorch passes for one layer).
 * - bias: the engine has one bias per gate, so CUDNN_RNN_SINGLE_INP_BIAS
 *   (cuDNN adds it in the input GEMM; the recurrent GEMM has none).
 * - gates: the engine's order is i, f, g, o (the columns of Wx, Wh, bias);
 *   cuDNN's linear layers 0..3 (input) and 4..7 (recurrent) are i, f, g
 *   ("new memory"), o: the same order.  cuDNN keeps each as an H x in
 *   row-major matrix, the transpose of the engine's in x H column block,
 *   so weights are packed with a transposing kernel and the weight
 *   gradient unpacked the same way (cuda_seq_kernels.cu), on the stream,
 *   at every forward/backward: the engine's params stay the master copy
 *   that SGD and host IO see.  Where each matrix and bias lives in the
 *   weight space is asked of cudnnGetRNNWeightParams at setup, and its
 *   shape checked, so no layout is assumed.
 * - data: x is T*B rows of I (time-major), y T*B rows of H: exactly
 *   CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED with every sequence T long
 *   (with padded I/O disabled, the pair cuDNN documents).  h0/c0 and
 *   hT/cT are B x H: cuDNN's [layers=1][B][H].
 * - memory: weight space, its gradient, the reserve space (it carries
 *   forward's activations to backward, so it lives here) and the device
 *   copy of the sequence lengths are allocated at setup; the workspace is
 *   the engine's shared per-layer scratch (l->ws), followed by spare
 *   gradient buffers for inputs that need none (cuDNN's backward-data
 *   call always produces dx; passing buffers for dhx/dcx too avoids
 *   relying on NULL being accepted there).
 * - weight gradient: cudnnRNNBackwardWeights_v8 with CUDNN_WGRAD_MODE_ADD
 *   into a gradient space zeroed just before (the mode every v8 user
 *   passes; cuDNN 8 documented ADD as the only one supported), then
 *   unpacked over the engine's param diffs: overwrite, never accumulate.
 * - math: fp32 backend CUDNN_FMA_MATH (no TF32: what PyTorch passes with
 *   allow_tf32 off); tf32 and the half backends CUDNN_DEFAULT_MATH, which
 *   lets cuDNN use TF32 tensor cores (PyTorch's default).
 * Not verified on a GPU yet (see README.md). */
#include "cuda_seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K(call) dlg_cuda_ok((cudaError_t)(call))
#define ALIGN 256

typedef struct lstm_state {
    int T, B, I, H;
    cudnnForwardMode_t mode;
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t drop;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd; /* h0, c0, hT, cT and their gradients */
    int32_t *seq;               /* device: B lengths, all T */
    char *w, *dw;               /* weight space and its gradient */
    size_t wbytes, rbytes, work;
    void *reserve;
    size_t off_dx, off_dh, off_dc; /* spare gradients in l->ws (inputs not prop_down) */
    dlg_cuk_gates mx, mh, mb;      /* gate matrices (input, recurrent), biases in w */
    dlg_cuk_gates gx, gh, gb;      /* the same places in dw */
} lstm_state;

static size_t align_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

static void lstm_destroy(void *ctx, void *vs)
{
    lstm_state *s = vs;
    if (!s)
        return;
    if (s->rnn)
        cudnnDestroyRNNDescriptor(s->rnn);
    if (s->drop)
        cudnnDestroyDropoutDescriptor(s->drop);
    if (s->xd)
        cudnnDestroyRNNDataDescriptor(s->xd);
    if (s->yd)
        cudnnDestroyRNNDataDescriptor(s->yd);
    if (s->hd)
        cudnnDestroyTensorDescriptor(s->hd);
    cudaFree(s->seq);
    cudaFree(s->w);
    cudaFree(s->dw);
    cudaFree(s->reserve);
    free(s);
}

/* The RNN descriptor; FMA math (fp32) falls back to the default, with a
 * note, should this cuDNN refuse it for RNNs. */
static int describe_rnn(dlg_cuda_ctx *c, lstm_state *s, char *err, size_t errlen)
{
    int rc = dlg_cudnn_err(cudnnCreateDropoutDescriptor(&s->drop), "dropout descriptor", err,
                           errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetDropoutDescriptor(s->drop, c->dnn, 0.0f, NULL, 0, 0),
                           "cudnnSetDropoutDescriptor (rate 0)", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateRNNDescriptor(&s->rnn), "RNN descriptor", err, errlen);
    if (rc)
        return rc;
    cudnnMathType_t math = c->math == DLG_CUDA_FP32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
    for (;;) {
        cudnnStatus_t st = cudnnSetRNNDescriptor_v8(
            s->rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
            CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, math,
            s->I, s->H, s->H /* projSize = hidden: no projection */, 1, s->drop,
            CUDNN_RNN_PADDED_IO_DISABLED);
        if (st != CUDNN_STATUS_SUCCESS && math == CUDNN_FMA_MATH) {
            dlg_cuda_note_once(c, DLG_CUDA_NOTE_RNN_MATH,
                               "cuDNN refused FMA math for the LSTM; it runs with the default "
                               "math (TF32 may be used)");
            math = CUDNN_DEFAULT_MATH;
            continue;
        }
        return dlg_cudnn_err(st, "cudnnSetRNNDescriptor_v8 (LSTM)", err, errlen);
    }
}

static int describe_data(dlg_cuda_ctx *c, lstm_state *s, char *err, size_t errlen)
{
    int *len = malloc((size_t)s->B * sizeof(int));
    if (!len)
        return -DLG_ENOMEM;
    for (int b = 0; b < s->B; b++)
        len[b] = s->T;
    int rc = dlg_cudnn_err(cudnnCreateRNNDataDescriptor(&s->xd), "RNN data descriptor", err,
                           errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateRNNDataDescriptor(&s->yd), "RNN data descriptor", err,
                           errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetRNNDataDescriptor(s->xd, CUDNN_DATA_FLOAT,
                                                     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, s->T,
                                                     s->B, s->I, len, NULL),
                           "cudnnSetRNNDataDescriptor (x)", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetRNNDataDescriptor(s->yd, CUDNN_DATA_FLOAT,
                                                     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, s->T,
                                                     s->B, s->H, len, NULL),
                           "cudnnSetRNNDataDescriptor (y)", err, errlen);
    int dims[3] = {1, s->B, s->H}, strides[3] = {s->B * s->H, s->H, 1};
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateTensorDescriptor(&s->hd), "state descriptor", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetTensorNdDescriptor(s->hd, CUDNN_DATA_FLOAT, 3, dims, strides),
                           "state descriptor", err, errlen);
    /* cuDNN reads the lengths on the device, asynchronously.  Copied on
     * the net's stream and waited for: that stream is non-blocking, so a
     * copy on the legacy default stream would not be ordered before it. */
    if (!rc)
        rc = dlg_cuda_err(cudaMalloc((void **)&s->seq, (size_t)s->B * sizeof(int32_t)),
                          "LSTM sequence lengths", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMemcpyAsync(s->seq, len, (size_t)s->B * sizeof(int32_t),
                                          cudaMemcpyHostToDevice, c->stream),
                          "LSTM sequence lengths", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaStreamSynchronize(c->stream), "LSTM sequence lengths", err,
                          errlen);
    free(len);
    return rc;
}

/* Is d (from cudnnGetRNNWeightParams) a dense float rows x cols matrix,
 * row-major (cols = 1: a vector)?  Unit dimensions are ignored, so
 * {1, H, in} and {H, in, 1} both pass; anything else fails setup loudly
 * rather than packing into the wrong places. */
static bool dense_is(cudnnTensorDescriptor_t d, int rows, int cols)
{
    cudnnDataType_t t;
    int nd = 0, dims[8] = {0}, strides[8] = {0}, kd[8], ks[8], k = 0;
    if (cudnnGetTensorNdDescriptor(d, 8, &t, &nd, dims, strides) != CUDNN_STATUS_SUCCESS ||
        t != CUDNN_DATA_FLOAT || nd < 1 || nd > 8)
        return false;
    for (int i = 0; i < nd; i++)
        if (dims[i] != 1) {
            kd[k] = dims[i];
            ks[k++] = strides[i];
        }
    if (k == 0)
        return rows == 1 && cols == 1;
    if (k == 1)
        return (int64_t)kd[0] == (int64_t)rows * cols && ks[0] == 1;
    return k == 2 && kd[0] == rows && kd[1] == cols && ks[0] == cols && ks[1] == 1;
}

/* Where cuDNN keeps each gate's matrices and bias (in w; dw alike). */
static int locate_weights(dlg_cuda_ctx *c, lstm_state *s, char *err, size_t errlen)
{
    cudnnTensorDescriptor_t md = NULL, bd = NULL;
    int rc = dlg_cudnn_err(cudnnCreateTensorDescriptor(&md), "tensor descriptor", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateTensorDescriptor(&bd), "tensor descriptor", err, errlen);
    void *bias[8] = {NULL};
    for (int lin = 0; lin < 8 && !rc; lin++) {
        void *m = NULL, *b = NULL;
        rc = dlg_cudnn_err(cudnnGetRNNWeightParams(c->dnn, s->rnn, 0, s->wbytes, s->w, lin, md,
                                                   &m, bd, &b),
                           "cudnnGetRNNWeightParams", err, errlen);
        int in = lin < 4 ? s->I : s->H;
        if (!rc && (!m || !dense_is(md, s->H, in))) {
            snprintf(err, errlen,
                     "cuDNN's LSTM weight matrix %d is not a dense %d x %d float matrix", lin,
                     s->H, in);
            rc = -DLG_ENOTSUP;
        }
        if (!rc && b && !dense_is(bd, s->H, 1)) {
            snprintf(err, errlen, "cuDNN's LSTM bias %d is not %d floats", lin, s->H);
            rc = -DLG_ENOTSUP;
        }
        if (rc)
            break;
        (lin < 4 ? &s->mx : &s->mh)->p[lin % 4] = m;
        bias[lin] = b;
    }
    for (int g = 0; g < 4 && !rc; g++) {
        /* single bias: expected on the input GEMM; take the recurrent one
         * should this cuDNN report it there */
        s->mb.p[g] = bias[g] ? bias[g] : bias[g + 4];
        if (!s->mb.p[g]) {
            snprintf(err, errlen, "cuDNN reports no bias for LSTM gate %d", g);
            rc = -DLG_ENOTSUP;
        }
    }
    if (md)
        cudnnDestroyTensorDescriptor(md);
    if (bd)
        cudnnDestroyTensorDescriptor(bd);
    for (int g = 0; g < 4 && !rc && s->dw; g++) {
        s->gx.p[g] = (float *)(s->dw + ((char *)s->mx.p[g] - s->w));
        s->gh.p[g] = (float *)(s->dw + ((char *)s->mh.p[g] - s->w));
        s->gb.p[g] = (float *)(s->dw + ((char *)s->mb.p[g] - s->w));
    }
    return rc;
}

/* Zeroed on the net's stream and waited for (as cuda_alloc does): a
 * cudaMemset on the legacy default stream is not ordered before the
 * non-blocking stream's kernels, so it could land after forward packed
 * the weights. */
static int alloc_zero(dlg_cuda_ctx *c, void **p, size_t bytes, const char *what, char *err,
                      size_t errlen)
{
    int rc = dlg_cuda_err(cudaMalloc(p, bytes ? bytes : ALIGN), what, err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMemsetAsync(*p, 0, bytes, c->stream), what, err, errlen);
    return rc ? rc : dlg_cuda_err(cudaStreamSynchronize(c->stream), what, err, errlen);
}

static int lstm_alloc(dlg_cuda_ctx *c, const dlg_layer *l, lstm_state *s, size_t *ws, char *err,
                      size_t errlen)
{
    int rc = dlg_cudnn_err(cudnnGetRNNWeightSpaceSize(c->dnn, s->rnn, &s->wbytes),
                           "cudnnGetRNNWeightSpaceSize", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(
            cudnnGetRNNTempSpaceSizes(c->dnn, s->rnn, s->mode, s->xd, &s->work, &s->rbytes),
            "cudnnGetRNNTempSpaceSizes", err, errlen);
    if (s->mode != CUDNN_FWD_MODE_TRAINING)
        s->rbytes = 0;
    /* zeroed: any part of the weight space not packed stays 0 */
    if (!rc)
        rc = alloc_zero(c, (void **)&s->w, s->wbytes, "LSTM weight space", err, errlen);
    if (!rc && l->backward && l->param_grad)
        rc = alloc_zero(c, (void **)&s->dw, s->wbytes, "LSTM weight gradient", err, errlen);
    if (!rc && s->rbytes)
        rc = alloc_zero(c, &s->reserve, s->rbytes, "LSTM reserve space", err, errlen);
    size_t at = align_up(s->work), nx = (size_t)s->T * s->B * s->I * sizeof(float),
           nh = (size_t)s->B * s->H * sizeof(float);
    if (l->backward) {
        if (!l->prop_down[0]) {
            s->off_dx = at;
            at += align_up(nx);
        }
        if (!l->prop_down[1]) {
            s->off_dh = at;
            at += align_up(nh);
        }
        if (!l->prop_down[2]) {
            s->off_dc = at;
            at += align_up(nh);
        }
    }
    *ws = at;
    return rc;
}

static int lstm_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    dlg_cuda_ctx *c = ctx;
    int64_t T = l->p.lstm.steps, H = l->p.lstm.hidden, I = dlg_shape_inner(&l->bottom[0]->shape);
    int64_t B = T ? l->bottom[0]->shape.d[0] / T : 0;
    if (T < 1 || B < 1 || H < 1 || I < 1 || T * B > INT32_MAX || B * H > INT32_MAX ||
        I > INT32_MAX || H > INT32_MAX) {
        snprintf(err, errlen, "LSTM sizes (steps %lld, batch %lld, input %lld, hidden %lld) "
                 "out of cuDNN's int range", (long long)T, (long long)B, (long long)I,
                 (long long)H);
        return -DLG_ENOTSUP;
    }
    lstm_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    *s = (lstm_state){.T = (int)T, .B = (int)B, .I = (int)I, .H = (int)H,
                      .mode = l->backward ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE};
    int rc = describe_rnn(c, s, err, errlen);
    if (!rc)
        rc = describe_data(c, s, err, errlen);
    if (!rc)
        rc = lstm_alloc(c, l, s, ws, err, errlen);
    if (!rc)
        rc = locate_weights(c, s, err, errlen);
    if (rc < 0) {
        lstm_destroy(ctx, s);
        return rc;
    }
    for (int t = 0; t < l->ntop; t++)
        l->top[t]->layout = NULL;
    *state = s;
    return 0;
}

static int lstm_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    lstm_state *s = vs;
    int rc = K(dlg_cuk_lstm_pack(c->stream, CF(l->param[0]), s->I, s->H, s->mx));
    if (!rc)
        rc = K(dlg_cuk_lstm_pack(c->stream, CF(l->param[1]), s->H, s->H, s->mh));
    if (!rc)
        rc = K(dlg_cuk_lstm_pack_bias(c->stream, CF(l->param[2]), s->H, s->mb));
    if (rc)
        return rc;
    return dlg_cudnn_ok(cudnnRNNForward(
        c->dnn, s->rnn, s->mode, s->seq, s->xd, CF(l->bottom[0]), s->yd, CF(l->top[0]), s->hd,
        CF(l->bottom[1]), CF(l->top[1]), s->hd, CF(l->bottom[2]), CF(l->top[2]), s->wbytes, s->w,
        s->work, s->work ? l->ws : NULL, s->rbytes, s->reserve));
}

/* a gradient the net wants, or this layer's spare buffer in the workspace */
static void *grad_or_spare(const dlg_layer *l, int j, size_t off)
{
    return l->prop_down[j] ? l->bottom[j]->diff : (char *)l->ws + off;
}

static int lstm_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    lstm_state *s = vs;
    void *work = s->work ? l->ws : NULL;
    /* backward data always runs: backward weights reads what it leaves in
     * the reserve space.  NULL dhy/dcy mean zero gradients. */
    int rc = dlg_cudnn_ok(cudnnRNNBackwardData_v8(
        c->dnn, s->rnn, s->seq, s->yd, CF(l->top[0]), CG(l->top[0]), s->xd,
        grad_or_spare(l, 0, s->off_dx), s->hd, CF(l->bottom[1]), CG(l->top[1]),
        grad_or_spare(l, 1, s->off_dh), s->hd, CF(l->bottom[2]), CG(l->top[2]),
        grad_or_spare(l, 2, s->off_dc), s->wbytes, s->w, s->work, work, s->rbytes, s->reserve));
    if (rc || !l->param_grad)
        return rc;
    rc = dlg_cuda_ok(cudaMemsetAsync(s->dw, 0, s->wbytes, c->stream));
    if (!rc)
        rc = dlg_cudnn_ok(cudnnRNNBackwardWeights_v8(
            c->dnn, s->rnn, CUDNN_WGRAD_MODE_ADD, s->seq, s->xd, CF(l->bottom[0]), s->hd,
            CF(l->bottom[1]), s->yd, CF(l->top[0]), s->wbytes, s->dw, s->work, work, s->rbytes,
            s->reserve));
    /* a param without a gradient (lr_mult 0) is skipped */
    if (!rc && CG(l->param[0]))
        rc = K(dlg_cuk_lstm_unpack(c->stream, s->gx, s->I, s->H, CG(l->param[0])));
    if (!rc && CG(l->param[1]))
        rc = K(dlg_cuk_lstm_unpack(c->stream, s->gh, s->H, s->H, CG(l->param[1])));
    if (!rc && CG(l->param[2]))
        rc = K(dlg_cuk_lstm_unpack_bias(c->stream, s->gb, s->H, CG(l->param[2])));
    return rc;
}

const dlg_kernels dlg_cuda_lstm = {.setup = lstm_setup,
                                   .forward = lstm_forward,
                                   .backward = lstm_backward,
                                   .destroy = lstm_destroy};
