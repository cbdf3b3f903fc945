/* A oneDNN convolution's setup: who runs each pass (oneDNN's primitives,
 * or our Winograd and im2col kernels where they fit and pay), its
 * primitives with the epilogue fused or after them, and the weights'
 * layout. */
#include "cpu_conv.h"
#include "cpu_conv_algo.h"
#include "cpu_plan_time.h"
#include "cpu_wgrad_im2col.h"
#include "cpu_wgrad_pick.h"

#include "../tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rest of a folded epilogue (dlg_conv_param; the batch norm is in the
 * weights, cpu_conv_fold.c) as post-ops: the residual as a full-tensor add
 * of bottom[1], then the ReLU; both cost next to nothing in oneDNN's
 * kernels, unlike per-channel multiply/add post-ops. */
static int epilogue_post_ops(const dlg_layer *l, dnnl_post_ops_t *po)
{
    const dlg_conv_param *p = &l->p.conv;
    dnnl_memory_desc_t res = p->residual ? cpu_tensor_md(l->bottom[1]) : (dnnl_memory_desc_t){0};
    dnnl_status_t st = dnnl_post_ops_create(po);
    if (st == dnnl_success && p->residual)
        st = dnnl_post_ops_append_binary(*po, dnnl_binary_add, &res);
    if (st == dnnl_success && p->relu)
        st = dnnl_post_ops_append_eltwise(*po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    return st == dnnl_success ? 0 : -DLG_ENOMEM;
}

/* Layouts the Winograd kernels read: nChw8c activations (the residual
 * too), 8i8o-blocked weights of kh x kw (grouped: the same over every
 * group's filter, one after another; publish_grouped_weights). */
static bool wino_layouts(const dlg_layer *l, int kh, int kw)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    int64_t wd[4] = {y->d[1], x->d[1] / l->p.conv.groups, kh, kw};
    dnnl_memory_desc_t xb = cpu_md(4, x->d, dnnl_aBcd8b), yb = cpu_md(4, y->d, dnnl_aBcd8b);
    dnnl_memory_desc_t wb = cpu_md(4, wd, dnnl_ABcd8b8a);
    dnnl_memory_desc_t xm = cpu_tensor_md(l->bottom[0]), ym = cpu_tensor_md(l->top[0]);
    dnnl_memory_desc_t wm = cpu_tensor_md(l->param[0]);
    dnnl_memory_desc_t rm = l->p.conv.residual ? cpu_tensor_md(l->bottom[1]) : yb;
    return dnnl_memory_desc_equal(&xm, &xb) && dnnl_memory_desc_equal(&ym, &yb) &&
           dnnl_memory_desc_equal(&wm, &wb) && dnnl_memory_desc_equal(&rm, &yb);
}

/* The Winograd kernels take 3x3 and 5x5 stride-1 layers padded alike on
 * every side, less than the filter (Inception's stem has pad 0), grouped
 * (AlexNet's conv2, 4 and 5) or not, with enough tiles to pay (wino_pays),
 * whose tensors are all in the AVX2 layouts oneDNN chose here (nChw8c
 * activations, 8i8o-blocked weights), so no call reorders anything; the
 * primitives stay as the layout authority. */
static bool wino_fits(const dlg_layer *l, wino_shape *ws)
{
    const dlg_conv_param *p = &l->p.conv;
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    /* the filter sizes and pads the kernels take: wino_supported */
    if (p->kw != p->kh || p->sh != 1 || p->sw != 1 || p->dh != 1 || p->dw != 1 || p->ph != p->pw ||
        y->d[2] != x->d[2] + 2 * p->ph - (p->kh - 1) || y->d[3] != x->d[3] + 2 * p->pw - (p->kw - 1))
        return false;
    *ws = (wino_shape){.n = x->d[0], .c = x->d[1], .k = y->d[1], .h = x->d[2], .w = x->d[3],
                       .pad = p->ph, .groups = p->groups, .r = p->kh};
    bool pays = wino_pays(ws) || (!l->backward && wino_cached_pays(ws));
    return wino_supported(ws) && pays && wino_layouts(l, p->kh, p->kw);
}

/* The one-dimensional kernels take 1 x r and r x 1 (r = 3, 7) stride-1
 * ungrouped layers padded only along the filter, where they pay
 * (wino1d_pays), in the same layouts. */
static bool wino1d_fits(const dlg_layer *l, wino1d_shape *ws)
{
    const dlg_conv_param *p = &l->p.conv;
    const dlg_shape *x = &l->bottom[0]->shape;
    bool along_w = p->kh == 1 && p->ph == 0, along_h = p->kw == 1 && p->pw == 0;
    if (p->groups != 1 || p->sh != 1 || p->sw != 1 || p->dh != 1 || p->dw != 1 ||
        along_w == along_h)
        return false;
    *ws = (wino1d_shape){.n = x->d[0], .c = x->d[1], .k = l->top[0]->shape.d[1], .h = x->d[2],
                         .w = x->d[3], .axis = along_w, .r = along_w ? p->kw : p->kh,
                         .pad = along_w ? p->pw : p->ph};
    return wino1d_supported(ws) && wino1d_pays(ws) && wino_layouts(l, p->kh, p->kw);
}

/* Strided layers whose weights' gradient im2col and sgemm compute faster
 * (cpu_gemm_conv.h), ungrouped and undilated, padded alike both ways, in
 * the same layouts; only where that gradient is wanted (an inference plan
 * would reserve the scratch for nothing). */
static bool gemm_fits(const dlg_layer *l, gemm_conv_shape *gs)
{
    const dlg_conv_param *p = &l->p.conv;
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    if (!l->backward || !l->param_grad || p->groups != 1 || p->dh != 1 || p->dw != 1 ||
        p->sh != p->sw || p->ph != p->pw)
        return false;
    *gs = (gemm_conv_shape){.n = x->d[0], .c = x->d[1], .k = y->d[1], .h = x->d[2], .w = x->d[3],
                            .kh = p->kh, .kw = p->kw, .stride = p->sh, .pad = p->ph};
    return gemm_conv_supported(gs) && gemm_conv_pays(gs) && wino_layouts(l, p->kh, p->kw);
}

typedef struct conv_mds {
    dnnl_memory_desc_t w, b;                    /* user (plain) weights, bias */
    dnnl_memory_desc_t src_any, w_any, dst_any; /* chosen by oneDNN */
    /* the weights' gradient: fp32 even where w_any is bf16 (the gradient
     * of the fp32 master weights, which SGD updates in fp32) */
    dnnl_memory_desc_t dw_any;
    dnnl_dims_t strides, dil, pad_l, pad_r;
} conv_mds;

