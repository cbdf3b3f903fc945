/* The comm engine of a build without MPI (DLG_WITH_MPI=OFF): alone only.
 * A launcher's N copies of this dlgauge would each run the whole job and
 * write its results N times over, so a launched one refuses to run. */
#include "comm_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int dlg_engine_open(dlg_comm **out, const char *launcher, char *why, size_t len)
{
    *out = NULL;
    snprintf(why, len, "started by an MPI launcher (%s), but this dlgauge was built without MPI "
             "(DLG_WITH_MPI=OFF): each rank would run the whole job alone; run it without mpirun, or rebuild "
             "with -DDLG_WITH_MPI=ON (packages: scripts/deps/mpi.txt)", launcher);
    return DLG_COMM_NOT_BUILT;
}

/* Never reached: without MPI no comm is ever open. */
void dlg_engine_close(dlg_comm *c) { (void)c; }

_Noreturn void dlg_engine_abort(dlg_comm *c, int code)
{
    (void)c;
    exit(code);
}

void dlg_engine_info(const dlg_comm *c, dlg_rank_info *out)
{
    (void)c;
    *out = (dlg_rank_info){sizeof *out, 0, 1, "self", "", .local_rank = 0, .local_size = 1,
                           .node_key = (uint64_t)getpid()}; /* alone: nothing is shared */
}

void dlg_engine_node(const dlg_comm *c, int *node, int *nodes)
{
    (void)c;
    *node = 0;
    *nodes = 1;
}

void dlg_engine_library(char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
}

static int none(char *why, size_t len)
{
    snprintf(why, len, "built without MPI");
    return -1;
}

int dlg_engine_allreduce(dlg_comm *c, dlg_comm_chan ch, const void *send, void *recv, size_t count,
                         dlg_comm_type t, dlg_comm_op op, const dlg_comm_until *u, char *why, size_t len)
{
    (void)c, (void)ch, (void)send, (void)recv, (void)count, (void)t, (void)op, (void)u;
    return none(why, len);
}

int dlg_engine_bcast(dlg_comm *c, dlg_comm_chan ch, void *buf, size_t bytes, int root, const dlg_comm_until *u,
                     char *why, size_t len)
{
    (void)c, (void)ch, (void)buf, (void)bytes, (void)root, (void)u;
    return none(why, len);
}

int dlg_engine_sendrecv(dlg_comm *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes, char *why,
                        size_t len)
{
    (void)c, (void)sbuf, (void)to, (void)rbuf, (void)from, (void)bytes;
    return none(why, len);
}

int dlg_engine_barrier(dlg_comm *c, char *why, size_t len)
{
    (void)c;
    return none(why, len);
}
