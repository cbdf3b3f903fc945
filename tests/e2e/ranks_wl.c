/* Workload for ranks.sh: `ranked` does rank + 1 items per step, so that
 * the row's items tell a sum over the ranks from rank 0's own, and with
 * allreduce = true sums that through host->comm_allreduce each step,
 * checking the answer (every rank's rank + 1).  fail_setup_rank and
 * fail_step_rank make one rank fail its setup, or its third step while
 * the others wait for it in the allreduce; stop_step_rank makes one rank
 * send itself SIGTERM in its third step, as a signal to it alone would.
 * spin_us and hold_mib give each rank its own known CPU time per step and
 * memory, (rank + 1) x theirs, and rank_cpu_s reports the process's CPU
 * time from begin_timed on (the row's is rank 0's), so that a row tells
 * the job's sum from rank 0's own.  slow_rank makes one rank's check
 * (slow_check_s) or setup (slow_setup_s) sleep, deaf to signals, while
 * the others wait for it in the ranks' agreements; with it every rank's
 * check and setup write its pid to rank<N>.pid in the working folder
 * (ranks_stop.sh signals the ranks by it).  heed_setup_s makes every
 * rank's setup take that long, asking host->stopping() every 10 ms and
 * ending with -DLG_ESTOP when it says so, as a net's plan does. */
#include <dlgauge/plugin.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const dlg_option ranked_options[] = {
    {"allreduce", DLG_OPT_BOOL, "false", NULL, NULL, NULL, "sum the ranks' items through comm_allreduce each step", 0},
    {"fail_setup_rank", DLG_OPT_INT, "-1", "-1", NULL, NULL, "this rank's setup fails", 0},
    {"fail_step_rank", DLG_OPT_INT, "-1", "-1", NULL, NULL, "this rank's third step fails", 0},
    {"stop_step_rank", DLG_OPT_INT, "-1", "-1", NULL, NULL, "this rank sends itself SIGTERM in its third step", 0},
    {"spin_us", DLG_OPT_INT, "0", "0", NULL, NULL, "each step spins (rank + 1) x this many us of its thread's CPU time", 0},
    {"hold_mib", DLG_OPT_INT, "0", "0", "4096", NULL, "setup allocates and touches (rank + 1) x this many MiB", 0},
    {"slow_rank", DLG_OPT_INT, "-1", "-1", NULL, NULL, "this rank's check and setup sleep as below; pid files", 0},
    {"slow_check_s", DLG_OPT_INT, "0", "0", NULL, NULL, "slow_rank's check sleeps this long", 0},
    {"slow_setup_s", DLG_OPT_INT, "0", "0", NULL, NULL, "slow_rank's setup sleeps this long", 0},
    {"heed_setup_s", DLG_OPT_INT, "0", "0", NULL, NULL, "every rank's setup takes this long unless stopping() says stop", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

typedef struct ranked {
    const dlg_host *h;
    dlg_rank_info ri;
    bool allreduce;
    int fail_step, stop_step;
    uint64_t steps;
    uint64_t spin_ns, cpu0_ns;
    char *held;
    double buf[4];
} ranked;

static uint64_t cpu_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void) { return cpu_ns(CLOCK_THREAD_CPUTIME_ID); }

static const dlg_metric ranked_metrics[] = {
    {"rank_cpu_s", DLG_FIELD_DOUBLE, "s", "the process's CPU time from begin_timed to report (rank 0's in the row)"},
    {NULL, 0, NULL, NULL},
};

/* s seconds, however many signals come meanwhile */
static void sleep_deaf(int64_t s)
{
    struct timespec ts = {(time_t)s, 0};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* With slow_rank set: this rank's pid in rank<rank>.pid; slow_rank sleeps s.
 * The file is replaced whole (written aside, then renamed): the check
 * writes it and the setup again, and ranks_stop.sh may read it at any
 * moment in between; rewritten in place it was empty for a moment, and a
 * read then signalled no rank (the heed case's rare hang). */
static void slow_rank(const dlg_value *o, int rank, int64_t s)
{
    if (o[6].i < 0)
        return;
    char name[32], tmp[40];
    snprintf(name, sizeof name, "rank%d.pid", rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%d\n", (int)getpid());
        if (fclose(f) == 0)
            rename(tmp, name);
    }
    if (o[6].i == rank)
        sleep_deaf(s);
}

/* s seconds, or until host->stopping() says stop (then -DLG_ESTOP) */
static int sleep_heeding(const dlg_host *h, int64_t s)
{
    uint64_t end = h->now_ns(h) + (uint64_t)s * 1000000000u;
    while (h->now_ns(h) < end) {
        if (h->stopping(h))
            return -DLG_ESTOP;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* The plan's check, before the ranks' first agreement: the rank is the
 * launcher's (no comm yet). */
static int ranked_check(const dlg_host *h, const dlg_value *o, const dlg_job_info *j)
{
    (void)h, (void)j;
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    slow_rank(o, r ? atoi(r) : 0, o[7].i);
    return 0;
}

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
    slow_rank(o, r->ri.rank, o[8].i);
    if (o[9].i > 0 && sleep_heeding(h, o[9].i) < 0) {
        free(r);
        return -DLG_ESTOP;
    }
    if (o[1].i == r->ri.rank) {
        free(r);
        return h->error(h, DLG_EINVAL, "fail_setup_rank = %d: this rank was told to fail its setup", (int)o[1].i);
    }
    r->allreduce = o[0].i != 0;
    r->fail_step = (int)o[2].i;
    r->stop_step = (int)o[3].i;
    r->spin_ns = (uint64_t)o[4].i * 1000u * (uint64_t)(r->ri.rank + 1);
    size_t held = (size_t)o[5].i * (size_t)(r->ri.rank + 1) << 20;
    if (held && !(r->held = malloc(held))) {
        free(r);
        return h->error(h, DLG_ENOMEM, "hold_mib: out of memory");
    }
    if (held)
        memset(r->held, 1, held); /* resident, not only reserved */
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
    for (uint64_t t0 = thread_cpu_ns(); r->spin_ns && thread_cpu_ns() - t0 < r->spin_ns;) {
    }
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

static int ranked_begin_timed(void *st)
{
    ((ranked *)st)->cpu0_ns = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    return 0;
}

static int ranked_report(void *st, const dlg_report_api *api, dlg_fields *f)
{
    api->add_double(f, "rank_cpu_s", (double)(cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - ((ranked *)st)->cpu0_ns) / 1e9);
    return 0;
}

static void ranked_teardown(void *st)
{
    ranked *r = st;
    free(r->held);
    free(r);
}

static const dlg_workload_ops ranked_ops = {.version = 3, .check = ranked_check, .unit = "items", .setup = ranked_setup,
                                            .step = ranked_step, .report = ranked_report,
                                            .teardown = ranked_teardown, .begin_timed = ranked_begin_timed};
static const dlg_plugin_desc ranked_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "ranked", "1.0",
                                            "rank + 1 items per step, optionally allreduced", ranked_options,
                                            ranked_metrics, &ranked_ops};

DLG_PLUGIN("ranks_wl", &ranked_desc)