/* dt: the type of the activations and weights the kernel computes on */
static void conv_describe(const dlg_layer *l, dnnl_data_type_t dt, conv_mds *m)
{
    const dlg_conv_param *p = &l->p.conv;
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    int g = p->groups;
    int64_t wd5[5] = {g, y->d[1] / g, x->d[1] / g, p->kh, p->kw};
    int64_t ob[1] = {y->d[1]};
    m->w = g > 1 ? cpu_md(5, wd5, dnnl_goihw) : cpu_md(4, wd5 + 1, dnnl_oihw);
    m->b = cpu_md(1, ob, dnnl_x);
    m->src_any = cpu_md_dt(4, x->d, dnnl_format_tag_any, dt);
    m->dst_any = cpu_md_dt(4, y->d, dnnl_format_tag_any, dt);
    m->w_any = g > 1 ? cpu_md_dt(5, wd5, dnnl_format_tag_any, dt) : cpu_md_dt(4, wd5 + 1, dnnl_format_tag_any, dt);
    m->dw_any = m->w_any;
    m->dw_any.data_type = dnnl_f32;
    m->strides[0] = p->sh;
    m->strides[1] = p->sw;
    m->dil[0] = p->dh - 1; /* oneDNN counts dilation from 0 */
    m->dil[1] = p->dw - 1;
    /* Caffe's floor output size: the same right padding satisfies it */
    m->pad_l[0] = m->pad_r[0] = p->ph;
    m->pad_l[1] = m->pad_r[1] = p->pw;
}

/* A 1x1 stride-1 ungrouped convolution: its backward data is the forward
 * convolution of dy by the transposed weights. */
static bool pointwise(const dlg_conv_param *p)
{
    return p->groups == 1 && p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 &&
           p->ph == 0 && p->pw == 0;
}

/* oneDNN 2.6's AVX2 1x1 kernels reach 80-84% of peak forward but 61-75%
 * backward data on ResNet-50's shapes (docs/benchmarks.md), so a pointwise
 * layer's dx = conv(dy, w^T) runs as a forward primitive; w^T is w's
 * layout with the first two axes swapped, reordered into the layout that
 * primitive wants on every call (at most 4 MiB; in place of the reorder
 * into backward data's own layout the other path makes).  w: the weights
 * the kernels read (the fp32 param, or cpu-bf16's copy), src and dst the
 * tensors as published. */
static int bwd_data_by_forward(cpu_ctx *c, const dlg_layer *l, conv_state *s, const dnnl_memory_desc_t *w,
                               const dnnl_memory_desc_t *master, const dnnl_memory_desc_t *src,
                               const dnnl_memory_desc_t *dst, const conv_mds *m, char *err, size_t errlen);

/* Appends what to the layer's impl string, which starts as fwd's
 * implementation: "brgconv_1x1:..., weight gradient by matmul ...". */
static void impl_add(conv_state *s, const char *what)
{
    size_t n = strlen(s->impl);
    if (!n)
        n = (size_t)snprintf(s->impl, sizeof s->impl, "%s", cpu_impl_name(s->fwd.pd));
    if (n < sizeof s->impl)
        snprintf(s->impl + n, sizeof s->impl - n, "%s", what);
}

/* Whether oneDNN would reorder from into to on its generic loops
 * ("simple:any"): a bf16 copy blocked by 48 output channels (GoogLeNet's
 * 192 -> 96, 480 -> 96 ...) into backward data's or the transposed
 * forward's AMX layout took 2-3 ms a layer there, 12 ms of a GoogLeNet
 * bf16 step. */
static bool slow_reorder(cpu_ctx *c, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to)
{
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_memory_desc_equal(from, to))
        return false;
    if (dnnl_reorder_primitive_desc_create(&pd, from, c->eng, to, c->eng, NULL) != dnnl_success)
        return true;
    bool slow = strstr(cpu_impl_name(pd), "simple") != NULL;
    dnnl_primitive_desc_destroy(pd);
    return slow;
}

/* cpu-bf16: the weights backward data reads, the bf16 copy (kw, half the
 * bytes) or, where that would reorder slowly and the fp32 master would
 * not, the master (w; s->bwd_w_master); NULL where both would.  want: the
 * primitive's layout; perm: its first two axes swapped (the transposed
 * forward's w^T). */
static const dnnl_memory_desc_t *bwd_weights_from(cpu_ctx *c, conv_state *s, const dnnl_memory_desc_t *kw,
                                                  const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *want,
                                                  bool perm, dnnl_memory_desc_t *store)
{
    int swap[4] = {1, 0, 2, 3};
    const dnnl_memory_desc_t *from[2] = {kw, w};
    for (int i = 0; i < 2; i++) {
        store[i] = *from[i];
        if (perm && dnnl_memory_desc_permute_axes(&store[i], from[i], swap) != dnnl_success)
            continue;
        if (!slow_reorder(c, &store[i], want)) {
            s->bwd_w_master = i == 1;
            return &store[i];
        }
    }
    s->bwd_w_master = false;
    return NULL;
}

/* master: cpu-bf16's fp32 master, which w^T may come from instead of w
 * (bwd_weights_from); NULL: w is the param itself. */
static int bwd_data_by_forward(cpu_ctx *c, const dlg_layer *l, conv_state *s, const dnnl_memory_desc_t *w,
                               const dnnl_memory_desc_t *master, const dnnl_memory_desc_t *src,
                               const dnnl_memory_desc_t *dst, const conv_mds *m, char *err, size_t errlen)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    int64_t wt[4] = {x->d[1], y->d[1], 1, 1};
    int perm[4] = {1, 0, 2, 3};
    dnnl_memory_desc_t wt_any = cpu_md_dt(4, wt, dnnl_format_tag_any, w->data_type), wt_user[2];
    const dnnl_memory_desc_t *user = &wt_user[0];
    dnnl_convolution_desc_t d;
    dnnl_status_t st = dnnl_memory_desc_permute_axes(&wt_user[0], w, perm);
    if (st == dnnl_success)
        st = dnnl_dilated_convolution_forward_desc_init(&d, dnnl_forward_inference,
                                                        dnnl_convolution_direct, dst, &wt_any,
                                                        NULL, src, m->strides, m->dil, m->pad_l,
                                                        m->pad_r);
    int rc = st != dnnl_success ? cpu_fail(st, "transposed convolution desc", err, errlen)
                                : cpu_prim_create(c, &s->bwd_data, &d, NULL, err, errlen);
    if (!rc && master &&
        !(user = bwd_weights_from(c, s, w, master,
                                  dnnl_primitive_desc_query_md(s->bwd_data.pd, dnnl_query_weights_md, 0), true,
                                  wt_user))) {
        snprintf(err, errlen, "w^T would reorder on oneDNN's generic loops");
        rc = -DLG_ENOTSUP;
    }
    if (!rc)
        rc = cpu_prim_arg(c, &s->bwd_data, DNNL_ARG_SRC, dst, false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, &s->bwd_data, DNNL_ARG_WEIGHTS, user, false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, &s->bwd_data, DNNL_ARG_DST, src, true, err, errlen);
    return rc;
}

