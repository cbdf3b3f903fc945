/* Per-layer times on the device timeline (the backend's prof_* hooks,
 * backend.h; the engine's side is core/nn/profile.c): one CUDA event per
 * mark, recorded on the net's stream between the layers' launches, so a
 * layer's time is what the GPU spent from the end of the layer before it
 * to the end of its own work, idle time waiting for its launches
 * included.  Made at plan time, never during a step. */
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>

int dlg_cuda_prof_open(void *vctx, int n, char *err, size_t errlen)
{
    dlg_cuda_ctx *c = vctx;
    if (c->prof_n || n < 2) {
        snprintf(err, errlen, "%s", c->prof_n ? "the marks were made already" : "too few marks");
        return -DLG_EINVAL;
    }
    if (!(c->prof_ev = calloc((size_t)n, sizeof *c->prof_ev))) {
        snprintf(err, errlen, "out of host memory for %d events", n);
        return -DLG_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        cudaError_t e = cudaEventCreate(&c->prof_ev[i]);
        if (e != cudaSuccess) {
            cudaGetLastError();
            snprintf(err, errlen, "cudaEventCreate (mark %d of %d): %s", i + 1, n,
                     cudaGetErrorString(e));
            c->prof_n = i;
            dlg_cuda_prof_free(c);
            return e == cudaErrorMemoryAllocation ? -DLG_ENOMEM : -DLG_EINTERNAL;
        }
    }
    c->prof_n = n;
    return 0;
}

int dlg_cuda_prof_mark(void *vctx, int i)
{
    dlg_cuda_ctx *c = vctx;
    if (i < 0 || i >= c->prof_n)
        return -DLG_EINVAL;
    return cudaEventRecord(c->prof_ev[i], c->stream) == cudaSuccess ? 0 : -DLG_EINTERNAL;
}

int dlg_cuda_prof_read(void *vctx, int n, uint64_t *ns)
{
    dlg_cuda_ctx *c = vctx;
    if (n < 1 || n > c->prof_n)
        return -DLG_EINVAL;
    if (cudaEventSynchronize(c->prof_ev[n - 1]) != cudaSuccess)
        return -DLG_EINTERNAL;
    for (int i = 0; i + 1 < n; i++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, c->prof_ev[i], c->prof_ev[i + 1]) != cudaSuccess)
            return -DLG_EINTERNAL;
        ns[i] = ms > 0 ? (uint64_t)((double)ms * 1e6) : 0;
    }
    return 0;
}

void dlg_cuda_prof_free(dlg_cuda_ctx *c)
{
    for (int i = 0; i < c->prof_n; i++)
        cudaEventDestroy(c->prof_ev[i]);
    free(c->prof_ev);
    c->prof_ev = NULL;
    c->prof_n = 0;
}
