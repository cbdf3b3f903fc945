/* Workload for ranks.sh: `ranked` does rank + 1 items per step, so that
 * the row's items tell a sum over the ranks from rank 0's own, and with
 * allreduce = true sums that through host->comm_allreduce each step,
 * checking the answer (every rank's rank + 1).  fail_setup_rank and
 * fail_step_rank make one rank fail its setup, or its third step while
 * the others wait for it in the allreduce; stop_step_rank makes one rank
 * send itself SIGTERM in its third step, as a signal to it alone would. */
#include <dlgauge/plugin.h>

#include <signal.h>
#include <stdlib.h>

static const dlg_option ranked_options[] = {
    {"allreduce", DLG_OPT_BOOL, "false", NULL, NULL, NULL, "sum the ranks' items through comm_allreduce each step", 0},
    {"fail_setup_rank", DLG_OPT_INT, "-1", "-1", NULL, NULL, "this rank's setup fails", 0},
    {"fail_step_rank", DLG_OPT_INT, "-1", "-1", NULL, NULL, "this rank's third step fails", 0},
    {"stop_step_rank", DLG_OPT_INT, "-1", "-1", NULL, NULL, "this rank sends itself SIGTERM in its third step", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

typedef struct ranked {
    const dlg_host *h;
    dlg_rank_info ri;
    bool allreduce;
    int fail_step, stop_step;
    uint64_t steps;
    double buf[4];
} ranked;

static int ranked_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)j;
    if (!DLG_HOST_HAS(h, comm_info))
        return h->error(h, DLG_ENOTSUP, "the host has no comm_info");
    ranked *r = calloc(1, sizeof *r);
    if (!r)
        return h->error(h, DLG_ENOMEM, "out of memory");
    r->h = h;
    h->comm_info(h, &r->ri);
    if (o[1].i == r->ri.rank) {
        free(r);
        return h->error(h, DLG_EINVAL, "fail_setup_rank = %d: this rank was told to fail its setup", (int)o[1].i);
    }
    r->allreduce = o[0].i != 0;
    r->fail_step = (int)o[2].i;
    r->stop_step = (int)o[3].i;
    *st = r;
    return 0;
}

static int ranked_step(void *st, dlg_step *out)
{
    ranked *r = st;
    const dlg_host *h = r->h;
    if (r->fail_step == r->ri.rank && r->steps == 2)
        return h->error(h, DLG_EIO, "fail_step_rank = %d: this rank's third step fails", r->fail_step);
    if (r->stop_step == r->ri.rank && r->steps == 2)
        raise(SIGTERM);
    r->steps++;
    if (r->allreduce) {
        for (int i = 0; i < 4; i++)
            r->buf[i] = r->ri.rank + 1;
        int rc = h->comm_allreduce(h, r->buf, r->buf, 4, DLG_COMM_F64);
        if (rc < 0)
            return rc;
        double want = (double)r->ri.size * (r->ri.size + 1) / 2;
        for (int i = 0; i < 4; i++)
            if (r->buf[i] != want)
                return h->error(h, DLG_EINTERNAL, "allreduce gave %g, not %g", r->buf[i], want);
    }
    out->items = (uint64_t)r->ri.rank + 1;
    return 0;
}

static void ranked_teardown(void *st) { free(st); }

static const dlg_workload_ops ranked_ops = {.version = 1, .unit = "items", .setup = ranked_setup,
                                            .step = ranked_step, .teardown = ranked_teardown};
static const dlg_plugin_desc ranked_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "ranked", "1.0",
                                            "rank + 1 items per step, optionally allreduced", ranked_options, NULL,
                                            &ranked_ops};

DLG_PLUGIN("ranks_wl", &ranked_desc)
