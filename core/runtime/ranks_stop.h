/* A stop request (Ctrl-C, a batch system's SIGTERM) while the ranks wait
 * for each other in the agreements around a cell's setup: before the
 * first cell (run_ranks.h), before each cell and after each setup
 * (runner_ranks.h, cpu_share.h).  A rank that waits there for a peer
 * still busy (its plan check, a setup that does not ask stopping(), which
 * under several ranks none may) would wait in MPI for as long as the peer
 * takes.  These agreements wait through comm.h's until instead: rank 0,
 * once it has seen the stop for DLG_RANKS_STOP_GRACE_NS (a peer that got
 * the signal too is there by then, and the agreement carries the stop as
 * before), says one line, closes its sinks and ends every rank with the
 * stop's exit status.  The other ranks wait on: rank 0 speaks and
 * decides, and its sinks hold the rows of the cells before. */
#ifndef DLG_RANKS_STOP_H
#define DLG_RANKS_STOP_H

#include "comm.h"

#include <stdbool.h>
#include <stdint.h>

#define DLG_RANKS_STOP_GRACE_NS 1000000000ull

struct dlg_sinkset;

typedef struct dlg_ranks_wait {
    dlg_comm_until until;
    bool lead;             /* rank 0: the one that gives up */
    uint64_t stop_seen_ns; /* when this wait first saw the stop, 0 not yet */
} dlg_ranks_wait;

/* The until of one agreement's collectives on this rank (every rank
 * passes one: comm.h). */
const dlg_comm_until *dlg_ranks_wait_init(dlg_ranks_wait *w, const dlg_comm *c);

/* Rank 0 gave up waiting in `where` (an agreement's name): its line on
 * stderr, sinks (NULL: none open yet) closed, then every rank ends
 * (MPI_Abort) with 128 + the stop signal, as a run stopped alone exits. */
_Noreturn void dlg_ranks_stop_abort(dlg_comm *c, struct dlg_sinkset *sinks, const char *where);

#endif
