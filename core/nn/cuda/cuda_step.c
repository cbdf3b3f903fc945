/* Whole steps on the CUDA backend: run eagerly, captured into a CUDA
 * graph and replayed (cuda_graph_sm.h decides which), and step timing by
 * CUDA events.
 *
 * Capture uses cudaStreamCaptureModeThreadLocal: the net runs on one
 * thread, and only that thread's calls can touch its stream, so only its
 * unsafe calls (a sync or an allocation that a kernel should not make)
 * must invalidate the capture -- which they do, and the step then runs
 * eagerly.  Global mode would also fail unrelated calls of other threads
 * (the loader's pinned allocations, another net) for as long as the
 * capture lasts.
 *
 * What keeps a replay equal to the eager step: memory is planned once
 * (stable pointers); inputs are copied by dlg_net_write on the same
 * stream before the launch (outside the graph); per-step values live on
 * the device (dropout's step counter, the loss scale, the clip factor) or
 * in the key (phase, SGD hyper-parameters, the clip threshold); the
 * bad-label read-back, an event query, is never made while capturing
 * (dlg_cuda_flag_poll) but after each launch. */
#include "cuda.h"

#include <stdio.h>

/* 1: the launch itself was refused (why says how; nothing ran, the step
 * can still run eagerly), else what the step's bad-input poll says */
static int launch_graph(dlg_cuda_ctx *c, cudaGraphExec_t exec, const dlg_step_fn *f, char *why,
                        size_t whylen)
{
    cudaError_t e = cudaGraphLaunch(exec, c->stream);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "cudaGraphLaunch: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return 1;
    }
    int rc = dlg_cuda_flag_poll(c);
    if (rc == -DLG_EINVAL)
        snprintf(f->err, f->errlen, "nn: a step saw a bad input (e.g. a label outside 0..K-1)");
    return rc;
}

/* Captures one step and points g->exec at it: the existing executable is
 * updated in place when only kernel arguments changed (cheap), else a new
 * one is instantiated.  Nothing runs; on failure why says what broke. */
static int capture(dlg_cuda_ctx *c, dlg_cuda_graph *g, const dlg_step_fn *f, char *why,
                   size_t whylen)
{
    cudaGraph_t gr = NULL;
    cudaError_t e = cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "cudaStreamBeginCapture: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return -DLG_ENOTSUP;
    }
    c->capturing = true;
    int rc = f->launch(f->arg, why, whylen);
    if (rc == -DLG_ENOMEM) /* the step's own: it says so again when it runs eagerly */
        rc = -DLG_ENOTSUP;
    c->capturing = false;
    e = cudaStreamEndCapture(c->stream, &gr); /* always: the stream leaves capture mode */
    if (!rc && e != cudaSuccess)
        rc = dlg_cuda_err(e, "cudaStreamEndCapture", why, whylen);
    if (!rc && !gr) {
        snprintf(why, whylen, "cudaStreamEndCapture: no graph");
        rc = -DLG_ENOTSUP;
    }
    if (!rc && g->exec) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(g->exec, gr, &info) != cudaSuccess) {
            cudaGetLastError(); /* another topology: instantiate anew */
            cudaGraphExecDestroy(g->exec);
            g->exec = NULL;
        }
    }
    if (!rc && !g->exec && (e = cudaGraphInstantiate(&g->exec, gr, 0)) != cudaSuccess) {
        rc = dlg_cuda_err(e, "cudaGraphInstantiate", why, whylen);
        g->exec = NULL;
    }
    if (gr)
        cudaGraphDestroy(gr);
    if (rc)
        cudaGetLastError(); /* the capture's error must not surface in later calls */
    return rc;
}

static void graph_init(dlg_cuda_ctx *c, dlg_cuda_graph *g, const dlg_step_fn *f)
{
    char why[200];
    bool ok = dlg_graph_eligible(c->graphs, c->prof_n > 0, f->blocker, why, sizeof why);
    dlg_graph_sm_init(&g->sm, ok);
    if (!ok && c->graphs == DLG_GRAPHS_ON) {
        char msg[256];
        snprintf(msg, sizeof msg, "CUDA graphs not used: %s", why);
        dlg_cuda_note_once(c, DLG_CUDA_NOTE_GRAPH, msg);
    }
    g->ready = true;
}