/* cpu-bf16: the same where oneDNN runs the transposed forward on AMX.
 * There its brgconv_1x1 took Inception-v3's and ResNet-50's pointwise
 * shapes 1.2-1.8x faster than its AMX backward data (batch 4, one
 * thread: 768 -> 192 at 17x17, 0.29 against 0.45 ms); elsewhere it was
 * not timed.  Only the weights are reordered, as before, and not by
 * oneDNN's generic loops (bwd_weights_from); false (nothing kept) leaves
 * the backward-data primitive to the caller. */
static bool bf16_bwd_data_by_forward(cpu_ctx *c, const dlg_layer *l, conv_state *s, const dnnl_memory_desc_t *kw,
                                     const dnnl_memory_desc_t *master, const dnnl_memory_desc_t *src,
                                     const dnnl_memory_desc_t *dst, const conv_mds *m)
{
    char why[256];
    bool ok = bwd_data_by_forward(c, l, s, kw, master, src, dst, m, why, sizeof why) == 0 &&
              strstr(cpu_impl_name(s->bwd_data.pd), "amx") != NULL;
    for (int i = 0; i < s->bwd_data.n && ok; i++) /* dy and dx as they are; only w^T reordered */
        ok = !s->bwd_data.a[i].reorder || s->bwd_data.a[i].arg == DNNL_ARG_WEIGHTS;
    if (!ok) {
        cpu_prim_destroy(&s->bwd_data);
        memset(&s->bwd_data, 0, sizeof s->bwd_data);
        s->bwd_w_master = false;
        return false;
    }
    impl_add(s, s->bwd_w_master ? ", backward data by a transposed forward of the fp32 master"
                                : ", backward data by a transposed forward");
    return true;
}

/* A 1x1 layer of stride > 1 without padding, ungrouped and undilated. */
static bool strided_pointwise(const dlg_conv_param *p)
{
    return p->groups == 1 && p->kh == 1 && p->kw == 1 && (p->sh > 1 || p->sw > 1) && p->ph == 0 && p->pw == 0 &&
           p->dh == 1 && p->dw == 1;
}

/* cpu-bf16: a strided 1x1 layer's input gradient as the stride-1
 * transposed forward over dy into a compact NHWC tensor at the front of
 * the workspace (scatter_bytes), which conv_backward then spreads over
 * every stride-th pixel of dx, zeros between.  oneDNN 2.6's AMX backward
 * data took ResNet-50's three 1x1 stride-2 layers 23.9 ms a step at batch
 * 16, 3.3x their forward.  dx must be NHWC (src, the tensor's layout). */
static bool bf16_bwd_data_scattered(cpu_ctx *c, const dlg_layer *l, conv_state *s, const dnnl_memory_desc_t *kw,
                                    const dnnl_memory_desc_t *master, const dnnl_memory_desc_t *src,
                                    const dnnl_memory_desc_t *dst, const conv_mds *m)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    dnnl_memory_desc_t xn = cpu_md_dt(4, x->d, dnnl_acdb, dnnl_bf16);
    int64_t cd[4] = {x->d[0], x->d[1], y->d[2], y->d[3]};
    dnnl_memory_desc_t compact = cpu_md_dt(4, cd, dnnl_acdb, dnnl_bf16);
    conv_mds one = *m;
    one.strides[0] = one.strides[1] = 1;
    if (!dnnl_memory_desc_equal(src, &xn) || !bf16_bwd_data_by_forward(c, l, s, kw, master, &compact, dst, &one))
        return false;
    s->scatter_bytes = CPU_ALIGN(dnnl_memory_desc_get_size(&compact));
    impl_add(s, ", scattered to the strided input");
    return true;
}

/* The forward primitive with the epilogue as post-ops, or with none (the
 * residual add and the ReLU after it left to the add primitive). */
static int create_forward(cpu_ctx *c, const dlg_layer *l, conv_state *s, conv_mds *m, bool epilogue, char *err,
                          size_t errlen)
{
    bool bias = l->p.conv.bias || l->p.conv.bn;
    dnnl_convolution_desc_t d;
    dnnl_post_ops_t po = NULL;
    bool any = epilogue && (l->p.conv.residual || l->p.conv.relu);
    int rc = any ? epilogue_post_ops(l, &po) : 0;
    dnnl_status_t st = dnnl_dilated_convolution_forward_desc_init(
        &d, cpu_conv_prop(l, s->alg[0]), s->alg[0], &m->src_any, &m->w_any, bias ? &m->b : NULL, &m->dst_any,
        m->strides, m->dil, m->pad_l, m->pad_r);
    if (!rc && st != dnnl_success)
        rc = cpu_fail(st, "convolution forward desc", err, errlen);
    if (!rc)
        rc = cpu_prim_create_po(c, &s->fwd, &d, NULL, po, err, errlen);
    if (s->alg[0] == dnnl_convolution_winograd && (rc || !cpu_conv_is_winograd(s->fwd.pd))) {
        s->alg[0] = dnnl_convolution_direct;
        cpu_prim_destroy(&s->fwd);
        if (po)
            dnnl_post_ops_destroy(po);
        return create_forward(c, l, s, m, epilogue, err, errlen);
    }
    if (po)
        dnnl_post_ops_destroy(po);
    return rc;
}

/* oneDNN 2.6's AVX-512 kernels (brgconv) take no full-tensor binary add:
 * with the residual fused it falls back to its gemm kernel in plain
 * layouts, 4x slower over ResNet-50 inference than brgconv plus a
 * separate add (docs/benchmarks.md).  AVX2's jit kernels take it. */
