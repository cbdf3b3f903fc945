/* Batch norm of the half backends (bf16/fp16 data, fp32 params and
 * statistics), with a folded ReLU (dlg_bn_param.relu: the kernels say
 * fuses_relu, so the planner folds a ReLU that alone reads the output).
 *
 * Paths (dlg_bn_tier, cuda_nhwc.h), the best first, each refusal stepping
 * down for good with a one-line note:
 *   EX_ACT / EX  channels-last training: cudnnBatchNormalizationForward-
 *         TrainingEx / BackwardEx, CUDNN_BATCHNORM_SPATIAL_PERSISTENT (as
 *         PyTorch runs channels_last batch norm), bnOps BN_ACTIVATION with
 *         a ReLU descriptor when a ReLU is folded (one pass each way), else
 *         BN (and a folded ReLU as a kernel).  Workspace and reserve-space
 *         sizes are asked at setup; the reserve space (forward -> backward)
 *         is allocated then, the workspace is the net's.
 *   PLAIN  cudnnBatchNormalizationForwardTraining / Backward, SPATIAL, on
 *         the half tensors (NCHW or NHWC); a folded ReLU as kernels (the
 *         backward masks dy by y > 0 into the workspace).  Inference, in
 *         every tier above F32: cudnnBatchNormalizationForwardInference.
 *   F32   the fp32 kernel on fp32 NCHW copies in the workspace.
 * All keep the fp32 kernel's saved mean / inverse std, so any path can
 * run the backward of another's forward, except Ex's reserve space: a
 * refused Ex backward goes to PLAIN.  BN_ADD_ACTIVATION (ResNet's add
 * before the ReLU) is not used: the engine folds no add into a batch norm. */
#include "cuda_half.h"

#include <stdio.h>
#include <stdlib.h>

#define K(call) dlg_cuda_ok((cudaError_t)(call))

enum { NOTE_BN_ACT = 1u << 12, NOTE_BN_EX = 1u << 13 };

typedef struct bn_state {
    dlg_half_io io;
    /* the fp32 kernel on a shadow layer (F32 tier; its saved statistics
     * serve every tier) */
    void *inner_state;
    size_t inner_ws; /* rounded up; the fp32 copies follow it */
    /* the F32 tier's scratch (inner_ws + 4 fp32 copies): the net's
     * workspace when F32 is the first tier, else allocated on the step
     * down to it (once, in an eager warm-up step: refusals come at the
     * first call), so the other tiers do not reserve 16 bytes an element */
    void *f32_mem;
    bool f32_in_ws; /* F32 was the first tier: the net's workspace holds it */
    dlg_half_shadow sh;
    cudnnTensorDescriptor_t bx, bp; /* half data in the context's order; fp32 params */
    cudnnActivationDescriptor_t act; /* ReLU for BN_ACTIVATION */
    dlg_bn_tier tier;
    size_t ex_ws;   /* cuDNN's Ex workspace at the start of the net's, rounded up */
    size_t rs[2];   /* reserve bytes for bnOps BN_ACTIVATION [0] and BN [1] */
    void *reserve;  /* max of rs */
} bn_state;

static void bn_destroy(void *ctx, void *vs)
{
    bn_state *s = vs;
    if (!s)
        return;
    if (s->inner_state)
        dlg_cuda_bn.destroy(ctx, s->inner_state);
    if (s->bx)
        cudnnDestroyTensorDescriptor(s->bx);
    if (s->bp)
        cudnnDestroyTensorDescriptor(s->bp);
    if (s->act)
        cudnnDestroyActivationDescriptor(s->act);
    if (s->reserve)
        cudaFree(s->reserve);
    if (s->f32_mem)
        cudaFree(s->f32_mem);
    dlg_half_io_free(&s->io);
    free(s);
}

static cudnnBatchNormOps_t ops_of(dlg_bn_tier t)
{
    return t == DLG_BN_EX_ACT ? CUDNN_BATCHNORM_OPS_BN_ACTIVATION : CUDNN_BATCHNORM_OPS_BN;
}

/* cuDNN's Ex sizes for one bnOps (the query arguments PyTorch passes);
 * false if cuDNN refuses the configuration */
static bool ex_sizes(dlg_cuda_ctx *c, bn_state *s, dlg_bn_tier t, size_t *ws, size_t *rs)
{
    cudnnBatchNormOps_t ops = ops_of(t);
    cudnnActivationDescriptor_t act = t == DLG_BN_EX_ACT ? s->act : NULL;
    size_t f = 0, b = 0;
    bool ok = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                  c->dnn, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, s->bx, s->bx, s->bx, s->bp,
                  act, &f) == CUDNN_STATUS_SUCCESS &&
              cudnnGetBatchNormalizationBackwardExWorkspaceSize(
                  c->dnn, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, s->bx, s->bx, s->bx, NULL,
                  s->bx, s->bp, act, &b) == CUDNN_STATUS_SUCCESS &&
              cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
                  c->dnn, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, act, s->bx, rs) ==
                  CUDNN_STATUS_SUCCESS;
    *ws = f > b ? f : b;
    return ok;
}

