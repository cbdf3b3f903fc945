/* Measures one cell for `dlgauge run`, in a child process or in-process,
 * and returns its finished dlgauge_result point whatever became of it. */
#ifndef DLG_CELL_MEASURE_H
#define DLG_CELL_MEASURE_H

#include "cli.h"
#include "point_wire.h"
#include "run.h"

typedef struct dlg_run_args {
    const char *file;
    const char *jobs[64]; /* --job, repeatable */
    size_t njobs;
    const char *sets[64];
    size_t nsets;
    bool dry_run;
    bool resume;
} dlg_run_args;

/* Fills out (an owned point) for cell k of job; returns its status. */
const char *dlg_measure_cell(dlg_run *run, const dlg_cli *cli, const dlg_run_args *a, const dlg_job *job,
                             size_t k, dlg_wire_point *out);

#endif
