/* oneDNN ReLU (eltwise), softmax over channels, eltwise add (binary) and
 * split backward (sum): the layers that connect convolutions, so that
 * blocked layouts survive between them. */
#include "cpu.h"
#include "cpu_grad_sum.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct prims {
    cpu_prim fwd, bwd, bwd2, bwd3;
    dnnl_memory_desc_t top_md;
    bool parts;       /* add with a folded split (top_parts) */
    int64_t one_pass; /* its backward: values cpu_grad_sum(_bf16) covers; 0: primitives */
    bool one_pass_bf16;
} prims;

static void prims_destroy(void *ctx, void *state)
{
    prims *s = state;
    cpu_prim_destroy(&s->fwd);
    cpu_prim_destroy(&s->bwd);
    cpu_prim_destroy(&s->bwd2);
    cpu_prim_destroy(&s->bwd3);
    free(s);
}

static size_t prims_ws(const prims *s)
{
    size_t w = s->fwd.ws > s->bwd.ws ? s->fwd.ws : s->bwd.ws;
    w = s->bwd2.ws > w ? s->bwd2.ws : w;
    return s->bwd3.ws > w ? s->bwd3.ws : w;
}

/* Adds args with the given user layouts; the last `nout` are outputs. */
static int args(cpu_ctx *c, cpu_prim *p, const int *a, const dnnl_memory_desc_t *const *md, int n,
                int nout, char *err, size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = cpu_prim_arg(c, p, a[i], md[i], i >= n - nout, err, errlen);
    return rc;
}

static int relu_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    const dlg_tensor *x = l->bottom[0];
    /* element-wise: the input's own layout, or a flat view of a plain one */
    dnnl_memory_desc_t md = x->layout ? cpu_tensor_md(x) : cpu_md(1, &x->count, dnnl_x), top;
    dnnl_eltwise_desc_t fd, bd;
    bool bwd = l->backward && l->prop_down[0];
    /* backward from the output, so the input need not outlive forward */
    dnnl_alg_kind_t alg = dnnl_eltwise_relu_use_dst_for_bwd;
    dnnl_status_t st = dnnl_eltwise_forward_desc_init(
        &fd, bwd ? dnnl_forward_training : dnnl_forward_inference, alg, &md, 0, 0);
    if (st == dnnl_success && bwd)
        st = dnnl_eltwise_backward_desc_init(&bd, alg, &md, &md, 0, 0);
    if (st != dnnl_success)
        return cpu_fail(st, "eltwise desc", err, errlen);
    prims *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    top = x->layout ? cpu_publish(l->top[0], &s->top_md, &md) : md;
    if (!x->layout)
        l->top[0]->layout = NULL;
    int fa[2] = {DNNL_ARG_SRC, DNNL_ARG_DST},
        ba[3] = {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *fm[2] = {&md, &top}, *bm[3] = {&top, &top, &md};
    int rc = cpu_prim_create(ctx, &s->fwd, &fd, NULL, err, errlen);
    if (!rc)
        rc = args(ctx, &s->fwd, fa, fm, 2, 1, err, errlen);
    if (!rc && bwd)
        rc = cpu_prim_create(ctx, &s->bwd, &bd, s->fwd.pd, err, errlen);
    if (!rc && bwd)
        rc = args(ctx, &s->bwd, ba, bm, 3, 1, err, errlen);
    if (rc) {
        l->top[0]->layout = NULL;
        prims_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = prims_ws(s);
    return 0;
}

static int relu_forward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[2] = {l->bottom[0]->data, l->top[0]->data};
    return cpu_prim_exec(ctx, &((prims *)state)->fwd, ptrs, l->ws);
}

static int relu_backward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[3] = {l->top[0]->data, l->top[0]->diff, l->bottom[0]->diff};
    return cpu_prim_exec(ctx, &((prims *)state)->bwd, ptrs, l->ws);
}

const dlg_kernels dlg_cpu_relu = {.setup = relu_setup,
                                  .forward = relu_forward,
                                  .backward = relu_backward,
                                  .destroy = prims_destroy,
                                  .any_layout = true,
                                  .bwd_no_bottom_data = true};

static bool softmax_accepts(const dlg_layer *l) { return l->bottom[0]->shape.ndim == 4; }

