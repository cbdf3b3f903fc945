/* oneDNN convolution (groups, dilation) and inner product: their passes
 * (a convolution's setup is cpu_conv_setup.c).  Activations stay in the
 * layout oneDNN picks when the net allows (see dlg_tensor); fp32 weights
 * take the layout the forward primitive prefers (SGD is element-wise),
 * grouped ones where it is a 4-d layout of the blob too, so no call
 * reorders them. */
#include "cpu_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cpu_conv_destroy(void *ctx, void *state)
{
    conv_state *s = state;
    cpu_prim_destroy(&s->fwd);
    cpu_prim_destroy(&s->bwd_data);
    cpu_prim_destroy(&s->bwd_weights);
    cpu_prim_destroy(&s->sub);
    cpu_prim_destroy(&s->add);
    cpu_prim_destroy(&s->relu_bwd);
    cpu_wgrad_im2col_destroy(&s->im2col);
    cpu_fold_destroy(&s->fold);
    cpu_wcopy_destroy(&s->wq);
    free(s->u);
    free(s);
}

/* Planes of len floats summed into out (a batched matmul's per-image
 * gradients into dW). */
static void sum_planes(const float *planes, int64_t n, int64_t len, float *out, int threads)
{
#pragma omp parallel for simd schedule(static) num_threads(threads)
    for (int64_t i = 0; i < len; i++) {
        float sum = 0;
        for (int64_t k = 0; k < n; k++)
            sum += planes[k * len + i];
        out[i] = sum;
    }
}

int cpu_conv_wgrad_matmul(cpu_ctx *c, conv_state *s, void *x, void *dy, float *dw, void *ws)
{
    if (!s->partial_bytes) {
        void *ptrs[3] = {x, dy, dw};
        return cpu_prim_exec(c, &s->bwd_weights, ptrs, ws);
    }
    void *ptrs[3] = {x, dy, ws};
    int rc = cpu_prim_exec(c, &s->bwd_weights, ptrs, (char *)ws + s->partial_bytes);
    if (!rc)
        sum_planes(ws, s->partials, s->plane, dw, cpu_team_size(c));
    return rc;
}

size_t cpu_conv_ws(const conv_state *s)
{
    size_t w = s->fwd.ws > s->add.ws ? s->fwd.ws : s->add.ws;
    w = s->scatter_bytes + s->bwd_data.ws > w ? s->scatter_bytes + s->bwd_data.ws : w;
    w = s->relu_bwd.ws > w ? s->relu_bwd.ws : w;
    size_t bw = s->sub_bytes + s->partial_bytes + (s->sub.ws > s->bwd_weights.ws ? s->sub.ws : s->bwd_weights.ws);
    size_t sums = s->bias_shape.rows ? cpu_bn_bf16_scratch(&s->bias_shape) : 0; /* after the matmul */
    bw = sums > bw ? sums : bw;
    size_t amx = s->wgrad == WG_AMX ? cpu_wgrad_amx_scratch(&s->wg) : 0;
    bw = amx > bw ? amx : bw;
    size_t im2col = s->wgrad == WG_IM2COL ? cpu_wgrad_im2col_ws(&s->im2col) : 0;
    bw = im2col > bw ? im2col : bw;
    size_t outer = s->wgrad == WG_OUTER ? cpu_fc_wgrad_scratch(&s->fcw) : 0;
    bw = outer > bw ? outer : bw;
    return s->tmp_bytes + (bw > w ? bw : w);
}

/* The transformed filter of an inference layer, rebuilt when what it
 * derives from moved: the weights, or the fold's params (whose versions
 * cpu_fold_refresh has just recorded). */
static const float *cached_filter(const dlg_layer *l, conv_state *s, const float *w)
{
    uint64_t key[6] = {0};
    if (l->p.conv.bn)
        memcpy(key, s->fold.seen, sizeof key);
    else
        key[0] = l->param[0]->version;
    if (memcmp(key, s->u_seen, sizeof key) != 0) {
        wino_transform_filters(&s->shape, w, s->u);
        memcpy(s->u_seen, key, sizeof key);
    }
    return s->u;
}