/* descriptors, then the first tier: Ex needs a channels-last training plan
 * whose size queries cuDNN answers */
static int bn_paths(dlg_cuda_ctx *c, const dlg_layer *l, bn_state *s, char *err, size_t errlen)
{
    bool relu = l->p.bn.relu, ex_ok = false, act_ok = false;
    int rc = dlg_half_desc(&s->bx, c, &l->bottom[0]->shape, err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateTensorDescriptor(&s->bp), "batch-norm parameter descriptor",
                           err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnDeriveBNTensorDescriptor(s->bp, s->bx, CUDNN_BATCHNORM_SPATIAL),
                           "batch-norm parameter descriptor", err, errlen);
    if (rc == -DLG_ENOMEM) /* not a reason to measure the fp32 tier instead */
        return rc;
    if (rc) {
        s->tier = DLG_BN_F32;
        return 0;
    }
    size_t ws[2] = {0, 0};
    if (dlg_half_nhwc(c, &l->bottom[0]->shape) && l->backward) {
        if (relu && (rc = dlg_cudnn_err(cudnnCreateActivationDescriptor(&s->act),
                                        "batch-norm activation descriptor", err, errlen)) < 0)
            return rc;
        if (relu && cudnnSetActivationDescriptor(s->act, CUDNN_ACTIVATION_RELU,
                                                 CUDNN_NOT_PROPAGATE_NAN, 0.0) == CUDNN_STATUS_SUCCESS)
            act_ok = ex_sizes(c, s, DLG_BN_EX_ACT, &ws[0], &s->rs[0]);
        ex_ok = ex_sizes(c, s, DLG_BN_EX, &ws[1], &s->rs[1]);
    }
    if (!act_ok)
        ws[0] = s->rs[0] = 0;
    if (!ex_ok)
        ws[1] = s->rs[1] = 0;
    s->tier = dlg_bn_tier_first(c->nhwc, l->backward, relu, ex_ok, act_ok);
    size_t w = ws[0] > ws[1] ? ws[0] : ws[1], r = s->rs[0] > s->rs[1] ? s->rs[0] : s->rs[1];
    s->ex_ws = (w + 255) & ~(size_t)255;
    if (r)
        return dlg_cuda_err(cudaMalloc(&s->reserve, r), "batch-norm reserve space", err, errlen);
    return 0;
}

static int bn_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                    size_t errlen)
{
    bn_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    dlg_half_shadow_init(&s->sh, l);
    s->sh.l.p.bn.relu = false; /* applied here, around the fp32 kernel */
    size_t iws = 0;
    int rc = dlg_half_io_setup(ctx, l, &s->io, 0, true, err, errlen);
    if (!rc)
        rc = dlg_cuda_bn.setup(ctx, &s->sh.l, &s->inner_state, &iws, err, errlen);
    if (!rc)
        rc = bn_paths(ctx, l, s, err, errlen);
    if (rc < 0) {
        bn_destroy(ctx, s);
        return rc;
    }
    s->inner_ws = (iws + 255) & ~(size_t)255;
    size_t n = (size_t)l->bottom[0]->count;
    /* Ex workspace + two half scratch tensors (masked dy, unwanted dx); the
     * fp32 kernel's scratch + x, y, dy, dx in fp32 only for a first F32 */
    size_t a = s->ex_ws + 2 * n * sizeof(dlg_half), b = s->inner_ws + 4 * n * sizeof(float);
    s->f32_in_ws = s->tier == DLG_BN_F32;
    *ws = s->f32_in_ws && b > a ? b : a;
    *state = s;
    return 0;
}

/* 0 done, 1 refused by cuDNN (nothing written), <0 error.  cuDNN 9 may
 * return a refusal as a specific code of its category (NOT_SUPPORTED_SHAPE
 * 3002, BAD_PARAM_SHAPE_MISMATCH 2008, ...): compare categories. */
static int refused(cudnnStatus_t st)
{
    if (st == CUDNN_STATUS_SUCCESS)
        return 0;
    int cat = CUDNN_STATUS_CATEGORY((int)st);
    return cat == CUDNN_STATUS_NOT_SUPPORTED || cat == CUDNN_STATUS_BAD_PARAM ? 1 : dlg_cudnn_ok(st);
}

