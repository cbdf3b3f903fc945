/* The run's ranks (DESIGN.md "Beyond one machine"): MPI when a launcher
 * (mpirun, srun) started this process, else this process alone ("self").
 * A NULL dlg_comm is the process alone: every call below takes it. */
#ifndef DLG_COMM_H
#define DLG_COMM_H

#include <dlgauge/plugin.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct dlg_comm dlg_comm;

typedef enum dlg_comm_op { DLG_COMM_SUM, DLG_COMM_MAX, DLG_COMM_MIN } dlg_comm_op;

/* Whose collectives: the workloads' (host->comm_*) or the runner's own,
 * kept apart so that one never matches the other's messages. */
typedef enum dlg_comm_chan { DLG_COMM_WORK, DLG_COMM_CTL } dlg_comm_chan;

/* dlg_comm_open's -1: launched, but this dlgauge was built without MPI. */
#define DLG_COMM_NOT_BUILT (-2)

/* Whether a launcher started this process as one of its ranks; var gets
 * the variable that says so ("OMPI_COMM_WORLD_SIZE=2"). */
bool dlg_comm_launched(char *var, size_t len);

/* This process's rank as its launcher's environment says it (read
 * without opening MPI), 0 without a launcher. */
int dlg_comm_launched_rank(void);

/* Opens the ranks: *out = NULL and 0 without a launcher (nothing is
 * initialised); MPI under one.  -1 (or DLG_COMM_NOT_BUILT) with why. */
int dlg_comm_open(dlg_comm **out, char *why, size_t len);
/* MPI_Finalize; NULL is fine.  Every rank calls it. */
void dlg_comm_close(dlg_comm *c);
/* Ends every rank at once (MPI_Abort), after stdout and stderr are out. */
_Noreturn void dlg_comm_abort(dlg_comm *c, int code);

int dlg_comm_rank(const dlg_comm *c);
int dlg_comm_size(const dlg_comm *c);
void dlg_comm_info(const dlg_comm *c, dlg_rank_info *out);
/* This rank's node (the ranks that share its memory, as local_rank counts
 * them): its index, 0 for rank 0's and numbered in the order of each
 * node's lowest rank, and how many nodes the run's ranks are on; 0 and 1
 * alone. */
void dlg_comm_node(const dlg_comm *c, int *node, int *nodes);
/* The engine's version line ("Open MPI v4.1.4, ..."), "" without MPI;
 * needs no open comm. */
void dlg_comm_library(char *buf, size_t len);
const char *dlg_comm_type_name(dlg_comm_type t);
size_t dlg_comm_type_size(dlg_comm_type t);

/* How a collective waits for its peers: NULL blocks inside MPI until they
 * come (no signal ends that wait); else the call asks give_up(ctx) every
 * millisecond or so while it waits, and leaves with -DLG_ESTOP where it
 * says true: the collective stays unfinished, so that rank can only end
 * the ranks (dlg_comm_abort).  Every rank of one collective passes an
 * until or none alike (MPI matches a nonblocking collective with
 * nonblocking ones only); a rank that never gives up passes one whose
 * give_up says false. */
typedef struct dlg_comm_until {
    bool (*give_up)(void *ctx);
    void *ctx;
} dlg_comm_until;

/* Each returns 0, or with why: -DLG_EINTERNAL for arguments no call may
 * have (a rank not in the run, an unknown type) or a call from a thread
 * other than the one that opened MPI, -1 for the engine's failure
 * ("MPI_Allreduce: <MPI's error text>"). */
int dlg_comm_allreduce(dlg_comm *c, dlg_comm_chan ch, const void *send, void *recv, size_t count, dlg_comm_type t,
                       dlg_comm_op op, char *why, size_t len);
int dlg_comm_bcast(dlg_comm *c, dlg_comm_chan ch, void *buf, size_t bytes, int root, char *why, size_t len);
/* The same, waiting as u says (NULL: as the calls above). */
int dlg_comm_allreduce_until(dlg_comm *c, dlg_comm_chan ch, const void *send, void *recv, size_t count,
                             dlg_comm_type t, dlg_comm_op op, const dlg_comm_until *u, char *why, size_t len);
int dlg_comm_bcast_until(dlg_comm *c, dlg_comm_chan ch, void *buf, size_t bytes, int root, const dlg_comm_until *u,
                         char *why, size_t len);
int dlg_comm_sendrecv(dlg_comm *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes, char *why,
                      size_t len);
int dlg_comm_barrier(dlg_comm *c, char *why, size_t len);

#endif