static bool unfused_residual(const conv_state *s) { return strstr(cpu_impl_name(s->fwd.pd), "gemm") != NULL; }

/* top = relu(tmp + bottom[1]), tmp in the convolution's own layout. */
static int create_add(cpu_ctx *c, const dlg_layer *l, conv_state *s, const dnnl_memory_desc_t *tmp,
                      const dnnl_memory_desc_t *dst, char *err, size_t errlen)
{
    dnnl_memory_desc_t res = cpu_tensor_md(l->bottom[1]);
    dnnl_binary_desc_t d;
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st = dnnl_binary_desc_init(&d, dnnl_binary_add, tmp, &res, dst);
    if (st == dnnl_success && l->p.conv.relu && (st = dnnl_post_ops_create(&po)) == dnnl_success)
        st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    int rc = st != dnnl_success ? cpu_fail(st, "residual add desc", err, errlen)
                                : cpu_prim_create_po(c, &s->add, &d, NULL, po, err, errlen);
    if (po)
        dnnl_post_ops_destroy(po);
    if (!rc)
        rc = cpu_prim_arg(c, &s->add, DNNL_ARG_SRC_0, tmp, false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, &s->add, DNNL_ARG_SRC_1, &res, false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, &s->add, DNNL_ARG_DST, dst, true, err, errlen);
    return rc;
}

/* Where the planner offers the residual's memory (in_place_ok) and the top
 * has the residual's layout, the forward primitive adds the convolution
 * into it with a sum post-op (+ ReLU): one pass over the top instead of the
 * binary add's or post-op's read of a second tensor, and brgconv takes a
 * sum post-op where it takes no full-tensor add.  Layouts exactly as
 * published, so nothing is reordered.  Keeps the primitives it has
 * (returns false) wherever oneDNN would not do it without gemm. */
static bool accumulate_in_place(cpu_ctx *c, const dlg_layer *l, conv_state *s, const conv_mds *m,
                                const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *w, bool bias)
{
    dnnl_memory_desc_t res = cpu_tensor_md(l->bottom[1]), top = cpu_tensor_md(l->top[0]);
    if (!l->p.conv.in_place_ok || l->backward || !dnnl_memory_desc_equal(&res, &top))
        return false;
    dnnl_convolution_desc_t d;
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st = dnnl_post_ops_create(&po);
    if (st == dnnl_success)
        st = dnnl_post_ops_append_sum(po, 1.0f);
    if (st == dnnl_success && l->p.conv.relu)
        st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    if (st == dnnl_success)
        st = dnnl_dilated_convolution_forward_desc_init(&d, cpu_conv_prop(l, s->alg[0]), s->alg[0], src, w,
                                                        bias ? &m->b : NULL, &res, m->strides, m->dil, m->pad_l,
                                                        m->pad_r);
    char why[256] = "";
    cpu_prim p = {0};
    int rc = st != dnnl_success ? -1 : cpu_prim_create_po(c, &p, &d, NULL, po, why, sizeof why);
    if (po)
        dnnl_post_ops_destroy(po);
    const char *impl = rc ? "" : cpu_impl_name(p.pd);
    if (!rc && (!*impl || strstr(impl, "gemm") || strstr(impl, "ref")))
        rc = -1;
    if (!rc)
        rc = cpu_prim_arg(c, &p, DNNL_ARG_SRC, src, false, why, sizeof why);
    if (!rc)
        rc = cpu_prim_arg(c, &p, DNNL_ARG_WEIGHTS, w, false, why, sizeof why);
    if (!rc && bias)
        rc = cpu_prim_arg(c, &p, DNNL_ARG_BIAS, &m->b, false, why, sizeof why);
    if (!rc)
        rc = cpu_prim_arg(c, &p, DNNL_ARG_DST, &res, true, why, sizeof why);
    for (int i = 0; i < p.n && !rc; i++) /* a reordered top would not hold the residual */
        rc = p.a[i].reorder ? -1 : 0;
    if (rc) {
        cpu_prim_destroy(&p);
        return false;
    }
    cpu_prim_destroy(&s->fwd);
    cpu_prim_destroy(&s->add);
    s->fwd = p;
    s->tmp_bytes = 0;
    s->in_place = true;
    impl_add(s, ", added in place");
    return true;
}

/* The backward data or (weights) backward weights primitive, by the pass's
 * algorithm, or direct where oneDNN has no Winograd kernel for it. */
static int create_backward(cpu_ctx *c, const dlg_layer *l, conv_state *s, const conv_mds *m, bool weights,
                           char *err, size_t errlen)
{
    dnnl_alg_kind_t *alg = &s->alg[weights ? 2 : 1];
    cpu_prim *p = weights ? &s->bwd_weights : &s->bwd_data;
    bool bias = l->p.conv.bias || l->p.conv.bn;
    dnnl_convolution_desc_t d;
    dnnl_status_t st =
        weights ? dnnl_dilated_convolution_backward_weights_desc_init(&d, *alg, &m->src_any, &m->dw_any,
                                                                      bias ? &m->b : NULL, &m->dst_any, m->strides,
                                                                      m->dil, m->pad_l, m->pad_r)
                : dnnl_dilated_convolution_backward_data_desc_init(&d, *alg, &m->src_any, &m->w_any, &m->dst_any,
                                                                   m->strides, m->dil, m->pad_l, m->pad_r);
    int rc = st != dnnl_success
                 ? cpu_fail(st, weights ? "convolution backward weights desc" : "convolution backward data desc",
                            err, errlen)
                 : cpu_prim_create(c, p, &d, s->fwd.pd, err, errlen);
    if (*alg == dnnl_convolution_winograd && (rc || !cpu_conv_is_winograd(p->pd))) {
        cpu_prim_destroy(p);
        *alg = dnnl_convolution_direct;
        return create_backward(c, l, s, m, weights, err, errlen);
    }
    return rc;
}

/* A strided 1x1 layer's input as its kernel sees it: every sh-th row and
 * sw-th column of the NHWC tensor, copied compact into the front of the
 * workspace by s->sub, image by image (oneDNN refuses a 4-d view whose
 * rows step past the next image's start, as 8 rows of stride 2 do in 15). */
