/* half (bf16/fp16) activations: staging at fp32 edges, host conversion, and the
 * element-wise, data-movement, pooling and loss layers (cuda_half.h). */
#include "cuda_half.h"
#include "cuda_half_cvt.h"

#include <stdlib.h>
#include <string.h>

#define K(call) dlg_cuda_ok((cudaError_t)(call))
#define IS_HALF(t) dlg_half_is_layout((t)->layout)

/* ---- staging ---------------------------------------------------------------- */
/* zeroed on the net's stream and waited for, as cuda_alloc does: the
 * stream is non-blocking, so a legacy-stream cudaMemset would not be
 * ordered before its kernels (it could land after a forward wrote here) */
static int stage_alloc(const dlg_cuda_ctx *c, dlg_half **p, int64_t n, char *err, size_t errlen)
{
    int rc = dlg_cuda_err(cudaMalloc((void **)p, (size_t)(n ? n : 1) * sizeof(dlg_half)),
                          "half staging", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaMemsetAsync(*p, 0, (size_t)n * sizeof(dlg_half), c->stream),
                          "half staging", err, errlen);
    return rc ? rc : dlg_cuda_err(cudaStreamSynchronize(c->stream), "half staging", err, errlen);
}

int dlg_half_io_setup(const dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io,
                      unsigned skip_bottom, bool stage_tops, char *err, size_t errlen)
{
    io->nb = l->nbottom;
    io->nt = l->ntop;
    io->sx = calloc((size_t)io->nb + 1, sizeof *io->sx);
    io->sdx = calloc((size_t)io->nb + 1, sizeof *io->sdx);
    io->sy = calloc((size_t)io->nt + 1, sizeof *io->sy);
    io->sdy = calloc((size_t)io->nt + 1, sizeof *io->sdy);
    if (!io->sx || !io->sdx || !io->sy || !io->sdy)
        return -DLG_ENOMEM;
    int rc = 0;
    for (int j = 0; j < io->nb && !rc; j++) {
        const dlg_tensor *b = l->bottom[j];
        if ((j < 32 && (skip_bottom >> j) & 1) || IS_HALF(b))
            continue;
        rc = stage_alloc(c, &io->sx[j], b->count, err, errlen);
        if (!rc && l->backward && l->prop_down[j])
            rc = stage_alloc(c, &io->sdx[j], b->count, err, errlen);
    }
    for (int t = 0; t < io->nt && stage_tops && !rc; t++) {
        dlg_tensor *y = l->top[t];
        if (y->opaque_ok) {
            y->layout = dlg_half_layout_for(c, &y->shape);
            continue;
        }
        rc = stage_alloc(c, &io->sy[t], y->count, err, errlen);
        if (!rc && l->backward)
            rc = stage_alloc(c, &io->sdy[t], y->count, err, errlen);
    }
    return rc;
}

void dlg_half_io_free(dlg_half_io *io)
{
    for (int j = 0; j < io->nb; j++) {
        if (io->sx && io->sx[j])
            cudaFree(io->sx[j]);
        if (io->sdx && io->sdx[j])
            cudaFree(io->sdx[j]);
    }
    for (int t = 0; t < io->nt; t++) {
        if (io->sy && io->sy[t])
            cudaFree(io->sy[t]);
        if (io->sdy && io->sdy[t])
            cudaFree(io->sdy[t]);
    }
    free(io->sx);
    free(io->sdx);
    free(io->sy);
    free(io->sdy);
    memset(io, 0, sizeof *io);
}

int dlg_half_pre_fwd(dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io)
{
    int rc = 0;
    for (int j = 0; j < io->nb && !rc; j++)
        if (io->sx[j])
            rc = dlg_half_from_f32(c, &l->bottom[j]->shape, CF(l->bottom[j]), io->sx[j]);
    return rc;
}

int dlg_half_post_fwd(dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io)
{
    int rc = 0;
    for (int t = 0; t < io->nt && !rc; t++)
        if (io->sy[t])
            rc = dlg_half_to_f32(c, &l->top[t]->shape, io->sy[t], CF(l->top[t]));
    return rc;
}

int dlg_half_pre_bwd(dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io)
{
    int rc = 0;
    for (int t = 0; t < io->nt && !rc; t++)
        if (io->sdy[t] && l->top[t]->diff)
            rc = dlg_half_from_f32(c, &l->top[t]->shape, CG(l->top[t]), io->sdy[t]);
    return rc;
}

