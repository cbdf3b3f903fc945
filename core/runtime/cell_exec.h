/* Runs one cell in a fresh child process (fork + exec of dlgauge itself,
 * `dlgauge __cell ...`): the child pins itself, joins the cell's cgroup,
 * runs the cell and sends its progress and result points through a pipe.
 * A crash, an OOM kill or a hang stays in the child; the parent reports it. */
#ifndef DLG_CELL_EXEC_H
#define DLG_CELL_EXEC_H

#include "cgroup.h"
#include "point_wire.h"

#include <stdbool.h>

/* The fd number the child finds its pipe on. */
#define DLG_CELL_FD 3
/* Exit code of a child that could not join its cgroup (it ran nothing). */
#define DLG_CELL_EXIT_CGROUP 125
/* Exit code of a child whose first allocation failed, before it could
 * send a result (its row: status oom, as any other out of memory). */
#define DLG_CELL_EXIT_NOMEM 123

typedef struct dlg_cell_spawn {
    const char *exe;           /* dlgauge's own path, or /proc/self/exe once that file was replaced */
    char *const *argv;         /* the child's whole argv */
    const dlg_cgroup *cg;      /* cgroup to enter, or NULL */
    int threads;               /* OMP/BLAS thread count to export, 0 = the CPUs this process may use */
    uint64_t timeout_ns;       /* 0 = none */
} dlg_cell_spawn;

typedef struct dlg_cell_outcome {
    bool have_result;
    dlg_wire_point result;     /* the child's dlgauge_result point */
    bool frame_lost;           /* a point the child sent was lost: no memory here to receive it */
    bool timed_out;
    int term_signal;           /* signal that ended the child, 0 if none */
    int exit_code;             /* when it exited, else -1 */
    double wall_s;             /* the child's lifetime */
    int64_t system_oom_kills;  /* OOM kills on the machine meanwhile, any cgroup's; -1 unknown */
} dlg_cell_outcome;

typedef void (*dlg_progress_cb)(void *ctx, const dlg_point *p);

/* Returns 0 when the child ran (whatever became of it), -1 with err[] when
 * it could not be started. */
int dlg_cell_exec(const dlg_cell_spawn *sp, dlg_progress_cb on_progress, void *ctx, dlg_cell_outcome *out,
                  char *err, size_t errlen);
void dlg_cell_outcome_free(dlg_cell_outcome *o);

#endif