static bool subsample_input(cpu_ctx *c, const dlg_layer *l, conv_state *s)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    const dlg_conv_param *p = &l->p.conv;
    int64_t ch = x->d[1];
    dnnl_dims_t dims = {ch, y->d[2], y->d[3]}, from_st = {1, p->sh * x->d[3] * ch, p->sw * ch},
                to_st = {1, y->d[3] * ch, ch};
    dnnl_memory_desc_t from, to;
    dnnl_primitive_attr_t attr = cpu_attr();
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = attr ? dnnl_memory_desc_init_by_strides(&from, 3, dims, dnnl_bf16, from_st)
                            : dnnl_out_of_memory;
    if (st == dnnl_success)
        st = dnnl_memory_desc_init_by_strides(&to, 3, dims, dnnl_bf16, to_st);
    if (st == dnnl_success)
        st = dnnl_reorder_primitive_desc_create(&pd, &from, c->eng, &to, c->eng, attr);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    char why[256];
    if (st != dnnl_success || cpu_prim_from_pd(c, &s->sub, pd, why, sizeof why) != 0 ||
        cpu_prim_arg(c, &s->sub, DNNL_ARG_FROM, &from, false, why, sizeof why) != 0 ||
        cpu_prim_arg(c, &s->sub, DNNL_ARG_TO, &to, true, why, sizeof why) != 0) {
        cpu_prim_destroy(&s->sub);
        return false;
    }
    s->sub_bytes = CPU_ALIGN((size_t)(y->d[0] * y->d[2] * y->d[3] * ch) * sizeof(uint16_t));
    return true;
}

/* The batched matmul of a 1x1 layer's weight gradient: per image n,
 * dW_n (oc x ic) = dY_n^T . X_n, into planes the backward then sums (the
 * same pointer order: x, dy, planes).  0, or -1 where oneDNN would not run
 * it on brgemm with the tensors as they are. */
static int batched_matmul(cpu_ctx *c, const dlg_layer *l, cpu_prim *p)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    int64_t hw = y->d[2] * y->d[3];
    int64_t ad[3] = {y->d[0], y->d[1], hw}, bd[3] = {y->d[0], hw, x->d[1]}, wd[3] = {y->d[0], y->d[1], x->d[1]};
    dnnl_memory_desc_t a = cpu_md_dt(3, ad, dnnl_acb, dnnl_bf16), b = cpu_md_dt(3, bd, dnnl_abc, dnnl_bf16),
                       w = cpu_md(3, wd, dnnl_abc);
    dnnl_matmul_desc_t d;
    char why[256];
    bool ok = dnnl_matmul_desc_init(&d, &a, &b, NULL, &w) == dnnl_success &&
              cpu_prim_create(c, p, &d, NULL, why, sizeof why) == 0 && strncmp(cpu_impl_name(p->pd), "brg", 3) == 0 &&
              !cpu_prim_arg(c, p, DNNL_ARG_WEIGHTS, &b, false, why, sizeof why) &&
              !cpu_prim_arg(c, p, DNNL_ARG_SRC, &a, false, why, sizeof why) &&
              !cpu_prim_arg(c, p, DNNL_ARG_DST, &w, true, why, sizeof why);
    for (int i = 0; i < p->n && ok; i++)
        ok = !p->a[i].reorder;
    if (!ok)
        cpu_prim_destroy(p);
    return ok ? 0 : -1;
}

/* What batched_pays times: both matmuls of one layer on zeroed buffers. */
typedef struct matmul_bench {
    cpu_ctx *c;
    conv_state *s; /* its partials switched between the two */
    cpu_prim one, batched;
    int64_t partials, plane;
    size_t partial_bytes, x_bytes, dy_bytes;
} matmul_bench;

/* One run of the layer's weight-gradient matmul as the backward makes it. */
typedef struct matmul_run {
    cpu_ctx *c;
    conv_state *s;
    void *x, *dy, *dw, *ws;
} matmul_run;

static int run_matmul(void *arg)
{
    matmul_run *r = arg;
    return cpu_conv_wgrad_matmul(r->c, r->s, r->x, r->dy, r->dw, r->ws);
}

static int time_matmuls(void *arg, double *t)
{
    matmul_bench *b = arg;
    size_t ws = b->one.ws > b->batched.ws ? b->one.ws : b->batched.ws;
    size_t sizes[4] = {b->x_bytes, b->dy_bytes, (size_t)b->plane * 4, b->partial_bytes + ws};
    matmul_run r = {.c = b->c, .s = b->s};
    void **at[4] = {&r.x, &r.dy, &r.dw, &r.ws};
    char *buf = cpu_zeroed_buffers(sizes, at, 4);
    if (!buf)
        return -1;
    conv_state saved = *b->s; /* the two matmuls switched in and out */
    for (int k = 0; k < 2; k++) {
        b->s->bwd_weights = k ? b->batched : b->one;
        b->s->partials = k ? b->partials : 0;
        b->s->plane = k ? b->plane : 0;
        b->s->partial_bytes = k ? b->partial_bytes : 0;
        t[k] = cpu_time_best(run_matmul, &r);
    }
    *b->s = saved;
    free(buf);
    return 0;
}

/* Whether the batched matmul replaces the one over every pixel (p): timed
 * once per host and shape, kept in the tuning record (cpu_plan_time.h).
 * In isolation it took ResNet-50's 56 x 56 layers 1.4-1.6 ms against 2.2
 * (b16), the 14 x 14 ones 1.5-1.8 against 1.0-1.1 ms; the summed planes
 * are at most 16 MiB.  Test hook: DLG_NN_WGRAD1X1_TIMES="<one s>,<batched s>". */
static void batched_if_faster(cpu_ctx *c, const dlg_layer *l, conv_state *s, cpu_prim *p)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    matmul_bench b = {.c = c, .s = s, .one = *p, .partials = y->d[0], .plane = y->d[1] * x->d[1]};
    b.partial_bytes = CPU_ALIGN((size_t)(b.partials * b.plane) * 4);
    b.x_bytes = (size_t)(y->d[0] * y->d[2] * y->d[3] * x->d[1]) * 2;
    b.dy_bytes = (size_t)(y->d[0] * y->d[2] * y->d[3] * y->d[1]) * 2;
    if (b.partials < 2 || b.partial_bytes > ((size_t)16 << 20) || b.x_bytes + b.dy_bytes > ((size_t)64 << 20) ||
        batched_matmul(c, l, &b.batched) != 0)
        return;
    static const char *const names[2] = {"matmul", "batched"}, *const said[2] = {"one matmul", "matmul per image"};
    const cpu_tune_menu menu = {names, said, 2, 1u << 1, "DLG_NN_WGRAD1X1_TIMES"};
    const dnnl_version_t *v = dnnl_version();
    char key[DLG_TUNE_KEY_MAX], what[160];
    snprintf(key, sizeof key, "wgrad1x1:dnnl%d.%d.%d:t%d:n%lldc%lldhw%lld:o%lld", v->major, v->minor, v->patch,
             cpu_team_size(c), (long long)y->d[0], (long long)x->d[1], (long long)(y->d[2] * y->d[3]),
             (long long)y->d[1]);
    snprintf(what, sizeof what, "%s's weight gradient", l->name);
    if (cpu_tuned_pick(c, key, &menu, time_matmuls, &b, what, "at its batch") != 1) {
        cpu_prim_destroy(&b.batched);
        return;
    }
    cpu_prim_destroy(p);
    *p = b.batched;
    s->partials = b.partials;
    s->plane = b.plane;
    s->partial_bytes = b.partial_bytes;
}

