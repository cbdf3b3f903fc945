/* Convolution on cuDNN: descriptors and algorithms chosen once at plan
 * time (measured with cudnnFind*, cached by shape), then only executed. */
#include "cuda_half.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NOTE_CONV_ISLAND = 1u << 14 };

typedef struct conv_state {
    cudnnTensorDescriptor_t x, y, b;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t cd[3]; /* fwd, bwd data, bwd filter: own math types */
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    size_t ws;
    /* bias fused into the convolution (cuDNN allows it with an identity
     * activation for IMPLICIT_PRECOMP_GEMM only); off after a refusal */
    cudnnActivationDescriptor_t ident;
    bool fuse_bias;
    /* half: staging, half weight copy (made in forward), half weight grad */
    dlg_half_io io;
    dlg_half *wh, *dwh;
    /* nhwc: x, y and the filter (OHWI) channels-last.  island: the context
     * is channels-last but cuDNN had no algorithm for this layer so, it
     * runs NCHW on transposed copies at the start of the workspace
     * (island_bytes; cuDNN's workspace follows) */
    bool nhwc, island;
    size_t island_bytes;
    char impl[64]; /* dlg_net_layer_impl: the algorithms chosen, e.g. "cudnn f:precomp d:1 w:1" */
} conv_state;

static void conv_destroy(void *ctx, void *vs)
{
    conv_state *s = vs;
    if (!s)
        return;
    cudnnDestroyTensorDescriptor(s->x);
    cudnnDestroyTensorDescriptor(s->y);
    cudnnDestroyTensorDescriptor(s->b);
    cudnnDestroyFilterDescriptor(s->w);
    if (s->ident)
        cudnnDestroyActivationDescriptor(s->ident);
    for (int i = 0; i < 3; i++)
        cudnnDestroyConvolutionDescriptor(s->cd[i]);
    if (s->wh)
        cudaFree(s->wh);
    if (s->dwh)
        cudaFree(s->dwh);
    dlg_half_io_free(&s->io);
    free(s);
}

static int make_descs(dlg_cuda_ctx *c, const dlg_layer *l, conv_state *s, char *err, size_t errlen)
{
    const dlg_conv_param *p = &l->p.conv;
    const dlg_shape *xs = &l->bottom[0]->shape, *ys = &l->top[0]->shape;
    cudnnDataType_t dt = dlg_cuda_is_half(c) ? dlg_cuda_half_dnn(c) : CUDNN_DATA_FLOAT;
    /* channels-last half: x, y and the filter (OHWI) all NHWC */
    int rc = s->nhwc ? dlg_half_desc(&s->x, c, xs, err, errlen)
                     : dlg_cuda_tensor_desc_t(&s->x, xs, dt, err, errlen);
    if (!rc)
        rc = s->nhwc ? dlg_half_desc(&s->y, c, ys, err, errlen)
                     : dlg_cuda_tensor_desc_t(&s->y, ys, dt, err, errlen);
    dlg_shape bs = {4, {1, ys->d[1], 1, 1, 1}};
    if (!rc)
        rc = dlg_cuda_tensor_desc(&s->b, &bs, err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateFilterDescriptor(&s->w), "filter descriptor", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetFilter4dDescriptor(s->w, dt,
                                                      s->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                      (int)ys->d[1], (int)(xs->d[1] / p->groups),
                                                      p->kh, p->kw),
                           "filter descriptor", err, errlen);
    /* tensor ops only where asked for: fp32 stays FMA-exact */
    cudnnMathType_t math = c->math != DLG_CUDA_FP32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    for (int i = 0; i < 3 && !rc; i++) {
        rc = dlg_cudnn_err(cudnnCreateConvolutionDescriptor(&s->cd[i]), "conv descriptor", err,
                           errlen);
        if (!rc)
            rc = dlg_cudnn_err(cudnnSetConvolution2dDescriptor(s->cd[i], p->ph, p->pw, p->sh,
                                                               p->sw, p->dh, p->dw,
                                                               CUDNN_CROSS_CORRELATION,
                                                               CUDNN_DATA_FLOAT),
                               "conv descriptor", err, errlen);
        if (!rc)
            rc = dlg_cudnn_err(cudnnSetConvolutionGroupCount(s->cd[i], p->groups), "groups", err,
                               errlen);
        if (!rc)
            rc = dlg_cudnn_err(cudnnSetConvolutionMathType(s->cd[i], math), "math type", err,
                               errlen);
    }
    int n, oc, oh, ow;
    if (!rc && cudnnGetConvolution2dForwardOutputDim(s->cd[0], s->x, s->w, &n, &oc, &oh, &ow) ==
                   CUDNN_STATUS_SUCCESS &&
        (n != ys->d[0] || oc != ys->d[1] || oh != ys->d[2] || ow != ys->d[3])) {
        snprintf(err, errlen, "cuDNN output %dx%dx%dx%d differs from the engine's shape", n, oc, oh,
                 ow);
        rc = -DLG_EINTERNAL;
    }
    return rc;
}

