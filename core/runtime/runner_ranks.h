/* A cell under several ranks (comm.h): every rank runs it, in step with
 * the others through these agreements on the runner's own channel.  Alone
 * (run->comm NULL, or one rank) each is free and says what alone means. */
#ifndef DLG_RUNNER_RANKS_H
#define DLG_RUNNER_RANKS_H

#include "comm.h"
#include "rank_totals.h"
#include "runner.h"

#include <stdbool.h>
#include <stdint.h>

/* After a repetition's setup (ok: this rank's went well; stopped: it
 * ended early on a stop request, host->stopping()): 1 when every rank's
 * went well.  0 when one failed: every rank's res says "rank K: <K's
 * line>" (the lowest such K) with status error, and the cell ends there.
 * -1 when none failed but some stopped: a stop, as a step's would be.
 * Where any rank stopped, every rank takes its signal as its own
 * (dlg_ranks_share_stop), so that all end the run together.  A stop
 * request that rank 0 waits through here ends every rank (ranks_stop.h). */
int dlg_ranks_all_set_up(dlg_run *run, bool ok, bool stopped, dlg_cell_result *res);

/* A rank that cannot run a cell at all (its plan of the cell or its
 * result could not be made): the agreements every rank takes before the
 * cell's first setup, taken as a rank whose setup failed with res->error,
 * so that the others end the cell with it (rank 0's row names it) instead
 * of meeting this rank's next collective in the place of theirs.  Alone,
 * nothing. */
void dlg_ranks_cell_failed(dlg_run *run, dlg_cell_result *res);

/* A loop of steps (warm-up, timed) ends at the same step on every rank,
 * or one would wait in a workload's collective for a peer that left: the
 * ranks agree whether to end at the gate's steps only, every `every`
 * steps, which they also agree on (about target_ns of steps apart, at the
 * slowest rank's pace), so that the agreement costs next to nothing in
 * the timed loop however short a step is. */
typedef struct dlg_ranks_gate {
    uint64_t at;        /* the step count of the next agreement */
    uint64_t every;     /* steps between two agreements, alike on every rank */
    uint64_t last_steps, last_ns; /* at the last agreement */
    uint64_t target_ns; /* time wanted between two agreements */
} dlg_ranks_gate;
void dlg_ranks_gate_init(dlg_ranks_gate *g, uint64_t target_ns);
/* wish: this rank's 0 go on, 1 done (its duration is over), 2 stop (a
 * signal).  Alone, wish as it is; under several ranks 0 between the
 * gate's steps, and at one the highest wish of any rank.  A stop agreed
 * there is this rank's own from then on: a rank that got no signal
 * raises the one another rank got, so that every rank's row, line and
 * exit status say the run was stopped. */
int dlg_ranks_gate_end(dlg_run *run, dlg_ranks_gate *g, uint64_t steps, uint64_t now_ns, int wish);
/* The stop signal another rank got (sig), made this rank's own. */
void dlg_ranks_share_stop(int sig);

/* A repetition's totals over the ranks: items summed, the slowest rank's
 * timed wall time, stopped when any rank was. */
void dlg_ranks_rep_totals(dlg_run *run, uint64_t *items, uint64_t *wall_ns, bool *stopped);

/* A repetition's figures for the job (rank_totals.h): every rank's own
 * and its CPU set (mask[0..chunks), dlg_cpu_mask_pack; chunks 0: not
 * known) exchanged, then totalled; alone, this rank's own.  Two
 * allreduces: the most chunks any rank's set needs, then a vector of the
 * ranks' figures and masks.  Only where every rank arrives: after timed
 * steps that went well on every rank. */
void dlg_ranks_rep_figs(dlg_run *run, const dlg_rank_figs *own, const double *mask, size_t chunks,
                        dlg_rep_figs *out);

/* A repetition's step latencies (rep: this rank's, reset after) into the
 * cell's (into): under several ranks every rank's, merged by one
 * allreduce of the histograms' sum form (histogram.h), so that the row's
 * percentiles are of all the job's steps; alone, rep's.  Only where every
 * rank arrives, as dlg_ranks_rep_figs. */
void dlg_ranks_rep_latency(dlg_run *run, dlg_histogram *rep, dlg_histogram *into);

/* A rank failed after the ranks agreed to run (in a step, where the others
 * may be waiting for it in a collective): its line, then every rank ends
 * (MPI_Abort).  The cells before are in rank 0's sinks already. */
_Noreturn void dlg_ranks_abort(dlg_run *run, const char *line);
/* An allreduce of the runner's own (DLG_COMM_CTL) in place, or abort every
 * rank with "WHAT failed: why": one left out would leave the others
 * waiting.  One of the agreements around a cell's setup: a stop request
 * that rank 0 waits through ends every rank (ranks_stop.h). */
void dlg_ranks_ctl_reduce(dlg_run *run, void *v, size_t n, dlg_comm_type t, dlg_comm_op op, const char *what);

#endif
