/* The graph state machine (see cuda_graph_sm.h); no CUDA calls. */
#include "cuda_graph_sm.h"

#include <stdio.h>
#include <string.h>

bool dlg_graph_eligible(dlg_graphs graphs, bool profiled, const char *blocker, char *why,
                        size_t whylen)
{
    if (graphs == DLG_GRAPHS_OFF) {
        snprintf(why, whylen, "graphs = false");
        return false;
    }
    if (profiled) {
        snprintf(why, whylen, "profile = true times each layer between eager launches; steps "
                              "run eagerly");
        return false;
    }
    if (blocker) {
        snprintf(why, whylen,
                 "layer '%s' cannot be captured (host sync, allocation or fallback); steps run "
                 "eagerly",
                 blocker);
        return false;
    }
    if (graphs != DLG_GRAPHS_AUTO && graphs != DLG_GRAPHS_ON) {
        snprintf(why, whylen, "unknown graphs setting %d", (int)graphs);
        return false;
    }
    if (whylen)
        why[0] = '\0';
    return true;
}

void dlg_graph_sm_init(dlg_graph_sm *sm, bool eligible)
{
    memset(sm, 0, sizeof *sm);
    sm->off = !eligible;
}

/* Floats compared bitwise: the graph holds exactly these values. */
static bool same_key(const dlg_graph_key *a, const dlg_graph_key *b)
{
    return a->train == b->train && a->update == b->update &&
           memcmp(&a->lr, &b->lr, sizeof a->lr) == 0 &&
           memcmp(&a->momentum, &b->momentum, sizeof a->momentum) == 0 &&
           memcmp(&a->decay, &b->decay, sizeof a->decay) == 0 && a->clip == b->clip &&
           memcmp(&a->max_norm, &b->max_norm, sizeof a->max_norm) == 0;
}

static bool same_mode(const dlg_graph_sm *sm, const dlg_graph_key *k)
{
    return sm->warmed_in && sm->mode.train == k->train && sm->mode.update == k->update;
}

dlg_graph_action dlg_graph_sm_next(const dlg_graph_sm *sm, const dlg_graph_key *k)
{
    /* a new phase or mode runs other kernels (batch norm's inference
     * path, say): they warm up eagerly before a capture contains them */
    if (sm->off || !same_mode(sm, k) || sm->eager < DLG_GRAPH_WARMUP)
        return DLG_GRAPH_EAGER;
    if (sm->captured && same_key(&sm->key, k))
        return DLG_GRAPH_REPLAY;
    return DLG_GRAPH_CAPTURE;
}

bool dlg_graph_sm_done(dlg_graph_sm *sm, dlg_graph_action a, const dlg_graph_key *k, bool ok)
{
    switch (a) {
    case DLG_GRAPH_EAGER:
        if (!same_mode(sm, k)) {
            sm->warmed_in = true;
            sm->mode = *k;
            sm->eager = 0;
            sm->captured = false;
            sm->churn = 0;
        }
        if (ok)
            sm->eager++;
        return false;
    case DLG_GRAPH_CAPTURE:
        if (!ok) {
            sm->off = true;
            sm->captured = false;
            return false;
        }
        if (sm->captured && ++sm->churn >= DLG_GRAPH_CHURN) {
            sm->off = true;
            sm->captured = false;
            return true;
        }
        sm->captured = true;
        sm->captures++;
        sm->key = *k;
        return false;
    case DLG_GRAPH_REPLAY:
        if (ok)
            sm->churn = 0;
        else { /* a graph that failed to launch is not tried again */
            sm->off = true;
            sm->captured = false;
        }
        return false;
    }
    return false;
}