static void shape_key(char *key, size_t len, const char *dir, const dlg_layer *l)
{
    const dlg_conv_param *p = &l->p.conv;
    const dlg_shape *x = &l->bottom[0]->shape;
    snprintf(key, len, "%s:n%lldc%lldh%lldw%lld:o%lld:k%dx%d:s%dx%d:p%dx%d:d%dx%d:g%d", dir,
             (long long)x->d[0], (long long)x->d[1], (long long)x->d[2], (long long)x->d[3],
             (long long)l->top[0]->shape.d[1], p->kh, p->kw, p->sh, p->sw, p->ph, p->pw, p->dh,
             p->dw, p->groups);
}

/* Pick the fastest measured result that fits the limits. */
#define PICK(perf, cnt, c, outalgo, outmath, outws)                                            \
    do {                                                                                       \
        for (int i_ = 0; i_ < (cnt); i_++) {                                                   \
            if ((perf)[i_].status != CUDNN_STATUS_SUCCESS || (perf)[i_].memory > (c)->ws_limit) \
                continue;                                                                      \
            if ((c)->deterministic && (perf)[i_].determinism != CUDNN_DETERMINISTIC)           \
                continue;                                                                      \
            *(outalgo) = (int)(perf)[i_].algo;                                                 \
            *(outmath) = (int)(perf)[i_].mathType;                                             \
            *(outws) = (perf)[i_].memory;                                                      \
            found = 1;                                                                         \
            break;                                                                             \
        }                                                                                      \
    } while (0)

_Static_assert(DLG_ALGO_FWD_COUNT == CUDNN_CONVOLUTION_FWD_ALGO_COUNT &&
                   DLG_ALGO_BWDD_COUNT == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT &&
                   DLG_ALGO_BWDF_COUNT == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT &&
                   DLG_ALGO_MATH_MAX == CUDNN_FMA_MATH,
               "the algorithm cache's bounds (cuda_algo_cache.h) are cuDNN's");

/* The math type a chosen algorithm runs with.  cuDNN may report tensor-op
 * math for fp32 data even where the descriptor asked for FMA (PyTorch
 * overrides it the same way): copied back, fp32 would run TF32. */
static cudnnMathType_t math_to_run(const dlg_cuda_ctx *c, int reported)
{
    return c->math == DLG_CUDA_FP32 ? CUDNN_FMA_MATH : (cudnnMathType_t)reported;
}

static int find_algo(dlg_cuda_ctx *c, conv_state *s, const dlg_layer *l, int dir, int *algo,
                     size_t *ws, char *err, size_t errlen)
{
    static const char *const names[3] = {"fwd", "bwdd", "bwdf"};
    char key[DLG_ALGO_KEY_MAX];
    int math = 0, found = 0, cnt = 0;
    shape_key(key, sizeof key, names[dir], l);
    if (c->deterministic)
        strncat(key, ":det", sizeof key - strlen(key) - 1);
    if (s->nhwc) /* channels-last half: other kernels win */
        strncat(key, ":nhwc", sizeof key - strlen(key) - 1);
    const dlg_algo_entry *e = dlg_algo_cache_get(&c->cache, key);
    /* a choice made under a larger workspace limit is searched again */
    if (e && e->ws <= c->ws_limit) {
        *algo = e->algo;
        *ws = e->ws;
        return dlg_cudnn_err(cudnnSetConvolutionMathType(s->cd[dir], math_to_run(c, e->math)),
                             "math type", err, errlen);
    }
    cudnnStatus_t st;
    if (dir == 0) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        st = cudnnFindConvolutionForwardAlgorithm(c->dnn, s->x, s->w, s->cd[0], s->y,
                                                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &cnt, perf);
        if (st == CUDNN_STATUS_SUCCESS)
            PICK(perf, cnt, c, algo, &math, ws);
    } else if (dir == 1) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        st = cudnnFindConvolutionBackwardDataAlgorithm(c->dnn, s->w, s->y, s->cd[1], s->x,
                                                       CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &cnt,
                                                       perf);
        if (st == CUDNN_STATUS_SUCCESS)
            PICK(perf, cnt, c, algo, &math, ws);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        st = cudnnFindConvolutionBackwardFilterAlgorithm(c->dnn, s->x, s->y, s->cd[2], s->w,
                                                         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                         &cnt, perf);
        if (st == CUDNN_STATUS_SUCCESS)
            PICK(perf, cnt, c, algo, &math, ws);
    }
    int rc = dlg_cudnn_err(st, "cudnnFind (conv algorithm search)", err, errlen);
    if (rc)
        return rc;
    if (!found) {
        snprintf(err, errlen, "no %s convolution algorithm within a %zu MiB workspace%s",
                 names[dir], c->ws_limit >> 20, c->deterministic ? " that is deterministic" : "");
        return -DLG_ENOTSUP;
    }
    math = (int)math_to_run(c, math);
    rc = dlg_cudnn_err(cudnnSetConvolutionMathType(s->cd[dir], (cudnnMathType_t)math),
                       "math type", err, errlen);
    if (!rc && dlg_algo_cache_put(&c->cache, key, *algo, math, *ws) < 0)
        rc = -DLG_ENOMEM;
    return rc;
}

