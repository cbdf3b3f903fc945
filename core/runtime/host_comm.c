/* The host's collectives (dlg_host.comm_*): the run's ranks as the
 * workloads see them.  This file is the single-rank engine ("self"); a
 * run under mpirun puts MPI behind the same calls. */
#include <string.h>

#include "host.h"
#include "host_comm.h"

static size_t type_size(dlg_comm_type t) { return t == DLG_COMM_F32 ? 4 : 8; }

static bool type_known(dlg_comm_type t) { return t == DLG_COMM_F32 || t == DLG_COMM_F64 || t == DLG_COMM_I64; }

static void h_comm_info(const dlg_host *h, dlg_rank_info *out)
{
    (void)h;
    *out = (dlg_rank_info){sizeof *out, 0, 1, "self", ""};
}

static int h_comm_allreduce(const dlg_host *h, const void *send, void *recv, size_t count, dlg_comm_type t)
{
    if (!type_known(t))
        return h->error(h, DLG_EINTERNAL, "allreduce: element type %d is not one of dlg_comm_type's", (int)t);
    if (send != recv && count)
        memmove(recv, send, count * type_size(t));
    return 0;
}

static int h_comm_bcast(const dlg_host *h, void *buf, size_t bytes, int root)
{
    (void)buf, (void)bytes;
    if (root != 0)
        return h->error(h, DLG_EINTERNAL, "bcast from rank %d of a run of 1 rank", root);
    return 0;
}

static int h_comm_sendrecv(const dlg_host *h, const void *sbuf, int to, void *rbuf, int from, size_t bytes)
{
    if (to != 0 || from != 0)
        return h->error(h, DLG_EINTERNAL, "sendrecv to rank %d from rank %d in a run of 1 rank", to, from);
    if (sbuf != rbuf && bytes)
        memmove(rbuf, sbuf, bytes);
    return 0;
}

static int h_comm_barrier(const dlg_host *h)
{
    (void)h;
    return 0;
}

void dlg_host_comm_fill(dlg_host *p)
{
    p->comm_info = h_comm_info;
    p->comm_allreduce = h_comm_allreduce;
    p->comm_bcast = h_comm_bcast;
    p->comm_sendrecv = h_comm_sendrecv;
    p->comm_barrier = h_comm_barrier;
}
