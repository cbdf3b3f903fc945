/* A cell under several ranks: the runner's agreements (runner_ranks.h). */
#include "runner_ranks.h"

#include "comm.h"
#include "cpu_share.h"
#include "histogram.h"
#include "ranks_stop.h"
#include "signals.h"
#include "sinkset.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1: dlgauge's exit status for a failed measurement (DLG_EXIT_FAILED) */
#define ABORT_STATUS 1
/* as long as a run's end gives its sinks (cmd_run.c) */
#define SINK_CLOSE_NS (10ull * 1000000000ull)

static bool alone(const dlg_run *run) { return dlg_comm_size(run->comm) <= 1; }

/* The runner's own collectives cannot be left half done: a rank that could
 * not take part would leave the others waiting.  setup: one of the
 * agreements around a cell's setup, which a stop request on rank 0 ends
 * (ranks_stop.h); those of the steps block (a peer is a step away). */
static void reduce_or_abort(dlg_run *run, void *v, size_t n, dlg_comm_type t, dlg_comm_op op, const char *what,
                            bool setup)
{
    char why[768], line[1024];
    dlg_ranks_wait w;
    const dlg_comm_until *u = setup ? dlg_ranks_wait_init(&w, run->comm) : NULL;
    int rc = dlg_comm_allreduce_until(run->comm, DLG_COMM_CTL, v, v, n, t, op, u, why, sizeof why);
    if (rc == 0)
        return;
    if (rc == -DLG_ESTOP)
        dlg_ranks_stop_abort(run->comm, run->sinks, what);
    snprintf(line, sizeof line, "%s failed: %s", what, why);
    dlg_ranks_abort(run, line);
}

void dlg_ranks_ctl_reduce(dlg_run *run, void *v, size_t n, dlg_comm_type t, dlg_comm_op op, const char *what)
{
    reduce_or_abort(run, v, n, t, op, what, true);
}

static void ctl_reduce(dlg_run *run, void *v, size_t n, dlg_comm_type t, dlg_comm_op op)
{
    reduce_or_abort(run, v, n, t, op, "the runner's agreement between ranks", false);
}

static void ctl_allreduce(dlg_run *run, int64_t *v, size_t n, dlg_comm_op op)
{
    ctl_reduce(run, v, n, DLG_COMM_I64, op);
}

#define SET_UP "the ranks' agreement that each set the cell up"

int dlg_ranks_all_set_up(dlg_run *run, bool ok, bool stopped, dlg_cell_result *res)
{
    if (alone(run))
        return ok ? 1 : stopped ? -1 : 0;
    int me = dlg_comm_rank(run->comm), size = dlg_comm_size(run->comm);
    bool failed_here = !ok && !stopped;
    /* one reduction (all MIN): some rank not set up; the first that
     * failed; the highest signal a stopped rank got, negated */
    int64_t v[3] = {ok ? size : me, failed_here ? me : size, stopped ? -(int64_t)dlg_stop_signal() : 0};
    dlg_ranks_ctl_reduce(run, v, 3, DLG_COMM_I64, DLG_COMM_MIN, SET_UP);
    if (v[0] >= size)
        return 1;
    if (v[2] < 0)
        dlg_ranks_share_stop((int)-v[2]);
    if (v[1] >= size)
        return -1;
    int64_t first = v[1], failed = failed_here ? 1 : 0;
    dlg_ranks_ctl_reduce(run, &failed, 1, DLG_COMM_I64, DLG_COMM_SUM, SET_UP);
    /* rank `first`'s own line and status (error, or oom), as its row would
     * have said them alone */
    struct {
        char oom;
        char text[sizeof res->error];
    } said = {me == first && res->status && strcmp(res->status, "oom") == 0, ""};
    char *text = said.text, why[768];
    snprintf(text, sizeof said.text, "%s", me == first ? res->error : "");
    dlg_ranks_wait w;
    int rc = dlg_comm_bcast_until(run->comm, DLG_COMM_CTL, &said, sizeof said, (int)first,
                                  dlg_ranks_wait_init(&w, run->comm), why, sizeof why);
    if (rc == -DLG_ESTOP)
        dlg_ranks_stop_abort(run->comm, run->sinks, SET_UP);
    if (rc != 0) {
        char line[1024];
        snprintf(line, sizeof line, "the runner's agreement between ranks failed: %s", why);
        dlg_ranks_abort(run, line);
    }
    text[sizeof said.text - 1] = '\0';
    char more[96] = "";
    if (failed > 1)
        snprintf(more, sizeof more, " (and %" PRId64 " more rank%s failed to set up)", failed - 1,
                 failed > 2 ? "s" : "");
    snprintf(res->error, sizeof res->error, "rank %d: %s%s", (int)first, text, more);
    res->status = said.oom ? "oom" : "error";
    return 0;
}

