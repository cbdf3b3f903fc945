/* half (bf16/fp16): inner product on cuBLAS (half inputs, fp32
 * accumulation, fp32 weight gradient); LRN and softmax as the fp32 kernels
 * on fp32 NCHW copies in the workspace.  Batch norm: cuda_half_bn.c. */
#include "cuda_half.h"

#include <stdlib.h>

#define K(call) dlg_cuda_ok((cudaError_t)(call))

/* ---- fp32 kernels behind a half face: a shadow layer over workspace copies ---- */
typedef struct staged_state {
    dlg_half_io io;
    const dlg_kernels *inner;
    void *inner_state;
    size_t inner_ws; /* rounded up; the copies follow it */
    dlg_half_shadow sh;
} staged_state;

static void staged_destroy(void *ctx, void *vs)
{
    staged_state *s = vs;
    if (!s)
        return;
    if (s->inner && s->inner->destroy && s->inner_state)
        s->inner->destroy(ctx, s->inner_state);
    dlg_half_io_free(&s->io);
    free(s);
}

static int staged_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                        size_t errlen)
{
    staged_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    s->inner = l->type == DLG_L_LRN ? &dlg_cuda_lrn : &dlg_cuda_softmax;
    dlg_half_shadow_init(&s->sh, l);
    size_t iws = 0;
    /* the fp32 layer takes cuDNN descriptors: refuse a tensor past them
     * before its half staging buffers are allocated (GiBs for such tensors) */
    int rc = dlg_cuda_desc_fits(&l->bottom[0]->shape, err, errlen);
    if (!rc)
        rc = dlg_cuda_desc_fits(&l->top[0]->shape, err, errlen);
    if (!rc)
        rc = dlg_half_io_setup(ctx, l, &s->io, 0, true, err, errlen);
    if (!rc)
        rc = s->inner->setup(ctx, &s->sh.l, &s->inner_state, &iws, err, errlen);
    if (rc < 0) {
        staged_destroy(ctx, s);
        return rc;
    }
    s->inner_ws = (iws + 255) & ~(size_t)255;
    *state = s;
    /* x, y, dy, dx in fp32 */
    *ws = s->inner_ws + 4 * (size_t)l->bottom[0]->count * sizeof(float);
    return 0;
}

/* point the shadow tensors at this call's workspace */
static float *staged_bind(staged_state *s, dlg_layer *l)
{
    return dlg_half_shadow_bind(&s->sh, l, l->ws, (float *)((char *)l->ws + s->inner_ws));
}

/* the fp32 copies are NCHW (the cuDNN calls use NCHW float descriptors);
 * channels-last half tensors are transposed on the way */
static int staged_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    staged_state *s = vs;
    float *x = staged_bind(s, l);
    int64_t n = l->bottom[0]->count;
    const dlg_shape *sx = &l->bottom[0]->shape, *sy = &l->top[0]->shape;
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    if (!rc)
        rc = dlg_half_to_f32(c, sx, dlg_half_x(l, &s->io, 0), x);
    if (!rc)
        rc = s->inner->forward(ctx, &s->sh.l, s->inner_state);
    if (!rc)
        rc = dlg_half_from_f32(c, sy, x + n, dlg_half_y(l, &s->io, 0));
    return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
}

static int staged_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    staged_state *s = vs;
    float *x = staged_bind(s, l);
    int64_t n = l->bottom[0]->count;
    const dlg_shape *sx = &l->bottom[0]->shape, *sy = &l->top[0]->shape;
    int rc = dlg_half_pre_bwd(c, l, &s->io);
    if (!rc)
        rc = dlg_half_to_f32(c, sx, dlg_half_x(l, &s->io, 0), x);
    if (!rc) /* LRN and softmax backward read y */
        rc = dlg_half_to_f32(c, sy, dlg_half_y(l, &s->io, 0), x + n);
    if (!rc)
        rc = dlg_half_to_f32(c, sy, dlg_half_dy(l, &s->io, 0), x + 2 * n);
    if (!rc)
        rc = s->inner->backward(ctx, &s->sh.l, s->inner_state);
    if (!rc && l->prop_down[0])
        rc = dlg_half_from_f32(c, sx, x + 3 * n, dlg_half_dx(l, &s->io, 0));
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