static int softmax_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                         size_t errlen)
{
    dnnl_memory_desc_t md = cpu_plain_md(l->bottom[0]);
    dnnl_softmax_desc_t fd, bd;
    bool bwd = l->backward && l->prop_down[0];
    dnnl_status_t st = dnnl_softmax_forward_desc_init(
        &fd, bwd ? dnnl_forward_training : dnnl_forward_inference, &md, 1);
    if (st == dnnl_success && bwd)
        st = dnnl_softmax_backward_desc_init(&bd, &md, &md, 1);
    if (st != dnnl_success)
        return cpu_fail(st, "softmax desc", err, errlen);
    prims *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    l->top[0]->layout = NULL;
    int fa[2] = {DNNL_ARG_SRC, DNNL_ARG_DST};
    int ba[3] = {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *m[3] = {&md, &md, &md};
    int rc = cpu_prim_create(ctx, &s->fwd, &fd, NULL, err, errlen);
    if (!rc)
        rc = args(ctx, &s->fwd, fa, m, 2, 1, err, errlen);
    if (!rc && bwd)
        rc = cpu_prim_create(ctx, &s->bwd, &bd, s->fwd.pd, err, errlen);
    if (!rc && bwd)
        rc = args(ctx, &s->bwd, ba, m, 3, 1, err, errlen);
    if (rc) {
        prims_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = prims_ws(s);
    return 0;
}

static int softmax_forward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[2] = {l->bottom[0]->data, l->top[0]->data};
    return cpu_prim_exec(ctx, &((prims *)state)->fwd, ptrs, l->ws);
}

static int softmax_backward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[3] = {l->top[0]->data, l->top[0]->diff, l->bottom[0]->diff};
    return cpu_prim_exec(ctx, &((prims *)state)->bwd, ptrs, l->ws);
}

const dlg_kernels dlg_cpu_softmax = {.setup = softmax_setup,
                                     .forward = softmax_forward,
                                     .backward = softmax_backward,
                                     .destroy = prims_destroy,
                                     .accepts = softmax_accepts};

/* dst = sum of n sources, each in its own layout (copies and reductions
 * in one oneDNN primitive). */
int cpu_sum_prim(cpu_ctx *c, cpu_prim *p, const dnnl_memory_desc_t *dst, int n,
                 const dnnl_memory_desc_t *src, char *err, size_t errlen)
{
    float scales[CPU_MAX_ARGS];
    for (int i = 0; i < n; i++)
        scales[i] = 1.0f;
    dnnl_primitive_attr_t attr = cpu_attr();
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = attr ? dnnl_sum_primitive_desc_create(&pd, dst, n, scales, src, attr, c->eng)
                            : dnnl_out_of_memory;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return cpu_fail(st, "sum", err, errlen);
    int rc = cpu_prim_from_pd(c, p, pd, err, errlen);
    for (int i = 0; i < n && !rc; i++)
        rc = cpu_prim_arg(c, p, DNNL_ARG_MULTIPLE_SRC + i, &src[i], false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, p, DNNL_ARG_DST, dst, true, err, errlen);
    return rc;
}

