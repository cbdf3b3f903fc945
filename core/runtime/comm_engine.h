/* The engine behind comm.c: comm_mpi.c, or comm_nompi.c in a build
 * without MPI (DLG_WITH_MPI=OFF).  comm.c handles a NULL comm (alone) and
 * checks ranks and types; these only ever see an open one. */
#ifndef DLG_COMM_ENGINE_H
#define DLG_COMM_ENGINE_H

#include "comm.h"

/* launcher: the variable that says this process was launched */
int dlg_engine_open(dlg_comm **out, const char *launcher, char *why, size_t len);
void dlg_engine_close(dlg_comm *c);
_Noreturn void dlg_engine_abort(dlg_comm *c, int code);
void dlg_engine_info(const dlg_comm *c, dlg_rank_info *out);
void dlg_engine_node(const dlg_comm *c, int *node, int *nodes);
void dlg_engine_library(char *buf, size_t len);
/* u: comm.h's dlg_comm_until, NULL to block */
int dlg_engine_allreduce(dlg_comm *c, dlg_comm_chan ch, const void *send, void *recv, size_t count,
                         dlg_comm_type t, dlg_comm_op op, const dlg_comm_until *u, char *why, size_t len);
int dlg_engine_bcast(dlg_comm *c, dlg_comm_chan ch, void *buf, size_t bytes, int root, const dlg_comm_until *u,
                     char *why, size_t len);
int dlg_engine_sendrecv(dlg_comm *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes, char *why,
                        size_t len);
int dlg_engine_barrier(dlg_comm *c, char *why, size_t len);

#endif
