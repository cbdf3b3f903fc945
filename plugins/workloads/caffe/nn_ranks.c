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

/* "rank 0 0x..., rank 1 0x..." for the first ranks. */
static void list_hashes(const nn_ranks *r, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < r->size && i < 8 && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%srank %d %016llx", i ? ", " : "", i,
                               (unsigned long long)r->hashes[i]);
    if (r->size > 8 && at < len)
        snprintf(out + at, len - at, ", ...");
}

/* One allreduce gathers every rank's weight hash; "when" says at which
 * point, for the error line. */
static int compare(nn_ranks *r, dlg_net *net, const char *when)
{
    uint64_t mine;
    int rc = dlg_net_param_hash(net, &mine);
    if (rc < 0)
        return r->h->error(r->h, -rc, "%s", dlg_net_error(net));
    /* each rank's hash (62 bits) in its own slot: the sum gathers them */
    memset(r->hashes, 0, (size_t)r->size * sizeof *r->hashes);
    r->hashes[r->rank] = (int64_t)mine;
    if ((rc = r->h->comm_allreduce(r->h, r->hashes, r->hashes, (size_t)r->size, DLG_COMM_I64)) < 0)
        return rc;
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
    int rc = dlg_net_set_grad_reduce(net, allreduce, r, r->size);
    if (rc < 0)
        return r->h->error(r->h, -rc, "%s", dlg_net_error(net));
    r->h->log(r->h, DLG_LOG_INFO,
              "data-parallel training: rank %d of %d, gradients averaged over the ranks each step",
              r->rank, r->size);
    return 0;
}

/* The same start (seed, model, layouts): else summing the gradients
 * would add unrelated numbers without a word. */
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

void nn_ranks_free(nn_ranks *r)
{
    free(r->hashes);
    r->hashes = NULL;
}
