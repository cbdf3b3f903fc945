/* A batch norm folded into a convolution's weights (inference plans, see
 * dlg_conv_param.bn): w' = w * scale per output channel, b' = b * scale +
 * shift.  The convolution then runs as a plain one with a bias, which
 * oneDNN's kernels do at full speed, where per-channel multiply/add
 * post-ops cost up to 40% on 1x1 convolutions (oneDNN 2.6, AVX2).  The
 * folded copy is rebuilt only when a param it derives from has changed
 * (dlg_tensor.version), so steps do no extra work. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

int cpu_fold_init(cpu_fold *f, const dlg_layer *l, const dnnl_memory_desc_t *from_md,
                  const dnnl_memory_desc_t *w_md)
{
    memset(f, 0, sizeof *f);
    f->oc = l->top[0]->shape.d[1];
    f->from_md = *from_md;
    f->w_md = *w_md;
    /* output channels are dim 0 of oihw weights, dims 0-1 of goihw ones */
    f->mask = l->p.conv.groups > 1 ? 3 : 1;
    size_t wbytes = dnnl_memory_desc_get_size(w_md);
    if (posix_memalign(&f->w, 64, wbytes ? wbytes : 64))
        f->w = NULL;
    f->b = malloc(3 * (size_t)f->oc * sizeof(float));
    if (!f->w || !f->b)
        return -DLG_ENOMEM;
    f->scale = f->b + f->oc;
    f->shift = f->scale + f->oc;
    return 0;
}

void cpu_fold_destroy(cpu_fold *f)
{
    free(f->w);
    free(f->b);
    memset(f, 0, sizeof *f);
}

/* The versions of the params the folded copy derives from. */
static void versions(const dlg_layer *l, uint64_t *v)
{
    const dlg_layer *bn = l->p.conv.bn;
    v[0] = l->param[0]->version;
    v[1] = l->p.conv.bias ? l->param[1]->version : 0;
    for (int k = 0; k < 4; k++)
        v[2 + k] = bn->param[k]->version;
}

/* w' = w * scale: a reorder into the kernel's layout (the weights' own, or
 * bf16) with per-channel output scales, in fp32 before any rounding
 * (created here, so only when params changed). */
static int scale_weights(cpu_ctx *c, cpu_fold *f, void *w)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t st = dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success)
        st = dnnl_primitive_attr_set_output_scales(attr, f->oc, f->mask, f->scale);
    int rc = st == dnnl_success ? cpu_reorder_once(c, &f->from_md, w, &f->w_md, f->w, attr)
                                : -DLG_EINTERNAL;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return rc;
}

int cpu_fold_refresh(cpu_ctx *c, cpu_fold *f, const dlg_layer *l)
{
    uint64_t v[6];
    versions(l, v);
    /* seen starts zeroed and init_params leaves every param at version >= 1,
     * so the first forward always folds; a failed fold is retried */
    if (memcmp(v, f->seen, sizeof v) == 0)
        return 0;
    dlg_bn_fold(l->p.conv.bn, f->scale, f->shift);
    const float *b = l->p.conv.bias ? l->param[1]->data : NULL;
    for (int64_t i = 0; i < f->oc; i++)
        f->b[i] = (b ? b[i] : 0.0f) * f->scale[i] + f->shift[i];
    int rc = scale_weights(c, f, l->param[0]->data);
    if (rc == 0)
        memcpy(f->seen, v, sizeof v);
    return rc;
}
