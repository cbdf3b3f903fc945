/* oneDNN pooling (Caffe ceil mode via right padding, floor mode as is)
 * and LRN, on plain NCHW with the training workspace kept per layer.
 * Max pooling on cpu-bf16's channels-last bf16 and on nChw16c or nChw8c
 * fp32 runs on cpu_maxpool.c instead, cpu-bf16's LRN on cpu_lrn_bf16.c (2-4x oneDNN
 * 2.6's speed there) and nChw8c fp32 LRN (AVX2) in inference plans on
 * cpu_lrn_avx2.c. */
#include "cpu.h"
#include "cpu_lrn_avx2.h"
#include "cpu_lrn_bf16.h"
#include "cpu_maxpool.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct pool_state {
    cpu_prim fwd, bwd;
    dnnl_memory_t wsmem; /* max indices / LRN scale: forward -> backward */
    dnnl_memory_desc_t top_md;
    /* cpu_maxpool.c (an LRN: cpu_lrn_bf16.c) runs this layer: its shape
     * and, for backward, each output's window position of its maximum;
     * none of fwd/bwd */
    bool own;
    cpu_pool_shape shape;
    uint8_t *argmax;
    /* an LRN's the same by cpu_lrn_bf16.c, or (lrn8) cpu_lrn_avx2.c */
    cpu_lrn_shape lrn;
    cpu_lrn8_shape lrn8;
    bool is_lrn8;
} pool_state;

static void pool_destroy(void *ctx, void *state)
{
    pool_state *s = state;
    cpu_prim_destroy(&s->fwd);
    cpu_prim_destroy(&s->bwd);
    if (s->wsmem)
        dnnl_memory_destroy(s->wsmem);
    free(s->argmax);
    free(s);
}

/* After the forward primitive exists: its workspace (if any), backward,
 * and the shared scratch size. */
static int finish(cpu_ctx *c, const dlg_layer *l, pool_state *s, const void *bwd_desc,
                  const int *bargs, const dnnl_memory_desc_t *const *bmds, int nb, size_t *ws,
                  char *err, size_t errlen)
{
    const dnnl_memory_desc_t *wmd =
        dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_workspace_md, 0);
    int rc = 0;
    if (wmd && dnnl_memory_desc_get_size(wmd)) {
        dnnl_status_t st = dnnl_memory_create(&s->wsmem, wmd, c->eng, DNNL_MEMORY_ALLOCATE);
        rc = st != dnnl_success ? cpu_fail(st, "workspace", err, errlen)
                                : cpu_prim_fixed(&s->fwd, DNNL_ARG_WORKSPACE, s->wsmem);
    }
    if (!rc && bwd_desc) {
        rc = cpu_prim_create(c, &s->bwd, bwd_desc, s->fwd.pd, err, errlen);
        for (int i = 0; i < nb && !rc; i++)
            rc = cpu_prim_arg(c, &s->bwd, bargs[i], bmds[i], i == nb - 1, err, errlen);
        if (!rc && s->wsmem)
            rc = cpu_prim_fixed(&s->bwd, DNNL_ARG_WORKSPACE, s->wsmem);
    }
    *ws = s->fwd.ws > s->bwd.ws ? s->fwd.ws : s->bwd.ws;
    return rc;
}

/* The right pad that makes oneDNN's floor formula give the layer's output
 * size: larger than the left one for Caffe's ceil mode.  In floor mode it
 * is p - r, r = (H + 2p - k) % s, negative where the last window ends
 * r - p rows before the input does.  0 gives the same size (r - p is less
 * than a stride) without relying on oneDNN taking a negative pad (2.6
 * does, above -stride, with the same kernels). */
static int64_t right_pad1(int64_t out, int k, int s, int p, int64_t in)
{
    int64_t pr = (out - 1) * s + k - in - p;
    return pr > 0 ? pr : 0;
}

static void right_pad(const dlg_layer *l, dnnl_dims_t pr)
{
    const dlg_pool_param *p = &l->p.pool;
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    pr[0] = right_pad1(y->d[2], p->kh, p->sh, p->ph, x->d[2]);
    pr[1] = right_pad1(y->d[3], p->kw, p->sw, p->pw, x->d[3]);
}

/* Caffe divides an average by the window clipped to H + pad: oneDNN's
 * exclude-padding when there is no pad, include-padding while no window
 * reaches past the pad (always in floor mode: the divisor is then k*k);
 * other cases run on the reference kernel. */
