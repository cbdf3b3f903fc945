/* oneDNN ReLU (eltwise) and softmax over channels, plain layouts. */
#include "cpu.h"

#include <stdlib.h>

typedef struct two_prims {
    cpu_prim fwd, bwd;
} two_prims;

static void two_destroy(void *ctx, void *state)
{
    two_prims *s = state;
    cpu_prim_destroy(&s->fwd);
    cpu_prim_destroy(&s->bwd);
    free(s);
}

/* Creates fwd (args fa, last one the output) and optionally bwd (args ba,
 * last one the output) from op descriptors. */
static int make(cpu_ctx *c, const void *fd, const int *fa, int nf, const void *bd, const int *ba,
                int nb, void **state, size_t *ws, char *err, size_t errlen)
{
    two_prims *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    int rc = cpu_prim_create(c, &s->fwd, fd, NULL, err, errlen);
    for (int i = 0; i < nf && !rc; i++)
        rc = cpu_prim_arg(c, &s->fwd, fa[i], NULL, i == nf - 1, err, errlen);
    if (!rc && bd)
        rc = cpu_prim_create(c, &s->bwd, bd, s->fwd.pd, err, errlen);
    for (int i = 0; bd && i < nb && !rc; i++)
        rc = cpu_prim_arg(c, &s->bwd, ba[i], NULL, i == nb - 1, err, errlen);
    if (rc) {
        two_destroy(c, s);
        return rc;
    }
    *state = s;
    *ws = s->fwd.ws > s->bwd.ws ? s->fwd.ws : s->bwd.ws;
    return 0;
}

static int relu_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    /* element-wise: a flat view of any shape */
    dnnl_memory_desc_t md = cpu_md(1, &l->bottom[0]->count, dnnl_x);
    dnnl_eltwise_desc_t fd, bd;
    bool bwd = l->backward && l->prop_down[0];
    dnnl_status_t st = dnnl_eltwise_forward_desc_init(
        &fd, bwd ? dnnl_forward_training : dnnl_forward_inference, dnnl_eltwise_relu, &md, 0, 0);
    if (st == dnnl_success && bwd)
        st = dnnl_eltwise_backward_desc_init(&bd, dnnl_eltwise_relu, &md, &md, 0, 0);
    if (st != dnnl_success)
        return cpu_fail(st, "eltwise desc", err, errlen);
    int fa[2] = {DNNL_ARG_SRC, DNNL_ARG_DST};
    int ba[3] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    return make(ctx, &fd, fa, 2, bwd ? &bd : NULL, ba, 3, state, ws, err, errlen);
}

static int relu_forward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[2] = {l->bottom[0]->data, l->top[0]->data};
    return cpu_prim_exec(ctx, &((two_prims *)state)->fwd, ptrs, l->ws);
}

static int relu_backward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[3] = {l->bottom[0]->data, l->top[0]->diff, l->bottom[0]->diff};
    return cpu_prim_exec(ctx, &((two_prims *)state)->bwd, ptrs, l->ws);
}

const dlg_kernels dlg_cpu_relu = {relu_setup, relu_forward, relu_backward, two_destroy};

static int softmax_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                         size_t errlen)
{
    if (l->bottom[0]->shape.ndim != 4)
        return -DLG_ENOTSUP;
    dnnl_memory_desc_t md = cpu_md(4, l->bottom[0]->shape.d, dnnl_nchw);
    dnnl_softmax_desc_t fd, bd;
    bool bwd = l->backward && l->prop_down[0];
    dnnl_status_t st = dnnl_softmax_forward_desc_init(
        &fd, bwd ? dnnl_forward_training : dnnl_forward_inference, &md, 1);
    if (st == dnnl_success && bwd)
        st = dnnl_softmax_backward_desc_init(&bd, &md, &md, 1);
    if (st != dnnl_success)
        return cpu_fail(st, "softmax desc", err, errlen);
    int fa[2] = {DNNL_ARG_SRC, DNNL_ARG_DST};
    int ba[3] = {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    return make(ctx, &fd, fa, 2, bwd ? &bd : NULL, ba, 3, state, ws, err, errlen);
}

static int softmax_forward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[2] = {l->bottom[0]->data, l->top[0]->data};
    return cpu_prim_exec(ctx, &((two_prims *)state)->fwd, ptrs, l->ws);
}

static int softmax_backward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[3] = {l->top[0]->data, l->top[0]->diff, l->bottom[0]->diff};
    return cpu_prim_exec(ctx, &((two_prims *)state)->bwd, ptrs, l->ws);
}

const dlg_kernels dlg_cpu_softmax = {softmax_setup, softmax_forward, softmax_backward, two_destroy};