int dlg_half_post_bwd(dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io)
{
    int rc = 0;
    for (int j = 0; j < io->nb && !rc; j++)
        if (io->sdx[j] && l->prop_down[j] && l->bottom[j]->diff)
            rc = dlg_half_to_f32(c, &l->bottom[j]->shape, io->sdx[j], CG(l->bottom[j]));
    return rc;
}

dlg_half *dlg_half_x(const dlg_layer *l, const dlg_half_io *io, int j)
{
    return io->sx[j] ? io->sx[j] : (dlg_half *)l->bottom[j]->data;
}
dlg_half *dlg_half_dx(const dlg_layer *l, const dlg_half_io *io, int j)
{
    return io->sdx[j] ? io->sdx[j] : (dlg_half *)l->bottom[j]->diff;
}
dlg_half *dlg_half_y(const dlg_layer *l, const dlg_half_io *io, int t)
{
    return io->sy[t] ? io->sy[t] : (dlg_half *)l->top[t]->data;
}
dlg_half *dlg_half_dy(const dlg_layer *l, const dlg_half_io *io, int t)
{
    return io->sdy[t] ? io->sdy[t] : (dlg_half *)l->top[t]->diff;
}

/* ---- layers whose state is only the staging ------------------------------------ */
void dlg_half_shadow_init(dlg_half_shadow *s, const dlg_layer *l)
{
    s->l = *l;
    s->b = *l->bottom[0];
    s->t = *l->top[0];
    s->b.layout = s->t.layout = NULL;
    s->b.opaque_ok = s->t.opaque_ok = false;
    s->pb = &s->b;
    s->pt = &s->t;
    s->l.bottom = &s->pb;
    s->l.top = &s->pt;
    s->l.nbottom = s->l.ntop = 1;
}

float *dlg_half_shadow_bind(dlg_half_shadow *s, const dlg_layer *l, void *ws, float *x)
{
    int64_t n = l->bottom[0]->count;
    s->l.ws = ws;
    s->l.train = l->train;
    s->b.data = x;
    s->t.data = x + n;
    s->t.diff = x + 2 * n;
    s->b.diff = x + 3 * n;
    return x;
}

static void io_destroy(void *ctx, void *vs)
{
    if (!vs)
        return;
    dlg_half_io_free(vs);
    free(vs);
}

static int io_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                    size_t errlen)
{
    dlg_half_io *io = calloc(1, sizeof *io);
    if (!io)
        return -DLG_ENOMEM;
    int rc = dlg_half_io_setup(ctx, l, io, 0, true, err, errlen);
    if (rc < 0) {
        io_destroy(ctx, io);
        return rc;
    }
    *state = io;
    *ws = 0;
    return 0;
}

static int relu_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    dlg_half_io *io = vs;
    int rc = dlg_half_pre_fwd(c, l, io);
    if (!rc)
        rc = K(dlg_cuk_relu_fwd_h(c->stream, dlg_cuda_htype(c), dlg_half_x(l, io, 0), dlg_half_y(l, io, 0),
                                   l->top[0]->count));
    return rc ? rc : dlg_half_post_fwd(c, l, io);
}

static int relu_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    dlg_half_io *io = vs;
    if (!l->prop_down[0])
        return 0;
    int rc = dlg_half_pre_bwd(c, l, io);
    if (!rc)
        rc = K(dlg_cuk_relu_bwd_h(c->stream, dlg_cuda_htype(c), dlg_half_x(l, io, 0), dlg_half_dy(l, io, 0),
                                   dlg_half_dx(l, io, 0), l->top[0]->count));
    return rc ? rc : dlg_half_post_bwd(c, l, io);
}

const dlg_kernels dlg_cuda_relu_h = {.setup = io_setup,
                                      .forward = relu_forward,
                                      .backward = relu_backward,
                                      .destroy = io_destroy,
                                      .any_layout = true};

static int add_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    dlg_half_io *io = vs;
    int rc = dlg_half_pre_fwd(c, l, io);
    if (!rc)
        rc = K(dlg_cuk_add_h(c->stream, dlg_cuda_htype(c), dlg_half_x(l, io, 0), dlg_half_x(l, io, 1),
                              dlg_half_y(l, io, 0), l->top[0]->count));
    return rc ? rc : dlg_half_post_fwd(c, l, io);
}

