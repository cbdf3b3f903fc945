/* The comm workloads on a GPU: the buffers in device memory, NCCL's
 * allreduce and send/recv on them through the nn library's dlg_dev_*, a
 * step's ops timed together between two events on the device's stream.
 * The pattern goes up and the result comes down through the host buffers
 * of comm_buf.c, untimed, so the check is the host path's. */
#include "comm.h"

#include <dlgauge/nn.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda/cuda_device.h"

_Static_assert(COMM_MAX_GPUS == DLG_CUDA_MAX_DEVICES, "comm.h's COMM_MAX_GPUS follows core/nn");

struct comm_dev {
    const dlg_host *h;
    dlg_dev *dev;
    void *send, *recv; /* device memory, freed by dlg_dev_close */
    size_t count, bytes;
    dlg_dev_type type;
    int rank, size;
    bool joined;
    char name[16];
};

const char *comm_dev_name(const comm_dev *d) { return d->name; }

/* One line: what failed, on which device, and the library's reason. */
static int fail(comm_dev *d, const char *what, int rc)
{
    const char *why = d->dev ? dlg_dev_error(d->dev) : "";
    if (!why || !*why) /* the host's own error (a bcast): already told */
        return rc;
    return d->h->error(d->h, -rc, "%s on %s: %s", what, d->name, why);
}

/* The device named, chosen and checked as the nn workloads choose theirs
 * (a bare "cuda": GPU local rank mod the GPUs, as nccl-tests and
 * PyTorch), opened. */
static int open_device(comm_dev *d, const char *device)
{
    const dlg_host *h = d->h;
    char err[768];
    int index;
    int rc = comm_device_parse(device, &index, err, sizeof err);
    if (rc < 0)
        return h->error(h, -rc, "%s", err);
    const char *from, *backend;
    int local = comm_local_rank(h, d->rank, &from);
    char note[160];
    rc = dlg_device_backend(device, NULL, local, "cpu", &backend, note, sizeof note, err, sizeof err);
    if (rc < 0)
        return h->error(h, -rc, "%s", err);
    snprintf(d->name, sizeof d->name, "%s", backend); /* "cuda:N": precision fp32 */
    if (note[0])
        h->log(h, DLG_LOG_INFO, "%s (local rank from %s)", note, from);
    if ((rc = dlg_dev_open(backend, &d->dev, err, sizeof err)) < 0) {
        d->dev = NULL;
        return h->error(h, -rc, "device = %s: %s", d->name, err);
    }
    return 0;
}

static const dlg_dev_type dev_types[] = {[DLG_COMM_F32] = DLG_DEV_F32, [DLG_COMM_F64] = DLG_DEV_F64,
                                          [DLG_COMM_I64] = DLG_DEV_I64};

int comm_dev_open(const dlg_host *h, const char *device, const comm_bufs *b, const char *who, comm_dev **out)
{
    *out = NULL;
    comm_dev *d = calloc(1, sizeof *d);
    if (!d)
        return h->error(h, DLG_ENOMEM, "out of memory");
    *d = (comm_dev){.h = h, .count = b->count, .bytes = b->count * b->elem, .type = dev_types[b->type],
                    .rank = b->rank, .size = b->size};
    int rc = open_device(d, device);
    if (rc == 0) {
        d->send = dlg_dev_alloc(d->dev, d->bytes);
        d->recv = d->send ? dlg_dev_alloc(d->dev, d->bytes) : NULL;
        if (!d->recv)
            rc = h->error(h, DLG_ENOMEM, "%s: cannot allocate the send and receive buffers (2 x %zu bytes) on %s",
                          who, d->bytes, d->name);
    }
    if (rc == 0 && ((rc = dlg_dev_upload(d->dev, d->send, b->send, d->bytes)) < 0 ||
                    (rc = dlg_dev_upload(d->dev, d->recv, b->recv, d->bytes)) < 0 ||
                    (rc = dlg_dev_sync(d->dev)) < 0))
        rc = fail(d, "filling the buffers", rc);
    /* across ranks the runner's agreement after setup names a rank whose
     * NCCL does not load, where the first step's join would leave the
     * others waiting in NCCL's init */
    if (rc == 0 && d->size > 1 && (rc = dlg_dev_coll_probe(d->dev)) < 0)
        rc = fail(d, "loading NCCL for the ranks' communicator", rc);
    if (rc < 0) {
        comm_dev_close(d);
        return rc;
    }
    *out = d;
    return 0;
}

void comm_dev_close(comm_dev *d)
{
    if (!d)
        return;
    dlg_dev_close(d->dev);
    free(d);
}

/* The communicator's id from rank 0 through the host's bcast. */
static int bcast_id(void *ctx, void *buf, size_t bytes)
{
    const comm_dev *d = ctx;
    return d->h->comm_bcast(d->h, buf, bytes, 0);
}

int comm_dev_join(comm_dev *d)
{
    if (d->joined)
        return 0;
    int rc = dlg_dev_coll_open(d->dev, d->size, d->rank, bcast_id, d);
    if (rc < 0)
        return fail(d, "joining the ranks' NCCL communicator", rc);
    d->joined = true;
    return 0;
}

static int enqueue(comm_dev *d, comm_expect e)
{
    if (e == COMM_SUM)
        return dlg_dev_allreduce(d->dev, d->send, d->recv, d->count, d->type);
    int to = (d->rank + 1) % d->size, from = (d->rank - 1 + d->size) % d->size;
    return dlg_dev_sendrecv(d->dev, d->send, to, d->recv, from, d->count, d->type);
}

int comm_dev_ops(comm_dev *d, comm_expect e, int n, uint64_t *ns)
{
    int rc = dlg_dev_timer_begin(d->dev);
    for (int i = 0; i < n && rc == 0; i++)
        rc = enqueue(d, e);
    if (rc == 0)
        rc = dlg_dev_timer_end(d->dev, ns);
    return rc < 0 ? fail(d, e == COMM_SUM ? "allreduce" : "sendrecv", rc) : 0;
}

int comm_dev_poison(comm_dev *d, comm_bufs *b)
{
    comm_bufs_poison(b);
    int rc = dlg_dev_upload(d->dev, d->recv, b->recv, d->bytes);
    return rc < 0 ? fail(d, "poisoning the receive buffer", rc) : 0;
}

int comm_dev_fetch(comm_dev *d, comm_bufs *b)
{
    int rc = dlg_dev_download(d->dev, b->recv, d->recv, d->bytes);
    if (rc == 0)
        rc = dlg_dev_sync(d->dev);
    return rc < 0 ? fail(d, "reading the result back", rc) : 0;
}