/* cuDNN's algorithms, short, for the profile */
static const char *algo_name(int dir, int a)
{
    static const char *const fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {
        [CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM] = "implicit",
        [CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM] = "precomp",
        [CUDNN_CONVOLUTION_FWD_ALGO_GEMM] = "gemm",
        [CUDNN_CONVOLUTION_FWD_ALGO_DIRECT] = "direct",
        [CUDNN_CONVOLUTION_FWD_ALGO_FFT] = "fft",
        [CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING] = "fft_tiling",
        [CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD] = "winograd",
        [CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED] = "winograd_nf"};
    static const char *const data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT] = {
        [CUDNN_CONVOLUTION_BWD_DATA_ALGO_0] = "0",
        [CUDNN_CONVOLUTION_BWD_DATA_ALGO_1] = "1",
        [CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT] = "fft",
        [CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING] = "fft_tiling",
        [CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD] = "winograd",
        [CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED] = "winograd_nf"};
    static const char *const filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT] = {
        [CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0] = "0",
        [CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1] = "1",
        [CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT] = "fft",
        [CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3] = "3",
        [CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD] = "winograd",
        [CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED] = "winograd_nf",
        [CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING] = "fft_tiling"};
    const char *const *t = dir == 0 ? fwd : dir == 1 ? data : filter;
    int n = dir == 0   ? CUDNN_CONVOLUTION_FWD_ALGO_COUNT
            : dir == 1 ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                       : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    return a >= 0 && a < n && t[a] ? t[a] : "?";
}

/* the profile's name for what setup chose: forward (with the bias fused
 * or not), backward data and filter where trained, and the layout */
static void name_impl(const dlg_layer *l, conv_state *s)
{
    int k = snprintf(s->impl, sizeof s->impl, "cudnn f:%s%s", algo_name(0, (int)s->fwd),
                     s->fuse_bias ? "+bias" : "");
    if (l->backward && l->prop_down[0] && k > 0 && (size_t)k < sizeof s->impl)
        k += snprintf(s->impl + k, sizeof s->impl - (size_t)k, " d:%s",
                      algo_name(1, (int)s->bwd_data));
    if (l->backward && l->param_grad && k > 0 && (size_t)k < sizeof s->impl)
        k += snprintf(s->impl + k, sizeof s->impl - (size_t)k, " w:%s",
                      algo_name(2, (int)s->bwd_filter));
    if (k > 0 && (size_t)k < sizeof s->impl)
        snprintf(s->impl + k, sizeof s->impl - (size_t)k, "%s",
                 s->island ? " nchw island" : s->nhwc ? " nhwc" : "");
}

static const char *conv_impl(const void *vs)
{
    return ((const conv_state *)vs)->impl;
}

