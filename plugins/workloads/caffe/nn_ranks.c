/* Data-parallel training across ranks for the nn workloads (nn_ranks.h). */
#include "nn_ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nn_ranks_init(nn_ranks *r, const dlg_host *h)
{
    *r = (nn_ranks){.h = h, .rank = 0, .size = 1};
    if (!DLG_HOST_HAS(h, comm_info) || !h->comm_info)
        return;
    dlg_rank_info ri = {.struct_size = sizeof ri};
    h->comm_info(h, &ri);
    if (ri.size > 1 && ri.rank >= 0 && ri.rank < ri.size) {
        r->rank = ri.rank;
        r->size = ri.size;
    }
}

uint64_t nn_ranks_seed(const nn_ranks *r, uint64_t seed)
{
    return seed + 0x9e3779b97f4a7c15ull * (uint64_t)r->rank;
}

/* The engine's callback: the bucket summed in place over the ranks. */
static int allreduce(void *ctx, float *buf, size_t n)
{
    const nn_ranks *r = ctx;
    return r->h->comm_allreduce(r->h, buf, buf, n, DLG_COMM_F32);
}

/* The device reduce's id callback: rank 0's bytes to every rank. */
static int bcast(void *ctx, void *buf, size_t bytes)
{
    const nn_ranks *r = ctx;
    return r->h->comm_bcast(r->h, buf, bytes, 0);
}

/* Bit 62 of a rank's entry (the hashes have 62 bits): it sums on the
 * device.  A host reduce (MPI allreduces) beside a device one (a bcast,
 * then NCCL) would wait in unmatched collectives. */
#define ON_DEVICE ((int64_t)1 << 62)

static const char *kind(int64_t entry)
{
    return entry & ON_DEVICE ? "on a GPU (NCCL)" : "in host memory (MPI)";
}

/* "rank 0 0x..., rank 1 0x..." for the first ranks. */
static void list_hashes(const nn_ranks *r, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < r->size && i < 8 && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%srank %d %016llx", i ? ", " : "", i,
                               (unsigned long long)(r->hashes[i] & ~ON_DEVICE));
    if (r->size > 8 && at < len)
        snprintf(out + at, len - at, ", ...");
}

/* One allreduce gathers every rank's weight hash and kind of reduce;
 * "when" says at which point, for the error line. */
static int compare(nn_ranks *r, dlg_net *net, const char *when)
{
    uint64_t mine;
    int rc = dlg_net_param_hash(net, &mine);
    if (rc < 0)
        return r->h->error(r->h, -rc, "%s", dlg_net_error(net));
    /* each rank's hash (62 bits) in its own slot: the sum gathers them */
    memset(r->hashes, 0, (size_t)r->size * sizeof *r->hashes);
    r->hashes[r->rank] = (int64_t)mine | (r->device ? ON_DEVICE : 0);
    if ((rc = r->h->comm_allreduce(r->h, r->hashes, r->hashes, (size_t)r->size, DLG_COMM_I64)) < 0)
        return rc;
    for (int i = 1; i < r->size; i++)
        if ((r->hashes[i] ^ r->hashes[0]) & ON_DEVICE)
            return r->h->error(r->h, DLG_EINVAL,
                               "ranks sum their gradients in different places: rank 0 %s, rank "
                               "%d %s; every rank must train on the same kind of device (all cpu "
                               "or all cuda)",
                               kind(r->hashes[0]), i, kind(r->hashes[i]));
    for (int i = 1; i < r->size; i++)
        if (r->hashes[i] != r->hashes[0]) {
            char list[400];
            list_hashes(r, list, sizeof list);
            return r->h->error(r->h, DLG_EINVAL,
                               "ranks' weights diverged %s: the weight hashes differ (%s); the "
                               "ranks must run the same net, options, backend and CPU",
                               when, list);
        }
    return 0;
}

int nn_ranks_attach(nn_ranks *r, dlg_net *net)
{
    if (r->size < 2)
        return 0;
    if (!(r->hashes = calloc((size_t)r->size, sizeof *r->hashes)))
        return r->h->error(r->h, DLG_ENOMEM, "out of memory");
    r->device = !dlg_net_host_memory(net);
    if (r->device && !r->h->comm_bcast)
        return r->h->error(r->h, DLG_ENOTSUP, "data-parallel training on a GPU needs the host's "
                                              "comm_bcast (for NCCL's communicator id)");
    int rc = r->device ? dlg_net_set_device_reduce(net, r->size, r->rank, bcast, r)
                       : dlg_net_set_grad_reduce(net, allreduce, r, r->size);
    if (rc < 0)
        return r->h->error(r->h, -rc, "%s", dlg_net_error(net));
    r->h->log(r->h, DLG_LOG_INFO,
              "data-parallel training: rank %d of %d, gradients averaged over the ranks each step "
              "(%s)",
              r->rank, r->size, r->device ? "NCCL on the device" : "MPI on the host");
    return 0;
}

/* The same start (seed, model, layouts, kind of backend): else summing the
 * gradients would add unrelated numbers without a word. */
int nn_ranks_start(nn_ranks *r, dlg_net *net)
{
    if (r->size < 2 || !r->hashes || r->started)
        return 0;
    r->started = true;
    return compare(r, net, "before the first step");
}

int nn_ranks_check(nn_ranks *r, dlg_net *net, uint64_t steps)
{
    if (r->size < 2 || !r->hashes)
        return 0;
    char when[64];
    snprintf(when, sizeof when, "after step %llu", (unsigned long long)steps);
    return compare(r, net, when);
}

int nn_ranks_job(nn_ranks *r, double *sum, size_t nsum, double *max)
{
    if (r->size < 2)
        return 0;
    size_t n = nsum + (size_t)r->size;
    double *v = calloc(n, sizeof *v);
    if (!v)
        return r->h->error(r->h, DLG_ENOMEM, "out of memory");
    memcpy(v, sum, nsum * sizeof *v);
    v[nsum + (size_t)r->rank] = *max; /* each rank's in its own slot: the sum gathers them */
    int rc = r->h->comm_allreduce(r->h, v, v, n, DLG_COMM_F64);
    if (rc == 0) {
        memcpy(sum, v, nsum * sizeof *v);
        for (size_t i = nsum; i < n; i++)
            *max = v[i] > *max ? v[i] : *max;
    }
    free(v);
    return rc;
}

void nn_ranks_peak_report(const nn_ranks *r, const dlg_peak *own, double flops_per_item, double items,
                          double peaks, double known, double slowest_ns, const dlg_report_api *api,
                          dlg_fields *f)
{
    dlg_peak job = *own;
    if (r->size > 1) {
        job.flops = known >= r->size ? peaks : 0;
        snprintf(job.source, sizeof job.source, "the %d ranks' peaks summed (rank 0's: %.600s)", r->size,
                 own->source);
    }
    dlg_peak_report(&job, flops_per_item, items > 0 ? (uint64_t)(items + 0.5) : 0,
                    slowest_ns > 0 ? (uint64_t)(slowest_ns + 0.5) : 0, api, f);
}

void nn_ranks_free(nn_ranks *r)
{
    free(r->hashes);
    r->hashes = NULL;
}
