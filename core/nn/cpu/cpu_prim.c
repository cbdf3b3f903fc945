/* Creating and executing oneDNN primitives with layout reorders. */
#include "cpu.h"

#include <oneapi/dnnl/dnnl_debug.h>
#include <stdio.h>
#include <string.h>

int cpu_fail(dnnl_status_t st, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "oneDNN %s: %s", what, dnnl_status2str(st));
    /* unimplemented: the net falls back to the reference kernel */
    return st == dnnl_unimplemented ? -DLG_ENOTSUP : -DLG_EINTERNAL;
}

const char *cpu_impl_name(const_dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    return pd && dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl ? impl
                                                                                                          : "";
}

dnnl_memory_desc_t cpu_md_dt(int ndims, const int64_t *dims, dnnl_format_tag_t tag, dnnl_data_type_t dt)
{
    dnnl_memory_desc_t md;
    dnnl_dims_t d;
    for (int i = 0; i < ndims; i++)
        d[i] = dims[i];
    if (dnnl_memory_desc_init_by_tag(&md, ndims, d, dt, tag) != dnnl_success)
        memset(&md, 0, sizeof md);
    return md;
}

dnnl_memory_desc_t cpu_md(int ndims, const int64_t *dims, dnnl_format_tag_t tag)
{
    return cpu_md_dt(ndims, dims, tag, dnnl_f32);
}

dnnl_data_type_t cpu_act_dt(const cpu_ctx *c) { return c->bf16 ? dnnl_bf16 : dnnl_f32; }

dnnl_memory_desc_t cpu_plain_md(const dlg_tensor *t)
{
    static const dnnl_format_tag_t tags[6] = {
        dnnl_format_tag_undef, dnnl_x, dnnl_nc, dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
    return cpu_md(t->shape.ndim, t->shape.d, tags[t->shape.ndim]);
}

dnnl_memory_desc_t cpu_tensor_md(const dlg_tensor *t)
{
    return t->layout ? *(const dnnl_memory_desc_t *)t->layout : cpu_plain_md(t);
}

dnnl_memory_desc_t cpu_publish(dlg_tensor *t, dnnl_memory_desc_t *store,
                               const dnnl_memory_desc_t *md)
{
    dnnl_memory_desc_t plain = cpu_plain_md(t);
    t->layout = NULL;
    t->alloc_count = t->count;
    if (!t->opaque_ok || dnnl_memory_desc_equal(md, &plain))
        return plain;
    *store = *md;
    t->layout = store;
    /* in floats; a bf16 layout takes half as many */
    t->alloc_count = (int64_t)((dnnl_memory_desc_get_size(md) + sizeof(float) - 1) / sizeof(float));
    return *md;
}

int cpu_reorder_once(cpu_ctx *c, const dnnl_memory_desc_t *from_md, void *from,
                     const dnnl_memory_desc_t *to_md, void *to, const_dnnl_primitive_attr_t attr)
{
    dnnl_memory_t fm = NULL, tm = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t r = NULL;
    dnnl_status_t st = dnnl_memory_create(&fm, from_md, c->eng, from);
    if (st == dnnl_success)
        st = dnnl_memory_create(&tm, to_md, c->eng, to);
    if (st == dnnl_success)
        st = dnnl_reorder_primitive_desc_create(&pd, from_md, c->eng, to_md, c->eng, attr);
    if (st == dnnl_success)
        st = dnnl_primitive_create(&r, pd);
    if (st == dnnl_success) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, fm}, {DNNL_ARG_TO, tm}};
        st = dnnl_primitive_execute(r, c->stream, 2, args);
    }
    if (st == dnnl_success)
        st = dnnl_stream_wait(c->stream);
    if (r)
        dnnl_primitive_destroy(r);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (tm)
        dnnl_memory_destroy(tm);
    if (fm)
        dnnl_memory_destroy(fm);
    return st == dnnl_success ? 0 : -DLG_EINTERNAL;
}

static int host_reorder(cpu_ctx *c, const dlg_tensor *t, void *from, void *to, bool to_host)
{
    dnnl_memory_desc_t plain = cpu_plain_md(t), md = cpu_tensor_md(t);
    return to_host ? cpu_reorder_once(c, &md, from, &plain, to, NULL)
                   : cpu_reorder_once(c, &plain, from, &md, to, NULL);
}

int cpu_read_opaque(void *ctx, const dlg_tensor *t, const void *mem, float *host)
{
    return host_reorder(ctx, t, (void *)mem, host, true);
}

int cpu_write_opaque(void *ctx, const dlg_tensor *t, void *mem, const float *host)
{
    return host_reorder(ctx, t, (void *)host, mem, false);
}

dnnl_primitive_attr_t cpu_attr(void)
{
    dnnl_primitive_attr_t attr = NULL;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success)
        return NULL;
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    return attr;
}

int cpu_prim_create(cpu_ctx *c, cpu_prim *p, const void *op_desc, const_dnnl_primitive_desc_t hint,
                    char *err, size_t errlen)
{
    return cpu_prim_create_po(c, p, op_desc, hint, NULL, err, errlen);
}

int cpu_prim_create_po(cpu_ctx *c, cpu_prim *p, const void *op_desc,
                       const_dnnl_primitive_desc_t hint, const_dnnl_post_ops_t po, char *err,
                       size_t errlen)
{
    memset(p, 0, sizeof *p);
    dnnl_primitive_attr_t attr = cpu_attr();
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = attr ? dnnl_success : dnnl_out_of_memory;
    if (st == dnnl_success && po)
        st = dnnl_primitive_attr_set_post_ops(attr, po);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(&pd, op_desc, attr, c->eng, hint);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return cpu_fail(st, "primitive_desc_create", err, errlen);
    return cpu_prim_from_pd(c, p, pd, err, errlen);
}