void dlg_ranks_cell_failed(dlg_run *run, dlg_cell_result *res)
{
    if (alone(run))
        return;
    int node, nodes;
    dlg_comm_node(run->comm, &node, &nodes);
    (void)dlg_cpu_share_exchange(run, node); /* as the runner's first step for a cell (runner.c) */
    dlg_ranks_all_set_up(run, false, false, res);
}

void dlg_ranks_gate_init(dlg_ranks_gate *g, uint64_t target_ns)
{
    *g = (dlg_ranks_gate){.at = 0, .every = 1, .target_ns = target_ns ? target_ns : 1};
}

/* The steps this rank would have between two agreements: as many as fit
 * in target_ns at its pace since the last one, at most twice the last
 * count (a fast start does not stretch the next wait). */
static uint64_t gate_proposal(const dlg_ranks_gate *g, uint64_t steps, uint64_t now_ns)
{
    uint64_t most = g->every < (UINT64_C(1) << 40) ? 2 * g->every : g->every;
    if (steps <= g->last_steps || now_ns <= g->last_ns)
        return most;
    double per_step = (double)(now_ns - g->last_ns) / (double)(steps - g->last_steps);
    double fit = (double)g->target_ns / per_step;
    return fit < 1 ? 1 : fit < (double)most ? (uint64_t)fit : most;
}

int dlg_ranks_gate_end(dlg_run *run, dlg_ranks_gate *g, uint64_t steps, uint64_t now_ns, int wish)
{
    if (alone(run))
        return wish;
    if (steps < g->at)
        return 0;
    /* the highest wish and signal, and the fewest steps to the next */
    int64_t v[3] = {wish, dlg_stop_signal(), -(int64_t)gate_proposal(g, steps, now_ns)};
    ctl_allreduce(run, v, 3, DLG_COMM_MAX);
    dlg_ranks_share_stop((int)v[1]);
    g->every = (uint64_t)-v[2];
    g->at = steps + g->every;
    g->last_steps = steps;
    g->last_ns = now_ns;
    return (int)v[0];
}

void dlg_ranks_share_stop(int sig)
{
    struct sigaction sa;
    if (sig <= 0 || dlg_stop_signal() || sigaction(sig, NULL, &sa) != 0)
        return;
    /* through the run's own handler (signals.c), which only notes it; not
     * where none is installed, which would end the process */
    if ((sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
        raise(sig);
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

void dlg_ranks_rep_figs(dlg_run *run, const dlg_rank_figs *own, const double *mask, size_t chunks,
                        dlg_rep_figs *out)
{
    if (alone(run)) {
        dlg_rank_figs_total(own, 1, mask, chunks, out);
        return;
    }
    int64_t most = (int64_t)chunks; /* the mask's length, alike on every rank */
    ctl_allreduce(run, &most, 1, DLG_COMM_MAX);
    size_t me = (size_t)dlg_comm_rank(run->comm), n = (size_t)dlg_comm_size(run->comm), c = (size_t)most;
    /* the ranks' figures, then their masks; every other rank's slot 0:
     * the sum is every rank's own */
    double *v = calloc(n * (DLG_RANK_FIGS_DOUBLES + c), sizeof *v);
    if (!v) /* the others wait for this rank's figures */
        dlg_ranks_abort(run, "out of memory for the ranks' figures of a repetition");
    dlg_rank_figs *all = (dlg_rank_figs *)v;
    double *masks = v + n * DLG_RANK_FIGS_DOUBLES;
    all[me] = *own;
    if (chunks)
        memcpy(masks + me * c, mask, chunks * sizeof *mask);
    ctl_reduce(run, v, n * (DLG_RANK_FIGS_DOUBLES + c), DLG_COMM_F64, DLG_COMM_SUM);
    dlg_rank_figs_total(all, n, masks, c, out);
    free(v);
}

void dlg_ranks_rep_latency(dlg_run *run, dlg_histogram *rep, dlg_histogram *into)
{
    if (!alone(run)) {
        size_t n = (size_t)dlg_comm_size(run->comm), nw = dlg_hist_sum_words(n);
        int64_t *w = malloc(nw * sizeof *w);
        if (!w) /* the others wait for this rank's latencies */
            dlg_ranks_abort(run, "out of memory for the ranks' step latencies of a repetition");
        dlg_hist_to_sum(rep, (size_t)dlg_comm_rank(run->comm), n, w);
        ctl_allreduce(run, w, nw, DLG_COMM_SUM);
        dlg_hist_from_sum(rep, w, n);
        free(w);
    }
    dlg_hist_merge(into, rep);
    dlg_hist_reset(rep);
}

_Noreturn void dlg_ranks_abort(dlg_run *run, const char *line)
{
    fprintf(stderr, "dlgauge: %s; every rank stops here (MPI_Abort): the rows of the cells before are kept, "
            "dlgauge run --resume measures this one again\n", line);
    /* rank 0's sinks: what a sink holds back (influx's batch) is sent or
     * spooled before MPI_Abort ends this process */
    if (run->sinks)
        dlg_sinkset_close(run->sinks, SINK_CLOSE_NS);
    dlg_comm_abort(run->comm, ABORT_STATUS);
}
