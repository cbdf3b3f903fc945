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
 *   allow_tf32 off); tf32 (and bf16, below) CUDNN_DEFAULT_MATH, which on
 *   Ampere and later lets cuDNN's RNN use TF32 tensor cores: it is what
 *   PyTorch passes for fp32 with allow_tf32 on, its default for cuDNN
 *   (Descriptors.h RNNDescriptor::set), and the RNN's way to "tensor-op
 *   math" for FLOAT data.
 * - fp16 (cuda-fp16, autocast's recipe): dataType CUDNN_DATA_HALF,
 *   mathPrec CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH.  That is what
 *   PyTorch passes for half input (RNN.cpp promote_rnn_math_type: HALF
 *   data computes in FLOAT; Descriptors.h: TENSOR_OP_MATH for HALF input);
 *   cudnn_adv.h: "dataType specify input/output data type and
 *   weight/bias type", so x, y, h0/c0, hT/cT, their gradients, the weight
 *   space and its gradient are all half.  Under autocast nn.LSTM's fp32
 *   weights are cast to a half flat buffer each step and its half weight
 *   gradient flows back to the fp32 params; here the fp32 params are
 *   packed with rounding (dlg_cuk_lstm_pack_h) at every forward and the
 *   half gradient widened into the fp32 param gradients
 *   (dlg_cuk_lstm_unpack_h), so SGD, host IO, and fp16 loss scaling (the
 *   non-finite check over every param gradient in sgd_all) see them as
 *   they see a convolution's.  Bottoms are plain fp32 (the kernels take
 *   no backend layout) and are converted to half here, in their own order
 *   (dlg_half_io would stage a 4-d one channels-last, and cuDNN would read
 *   its rows as other features); y takes the half layout where its
 *   readers accept it (dropout, fc), hT/cT are staged back to fp32 for the
 *   host (dlg_half_io: the tops are N x H x 1 x 1, the same memory in
 *   either order).
 * - bf16: PyTorch sends bf16 to cuDNN's RNN only from cuDNN 9.13 (pytorch
 *   PR #164411, "supports BFloat16 inputs since 9.13"); cudnn_adv.h says
 *   nothing of it and no cuDNN document seen here lists it, so cuda-bf16
 *   keeps the fp32 RNN (its neighbours stage their edges to fp32).
 * Not verified on a GPU yet (see README.md). */
#include "cuda_half.h"
#include "cuda_seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K(call) dlg_cuda_ok((cudaError_t)(call))
#define ALIGN 256

