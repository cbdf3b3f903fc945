/* p2p: each step ops_per_step ring sendrecvs, `bytes` to rank+1 while
 * receiving from rank-1 (nccl-tests' sendrecv_perf); a copy on one rank. */
#include "comm.h"

static int p2p_op(const dlg_host *h, comm_bufs *b)
{
    int to = (b->rank + 1) % b->size, from = (b->rank - 1 + b->size) % b->size;
    return h->comm_sendrecv(h, b->send, to, b->recv, from, b->count * b->elem);
}

/* Each byte crosses one link once; on one rank the ring is a copy to
 * itself and crosses none: 0, as allreduce's 2(n-1)/n is there (nccl-tests'
 * sendrecv says 1 even then, which made a memcpy read as link bandwidth). */
static double p2p_factor(int ranks) { return ranks > 1 ? 1.0 : 0.0; }

static const comm_kind kind = {"p2p", COMM_FROM_LEFT, p2p_op, p2p_factor};

static int p2p_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job)
{
    (void)job;
    return comm_wl_check(&kind, h, opts);
}

static int p2p_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state)
{
    (void)job;
    return comm_wl_setup(&kind, h, opts, state);
}

static const dlg_option p2p_options[] = {COMM_OPTIONS};

static const dlg_metric p2p_metrics[] = {
    COMM_METRICS("1: in a ring sendrecv each byte crosses one link once (nccl-tests' sendrecv), so "
                 "busbw_bytes_per_s = algbw_bytes_per_s; 0 on one rank, where the send to itself crosses no "
                 "link (as allreduce's), so busbw_bytes_per_s is 0 there")};

static const dlg_workload_ops p2p_ops = {
    .version = 3,
    .unit = "bytes",
    .setup = p2p_setup,
    .step = comm_wl_step,
    .report = comm_wl_report,
    .teardown = comm_wl_teardown,
    .begin_timed = comm_wl_begin_timed,
    .check = p2p_check,
};

const dlg_plugin_desc p2p_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "p2p",
    .version = "1.0",
    .summary = "ring sendrecv of `bytes` (to rank+1, from rank-1), ops_per_step times a step, checked; algbw "
               "and busbw as nccl-tests; host memory and MPI, or a GPU's and NCCL (device = cuda:N)",
    .options = p2p_options,
    .metrics = p2p_metrics,
    .ops = &p2p_ops,
};
