/* State of one `dlgauge run`: the plan, the sinks, identity of the run. */
#ifndef DLG_RUN_H
#define DLG_RUN_H

#include "plan.h"

#include <stdbool.h>

struct dlg_sinkset;
struct dlg_comm;

typedef struct dlg_run dlg_run;
/* Where a cell's points go: the sinks (in-process) or the parent (child). */
typedef void (*dlg_emit_fn)(dlg_run *run, const dlg_point *p);

struct dlg_run {
    dlg_plan *plan;
    struct dlg_sinkset *sinks;
    dlg_emit_fn emit;
    int wire_fd;        /* a cell child's pipe to its parent, else -1 */
    char run_id[DLG_RUN_ID_MAX + 1];
    char host[256];
    int verbosity;
    bool tty;           /* stderr is a terminal: draw a progress line */
    size_t cell_no;     /* 1-based number of the cell running, over the run */
    /* the job "limits not enforced" was said of last: said once per job,
     * so a later job's unenforced limit is not left unsaid */
    const dlg_job *limits_warned_job;
    char config_id[20]; /* dlg_journal_config_id of the planned configuration */
    struct dlg_comm *comm; /* the run's ranks (comm.h); NULL: this process alone */
};

#endif
