/* Data-parallel training across the run's ranks for the nn workloads
 * (DESIGN.md "Beyond one machine"; shared by the CNNs, cnn.c, and
 * lstm-ptb): with host->comm_info saying size > 1, a training net sums
 * its gradients over the ranks after each backward (mean gradient,
 * identical weights): on a host-memory backend through
 * host->comm_allreduce (dlg_net_set_grad_reduce, MPI), on a GPU by NCCL on
 * the device (dlg_net_set_device_reduce; host->comm_bcast carries only
 * rank 0's communicator id, at the first step), every rank reading its own
 * shard of the data; at the end of a
 * repetition one allreduce of the ranks' weight hashes says whether the
 * weights are still identical.  Alone (size 1, or a host without the
 * ranks ABI) nothing is installed and nothing changes. */
#ifndef DLG_NN_RANKS_H
#define DLG_NN_RANKS_H

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include "peak.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct nn_ranks {
    const dlg_host *h;
    int rank, size;  /* 0 and 1 when alone */
    bool started;    /* nn_ranks_start's check done */
    bool device;     /* the net's gradients are summed on the device (NCCL) */
    int64_t *hashes; /* size entries: the weight check's allreduce */
} nn_ranks;

/* This process's rank and the run's size from the host. */
void nn_ranks_init(nn_ranks *r, const dlg_host *h);
/* A seed of this rank's own (synthetic data that differs per rank); the
 * seed itself alone or on rank 0. */
uint64_t nn_ranks_seed(const nn_ranks *r, uint64_t seed);
/* After planning a training net: the gradient reduce when size > 1 (r
 * must stay where it is while the net lives).  No collective: a rank's
 * setup may fail before another's reaches one, and the runner agrees on
 * setup only after it (the device reduce opens its communicator at the
 * first step).  0 or -code after an error line (e.g. a GPU without NCCL). */
int nn_ranks_attach(nn_ranks *r, dlg_net *net);
/* At the top of the first step (after the ranks agreed they all set up,
 * before any gradient is summed): whether the ranks all sum on the host or
 * all on a device, and start from the same weights in the same layouts,
 * as nn_ranks_check; 0 at once after that. */
int nn_ranks_start(nn_ranks *r, dlg_net *net);
/* Untimed, at the end of a repetition, on every rank alike: whether the
 * ranks' trained weights are identical after `steps` steps; else one error
 * line ("ranks' weights diverged after step S: ...") and -DLG_EINVAL.  0 at
 * once when alone. */
int nn_ranks_check(nn_ranks *r, dlg_net *net, uint64_t steps);
/* A report's figures as the job's, in training and inference alike: sum
 * summed over the ranks (nsum of them), *max the largest of the ranks'
 * (the slowest rank's timed time); one allreduce, on every rank alike, in
 * report (alone: unchanged).  0 or -code after an error line. */
int nn_ranks_job(nn_ranks *r, double *sum, size_t nsum, double *max);
/* The speed fields (dlg_peak_report) of the job: its items over the
 * slowest rank's time, against the ranks' peaks summed (unknown when a
 * rank's is), the source saying so; from nn_ranks_job's sums of items,
 * peak FLOP/s and ranks whose peak is known. */
void nn_ranks_peak_report(const nn_ranks *r, const dlg_peak *own, double flops_per_item, double items,
                          double peaks, double known, double slowest_ns, const dlg_report_api *api,
                          dlg_fields *f);
void nn_ranks_free(nn_ranks *r);

#endif