static int conv_setup_as(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                         size_t errlen, bool nhwc)
{
    dlg_cuda_ctx *c = ctx;
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    s->nhwc = nhwc;
    int rc = make_descs(c, l, s, err, errlen), a = 0;
    size_t w = 0;
    if (!rc && !(rc = find_algo(c, s, l, 0, &a, &w, err, errlen))) {
        s->fwd = (cudnnConvolutionFwdAlgo_t)a;
        s->ws = w;
    }
    if (!rc && l->backward && l->prop_down[0] &&
        !(rc = find_algo(c, s, l, 1, &a, &w, err, errlen))) {
        s->bwd_data = (cudnnConvolutionBwdDataAlgo_t)a;
        s->ws = w > s->ws ? w : s->ws;
    }
    if (!rc && l->backward && l->param_grad &&
        !(rc = find_algo(c, s, l, 2, &a, &w, err, errlen))) {
        s->bwd_filter = (cudnnConvolutionBwdFilterAlgo_t)a;
        s->ws = w > s->ws ? w : s->ws;
    }
    if (!rc && !dlg_cuda_is_half(c) && l->p.conv.bias &&
        s->fwd == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM &&
        !(rc = dlg_cudnn_err(cudnnCreateActivationDescriptor(&s->ident),
                             "bias activation descriptor", err, errlen)))
        s->fuse_bias = cudnnSetActivationDescriptor(s->ident, CUDNN_ACTIVATION_IDENTITY,
                                                    CUDNN_NOT_PROPAGATE_NAN,
                                                    0.0) == CUDNN_STATUS_SUCCESS;
    if (rc < 0) {
        conv_destroy(ctx, s);
        return rc;
    }
    name_impl(l, s);
    *state = s;
    *ws = s->ws;
    return 0;
}

static int conv_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    conv_state *s = vs;
    const float one = 1.f, zero = 0.f;
    if (s->fuse_bias) {
        /* y = conv(x) + 0 * z + bias, z = y (read but weighted 0) */
        cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
            c->dnn, &one, s->x, CF(l->bottom[0]), s->w, CF(l->param[0]), s->cd[0], s->fwd, l->ws,
            s->ws, &zero, s->y, CF(l->top[0]), s->b, CF(l->param[1]), s->ident, s->y,
            CF(l->top[0]));
        if (st == CUDNN_STATUS_SUCCESS)
            return 0;
        /* cuDNN 9 refines codes within a category (NOT_SUPPORTED_SHAPE = 3002) */
        int cat = CUDNN_STATUS_CATEGORY((int)st);
        if (cat != CUDNN_STATUS_NOT_SUPPORTED && cat != CUDNN_STATUS_BAD_PARAM)
            return dlg_cudnn_ok(st);
        s->fuse_bias = false; /* refused: unfused from now on */
        name_impl(l, s);
        dlg_cuda_note_once(c, DLG_CUDA_NOTE_FUSED_BIAS,
                           "cuDNN refused the fused convolution + bias; adding the bias apart");
    }
    int rc = dlg_cudnn_ok(cudnnConvolutionForward(c->dnn, &one, s->x, CF(l->bottom[0]), s->w,
                                                  CF(l->param[0]), s->cd[0], s->fwd, l->ws, s->ws,
                                                  &zero, s->y, CF(l->top[0])));
    if (!rc && l->p.conv.bias)
        rc = dlg_cudnn_ok(
            cudnnAddTensor(c->dnn, &one, s->b, CF(l->param[1]), &one, s->y, CF(l->top[0])));
    return rc;
}

static int conv_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    conv_state *s = vs;
    const float one = 1.f, zero = 0.f;
    int rc = 0;
    if (l->param_grad) {
        rc = dlg_cudnn_ok(cudnnConvolutionBackwardFilter(
            c->dnn, &one, s->x, CF(l->bottom[0]), s->y, CG(l->top[0]), s->cd[2], s->bwd_filter,
            l->ws, s->ws, &zero, s->w, CG(l->param[0])));
        if (!rc && l->p.conv.bias)
            rc = dlg_cudnn_ok(cudnnConvolutionBackwardBias(c->dnn, &one, s->y, CG(l->top[0]), &zero,
                                                           s->b, CG(l->param[1])));
    }
    if (!rc && l->prop_down[0])
        rc = dlg_cudnn_ok(cudnnConvolutionBackwardData(c->dnn, &one, s->w, CF(l->param[0]), s->y,
                                                       CG(l->top[0]), s->cd[1], s->bwd_data, l->ws,
                                                       s->ws, &zero, s->x, CG(l->bottom[0])));
    return rc;
}

static int conv_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    return conv_setup_as(ctx, l, state, ws, err, errlen, false);
}

const dlg_kernels dlg_cuda_conv = {.setup = conv_setup,
                                    .forward = conv_forward,
                                    .backward = conv_backward,
                                    .destroy = conv_destroy,
                                    .impl = conv_impl};

