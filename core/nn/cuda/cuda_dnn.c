/* Pooling (own kernels: Caffe's ceil-mode windows and average divisor have
 * no cuDNN equivalent; floor mode is the same kernels given the smaller
 * output), LRN, batch norm and softmax on cuDNN. */
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- pooling -------------------------------------------------------------- */
int dlg_cuda_pool_dev_init(const dlg_layer *l, dlg_cuda_pool_dev *p, char *err, size_t errlen)
{
    const dlg_pool_param *pp = &l->p.pool;
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    p->g = (dlg_cuk_pool){x->d[0] * x->d[1], x->d[2], x->d[3], y->d[2], y->d[3], pp->kh, pp->kw,
                          pp->sh, pp->sw, pp->ph, pp->pw, pp->mode == DLG_POOL_MAX};
    if (!p->g.max || !l->backward)
        return 0;
    return dlg_cuda_err(cudaMalloc((void **)&p->mask, (size_t)l->top[0]->count * sizeof(int)),
                        "pool mask", err, errlen);
}

void dlg_cuda_pool_dev_free(dlg_cuda_pool_dev *p)
{
    if (p->mask)
        cudaFree(p->mask);
    p->mask = NULL;
}

typedef dlg_cuda_pool_dev pool_state;

static void pool_destroy(void *ctx, void *vs)
{
    if (vs)
        dlg_cuda_pool_dev_free(vs);
    free(vs);
}

static int pool_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int rc = dlg_cuda_pool_dev_init(l, s, err, errlen);
    if (rc < 0) {
        pool_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = 0;
    return 0;
}

static int pool_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    pool_state *s = vs;
    return dlg_cuda_ok((cudaError_t)dlg_cuk_pool_fwd(c->stream, &s->g, CF(l->bottom[0]),
                                                     CF(l->top[0]), s->mask));
}

static int pool_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    pool_state *s = vs;
    if (!l->prop_down[0])
        return 0;
    return dlg_cuda_ok((cudaError_t)dlg_cuk_pool_bwd(c->stream, &s->g, CG(l->top[0]), s->mask,
                                                     CG(l->bottom[0])));
}

const dlg_kernels dlg_cuda_pool = {
    .setup = pool_setup, .forward = pool_forward, .backward = pool_backward, .destroy = pool_destroy};

/* ---- LRN (across channels; cuDNN uses Caffe's alpha/size) ------------------ */
typedef struct lrn_state {
    cudnnTensorDescriptor_t x;
    cudnnLRNDescriptor_t d;
} lrn_state;

static void lrn_destroy(void *ctx, void *vs)
{
    lrn_state *s = vs;
    if (!s)
        return;
    cudnnDestroyTensorDescriptor(s->x);
    cudnnDestroyLRNDescriptor(s->d);
    free(s);
}

static int lrn_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                     size_t errlen)
{
    const dlg_lrn_param *p = &l->p.lrn;
    if (p->size < CUDNN_LRN_MIN_N || p->size > CUDNN_LRN_MAX_N || p->k < CUDNN_LRN_MIN_K ||
        p->beta < CUDNN_LRN_MIN_BETA) {
        snprintf(err, errlen, "cuDNN LRN needs size %d..%d, k >= %g, beta >= %g", CUDNN_LRN_MIN_N,
                 CUDNN_LRN_MAX_N, CUDNN_LRN_MIN_K, CUDNN_LRN_MIN_BETA);
        return -DLG_ENOTSUP;
    }
    lrn_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int rc = dlg_cuda_tensor_desc(&s->x, &l->bottom[0]->shape, err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateLRNDescriptor(&s->d), "LRN descriptor", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnSetLRNDescriptor(s->d, (unsigned)p->size, p->alpha, p->beta, p->k),
                           "LRN descriptor", err, errlen);
    if (rc < 0) {
        lrn_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = 0;
    return 0;
}

static int lrn_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    lrn_state *s = vs;
    const float one = 1.f, zero = 0.f;
    return dlg_cudnn_ok(cudnnLRNCrossChannelForward(c->dnn, s->d, CUDNN_LRN_CROSS_CHANNEL_DIM1,
                                                    &one, s->x, CF(l->bottom[0]), &zero, s->x,
                                                    CF(l->top[0])));
}

static int lrn_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    lrn_state *s = vs;
    const float one = 1.f, zero = 0.f;
    if (!l->prop_down[0])
        return 0;
    return dlg_cudnn_ok(cudnnLRNCrossChannelBackward(
        c->dnn, s->d, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, s->x, CF(l->top[0]), s->x, CG(l->top[0]),
        s->x, CF(l->bottom[0]), &zero, s->x, CG(l->bottom[0])));
}

const dlg_kernels dlg_cuda_lrn = {
    .setup = lrn_setup, .forward = lrn_forward, .backward = lrn_backward, .destroy = lrn_destroy};

/* ---- batch norm + scale ------------------------------------------------------ */
typedef struct bn_state {
    cudnnTensorDescriptor_t x, p;
    float *save; /* saved mean, saved inverse std of the last training forward */
    bool scratch_dx; /* backward writes dx to the workspace (input needs none) */
} bn_state;