int cpu_prim_from_pd(cpu_ctx *c, cpu_prim *p, dnnl_primitive_desc_t pd, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    dnnl_status_t st = dnnl_primitive_create(&p->p, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success)
        return cpu_fail(st, "primitive_create", err, errlen);
    if ((st = dnnl_primitive_get_primitive_desc(p->p, &p->pd)) != dnnl_success)
        return cpu_fail(st, "get_primitive_desc", err, errlen);
    const dnnl_memory_desc_t *smd =
        dnnl_primitive_desc_query_md(p->pd, dnnl_query_scratchpad_md, 0);
    size_t sz = smd ? dnnl_memory_desc_get_size(smd) : 0;
    if (sz) {
        if ((st = dnnl_memory_create(&p->scratch, smd, c->eng, DNNL_MEMORY_NONE)) != dnnl_success)
            return cpu_fail(st, "scratchpad memory", err, errlen);
        p->scratch_off = 0;
        p->ws = CPU_ALIGN(sz);
    }
    return 0;
}

int cpu_prim_arg(cpu_ctx *c, cpu_prim *p, int arg, const dnnl_memory_desc_t *user_md, bool out,
                 char *err, size_t errlen)
{
    if (p->n == CPU_MAX_ARGS)
        return -DLG_EINTERNAL;
    const dnnl_memory_desc_t *pmd =
        dnnl_primitive_desc_query_md(p->pd, dnnl_query_exec_arg_md, arg);
    if (!pmd)
        return cpu_fail(dnnl_invalid_arguments, "query argument", err, errlen);
    cpu_arg *a = &p->a[p->n++];
    memset(a, 0, sizeof *a);
    a->arg = arg;
    a->out = out;
    if (!user_md)
        user_md = pmd;
    dnnl_status_t st = dnnl_memory_create(&a->user, user_md, c->eng, DNNL_MEMORY_NONE);
    if (st != dnnl_success)
        return cpu_fail(st, "memory_create", err, errlen);
    if (dnnl_memory_desc_equal(user_md, pmd))
        return 0;
    if ((st = dnnl_memory_create(&a->prim, pmd, c->eng, DNNL_MEMORY_NONE)) != dnnl_success)
        return cpu_fail(st, "memory_create", err, errlen);
    dnnl_primitive_desc_t rpd;
    st = out ? dnnl_reorder_primitive_desc_create(&rpd, pmd, c->eng, user_md, c->eng, NULL)
             : dnnl_reorder_primitive_desc_create(&rpd, user_md, c->eng, pmd, c->eng, NULL);
    if (st == dnnl_success) {
        st = dnnl_primitive_create(&a->reorder, rpd);
        dnnl_primitive_desc_destroy(rpd);
    }
    if (st != dnnl_success)
        return cpu_fail(st, "reorder", err, errlen);
    a->off = p->ws;
    p->ws += CPU_ALIGN(dnnl_memory_desc_get_size(pmd));
    return 0;
}

int cpu_prim_fixed(cpu_prim *p, int arg, dnnl_memory_t mem)
{
    if (p->n == CPU_MAX_ARGS)
        return -DLG_EINTERNAL;
    cpu_arg *a = &p->a[p->n++];
    memset(a, 0, sizeof *a);
    a->arg = arg;
    a->fixed = mem;
    return 0;
}

static int reorder(cpu_ctx *c, cpu_arg *a)
{
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, a->out ? a->prim : a->user},
                               {DNNL_ARG_TO, a->out ? a->user : a->prim}};
    return dnnl_primitive_execute(a->reorder, c->stream, 2, args) == dnnl_success ? 0
                                                                                  : -DLG_EINTERNAL;
}

int cpu_prim_exec(cpu_ctx *c, cpu_prim *p, void *const *ptrs, void *ws)
{
    dnnl_exec_arg_t args[CPU_MAX_ARGS + 1];
    int n = 0, k = 0;
    char *w = ws;
    for (int i = 0; i < p->n; i++) {
        cpu_arg *a = &p->a[i];
        if (a->fixed) {
            args[n++] = (dnnl_exec_arg_t){a->arg, a->fixed};
            continue;
        }
        dnnl_memory_set_data_handle(a->user, ptrs[k++]);
        if (a->prim) {
            dnnl_memory_set_data_handle(a->prim, w + a->off);
            if (!a->out && reorder(c, a) < 0)
                return -DLG_EINTERNAL;
        }
        args[n++] = (dnnl_exec_arg_t){a->arg, a->prim ? a->prim : a->user};
    }
    if (p->scratch) {
        dnnl_memory_set_data_handle(p->scratch, w + p->scratch_off);
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, p->scratch};
    }
    if (dnnl_primitive_execute(p->p, c->stream, n, args) != dnnl_success)
        return -DLG_EINTERNAL;
    for (int i = 0; i < p->n; i++)
        if (p->a[i].prim && p->a[i].out && reorder(c, &p->a[i]) < 0)
            return -DLG_EINTERNAL;
    return dnnl_stream_wait(c->stream) == dnnl_success ? 0 : -DLG_EINTERNAL;
}

void cpu_prim_destroy(cpu_prim *p)
{
    for (int i = 0; i < p->n; i++) {
        cpu_arg *a = &p->a[i];
        if (a->user)
            dnnl_memory_destroy(a->user);
        if (a->prim)
            dnnl_memory_destroy(a->prim);
        if (a->reorder)
            dnnl_primitive_destroy(a->reorder);
    }
    if (p->scratch)
        dnnl_memory_destroy(p->scratch);
    if (p->p)
        dnnl_primitive_destroy(p->p);
    memset(p, 0, sizeof *p);
}
