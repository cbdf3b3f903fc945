/* See cpu_bn_residual.h. */
#include "cpu_bn_residual.h"
#include "cpu_grad_sum.h"

#include <string.h>

int cpu_bn_res_setup(cpu_ctx *c, const dlg_layer *l, cpu_bn_res *r, const dnnl_memory_desc_t *top, bool one_pass,
                     char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->one_pass = one_pass;
    r->count = l->top[0]->count;
    dnnl_memory_desc_t res = cpu_tensor_md(l->bottom[1]);
    bool relu = l->p.bn.relu, down = l->backward && l->prop_down[1];
    int rc = 0;
    { /* one_pass too: an eval forward (set_train false) runs oneDNN's inference */
        dnnl_binary_desc_t d;
        dnnl_post_ops_t po = NULL;
        dnnl_status_t st = dnnl_binary_desc_init(&d, dnnl_binary_add, top, &res, top);
        if (st == dnnl_success && relu && (st = dnnl_post_ops_create(&po)) == dnnl_success)
            st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
        rc = st != dnnl_success ? cpu_fail(st, "residual add desc", err, errlen)
                                : cpu_prim_create_po(c, &r->add, &d, NULL, po, err, errlen);
        if (po)
            dnnl_post_ops_destroy(po);
        const dnnl_memory_desc_t *am[3] = {top, &res, top};
        int aa[3] = {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST};
        for (int i = 0; i < 3 && !rc; i++)
            rc = cpu_prim_arg(c, &r->add, aa[i], am[i], i == 2, err, errlen);
    }
    if (!l->backward)
        return rc;
    /* g: r's gradient where it has the output's layout and one pass writes
     * it; the output's own where there is no split and no one else needs
     * it; else the workspace */
    bool g_in_res = one_pass && down, g_own = !one_pass && !l->ntop_parts;
    if (!g_in_res && !g_own)
        r->g_bytes = CPU_ALIGN(dnnl_memory_desc_get_size(top));
    if (!rc && !one_pass && l->ntop_parts) {
        dnnl_memory_desc_t parts[CPU_MAX_ARGS];
        for (int p = 0; p < l->ntop_parts && p < CPU_MAX_ARGS; p++)
            parts[p] = *top;
        rc = l->ntop_parts > CPU_MAX_ARGS ? -DLG_ENOTSUP : cpu_sum_prim(c, &r->sum, top, l->ntop_parts, parts, err, errlen);
    }
    if (!rc && !one_pass && relu)
        rc = cpu_relu_bwd(c, &r->mask, top, top, top, err, errlen);
    if (!rc && !one_pass && down)
        rc = cpu_sum_prim(c, &r->copy, &res, 1, top, err, errlen);
    return rc;
}

size_t cpu_bn_res_ws(const cpu_bn_res *r)
{
    size_t w = r->add.ws;
    size_t b = r->sum.ws > r->mask.ws ? r->sum.ws : r->mask.ws;
    b = r->copy.ws > b ? r->copy.ws : b;
    return r->g_bytes + b > w ? r->g_bytes + b : w;
}

int cpu_bn_res_fwd(cpu_ctx *c, const dlg_layer *l, cpu_bn_res *r)
{
    void *ptrs[3] = {l->top[0]->data, l->bottom[1]->data, l->top[0]->data};
    return cpu_prim_exec(c, &r->add, ptrs, l->ws);
}

int cpu_bn_res_bwd(cpu_ctx *c, dlg_layer *l, cpu_bn_res *r, void **g, void **rest)
{
    char *ws = l->ws;
    bool down = l->prop_down[1];
    *rest = ws + r->g_bytes;
    if (r->one_pass) {
        dlg_tensor *own[1] = {l->top[0]};
        *g = down ? l->bottom[1]->diff : (void *)ws;
        cpu_grad_sum_bf16(*g, NULL, l->ntop_parts ? l->top_parts : own, l->ntop_parts ? l->ntop_parts : 1,
                          l->p.bn.relu ? l->top[0]->data : NULL, r->count);
        return 0;
    }
    int rc = 0;
    if (l->ntop_parts) {
        void *sum[CPU_MAX_ARGS + 1];
        for (int p = 0; p < l->ntop_parts; p++)
            sum[p] = l->top_parts[p]->diff;
        sum[l->ntop_parts] = ws;
        *g = ws;
        rc = cpu_prim_exec(c, &r->sum, sum, *rest);
    } else {
        *g = l->top[0]->diff; /* only this layer's to read: masked in place */
    }
    void *mask[3] = {l->top[0]->data, *g, *g}, *copy[2] = {*g, down ? l->bottom[1]->diff : NULL};
    if (!rc && r->mask.p)
        rc = cpu_prim_exec(c, &r->mask, mask, *rest);
    if (!rc && down)
        rc = cpu_prim_exec(c, &r->copy, copy, *rest);
    return rc;
}

void cpu_bn_res_destroy(cpu_bn_res *r)
{
    cpu_prim_destroy(&r->add);
    cpu_prim_destroy(&r->sum);
    cpu_prim_destroy(&r->mask);
    cpu_prim_destroy(&r->copy);
}