static void step_down(dlg_cuda_ctx *c, bn_state *s, dlg_bn_tier to)
{
    const char *ty = c->math == DLG_CUDA_FP16 ? "fp16" : "bf16";
    char msg[200];
    unsigned kind = s->tier == DLG_BN_EX_ACT ? NOTE_BN_ACT
                    : s->tier == DLG_BN_EX   ? NOTE_BN_EX
                                             : DLG_CUDA_NOTE_HALF_BN;
    snprintf(msg, sizeof msg, "cuDNN refused %s batch norm (%s); from now on: %s", ty,
             dlg_bn_tier_name(s->tier), dlg_bn_tier_name(to));
    dlg_cuda_note_once(c, kind, msg);
    s->tier = to;
}

static dlg_half *scratch(const dlg_layer *l, const bn_state *s, int k)
{
    return (dlg_half *)((char *)l->ws + s->ex_ws) + (size_t)k * (size_t)l->bottom[0]->count;
}

static int fwd_dnn(dlg_cuda_ctx *c, dlg_layer *l, bn_state *s)
{
    const float one = 1.f, zero = 0.f;
    float *save = dlg_cuda_bn_saved(s->inner_state);
    int64_t C = l->bottom[0]->shape.d[1];
    dlg_half *x = dlg_half_x(l, &s->io, 0), *y = dlg_half_y(l, &s->io, 0);
    const dlg_bn_param *p = &l->p.bn;
    cudnnStatus_t st;
    if (!l->train)
        st = cudnnBatchNormalizationForwardInference(
            c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->bx, x, s->bx, y, s->bp,
            CF(l->param[0]), CF(l->param[1]), CF(l->param[2]), CF(l->param[3]), p->eps);
    else if (s->tier == DLG_BN_PLAIN)
        st = cudnnBatchNormalizationForwardTraining(
            c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->bx, x, s->bx, y, s->bp,
            CF(l->param[0]), CF(l->param[1]), p->momentum, CF(l->param[2]), CF(l->param[3]),
            p->eps, save, save + C);
    else {
        int k = s->tier == DLG_BN_EX_ACT ? 0 : 1;
        st = cudnnBatchNormalizationForwardTrainingEx(
            c->dnn, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops_of(s->tier), &one, &zero, s->bx, x,
            NULL, NULL, s->bx, y, s->bp, CF(l->param[0]), CF(l->param[1]), p->momentum,
            CF(l->param[2]), CF(l->param[3]), p->eps, save, save + C, k == 0 ? s->act : NULL,
            l->ws, s->ex_ws, s->reserve, s->rs[k]);
    }
    int rc = refused(st);
    if (rc == 0 && p->relu && !(l->train && s->tier == DLG_BN_EX_ACT))
        rc = K(dlg_cuk_relu_fwd_h(c->stream, dlg_cuda_htype(c), y, y, l->top[0]->count));
    return rc;
}

static int bwd_dnn(dlg_cuda_ctx *c, dlg_layer *l, bn_state *s)
{
    const float one = 1.f, zero = 0.f;
    float *save = dlg_cuda_bn_saved(s->inner_state);
    int64_t C = l->bottom[0]->shape.d[1], n = l->bottom[0]->count;
    const dlg_bn_param *p = &l->p.bn;
    dlg_half *x = dlg_half_x(l, &s->io, 0), *y = dlg_half_y(l, &s->io, 0);
    dlg_half *dy = dlg_half_dy(l, &s->io, 0);
    dlg_half *dx = l->prop_down[0] ? dlg_half_dx(l, &s->io, 0) : scratch(l, s, 1);
    if (p->relu && s->tier != DLG_BN_EX_ACT) { /* y > 0 iff the batch norm's output was */
        int rc = K(dlg_cuk_relu_bwd_h(c->stream, dlg_cuda_htype(c), y, dy, scratch(l, s, 0), n));
        if (rc)
            return rc;
        dy = scratch(l, s, 0);
    }
    cudnnStatus_t st;
    if (s->tier == DLG_BN_PLAIN)
        st = cudnnBatchNormalizationBackward(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one,
                                             &zero, s->bx, x, s->bx, dy, s->bx, dx, s->bp,
                                             CF(l->param[0]), CG(l->param[0]), CG(l->param[1]),
                                             p->eps, save, save + C);
    else {
        bool act = s->tier == DLG_BN_EX_ACT;
        st = cudnnBatchNormalizationBackwardEx(
            c->dnn, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops_of(s->tier), &one, &zero, &one, &zero,
            s->bx, x, act ? s->bx : NULL, act ? y : NULL, s->bx, dy, NULL, NULL, s->bx, dx, s->bp,
            CF(l->param[0]), act ? CF(l->param[1]) : NULL, CG(l->param[0]), CG(l->param[1]),
            p->eps, save, save + C, act ? s->act : NULL, l->ws, s->ex_ws, s->reserve,
            s->rs[act ? 0 : 1]);
    }
    return refused(st);
}

