/* The host's collectives (dlg_host.comm_*): the run's ranks as the
 * workloads see them, through comm.h (MPI under a launcher, else alone).
 * An error names the call, what it moved and the engine's own text. */
#include <stdio.h>
#include <string.h>

#include "comm.h"
#include "host.h"
#include "host_comm.h"

/* a call no rank could make is the plugin's bug; else the engine failed */
static int code(int rc) { return rc == -DLG_EINTERNAL ? DLG_EINTERNAL : DLG_EIO; }

static dlg_comm *comm_of(const dlg_host *h) { return ((const dlg_host_impl *)h->ctx)->svc->comm; }

static void h_comm_info(const dlg_host *h, dlg_rank_info *out) { dlg_comm_info(comm_of(h), out); }

static int h_comm_allreduce(const dlg_host *h, const void *send, void *recv, size_t count, dlg_comm_type t)
{
    char why[768];
    int rc = dlg_comm_allreduce(comm_of(h), DLG_COMM_WORK, send, recv, count, t, DLG_COMM_SUM, why, sizeof why);
    if (rc == 0)
        return 0;
    return h->error(h, code(rc), "allreduce of %zu %s elements: %s", count, dlg_comm_type_name(t), why);
}

static int h_comm_bcast(const dlg_host *h, void *buf, size_t bytes, int root)
{
    char why[768];
    int rc = dlg_comm_bcast(comm_of(h), DLG_COMM_WORK, buf, bytes, root, why, sizeof why);
    if (rc == 0)
        return 0;
    return h->error(h, code(rc), "bcast of %zu bytes from rank %d: %s", bytes, root, why);
}

static int h_comm_sendrecv(const dlg_host *h, const void *sbuf, int to, void *rbuf, int from, size_t bytes)
{
    char why[768];
    int rc = dlg_comm_sendrecv(comm_of(h), sbuf, to, rbuf, from, bytes, why, sizeof why);
    if (rc == 0)
        return 0;
    return h->error(h, code(rc), "sendrecv of %zu bytes to rank %d from rank %d: %s", bytes, to, from, why);
}

static int h_comm_barrier(const dlg_host *h)
{
    char why[768];
    int rc = dlg_comm_barrier(comm_of(h), why, sizeof why);
    if (rc == 0)
        return 0;
    return h->error(h, code(rc), "barrier: %s", why);
}

void dlg_host_comm_fill(dlg_host *p)
{
    p->comm_info = h_comm_info;
    p->comm_allreduce = h_comm_allreduce;
    p->comm_bcast = h_comm_bcast;
    p->comm_sendrecv = h_comm_sendrecv;
    p->comm_barrier = h_comm_barrier;
}
