/* oneDNN concatenation along channels in any layout (GoogLeNet's inception
 * outputs stay blocked); backward reorders channel slices of the output
 * gradient into each input's layout. */
#include "cpu.h"

#include <stdlib.h>

typedef struct concat_state {
    cpu_prim fwd;
    cpu_prim bwd[CPU_MAX_ARGS];
    int n;
    dnnl_memory_desc_t top_md;
} concat_state;

static void concat_destroy(void *ctx, void *state)
{
    concat_state *s = state;
    cpu_prim_destroy(&s->fwd);
    for (int i = 0; i < s->n; i++)
        cpu_prim_destroy(&s->bwd[i]);
    free(s);
}

/* Slices of a blocked layout must start on a block: channel offsets that
 * are multiples of 16 suit every block size oneDNN uses for fp32. */
static bool concat_accepts(const dlg_layer *l)
{
    if (l->nbottom >= CPU_MAX_ARGS || l->top[0]->shape.ndim != 4)
        return false;
    for (int i = 0; i < l->nbottom; i++)
        if (l->bottom[i]->shape.d[1] % 16)
            return false;
    return true;
}

static int slice(cpu_ctx *c, const dlg_layer *l, concat_state *s, int i, int64_t off,
                 const dnnl_memory_desc_t *top, char *err, size_t errlen)
{
    const dlg_shape *sh = &l->bottom[i]->shape;
    dnnl_dims_t dims = {sh->d[0], sh->d[1], sh->d[2], sh->d[3]}, offs = {0, off, 0, 0};
    dnnl_memory_desc_t sub, dst = cpu_tensor_md(l->bottom[i]);
    dnnl_status_t st = dnnl_memory_desc_init_submemory(&sub, top, dims, offs);
    dnnl_primitive_attr_t attr = cpu_attr();
    dnnl_primitive_desc_t pd;
    if (st == dnnl_success)
        st = attr ? dnnl_reorder_primitive_desc_create(&pd, &sub, c->eng, &dst, c->eng, attr)
                  : dnnl_out_of_memory;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return cpu_fail(st, "concat backward slice", err, errlen);
    int rc = cpu_prim_from_pd(c, &s->bwd[i], pd, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, &s->bwd[i], DNNL_ARG_FROM, &sub, false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, &s->bwd[i], DNNL_ARG_TO, &dst, true, err, errlen);
    return rc;
}

static int concat_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                        size_t errlen)
{
    cpu_ctx *c = ctx;
    dnnl_memory_desc_t src[CPU_MAX_ARGS], top;
    for (int i = 0; i < l->nbottom; i++)
        src[i] = cpu_tensor_md(l->bottom[i]);
    concat_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    dnnl_primitive_attr_t attr = cpu_attr();
    dnnl_primitive_desc_t pd;
    dnnl_status_t st =
        attr ? dnnl_concat_primitive_desc_create(&pd, NULL, l->nbottom, 1, src, attr, c->eng)
             : dnnl_out_of_memory;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    int rc = st != dnnl_success ? cpu_fail(st, "concat", err, errlen)
                                : cpu_prim_from_pd(c, &s->fwd, pd, err, errlen);
    if (!rc)
        top = cpu_publish(l->top[0], &s->top_md,
                          dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_dst_md, 0));
    for (int i = 0; i < l->nbottom && !rc; i++)
        rc = cpu_prim_arg(c, &s->fwd, DNNL_ARG_MULTIPLE_SRC + i, &src[i], false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, &s->fwd, DNNL_ARG_DST, &top, true, err, errlen);
    int64_t off = 0;
    for (int i = 0; i < l->nbottom && !rc; i++) {
        if (l->backward && l->prop_down[i])
            rc = slice(c, l, s, i, off, &top, err, errlen);
        off += l->bottom[i]->shape.d[1];
    }
    s->n = l->nbottom;
    if (rc) {
        l->top[0]->layout = NULL;
        concat_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = s->fwd.ws;
    for (int i = 0; i < s->n; i++)
        *ws = s->bwd[i].ws > *ws ? s->bwd[i].ws : *ws;
    return 0;
}

static int concat_forward(void *ctx, dlg_layer *l, void *state)
{
    void *ptrs[CPU_MAX_ARGS + 1];
    for (int i = 0; i < l->nbottom; i++)
        ptrs[i] = l->bottom[i]->data;
    ptrs[l->nbottom] = l->top[0]->data;
    return cpu_prim_exec(ctx, &((concat_state *)state)->fwd, ptrs, l->ws);
}

static int concat_backward(void *ctx, dlg_layer *l, void *state)
{
    concat_state *s = state;
    int rc = 0;
    for (int i = 0; i < l->nbottom && !rc; i++)
        if (l->prop_down[i]) {
            void *ptrs[2] = {l->top[0]->diff, l->bottom[i]->diff};
            rc = cpu_prim_exec(ctx, &s->bwd[i], ptrs, l->ws);
        }
    return rc;
}

const dlg_kernels dlg_cpu_concat = {.setup = concat_setup,
                                    .forward = concat_forward,
                                    .backward = concat_backward,
                                    .destroy = concat_destroy,
                                    .accepts = concat_accepts,
                                    .any_layout = true,
                                    .bwd_no_bottom_data = true,
                                    .bwd_no_top_data = true};