typedef struct lstm_state {
    int T, B, I, H;
    bool half;           /* cuda-fp16: half data and weight space */
    cudnnDataType_t dt;  /* the RNN's data type (FLOAT or HALF) */
    dlg_half_io io;      /* half: staging of the host-read tops */
    dlg_half *sx[3], *sdx[3]; /* half: x, h0, c0 and their gradients, in row order */
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
    for (int j = 0; j < 3; j++) {
        cudaFree(s->sx[j]);
        cudaFree(s->sdx[j]);
    }
    dlg_half_io_free(&s->io);
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
    cudnnMathType_t math = s->half                ? CUDNN_TENSOR_OP_MATH
                           : c->math == DLG_CUDA_FP32 ? CUDNN_FMA_MATH
                                                      : CUDNN_DEFAULT_MATH;
    for (;;) {
        /* FLOAT math precision for half data too (PyTorch's promote_rnn_math_type) */
        cudnnStatus_t st = cudnnSetRNNDescriptor_v8(
            s->rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
            CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, s->dt, CUDNN_DATA_FLOAT, math,
            s->I, s->H, s->H /* projSize = hidden: no projection */, 1, s->drop,
            CUDNN_RNN_PADDED_IO_DISABLED);
        if (st != CUDNN_STATUS_SUCCESS && math == CUDNN_FMA_MATH) {
            dlg_cuda_note_once(c, DLG_CUDA_NOTE_RNN_MATH,
                               "cuDNN refused FMA math for the LSTM; it runs with the default "
                               "math (TF32 may be used)");
            math = CUDNN_DEFAULT_MATH;
            continue;
        }
        return dlg_cudnn_err(st, s->half ? "cudnnSetRNNDescriptor_v8 (fp16 LSTM: HALF data, "
                                           "FLOAT math, tensor-op math)"
                                         : "cudnnSetRNNDescriptor_v8 (LSTM)",
                             err, errlen);
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
        rc = dlg_cudnn_err(cudnnSetRNNDataDescriptor(s->xd, s->dt,
                                                     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, s->T,
                                                     s->B, s->I, len, NULL),
                           "cudnnSetRNNDataDescriptor (x)", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetRNNDataDescriptor(s->yd, s->dt,
                                                     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, s->T,
                                                     s->B, s->H, len, NULL),
                           "cudnnSetRNNDataDescriptor (y)", err, errlen);
    int dims[3] = {1, s->B, s->H}, strides[3] = {s->B * s->H, s->H, 1};
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateTensorDescriptor(&s->hd), "state descriptor", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetTensorNdDescriptor(s->hd, s->dt, 3, dims, strides),
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

/* Is d (from cudnnGetRNNWeightParams) a dense rows x cols matrix of type dt,
 * row-major (cols = 1: a vector)?  Unit dimensions are ignored, so
 * {1, H, in} and {H, in, 1} both pass; anything else fails setup loudly
 * rather than packing into the wrong places. */
static bool dense_is(cudnnTensorDescriptor_t d, cudnnDataType_t dt, int rows, int cols)
{
    cudnnDataType_t t;
    int nd = 0, dims[8] = {0}, strides[8] = {0}, kd[8], ks[8], k = 0;
    if (cudnnGetTensorNdDescriptor(d, 8, &t, &nd, dims, strides) != CUDNN_STATUS_SUCCESS ||
        t != dt || nd < 1 || nd > 8)
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
        if (!rc && (!m || !dense_is(md, s->dt, s->H, in))) {
            snprintf(err, errlen, "cuDNN's LSTM weight matrix %d is not a dense %d x %d %s matrix",
                     lin, s->H, in, s->half ? "fp16" : "float");
            rc = -DLG_ENOTSUP;
        }
        if (!rc && b && !dense_is(bd, s->dt, s->H, 1)) {
            snprintf(err, errlen, "cuDNN's LSTM bias %d is not %d %s values", lin, s->H,
                     s->half ? "fp16" : "float");
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
        s->gx.p[g] = s->dw + ((char *)s->mx.p[g] - s->w);
        s->gh.p[g] = s->dw + ((char *)s->mh.p[g] - s->w);
        s->gb.p[g] = s->dw + ((char *)s->mb.p[g] - s->w);
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
    size_t es = s->half ? sizeof(dlg_half) : sizeof(float);
    size_t at = align_up(s->work), nx = (size_t)s->T * s->B * s->I * es,
           nh = (size_t)s->B * s->H * es;
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

/* half: the bottoms' half copies (and their gradients' where wanted) */
static int alloc_half_bottoms(dlg_cuda_ctx *c, const dlg_layer *l, lstm_state *s, char *err,
                              size_t errlen)
{
    int rc = 0;
    for (int j = 0; j < 3 && !rc; j++) {
        size_t bytes = (size_t)l->bottom[j]->count * sizeof(dlg_half);
        rc = alloc_zero(c, (void **)&s->sx[j], bytes, "LSTM half input", err, errlen);
        if (!rc && l->backward && l->prop_down[j])
            rc = alloc_zero(c, (void **)&s->sdx[j], bytes, "LSTM half input gradient", err,
                            errlen);
    }
    return rc;
}

static int lstm_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    dlg_cuda_ctx *c = ctx;
    dlg_lstm_dims d = dlg_lstm_dims_of(l);
    int64_t T = d.T, B = d.B, I = d.I, H = d.H;
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
    bool half = c->math == DLG_CUDA_FP16;
    *s = (lstm_state){.T = (int)T, .B = (int)B, .I = (int)I, .H = (int)H, .half = half,
                      .dt = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT,
                      .mode = l->backward ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE};
    int rc = describe_rnn(c, s, err, errlen);
    if (!rc)
        rc = describe_data(c, s, err, errlen);
    if (!rc)
        rc = lstm_alloc(c, l, s, ws, err, errlen);
    if (!rc)
        rc = locate_weights(c, s, err, errlen);
    for (int t = 0; t < l->ntop && !rc && !half; t++)
        l->top[t]->layout = NULL;
    /* half: y takes the half layout where its readers allow it; the
     * bottoms are converted here (bits 0-2: dlg_half_io leaves them) */
    if (!rc && half)
        rc = dlg_half_io_setup(c, l, &s->io, 7u, true, err, errlen);
    if (!rc && half)
        rc = alloc_half_bottoms(c, l, s, err, errlen);
    if (rc < 0) {
        lstm_destroy(ctx, s);
        return rc;
    }
    *state = s;
    return 0;
}

/* The engine's fp32 params into the weight space (rounded to half for fp16). */
static int pack_weights(dlg_cuda_ctx *c, const dlg_layer *l, const lstm_state *s)
{
    if (s->half) {
        dlg_cuk_htype t = dlg_cuda_htype(c);
        int rc = K(dlg_cuk_lstm_pack_h(c->stream, t, CF(l->param[0]), s->I, s->H, s->mx));
        if (!rc)
            rc = K(dlg_cuk_lstm_pack_h(c->stream, t, CF(l->param[1]), s->H, s->H, s->mh));
        return rc ? rc : K(dlg_cuk_lstm_pack_bias_h(c->stream, t, CF(l->param[2]), s->H, s->mb));
    }
    int rc = K(dlg_cuk_lstm_pack(c->stream, CF(l->param[0]), s->I, s->H, s->mx));
    if (!rc)
        rc = K(dlg_cuk_lstm_pack(c->stream, CF(l->param[1]), s->H, s->H, s->mh));
    return rc ? rc : K(dlg_cuk_lstm_pack_bias(c->stream, CF(l->param[2]), s->H, s->mb));
}

/* The weight gradient into the params' fp32 gradients (widened from half
 * for fp16); a param without a gradient (lr_mult 0) is skipped. */
static int unpack_grads(dlg_cuda_ctx *c, const dlg_layer *l, const lstm_state *s)
{
    dlg_cuk_htype t = dlg_cuda_htype(c);
    int rc = 0;
    if (CG(l->param[0]))
        rc = K(s->half ? dlg_cuk_lstm_unpack_h(c->stream, t, s->gx, s->I, s->H, CG(l->param[0]))
                       : dlg_cuk_lstm_unpack(c->stream, s->gx, s->I, s->H, CG(l->param[0])));
    if (!rc && CG(l->param[1]))
        rc = K(s->half ? dlg_cuk_lstm_unpack_h(c->stream, t, s->gh, s->H, s->H, CG(l->param[1]))
                       : dlg_cuk_lstm_unpack(c->stream, s->gh, s->H, s->H, CG(l->param[1])));
    if (!rc && CG(l->param[2]))
        rc = K(s->half ? dlg_cuk_lstm_unpack_bias_h(c->stream, t, s->gb, s->H, CG(l->param[2]))
                       : dlg_cuk_lstm_unpack_bias(c->stream, s->gb, s->H, CG(l->param[2])));
    return rc;
}

/* half: the fp32 bottoms into their half copies (forward), the half
 * gradients into the fp32 ones the net wants (backward); elementwise, so
 * rows stay rows whatever the tensors' shapes */
static int bottoms_to_half(dlg_cuda_ctx *c, const dlg_layer *l, const lstm_state *s)
{
    int rc = 0;
    for (int j = 0; j < 3 && !rc; j++)
        rc = K(dlg_cuk_f2h(c->stream, dlg_cuda_htype(c), CF(l->bottom[j]), s->sx[j],
                           l->bottom[j]->count));
    return rc;
}

static int grads_to_f32(dlg_cuda_ctx *c, const dlg_layer *l, const lstm_state *s)
{
    int rc = 0;
    for (int j = 0; j < 3 && !rc; j++)
        if (l->prop_down[j])
            rc = K(dlg_cuk_h2f(c->stream, dlg_cuda_htype(c), s->sdx[j], CG(l->bottom[j]),
                               l->bottom[j]->count));
    return rc;
}

/* What cuDNN reads and writes: the tensors themselves (fp32), or under
 * fp16 their half views (the bottoms' copies, the tops' staged copies or
 * their own half memory). */
static void *x_of(const dlg_layer *l, const lstm_state *s, int j)
{
    return s->half ? (void *)s->sx[j] : l->bottom[j]->data;
}
static void *y_of(const dlg_layer *l, const lstm_state *s, int t)
{
    return s->half ? (void *)dlg_half_y(l, &s->io, t) : l->top[t]->data;
}
/* an output gradient, or NULL (cuDNN: zero) where the net has none */
static const void *dy_of(const dlg_layer *l, const lstm_state *s, int t)
{
    if (!l->top[t]->diff)
        return NULL;
    return s->half ? (void *)dlg_half_dy(l, &s->io, t) : l->top[t]->diff;
}
/* an input gradient the net wants, or this layer's spare buffer in the
 * workspace */
static void *dx_of(const dlg_layer *l, const lstm_state *s, int j, size_t off)
{
    if (!l->prop_down[j])
        return (char *)l->ws + off;
    return s->half ? (void *)s->sdx[j] : l->bottom[j]->diff;
}

static int lstm_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    lstm_state *s = vs;
    int rc = pack_weights(c, l, s);
    if (!rc && s->half)
        rc = bottoms_to_half(c, l, s);
    if (!rc)
        rc = dlg_cudnn_ok(cudnnRNNForward(c->dnn, s->rnn, s->mode, s->seq, s->xd, x_of(l, s, 0),
                                          s->yd, y_of(l, s, 0), s->hd, x_of(l, s, 1),
                                          y_of(l, s, 1), s->hd, x_of(l, s, 2), y_of(l, s, 2),
                                          s->wbytes, s->w, s->work, s->work ? l->ws : NULL,
                                          s->rbytes, s->reserve));
    return rc || !s->half ? rc : dlg_half_post_fwd(c, l, &s->io);
}

static int lstm_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    lstm_state *s = vs;
    void *work = s->work ? l->ws : NULL;
    int rc = s->half ? dlg_half_pre_bwd(c, l, &s->io) : 0;
    /* backward data always runs: backward weights reads what it leaves in
     * the reserve space.  NULL dhy/dcy mean zero gradients. */
    if (!rc)
        rc = dlg_cudnn_ok(cudnnRNNBackwardData_v8(
            c->dnn, s->rnn, s->seq, s->yd, y_of(l, s, 0), dy_of(l, s, 0), s->xd,
            dx_of(l, s, 0, s->off_dx), s->hd, x_of(l, s, 1), dy_of(l, s, 1),
            dx_of(l, s, 1, s->off_dh), s->hd, x_of(l, s, 2), dy_of(l, s, 2),
            dx_of(l, s, 2, s->off_dc), s->wbytes, s->w, s->work, work, s->rbytes, s->reserve));
    if (!rc && s->half)
        rc = grads_to_f32(c, l, s);
    if (rc || !l->param_grad)
        return rc;
    rc = dlg_cuda_ok(cudaMemsetAsync(s->dw, 0, s->wbytes, c->stream));
    if (!rc)
        rc = dlg_cudnn_ok(cudnnRNNBackwardWeights_v8(
            c->dnn, s->rnn, CUDNN_WGRAD_MODE_ADD, s->seq, s->xd, x_of(l, s, 0), s->hd,
            x_of(l, s, 1), s->yd, y_of(l, s, 0), s->wbytes, s->dw, s->work, work, s->rbytes,
            s->reserve));
    return rc ? rc : unpack_grads(c, l, s);
}

const dlg_kernels dlg_cuda_lstm = {.setup = lstm_setup,
                                   .forward = lstm_forward,
                                   .backward = lstm_backward,
                                   .destroy = lstm_destroy};