/* ---- half (bf16/fp16): half tensors and weight copy, fp32 accumulation (compute type;
 * cuDNN's PSEUDO_HALF / PSEUDO_BFLOAT16 configurations) ---- */

/* bytes of one island copy, rounded so each copy starts 256-byte aligned
 * (as the buffers cudnnFind measured with, and the engine's 64-byte blobs) */
static size_t island_size(int64_t count)
{
    return ((size_t)count * sizeof(dlg_half) + 255) & ~(size_t)255;
}

static int conv_setup_h(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                         size_t errlen)
{
    dlg_cuda_ctx *c = ctx;
    bool island = false;
    int rc = conv_setup_as(ctx, l, state, ws, err, errlen, c->nhwc);
    if (rc < 0 && rc != -DLG_ENOMEM && c->nhwc) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "no channels-last cuDNN algorithm for convolution '%s' (%s); it runs NCHW on "
                 "transposed copies",
                 l->name, err);
        island = true;
        rc = conv_setup_as(ctx, l, state, ws, err, errlen, false);
        if (!rc)
            dlg_cuda_note_once(c, NOTE_CONV_ISLAND, msg);
    }
    if (rc < 0)
        return rc;
    conv_state *s = *state;
    if (island) { /* x, y (or dy) and dx in NCHW order, then cuDNN's workspace */
        s->island = true;
        s->island_bytes = 2 * island_size(l->bottom[0]->count) + island_size(l->top[0]->count);
        name_impl(l, s);
        *ws = s->island_bytes + s->ws;
    }
    size_t wb = (size_t)l->param[0]->count * sizeof(dlg_half);
    rc = dlg_half_io_setup(ctx, l, &s->io, 0, true, err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMalloc((void **)&s->wh, wb), "conv half weights", err, errlen);
    if (!rc && l->backward && l->param_grad)
        rc = dlg_cuda_err(cudaMalloc((void **)&s->dwh, wb), "conv half weight grad", err, errlen);
    if (rc < 0) {
        conv_destroy(ctx, s);
        *state = NULL;
    }
    return rc;
}

/* The fp32 OIHW master weights as the half filter: OHWI (transposed) for
 * channels-last, else the same order; the half filter gradient back. */
static int weights_to_half(dlg_cuda_ctx *c, const dlg_layer *l, conv_state *s)
{
    const dlg_conv_param *p = &l->p.conv;
    int64_t o = l->top[0]->shape.d[1], i = l->bottom[0]->shape.d[1] / p->groups;
    if (s->nhwc && p->kh * p->kw > 1 && i > 1)
        return dlg_cuda_ok((cudaError_t)dlg_cuk_transpose(c->stream, dlg_cuda_htype(c), false, true,
                                                          CF(l->param[0]), s->wh, o, i,
                                                          (int64_t)p->kh * p->kw));
    return dlg_cuda_ok((cudaError_t)dlg_cuk_f2h(c->stream, dlg_cuda_htype(c), CF(l->param[0]), s->wh,
                                               l->param[0]->count));
}

static int weight_grad_to_f32(dlg_cuda_ctx *c, const dlg_layer *l, conv_state *s)
{
    const dlg_conv_param *p = &l->p.conv;
    int64_t o = l->top[0]->shape.d[1], i = l->bottom[0]->shape.d[1] / p->groups;
    if (s->nhwc && p->kh * p->kw > 1 && i > 1)
        return dlg_cuda_ok((cudaError_t)dlg_cuk_transpose(c->stream, dlg_cuda_htype(c), true, false,
                                                          s->dwh, CG(l->param[0]), o,
                                                          (int64_t)p->kh * p->kw, i));
    return dlg_cuda_ok((cudaError_t)dlg_cuk_h2f(c->stream, dlg_cuda_htype(c), s->dwh, CG(l->param[0]),
                                               l->param[0]->count));
}

/* bias on y (or its gradient from dy) in this layer's order */
static int bias_fwd_h(dlg_cuda_ctx *c, const dlg_layer *l, const conv_state *s, dlg_half *y)
{
    const dlg_shape *ys = &l->top[0]->shape;
    if (s->nhwc) /* NHWC: pixels are rows, channel = index % C */
        return dlg_cuda_ok((cudaError_t)dlg_cuk_bias_nchw_h(c->stream, dlg_cuda_htype(c), y,
                                                           CF(l->param[1]),
                                                           ys->d[0] * ys->d[2] * ys->d[3],
                                                           ys->d[1], 1));
    return dlg_cuda_ok((cudaError_t)dlg_cuk_bias_nchw_h(c->stream, dlg_cuda_htype(c), y,
                                                       CF(l->param[1]), ys->d[0], ys->d[1],
                                                       ys->d[2] * ys->d[3]));
}

