/* Gradient clipping on the device: the global gradient norm's sum of
 * squares and the scaling, behind the backend hooks that clip.c calls
 * (dlg_net_grad_norm, dlg_net_scale_grads).  Without them clip.c would
 * copy every gradient to the host in 16 KiB pieces, one sync each: for
 * the PTB-medium LSTM (about 20 M params) thousands of syncs per step. */
#include "cuda_seq.h"

#define K(call) dlg_cuda_ok((cudaError_t)(call))

int dlg_cuda_clip_open(dlg_cuda_ctx *c, char *err, size_t errlen)
{
    int rc = dlg_cuda_err(cudaMalloc((void **)&c->norm_dev,
                                     (DLG_CUK_SUMSQ_SLOTS + 1) * sizeof(double)),
                          "cudaMalloc (clipping)", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaHostAlloc((void **)&c->norm_host, sizeof(double), 0),
                          "cudaHostAlloc (clipping)", err, errlen);
    return rc;
}

void dlg_cuda_clip_close(dlg_cuda_ctx *c)
{
    if (c->norm_dev)
        cudaFree(c->norm_dev);
    if (c->norm_host)
        cudaFreeHost(c->norm_host);
    c->norm_dev = c->norm_host = NULL;
}

int dlg_cuda_sumsq(void *ctx, const float *const *p, const int64_t *c, int n, double *out)
{
    dlg_cuda_ctx *x = ctx;
    double *slots = x->norm_dev, *total = x->norm_dev + DLG_CUK_SUMSQ_SLOTS;
    int rc = 0;
    /* an empty list still writes the slots, so the total is 0 */
    for (int i = 0; i < n && !rc; i++)
        rc = K(dlg_cuk_sumsq(x->stream, p[i], c[i], slots, i == 0));
    if (!rc && n == 0)
        rc = K(dlg_cuk_sumsq(x->stream, NULL, 0, slots, 1));
    if (!rc)
        rc = K(dlg_cuk_sumsq_total(x->stream, slots, total));
    if (!rc)
        rc = dlg_cuda_ok(cudaMemcpyAsync(x->norm_host, total, sizeof(double),
                                         cudaMemcpyDeviceToHost, x->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaStreamSynchronize(x->stream));
    if (!rc)
        rc = dlg_cuda_flag_check_synced(x);
    if (!rc)
        *out = *x->norm_host;
    return rc;
}

int dlg_cuda_scale(void *ctx, float *const *p, const int64_t *c, int n, float f)
{
    dlg_cuda_ctx *x = ctx;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = K(dlg_cuk_scale(x->stream, p[i], c[i], f));
    return rc;
}