int cpu_relu_bwd(cpu_ctx *c, cpu_prim *p, const dnnl_memory_desc_t *top, const dnnl_memory_desc_t *dy,
                 const dnnl_memory_desc_t *x, char *err, size_t errlen)
{
    dnnl_eltwise_desc_t fd, bd;
    dnnl_alg_kind_t alg = dnnl_eltwise_relu_use_dst_for_bwd;
    dnnl_status_t st = dnnl_eltwise_forward_desc_init(&fd, dnnl_forward_training, alg, top, 0, 0);
    if (st == dnnl_success)
        st = dnnl_eltwise_backward_desc_init(&bd, alg, dy, top, 0, 0);
    if (st != dnnl_success)
        return cpu_fail(st, "eltwise desc", err, errlen);
    dnnl_primitive_desc_t hint = NULL;
    dnnl_primitive_attr_t attr = cpu_attr();
    st = attr ? dnnl_primitive_desc_create(&hint, &fd, attr, c->eng, NULL) : dnnl_out_of_memory;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return cpu_fail(st, "eltwise hint", err, errlen);
    int rc = cpu_prim_create(c, p, &bd, hint, err, errlen);
    dnnl_primitive_desc_destroy(hint);
    int ba[3] = {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *bm[3] = {top, dy, x};
    return rc ? rc : args(c, p, ba, bm, 3, 1, err, errlen);
}

/* Backward with a folded split (top_parts, in the output's layout like
 * every split output): one pass (cpu_grad_sum) when the input gradients
 * are in that layout too; else the parts summed into the first input's
 * gradient (bwd), its ReLU there in place (bwd3), a copy to the second
 * (bwd2). */
static int parts_setup(cpu_ctx *c, const dlg_layer *l, prims *s, const dnnl_memory_desc_t *top,
                       const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b, char *err,
                       size_t errlen)
{
    bool down0 = l->prop_down[0], down1 = l->prop_down[1];
    s->parts = true;
    /* cpu_grad_sum sums fp32, cpu_grad_sum_bf16 bf16 */
    bool f32 = top->data_type == dnnl_f32, bf16 = top->data_type == dnnl_bf16;
    if ((f32 || bf16) && (!down0 || dnnl_memory_desc_equal(a, top)) &&
        (!down1 || dnnl_memory_desc_equal(b, top))) {
        s->one_pass = (int64_t)(dnnl_memory_desc_get_size(top) / (f32 ? sizeof(float) : sizeof(uint16_t)));
        s->one_pass_bf16 = bf16;
        return 0;
    }
    if (l->ntop_parts >= CPU_MAX_ARGS) {
        snprintf(err, errlen, "%d gradients to sum: at most %d in a layout change", l->ntop_parts,
                 CPU_MAX_ARGS - 1);
        return -DLG_ENOTSUP;
    }
    const dnnl_memory_desc_t *x = down0 ? a : b;
    dnnl_memory_desc_t parts[CPU_MAX_ARGS];
    for (int p = 0; p < l->ntop_parts; p++)
        parts[p] = *top;
    int rc = cpu_sum_prim(c, &s->bwd, x, l->ntop_parts, parts, err, errlen);
    if (!rc && l->p.add.relu)
        rc = cpu_relu_bwd(c, &s->bwd3, top, x, x, err, errlen);
    if (!rc && down0 && down1)
        rc = cpu_sum_prim(c, &s->bwd2, b, 1, a, err, errlen);
    return rc;
}

static int add_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                     size_t errlen)
{
    dnnl_memory_desc_t a = cpu_tensor_md(l->bottom[0]), b = cpu_tensor_md(l->bottom[1]);
    dnnl_memory_desc_t any = cpu_md_dt(l->top[0]->shape.ndim, l->top[0]->shape.d, dnnl_format_tag_any,
                                       a.data_type), /* bf16 stays bf16 */
                       top;
    dnnl_binary_desc_t d;
    dnnl_status_t st = dnnl_binary_desc_init(&d, dnnl_binary_add, &a, &b, &any);
    if (st != dnnl_success)
        return cpu_fail(st, "binary add desc", err, errlen);
    prims *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    bool relu = l->p.add.relu;
    dnnl_post_ops_t po = NULL;
    int rc = 0;
    if (relu && (dnnl_post_ops_create(&po) != dnnl_success ||
                 dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0, 0) != dnnl_success))
        rc = -DLG_ENOMEM;
    if (!rc)
        rc = cpu_prim_create_po(ctx, &s->fwd, &d, NULL, po, err, errlen);
    if (po)
        dnnl_post_ops_destroy(po);
    if (!rc) {
        top = cpu_publish(l->top[0], &s->top_md,
                          dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_dst_md, 0));
        int fa[3] = {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST};
        const dnnl_memory_desc_t *fm[3] = {&a, &b, &top};
        rc = args(ctx, &s->fwd, fa, fm, 3, 1, err, errlen);
    }
    /* backward: each input's gradient is the output's, in its layout; with
     * a folded ReLU, the first is the ReLU's gradient (from the output) and
     * the second a copy of it */
    bool down0 = l->backward && l->prop_down[0], down1 = l->backward && l->prop_down[1];
    if (!rc && l->ntop_parts && (down0 || down1))
        rc = parts_setup(ctx, l, s, &top, &a, &b, err, errlen);
    else if (!rc && relu && (down0 || down1))
        rc = cpu_relu_bwd(ctx, &s->bwd, &top, &top, down0 ? &a : &b, err, errlen);
    else if (!rc && down0)
        rc = cpu_sum_prim(ctx, &s->bwd, &a, 1, &top, err, errlen);
    if (!rc && down1 && !l->ntop_parts)
        rc = relu && down0 ? cpu_sum_prim(ctx, &s->bwd2, &b, 1, &a, err, errlen)
                           : relu ? 0 : cpu_sum_prim(ctx, &s->bwd2, &b, 1, &top, err, errlen);
    if (rc) {
        l->top[0]->layout = NULL;
        prims_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = prims_ws(s);
    return 0;
}

static int add_forward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[3] = {l->bottom[0]->data, l->bottom[1]->data, l->top[0]->data};
    return cpu_prim_exec(ctx, &((prims *)state)->fwd, ptrs, l->ws);
}

