/* half (bf16/fp16): inner product on cuBLAS (half inputs, fp32
 * accumulation, fp32 weight gradient); batch norm on cuDNN with half data
 * and fp32 params where cuDNN accepts it; LRN, softmax (and batch norm if
 * cuDNN refuses half) as the fp32 kernels on fp32 copies in the workspace. */
#include "cuda_half.h"

#include <stdlib.h>

#define K(call) dlg_cuda_ok((cudaError_t)(call))

/* ---- fp32 kernels behind a half face: a shadow layer over workspace copies ---- */
typedef struct staged_state {
    dlg_half_io io;
    const dlg_kernels *inner;
    void *inner_state;
    size_t inner_ws; /* rounded up; the copies follow it */
    dlg_layer sh;
    dlg_tensor tb, tt;
    dlg_tensor *pb, *pt;
    /* batch norm straight on half (fp32 params and statistics); cleared,
     * for good, the first time cuDNN refuses it */
    bool native;
    cudnnTensorDescriptor_t bx, bp;
} staged_state;

static void staged_destroy(void *ctx, void *vs)
{
    staged_state *s = vs;
    if (!s)
        return;
    if (s->inner && s->inner->destroy && s->inner_state)
        s->inner->destroy(ctx, s->inner_state);
    if (s->bx)
        cudnnDestroyTensorDescriptor(s->bx);
    if (s->bp)
        cudnnDestroyTensorDescriptor(s->bp);
    dlg_half_io_free(&s->io);
    free(s);
}

static int staged_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                        size_t errlen)
{
    staged_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    s->inner = l->type == DLG_L_BN ? &dlg_cuda_bn : l->type == DLG_L_LRN ? &dlg_cuda_lrn
                                                                         : &dlg_cuda_softmax;
    s->sh = *l;
    s->tb = *l->bottom[0];
    s->tt = *l->top[0];
    s->tb.layout = s->tt.layout = NULL;
    s->tb.opaque_ok = s->tt.opaque_ok = false;
    s->pb = &s->tb;
    s->pt = &s->tt;
    s->sh.bottom = &s->pb;
    s->sh.top = &s->pt;
    s->sh.nbottom = s->sh.ntop = 1;
    size_t iws = 0;
    int rc = dlg_half_io_setup(l, &s->io, 0, true, err, errlen);
    if (!rc)
        rc = s->inner->setup(ctx, &s->sh, &s->inner_state, &iws, err, errlen);
    if (rc < 0) {
        staged_destroy(ctx, s);
        return rc;
    }
    s->inner_ws = (iws + 255) & ~(size_t)255;
    if (l->type == DLG_L_BN)
        s->native =
            dlg_cuda_tensor_desc_t(&s->bx, &l->bottom[0]->shape, dlg_cuda_half_dnn(ctx)) == 0 &&
            cudnnCreateTensorDescriptor(&s->bp) == CUDNN_STATUS_SUCCESS &&
            cudnnDeriveBNTensorDescriptor(s->bp, s->bx, CUDNN_BATCHNORM_SPATIAL) ==
                CUDNN_STATUS_SUCCESS;
    *state = s;
    /* x, y, dy, dx in fp32 */
    *ws = s->inner_ws + 4 * (size_t)l->bottom[0]->count * sizeof(float);
    return 0;
}

/* point the shadow tensors at this call's workspace */
static float *staged_bind(staged_state *s, dlg_layer *l)
{
    float *x = (float *)((char *)l->ws + s->inner_ws);
    int64_t n = l->bottom[0]->count;
    s->sh.ws = l->ws;
    s->sh.train = l->train;
    s->tb.data = x;
    s->tt.data = x + n;
    s->tt.diff = x + 2 * n;
    s->tb.diff = x + 3 * n;
    return x;
}

/* 0 done, 1 refused by cuDNN (nothing written), <0 error */
static int refused(cudnnStatus_t st)
{
    if (st == CUDNN_STATUS_SUCCESS)
        return 0;
    return st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_BAD_PARAM ? 1 : -DLG_EINTERNAL;
}