static dnnl_alg_kind_t pool_alg(const dlg_layer *l)
{
    const dlg_pool_param *p = &l->p.pool;
    dnnl_dims_t pr;
    right_pad(l, pr);
    if (p->mode == DLG_POOL_MAX)
        return dnnl_pooling_max;
    if (p->ph == 0 && p->pw == 0)
        return dnnl_pooling_avg_exclude_padding;
    if (pr[0] <= p->ph && pr[1] <= p->pw)
        return dnnl_pooling_avg_include_padding;
    return dnnl_alg_kind_undef;
}

static bool pool_accepts(const dlg_layer *l) { return pool_alg(l) != dnnl_alg_kind_undef; }

/* Whether our own kernels can take the layer: its input in layout in
 * and its top published as out (a net that wants the top plain says no;
 * oneDNN's path then publishes it again). */
static bool own_layouts(const dlg_layer *l, pool_state *s, const dnnl_memory_desc_t *src,
                        const dnnl_memory_desc_t *in, const dnnl_memory_desc_t *out)
{
    if (!dnnl_memory_desc_equal(src, in))
        return false;
    dnnl_memory_desc_t top = cpu_publish(l->top[0], &s->top_md, out);
    return dnnl_memory_desc_equal(&top, out);
}

/* cpu_maxpool.c's case: max pooling with bf16 NHWC (cpu-bf16), fp32
 * nChw16c (AVX-512) or fp32 nChw8c (AVX2) in and out (the top published
 * so here), a window position that fits a byte. */
static bool own_maxpool(const cpu_ctx *c, const dlg_layer *l, pool_state *s, const dnnl_memory_desc_t *src)
{
    const dlg_pool_param *p = &l->p.pool;
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    if (p->mode != DLG_POOL_MAX || x->ndim != 4 || p->kh * p->kw > 255)
        return false;
    /* the layouts the activations may have, and their channel blocks */
    static const struct {
        bool bf16;
        cpu_pool_layout layout;
        dnnl_format_tag_t tag;
        int64_t block;
    } kinds[] = {{true, CPU_POOL_BF16_NHWC, dnnl_acdb, 1},
                 {false, CPU_POOL_F32_NCHW16C, dnnl_aBcd16b, 16},
                 {false, CPU_POOL_F32_NCHW8C, dnnl_aBcd8b, 8}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (kinds[i].bf16 != c->bf16 || !cpu_maxpool_supported(kinds[i].layout))
            continue;
        dnnl_data_type_t dt = c->bf16 ? dnnl_bf16 : dnnl_f32;
        dnnl_memory_desc_t in = cpu_md_dt(4, x->d, kinds[i].tag, dt), out = cpu_md_dt(4, y->d, kinds[i].tag, dt);
        if (!own_layouts(l, s, src, &in, &out))
            continue;
        int64_t block = kinds[i].block;
        s->shape = (cpu_pool_shape){.N = x->d[0], .H = x->d[2], .W = x->d[3],
                                    .C = (x->d[1] + block - 1) / block * block, .OH = y->d[2], .OW = y->d[3],
                                    .kh = p->kh, .kw = p->kw, .sh = p->sh, .sw = p->sw, .ph = p->ph, .pw = p->pw,
                                    .layout = kinds[i].layout};
        s->own = true;
        return true;
    }
    return false;
}

