/* Data-parallel training on a device (dlg_net_set_device_reduce, nn.h):
 * the trained gradients summed over the ranks in place by the backend's
 * collectives (cuda: NCCL) on the compute stream, between backward and the
 * clip/update of a train step.  The sum stays in the gradients and the
 * update divides by the ranks, exactly as on the host (grad_reduce.c's
 * dlg_net_reduced_sgd, clip.c's grad factor; step.c scales a device clip's
 * threshold).
 *
 * One allreduce per trained gradient, in blob order, the same sequence on
 * every rank (the ranks plan the same net), all in one group
 * (coll_allreduce_n: NCCL fuses a group's collectives into few launches,
 * where ResNet-50's 161 gradients would be 161); each
 * gradient is an allocation of its own, so there is no contiguous run to
 * sum at once, and packing them would cost a copy each way.
 *
 * Precision: the half backends (cuda-bf16, cuda-fp16) keep fp32 params
 * and gradients (master weights, core/nn/cuda/README.md), so the sum is
 * fp32 everywhere.  fp16's loss-scale overflow check runs inside the SGD
 * launch, after this sum: an inf/NaN on any rank is in every rank's summed
 * gradients, so every rank skips the same steps and halves the same scale
 * (the ranks' scales stay equal, and so do the weights).
 *
 * When the reduce is set, rank 0 makes the communicator id (coll_id) and
 * the others probe (coll_id without an id: the library loads), so a rank
 * without NCCL is refused there, in setup, rather than leaving the others
 * waiting in the first step's open. */
#include "net.h"

#include <stdio.h>
#include <string.h>

/* what the device reduce calls: an id, the communicator, the grouped sum */
static bool has_coll(const dlg_backend *bk)
{
    return bk->coll_id && bk->coll_open && bk->coll_allreduce_n;
}

void dlg_net_clear_dev_reduce(dlg_net *net)
{
    net->dev_ranks = 0;
    net->dev_rank = 0;
    net->dev_bcast = NULL;
    net->dev_bcast_ctx = NULL;
    net->dev_id_len = 0;
}

bool dlg_net_host_memory(const dlg_net *net)
{
    return !net->planned || !net->bk || dlg_bk_host_memory(net->bk);
}

/* The checks of dlg_net_set_device_reduce, each refusal one line, not
 * sticky. */
static int refuse(dlg_net *net, int ranks, int rank)
{
    if (!net->planned || !net->train)
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: net '%s': a device gradient reduce needs a net planned for "
                                "training",
                                net->name);
    if (ranks < 1 || rank < 0 || rank >= ranks)
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: net '%s': a device gradient reduce as rank %d of %d",
                                net->name, rank, ranks);
    if (dlg_bk_host_memory(net->bk))
        return dlg_net_complain(net, DLG_ENOTSUP,
                                "nn: net '%s': backend %s keeps its memory on the host: its ranks "
                                "sum gradients with dlg_net_set_grad_reduce (the host's MPI)",
                                net->name, net->bk->name);
    if (!has_coll(net->bk))
        return dlg_net_complain(net, DLG_ENOTSUP,
                                "nn: net '%s': backend %s has no collectives (built without NCCL's "
                                "header): data-parallel training on it is not available",
                                net->name, net->bk->name);
    if (net->comm_ranks && (net->comm_ranks != ranks || net->comm_rank != rank))
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: net '%s': its device communicator was opened as rank %d of "
                                "%d; plan the net again to join as rank %d of %d",
                                net->name, net->comm_rank, net->comm_ranks, rank, ranks);
    return 0;
}

int dlg_net_set_device_reduce(dlg_net *net, int ranks, int rank, dlg_id_bcast_fn bcast,
                              void *ctx)
{
    if (net->err)
        return net->err;
    if (ranks == 0 || !bcast) {
        net->dev_eager |= net->trained && net->dev_ranks;
        dlg_net_clear_dev_reduce(net);
        return 0;
    }
    int rc = refuse(net, ranks, rank);
    if (rc)
        return rc;
    if (!net->comm_ranks) { /* not opened yet: load the library, rank 0's id */
        if (net->bk->bind && (rc = net->bk->bind(net->ctx)) < 0)
            return dlg_net_fail(net, -rc, "nn: backend %s: cannot bind this thread",
                                net->bk->name);
        char err[256];
        size_t len = sizeof net->dev_id;
        memset(net->dev_id, 0, sizeof net->dev_id);
        void *id = rank == 0 ? net->dev_id : NULL; /* elsewhere a probe: loads NCCL */
        if ((rc = dlg_bk_coll_id(net->bk, net->ctx, id, &len, err, sizeof err)) < 0)
            return dlg_net_complain(net, -rc, "nn: net '%s': data-parallel training on %s: %s",
                                    net->name, net->bk->name, err);
        net->dev_id_len = len;
    }
    net->dev_eager |= net->trained && net->dev_ranks != ranks;
    net->dev_ranks = ranks;
    net->dev_rank = rank;
    net->dev_bcast = bcast;
    net->dev_bcast_ctx = ctx;
    return 0;
}

int dlg_net_dev_reduce_open(dlg_net *net)
{
    if (!net->dev_ranks || net->comm_ranks)
        return 0;
    unsigned char id[DLG_COLL_ID_BYTES] = {0};
    if (net->dev_rank == 0)
        memcpy(id, net->dev_id, net->dev_id_len);
    int rc = net->dev_bcast(net->dev_bcast_ctx, id, sizeof id);
    if (rc < 0)
        return dlg_net_fail(net, -rc,
                            "nn: net '%s': sending rank 0's communicator id to the %d ranks failed",
                            net->name, net->dev_ranks);
    char err[256] = "";
    if ((rc = net->bk->coll_open(net->ctx, net->dev_ranks, net->dev_rank, id, sizeof id, err,
                                 sizeof err)) < 0)
        return dlg_net_fail(net, -rc, "nn: net '%s': joining the device communicator as rank %d "
                                      "of %d failed: %s",
                            net->name, net->dev_rank, net->dev_ranks,
                            err[0] ? err : "(no reason given)");
    net->comm_ranks = net->dev_ranks;
    net->comm_rank = net->dev_rank;
    return 0;
}

int dlg_net_run_dev_reduce(dlg_net *net, char *err, size_t errlen)
{
    if (!net->dev_ranks)
        return 0;
    if (!net->comm_ranks) {
        snprintf(err, errlen, "nn: net '%s': the device communicator is not open", net->name);
        return -DLG_EINTERNAL;
    }
    /* every trained gradient in one group, from the plan-time lists */
    int n, rc = dlg_net_list_grads(net, &n);
    if (rc < 0) {
        snprintf(err, errlen, "%s", dlg_net_error(net));
        return rc;
    }
    char why[256] = "";
    if ((rc = net->bk->coll_allreduce_n(net->ctx, net->grad_p, net->grad_c, n, why,
                                        sizeof why)) < 0) {
        snprintf(err, errlen,
                 "nn: net '%s': summing the %d gradients across %d ranks on the device failed: "
                 "%s",
                 net->name, n, net->dev_ranks, why[0] ? why : "(no reason given)");
        return rc;
    }
    net->grad_sum = net->dev_ranks;
    return 0;
}