static const char *refused_note(const dlg_cuda_ctx *c)
{
    return c->math == DLG_CUDA_FP16 ? "cuDNN refused fp16 batch norm; running it on fp32 copies"
                                    : "cuDNN refused bf16 batch norm; running it on fp32 copies";
}

static int bn_native_fwd(dlg_cuda_ctx *c, dlg_layer *l, staged_state *s)
{
    const float one = 1.f, zero = 0.f;
    float *save = dlg_cuda_bn_saved(s->inner_state);
    int64_t C = l->bottom[0]->shape.d[1];
    dlg_half *x = dlg_half_x(l, &s->io, 0), *y = dlg_half_y(l, &s->io, 0);
    if (l->train)
        return refused(cudnnBatchNormalizationForwardTraining(
            c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->bx, x, s->bx, y, s->bp,
            CF(l->param[0]), CF(l->param[1]), l->p.bn.momentum, CF(l->param[2]),
            CF(l->param[3]), l->p.bn.eps, save, save + C));
    return refused(cudnnBatchNormalizationForwardInference(
        c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->bx, x, s->bx, y, s->bp, CF(l->param[0]),
        CF(l->param[1]), CF(l->param[2]), CF(l->param[3]), l->p.bn.eps));
}

/* the saved statistics are the fp32 kernel's, so either path can follow */
static int bn_native_bwd(dlg_cuda_ctx *c, dlg_layer *l, staged_state *s)
{
    const float one = 1.f, zero = 0.f;
    float *save = dlg_cuda_bn_saved(s->inner_state);
    int64_t C = l->bottom[0]->shape.d[1];
    if (!l->train || !l->param_grad)
        return -DLG_ENOTSUP; /* as the fp32 kernel */
    dlg_half *dx = l->prop_down[0] ? dlg_half_dx(l, &s->io, 0)
                                   : (dlg_half *)((char *)l->ws + s->inner_ws);
    return refused(cudnnBatchNormalizationBackward(
        c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, s->bx, dlg_half_x(l, &s->io, 0),
        s->bx, dlg_half_dy(l, &s->io, 0), s->bx, dx, s->bp, CF(l->param[0]), CG(l->param[0]),
        CG(l->param[1]), l->p.bn.eps, save, save + C));
}

static int staged_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    staged_state *s = vs;
    float *x = staged_bind(s, l);
    int64_t n = l->bottom[0]->count;
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    if (!rc && s->native) {
        rc = bn_native_fwd(c, l, s);
        if (rc <= 0)
            return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
        s->native = false;
        rc = 0;
        dlg_cuda_note_once(c, DLG_CUDA_NOTE_HALF_BN, refused_note(c));
    }
    if (!rc)
        rc = K(dlg_cuk_h2f(c->stream, dlg_cuda_htype(c), dlg_half_x(l, &s->io, 0), x, n));
    if (!rc)
        rc = s->inner->forward(ctx, &s->sh, s->inner_state);
    if (!rc)
        rc = K(dlg_cuk_f2h(c->stream, dlg_cuda_htype(c), x + n, dlg_half_y(l, &s->io, 0), n));
    return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
}

static int staged_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    staged_state *s = vs;
    float *x = staged_bind(s, l);
    int64_t n = l->bottom[0]->count;
    int rc = dlg_half_pre_bwd(c, l, &s->io);
    if (!rc && s->native) {
        rc = bn_native_bwd(c, l, s);
        if (rc <= 0)
            return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
        s->native = false;
        rc = 0;
        dlg_cuda_note_once(c, DLG_CUDA_NOTE_HALF_BN, refused_note(c));
    }
    if (!rc)
        rc = K(dlg_cuk_h2f(c->stream, dlg_cuda_htype(c), dlg_half_x(l, &s->io, 0), x, n));
    if (!rc && l->type != DLG_L_BN) /* LRN and softmax backward read y */
        rc = K(dlg_cuk_h2f(c->stream, dlg_cuda_htype(c), dlg_half_y(l, &s->io, 0), x + n, n));
    if (!rc)
        rc = K(dlg_cuk_h2f(c->stream, dlg_cuda_htype(c), dlg_half_dy(l, &s->io, 0), x + 2 * n, n));
    if (!rc)
        rc = s->inner->backward(ctx, &s->sh, s->inner_state);
    if (!rc && l->prop_down[0])
        rc = K(dlg_cuk_f2h(c->stream, dlg_cuda_htype(c), x + 3 * n, dlg_half_dx(l, &s->io, 0), n));
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