static int wino_forward_layer(const dlg_layer *l, conv_state *s)
{
    const dlg_conv_param *p = &l->p.conv;
    const float *w = l->param[0]->data, *b = p->bias ? l->param[1]->data : NULL;
    if (p->bn) {
        w = s->fold.w;
        b = s->fold.b;
    }
    const float *res = p->residual ? l->bottom[1]->data : NULL;
    if (s->u)
        wino_forward_transformed(&s->shape, l->bottom[0]->data, cached_filter(l, s, w), b, res,
                                 p->relu, l->top[0]->data, l->ws);
    else if (s->by == BY_WINO1D)
        wino1d_forward(&s->shape1d, l->bottom[0]->data, w, b, res, p->relu, l->top[0]->data,
                       l->ws);
    else
        wino_forward(&s->shape, l->bottom[0]->data, w, b, res, p->relu, l->top[0]->data, l->ws);
    return 0;
}

static void wino_backward_layer(dlg_layer *l, conv_state *s)
{
    const float *dy = l->top[0]->diff;
    bool one = s->by == BY_WINO1D;
    if (l->prop_down[0] && one)
        wino1d_backward_data(&s->shape1d, dy, l->param[0]->data, l->bottom[0]->diff, l->ws);
    else if (l->prop_down[0])
        wino_backward_data(&s->shape, dy, l->param[0]->data, l->bottom[0]->diff, l->ws);
    if (!l->param_grad)
        return;
    if (one)
        wino1d_backward_weights(&s->shape1d, l->bottom[0]->data, dy, l->param[0]->diff, l->ws);
    else
        wino_backward_weights(&s->shape, l->bottom[0]->data, dy, l->param[0]->diff, l->ws);
    const dlg_shape *y = &l->top[0]->shape;
    if (l->p.conv.bias)
        wino_bias_grad(y->d[0], y->d[1], y->d[2] * y->d[3], dy, l->param[1]->diff);
}

/* dx (NHWC bf16) of a strided 1x1 layer from its compact gradient (N x OH
 * x OW x C): every stride-th pixel its value, zeros between. */
static void scatter_strided(const dlg_layer *l, const uint16_t *from, uint16_t *dx)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    int64_t C = x->d[1], H = x->d[2], W = x->d[3], OH = y->d[2], OW = y->d[3];
    int sh = l->p.conv.sh, sw = l->p.conv.sw;
    size_t px = (size_t)C * sizeof *dx;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t r = 0; r < x->d[0] * H; r++) {
        int64_t n = r / H, h = r % H;
        uint16_t *row = dx + r * W * C;
        if (h % sh || h / sh >= OH) {
            memset(row, 0, (size_t)W * px);
            continue;
        }
        const uint16_t *src = from + (n * OH + h / sh) * OW * C;
        for (int64_t w = 0; w < W; w++)
            if (w % sw || w / sw >= OW)
                memset(row + w * C, 0, px);
            else
                memcpy(row + w * C, src + w / sw * C, px);
    }
}

/* The weights the primitives read: under cpu-bf16 the bf16 copy
 * (refreshed if the master moved), else the param; NULL on failure. */
static void *weights(cpu_ctx *c, const dlg_layer *l, conv_state *s)
{
    return s->wq.buf ? cpu_wcopy_get(c, &s->wq, l->param[0]) : l->param[0]->data;
}

static int conv_forward(void *ctx, dlg_layer *l, void *state)
{
    conv_state *s = state;
    if (l->p.conv.bn) {
        int rc = cpu_fold_refresh(ctx, &s->fold, l);
        if (rc < 0)
            return rc;
    }
    if (s->by == BY_WINO || s->by == BY_WINO1D)
        return wino_forward_layer(l, s);
    void *ptrs[5];
    int k = 0; /* in the order setup added the arguments */
    ptrs[k++] = l->bottom[0]->data;
    if (l->p.conv.bn) {
        ptrs[k++] = s->fold.w;
        ptrs[k++] = s->fold.b;
    } else {
        ptrs[k++] = weights(ctx, l, s);
        if (!ptrs[k - 1])
            return -DLG_EINTERNAL;
        if (l->p.conv.bias)
            ptrs[k++] = l->param[1]->data;
    }
    if (!s->add.p) {
        ptrs[k++] = l->top[0]->data; /* in place: the residual's, already in it */
        if (l->p.conv.residual && !s->in_place)
            ptrs[k++] = l->bottom[1]->data;
        return cpu_prim_exec(ctx, &s->fwd, ptrs, l->ws);
    }
    char *tmp = l->ws, *ws = tmp + s->tmp_bytes;
    ptrs[k++] = tmp;
    int rc = cpu_prim_exec(ctx, &s->fwd, ptrs, ws);
    void *add[3] = {tmp, l->bottom[1]->data, l->top[0]->data};
    return rc ? rc : cpu_prim_exec(ctx, &s->add, add, ws);
}

