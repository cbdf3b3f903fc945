/* fp16 dynamic loss scaling on the device (cuda_scaler.h): the state's
 * memory, the scaled SGD step and the host query. */
#include "cuda.h"

#include <stdio.h>

int dlg_cuda_scaler_open(dlg_cuda_ctx *c, char *err, size_t errlen)
{
    if (c->math != DLG_CUDA_FP16)
        return 0;
    dlg_scaler init;
    dlg_scaler_init(&init);
    int rc = dlg_cuda_err(cudaMalloc((void **)&c->scaler, sizeof init), "loss scale", err, errlen);
    /* on the net's stream (non-blocking: a legacy-stream copy would not be
     * ordered before its kernels), waited for: init lives on this stack */
    if (!rc)
        rc = dlg_cuda_err(cudaMemcpyAsync(c->scaler, &init, sizeof init, cudaMemcpyHostToDevice,
                                          c->stream),
                          "loss scale", err, errlen);
    if (!rc)
        rc = dlg_cuda_err(cudaStreamSynchronize(c->stream), "loss scale", err, errlen);
    return rc;
}

void dlg_cuda_scaler_close(dlg_cuda_ctx *c)
{
    if (c->scaler)
        cudaFree(c->scaler);
    c->scaler = NULL;
}

/* Three launches, no host sync: the overflow check must have read every
 * gradient before any param changes (skipping is all or nothing), which a
 * single pass could only do with a grid-wide barrier; the check is one
 * read of the gradients, as PyTorch's _amp_foreach_non_finite_check_and_
 * unscale_ (which also writes them back unscaled; here the SGD launch
 * unscales as it reads). */
int dlg_cuda_sgd_scaled(dlg_cuda_ctx *c, const dlg_cuk_sgd_tensor *t, const dlg_cuk_sgd_chunk *ch,
                        int nchunks, const dlg_sgd *sgd)
{
    int rc = dlg_cuda_ok((cudaError_t)dlg_cuk_grad_check_multi(c->stream, t, ch, nchunks,
                                                               c->scaler));
    if (!rc)
        rc = dlg_cuda_ok((cudaError_t)dlg_cuk_sgd_multi_scaled(
            c->stream, t, ch, nchunks, sgd->lr, sgd->momentum, sgd->weight_decay, c->scaler));
    if (!rc)
        rc = dlg_cuda_ok((cudaError_t)dlg_cuk_scaler_update(c->stream, c->scaler));
    return rc;
}

int dlg_cuda_loss_scale(void *vctx, float *scale, int64_t *skipped)
{
    dlg_cuda_ctx *c = vctx;
    *scale = 1.f;
    *skipped = 0;
    if (!c->scaler)
        return 0;
    dlg_scaler s;
    int rc = dlg_cuda_ok(cudaMemcpyAsync(&s, c->scaler, sizeof s, cudaMemcpyDeviceToHost,
                                         c->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaStreamSynchronize(c->stream));
    if (rc)
        return rc;
    *scale = s.scale;
    *skipped = s.skipped;
    return 1;
}