static int add_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    dlg_half_io *io = vs;
    size_t bytes = (size_t)l->top[0]->count * sizeof(dlg_half);
    int rc = dlg_half_pre_bwd(c, l, io);
    for (int b = 0; b < 2 && !rc; b++)
        if (l->prop_down[b])
            rc = dlg_cuda_ok(cudaMemcpyAsync(dlg_half_dx(l, io, b), dlg_half_dy(l, io, 0), bytes,
                                             cudaMemcpyDeviceToDevice, c->stream));
    return rc ? rc : dlg_half_post_bwd(c, l, io);
}

const dlg_kernels dlg_cuda_add_h = {.setup = io_setup,
                                     .forward = add_forward,
                                     .backward = add_backward,
                                     .destroy = io_destroy,
                                     .any_layout = true};

/* concat along channels: one strided copy per input; rows are images
 * (NCHW: C*H*W each) or, channels-last, pixels (C each) */
static int concat_copy(dlg_cuda_ctx *c, dlg_layer *l, dlg_half_io *io, bool back)
{
    const dlg_shape *ys = &l->top[0]->shape;
    bool nhwc = dlg_half_nhwc(c, ys);
    int64_t N = nhwc ? ys->d[0] * ys->d[2] * ys->d[3] : ys->d[0];
    int64_t top = nhwc ? ys->d[1] : dlg_shape_inner(ys), off = 0;
    size_t tp = (size_t)top * sizeof(dlg_half);
    for (int b = 0; b < l->nbottom; b++) {
        int64_t in = nhwc ? l->bottom[b]->shape.d[1] : dlg_shape_inner(&l->bottom[b]->shape);
        size_t w = (size_t)in * sizeof(dlg_half);
        cudaError_t e = cudaSuccess;
        if (back && l->prop_down[b])
            e = cudaMemcpy2DAsync(dlg_half_dx(l, io, b), w, dlg_half_dy(l, io, 0) + off, tp, w,
                                  (size_t)N, cudaMemcpyDeviceToDevice, c->stream);
        else if (!back)
            e = cudaMemcpy2DAsync(dlg_half_y(l, io, 0) + off, tp, dlg_half_x(l, io, b), w, w,
                                  (size_t)N, cudaMemcpyDeviceToDevice, c->stream);
        if (e != cudaSuccess)
            return -DLG_EINTERNAL;
        off += in;
    }
    return 0;
}

static int concat_forward(void *ctx, dlg_layer *l, void *vs)
{
    int rc = dlg_half_pre_fwd(ctx, l, vs);
    if (!rc)
        rc = concat_copy(ctx, l, vs, false);
    return rc ? rc : dlg_half_post_fwd(ctx, l, vs);
}

static int concat_backward(void *ctx, dlg_layer *l, void *vs)
{
    int rc = dlg_half_pre_bwd(ctx, l, vs);
    if (!rc)
        rc = concat_copy(ctx, l, vs, true);
    return rc ? rc : dlg_half_post_bwd(ctx, l, vs);
}

const dlg_kernels dlg_cuda_concat_h = {.setup = io_setup,
                                        .forward = concat_forward,
                                        .backward = concat_backward,
                                        .destroy = io_destroy,
                                        .any_layout = true};

/* ---- split: outputs alias the input (and share its layout) ------------------------ */
static int split_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                       size_t errlen)
{
    for (int t = 0; t < l->ntop; t++)
        l->top[t]->layout = l->bottom[0]->layout;
    *state = NULL;
    *ws = 0;
    return 0;
}

static int split_forward(void *ctx, dlg_layer *l, void *st) { return 0; }

static int split_backward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    int64_t n = l->bottom[0]->count;
    bool half = IS_HALF(l->bottom[0]);
    size_t es = half ? sizeof(dlg_half) : sizeof(float);
    void *dx = l->bottom[0]->diff;
    int first = 1, rc = 0;
    for (int t = 0; t < l->ntop && !rc; t++) {
        void *d = l->top[t]->diff;
        if (!d)
            continue;
        if (first)
            rc = dlg_cuda_ok(
                cudaMemcpyAsync(dx, d, (size_t)n * es, cudaMemcpyDeviceToDevice, c->stream));
        else
            rc = K(half ? dlg_cuk_acc_h(c->stream, dlg_cuda_htype(c), dx, d, n)
                        : dlg_cuk_acc(c->stream, dx, d, n));
        first = 0;
    }
    if (!rc && first)
        rc = dlg_cuda_ok(cudaMemsetAsync(dx, 0, (size_t)n * es, c->stream));
    return rc;
}

const dlg_kernels dlg_cuda_split_h = {.setup = split_setup,
                                       .forward = split_forward,
                                       .backward = split_backward,
                                       .any_layout = true};