static int conv_backward(void *ctx, dlg_layer *l, void *state)
{
    conv_state *s = state;
    int rc = 0;
    if (s->relu_bwd.p) { /* the folded ReLU: dy masked in place, read by both passes below */
        void *mask[3] = {l->top[0]->data, l->top[0]->diff, l->top[0]->diff};
        if ((rc = cpu_prim_exec(ctx, &s->relu_bwd, mask, l->ws)) != 0)
            return rc;
    }
    if (s->by == BY_WINO || s->by == BY_WINO1D) {
        wino_backward_layer(l, s);
        return 0;
    }
    if (l->prop_down[0]) {
        void *w = s->bwd_w_master ? l->param[0]->data : weights(ctx, l, s);
        void *ptrs[3] = {l->top[0]->diff, w, s->scatter_bytes ? l->ws : l->bottom[0]->diff};
        rc = ptrs[1] ? cpu_prim_exec(ctx, &s->bwd_data, ptrs, (char *)l->ws + s->scatter_bytes) : -DLG_EINTERNAL;
        if (!rc && s->scatter_bytes)
            scatter_strided(l, l->ws, l->bottom[0]->diff);
    }
    if (!rc && l->param_grad && s->by == BY_GEMM) {
        const dlg_shape *y = &l->top[0]->shape;
        gemm_conv_backward_weights(&s->gshape, l->bottom[0]->data, l->top[0]->diff,
                                   l->param[0]->diff, l->ws);
        if (l->p.conv.bias)
            wino_bias_grad(y->d[0], y->d[1], y->d[2] * y->d[3], l->top[0]->diff,
                           l->param[1]->diff);
    } else if (!rc && l->param_grad && s->wgrad == WG_AMX) {
        cpu_wgrad_amx(&s->wg, l->bottom[0]->data, l->top[0]->diff, l->param[0]->diff,
                      l->p.conv.bias ? l->param[1]->diff : NULL, l->ws);
    } else if (!rc && l->param_grad && s->wgrad == WG_IM2COL) {
        rc = cpu_wgrad_im2col(ctx, &s->im2col, l->bottom[0]->data, l->top[0]->diff, l->param[0]->diff,
                              l->p.conv.bias ? l->param[1]->diff : NULL, l->ws);
    } else if (!rc && l->param_grad && s->sub_bytes) {
        /* each image subsampled (bf16: 2 bytes a value), then the matmul */
        const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
        size_t from_step = (size_t)dlg_shape_inner(x) * 2, to_step = (size_t)(x->d[1] * y->d[2] * y->d[3]) * 2;
        char *ws = (char *)l->ws + s->sub_bytes;
        for (int64_t n = 0; n < x->d[0] && !rc; n++) {
            void *sub[2] = {(char *)l->bottom[0]->data + n * from_step, (char *)l->ws + n * to_step};
            rc = cpu_prim_exec(ctx, &s->sub, sub, ws);
        }
        rc = rc ? rc : cpu_conv_wgrad_matmul(ctx, s, l->ws, l->top[0]->diff, l->param[0]->diff, ws);
    } else if (!rc && l->param_grad && s->wgrad == WG_MATMUL) {
        rc = cpu_conv_wgrad_matmul(ctx, s, l->bottom[0]->data, l->top[0]->diff, l->param[0]->diff, l->ws);
    } else if (!rc && l->param_grad) {
        void *ptrs[4] = {l->bottom[0]->data, l->top[0]->diff, l->param[0]->diff,
                         l->p.conv.bias ? l->param[1]->diff : NULL};
        rc = cpu_prim_exec(ctx, &s->bwd_weights, ptrs, l->ws);
    }
    if (!rc && l->param_grad && s->bias_shape.rows) /* the matmul's layer has a bias */
        cpu_bf16_channel_sums(&s->bias_shape, l->top[0]->diff, l->param[1]->diff, l->ws);
    return rc;
}

