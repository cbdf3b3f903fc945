/* Live progress: a line on stderr when it is a terminal, and a
 * dlgauge_progress point to the sinks about once a second (rank 0's, with
 * the job's items_per_s under several ranks). */
#ifndef DLG_PROGRESS_H
#define DLG_PROGRESS_H

#include "plan.h"
#include "run.h"

#include <stdint.h>

typedef struct dlg_progress {
    dlg_run *run;
    const dlg_cell *cell;
    int rep, reps;
    uint64_t start_ns, last_ns, last_steps, last_items;
    uint64_t iterations;   /* 0: duration-bound */
    uint64_t duration_ns;
    double items_scale; /* items_per_s is this rank's rate times this: 1 from begin */
    bool drawn;
} dlg_progress;

/* The job's items per item of this rank's, from what every rank did in the
 * same steps (a repetition's warm-up: own_items this rank's), for
 * items_per_s to be the job's rate, as the row's items are the ranks' sum.
 * Where this rank counted none, the ranks count (every rank alike); 1
 * alone.
 * Under several ranks a collective that every rank calls. */
double dlg_progress_items_scale(dlg_run *run, uint64_t own_items);

void dlg_progress_begin(dlg_progress *p, dlg_run *run, const dlg_cell *cell, int rep, int reps,
                        uint64_t start_ns, uint64_t iterations, uint64_t duration_ns);
/* Cheap unless a second has passed since the last report. */
void dlg_progress_tick(dlg_progress *p, uint64_t now_ns, uint64_t steps, uint64_t items);
void dlg_progress_end(dlg_progress *p);

#endif