static void bn_destroy(void *ctx, void *vs)
{
    bn_state *s = vs;
    if (!s)
        return;
    cudnnDestroyTensorDescriptor(s->x);
    cudnnDestroyTensorDescriptor(s->p);
    if (s->save)
        cudaFree(s->save);
    free(s);
}

static int bn_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                    size_t errlen)
{
    if (l->p.bn.eps < CUDNN_BN_MIN_EPSILON) {
        snprintf(err, errlen, "cuDNN batch norm needs eps >= %g", CUDNN_BN_MIN_EPSILON);
        return -DLG_ENOTSUP;
    }
    bn_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int64_t C = l->bottom[0]->shape.d[1];
    int rc = dlg_cuda_tensor_desc(&s->x, &l->bottom[0]->shape, err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateTensorDescriptor(&s->p), "BN descriptor", err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnDeriveBNTensorDescriptor(s->p, s->x, CUDNN_BATCHNORM_SPATIAL),
                           "BN descriptor", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMalloc((void **)&s->save, 2 * (size_t)C * sizeof(float)), "BN state",
                          err, errlen);
    if (rc < 0) {
        bn_destroy(ctx, s);
        return rc;
    }
    s->scratch_dx = l->backward && !l->prop_down[0];
    *state = s;
    *ws = s->scratch_dx ? (size_t)l->bottom[0]->count * sizeof(float) : 0;
    return 0;
}

static int bn_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    bn_state *s = vs;
    const float one = 1.f, zero = 0.f;
    int64_t C = l->bottom[0]->shape.d[1];
    if (l->train)
        return dlg_cudnn_ok(cudnnBatchNormalizationForwardTraining(
            c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->x, CF(l->bottom[0]), s->x,
            CF(l->top[0]), s->p, CF(l->param[0]), CF(l->param[1]), l->p.bn.momentum,
            CF(l->param[2]), CF(l->param[3]), l->p.bn.eps, s->save, s->save + C));
    return dlg_cudnn_ok(cudnnBatchNormalizationForwardInference(
        c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->x, CF(l->bottom[0]), s->x, CF(l->top[0]),
        s->p, CF(l->param[0]), CF(l->param[1]), CF(l->param[2]), CF(l->param[3]), l->p.bn.eps));
}

static int bn_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    bn_state *s = vs;
    const float one = 1.f, zero = 0.f;
    int64_t C = l->bottom[0]->shape.d[1];
    if (!l->train)
        return -DLG_ENOTSUP; /* backward through running statistics: not on cuDNN */
    float *dx = s->scratch_dx ? l->ws : CG(l->bottom[0]);
    /* param diffs exist whenever the layer trains; scale/bias diffs overwrite */
    if (!l->param_grad)
        return -DLG_ENOTSUP;
    return dlg_cudnn_ok(cudnnBatchNormalizationBackward(
        c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, s->x, CF(l->bottom[0]), s->x,
        CG(l->top[0]), s->x, dx, s->p, CF(l->param[0]), CG(l->param[0]), CG(l->param[1]),
        l->p.bn.eps, s->save, s->save + C));
}

float *dlg_cuda_bn_saved(void *state) { return ((bn_state *)state)->save; }

const dlg_kernels dlg_cuda_bn = {
    .setup = bn_setup, .forward = bn_forward, .backward = bn_backward, .destroy = bn_destroy};

/* ---- softmax over channels ------------------------------------------------------ */
static void softmax_destroy(void *ctx, void *vs)
{
    if (vs)
        cudnnDestroyTensorDescriptor((cudnnTensorDescriptor_t)vs);
}

static int softmax_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                         size_t errlen)
{
    const dlg_shape *x = &l->bottom[0]->shape;
    /* N, C, then everything else as one spatial axis */
    dlg_shape s = {4, {x->d[0], x->d[1], 1, dlg_shape_inner(x) / x->d[1], 1}};
    cudnnTensorDescriptor_t d;
    int rc = dlg_cuda_tensor_desc(&d, &s, err, errlen);
    if (rc < 0)
        return rc;
    *state = d;
    *ws = 0;
    return 0;
}

static int softmax_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    cudnnTensorDescriptor_t d = vs;
    const float one = 1.f, zero = 0.f;
    return dlg_cudnn_ok(cudnnSoftmaxForward(c->dnn, CUDNN_SOFTMAX_ACCURATE,
                                            CUDNN_SOFTMAX_MODE_CHANNEL, &one, d, CF(l->bottom[0]),
                                            &zero, d, CF(l->top[0])));
}

static int softmax_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    cudnnTensorDescriptor_t d = vs;
    const float one = 1.f, zero = 0.f;
    if (!l->prop_down[0])
        return 0;
    return dlg_cudnn_ok(cudnnSoftmaxBackward(c->dnn, CUDNN_SOFTMAX_ACCURATE,
                                             CUDNN_SOFTMAX_MODE_CHANNEL, &one, d, CF(l->top[0]), d,
                                             CG(l->top[0]), &zero, d, CG(l->bottom[0])));
}

const dlg_kernels dlg_cuda_softmax = {.setup = softmax_setup,
                                      .forward = softmax_forward,
                                      .backward = softmax_backward,
                                      .destroy = softmax_destroy};