static const char *conv_impl(const void *state)
{
    const conv_state *s = state;
    const char *impl = NULL;
    if (s->by == BY_WINO && s->shape.r == 5)
        return s->u ? "winograd F(2x2,5x5) avx2, filter transformed once" : "winograd F(2x2,5x5) avx2";
    if (s->by == BY_WINO)
        return s->u ? "winograd F(4x4,3x3) avx2, filter transformed once"
                    : "winograd F(4x4,3x3) avx2";
    if (s->by == BY_GEMM)
        return "oneDNN forward and backward data; backward weights by im2col + sgemm avx2";
    if (s->by == BY_WINO1D)
        return s->shape1d.axis ? (s->shape1d.r == 7 ? "winograd F(3,7) along w avx2"
                                                    : "winograd F(4,3) along w avx2")
                               : (s->shape1d.r == 7 ? "winograd F(3,7) along h avx2"
                                                    : "winograd F(4,3) along h avx2");
    if (s->impl[0]) /* in place, or a backward by another primitive */
        return s->impl;
    impl = cpu_impl_name(s->fwd.pd);
    return *impl ? impl : NULL;
}

static bool conv_in_place(const void *state) { return ((const conv_state *)state)->in_place; }

/* A folded ReLU's mask is the output (see dlg_kernels.fuses_relu). */
static bool conv_bwd_reads_top(const dlg_layer *l) { return l->p.conv.relu; }

const dlg_kernels dlg_cpu_conv = {.setup = cpu_conv_setup,
                                  .impl = conv_impl,
                                  .in_place = conv_in_place,
                                  .forward = conv_forward,
                                  .backward = conv_backward,
                                  .destroy = cpu_conv_destroy,
                                  .any_layout = true,
                                  .bwd_no_top_data = true,
                                  .bwd_reads_top = conv_bwd_reads_top,
                                  .fuses_relu = true,
                                  .fuses_epilogue = true};

/* Inner product.  A plain input is seen flattened (N x CHW, gemm); an
 * input in a blocked layout is read as it is, with 4-d weights. */
