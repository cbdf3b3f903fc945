/* The input path on the CUDA backend (core/nn/input.h): pinned host
 * memory, and input copies on a second stream that overlap the compute
 * stream's work.
 *
 * Ordering, all on the device (the host never waits in a step):
 *   copy stream:    [wait slot.read if it was read] H2D src -> stage, record slot.ready
 *   compute stream: record wait0, wait every taken slot.ready, record wait1,
 *                   D2D stage -> blob, record slot.read, ... the step ...,
 *                   record done (in_mark), ... record timer end (cuda_step.c)
 * The D2D copies and the waits are enqueued before run_step, so a captured
 * step (CUDA graph) contains neither: a replay is launched after them on
 * the same stream.  The data wait of a step is wait0 -> wait1 (the copy
 * was late) plus done -> timer end (the device idle until the host had
 * the next batch and ended the timer). */
#include "cuda.h"

#include <stdlib.h>

typedef struct dlg_cuda_slot {
    cudaEvent_t ready, read;
} dlg_cuda_slot;

struct dlg_cuda_input {
    cudaStream_t copy;
    cudaEvent_t wait0, wait1, done;
    bool taken;  /* the last take recorded wait0/wait1 */
    bool marked; /* done was recorded after it */
};

/* Created on the first staging slot (the first asynchronous write). */
static int input_open(dlg_cuda_ctx *c)
{
    if (c->input)
        return 0;
    struct dlg_cuda_input *in = calloc(1, sizeof *in);
    if (!in)
        return -DLG_ENOMEM;
    c->input = in;
    int rc = dlg_cuda_ok(cudaStreamCreateWithFlags(&in->copy, cudaStreamNonBlocking));
    if (!rc)
        rc = dlg_cuda_ok(cudaEventCreate(&in->wait0));
    if (!rc)
        rc = dlg_cuda_ok(cudaEventCreate(&in->wait1));
    if (!rc)
        rc = dlg_cuda_ok(cudaEventCreate(&in->done));
    return rc;
}

void dlg_cuda_input_close(dlg_cuda_ctx *c)
{
    struct dlg_cuda_input *in = c->input;
    if (!in)
        return;
    if (in->copy) {
        cudaStreamSynchronize(in->copy);
        cudaStreamDestroy(in->copy);
    }
    cudaEvent_t ev[3] = {in->wait0, in->wait1, in->done};
    for (int i = 0; i < 3; i++)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    free(in);
    c->input = NULL;
}

/* Portable: the loader's buffers may be allocated before the thread that
 * runs the steps binds its device. */
void *dlg_cuda_host_alloc(void *vctx, size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes ? bytes : 64, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return p;
}

void dlg_cuda_host_free(void *vctx, void *p)
{
    if (p)
        cudaFreeHost(p);
}

int dlg_cuda_in_slot_open(void *vctx, void **out)
{
    dlg_cuda_ctx *c = vctx;
    *out = NULL;
    int rc = input_open(c);
    if (rc < 0)
        return rc;
    dlg_cuda_slot *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    *out = s;
    rc = dlg_cuda_ok(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
    if (!rc)
        rc = dlg_cuda_ok(cudaEventCreateWithFlags(&s->read, cudaEventDisableTiming));
    return rc;
}

void dlg_cuda_in_slot_close(void *vctx, void *vs)
{
    dlg_cuda_slot *s = vs;
    if (!s)
        return;
    if (s->ready)
        cudaEventDestroy(s->ready);
    if (s->read)
        cudaEventDestroy(s->read);
    free(s);
}

int dlg_cuda_in_copy(void *vctx, void *vs, void *stage, const void *src, size_t bytes,
                     bool after_read)
{
    dlg_cuda_ctx *c = vctx;
    dlg_cuda_slot *s = vs;
    cudaStream_t st = c->input->copy;
    int rc = after_read ? dlg_cuda_ok(cudaStreamWaitEvent(st, s->read, 0)) : 0;
    if (!rc)
        rc = dlg_cuda_ok(cudaMemcpyAsync(stage, src, bytes, cudaMemcpyHostToDevice, st));
    return rc ? rc : dlg_cuda_ok(cudaEventRecord(s->ready, st));
}

int dlg_cuda_in_take(void *vctx, void *const *slot, void *const *dst, void *const *stage,
                     const size_t *bytes, int n)
{
    dlg_cuda_ctx *c = vctx;
    struct dlg_cuda_input *in = c->input;
    in->taken = in->marked = false;
    int rc = dlg_cuda_ok(cudaEventRecord(in->wait0, c->stream));
    for (int i = 0; !rc && i < n; i++)
        rc = dlg_cuda_ok(cudaStreamWaitEvent(c->stream, ((dlg_cuda_slot *)slot[i])->ready, 0));
    if (!rc)
        rc = dlg_cuda_ok(cudaEventRecord(in->wait1, c->stream));
    for (int i = 0; !rc && i < n; i++) {
        rc = dlg_cuda_ok(
            cudaMemcpyAsync(dst[i], stage[i], bytes[i], cudaMemcpyDeviceToDevice, c->stream));
        if (!rc)
            rc = dlg_cuda_ok(cudaEventRecord(((dlg_cuda_slot *)slot[i])->read, c->stream));
    }
    in->taken = rc == 0;
    return rc;
}

int dlg_cuda_in_mark(void *vctx)
{
    dlg_cuda_ctx *c = vctx;
    struct dlg_cuda_input *in = c->input;
    in->marked = cudaEventRecord(in->done, c->stream) == cudaSuccess;
    return in->marked ? 0 : -DLG_EINTERNAL;
}

int dlg_cuda_in_wait(void *vctx)
{
    dlg_cuda_ctx *c = vctx;
    return c->input ? dlg_cuda_ok(cudaStreamSynchronize(c->input->copy)) : 0;
}

int dlg_cuda_in_stall(void *vctx, uint64_t *ns)
{
    dlg_cuda_ctx *c = vctx;
    struct dlg_cuda_input *in = c->input;
    float ms = 0, tail = 0;
    *ns = 0;
    if (!in || !in->taken)
        return -DLG_ENOTSUP;
    if (cudaEventSynchronize(in->wait1) != cudaSuccess ||
        cudaEventElapsedTime(&ms, in->wait0, in->wait1) != cudaSuccess)
        return -DLG_EINTERNAL;
    /* the timer's end of this step, if it ended after the step's work (an
     * earlier step's end gives a negative time, an open timer an error) */
    if (in->marked && c->timer[0][0] && !c->timer_open) {
        if (cudaEventElapsedTime(&tail, in->done, c->timer[c->timer_cur][1]) == cudaSuccess &&
            tail > 0)
            ms += tail;
        cudaGetLastError();
    }
    *ns = (uint64_t)((double)ms * 1e6);
    return 0;
}