/* With a folded split: see parts_setup. */
static int add_parts_backward(cpu_ctx *c, dlg_layer *l, prims *s)
{
    float *dx0 = l->prop_down[0] ? l->bottom[0]->diff : NULL;
    float *dx1 = l->prop_down[1] ? l->bottom[1]->diff : NULL;
    const float *y = l->p.add.relu ? l->top[0]->data : NULL;
    if (s->one_pass) {
        if (s->one_pass_bf16)
            cpu_grad_sum_bf16((uint16_t *)dx0, (uint16_t *)dx1, l->top_parts, l->ntop_parts,
                              (const uint16_t *)y, s->one_pass);
        else
            cpu_grad_sum(dx0, dx1, l->top_parts, l->ntop_parts, y, s->one_pass);
        return 0;
    }
    void *sum[CPU_MAX_ARGS + 1];
    for (int p = 0; p < l->ntop_parts; p++)
        sum[p] = l->top_parts[p]->diff;
    float *x = dx0 ? dx0 : dx1;
    sum[l->ntop_parts] = x;
    void *relu[3] = {l->top[0]->data, x, x}, *copy[2] = {dx0, dx1};
    int rc = cpu_prim_exec(c, &s->bwd, sum, l->ws);
    if (!rc && y)
        rc = cpu_prim_exec(c, &s->bwd3, relu, l->ws);
    if (!rc && dx0 && dx1)
        rc = cpu_prim_exec(c, &s->bwd2, copy, l->ws);
    return rc;
}

static int add_backward(void *ctx, dlg_layer *l, void *state)
{
    prims *s = state;
    int rc = 0;
    if (l->ntop_parts)
        return add_parts_backward(ctx, l, s);
    if (l->p.add.relu) { /* relu into the first input's gradient, copied to the second */
        int first = l->prop_down[0] ? 0 : 1;
        void *r[3] = {l->top[0]->data, l->top[0]->diff, l->bottom[first]->diff};
        void *b[2] = {l->bottom[0]->diff, l->bottom[1]->diff};
        rc = cpu_prim_exec(ctx, &s->bwd, r, l->ws);
        if (!rc && first == 0 && l->prop_down[1])
            rc = cpu_prim_exec(ctx, &s->bwd2, b, l->ws);
        return rc;
    }
    void *a[2] = {l->top[0]->diff, l->bottom[0]->diff},
         *b[2] = {l->top[0]->diff, l->bottom[1]->diff};
    if (l->prop_down[0])
        rc = cpu_prim_exec(ctx, &s->bwd, a, l->ws);
    if (!rc && l->prop_down[1])
        rc = cpu_prim_exec(ctx, &s->bwd2, b, l->ws);
    return rc;
}

static const char *add_impl(const void *state)
{
    const prims *s = state;
    if (!s->parts)
        return NULL;
    return s->one_pass ? "binary; backward sums the split's gradients in one pass"
                       : "binary; backward sums the split's gradients by oneDNN (layouts differ)";
}

/* Only a folded ReLU's backward reads the output. */
static bool add_bwd_reads_top(const dlg_layer *l) { return l->p.add.relu; }

const dlg_kernels dlg_cpu_add = {.setup = add_setup,
                                 .forward = add_forward,
                                 .backward = add_backward,
                                 .destroy = prims_destroy,
                                 .any_layout = true,
                                 .fuses_relu = true,
                                 .sums_top_parts = true,
                                 .bwd_no_bottom_data = true,
                                 .bwd_no_top_data = true,
                                 .bwd_reads_top = add_bwd_reads_top,
                                 .impl = add_impl};

/* Split outputs alias the input (same data, same layout); backward sums
 * their gradients. */
static bool split_accepts(const dlg_layer *l) { return l->ntop < CPU_MAX_ARGS; }

static int split_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                       size_t errlen)
{
    const dlg_tensor *x = l->bottom[0];
    for (int t = 0; t < l->ntop; t++) {
        l->top[t]->layout = x->layout;
        l->top[t]->alloc_count = x->alloc_count;
    }
    prims *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int rc = 0;
    if (l->backward && l->prop_down[0]) {
        dnnl_memory_desc_t md[CPU_MAX_ARGS];
        for (int t = 0; t < l->ntop; t++)
            md[t] = cpu_tensor_md(x);
        rc = cpu_sum_prim(ctx, &s->bwd, &md[0], l->ntop, md, err, errlen);
    }
    if (rc) {
        prims_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = prims_ws(s);
    return 0;
}

static int split_forward(void *ctx, dlg_layer *l, void *state) { return 0; }

static int split_backward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[CPU_MAX_ARGS + 1];
    for (int t = 0; t < l->ntop; t++)
        ptrs[t] = l->top[t]->diff;
    ptrs[l->ntop] = l->bottom[0]->diff;
    return cpu_prim_exec(ctx, &((prims *)state)->bwd, ptrs, l->ws);
}

const dlg_kernels dlg_cpu_split = {.setup = split_setup,
                                   .forward = split_forward,
                                   .backward = split_backward,
                                   .destroy = prims_destroy,
                                   .accepts = split_accepts,
                                   .any_layout = true,
                                   .bwd_no_bottom_data = true,
                                   .bwd_no_top_data = true};
