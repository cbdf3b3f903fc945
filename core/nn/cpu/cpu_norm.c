/* oneDNN batch normalization with scale and shift (Caffe BatchNorm +
 * Scale), plain NCHW.  Running statistics are updated here, the same way
 * as the reference backend does.  cpu-bf16 trains on channels-last bf16
 * activations with cpu_bn_bf16.c instead (twice oneDNN 2.6's speed there). */
#include "cpu.h"
#include "cpu_bn_bf16.h"
#include "cpu_bn_residual.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct bn_state {
    cpu_prim train, infer, bwd;
    /* cpu_bn_bf16.c trains this layer: its shape, the batch statistics
     * (forward -> backward), none of train/bwd */
    bool nhwc_bf16;
    cpu_bn_shape shape;
    float *stats; /* mean, then var: 2 x C */
    dnnl_memory_t mean, var; /* batch statistics: forward -> backward */
    dnnl_memory_t relu_ws;   /* a fused ReLU's mask: forward -> backward */
    /* oneDNN's backward always writes the scale and shift gradients: where
     * the net wants none (both frozen), they go here */
    float *spare;
    dnnl_memory_desc_t top_md;
    cpu_bn_res res; /* dlg_bn_param.residual */
} bn_state;

static void bn_destroy(void *ctx, void *state)
{
    bn_state *s = state;
    cpu_prim_destroy(&s->train);
    cpu_prim_destroy(&s->infer);
    cpu_prim_destroy(&s->bwd);
    cpu_bn_res_destroy(&s->res);
    if (s->mean)
        dnnl_memory_destroy(s->mean);
    if (s->var)
        dnnl_memory_destroy(s->var);
    if (s->relu_ws)
        dnnl_memory_destroy(s->relu_ws);
    free(s->spare);
    free(s->stats);
    free(s);
}

/* Adds args; user layouts: `src` for SRC/DIFF_SRC, `dst` for DST and
 * DIFF_DST, the primitive's own for statistics and scale/shift. */
static int add_args(cpu_ctx *c, cpu_prim *p, const int *args, int n, int nout,
                    const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst, char *err,
                    size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        const dnnl_memory_desc_t *md = NULL;
        if (args[i] == DNNL_ARG_SRC || args[i] == DNNL_ARG_DIFF_SRC)
            md = src;
        else if (args[i] == DNNL_ARG_DST || args[i] == DNNL_ARG_DIFF_DST)
            md = dst;
        rc = cpu_prim_arg(c, p, args[i], md, i >= n - nout, err, errlen);
    }
    return rc;
}

/* oneDNN's backward computes the input gradient unconditionally. */
static bool bn_accepts(const dlg_layer *l) { return !l->backward || l->prop_down[0]; }

/* Batch statistics forward (a training plan, with or without backward:
 * layers before it may all be frozen), its statistics and ReLU mask kept
 * for backward. */
static int setup_train(cpu_ctx *c, const dlg_layer *l, bn_state *s, const dnnl_memory_desc_t *md,
                       const dnnl_memory_desc_t *top, unsigned flags, char *err, size_t errlen)
{
    dnnl_batch_normalization_desc_t d;
    dnnl_status_t st =
        dnnl_batch_normalization_forward_desc_init(&d, dnnl_forward_training, md, l->p.bn.eps, flags);
    int rc = st != dnnl_success ? cpu_fail(st, "batch norm training desc", err, errlen)
                                : cpu_prim_create(c, &s->train, &d, NULL, err, errlen);
    const dnnl_memory_desc_t *smd =
        rc ? NULL : dnnl_primitive_desc_query_md(s->train.pd, dnnl_query_exec_arg_md, DNNL_ARG_MEAN);
    if (!rc && (dnnl_memory_create(&s->mean, smd, c->eng, DNNL_MEMORY_ALLOCATE) ||
                dnnl_memory_create(&s->var, smd, c->eng, DNNL_MEMORY_ALLOCATE)))
        rc = -DLG_ENOMEM;
    int ta[4] = {DNNL_ARG_SRC, DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_DST};
    if (!rc)
        rc = add_args(c, &s->train, ta, 4, 1, md, top, err, errlen);
    if (!rc)
        rc = cpu_prim_fixed(&s->train, DNNL_ARG_MEAN, s->mean);
    if (!rc)
        rc = cpu_prim_fixed(&s->train, DNNL_ARG_VARIANCE, s->var);
    if (!rc && l->p.bn.relu) {
        const dnnl_memory_desc_t *wmd =
            dnnl_primitive_desc_query_md(s->train.pd, dnnl_query_exec_arg_md, DNNL_ARG_WORKSPACE);
        if (dnnl_memory_create(&s->relu_ws, wmd, c->eng, DNNL_MEMORY_ALLOCATE))
            rc = -DLG_ENOMEM;
        if (!rc)
            rc = cpu_prim_fixed(&s->train, DNNL_ARG_WORKSPACE, s->relu_ws);
    }
    return rc;
}

