#include "cpu_share.h"

#include "comm.h"
#include "rank_totals.h"
#include "runner_ranks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool known(const double *mask, size_t chunks)
{
    for (size_t c = 0; c < chunks; c++)
        if (mask[c] != 0)
            return true;
    return false;
}

dlg_cpu_share dlg_cpu_share_find(const double *rows, size_t n, size_t chunks, size_t me)
{
    size_t w = 1 + chunks;
    const double *mine = rows + me * w;
    if (!known(mine + 1, chunks))
        return DLG_CPU_SHARE_ALONE;
    dlg_cpu_share s = {0, 0};
    for (size_t r = 0; r < n; r++) {
        const double *row = rows + r * w;
        if (row[0] != mine[0] || memcmp(row + 1, mine + 1, chunks * sizeof *row) != 0)
            continue;
        s.index += r < me;
        s.count++;
    }
    return s;
}

static void exchange(dlg_run *run, void *v, size_t n, dlg_comm_type t, dlg_comm_op op)
{
    dlg_ranks_ctl_reduce(run, v, n, t, op, "the ranks' exchange of their CPU sets");
}

dlg_cpu_share dlg_cpu_share_exchange(dlg_run *run, int node)
{
    int size = dlg_comm_size(run->comm);
    if (size <= 1)
        return DLG_CPU_SHARE_ALONE;
    dlg_cpuset s;
    bool have = dlg_cpuset_init(&s, 0) == 0 && dlg_cpuset_get_affinity(&s) == 0;
    int64_t most = have ? (int64_t)dlg_cpu_mask_chunks(&s) : 0; /* the rows' width, alike on every rank */
    exchange(run, &most, 1, DLG_COMM_I64, DLG_COMM_MAX);
    size_t me = (size_t)dlg_comm_rank(run->comm), n = (size_t)size, w = 1 + (size_t)most;
    /* every other rank's row 0: the sum is every rank's own */
    double *rows = calloc(n * w, sizeof *rows);
    if (!rows) /* the others wait for this rank's row */
        dlg_ranks_abort(run, "out of memory for the ranks' CPU sets");
    rows[me * w] = node;
    if (have)
        dlg_cpu_mask_pack(&s, rows + me * w + 1, (size_t)most);
    dlg_cpuset_fini(&s);
    exchange(run, rows, n * w, DLG_COMM_F64, DLG_COMM_SUM);
    dlg_cpu_share share = dlg_cpu_share_find(rows, n, (size_t)most, me);
    free(rows);
    return share;
}

void dlg_cpu_share_warn(const dlg_cell *cell, dlg_cpu_share share, int avail)
{
    char warn[512], where[600];
    if (share.index != 0 || !dlg_cpus_slices_overlap(cell->core[DLG_K_CPUS].text, avail, share, warn, sizeof warn))
        return;
    dlg_plan_where(cell->job->core_src[DLG_K_CPUS], cell->job->sec, where, sizeof where);
    fprintf(stderr, "dlgauge: %s[job %s] warning: %s\n", where, cell->job->name, warn);
}