/* ---- dropout (the fp32 layer's device state: cuda.h) ------------------------------ */
typedef struct dropout_state {
    dlg_half_io io;
    dlg_cuda_dropout_dev d;
} dropout_state;

static void dropout_destroy(void *ctx, void *vs)
{
    dropout_state *s = vs;
    if (!s)
        return;
    dlg_cuda_dropout_dev_free(&s->d);
    dlg_half_io_free(&s->io);
    free(s);
}

static int dropout_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                         size_t errlen)
{
    const dlg_cuda_ctx *c = ctx;
    dropout_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int rc = dlg_half_io_setup(c, l, &s->io, 0, true, err, errlen);
    if (!rc)
        rc = dlg_cuda_dropout_dev_init(c, l, &s->d, err, errlen);
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
    int64_t n = l->top[0]->count;
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    if (!rc && !l->train)
        rc = dlg_cuda_ok(cudaMemcpyAsync(dlg_half_y(l, &s->io, 0), dlg_half_x(l, &s->io, 0),
                                         (size_t)n * sizeof(dlg_half), cudaMemcpyDeviceToDevice,
                                         c->stream));
    else if (!rc)
        rc = K(dlg_cuk_dropout_fwd_h(c->stream, dlg_cuda_htype(c), dlg_half_x(l, &s->io, 0),
                                      dlg_half_y(l, &s->io, 0), s->d.mask, n, l->p.dropout_ratio,
                                      s->d.seed, s->d.step));
    return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
}

static int dropout_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    dropout_state *s = vs;
    int64_t n = l->top[0]->count;
    if (!l->prop_down[0])
        return 0;
    int rc = dlg_half_pre_bwd(c, l, &s->io);
    if (!rc && !l->train)
        rc = dlg_cuda_ok(cudaMemcpyAsync(dlg_half_dx(l, &s->io, 0), dlg_half_dy(l, &s->io, 0),
                                         (size_t)n * sizeof(dlg_half), cudaMemcpyDeviceToDevice,
                                         c->stream));
    else if (!rc)
        rc = K(dlg_cuk_mul_h(c->stream, dlg_cuda_htype(c), dlg_half_dy(l, &s->io, 0), s->d.mask,
                              dlg_half_dx(l, &s->io, 0), n));
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

const dlg_kernels dlg_cuda_dropout_h = {.setup = dropout_setup,
                                         .forward = dropout_forward,
                                         .backward = dropout_backward,
                                         .destroy = dropout_destroy,
                                         .any_layout = true};

/* ---- pooling (Caffe windows, the fp32 layer's device state: cuda.h) ---------------- */
typedef struct pool_state {
    dlg_half_io io;
    dlg_cuda_pool_dev p;
    int64_t nhwc_c; /* channels of an NHWC input, 0: NCHW kernels */
} pool_state;

static void pool_destroy(void *ctx, void *vs)
{
    pool_state *s = vs;
    if (!s)
        return;
    dlg_cuda_pool_dev_free(&s->p);
    dlg_half_io_free(&s->io);
    free(s);
}

static int pool_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    const dlg_shape *x = &l->bottom[0]->shape;
    s->nhwc_c = dlg_half_nhwc(ctx, x) ? x->d[1] : 0;
    int rc = dlg_half_io_setup(ctx, l, &s->io, 0, true, err, errlen);
    if (!rc)
        rc = dlg_cuda_pool_dev_init(l, &s->p, err, errlen);
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
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    if (!rc && s->nhwc_c)
        rc = K(dlg_cuk_pool_fwd_nhwc_h(c->stream, dlg_cuda_htype(c), &s->p.g, s->nhwc_c,
                                       dlg_half_x(l, &s->io, 0), dlg_half_y(l, &s->io, 0),
                                       s->p.mask));
    else if (!rc)
        rc = K(dlg_cuk_pool_fwd_h(c->stream, dlg_cuda_htype(c), &s->p.g, dlg_half_x(l, &s->io, 0),
                                   dlg_half_y(l, &s->io, 0), s->p.mask));
    return rc ? rc : dlg_half_post_fwd(c, l, &s->io);
}