/* Backward from the training forward's statistics; scale and shift
 * gradients into spare memory when the net wants none. */
static int setup_bwd(cpu_ctx *c, const dlg_layer *l, bn_state *s, const dnnl_memory_desc_t *md,
                     const dnnl_memory_desc_t *top, unsigned flags, char *err, size_t errlen)
{
    dnnl_batch_normalization_desc_t d;
    dnnl_status_t st =
        dnnl_batch_normalization_backward_desc_init(&d, dnnl_backward, md, md, l->p.bn.eps, flags);
    int rc = st != dnnl_success ? cpu_fail(st, "batch norm backward desc", err, errlen)
                                : cpu_prim_create(c, &s->bwd, &d, s->train.pd, err, errlen);
    /* oneDNN 2.6 wants SHIFT as an input of backward with use_shift
     * (oneDNN issue #1717), though the result does not depend on it */
    int ba[7] = {DNNL_ARG_SRC,      DNNL_ARG_DIFF_DST,   DNNL_ARG_SCALE,     DNNL_ARG_SHIFT,
                 DNNL_ARG_DIFF_SRC, DNNL_ARG_DIFF_SCALE, DNNL_ARG_DIFF_SHIFT};
    if (!rc)
        rc = add_args(c, &s->bwd, ba, 7, 3, md, top, err, errlen);
    if (!rc)
        rc = cpu_prim_fixed(&s->bwd, DNNL_ARG_MEAN, s->mean);
    if (!rc)
        rc = cpu_prim_fixed(&s->bwd, DNNL_ARG_VARIANCE, s->var);
    if (!rc && s->relu_ws)
        rc = cpu_prim_fixed(&s->bwd, DNNL_ARG_WORKSPACE, s->relu_ws);
    if (!rc && !l->param_grad &&
        !(s->spare = calloc(2 * (size_t)l->param[0]->count, sizeof(float))))
        rc = -DLG_ENOMEM;
    return rc;
}

/* cpu_bn_bf16.c's case: training on bf16 nhwc in and out. */
static bool nhwc_bf16(const cpu_ctx *c, const dlg_layer *l, const dnnl_memory_desc_t *md,
                      const dnnl_memory_desc_t *top)
{
    const dlg_shape *sh = &l->bottom[0]->shape;
    if (!c->bf16 || !(l->train || l->backward) || sh->ndim != 4)
        return false;
    dnnl_memory_desc_t want = cpu_md_dt(4, sh->d, dnnl_acdb, dnnl_bf16);
    if (!dnnl_memory_desc_equal(md, &want) || !dnnl_memory_desc_equal(top, &want))
        return false;
    dnnl_memory_desc_t res = l->p.bn.residual ? cpu_tensor_md(l->bottom[1]) : want; /* cpu_grad_sum_bf16's */
    return dnnl_memory_desc_equal(&res, &want);
}