/* the F32 tier: fp32 NCHW copies after the fp32 kernel's scratch, in the
 * net's workspace (F32 from the start) or in f32_mem (stepped down) */
static float *f32_bind(bn_state *s, dlg_layer *l)
{
    int64_t n = l->bottom[0]->count;
    size_t need = s->inner_ws + 4 * (size_t)n * sizeof(float);
    void *base = l->ws;
    if (!s->f32_in_ws) {
        if (!s->f32_mem && cudaMalloc(&s->f32_mem, need) != cudaSuccess) {
            cudaGetLastError();
            s->f32_mem = NULL;
            return NULL;
        }
        base = s->f32_mem;
    }
    return dlg_half_shadow_bind(&s->sh, l, base, (float *)((char *)base + s->inner_ws));
}

static int fwd_f32(dlg_cuda_ctx *c, dlg_layer *l, bn_state *s)
{
    float *x = f32_bind(s, l);
    if (!x)
        return -DLG_ENOMEM;
    int64_t n = l->bottom[0]->count;
    const dlg_shape *sh = &l->bottom[0]->shape;
    int rc = dlg_half_to_f32(c, sh, dlg_half_x(l, &s->io, 0), x);
    if (!rc)
        rc = dlg_cuda_bn.forward(c, &s->sh.l, s->inner_state);
    if (!rc && l->p.bn.relu)
        rc = K(dlg_cuk_relu_fwd(c->stream, x + n, x + n, n));
    return rc ? rc : dlg_half_from_f32(c, sh, x + n, dlg_half_y(l, &s->io, 0));
}

static int bwd_f32(dlg_cuda_ctx *c, dlg_layer *l, bn_state *s)
{
    float *x = f32_bind(s, l);
    if (!x)
        return -DLG_ENOMEM;
    int64_t n = l->bottom[0]->count;
    const dlg_shape *sh = &l->bottom[0]->shape;
    int rc = dlg_half_to_f32(c, sh, dlg_half_x(l, &s->io, 0), x);
    if (!rc)
        rc = dlg_half_to_f32(c, sh, dlg_half_dy(l, &s->io, 0), x + 2 * n);
    if (!rc && l->p.bn.relu) {
        rc = dlg_half_to_f32(c, sh, dlg_half_y(l, &s->io, 0), x + n);
        if (!rc)
            rc = K(dlg_cuk_relu_bwd(c->stream, x + n, x + 2 * n, x + 2 * n, n));
    }
    if (!rc)
        rc = dlg_cuda_bn.backward(c, &s->sh.l, s->inner_state);
    if (!rc && l->prop_down[0])
        rc = dlg_half_from_f32(c, sh, x + 3 * n, dlg_half_dx(l, &s->io, 0));
    return rc;
}

static int bn_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    bn_state *s = vs;
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    while (!rc && s->tier != DLG_BN_F32) {
        rc = fwd_dnn(c, l, s);
        if (rc <= 0)
            return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
        rc = 0;
        step_down(c, s, l->train ? dlg_bn_tier_after_refusal(s->tier, false) : DLG_BN_F32);
    }
    if (!rc)
        rc = fwd_f32(c, l, s);
    return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
}

static int bn_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    bn_state *s = vs;
    /* as the fp32 kernel: no backward through running statistics; param
     * diffs exist whenever the layer trains */
    if (!l->train || !l->param_grad)
        return -DLG_ENOTSUP;
    int rc = dlg_half_pre_bwd(c, l, &s->io);
    while (!rc && s->tier != DLG_BN_F32) {
        rc = bwd_dnn(c, l, s);
        if (rc <= 0)
            return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
        rc = 0;
        step_down(c, s, dlg_bn_tier_after_refusal(s->tier, true));
    }
    if (!rc)
        rc = bwd_f32(c, l, s);
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

/* the profile's name: the tier it runs on now (a refusal steps down) */
static const char *bn_impl(const void *vs)
{
    return dlg_bn_tier_name(((const bn_state *)vs)->tier);
}

const dlg_kernels dlg_cuda_bn_h = {.setup = bn_setup,
                                    .impl = bn_impl,
                                    .forward = bn_forward,
                                    .backward = bn_backward,
                                    .destroy = bn_destroy,
                                    .any_layout = true,
                                    .fuses_relu = true};
