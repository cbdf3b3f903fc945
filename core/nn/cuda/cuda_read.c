/* Device-side blob copies and host reads without a host wait: the
 * backend's copy hook (dlg_net_copy_blob, e.g. an LSTM's hT -> the next
 * segment's h0) and read_async/read_wait (dlg_net_read_async, e.g. the
 * loss into pinned memory, looked at once the step has ended).
 *
 * Each read records one event of a small ring; a ticket's event is
 * ring[ticket % READS], recorded for that ticket or a later one on the same
 * stream, so waiting on it is waiting for that read (or a little longer).
 * Beside the data each read copies the sticky bad-input flag, so a read
 * after a bad label fails as dlg_net_read does, without a second wait. */
#include "cuda.h"

#include <stdlib.h>

#define READS 4

typedef struct dlg_cuda_reads {
    cudaEvent_t ev[READS];
    uint64_t tick[READS]; /* the latest ticket recorded on each event */
    int *flag;            /* pinned, READS ints: the flag as each read saw it */
    uint64_t next, done;  /* the last ticket given; every one up to done landed */
    bool bad;             /* a read saw the flag set */
} dlg_cuda_reads;

int dlg_cuda_copy_d2d(void *vctx, void *dst, const void *src, size_t bytes)
{
    dlg_cuda_ctx *c = vctx;
    return dlg_cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream));
}

void dlg_cuda_reads_close(dlg_cuda_ctx *c)
{
    dlg_cuda_reads *r = c->reads;
    if (!r)
        return;
    for (int i = 0; i < READS; i++)
        if (r->ev[i])
            cudaEventDestroy(r->ev[i]);
    if (r->flag)
        cudaFreeHost(r->flag);
    free(r);
    c->reads = NULL;
}

/* The ring, on the first read: events without timing (cheapest to wait on). */
static int reads_open(dlg_cuda_ctx *c)
{
    if (c->reads)
        return 0;
    if (!(c->reads = calloc(1, sizeof *c->reads)))
        return -DLG_ENOMEM;
    dlg_cuda_reads *r = c->reads;
    int rc = dlg_cuda_ok(cudaHostAlloc((void **)&r->flag, READS * sizeof(int), 0));
    for (int i = 0; i < READS && !rc; i++)
        rc = dlg_cuda_ok(cudaEventCreateWithFlags(&r->ev[i], cudaEventDisableTiming));
    if (rc) {
        cudaGetLastError(); /* not left for the next kernel launch's check */
        dlg_cuda_reads_close(c);
    }
    return rc;
}

int dlg_cuda_read_async(void *vctx, void *dst, const void *src, size_t bytes, uint64_t *ticket)
{
    dlg_cuda_ctx *c = vctx;
    int rc = c->capturing ? -DLG_EINVAL : reads_open(c);
    if (rc)
        return rc;
    dlg_cuda_reads *r = c->reads;
    uint64_t t = r->next + 1;
    int slot = (int)(t % READS);
    rc = dlg_cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaMemcpyAsync(&r->flag[slot], c->flag_dev, sizeof(int),
                                         cudaMemcpyDeviceToHost, c->stream));
    if (!rc)
        rc = dlg_cuda_ok(cudaEventRecord(r->ev[slot], c->stream));
    if (rc) {
        cudaGetLastError();
        return rc;
    }
    r->tick[slot] = r->next = *ticket = t;
    return 0;
}

int dlg_cuda_read_wait(void *vctx, uint64_t t)
{
    dlg_cuda_ctx *c = vctx;
    dlg_cuda_reads *r = c->reads;
    if (t == 0)
        return 0;
    if (!r || t > r->next)
        return -DLG_EINTERNAL; /* a ticket never given (the engine checks) */
    if (t > r->done) {
        int slot = (int)(t % READS);
        cudaError_t e = cudaEventQuery(r->ev[slot]); /* landed already: no wait */
        if (e == cudaErrorNotReady) {
            cudaGetLastError();
            e = cudaEventSynchronize(r->ev[slot]);
        }
        int rc = dlg_cuda_ok(e);
        if (rc)
            return rc;
        r->done = r->tick[slot] > r->done ? r->tick[slot] : r->done;
        r->bad = r->bad || r->flag[slot] != 0;
    }
    return r->bad ? -DLG_EINVAL : 0;
}