int dlg_cuda_run_step(void *vctx, const dlg_step_fn *f)
{
    dlg_cuda_ctx *c = vctx;
    dlg_cuda_graph *g = &c->graph[f->sgd ? 0 : 1];
    if (!g->ready)
        graph_init(c, g, f);
    dlg_graph_key k = {f->train,
                       f->sgd != NULL,
                       f->sgd ? f->sgd->lr : 0,
                       f->sgd ? f->sgd->momentum : 0,
                       f->sgd ? f->sgd->weight_decay : 0,
                       f->clip,
                       f->clip ? f->max_norm : 0};
    dlg_graph_action a = dlg_graph_sm_next(&g->sm, &k);
    char why[256] = "";
    int rc;
    if (a == DLG_GRAPH_REPLAY && (rc = launch_graph(c, g->exec, f, why, sizeof why)) != 1) {
        dlg_graph_sm_done(&g->sm, a, &k, rc == 0);
        c->stats.replayed += rc == 0;
        return rc;
    }
    if (a == DLG_GRAPH_CAPTURE && (rc = capture(c, g, f, why, sizeof why)) == -DLG_ENOMEM) {
        /* eager steps would measure something other than asked */
        dlg_graph_sm_done(&g->sm, a, &k, false);
        snprintf(f->err, f->errlen,
                 "nn: the step as a CUDA graph: %s (graphs = false runs the steps eagerly)",
                 why);
        return rc;
    }
    if (a == DLG_GRAPH_CAPTURE && rc == 0 &&
        (rc = launch_graph(c, g->exec, f, why, sizeof why)) != 1) {
        c->stats.captured += rc == 0;
        if (dlg_graph_sm_done(&g->sm, a, &k, rc == 0))
            dlg_cuda_note_once(c, DLG_CUDA_NOTE_GRAPH_CHURN,
                               "SGD hyper-parameters change every step: CUDA graphs off, "
                               "steps run eagerly");
        return rc;
    }
    if (a != DLG_GRAPH_EAGER) { /* the graph failed, not the step: run it eagerly */
        dlg_graph_sm_done(&g->sm, a, &k, false);
        char msg[320];
        snprintf(msg, sizeof msg, "CUDA graph %s failed (%s); steps run eagerly",
                 a == DLG_GRAPH_CAPTURE ? "capture" : "replay", why);
        dlg_cuda_note_once(c, DLG_CUDA_NOTE_GRAPH_FAILED, msg);
    }
    rc = f->launch(f->arg, f->err, f->errlen);
    dlg_graph_sm_done(&g->sm, DLG_GRAPH_EAGER, &k, rc == 0);
    c->stats.eager += rc == 0;
    return rc;
}

void dlg_cuda_step_stats(void *vctx, dlg_step_stats *out)
{
    dlg_cuda_ctx *c = vctx;
    *out = c->stats;
}

/* ---- step timing: two event pairs, alternating, so that a step's begin
 * never re-records an event the previous step's end may still read ---- */

/* The four timer events, all or none: those made before a failure (out of
 * memory on the third) are destroyed, so that timer[0][0] set means all
 * four are (the next step tries again; cuda_input.c reads them) and the
 * failure's error does not surface at the next kernel launch. */
static int timer_events(dlg_cuda_ctx *c)
{
    cudaEvent_t ev[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; i++) {
        cudaError_t e = cudaEventCreate(&ev[i]);
        if (e != cudaSuccess) {
            cudaGetLastError();
            while (i-- > 0)
                cudaEventDestroy(ev[i]);
            return e == cudaErrorMemoryAllocation ? -DLG_ENOMEM : -DLG_EINTERNAL;
        }
    }
    for (int i = 0; i < 4; i++)
        c->timer[i / 2][i % 2] = ev[i];
    return 0;
}

int dlg_cuda_timer_begin(void *vctx)
{
    dlg_cuda_ctx *c = vctx;
    int rc;
    if (!c->timer[0][0] && (rc = timer_events(c)) < 0) /* first step: created once, kept */
        return rc;
    c->timer_cur ^= 1;
    c->timer_open = cudaEventRecord(c->timer[c->timer_cur][0], c->stream) == cudaSuccess;
    return c->timer_open ? 0 : -DLG_EINTERNAL;
}

int dlg_cuda_timer_end(void *vctx, uint64_t *elapsed_ns)
{
    dlg_cuda_ctx *c = vctx;
    cudaEvent_t *ev = c->timer[c->timer_cur];
    float ms = 0;
    *elapsed_ns = 0;
    if (!c->timer_open)
        return -DLG_EINVAL;
    c->timer_open = false;
    if (cudaEventRecord(ev[1], c->stream) != cudaSuccess ||
        cudaEventSynchronize(ev[1]) != cudaSuccess ||
        cudaEventElapsedTime(&ms, ev[0], ev[1]) != cudaSuccess)
        return -DLG_EINTERNAL;
    uint64_t ns = (uint64_t)((double)ms * 1e6);
    *elapsed_ns = ns ? ns : 1; /* 0 would mean "use the host clock" */
    return 0;
}

void dlg_cuda_step_free(dlg_cuda_ctx *c)
{
    for (int i = 0; i < 2; i++)
        if (c->graph[i].exec)
            cudaGraphExecDestroy(c->graph[i].exec);
    for (int i = 0; i < 4; i++)
        if (c->timer[i / 2][i % 2])
            cudaEventDestroy(c->timer[i / 2][i % 2]);
}
