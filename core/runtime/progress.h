/* Live progress: a line on stderr when it is a terminal, and a
 * dlgauge_progress point to the sinks about once a second. */
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
    bool drawn;
} dlg_progress;

void dlg_progress_begin(dlg_progress *p, dlg_run *run, const dlg_cell *cell, int rep, int reps,
                        uint64_t start_ns, uint64_t iterations, uint64_t duration_ns);
/* Cheap unless a second has passed since the last report. */
void dlg_progress_tick(dlg_progress *p, uint64_t now_ns, uint64_t steps, uint64_t items);
void dlg_progress_end(dlg_progress *p);

#endif