static int pool_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    pool_state *s = vs;
    if (!l->prop_down[0])
        return 0;
    int rc = dlg_half_pre_bwd(c, l, &s->io);
    if (!rc && s->nhwc_c)
        rc = K(dlg_cuk_pool_bwd_nhwc_h(c->stream, dlg_cuda_htype(c), &s->p.g, s->nhwc_c,
                                       dlg_half_dy(l, &s->io, 0), s->p.mask,
                                       dlg_half_dx(l, &s->io, 0)));
    else if (!rc)
        rc = K(dlg_cuk_pool_bwd_h(c->stream, dlg_cuda_htype(c), &s->p.g, dlg_half_dy(l, &s->io, 0), s->p.mask,
                                   dlg_half_dx(l, &s->io, 0)));
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

const dlg_kernels dlg_cuda_pool_h = {.setup = pool_setup,
                                      .forward = pool_forward,
                                      .backward = pool_backward,
                                      .destroy = pool_destroy,
                                      .any_layout = true};

/* ---- softmax loss: half logits, fp32 labels and result; under fp16 loss
 * scaling the logits' gradient carries the scale (cuda_scaler.h) ---------------- */
typedef struct loss_state {
    dlg_half_io io;
    float *rows; /* per row: lse, loss, rank */
    /* channels-last 4-d logits (H*W > 1): the classes of an image are its
     * C*H*W values in NCHW order, so they go through NCHW copies in the
     * workspace (logits, then their gradient) */
    bool moves;
} loss_state;

static void loss_destroy(void *ctx, void *vs)
{
    loss_state *s = vs;
    if (!s)
        return;
    if (s->rows)
        cudaFree(s->rows);
    dlg_half_io_free(&s->io);
    free(s);
}

static int loss_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    loss_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int rc = dlg_half_io_setup(ctx, l, &s->io, 2u, false, err, errlen);
    if (!rc)
        rc = dlg_cuda_err(
            cudaMalloc((void **)&s->rows, 3 * (size_t)l->bottom[0]->shape.d[0] * sizeof(float)),
            "loss state", err, errlen);
    if (rc < 0) {
        loss_destroy(ctx, s);
        return rc;
    }
    s->moves = dlg_half_moves(ctx, &l->bottom[0]->shape);
    *state = s;
    *ws = s->moves ? 2 * (size_t)l->bottom[0]->count * sizeof(dlg_half) : 0;
    return 0;
}

/* the logits in NCHW order: the tensor's own, or a copy in the workspace */
static int loss_logits(dlg_cuda_ctx *c, dlg_layer *l, loss_state *s, const dlg_half **x)
{
    *x = dlg_half_x(l, &s->io, 0);
    if (!s->moves)
        return 0;
    dlg_half *t = l->ws;
    int rc = dlg_half_to_nchw(c, &l->bottom[0]->shape, *x, t);
    *x = t;
    return rc;
}

static int loss_forward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    loss_state *s = vs;
    int64_t N = l->bottom[0]->shape.d[0], Kc = dlg_shape_inner(&l->bottom[0]->shape);
    const dlg_half *x = NULL;
    int rc = dlg_half_pre_fwd(c, l, &s->io);
    if (!rc)
        rc = loss_logits(c, l, s, &x);
    if (!rc)
        rc = K(dlg_cuk_loss_fwd_h(c->stream, dlg_cuda_htype(c), x, CF(l->bottom[1]), N, Kc,
                                   CF(l->top[0]), s->rows, c->flag_dev));
    return rc ? rc : dlg_cuda_flag_poll(c);
}

static int loss_backward(void *ctx, dlg_layer *l, void *vs)
{
    dlg_cuda_ctx *c = ctx;
    loss_state *s = vs;
    int64_t N = l->bottom[0]->shape.d[0], Kc = dlg_shape_inner(&l->bottom[0]->shape);
    if (!l->prop_down[0])
        return 0;
    const dlg_half *x = NULL;
    dlg_half *dx = s->moves ? (dlg_half *)l->ws + l->bottom[0]->count : dlg_half_dx(l, &s->io, 0);
    int rc = loss_logits(c, l, s, &x);
    if (!rc)
        rc = K(dlg_cuk_loss_bwd_h(c->stream, dlg_cuda_htype(c), x, CF(l->bottom[1]), s->rows, N, Kc,
                                   l->p.loss_weight, dx, c->scaler));
    if (!rc && s->moves)
        rc = dlg_half_from_nchw(c, &l->bottom[0]->shape, dx, dlg_half_dx(l, &s->io, 0));
    return rc ? rc : dlg_half_post_bwd(c, l, &s->io);
}

const dlg_kernels dlg_cuda_loss_h = {.setup = loss_setup,
                                      .forward = loss_forward,
                                      .backward = loss_backward,
                                      .destroy = loss_destroy,
                                      .any_layout = true};
