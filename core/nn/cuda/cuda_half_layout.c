/* half tensors' order (NCHW or channels-last NHWC), their descriptors, the
 * device conversions at fp32 edges, and dlg_net_read/write (read_opaque,
 * write_opaque) of half tensors with the host conversions. */
#include "cuda_half.h"
#include "cuda_half_cvt.h"

#include <stdlib.h>

const char dlg_cuda_half_layout[] = "half";
const char dlg_cuda_half_nhwc_layout[] = "half-nhwc";

#define K(call) dlg_cuda_ok((cudaError_t)(call))

bool dlg_half_nhwc(const dlg_cuda_ctx *c, const dlg_shape *s)
{
    return c->nhwc && s->ndim == 4;
}

bool dlg_half_moves(const dlg_cuda_ctx *c, const dlg_shape *s)
{
    return c->nhwc && dlg_nhwc_moves(s);
}

const void *dlg_half_layout_for(const dlg_cuda_ctx *c, const dlg_shape *s)
{
    return dlg_half_nhwc(c, s) ? (const void *)dlg_cuda_half_nhwc_layout
                               : (const void *)dlg_cuda_half_layout;
}

bool dlg_half_is_layout(const void *layout)
{
    return layout == (const void *)dlg_cuda_half_layout ||
           layout == (const void *)dlg_cuda_half_nhwc_layout;
}

int dlg_half_desc(cudnnTensorDescriptor_t *d, const dlg_cuda_ctx *c, const dlg_shape *s,
                  char *err, size_t errlen)
{
    if (!dlg_half_nhwc(c, s))
        return dlg_cuda_tensor_desc_t(d, s, dlg_cuda_half_dnn(c), err, errlen);
    int rc = dlg_cuda_desc_fits(s, err, errlen);
    if (!rc)
        rc = dlg_cudnn_err(cudnnCreateTensorDescriptor(d), "cudnnCreateTensorDescriptor", err,
                           errlen);
    /* dims in NCHW order; the format says how they lie in memory */
    return rc ? rc
              : dlg_cuda_desc_set(d, cudnnSetTensor4dDescriptor(*d, CUDNN_TENSOR_NHWC,
                                                                dlg_cuda_half_dnn(c), (int)s->d[0],
                                                                (int)s->d[1], (int)s->d[2],
                                                                (int)s->d[3]),
                                  err, errlen);
}

int dlg_half_from_f32(dlg_cuda_ctx *c, const dlg_shape *s, const float *x, dlg_half *y)
{
    int64_t n, ch, sp;
    dlg_nhwc_dims(s, &n, &ch, &sp);
    if (dlg_half_moves(c, s))
        return K(dlg_cuk_transpose(c->stream, dlg_cuda_htype(c), false, true, x, y, n, ch, sp));
    return K(dlg_cuk_f2h(c->stream, dlg_cuda_htype(c), x, y, n * ch * sp));
}

int dlg_half_to_f32(dlg_cuda_ctx *c, const dlg_shape *s, const dlg_half *x, float *y)
{
    int64_t n, ch, sp;
    dlg_nhwc_dims(s, &n, &ch, &sp);
    if (dlg_half_moves(c, s))
        return K(dlg_cuk_transpose(c->stream, dlg_cuda_htype(c), true, false, x, y, n, sp, ch));
    return K(dlg_cuk_h2f(c->stream, dlg_cuda_htype(c), x, y, n * ch * sp));
}

int dlg_half_to_nchw(dlg_cuda_ctx *c, const dlg_shape *s, const dlg_half *x, dlg_half *y)
{
    int64_t n, ch, sp;
    dlg_nhwc_dims(s, &n, &ch, &sp);
    if (dlg_half_moves(c, s))
        return K(dlg_cuk_transpose(c->stream, dlg_cuda_htype(c), true, true, x, y, n, sp, ch));
    return dlg_cuda_ok(cudaMemcpyAsync(y, x, (size_t)(n * ch * sp) * sizeof(dlg_half),
                                       cudaMemcpyDeviceToDevice, c->stream));
}

int dlg_half_from_nchw(dlg_cuda_ctx *c, const dlg_shape *s, const dlg_half *x, dlg_half *y)
{
    int64_t n, ch, sp;
    dlg_nhwc_dims(s, &n, &ch, &sp);
    if (dlg_half_moves(c, s))
        return K(dlg_cuk_transpose(c->stream, dlg_cuda_htype(c), true, true, x, y, n, ch, sp));
    return dlg_cuda_ok(cudaMemcpyAsync(y, x, (size_t)(n * ch * sp) * sizeof(dlg_half),
                                       cudaMemcpyDeviceToDevice, c->stream));
}

/* ---- host reads and writes of half tensors ------------------------------------ */
static bool host_moves(const dlg_tensor *t, int64_t *n, int64_t *ch, int64_t *sp)
{
    dlg_nhwc_dims(&t->shape, n, ch, sp);
    return t->layout == (const void *)dlg_cuda_half_nhwc_layout && dlg_nhwc_moves(&t->shape);
}

int dlg_cuda_half_read(void *vctx, const dlg_tensor *t, const void *mem, float *host)
{
    dlg_cuda_ctx *c = vctx;
    dlg_half *tmp = malloc((size_t)(t->count ? t->count : 1) * sizeof *tmp);
    if (!tmp)
        return -DLG_ENOMEM;
    int rc = dlg_cuda_ok(cudaMemcpyAsync(tmp, mem, (size_t)t->count * sizeof *tmp,
                                         cudaMemcpyDeviceToHost, c->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaStreamSynchronize(c->stream));
    if (!rc)
        rc = dlg_cuda_flag_check_synced(c);
    int64_t n, ch, sp;
    bool fp16 = c->math == DLG_CUDA_FP16;
    if (!rc && host_moves(t, &n, &ch, &sp))
        dlg_half_to_f32_nchw(fp16, tmp, host, n, ch, sp);
    else if (!rc)
        dlg_half_to_f32_n(fp16, tmp, host, t->count);
    free(tmp);
    return rc;
}

int dlg_cuda_half_write(void *vctx, const dlg_tensor *t, void *mem, const float *host)
{
    dlg_cuda_ctx *c = vctx;
    dlg_half *tmp = malloc((size_t)(t->count ? t->count : 1) * sizeof *tmp);
    if (!tmp)
        return -DLG_ENOMEM;
    int64_t n, ch, sp;
    bool fp16 = c->math == DLG_CUDA_FP16;
    if (host_moves(t, &n, &ch, &sp))
        dlg_half_from_f32_nhwc(fp16, host, tmp, n, ch, sp);
    else
        dlg_half_from_f32_n(fp16, host, tmp, t->count);
    int rc = dlg_cuda_ok(cudaMemcpyAsync(mem, tmp, (size_t)t->count * sizeof *tmp,
                                         cudaMemcpyHostToDevice, c->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaStreamSynchronize(c->stream));
    free(tmp);
    return rc;
}