/* cpu-bf16: a 1x1 layer's weight gradient as one matmul over its NHWC
 * input (subsampled where strided) and output gradient seen as matrices,
 * dW (oc x ic) = dY^T (oc x NHoWo) . X (NHoWo x ic), into the plain fp32
 * gradient.  On ResNet-50's and Inception-v3's 1x1 shapes oneDNN 2.6's
 * AMX convolution backward weights ran at 150-350 GFLOP/s here and its
 * brgemm matmul at 2-4x that (dW of 2048 -> 448 at 8x8, batch 4: 2.59
 * against 0.31 ms; ResNet-50's 1x1 stride-1 layers at batch 16, 164
 * against 79 ms a step).  Only where that was measured, oneDNN's AMX
 * kernels (an AVX-512 bf16 CPU without AMX keeps its convolution's
 * backward weights until timed there), and the matmul is brgemm and
 * takes both tensors as they are; false leaves the convolution's own
 * primitive. */
static bool wgrad_by_matmul(cpu_ctx *c, const dlg_layer *l, conv_state *s, const dnnl_memory_desc_t *src,
                            const dnnl_memory_desc_t *dst)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    const dlg_conv_param *cp = &l->p.conv;
    if (!c->bf16 || cp->groups != 1 || cp->kh != 1 || cp->kw != 1 || cp->ph || cp->pw || cp->bn ||
        !strstr(cpu_impl_name(s->fwd.pd), "amx"))
        return false;
    dnnl_memory_desc_t xn = cpu_md_dt(4, x->d, dnnl_acdb, dnnl_bf16), yn = cpu_md_dt(4, y->d, dnnl_acdb, dnnl_bf16);
    if (!dnnl_memory_desc_equal(src, &xn) || !dnnl_memory_desc_equal(dst, &yn))
        return false;
    bool strided = cp->sh != 1 || cp->sw != 1;
    if (strided && !subsample_input(c, l, s))
        return false;
    int64_t rows = y->d[0] * y->d[2] * y->d[3];
    int64_t ad[2] = {y->d[1], rows}, bd[2] = {rows, x->d[1]}, wd[2] = {y->d[1], x->d[1]};
    dnnl_memory_desc_t a = cpu_md_dt(2, ad, dnnl_ba, dnnl_bf16), b = cpu_md_dt(2, bd, dnnl_ab, dnnl_bf16),
                       w = cpu_md(2, wd, dnnl_ab);
    dnnl_matmul_desc_t d;
    char why[256];
    cpu_prim p = {0};
    const char *impl = "";
    bool ok = dnnl_matmul_desc_init(&d, &a, &b, NULL, &w) == dnnl_success &&
              cpu_prim_create(c, &p, &d, NULL, why, sizeof why) == 0;
    if (ok)
        impl = cpu_impl_name(p.pd);
    /* in conv_backward's pointer order: x, dy, dw */
    ok = ok && strncmp(impl, "brg", 3) == 0 && !cpu_prim_arg(c, &p, DNNL_ARG_WEIGHTS, &b, false, why, sizeof why) &&
         !cpu_prim_arg(c, &p, DNNL_ARG_SRC, &a, false, why, sizeof why) &&
         !cpu_prim_arg(c, &p, DNNL_ARG_DST, &w, true, why, sizeof why);
    for (int i = 0; i < p.n && ok; i++)
        ok = !p.a[i].reorder;
    if (!ok) {
        cpu_prim_destroy(&p);
        cpu_prim_destroy(&s->sub);
        s->sub_bytes = 0;
        return false;
    }
    batched_if_faster(c, l, s, &p);
    impl = cpu_impl_name(p.pd);
    s->bwd_weights = p;
    s->wgrad = WG_MATMUL;
    /* a bias (GoogLeNet's 1x1 layers): its gradient summed from dy, in the
     * workspace after the matmul */
    if (cp->bias)
        s->bias_shape = (cpu_bn_shape){.rows = rows, .C = y->d[1], .threads = cpu_team_size(c)};
    char what[sizeof s->impl];
    snprintf(what, sizeof what, ", weight gradient by matmul %s%s%s%s", impl, s->partials ? " per image, summed" : "",
             strided ? " of the subsampled input" : "", cp->bias ? ", bias gradient by sums of dy" : "");
    impl_add(s, what);
    return true;
}

/* cpu-bf16: the weight gradient by one of ours where it takes the layer
 * and was timed faster than oneDNN's (cpu_wgrad_pick.h), where oneDNN's
 * own forward runs on AMX and the tensors are NHWC: cpu_wgrad_amx for
 * few input channels (a net's first: C x KH x KW + 1 taps up to 512;
 * oneDNN 2.6's AMX backward weights ran those at 85-330 GFLOP/s, 11.5 ms
 * of a GoogLeNet or ResNet-50 b16 step for conv1), which writes the
 * master plain (OIHW) as it stays; or an im2col and a matmul
 * (cpu_wgrad_im2col.h), which writes it OHWI, the layout the master then
 * takes. */
