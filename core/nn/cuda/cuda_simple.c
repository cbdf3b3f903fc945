/* Element-wise and data-movement layers, inner product on cuBLAS, and the
 * softmax loss. */
#include "cuda.h"

#include <stdlib.h>

#define K(call) dlg_cuda_ok((cudaError_t)(call))

static int relu_forward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    return K(dlg_cuk_relu_fwd(c->stream, CF(l->bottom[0]), CF(l->top[0]), l->top[0]->count));
}

static int relu_backward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    if (!l->prop_down[0])
        return 0;
    return K(dlg_cuk_relu_bwd(c->stream, CF(l->bottom[0]), CG(l->top[0]), CG(l->bottom[0]),
                              l->top[0]->count));
}

const dlg_kernels dlg_cuda_relu = {
    .setup = dlg_cuda_setup_none, .forward = relu_forward, .backward = relu_backward};

/* ---- dropout (cuda.h: dlg_cuda_dropout_dev) ------------------------------- */
int dlg_cuda_dropout_dev_init(const dlg_cuda_ctx *c, const dlg_layer *l, dlg_cuda_dropout_dev *d,
                              char *err, size_t errlen)
{
    d->seed = l->seed;
    int rc = dlg_cuda_err(cudaMalloc((void **)&d->mask, (size_t)l->top[0]->count * sizeof(float)),
                          "dropout mask", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMalloc((void **)&d->step, sizeof *d->step), "dropout step", err,
                          errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMemsetAsync(d->step, 0, sizeof *d->step, c->stream), "dropout step",
                          err, errlen);
    return rc;
}

void dlg_cuda_dropout_dev_free(dlg_cuda_dropout_dev *d)
{
    if (d->mask)
        cudaFree(d->mask);
    if (d->step)
        cudaFree(d->step);
    d->mask = NULL;
    d->step = NULL;
}

typedef dlg_cuda_dropout_dev dropout_state;

static void dropout_destroy(void *ctx, void *vs)
{
    if (vs)
        dlg_cuda_dropout_dev_free(vs);
    free(vs);
}

static int dropout_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                         size_t errlen)
{
    dropout_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int rc = dlg_cuda_dropout_dev_init(ctx, l, s, err, errlen);
    if (rc < 0) {
        dropout_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = 0;
    return 0;
}

static int dropout_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    dropout_state *s = vs;
    size_t bytes = (size_t)l->top[0]->count * sizeof(float);
    if (!l->train)
        return dlg_cuda_ok(cudaMemcpyAsync(CF(l->top[0]), CF(l->bottom[0]), bytes,
                                           cudaMemcpyDeviceToDevice, c->stream));
    return K(dlg_cuk_dropout_fwd(c->stream, CF(l->bottom[0]), CF(l->top[0]), s->mask,
                                 l->top[0]->count, l->p.dropout_ratio, s->seed, s->step));
}

static int dropout_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    dropout_state *s = vs;
    if (!l->prop_down[0])
        return 0;
    if (!l->train)
        return dlg_cuda_ok(cudaMemcpyAsync(CG(l->bottom[0]), CG(l->top[0]),
                                           (size_t)l->top[0]->count * sizeof(float),
                                           cudaMemcpyDeviceToDevice, c->stream));
    return K(dlg_cuk_mul(c->stream, CG(l->top[0]), s->mask, CG(l->bottom[0]), l->top[0]->count));
}

const dlg_kernels dlg_cuda_dropout = {.setup = dropout_setup,
                                      .forward = dropout_forward,
                                      .backward = dropout_backward,
                                      .destroy = dropout_destroy};

/* ---- concat along channels: one strided copy per input ------------------- */
static int concat_copy(dlg_cuda_ctx *c, dlg_layer *l, bool back)
{
    int64_t N = l->top[0]->shape.d[0], top = dlg_shape_inner(&l->top[0]->shape), off = 0;
    for (int b = 0; b < l->nbottom; b++) {
        int64_t in = dlg_shape_inner(&l->bottom[b]->shape);
        size_t w = (size_t)in * sizeof(float), tp = (size_t)top * sizeof(float);
        cudaError_t e = cudaSuccess;
        if (back && l->prop_down[b])
            e = cudaMemcpy2DAsync(CG(l->bottom[b]), w, CG(l->top[0]) + off, tp, w, (size_t)N,
                                  cudaMemcpyDeviceToDevice, c->stream);
        else if (!back)
            e = cudaMemcpy2DAsync(CF(l->top[0]) + off, tp, CF(l->bottom[b]), w, w, (size_t)N,
                                  cudaMemcpyDeviceToDevice, c->stream);
        if (e != cudaSuccess)
            return -DLG_EINTERNAL;
        off += in;
    }
    return 0;
}

static int concat_forward(void *ctx, dlg_layer *l, void *st) { return concat_copy(ctx, l, false); }
static int concat_backward(void *ctx, dlg_layer *l, void *st) { return concat_copy(ctx, l, true); }

const dlg_kernels dlg_cuda_concat = {
    .setup = dlg_cuda_setup_none, .forward = concat_forward, .backward = concat_backward};

static int add_forward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    return K(dlg_cuk_add(c->stream, CF(l->bottom[0]), CF(l->bottom[1]), CF(l->top[0]),
                         l->top[0]->count));
}