static int pool_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    const dlg_pool_param *p = &l->p.pool;
    const dlg_shape *y = &l->top[0]->shape;
    dnnl_dims_t str = {p->sh, p->sw}, ker = {p->kh, p->kw}, pl = {p->ph, p->pw}, pr;
    right_pad(l, pr);
    dnnl_alg_kind_t alg = pool_alg(l);
    if (alg == dnnl_alg_kind_undef) {
        snprintf(err, errlen, "Caffe's average divisor past the padding");
        return -DLG_ENOTSUP;
    }
    dnnl_memory_desc_t src = cpu_tensor_md(l->bottom[0]),
                       dst = cpu_md_dt(4, y->d, dnnl_format_tag_any, src.data_type); /* bf16 stays bf16 */
    pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    if (own_maxpool(ctx, l, s, &src)) {
        const cpu_pool_shape *ps = &s->shape;
        if (l->backward && l->prop_down[0] && !(s->argmax = malloc((size_t)(ps->N * ps->C * ps->OH * ps->OW)))) {
            l->top[0]->layout = NULL;
            pool_destroy(ctx, s);
            return -DLG_ENOMEM;
        }
        *state = s;
        *ws = 0;
        return 0;
    }
    dnnl_pooling_desc_t fd, bd;
    dnnl_status_t st = dnnl_pooling_forward_desc_init(
        &fd, l->backward ? dnnl_forward_training : dnnl_forward_inference, alg, &src, &dst, str,
        ker, pl, pr);
    int rc = st != dnnl_success ? cpu_fail(st, "pooling desc", err, errlen)
                                : cpu_prim_create(ctx, &s->fwd, &fd, NULL, err, errlen);
    dnnl_memory_desc_t prim_dst, top;
    if (!rc) {
        prim_dst = *dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_dst_md, 0);
        top = cpu_publish(l->top[0], &s->top_md, &prim_dst);
        rc = cpu_prim_arg(ctx, &s->fwd, DNNL_ARG_SRC, &src, false, err, errlen);
    }
    if (!rc)
        rc = cpu_prim_arg(ctx, &s->fwd, DNNL_ARG_DST, &top, true, err, errlen);
    bool bwd = l->backward && l->prop_down[0];
    if (!rc && bwd &&
        (st = dnnl_pooling_backward_desc_init(&bd, alg, &src, &prim_dst, str, ker, pl, pr)) !=
            dnnl_success)
        rc = cpu_fail(st, "pooling backward desc", err, errlen);
    int bargs[2] = {DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *bmds[2] = {&top, &src};
    if (!rc)
        rc = finish(ctx, l, s, bwd ? &bd : NULL, bargs, bmds, 2, ws, err, errlen);
    if (rc) {
        l->top[0]->layout = NULL;
        pool_destroy(ctx, s);
        return rc;
    }
    *state = s;
    return 0;
}

static int pool_forward(void *ctx, dlg_layer *l, void *state)
{
    pool_state *s = state;
    if (s->own) {
        cpu_maxpool_fwd(&s->shape, l->bottom[0]->data, l->top[0]->data, s->argmax);
        return 0;
    }
    void *ptrs[2] = {l->bottom[0]->data, l->top[0]->data};
    return cpu_prim_exec(ctx, &s->fwd, ptrs, l->ws);
}

static int pool_backward(void *ctx, dlg_layer *l, void *state)
{
    pool_state *s = state;
    if (s->own) {
        if (!s->argmax)
            return -DLG_EINTERNAL; /* planned without backward */
        cpu_maxpool_bwd(&s->shape, l->top[0]->diff, s->argmax, l->bottom[0]->diff);
        return 0;
    }
    void *ptrs[2] = {l->top[0]->diff, l->bottom[0]->diff};
    return cpu_prim_exec(ctx, &s->bwd, ptrs, l->ws);
}

static const char *pool_impl(const void *state)
{
    const pool_state *s = state;
    return !s->own ? NULL
           : s->shape.layout == CPU_POOL_BF16_NHWC   ? "cpu_maxpool (bf16 nhwc)"
           : s->shape.layout == CPU_POOL_F32_NCHW16C ? "cpu_maxpool (fp32 nChw16c)"
                                                     : "cpu_maxpool (fp32 nChw8c, avx2)";
}

const dlg_kernels dlg_cpu_pool = {.setup = pool_setup,
                                  .impl = pool_impl,
                                  .forward = pool_forward,
                                  .backward = pool_backward,
                                  .destroy = pool_destroy,
                                  .accepts = pool_accepts,
                                  .any_layout = true};

/* cpu_lrn_bf16.c's case: bf16 NHWC in and out, beta 0.75. */
static bool lrn_nhwc_bf16(const cpu_ctx *c, const dlg_layer *l, pool_state *s, const dnnl_memory_desc_t *md)
{
    const dlg_lrn_param *p = &l->p.lrn;
    const dlg_shape *x = &l->bottom[0]->shape;
    if (!c->bf16 || x->ndim != 4 || !cpu_lrn_bf16_supported(x->d[1], p->size, p->beta))
        return false;
    dnnl_memory_desc_t want = cpu_md_dt(4, x->d, dnnl_acdb, dnnl_bf16);
    if (!own_layouts(l, s, md, &want, &want))
        return false;
    s->lrn = (cpu_lrn_shape){.rows = x->d[0] * x->d[2] * x->d[3], .C = x->d[1], .size = p->size,
                             .alpha = p->alpha, .k = p->k};
    s->own = true;
    return true;
}

/* cpu_lrn_avx2.c's case: an inference plan's fp32 nChw8c in and out,
 * beta 0.75. */