static bool wgrad_by_ours(cpu_ctx *c, const dlg_layer *l, conv_state *s, const dnnl_memory_desc_t *src,
                          const dnnl_memory_desc_t *dst, conv_mds *m)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    const dlg_conv_param *cp = &l->p.conv;
    if (!c->bf16 || cp->groups != 1 || cp->dh != 1 || cp->dw != 1 || cp->bn ||
        !strstr(cpu_impl_name(s->fwd.pd), "amx"))
        return false;
    dnnl_memory_desc_t xn = cpu_md_dt(4, x->d, dnnl_acdb, dnnl_bf16), yn = cpu_md_dt(4, y->d, dnnl_acdb, dnnl_bf16);
    dnnl_memory_desc_t input = cpu_md(4, x->d, dnnl_nchw); /* the net's, fp32 */
    s->wg = (cpu_wgrad_shape){.N = x->d[0], .C = x->d[1], .H = x->d[2], .W = x->d[3], .OC = y->d[1],
                              .OH = y->d[2], .OW = y->d[3], .KH = cp->kh, .KW = cp->kw, .S = cp->sh,
                              .P = cp->ph, .SW = cp->sw, .PW = cp->pw, .threads = cpu_team_size(c),
                              .f32_nchw = dnnl_memory_desc_equal(src, &input)};
    if (!(s->wg.f32_nchw || dnnl_memory_desc_equal(src, &xn)) || !dnnl_memory_desc_equal(dst, &yn))
        return false;
    unsigned can = 0;
    if (cpu_wgrad_amx_fits(&s->wg) && cpu_wgrad_amx_supported())
        can |= 1u << CPU_WGRAD_AMX;
    if (l->param[0]->opaque_ok && cpu_wgrad_im2col_fits(&s->wg))
        can |= 1u << CPU_WGRAD_IM2COL;
    cpu_wgrad_kind pick = can ? cpu_wgrad_pick(c, l, &s->wg, can) : CPU_WGRAD_ONEDNN;
    if (pick == CPU_WGRAD_AMX) {
        s->wgrad = WG_AMX;
        impl_add(s, ", weight gradient by AMX tiles (cpu_wgrad_amx)");
        return true;
    }
    if (pick != CPU_WGRAD_IM2COL || cpu_wgrad_im2col_init(c, &s->im2col, &s->wg, cp->bias) != 0)
        return false;
    s->wgrad = WG_IM2COL;
    dnnl_memory_desc_t ohwi = cpu_wgrad_im2col_md(&s->wg);
    m->w = cpu_publish(l->param[0], &s->w_md, &ohwi);
    char what[sizeof s->impl];
    snprintf(what, sizeof what, ", weight gradient by im2col + matmul %s%s", cpu_impl_name(s->im2col.mm.pd),
             cp->bias ? ", bias gradient by sums of dy" : "");
    impl_add(s, what);
    return true;
}

/* cpu-bf16 training: the fp32 master weights take the layout in which the
 * backward-weights kernel writes their gradient (AMX's is blocked), so no
 * step reorders the gradient out of it: that reorder of every fp32
 * gradient was 8% of an Inception-v3 step.  SGD is element-wise, and the
 * bf16 copy (wq) is converted from the master in whatever layout. */
static int master_in_gradient_layout(cpu_ctx *c, const dlg_layer *l, conv_state *s, conv_mds *m,
                                     char *err, size_t errlen)
{
    int rc = create_backward(c, l, s, m, true, err, errlen);
    if (!rc)
        m->w = cpu_publish(l->param[0], &s->w_md,
                           dnnl_primitive_desc_query_md(s->bwd_weights.pd, dnnl_query_diff_weights_md, 0));
    return rc;
}

/* fp32 grouped weights in the forward kernel's 5-d layout kw, published
 * where that is one 4-d layout of the blob's {k, c/g, kh, kw}: oneDNN's
 * gOIhw8i8o (AVX2) is OIhw8i8o over every group's filter in turn when a
 * group's outputs fill whole blocks, and gOIhw16i16o (AVX-512) likewise
 * (AlexNet's conv2, 4 and 5; dnnl_memory_desc_reshape does not join such
 * blocked dims).  The primitives then read the param in place rather than
 * reorder it from goihw each call, and the Winograd kernels can take it.
 * Returns the md the primitives get for the param: kw, or plain where it
 * stays plain. */
static dnnl_memory_desc_t publish_grouped_weights(const dlg_layer *l, conv_state *s, const dnnl_memory_desc_t *kw,
                                                  const dnnl_memory_desc_t *plain)
{
    static const struct {
        dnnl_format_tag_t grouped, whole;
        int64_t block;
    } same[] = {{dnnl_aBCde8c8b, dnnl_ABcd8b8a, 8}, {dnnl_aBCde16c16b, dnnl_ABcd16b16a, 16}};
    const int64_t *d = l->param[0]->shape.d;
    int64_t g = l->p.conv.groups, d5[5] = {g, d[0] / g, d[1], d[2], d[3]};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        dnnl_memory_desc_t w5 = cpu_md(5, d5, same[i].grouped), w4 = cpu_md(4, d, same[i].whole);
        if (d5[1] % same[i].block || !dnnl_memory_desc_equal(kw, &w5))
            continue;
        dnnl_memory_desc_t pub = cpu_publish(l->param[0], &s->w_md, &w4);
        return dnnl_memory_desc_equal(&pub, &w4) ? *kw : *plain;
    }
    return *plain;
}