static int add_backward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    size_t bytes = (size_t)l->top[0]->count * sizeof(float);
    for (int b = 0; b < 2; b++)
        if (l->prop_down[b] && cudaMemcpyAsync(CG(l->bottom[b]), CG(l->top[0]), bytes,
                                               cudaMemcpyDeviceToDevice, c->stream) != cudaSuccess)
            return -DLG_EINTERNAL;
    return 0;
}

const dlg_kernels dlg_cuda_add = {
    .setup = dlg_cuda_setup_none, .forward = add_forward, .backward = add_backward};

/* Split outputs alias the input; backward sums their diffs. */
static int split_forward(void *ctx, dlg_layer *l, void *st) { return 0; }

static int split_backward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    int64_t n = l->bottom[0]->count;
    float *dx = CG(l->bottom[0]);
    int first = 1, rc = 0, nd = 0, d[2] = {0, 0};
    for (int t = 0; t < l->ntop; t++)
        if (l->top[t]->diff && nd++ < 2)
            d[nd - 1] = t;
    if (nd == 2) /* the common case (residual blocks): one pass, not copy + add */
        return K(dlg_cuk_add(c->stream, CG(l->top[d[0]]), CG(l->top[d[1]]), dx, n));
    for (int t = 0; t < l->ntop && !rc; t++) {
        if (!l->top[t]->diff)
            continue;
        if (first)
            rc = dlg_cuda_ok(cudaMemcpyAsync(dx, CG(l->top[t]), (size_t)n * sizeof(float),
                                             cudaMemcpyDeviceToDevice, c->stream));
        else
            rc = K(dlg_cuk_acc(c->stream, dx, CG(l->top[t]), n));
        first = 0;
    }
    if (!rc && first)
        rc = dlg_cuda_ok(cudaMemsetAsync(dx, 0, (size_t)n * sizeof(float), c->stream));
    return rc;
}

const dlg_kernels dlg_cuda_split = {
    .setup = dlg_cuda_setup_none, .forward = split_forward, .backward = split_backward};

/* ---- inner product: row-major X[N,in] W[out,in] as column-major GEMMs ---- */
static int fc_forward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    int n = (int)l->bottom[0]->shape.d[0], in = (int)dlg_shape_inner(&l->bottom[0]->shape);
    int out = (int)l->top[0]->shape.d[1];
    const float one = 1.f, zero = 0.f;
    int rc = dlg_cublas_ok(cublasSgemm(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &one,
                                       CF(l->param[0]), in, CF(l->bottom[0]), in, &zero,
                                       CF(l->top[0]), out));
    return rc ? rc : K(dlg_cuk_bias_rows(c->stream, CF(l->top[0]), CF(l->param[1]), n, out));
}

static int fc_backward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    int n = (int)l->bottom[0]->shape.d[0], in = (int)dlg_shape_inner(&l->bottom[0]->shape);
    int out = (int)l->top[0]->shape.d[1];
    const float one = 1.f, zero = 0.f;
    int rc = 0;
    if (l->prop_down[0])
        rc = dlg_cublas_ok(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one,
                                       CF(l->param[0]), in, CG(l->top[0]), out, &zero,
                                       CG(l->bottom[0]), in));
    if (!rc && l->param_grad) {
        rc = dlg_cublas_ok(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one,
                                       CF(l->bottom[0]), in, CG(l->top[0]), out, &zero,
                                       CG(l->param[0]), in));
        if (!rc)
            rc = K(dlg_cuk_col_sum(c->stream, CG(l->top[0]), CG(l->param[1]), n, out));
    }
    return rc;
}

const dlg_kernels dlg_cuda_fc = {
    .setup = dlg_cuda_setup_none, .forward = fc_forward, .backward = fc_backward};

/* ---- softmax cross-entropy loss ------------------------------------------- */
static void loss_destroy(void *ctx, void *vs)
{
    if (vs)
        cudaFree(vs);
}

static int loss_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    float *rows = NULL; /* per row: lse, loss, rank */
    int rc = dlg_cuda_err(
        cudaMalloc((void **)&rows, 3 * (size_t)l->bottom[0]->shape.d[0] * sizeof(float)),
        "loss state", err, errlen);
    *state = rows;
    *ws = 0;
    return rc;
}

/* A bad label sets a sticky device flag.  It surfaces as -DLG_EINVAL from
 * a later forward (read back without a sync) and from any sync or read of
 * results, so the step itself never waits on the host. */
static int loss_forward(void *ctx, dlg_layer *l, void *rows)
{
    dlg_cuda_ctx *c = ctx;
    int64_t N = l->bottom[0]->shape.d[0], Kc = dlg_shape_inner(&l->bottom[0]->shape);
    int rc = K(dlg_cuk_loss_fwd(c->stream, CF(l->bottom[0]), CF(l->bottom[1]), N, Kc,
                                CF(l->top[0]), rows, c->flag_dev));
    return rc ? rc : dlg_cuda_flag_poll(c);
}

static int loss_backward(void *ctx, dlg_layer *l, void *rows)
{
    dlg_cuda_ctx *c = ctx;
    int64_t N = l->bottom[0]->shape.d[0], Kc = dlg_shape_inner(&l->bottom[0]->shape);
    if (!l->prop_down[0])
        return 0;
    return K(dlg_cuk_loss_bwd(c->stream, CF(l->bottom[0]), CF(l->bottom[1]), rows, N, Kc,
                              l->p.loss_weight, CG(l->bottom[0])));
}

const dlg_kernels dlg_cuda_loss = {.setup = loss_setup,
                                   .forward = loss_forward,
                                   .backward = loss_backward,
                                   .destroy = loss_destroy};
