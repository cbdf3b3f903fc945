/* Gradient clipping on the device: the global gradient norm's sum of
 * squares and the scaling, behind the backend hooks that clip.c calls
 * (dlg_net_grad_norm, dlg_net_scale_grads).  Without them clip.c would
 * copy every gradient to the host in 16 KiB pieces, one sync each: for
 * the PTB-medium LSTM (about 20 M params) thousands of syncs per step.
 * dlg_cuda_clip goes further (dlg_net_clip_grads): the factor is computed
 * and applied on the device, as torch.nn.utils.clip_grad_norm_ does, so a
 * clipped training step never waits for the host and can be captured in
 * a CUDA graph; the norm is read back only when asked for (clip_stats). */
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
    if (!rc)
        rc = dlg_cuda_err(cudaMalloc((void **)&c->clip_dev, sizeof *c->clip_dev),
                          "cudaMalloc (clipping)", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaHostAlloc((void **)&c->clip_host, sizeof *c->clip_host, 0),
                          "cudaHostAlloc (clipping)", err, errlen);
    /* no norm yet, nothing clipped (in stream order before any use) */
    if (!rc)
        rc = dlg_cuda_err(cudaMemsetAsync(c->clip_dev, 0, sizeof *c->clip_dev, c->stream),
                          "cudaMemsetAsync (clipping)", err, errlen);
    return rc;
}

void dlg_cuda_clip_close(dlg_cuda_ctx *c)
{
    if (c->norm_dev)
        cudaFree(c->norm_dev);
    if (c->norm_host)
        cudaFreeHost(c->norm_host);
    if (c->clip_dev)
        cudaFree(c->clip_dev);
    if (c->clip_host)
        cudaFreeHost(c->clip_host);
    c->norm_dev = c->norm_host = NULL;
    c->clip_dev = c->clip_host = NULL;
}

/* *total (device) = the sum of squares of the arrays, enqueued */
static int enqueue_sumsq(dlg_cuda_ctx *x, const float *const *p, const int64_t *c, int n,
                         double *total)
{
    double *slots = x->norm_dev;
    int rc = 0;
    /* an empty list still writes the slots, so the total is 0 */
    for (int i = 0; i < n && !rc; i++)
        rc = K(dlg_cuk_sumsq(x->stream, p[i], c[i], slots, i == 0));
    if (!rc && n == 0)
        rc = K(dlg_cuk_sumsq(x->stream, NULL, 0, slots, 1));
    if (!rc)
        rc = K(dlg_cuk_sumsq_total(x->stream, slots, total));
    return rc;
}

/* the host waits for src (device) in x's pinned dst; bad input is an error */
static int read_back(dlg_cuda_ctx *x, void *dst, const void *src, size_t bytes)
{
    int rc = dlg_cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, x->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaStreamSynchronize(x->stream));
    return rc ? rc : dlg_cuda_flag_check_synced(x);
}

int dlg_cuda_sumsq(void *ctx, const float *const *p, const int64_t *c, int n, double *out)
{
    dlg_cuda_ctx *x = ctx;
    double *total = x->norm_dev + DLG_CUK_SUMSQ_SLOTS;
    int rc = enqueue_sumsq(x, p, c, n, total);
    if (!rc)
        rc = read_back(x, x->norm_host, total, sizeof(double));
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

int dlg_cuda_clip(void *ctx, float *const *p, const int64_t *c, int n, double max_norm)
{
    dlg_cuda_ctx *x = ctx;
    dlg_cuk_clip *st = x->clip_dev;
    int rc = enqueue_sumsq(x, (const float *const *)p, c, n, &st->total);
    /* fp16: the stored gradients carry the loss scale until SGD */
    if (!rc)
        rc = K(dlg_cuk_clip_coef(x->stream, st, x->scaler ? &x->scaler->scale : NULL, max_norm));
    for (int i = 0; i < n && !rc; i++)
        rc = K(dlg_cuk_scale_by(x->stream, p[i], c[i], &st->coef));
    return rc;
}

int dlg_cuda_clip_stats(void *ctx, double *last_norm, int64_t *clipped)
{
    dlg_cuda_ctx *x = ctx;
    int rc = read_back(x, x->clip_host, x->clip_dev, sizeof *x->clip_host);
    if (!rc) {
        *last_norm = x->clip_host->norm;
        *clipped = (int64_t)x->clip_host->clipped;
    }
    return rc;
}