const dlg_kernels dlg_cuda_staged_h = {.setup = staged_setup,
                                        .forward = staged_forward,
                                        .backward = staged_backward,
                                        .destroy = staged_destroy,
                                        .any_layout = true};

/* ---- inner product: row-major X[N,in] W[out,in] as column-major GEMMs ---- */
typedef struct fc_state {
    dlg_half_io io;
    dlg_half *w; /* half copy of the fp32 weights, made each forward */
} fc_state;

static void fc_destroy(void *ctx, void *vs)
{
    fc_state *s = vs;
    if (!s)
        return;
    if (s->w)
        cudaFree(s->w);
    dlg_half_io_free(&s->io);
    free(s);
}

static int fc_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                    size_t errlen)
{
    fc_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int rc = dlg_half_io_setup(l, &s->io, 0, true, err, errlen);
    if (!rc)
        rc = dlg_cuda_err(
            cudaMalloc((void **)&s->w, (size_t)l->param[0]->count * sizeof(dlg_half)),
            "fc half weights", err, errlen);
    if (rc < 0) {
        fc_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = 0;
    return 0;
}

static int gemm(dlg_cuda_ctx *c, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                const void *a, int lda, const void *b, int ldb, void *y, cudaDataType_t yt,
                int ldy)
{
    const float one = 1.f, zero = 0.f;
    cudaDataType_t ht = dlg_cuda_half_blas(c);
    return dlg_cublas_ok(cublasGemmEx(c->blas, ta, tb, m, n, k, &one, a, ht, lda, b, ht, ldb,
                                      &zero, y, yt, ldy, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static int fc_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    fc_state *s = vs;
    int n = (int)l->bottom[0]->shape.d[0], in = (int)dlg_shape_inner(&l->bottom[0]->shape);
    int out = (int)l->top[0]->shape.d[1];
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    if (!rc)
        rc = K(dlg_cuk_f2h(c->stream, dlg_cuda_htype(c), CF(l->param[0]), s->w, l->param[0]->count));
    if (!rc)
        rc = gemm(c, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, s->w, in, dlg_half_x(l, &s->io, 0), in,
                  dlg_half_y(l, &s->io, 0), dlg_cuda_half_blas(c), out);
    if (!rc)
        rc = K(dlg_cuk_bias_nchw_h(c->stream, dlg_cuda_htype(c), dlg_half_y(l, &s->io, 0), CF(l->param[1]), n, out, 1));
    return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
}

static int fc_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    fc_state *s = vs;
    int n = (int)l->bottom[0]->shape.d[0], in = (int)dlg_shape_inner(&l->bottom[0]->shape);
    int out = (int)l->top[0]->shape.d[1];
    int rc = dlg_half_pre_bwd(c, l, &s->io);
    dlg_half *dy = dlg_half_dy(l, &s->io, 0);
    if (!rc && l->prop_down[0])
        rc = gemm(c, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, s->w, in, dy, out,
                  dlg_half_dx(l, &s->io, 0), dlg_cuda_half_blas(c), in);
    if (!rc && l->param_grad) {
        rc = gemm(c, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, dlg_half_x(l, &s->io, 0), in, dy, out,
                  CG(l->param[0]), CUDA_R_32F, in);
        if (!rc)
            rc = K(dlg_cuk_bias_grad_nchw_h(c->stream, dlg_cuda_htype(c), dy, CG(l->param[1]), n, out, 1));
    }
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

const dlg_kernels dlg_cuda_fc_h = {.setup = fc_setup,
                                    .forward = fc_forward,
                                    .backward = fc_backward,
                                    .destroy = fc_destroy,
                                    .any_layout = true};
