/* A results row's layer_profile field (profile = true; written by the nn
 * workloads, plugins/workloads/caffe/nn_profile.c): "TYPE KERNEL: SHARE%
 * (FWD+BWD ms) | ...", the heaviest layer kinds first.  Read by the
 * report's bottleneck evidence and by compare's per-cell layer lines. */
#ifndef DLG_REPORT_LAYER_PROFILE_H
#define DLG_REPORT_LAYER_PROFILE_H

#include <stddef.h>

#include "rows.h"

typedef struct rep_layer_kind {
    char key[96]; /* "conv winograd F(4x4,3x3) avx2" (cut to fit) */
    double share; /* percent of the layers' time */
    double ms;    /* forward + backward, per step */
} rep_layer_kind;

/* r's layer kinds into out (at most max), in the field's order; an item
 * that is not "KEY: SHARE% (F+B ms)" (a hand-edited field) is skipped.
 * 0 without the field, or with r NULL. */
size_t rep_layer_kinds(const rep_row *r, rep_layer_kind *out, size_t max);

#endif