static int setup_nhwc_bf16(const cpu_ctx *c, const dlg_layer *l, bn_state *s)
{
    const dlg_shape *sh = &l->bottom[0]->shape;
    s->nhwc_bf16 = true;
    s->shape = (cpu_bn_shape){.rows = sh->d[0] * sh->d[2] * sh->d[3],
                              .C = sh->d[1],
                              .eps = l->p.bn.eps,
                              .relu = l->p.bn.relu,
                              .threads = cpu_team_size(c)};
    if (!(s->stats = calloc(2 * (size_t)sh->d[1], sizeof(float))))
        return -DLG_ENOMEM;
    if (l->backward && !l->param_grad && !(s->spare = calloc(2 * (size_t)sh->d[1], sizeof(float))))
        return -DLG_ENOMEM;
    return 0;
}

static int bn_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                    size_t errlen)
{
    cpu_ctx *c = ctx;
    if (!bn_accepts(l)) {
        snprintf(err, errlen, "backward without an input gradient");
        return -DLG_ENOTSUP;
    }
    /* with a residual the ReLU follows the add (cpu_bn_residual.h) */
    bool relu = l->p.bn.relu && !l->p.bn.residual;
    unsigned flags = dnnl_use_scale | dnnl_use_shift | (relu ? dnnl_fuse_norm_relu : 0);
    dnnl_memory_desc_t md = cpu_tensor_md(l->bottom[0]);
    bn_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    dnnl_memory_desc_t top = cpu_publish(l->top[0], &s->top_md, &md);
    dnnl_batch_normalization_desc_t d;
    dnnl_status_t st = dnnl_batch_normalization_forward_desc_init(
        &d, dnnl_forward_inference, &md, l->p.bn.eps, flags | dnnl_use_global_stats);
    int rc = st != dnnl_success ? cpu_fail(st, "batch norm desc", err, errlen)
                                : cpu_prim_create(c, &s->infer, &d, NULL, err, errlen);
    int ia[6] = {DNNL_ARG_SRC,   DNNL_ARG_MEAN,  DNNL_ARG_VARIANCE,
                 DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_DST};
    if (!rc)
        rc = add_args(c, &s->infer, ia, 6, 1, &md, &top, err, errlen);
    /* l->train: planned for training (set_train(true) refuses other nets) */
    if (!rc && nhwc_bf16(c, l, &md, &top))
        rc = setup_nhwc_bf16(c, l, s);
    else if (!rc && (l->train || l->backward))
        rc = setup_train(c, l, s, &md, &top, flags, err, errlen);
    if (!rc && l->backward && !s->nhwc_bf16)
        rc = setup_bwd(c, l, s, &md, &top, flags, err, errlen);
    if (!rc && l->p.bn.residual)
        rc = cpu_bn_res_setup(c, l, &s->res, &top, s->nhwc_bf16, err, errlen);
    if (rc) {
        l->top[0]->layout = NULL;
        bn_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = s->infer.ws;
    *ws = s->train.ws > *ws ? s->train.ws : *ws;
    *ws = s->bwd.ws > *ws ? s->bwd.ws : *ws;
    if (s->nhwc_bf16) {
        size_t need = cpu_bn_bf16_scratch(&s->shape);
        *ws = need > *ws ? need : *ws;
    }
    if (l->p.bn.residual) { /* backward's g first, then the batch norm's own */
        size_t need = s->res.g_bytes + *ws, add = cpu_bn_res_ws(&s->res);
        *ws = need > add ? need : add;
    }
    return 0;
}

static int bn_forward(void *ctx, dlg_layer *l, void *state)
{
    bn_state *s = state;
    void *x = l->bottom[0]->data, *y = l->top[0]->data, *g = l->param[0]->data,
         *b = l->param[1]->data;
    float *rm = l->param[2]->data, *rv = l->param[3]->data;
    bool residual = l->p.bn.residual;
    if (!l->train) {
        void *ptrs[6] = {x, rm, rv, g, b, y};
        int rc = cpu_prim_exec(ctx, &s->infer, ptrs, l->ws);
        return rc || !residual ? rc : cpu_bn_res_fwd(ctx, l, &s->res);
    }
    float *mean, *var;
    if (s->nhwc_bf16) {
        mean = s->stats;
        var = s->stats + s->shape.C;
        cpu_bn_bf16_fwd(&s->shape, x, y, g, b, residual ? l->bottom[1]->data : NULL, mean, var, l->ws);
    } else {
        if (!s->train.p)
            return -DLG_EINTERNAL; /* set_train(true) refuses nets planned for inference */
        void *ptrs[4] = {x, g, b, y};
        int rc = cpu_prim_exec(ctx, &s->train, ptrs, l->ws);
        if (!rc && residual)
            rc = cpu_bn_res_fwd(ctx, l, &s->res);
        if (rc)
            return rc;
        dnnl_memory_get_data_handle(s->mean, (void **)&mean);
        dnnl_memory_get_data_handle(s->var, (void **)&var);
    }
    const dlg_shape *sh = &l->bottom[0]->shape;
    double m = l->p.bn.momentum, M = (double)(sh->d[0] * sh->d[2] * sh->d[3]);
    for (int64_t c = 0; c < sh->d[1]; c++) {
        rm[c] = (float)((1 - m) * rm[c] + m * mean[c]);
        rv[c] = (float)((1 - m) * rv[c] + m * var[c] * (M > 1 ? M / (M - 1) : 1.0));
    }
    return 0;
}

static int bn_backward(void *ctx, dlg_layer *l, void *state)
{
    bn_state *s = state;
    if (!l->train)
        return -DLG_ENOTSUP; /* backward needs the batch statistics */
    float *dg = s->spare ? s->spare : l->param[0]->diff,
          *db = s->spare ? s->spare + l->param[0]->count : l->param[1]->diff;
    void *dy = l->top[0]->diff, *ws = l->ws;
    if (l->p.bn.residual) { /* the add's backward first: dy masked (and summed), r's gradient */
        int rc = cpu_bn_res_bwd(ctx, l, &s->res, &dy, &ws);
        if (rc)
            return rc;
    }
    if (s->nhwc_bf16) {
        cpu_bn_shape sh = s->shape;
        sh.relu &= !l->p.bn.residual; /* the residual's ReLU: already in dy */
        cpu_bn_bf16_bwd(&sh, l->bottom[0]->data, dy, l->bottom[0]->diff, l->param[0]->data, l->param[1]->data,
                        s->stats, s->stats + s->shape.C, dg, db, ws);
        return 0;
    }
    void *ptrs[7] = {l->bottom[0]->data, dy, l->param[0]->data, l->param[1]->data, l->bottom[0]->diff, dg, db};
    return cpu_prim_exec(ctx, &s->bwd, ptrs, ws);
}

static const char *bn_impl(const void *state)
{
    const bn_state *s = state;
    bool res = s->res.count > 0;
    return s->nhwc_bf16 ? (res ? "cpu_bn_bf16 (nhwc training), residual add folded in" : "cpu_bn_bf16 (nhwc training)")
                        : (res ? "oneDNN, residual add folded in (by oneDNN binary)" : NULL);
}

/* A fused ReLU's mask is recomputed from x, but after a residual add it
 * is the output's (cpu_bn_residual.h). */
static bool bn_bwd_reads_top(const dlg_layer *l) { return l->p.bn.residual && l->p.bn.relu; }

/* backward reads x, the statistics and a fused ReLU's mask, never y but
 * for a residual's mask (bn_bwd_reads_top) */
#define BN_KERNELS                                                                                           \
    .setup = bn_setup, .impl = bn_impl, .forward = bn_forward, .backward = bn_backward, .destroy = bn_destroy, \
    .accepts = bn_accepts, .any_layout = true, .bwd_no_top_data = true, .bwd_reads_top = bn_bwd_reads_top,    \
    .fuses_relu = true

const dlg_kernels dlg_cpu_bn = {BN_KERNELS};
/* cpu-bf16's: a training plan folds a residual add into it too (the fp32
 * backend's oneDNN batch norm would only run the add after it: nothing
 * saved) */
const dlg_kernels dlg_cpu_bn_bf16 = {BN_KERNELS, .fuses_residual = true};
