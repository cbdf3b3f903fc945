/* A cell under several ranks (comm.h): every rank runs it, in step with
 * the others through these agreements on the runner's own channel.  Alone
 * (run->comm NULL, or one rank) each is free and says what alone means. */
#ifndef DLG_RUNNER_RANKS_H
#define DLG_RUNNER_RANKS_H

#include "runner.h"

#include <stdbool.h>
#include <stdint.h>

/* After a repetition's setup (ok: this rank's went well): whether every
 * rank's did.  When one did not, every rank's res says "rank K: <K's
 * line>" (the lowest such K) with status error, and the cell ends there. */
bool dlg_ranks_all_set_up(dlg_run *run, bool ok, dlg_cell_result *res);

/* A duration-bound repetition's ranks end at the same step, or one would
 * wait in a workload's collective for a peer that stopped: end is this
 * rank's wish (0 go on, 1 done, 2 stop), the highest one wins. */
int dlg_ranks_end_agreed(dlg_run *run, int end);

/* A repetition's totals over the ranks: items summed, the slowest rank's
 * timed wall time, stopped when any rank was. */
void dlg_ranks_rep_totals(dlg_run *run, uint64_t *items, uint64_t *wall_ns, bool *stopped);

/* A rank failed after the ranks agreed to run (in a step, where the others
 * may be waiting for it in a collective): its line, then every rank ends
 * (MPI_Abort).  The cells before are in rank 0's sinks already. */
_Noreturn void dlg_ranks_abort(dlg_run *run, const char *line);

#endif
