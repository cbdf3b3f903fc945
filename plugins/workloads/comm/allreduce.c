/* allreduce: out-of-place sums over the ranks, ops_per_step a step
 * (nccl-tests' all_reduce_perf). */
#include "comm.h"

static int allreduce_op(const dlg_host *h, comm_bufs *b)
{
    return h->comm_allreduce(h, b->send, b->recv, b->count, b->type);
}

/* A ring allreduce moves 2(n-1)/n of the message over each link. */
static double allreduce_factor(int ranks) { return ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0; }

static const comm_kind kind = {"allreduce", COMM_SUM, allreduce_op, allreduce_factor};

static int allreduce_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job)
{
    (void)job;
    return comm_wl_check(&kind, h, opts);
}

static int allreduce_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state)
{
    (void)job;
    return comm_wl_setup(&kind, h, opts, state);
}

static const dlg_option allreduce_options[] = {COMM_OPTIONS};

static const dlg_metric allreduce_metrics[] = {
    COMM_METRICS("2(n-1)/n for n ranks (a ring allreduce moves each byte that often over a link); 0 on one "
                 "rank, where nothing crosses a link, so busbw_bytes_per_s is 0 there")};

static const dlg_workload_ops allreduce_ops = {
    .version = 3,
    .unit = "bytes",
    .setup = allreduce_setup,
    .step = comm_wl_step,
    .report = comm_wl_report,
    .teardown = comm_wl_teardown,
    .begin_timed = comm_wl_begin_timed,
    .check = allreduce_check,
};

const dlg_plugin_desc allreduce_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "allreduce",
    .version = "1.0",
    .summary = "out-of-place sum of `bytes` over the run's ranks, ops_per_step times a step, checked; algbw "
               "and busbw as nccl-tests; host memory and MPI, or a GPU's and NCCL (device = cuda:N)",
    .options = allreduce_options,
    .metrics = allreduce_metrics,
    .ops = &allreduce_ops,
};