const dlg_kernels dlg_cuda_staged_h = {.setup = staged_setup,
                                        .forward = staged_forward,
                                        .backward = staged_backward,
                                        .destroy = staged_destroy,
                                        .any_layout = true};

/* ---- inner product: row-major X[N,in] W[out,in] as column-major GEMMs ---- */
/* A channels-last 4-d input with H*W > 1 (AlexNet's and VGG's fc6) is
 * transposed to NCHW order in the workspace, so the weights keep Caffe's
 * C*H*W column order; dx comes back through an NCHW copy the same way. */
typedef struct fc_state {
    dlg_half_io io;
    dlg_half *w; /* half copy of the fp32 weights, made each forward */
    bool moves;  /* the input is NHWC and not NCHW memory */
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
    int rc = dlg_half_io_setup(ctx, l, &s->io, 0, true, err, errlen);
    if (!rc)
        rc = dlg_cuda_err(
            cudaMalloc((void **)&s->w, (size_t)l->param[0]->count * sizeof(dlg_half)),
            "fc half weights", err, errlen);
    if (rc < 0) {
        fc_destroy(ctx, s);
        return rc;
    }
    s->moves = dlg_half_moves(ctx, &l->bottom[0]->shape);
    *state = s;
    *ws = s->moves ? 2 * (size_t)l->bottom[0]->count * sizeof(dlg_half) : 0;
    return 0;
}

/* the input in NCHW order: the tensor's own, or a copy in the workspace */
static int fc_input(dlg_cuda_ctx *c, dlg_layer *l, fc_state *s, const dlg_half **x)
{
    *x = dlg_half_x(l, &s->io, 0);
    if (!s->moves)
        return 0;
    dlg_half *t = l->ws;
    int rc = dlg_half_to_nchw(c, &l->bottom[0]->shape, *x, t);
    *x = t;
    return rc;
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
    const dlg_half *x = NULL;
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    if (!rc)
        rc = K(dlg_cuk_f2h(c->stream, dlg_cuda_htype(c), CF(l->param[0]), s->w, l->param[0]->count));
    if (!rc)
        rc = fc_input(c, l, s, &x);
    if (!rc)
        rc = gemm(c, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, s->w, in, x, in,
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
    dlg_half *dx = s->moves ? (dlg_half *)l->ws + l->bottom[0]->count : dlg_half_dx(l, &s->io, 0);
    if (!rc && l->prop_down[0])
        rc = gemm(c, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, s->w, in, dy, out, dx,
                  dlg_cuda_half_blas(c), in);
    if (!rc && l->prop_down[0] && s->moves)
        rc = dlg_half_from_nchw(c, &l->bottom[0]->shape, dx, dlg_half_dx(l, &s->io, 0));
    if (!rc && l->param_grad) {
        const dlg_half *x = NULL;
        rc = fc_input(c, l, s, &x);
        if (!rc)
            rc = gemm(c, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, x, in, dy, out, CG(l->param[0]),
                      CUDA_R_32F, in);
        if (!rc)
            rc = K(dlg_cuk_bias_grad_nchw_h(c->stream, dlg_cuda_htype(c), dy, CG(l->param[1]), n, out, 1));
    }
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

/* the profile's name: a channels-last input's NCHW copies (both ways) count in its time */
static const char *fc_impl(const void *vs)
{
    return ((const fc_state *)vs)->moves ? "cublas gemmEx + nchw copies" : "cublas gemmEx";
}

const dlg_kernels dlg_cuda_fc_h = {.setup = fc_setup,
                                    .impl = fc_impl,
                                    .forward = fc_forward,
                                    .backward = fc_backward,
                                    .destroy = fc_destroy,
                                    .any_layout = true};