int cpu_conv_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                   size_t errlen)
{
    cpu_ctx *c = ctx;
    /* a folded batch norm always brings a bias */
    bool bias = l->p.conv.bias || l->p.conv.bn;
    conv_mds m;
    conv_describe(l, cpu_act_dt(c), &m);
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    dnnl_memory_desc_t src = cpu_tensor_md(l->bottom[0]), dst;
    cpu_conv_pick_algos(c, l, s->alg);
    bool fused = l->p.conv.residual;
    int rc = create_forward(c, l, s, &m, true, err, errlen);
    if (!rc && fused && !l->backward && unfused_residual(s)) {
        cpu_prim_destroy(&s->fwd);
        memset(&s->fwd, 0, sizeof s->fwd);
        fused = false;
        rc = create_forward(c, l, s, &m, false, err, errlen);
    }
    if (!rc) {
        dst = cpu_publish(l->top[0], &s->top_md,
                          dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_dst_md, 0));
        rc = cpu_prim_arg(c, &s->fwd, DNNL_ARG_SRC, &src, false, err, errlen);
    }
    /* the weights' memory: bf16 copies (fold or wq) in the kernel's layout
     * under cpu-bf16, else the param itself, in that layout where it can */
    dnnl_memory_desc_t kw = rc ? m.w : *dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_weights_md, 0);
    if (!rc && !c->bf16 && l->p.conv.groups == 1)
        m.w = cpu_publish(l->param[0], &s->w_md, &kw);
    else if (!rc && !c->bf16)
        m.w = publish_grouped_weights(l, s, &kw, &m.w);
    if (!rc && c->bf16 && l->backward && l->param_grad && !wgrad_by_matmul(c, l, s, &src, &dst) &&
        !wgrad_by_ours(c, l, s, &src, &dst, &m) && l->p.conv.groups == 1)
        rc = master_in_gradient_layout(c, l, s, &m, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, &s->fwd, DNNL_ARG_WEIGHTS, c->bf16 ? &kw : &m.w, false, err, errlen);
    if (!rc && c->bf16 && !l->p.conv.bn)
        rc = cpu_wcopy_init(&s->wq, &m.w, &kw);
    if (!rc && bias)
        rc = cpu_prim_arg(c, &s->fwd, DNNL_ARG_BIAS, &m.b, false, err, errlen);
    dnnl_memory_desc_t tmp = *dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_dst_md, 0);
    bool by_add = !rc && l->p.conv.residual && !fused;
    if (by_add)
        s->tmp_bytes = CPU_ALIGN(dnnl_memory_desc_get_size(&tmp));
    if (!rc)
        rc = cpu_prim_arg(c, &s->fwd, DNNL_ARG_DST, by_add ? &tmp : &dst, true, err, errlen);
    if (!rc && fused) { /* post-op 0: the residual add */
        dnnl_memory_desc_t res = cpu_tensor_md(l->bottom[1]);
        rc = cpu_prim_arg(c, &s->fwd, DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, &res,
                          false, err, errlen);
    } else if (!rc && l->p.conv.residual) {
        rc = create_add(c, l, s, &tmp, &dst, err, errlen);
    }
    if (!rc && l->p.conv.bn)
        rc = cpu_fold_init(&s->fold, l, &m.w, c->bf16 ? &kw : &m.w);
    bool dx = !rc && l->backward && l->prop_down[0];
    /* cpu-bf16 without a fold: backward data may read the fp32 master */
    const dnnl_memory_desc_t *master = c->bf16 && !l->p.conv.bn && l->p.conv.groups == 1 ? &m.w : NULL;
    if (dx && pointwise(&l->p.conv) && !c->bf16)
        rc = bwd_data_by_forward(c, l, s, &m.w, NULL, &src, &dst, &m, err, errlen);
    else if (dx && !(c->bf16 && pointwise(&l->p.conv) &&
                     bf16_bwd_data_by_forward(c, l, s, &kw, master, &src, &dst, &m)) &&
             !(c->bf16 && strided_pointwise(&l->p.conv) &&
               bf16_bwd_data_scattered(c, l, s, &kw, master, &src, &dst, &m))) {
        rc = create_backward(c, l, s, &m, false, err, errlen);
        if (!rc)
            rc = cpu_prim_arg(c, &s->bwd_data, DNNL_ARG_DIFF_DST, &dst, false, err, errlen);
        /* cpu-bf16: from the forward's bf16 copy, half the bytes to read,
         * unless that reorders slowly (bwd_weights_from) */
        dnnl_memory_desc_t from[2];
        const dnnl_memory_desc_t *wmd = c->bf16 ? &kw : &m.w;
        if (!rc && master)
            wmd = bwd_weights_from(c, s, &kw, master,
                                   dnnl_primitive_desc_query_md(s->bwd_data.pd, dnnl_query_weights_md, 0), false,
                                   from);
        if (!rc)
            rc = cpu_prim_arg(c, &s->bwd_data, DNNL_ARG_WEIGHTS, wmd ? wmd : &kw, false, err, errlen);
        if (!rc && s->bwd_w_master)
            impl_add(s, ", backward data from the fp32 master");
        if (!rc)
            rc = cpu_prim_arg(c, &s->bwd_data, DNNL_ARG_DIFF_SRC, &src, true, err, errlen);
    }
    if (!rc && l->backward && l->p.conv.relu) /* in place: dy is only this layer's to read */
        rc = cpu_relu_bwd(c, &s->relu_bwd, &dst, &dst, &dst, err, errlen);
    if (!rc && l->backward && l->param_grad && s->wgrad == WG_PRIM) {
        if (!s->bwd_weights.p) /* master_in_gradient_layout made it under cpu-bf16 */
            rc = create_backward(c, l, s, &m, true, err, errlen);
        if (!rc)
            rc = cpu_prim_arg(c, &s->bwd_weights, DNNL_ARG_SRC, &src, false, err, errlen);
        if (!rc)
            rc = cpu_prim_arg(c, &s->bwd_weights, DNNL_ARG_DIFF_DST, &dst, false, err, errlen);
        if (!rc)
            rc = cpu_prim_arg(c, &s->bwd_weights, DNNL_ARG_DIFF_WEIGHTS, &m.w, true, err, errlen);
        if (!rc && bias)
            rc = cpu_prim_arg(c, &s->bwd_weights, DNNL_ARG_DIFF_BIAS, &m.b, true, err, errlen);
    }
    if (rc) {
        l->top[0]->layout = NULL;
        l->param[0]->layout = NULL;
        l->param[0]->alloc_count = l->param[0]->count;
        cpu_conv_destroy(ctx, s);
        return rc;
    }
    s->by = !c->winograd                      ? BY_PRIMS
            : wino_fits(l, &s->shape)          ? BY_WINO
            : wino1d_fits(l, &s->shape1d)      ? BY_WINO1D
            : gemm_fits(l, &s->gshape)         ? BY_GEMM
                                               : BY_PRIMS;
    if (s->by == BY_WINO && !l->backward && wino_keeps_filter(&s->shape) &&
        posix_memalign((void **)&s->u, 64, wino_filter_bytes(&s->shape)) != 0) {
        s->u = NULL;
        cpu_conv_destroy(ctx, s);
        return -DLG_ENOMEM;
    }
    if (s->by == BY_PRIMS && l->p.conv.residual)
        accumulate_in_place(c, l, s, &m, &src, c->bf16 ? &kw : &m.w, bias);
    *state = s;
    *ws = cpu_conv_ws(s);
    size_t wb = s->by == BY_WINO     ? wino_ws_bytes(&s->shape)
                : s->by == BY_WINO1D ? wino1d_ws_bytes(&s->shape1d)
                : s->by == BY_GEMM   ? gemm_conv_ws_bytes(&s->gshape)
                                     : 0;
    if (wb > *ws)
        *ws = wb;
    return 0;
}