static bool lrn_nchw8c(const cpu_ctx *c, const dlg_layer *l, pool_state *s, const dnnl_memory_desc_t *md)
{
    const dlg_lrn_param *p = &l->p.lrn;
    const dlg_shape *x = &l->bottom[0]->shape;
    if (c->bf16 || l->backward || x->ndim != 4 || !cpu_lrn_avx2_supported(x->d[1], p->size, p->beta))
        return false;
    dnnl_memory_desc_t want = cpu_md_dt(4, x->d, dnnl_aBcd8b, dnnl_f32);
    if (!own_layouts(l, s, md, &want, &want))
        return false;
    s->lrn8 = (cpu_lrn8_shape){.N = x->d[0], .C = x->d[1], .HW = x->d[2] * x->d[3], .size = p->size,
                               .alpha = p->alpha, .k = p->k};
    s->own = s->is_lrn8 = true;
    return true;
}

static int lrn_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                     size_t errlen)
{
    const dlg_lrn_param *p = &l->p.lrn;
    dnnl_memory_desc_t md = cpu_tensor_md(l->bottom[0]), top;
    pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    if (lrn_nhwc_bf16(ctx, l, s, &md) || lrn_nchw8c(ctx, l, s, &md)) {
        *state = s;
        *ws = 0;
        return 0;
    }
    dnnl_lrn_desc_t fd, bd;
    dnnl_status_t st = dnnl_lrn_forward_desc_init(
        &fd, l->backward ? dnnl_forward_training : dnnl_forward_inference, dnnl_lrn_across_channels,
        &md, p->size, p->alpha, p->beta, p->k);
    int rc = st != dnnl_success ? cpu_fail(st, "lrn desc", err, errlen)
                                : cpu_prim_create(ctx, &s->fwd, &fd, NULL, err, errlen);
    top = cpu_publish(l->top[0], &s->top_md, &md);
    if (!rc)
        rc = cpu_prim_arg(ctx, &s->fwd, DNNL_ARG_SRC, &md, false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(ctx, &s->fwd, DNNL_ARG_DST, &top, true, err, errlen);
    bool bwd = l->backward && l->prop_down[0];
    if (!rc && bwd &&
        (st = dnnl_lrn_backward_desc_init(&bd, dnnl_lrn_across_channels, &md, &md, p->size,
                                          p->alpha, p->beta, p->k)) != dnnl_success)
        rc = cpu_fail(st, "lrn backward desc", err, errlen);
    int bargs[3] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *bmds[3] = {&md, &top, &md};
    if (!rc)
        rc = finish(ctx, l, s, bwd ? &bd : NULL, bargs, bmds, 3, ws, err, errlen);
    if (rc) {
        l->top[0]->layout = NULL;
        pool_destroy(ctx, s);
        return rc;
    }
    *state = s;
    return 0;
}

static int lrn_forward(void *ctx, dlg_layer *l, void *state)
{
    pool_state *s = state;
    if (s->own) {
        if (s->is_lrn8)
            cpu_lrn_avx2_fwd(&s->lrn8, l->bottom[0]->data, l->top[0]->data);
        else
            cpu_lrn_bf16_fwd(&s->lrn, l->bottom[0]->data, l->top[0]->data);
        return 0;
    }
    void *ptrs[2] = {l->bottom[0]->data, l->top[0]->data};
    return cpu_prim_exec(ctx, &s->fwd, ptrs, l->ws);
}

static int lrn_backward(void *ctx, dlg_layer *l, void *state)
{
    pool_state *s = state;
    if (s->own) { /* cpu_lrn_avx2.c plans inference only */
        if (s->is_lrn8)
            return -DLG_EINTERNAL;
        cpu_lrn_bf16_bwd(&s->lrn, l->bottom[0]->data, l->top[0]->diff, l->bottom[0]->diff);
        return 0;
    }
    void *ptrs[3] = {l->bottom[0]->data, l->top[0]->diff, l->bottom[0]->diff};
    return cpu_prim_exec(ctx, &s->bwd, ptrs, l->ws);
}

static const char *lrn_impl(const void *state)
{
    const pool_state *s = state;
    return !s->own ? NULL : s->is_lrn8 ? "cpu_lrn_avx2 (fp32 nChw8c)" : "cpu_lrn_bf16 (nhwc)";
}

const dlg_kernels dlg_cpu_lrn = {.setup = lrn_setup,
                                 .impl = lrn_impl,
                                 .forward = lrn_forward,
                                 .backward = lrn_backward,
                                 .destroy = pool_destroy,
                                 .any_layout = true};
