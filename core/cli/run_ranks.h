/* `dlgauge run` under several ranks (core/runtime/comm.h): what the ranks
 * agree on around the cells, and whose output goes where.  Rank 0 plans,
 * measures and writes results as a run alone does; the others plan and
 * measure the same cells in step with it and print only their errors. */
#ifndef DLG_RUN_RANKS_H
#define DLG_RUN_RANKS_H

#include "comm.h"
#include "plan.h"
#include "run.h"

#include <stdbool.h>
#include <stdio.h>

/* A rank > 0's stderr: each line it writes through stdio starts "rank N: ".
 * Nothing to do for rank 0.  _end gives stdio back its stderr but keeps
 * the prefixing FILE open until the process ends: a library loaded
 * meanwhile may hold it (libstdc++'s std::cerr takes the stderr of the
 * moment it is loaded, by a plugin, and flushes it at exit). */
typedef struct dlg_rank_stderr {
    FILE *saved; /* stderr before; NULL: unchanged */
} dlg_rank_stderr;
void dlg_rank_stderr_begin(dlg_rank_stderr *rs, int rank);
void dlg_rank_stderr_end(dlg_rank_stderr *rs);

/* 0 when every rank is ready for the first cell (status 0: this one is,
 * else the exit status it would end with, and err says why), else the
 * run's exit status, the same on every rank: the highest (a file to fix,
 * 2, over out of memory, 1).  Ready means with the same plan (NULL: none
 * yet) as rank 0's: the same
 * jobs, with as many cells each, each with the same values but cpus and
 * paths, or the ranks would fall out of step, or rank 0's row would say
 * values another rank did not run (a rank that differs names the first).  A
 * failing rank prints its line, except one that says what rank 0's said
 * already (the same file read by every rank).  A stop request that rank 0
 * waits through here for a peer still busy (its plan check) ends every
 * rank (ranks_stop.h). */
int dlg_ranks_ready(dlg_comm *c, int status, const char *err, const dlg_plan *plan);

/* Under several ranks a cell runs in dlgauge's own process, which is the
 * rank: isolation = process would run it in a child that is none.  0, or
 * -1 with err naming the job and its isolation line. */
int dlg_ranks_check_isolation(const dlg_plan *plan, int ranks, char *err, size_t errlen);

/* What the ranks decided for the next cell (DLG_CELL_*): rank 0's word
 * (run or skip, as its journal says), or stop where any rank says so.  A
 * stop that rank 0 waits through for a peer still busy ends every rank
 * (ranks_stop.h), after rank 0's sinks are closed. */
enum { DLG_CELL_RUN = 0, DLG_CELL_SKIP = 1, DLG_CELL_STOP = 2 };
int dlg_ranks_cell_action(dlg_run *run, int action);

/* The run's exit status: rank 0's, on every rank. */
int dlg_ranks_exit_status(dlg_comm *c, int status);

#endif