static int fc_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                    size_t errlen)
{
    cpu_ctx *c = ctx;
    const dlg_tensor *x = l->bottom[0];
    int64_t n = x->shape.d[0], in = dlg_shape_inner(&x->shape), out = l->top[0]->shape.d[1];
    int64_t sd[2] = {n, in}, wd[2] = {out, in}, dd[2] = {n, out};
    int64_t wd4[4] = {out, x->shape.d[1], x->shape.d[2], x->shape.d[3]};
    bool blocked = x->layout != NULL;
    dnnl_memory_desc_t src = blocked ? cpu_tensor_md(x) : cpu_md(2, sd, dnnl_nc);
    dnnl_memory_desc_t w = blocked ? cpu_md(4, wd4, dnnl_oihw) : cpu_md(2, wd, dnnl_oi);
    dnnl_memory_desc_t w_any = blocked ? cpu_md(4, wd4, dnnl_format_tag_any) : w;
    dnnl_memory_desc_t b = cpu_md(1, &out, dnnl_x), dst = cpu_md(2, dd, dnnl_nc);
    /* cpu-bf16: bf16 input (converted where it comes plain fp32) and
     * weights (a copy in the kernel's layout), fp32 bias and output;
     * backward takes the output's gradient as bf16 and gives the fp32
     * master weights an fp32 gradient */
    dnnl_memory_desc_t src_k = src, dst_k = dst, dw_any = w_any;
    if (c->bf16) {
        src_k.data_type = dnnl_bf16; /* a layout's strides count elements */
        dst_k.data_type = dnnl_bf16;
        w_any = blocked ? cpu_md_dt(4, wd4, dnnl_format_tag_any, dnnl_bf16)
                        : cpu_md_dt(2, wd, dnnl_format_tag_any, dnnl_bf16);
    }
    l->top[0]->layout = NULL;
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    dnnl_inner_product_desc_t d;
    int rc = 0;
    dnnl_status_t st = dnnl_inner_product_forward_desc_init(
        &d, l->backward ? dnnl_forward_training : dnnl_forward_inference, &src_k, &w_any, &b, &dst);
    rc = st != dnnl_success ? cpu_fail(st, "inner product desc", err, errlen)
                            : cpu_prim_create(c, &s->fwd, &d, NULL, err, errlen);
    dnnl_memory_desc_t kw = rc ? w : *dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_weights_md, 0);
    if (!rc && c->bf16)
        rc = cpu_wcopy_init(&s->wq, &w, &kw);
    int fa[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST};
    const dnnl_memory_desc_t *fm[4] = {&src, c->bf16 ? &kw : &w, &b, &dst};
    for (int i = 0; i < 4 && !rc; i++)
        rc = cpu_prim_arg(c, &s->fwd, fa[i], fm[i], i == 3, err, errlen);
    if (!rc && l->backward && l->prop_down[0]) {
        st = dnnl_inner_product_backward_data_desc_init(&d, &src_k, &w_any, &dst_k);
        rc = st != dnnl_success ? cpu_fail(st, "inner product backward data", err, errlen)
                                : cpu_prim_create(c, &s->bwd_data, &d, s->fwd.pd, err, errlen);
        int ba[3] = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC};
        const dnnl_memory_desc_t *bm[3] = {&dst, c->bf16 ? &kw : &w, &src}; /* bf16: the copy */
        for (int i = 0; i < 3 && !rc; i++)
            rc = cpu_prim_arg(c, &s->bwd_data, ba[i], bm[i], i == 2, err, errlen);
    }
    /* a plain input at a small batch: the gradient by outer products where
     * that timed faster (cpu_fc_wgrad.h) */
    s->fcw = (cpu_fc_wgrad_shape){.B = n, .I = in, .O = out, .bf16 = c->bf16, .threads = cpu_team_size(c)};
    if (!rc && l->backward && l->param_grad && !blocked && cpu_fc_wgrad_fits(&s->fcw) &&
        cpu_fc_wgrad_picked(c, l, &s->fcw))
        s->wgrad = WG_OUTER;
    if (s->wgrad == WG_OUTER)
        snprintf(s->impl, sizeof s->impl, "%s, weight gradient by outer products (cpu_fc_wgrad)",
                 cpu_impl_name(s->fwd.pd));
    if (!rc && l->backward && l->param_grad && s->wgrad == WG_PRIM) {
        st = dnnl_inner_product_backward_weights_desc_init(&d, &src_k, &dw_any, &b, &dst_k);
        rc = st != dnnl_success ? cpu_fail(st, "inner product backward weights", err, errlen)
                                : cpu_prim_create(c, &s->bwd_weights, &d, s->fwd.pd, err, errlen);
        int wa[4] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS};
        const dnnl_memory_desc_t *wm[4] = {&src, &dst, &w, &b};
        for (int i = 0; i < 4 && !rc; i++)
            rc = cpu_prim_arg(c, &s->bwd_weights, wa[i], wm[i], i >= 2, err, errlen);
    }
    if (rc) {
        cpu_conv_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = cpu_conv_ws(s);
    return 0;
}

static int fc_forward(void *ctx, dlg_layer *l, void *state)
{
    conv_state *s = state;
    void *w = weights(ctx, l, s);
    if (!w)
        return -DLG_EINTERNAL;
    void *ptrs[4] = {l->bottom[0]->data, w, l->param[1]->data, l->top[0]->data};
    return cpu_prim_exec(ctx, &s->fwd, ptrs, l->ws);
}

static int fc_backward(void *ctx, dlg_layer *l, void *state)
{
    conv_state *s = state;
    int rc = 0;
    if (l->prop_down[0]) {
        void *ptrs[3] = {l->top[0]->diff, weights(ctx, l, s), l->bottom[0]->diff};
        rc = ptrs[1] ? cpu_prim_exec(ctx, &s->bwd_data, ptrs, l->ws) : -DLG_EINTERNAL;
    }
    if (!rc && l->param_grad && s->wgrad == WG_OUTER) {
        cpu_fc_wgrad(&s->fcw, l->bottom[0]->data, l->top[0]->diff, l->param[0]->diff, l->param[1]->diff, l->ws);
    } else if (!rc && l->param_grad) {
        void *ptrs[4] = {l->bottom[0]->data, l->top[0]->diff, l->param[0]->diff, l->param[1]->diff};
        rc = cpu_prim_exec(ctx, &s->bwd_weights, ptrs, l->ws);
    }
    return rc;
}

/* any_layout false: a blocked input would need its 4-d weights reordered on
 * every call (VGG16's fc6: 411 MB of scratch); plain input keeps them plain. */
const dlg_kernels dlg_cpu_fc = {.setup = fc_setup,
                                .impl = conv_impl,
                                .forward = fc_forward,
                                .backward = fc_backward,
                                .destroy = cpu_conv_destroy,
                                .bwd_no_top_data = true};
