/* Measured scaling over ranks: a group run under mpirun -np N (its rows'
 * `ranks`) against the same runs at 1 rank, cell by cell (same values on
 * every axis): efficiency = rate(N) / (N x rate(1)). */
#ifndef DLG_REPORT_SCALING_H
#define DLG_REPORT_SCALING_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

typedef struct rep_scaling {
    long n;        /* ranks of the measurement; 0: none */
    double eff;    /* rate(N) / (N x rate(1)); NaN: none */
    long group;    /* the N-rank group; -1: none */
    long cell_n;   /* its cell, and */
    long cell_1;   /* the 1-rank group's cell of the same values */
} rep_scaling;

/* The 1-rank group of group gi's runs (the same job, workload, mode,
 * precision, device and settings: rep_group_same_settings; on gi's host
 * first), or -1. */
long rep_group_one_rank(const rep_model *m, size_t gi);

/* Group gi (ranks > 1) against its 1-rank group: at gi's best cell where
 * the 1-rank group measured its values, else at the matched cell with the
 * highest rate(N).  n = 0: none (ranks 1, no 1-rank group, no cell of the
 * same values measured at both). */
rep_scaling rep_group_scaling(const rep_model *m, size_t gi);

/* Some group measured the 1-rank group g1's runs at more ranks. */
bool rep_group_scaled(const rep_model *m, size_t g1);

/* For cell c of the 1-rank group g1 on an instance of gpus GPUs: the
 * measurement on one node (an instance is one machine) at the most ranks
 * N with 2 <= N <= gpus, at c's values
 * where that group measured them, else its group figure
 * (rep_group_scaling).  n = 0: none. */
rep_scaling rep_scaling_for(const rep_model *m, size_t g1, size_t c, long gpus);

/* Where g1's runs were measured at 2 <= N <= gpus ranks only across
 * several nodes (none on one): that group at the most ranks; else -1. */
long rep_scaling_other_nodes(const rep_model *m, size_t g1, long gpus);

/* "" for a 1-rank group; else one line: the group's efficiency and the
 * cells it is from, or why there is none. */
void rep_scaling_text(const rep_model *m, size_t gi, char *buf, size_t len);

#endif
