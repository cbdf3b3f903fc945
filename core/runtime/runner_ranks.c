/* A cell under several ranks: the runner's agreements (runner_ranks.h). */
#include "runner_ranks.h"

#include "comm.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* 1: dlgauge's exit status for a failed measurement (DLG_EXIT_FAILED) */
#define ABORT_STATUS 1

static bool alone(const dlg_run *run) { return dlg_comm_size(run->comm) <= 1; }

/* The runner's own collectives cannot be left half done: a rank that could
 * not take part would leave the others waiting. */
static void ctl_allreduce(dlg_run *run, int64_t *v, size_t n, dlg_comm_op op)
{
    char why[768], line[1024];
    if (dlg_comm_allreduce(run->comm, DLG_COMM_CTL, v, v, n, DLG_COMM_I64, op, why, sizeof why) == 0)
        return;
    snprintf(line, sizeof line, "the runner's agreement between ranks failed: %s", why);
    dlg_ranks_abort(run, line);
}

bool dlg_ranks_all_set_up(dlg_run *run, bool ok, dlg_cell_result *res)
{
    if (alone(run))
        return ok;
    int me = dlg_comm_rank(run->comm), size = dlg_comm_size(run->comm);
    int64_t first = ok ? size : me, failed = ok ? 0 : 1;
    ctl_allreduce(run, &first, 1, DLG_COMM_MIN);
    if (first >= size)
        return true;
    ctl_allreduce(run, &failed, 1, DLG_COMM_SUM);
    /* rank `first`'s own line, as its row would have said it alone */
    char text[sizeof res->error], why[768];
    snprintf(text, sizeof text, "%s", me == first ? res->error : "");
    if (dlg_comm_bcast(run->comm, DLG_COMM_CTL, text, sizeof text, (int)first, why, sizeof why) != 0) {
        char line[1024];
        snprintf(line, sizeof line, "the runner's agreement between ranks failed: %s", why);
        dlg_ranks_abort(run, line);
    }
    text[sizeof text - 1] = '\0';
    char more[96] = "";
    if (failed > 1)
        snprintf(more, sizeof more, " (and %" PRId64 " more rank%s failed to set up)", failed - 1,
                 failed > 2 ? "s" : "");
    snprintf(res->error, sizeof res->error, "rank %d: %s%s", (int)first, text, more);
    res->status = "error";
    return false;
}

int dlg_ranks_end_agreed(dlg_run *run, int end)
{
    if (alone(run))
        return end;
    int64_t v = end;
    ctl_allreduce(run, &v, 1, DLG_COMM_MAX);
    return (int)v;
}

void dlg_ranks_rep_totals(dlg_run *run, uint64_t *items, uint64_t *wall_ns, bool *stopped)
{
    if (alone(run))
        return;
    int64_t sum = (int64_t)*items, max[2] = {(int64_t)*wall_ns, *stopped ? 1 : 0};
    ctl_allreduce(run, &sum, 1, DLG_COMM_SUM);
    ctl_allreduce(run, max, 2, DLG_COMM_MAX);
    *items = (uint64_t)sum;
    *wall_ns = (uint64_t)max[0];
    *stopped = max[1] != 0;
}

_Noreturn void dlg_ranks_abort(dlg_run *run, const char *line)
{
    fprintf(stderr, "dlgauge: %s; every rank stops here (MPI_Abort): the rows of the cells before are kept, "
            "dlgauge run --resume measures this one again\n", line);
    dlg_comm_abort(run->comm, ABORT_STATUS);
}
