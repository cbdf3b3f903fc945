/* comm.so's allreduce or p2p on one rank without the dlgauge runtime, for
 * scripts/gpu-check.sh (built there with gcc, no CMake): the mock host
 * with one rank's collectives (copies), setup, warm-up, begin_timed (the
 * checked op), timed steps, report (the check again), its fields printed
 * on one line.
 *   comm_gpu_run WORKLOAD STEPS [key=value ...]   (DLGAUGE_PLUGIN_PATH: comm.so's folder)
 * Exit 0 when every call passed, 1 with the workload's error line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload_run.h"

#define WARMUP 3
#define MAX_OPTS 16

static void one_rank(const dlg_host *h, dlg_rank_info *out)
{
    (void)h;
    *out = (dlg_rank_info){sizeof *out, 0, 1, "self", "", 0, 1, 1};
}

static size_t elem_size(dlg_comm_type t) { return t == DLG_COMM_F32 ? 4 : 8; }

static int copy_sum(const dlg_host *h, const void *send, void *recv, size_t count, dlg_comm_type t)
{
    (void)h;
    memmove(recv, send, count * elem_size(t));
    return 0;
}

static int own_bcast(const dlg_host *h, void *buf, size_t bytes, int root)
{
    (void)h, (void)buf, (void)bytes, (void)root;
    return 0;
}

static int copy_sendrecv(const dlg_host *h, const void *sbuf, int to, void *rbuf, int from, size_t bytes)
{
    (void)h, (void)to, (void)from;
    memmove(rbuf, sbuf, bytes);
    return 0;
}

static int no_barrier(const dlg_host *h)
{
    (void)h;
    return 0;
}

/* The run; the fields land in r, the first failing call's name in *what. */
static int drive(mock_host *m, const dlg_plugin_desc *d, const dlg_value *vals, int steps, wr_result *r,
                 const char **what)
{
    const dlg_workload_ops *ops = d->ops;
    dlg_job_info job = {.struct_size = sizeof job, .job = "gpu-check", .cpus = 1, .seed = 1};
    void *state = NULL;
    int rc;
    if ((rc = ops->setup(&m->host, vals, &job, &state)) < 0) {
        *what = "setup";
        return rc;
    }
    *what = "warm-up step";
    for (int i = 0; i < WARMUP && rc == 0; i++) {
        dlg_step s = {0};
        rc = ops->step(state, &s);
    }
    if (rc == 0 && (rc = ops->begin_timed(state)) < 0)
        *what = "begin_timed (the checked op)";
    for (int i = 0; i < steps && rc == 0; i++) {
        dlg_step s = {0};
        if ((rc = ops->step(state, &s)) < 0)
            *what = "timed step";
        r->steps_done++;
    }
    if (rc == 0 && (rc = ops->report(state, &wr_api, (dlg_fields *)r)) < 0)
        *what = "report (the check after the timed steps)";
    ops->teardown(state);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc - 3 >= MAX_OPTS || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: comm_gpu_run allreduce|p2p STEPS [key=value ...]\n");
        return 2;
    }
    mock_host m;
    mock_host_init(&m);
    m.host.comm_info = one_rank;
    m.host.comm_allreduce = copy_sum;
    m.host.comm_bcast = own_bcast;
    m.host.comm_sendrecv = copy_sendrecv;
    m.host.comm_barrier = no_barrier;
    const dlg_plugin_desc *d = mock_load_plugin("comm.so", DLG_KIND_WORKLOAD, argv[1]);
    const char *ov[MAX_OPTS] = {NULL};
    for (int i = 3; i < argc; i++)
        ov[i - 3] = argv[i];
    dlg_value vals[MAX_OPTS];
    memset(vals, 0, sizeof vals);
    if (!d || mock_options(d->options, vals, ov) != 0) {
        fprintf(stderr, "comm_gpu_run: %s: %s\n", argv[1], d ? "options refused" : "comm.so not loaded");
        return 1;
    }
    static wr_result r; /* large: not on the stack */
    const char *what = "";
    int rc = drive(&m, d, vals, atoi(argv[2]), &r, &what);
    printf("comm %s", argv[1]);
    for (int i = 3; i < argc; i++)
        printf(" %s", argv[i]);
    if (rc < 0) {
        printf(": FAILED in %s: %s\n", what, m.last_error);
        return 1;
    }
    printf(": checked, %d timed steps;", r.steps_done);
    for (int i = 0; i < r.nfields; i++)
        printf(" %s=%s", r.key[i], r.val[i]);
    printf("\n");
    mock_host_fini(&m);
    return 0;
}