static int bias_bwd_h(dlg_cuda_ctx *c, const dlg_layer *l, const conv_state *s,
                      const dlg_half *dy)
{
    const dlg_shape *ys = &l->top[0]->shape;
    if (s->nhwc)
        return dlg_cuda_ok((cudaError_t)dlg_cuk_bias_grad_nhwc_h(
            c->stream, dlg_cuda_htype(c), dy, CG(l->param[1]), ys->d[0] * ys->d[2] * ys->d[3],
            ys->d[1]));
    return dlg_cuda_ok((cudaError_t)dlg_cuk_bias_grad_nchw_h(c->stream, dlg_cuda_htype(c), dy,
                                                            CG(l->param[1]), ys->d[0], ys->d[1],
                                                            ys->d[2] * ys->d[3]));
}

/* the island's NCHW copies: x, then y or dy, then dx */
static dlg_half *island(const dlg_layer *l, int k)
{
    size_t cx = island_size(l->bottom[0]->count), cy = island_size(l->top[0]->count);
    return (dlg_half *)((char *)l->ws + (k == 0 ? 0 : k == 1 ? cx : cx + cy));
}

static int conv_forward_h(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    conv_state *s = vs;
    const float one = 1.f, zero = 0.f;
    void *cws = (char *)l->ws + s->island_bytes;
    dlg_half *x = dlg_half_x(l, &s->io, 0), *y = dlg_half_y(l, &s->io, 0);
    dlg_half *yc = s->island ? island(l, 1) : y;
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    if (!rc)
        rc = weights_to_half(c, l, s);
    if (!rc && s->island) {
        rc = dlg_half_to_nchw(c, &l->bottom[0]->shape, x, island(l, 0));
        x = island(l, 0);
    }
    if (!rc)
        rc = dlg_cudnn_ok(cudnnConvolutionForward(c->dnn, &one, s->x, x, s->w, s->wh, s->cd[0],
                                                  s->fwd, cws, s->ws, &zero, s->y, yc));
    if (!rc && l->p.conv.bias)
        rc = bias_fwd_h(c, l, s, yc);
    if (!rc && s->island)
        rc = dlg_half_from_nchw(c, &l->top[0]->shape, yc, y);
    return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
}

static int conv_backward_h(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    conv_state *s = vs;
    const float one = 1.f, zero = 0.f;
    void *cws = (char *)l->ws + s->island_bytes;
    dlg_half *x = dlg_half_x(l, &s->io, 0), *dy = dlg_half_dy(l, &s->io, 0);
    dlg_half *dx = dlg_half_dx(l, &s->io, 0), *dxc = s->island ? island(l, 2) : dx;
    int rc = dlg_half_pre_bwd(c, l, &s->io);
    if (!rc && s->island) {
        rc = dlg_half_to_nchw(c, &l->top[0]->shape, dy, island(l, 1));
        dy = island(l, 1);
        if (!rc && l->param_grad)
            rc = dlg_half_to_nchw(c, &l->bottom[0]->shape, x, island(l, 0));
        x = island(l, 0);
    }
    if (!rc && l->param_grad) {
        rc = dlg_cudnn_ok(cudnnConvolutionBackwardFilter(c->dnn, &one, s->x, x, s->y, dy, s->cd[2],
                                                         s->bwd_filter, cws, s->ws, &zero, s->w,
                                                         s->dwh));
        if (!rc)
            rc = weight_grad_to_f32(c, l, s);
        if (!rc && l->p.conv.bias)
            rc = bias_bwd_h(c, l, s, dy);
    }
    if (!rc && l->prop_down[0])
        rc = dlg_cudnn_ok(cudnnConvolutionBackwardData(c->dnn, &one, s->w, s->wh, s->y, dy,
                                                       s->cd[1], s->bwd_data, cws, s->ws, &zero,
                                                       s->x, dxc));
    if (!rc && l->prop_down[0] && s->island)
        rc = dlg_half_from_nchw(c, &l->bottom[0]->shape, dxc, dx);
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

const dlg_kernels dlg_cuda_conv_h = {.setup = conv_setup_h,
                                      .forward = conv_forward_h,
                                      .backward = conv_backward_h,
                                      .destroy = conv_destroy,
                                      .impl = conv_impl,
                                      .any_layout = true};
