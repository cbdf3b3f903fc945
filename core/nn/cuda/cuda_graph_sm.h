/* When a step runs eagerly, is captured, or is replayed (CUDA graphs):
 * the host-side decisions, pure C, so CI tests them without a device
 * (cuda_step.c does the CUDA calls).
 *
 * A graph bakes in every kernel argument, so what changes per step must
 * live in device memory (inputs, the loss scale, dropout's step counter)
 * or be part of the key: the net's phase, whether the step trains, the
 * SGD hyper-parameters, and whether and at what norm it clips (the clip
 * factor itself lives on the device).  A key that differs from the
 * captured one forces a re-capture; a key that keeps changing (an lr
 * scaled every step by a clip decided on the host, say) turns graphs off
 * for the run, since capturing every step costs more than it saves.  A capture or a replay that fails
 * turns graphs off too (the step itself then runs eagerly). */
#ifndef DLG_NN_CUDA_GRAPH_SM_H
#define DLG_NN_CUDA_GRAPH_SM_H

#include <dlgauge/nn.h>

#include <stdbool.h>
#include <stddef.h>

/* Eager steps before the first capture: the first runs cuDNN's and
 * cuBLAS's lazy set-up and builds the SGD table, the second shows that
 * nothing else is still being set up. */
#define DLG_GRAPH_WARMUP 2
/* Consecutive steps with a new key after which graphs are turned off. */
#define DLG_GRAPH_CHURN 3

/* May a net's steps be captured?  graphs: the plan option; profiled: the
 * plan profiles its layers on the device timeline (marks between eager
 * launches); blocker: the first layer whose kernels cannot be captured
 * (NULL: none).  false with a one-line reason in why. */
bool dlg_graph_eligible(dlg_graphs graphs, bool profiled, const char *blocker, char *why,
                        size_t whylen);

typedef struct dlg_graph_key {
    bool train;    /* the net's phase */
    bool update;   /* backward + SGD after forward */
    float lr, momentum, decay;
    bool clip;       /* gradient clipping between backward and SGD */
    double max_norm; /* its threshold (a kernel argument in the graph) */
} dlg_graph_key;

typedef enum dlg_graph_action {
    DLG_GRAPH_EAGER = 0,   /* run the kernels now */
    DLG_GRAPH_CAPTURE = 1, /* capture a step, instantiate (or update), launch it */
    DLG_GRAPH_REPLAY = 2   /* launch the captured graph */
} dlg_graph_action;

typedef struct dlg_graph_sm {
    bool off;      /* ineligible, failed or churning: eager for good */
    bool captured; /* a graph exists, for key */
    int eager;     /* eager steps run so far */
    int churn;     /* consecutive captures forced by a new key */
    int captures;
    bool warmed_in;     /* mode is set */
    dlg_graph_key mode; /* train/update of the eager warm-up steps */
    dlg_graph_key key;  /* of the captured graph */
} dlg_graph_sm;

void dlg_graph_sm_init(dlg_graph_sm *sm, bool eligible);
dlg_graph_action dlg_graph_sm_next(const dlg_graph_sm *sm, const dlg_graph_key *k);
/* After running action a for key k: ok = it worked.  An eager step in a
 * new mode (phase or update) starts the warm-up again.  A failed capture
 * turns graphs off (the caller runs the step eagerly and notes why);
 * returns true when this call turned them off for churn. */
bool dlg_graph_sm_done(dlg_graph_sm *sm, dlg_graph_action a, const dlg_graph_key *k, bool ok);

#endif
