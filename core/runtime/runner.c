#define _GNU_SOURCE
#include "runner.h"

#include "affinity.h"
#include "cell_gpu.h"
#include "comm.h"
#include "cpu_energy.h"
#include "cpu_share.h"
#include "gpu_nvml.h"
#include "gpu_sampler.h"
#include "topology.h"
#include "host.h"
#include "options.h"
#include "proc_limits.h"
#include "proc_counters.h"
#include "progress.h"
#include "rank_totals.h"
#include "report_api.h"
#include "results.h"
#include "runner_ranks.h"
#include "signals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPS 1000
/* Under several ranks, the time between their agreements to end a loop of
 * steps: a stop (mpirun kills the ranks a second after it forwards one)
 * ends the loop well within that. */
#define RANKS_GATE_NS 20000000ull

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

int dlg_cell_result_init(dlg_cell_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = "ok";
    r->latency = dlg_hist_new();
    return r->latency ? 0 : -1;
}

void dlg_cell_result_fini(dlg_cell_result *r)
{
    dlg_hist_free(r->latency);
    for (size_t i = 0; i < r->nwf; i++)
        free(r->wf[i].text);
    free(r->wf);
    memset(r, 0, sizeof *r);
}

/* ---- one repetition ---------------------------------------------------- */
typedef struct rep_totals {
    uint64_t items, steps, wait_ns, busy_ns, wall_ns;
    bool stopped;
    double items_scale; /* in: the job's items per item of this rank's (progress.h) */
    dlg_histogram *lat; /* in: where the timed steps' latencies go */
} rep_totals;

/* The failure of a call made since mark: what was said during it (or by a
 * worker thread since the repetition began, rep_mark), else ctx ("file:line:
 * [job x] workload") names the cell; its status by rc (dlg_failed_status). */
static int fail(dlg_cell_result *res, dlg_services *svc, uint64_t rep_mark, uint64_t mark, const char *ctx,
                const char *what, int rc)
{
    if (!dlg_services_said(svc, rep_mark, mark, res->error, sizeof res->error))
        dlg_said_nothing(res->error, sizeof res->error, ctx, what, rc);
    res->status = dlg_failed_status(rc);
    return -1;
}

/* A workload's message that starts with an option's name is said at that
 * key's line, as the plan's check says it, not at the job's section. */
static void error_at_key(const dlg_job *j, const char *ctx, char *error, size_t len)
{
    char where[600], msg[2048]; /* msg: a copy, as m points into error */
    const char *m = dlg_job_msg_where(j, ctx, error, where, sizeof where);
    if (m == error)
        return; /* not the workload's own (its storage's, say): as it is */
    snprintf(msg, sizeof msg, "%s", m);
    snprintf(error, len, "%s[job %s] %s: %s", where, j->name, j->workload->name, msg);
}

/* How far a step's own elapsed_ns may pass the host clock's time for it:
 * a device's clock, or another rank's, runs a little apart. */
#define ELAPSED_SLACK_NS 1000000000ull

/* A step's timings, checked: its latency (its own elapsed_ns, else
 * host_ns, the host clock's), and its input wait, in *lat and *wait; -1
 * with the error in res where they cannot be true (a bug in the workload:
 * a wait longer than the step, an elapsed_ns of garbage), which would
 * give a data_wait_fraction above 1 or a latency of centuries. */
static int step_times(const dlg_step *s, uint64_t host_ns, uint64_t step, const char *ctx, const char *file,
                      dlg_cell_result *res, uint64_t *lat, uint64_t *wait)
{
    *lat = s->elapsed_ns ? s->elapsed_ns : host_ns;
    if (s->elapsed_ns > host_ns + ELAPSED_SLACK_NS)
        snprintf(res->error, sizeof res->error, "%s: step %llu reported elapsed_ns %llu, but it took %llu ns by "
                 "the host's clock: a bug in the workload (%s)", ctx, (unsigned long long)step,
                 (unsigned long long)s->elapsed_ns, (unsigned long long)host_ns, file ? file : "built in");
    else if (s->wait_ns > *lat && s->wait_ns > host_ns)
        snprintf(res->error, sizeof res->error, "%s: step %llu reported wait_ns %llu > its elapsed %llu ns: a "
                 "bug in the workload (%s)", ctx, (unsigned long long)step, (unsigned long long)s->wait_ns,
                 (unsigned long long)*lat, file ? file : "built in");
    else {
        /* a wait that passes a device-timed step within the host's time
         * for it: the two clocks apart, the step all wait */
        *wait = s->wait_ns < *lat ? s->wait_ns : *lat;
        return 0;
    }
    res->status = "error";
    return -1;
}

static int timed_steps(dlg_run *run, const dlg_cell *cell, const dlg_workload_ops *ops, void *state,
                       int rep, dlg_cell_result *res, dlg_services *svc, uint64_t rep_mark, const char *ctx,
                       rep_totals *t)
{
    uint64_t iterations = (uint64_t)cell->core[DLG_K_ITERATIONS].i;
    uint64_t duration = (uint64_t)cell->core[DLG_K_DURATION].i;
    uint64_t min_steps = (uint64_t)cell->core[DLG_K_MIN_STEPS].i;
    dlg_progress prog;
    uint64_t start = mono_ns(), now = start;
    bool step_stopped = false;
    uint64_t calls = 0; /* of step, counted or not: the gate's steps */
    /* under several ranks they end together (a duration's end and a stop
     * are agreed at the gate's steps, 1% of a duration apart at most) */
    dlg_ranks_gate gate;
    dlg_ranks_gate_init(&gate, !iterations && duration / 100 < RANKS_GATE_NS ? duration / 100 : RANKS_GATE_NS);
    dlg_progress_begin(&prog, run, cell, rep, (int)cell->core[DLG_K_REPEAT].i, start, iterations, duration);
    prog.items_scale = t->items_scale;
    for (;;) {
        /* 0 go on, 1 done, 2 stopped; iterations end alike on every rank */
        int end = iterations && t->steps >= iterations ? 1 : 0;
        if (!end)
            end = dlg_ranks_gate_end(run, &gate, calls, now,
                                     step_stopped ? 2
                                     : !iterations && t->steps >= min_steps && now - start >= duration ? 1
                                     : dlg_stop_signal() ? 2 : 0);
        if (end) {
            t->stopped = end == 2;
            break;
        }
        dlg_step s = {0};
        uint64_t mark = dlg_services_mark(svc);
        uint64_t t0 = mono_ns();
        int rc = ops->step(state, &s);
        now = mono_ns();
        calls++;
        if (rc == -DLG_ESTOP && dlg_stop_signal()) {
            step_stopped = true; /* the step noticed the stop request itself */
            continue;
        }
        if (rc < 0) {
            dlg_progress_end(&prog);
            t->wall_ns = now - start;
            return fail(res, svc, rep_mark, mark, ctx, "step", rc);
        }
        uint64_t lat, wait;
        if (step_times(&s, now - t0, t->steps + 1, ctx, cell->job->workload_path, res, &lat, &wait) != 0) {
            dlg_progress_end(&prog);
            t->wall_ns = now - start;
            return -1;
        }
        dlg_hist_record(t->lat, lat);
        t->items += s.items;
        t->wait_ns += wait;
        t->busy_ns += lat;
        t->steps++;
        dlg_progress_tick(&prog, now, t->steps, t->items);
    }
    t->wall_ns = now - start;
    dlg_progress_end(&prog);
    return 0;
}

/* What every repetition of a cell shares. */
typedef struct cell_ctx {
    dlg_run *run;
    const dlg_cell *cell;
    dlg_services *svc;
    dlg_host_impl *host;
    dlg_nvml *nv;
    int gpu;                 /* the NVML index of the cell's GPU, -1 none */
    dlg_rapl *rapl;          /* NULL: no counters */
    int cpus;                /* the vCPUs this rank's cell was granted */
    int pinned;              /* the CPUs it is pinned to (its threads run on) */
    double capacity;         /* the CPU time they can give (cpu_quota) */
    int node;                /* this rank's node (dlg_comm_node) */
    double *mask;            /* its CPU set as rank_totals.h sends it, NULL unknown */
    size_t mask_chunks;
    uint64_t busy0, iowait0; /* the machine's CPU jiffies at the cell's start */
    dlg_histogram *rep_lat;  /* under several ranks: this rank's repetition's step latencies */
} cell_ctx;

/* The services' storage counters: bytes and I/Os read and written. */
typedef struct storage_io {
    uint64_t rb, ri, wb, wi;
    uint64_t db, dfx; /* an emulated disk's charged reads (dlg_services) */
} storage_io;

static storage_io storage_io_now(dlg_services *svc)
{
    return (storage_io){__atomic_load_n(&svc->bytes_read, __ATOMIC_RELAXED), __atomic_load_n(&svc->ios, __ATOMIC_RELAXED),
                        __atomic_load_n(&svc->bytes_written, __ATOMIC_RELAXED),
                        __atomic_load_n(&svc->write_ios, __ATOMIC_RELAXED),
                        __atomic_load_n(&svc->disk_bytes, __ATOMIC_RELAXED),
                        __atomic_load_n(&svc->disk_ios_fx, __ATOMIC_RELAXED)};
}

/* The readings that open a repetition's timed steps; rep_end closes them. */
typedef struct rep_window {
    dlg_sched_snap sch;
    struct rusage ru;
    uint64_t mono, cpu, io, disk;
    storage_io st;
    dlg_gpu_sampler *gs;
} rep_window;

static void rep_begin(const cell_ctx *cx, rep_window *w)
{
    /* read outside the CPU window below: a process of many threads takes
     * a while to read */
    dlg_sched_snap_take(&w->sch, "/proc", NULL);
    getrusage(RUSAGE_SELF, &w->ru);
    w->mono = mono_ns();
    w->cpu = dlg_proc_cpu_ns();
    w->io = dlg_proc_read_bytes();
    w->disk = dlg_disk_read_bytes();
    w->st = storage_io_now(cx->svc);
    w->gs = NULL;
    if (cx->gpu >= 0 && dlg_gpu_sampler_start(&w->gs, cx->nv, cx->gpu, 100) != 0)
        w->gs = NULL;
    if (cx->rapl)
        dlg_rapl_begin(cx->rapl);
}

static void gpu_figs(dlg_gpu_sampler *gs, dlg_rank_figs *f)
{
    dlg_gpu_stats g;
    if (!gs || dlg_gpu_sampler_stop(gs, &g) != 0 || g.samples <= 0)
        return;
    f->gpu_samples = g.samples;
    f->gpu_util = g.gpu_util;
    f->gpu_power_w = g.power_avg_w;
    f->gpu_energy_j = g.energy_j;
    f->gpu_mem_peak = (double)g.gpu_mem_peak;
    f->gpu_seconds = g.seconds;
}

static void rapl_figs(dlg_rapl *rapl, dlg_rank_figs *f)
{
    dlg_cpu_energy e = {.have = false};
    if (!rapl)
        return;
    dlg_rapl_end(rapl, &e);
    f->rapl_have = e.have;
    f->rapl_have_dram = e.have_dram;
    f->rapl_pkg_lost = e.pkg_lost;
    f->rapl_dram_lost = e.dram_lost;
    f->rapl_pkg_j = e.pkg_j;
    f->rapl_dram_j = e.dram_j;
    f->rapl_s = e.seconds;
}

/* The scheduler's readings of the window from a to b, to be the job's. */
static void sched_figs(const dlg_sched_snap *a, const dlg_sched_snap *b, dlg_rank_figs *f)
{
    dlg_sched_totals t = {.have_wait = false};
    dlg_sched_add(&t, a, b);
    f->sch_have_wait = t.have_wait;
    f->sch_oncpu_ns = (double)t.oncpu_ns;
    f->sch_delay_ns = (double)t.delay_ns;
    f->sch_have_steal = t.have_steal;
    f->sch_steal = (double)t.steal;
    f->sch_ticks = (double)t.ticks;
    f->sch_have_other = t.have_other;
    f->sch_busy = (double)t.busy;
    f->sch_own = (double)t.own;
    f->sch_span = (double)t.span;
    f->sch_ncpus = t.ncpus;
}

/* This rank's figures of the timed steps begun at w. */
static void rep_end(const cell_ctx *cx, rep_window *w, dlg_cell_result *res, dlg_rank_figs *f)
{
    rapl_figs(cx->rapl, f);
    gpu_figs(w->gs, f);
    struct rusage ru1;
    getrusage(RUSAGE_SELF, &ru1);
    /* the CPU time's own window: the timed steps plus the readings and
     * samplers around them, which a cell of a few microseconds is all;
     * rusage's microseconds would be too coarse for its share.  The CPU
     * clock is read before the wall clock, as it was after it at the
     * start, so its window lies inside the wall's.  The process's clock
     * adds another running thread's time in lumps (at that thread's next
     * tick or switch), which over a window of microseconds can pass what
     * the CPUs could give (a share of 1.08 on 2 CPUs): no more than the
     * window on each CPU the cell runs on is counted. */
    uint64_t cpu1 = dlg_proc_cpu_ns();
    double win_s = (double)(mono_ns() - w->mono) / 1e9;
    double cpu_s = (double)(cpu1 - w->cpu) / 1e9, most = win_s * (cx->pinned > 0 ? cx->pinned : cx->cpus);
    f->cpu_window_cpu_s = cpu_s < most ? cpu_s : most;
    f->cpu_window_cap_s = win_s * (cx->capacity > 0 ? cx->capacity : cx->cpus);
    res->cpu_window_s += win_s;
    f->cpu_user_s = tv_s(ru1.ru_utime) - tv_s(w->ru.ru_utime);
    f->cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(w->ru.ru_stime);
    dlg_sched_snap sch1;
    dlg_sched_snap_take(&sch1, "/proc", NULL);
    sched_figs(&w->sch, &sch1, f);
    dlg_sched_snap_free(&w->sch);
    dlg_sched_snap_free(&sch1);
    f->major_faults = (double)(ru1.ru_majflt - w->ru.ru_majflt);
    f->ctx_voluntary = (double)(ru1.ru_nvcsw - w->ru.ru_nvcsw);
    f->ctx_involuntary = (double)(ru1.ru_nivcsw - w->ru.ru_nivcsw);
    f->read_bytes = (double)(dlg_proc_read_bytes() - w->io);
    f->disk_read_bytes = (double)(dlg_disk_read_bytes() - w->disk);
    storage_io st = storage_io_now(cx->svc);
    f->storage_bytes = (double)(st.rb - w->st.rb);
    f->storage_ios = (double)(st.ri - w->st.ri);
    f->storage_write_bytes = (double)(st.wb - w->st.wb);
    f->storage_write_ios = (double)(st.wi - w->st.wi);
    f->disk_counted = __atomic_load_n(&cx->svc->disk_counted, __ATOMIC_RELAXED);
    f->disk_charged_bytes = (double)(st.db - w->st.db);
    f->disk_charged_ios = (double)(st.dfx - w->st.dfx) / DLG_DISK_IOS_ONE;
    uint64_t files;
    f->files_lost = !dlg_file_set_bytes(&cx->svc->files, &files);
    f->files_bytes = (double)files;
    uint64_t busy, iowait;
    dlg_host_cpu_times(&busy, &iowait);
    f->iowait_fraction = busy > cx->busy0 ? (double)(iowait - cx->iowait0) / (double)(busy - cx->busy0) : -1;
    f->rss_peak = (double)dlg_proc_hwm_bytes();
    f->cpus_used = cx->cpus;
    f->cpu_capacity = cx->capacity;
    f->node = cx->node;
    f->gpu = cx->gpu;
}

/* A cell stopped by a signal: what its repetitions timed so far is kept. */
static void mark_stopped(dlg_cell_result *res)
{
    res->status = "partial";
    snprintf(res->error, sizeof res->error, "stopped by signal %d after %llu timed steps", dlg_stop_signal(),
             (unsigned long long)res->steps);
}

/* Warm-up, timed steps and the workload's report of one repetition whose
 * setup went well; its teardown is the caller's. */
static int measure_repetition(const cell_ctx *cx, int rep, uint64_t rep_mark, void *state, dlg_cell_result *res,
                              double *throughput)
{
    dlg_run *run = cx->run;
    const dlg_cell *cell = cx->cell;
    dlg_services *svc = cx->svc;
    dlg_host_impl *host = cx->host;
    const dlg_workload_ops *ops = cell->job->workload->ops;
    int rc;
    int64_t warmup = cell->core[DLG_K_WARMUP].i;
    dlg_ranks_gate gate; /* under several ranks, a stop ends every rank's warm-up at one step */
    dlg_ranks_gate_init(&gate, RANKS_GATE_NS);
    uint64_t warm_items = 0;
    for (int64_t i = 0; i < warmup; i++) {
        if (dlg_ranks_gate_end(run, &gate, (uint64_t)i, mono_ns(), dlg_stop_signal() ? 2 : 0))
            break;
        dlg_step s = {0};
        uint64_t mark = dlg_services_mark(svc);
        if ((rc = ops->step(state, &s)) < 0 && !(rc == -DLG_ESTOP && dlg_stop_signal()))
            return fail(res, svc, rep_mark, mark, host->context, "warm-up step", rc);
        warm_items += s.items;
    }
    rep_totals t = {.items_scale = dlg_progress_items_scale(run, warm_items),
                    .lat = cx->rep_lat ? cx->rep_lat : res->latency};
    /* the workload's own fields start here, as the runner's do */
    uint64_t mark = dlg_services_mark(svc);
    if (dlg_workload_has_begin_timed(ops) && (rc = ops->begin_timed(state)) < 0)
        return fail(res, svc, rep_mark, mark, host->context, "begin_timed", rc);
    rep_window w;
    rep_begin(cx, &w);
    rc = timed_steps(run, cell, ops, state, rep, res, svc, rep_mark, host->context, &t);
    if (rc == 0) /* the ranks' items, by the slowest rank's time */
        dlg_ranks_rep_totals(run, &t.items, &t.wall_ns, &t.stopped);
    dlg_rank_figs own = {.gpu = -1, .wait_ns = (double)t.wait_ns, .busy_ns = (double)t.busy_ns};
    rep_end(cx, &w, res, &own);
    dlg_rep_figs job;
    if (rc == 0) { /* the job's: every rank gets here (a failed one ends them all) */
        dlg_ranks_rep_figs(run, &own, cx->mask, cx->mask_chunks, &job);
        if (cx->rep_lat)
            dlg_ranks_rep_latency(run, cx->rep_lat, res->latency);
    } else {
        dlg_rank_figs_total(&own, 1, NULL, 0, &job);
        if (cx->rep_lat) { /* this rank's own, as alone */
            dlg_hist_merge(res->latency, cx->rep_lat);
            dlg_hist_reset(cx->rep_lat);
        }
    }
    dlg_rep_figs_add(res, &job);
    res->items += t.items;
    res->steps += t.steps;
    res->wall_s += (double)t.wall_ns / 1e9;
    *throughput = t.wall_ns ? (double)t.items / ((double)t.wall_ns / 1e9) : 0;
    /* the workload's fields describe complete repetitions; a stopped one
     * reports only where it is all there is (its items written, passes...) */
    if (rc == 0 && ops->report && (!t.stopped || res->reps == 0)) {
        dlg_field_sink fs = {res, cell->job->workload->metrics, host, rep};
        mark = dlg_services_mark(svc);
        int rrc = ops->report(state, &dlg_field_report_api, (dlg_fields *)&fs);
        if (rrc < 0)
            rc = fail(res, svc, rep_mark, mark, host->context, "report", rrc);
    }
    if (rc == 0 && t.stopped)
        mark_stopped(res);
    return rc;
}

/* The cell's result as it stands, to the parent of a cell's process; false
 * when in-process or out of memory. */
static bool send_result(dlg_run *run, const dlg_cell *cell, const dlg_cell_result *res)
{
    dlg_point_buf *pb = run->wire_fd >= 0 ? malloc(sizeof *pb) : NULL;
    if (!pb)
        return false;
    dlg_result_point(run, cell, res, pb);
    dlg_wire_send(run->wire_fd, &pb->point);
    free(pb);
    return true;
}

/* The repetitions' rates: full[0..res->reps) of the complete ones, and
 * that of one cut short by a stop or a timeout, which ran for less time,
 * under other conditions (a tail, no report): it would weigh as much as a
 * complete one in the mean and widen the CI, so it counts only where no
 * repetition is complete. */
typedef struct rep_rates {
    double full[MAX_REPS];
    double cut;
    bool have_cut;
} rep_rates;

static void summarize_rates(dlg_cell_result *res, const rep_rates *r)
{
    if (res->reps > 0 || !r->have_cut)
        dlg_summarize(r->full, (size_t)res->reps, &res->throughput);
    else
        dlg_summarize(&r->cut, 1, &res->throughput);
}

/* The peak RSS of the cell's process so far, where the ranks' sum on a
 * node (rank_totals.h) was not already more. */
static void note_rss(dlg_cell_result *res)
{
    uint64_t hwm = dlg_proc_hwm_bytes();
    if (hwm > res->rss_peak)
        res->rss_peak = hwm;
}

/* What the repetitions so far measured, sent before a teardown, which may
 * crash the process (or a later setup may): the parent keeps it then,
 * marked with how the process ended, rather than lose finished work. */
static void checkpoint(dlg_run *run, const dlg_cell *cell, dlg_cell_result *res, const rep_rates *rates)
{
    if (run->wire_fd < 0)
        return;
    summarize_rates(res, rates);
    note_rss(res);
    send_result(run, cell, res);
}

static int one_repetition(const cell_ctx *cx, int rep, dlg_cell_result *res, rep_rates *rates)
{
    dlg_run *run = cx->run;
    const dlg_cell *cell = cx->cell;
    dlg_services *svc = cx->svc;
    dlg_host_impl *host = cx->host;
    const dlg_workload_ops *ops = cell->job->workload->ops;
    /* this rank's CPUs: res->cpus_used is the job's once a repetition ran */
    dlg_job_info info = dlg_cell_job_info(run->plan, cell, cx->cpus, rep);
    void *state = NULL;
    uint64_t rep_mark = dlg_services_mark(svc);
    __atomic_store_n(&host->in_setup, true, __ATOMIC_RELEASE);
    int rc = ops->setup(&host->pub, cell->wl, &info, &state);
    __atomic_store_n(&host->in_setup, false, __ATOMIC_RELEASE);
    /* the setup noticed the stop request (host->stopping()), as a step
     * would: no failure */
    bool stopped = rc == -DLG_ESTOP && dlg_stop_signal();
    if (rc < 0 && !stopped) {
        fail(res, svc, rep_mark, rep_mark, host->context, "setup", rc);
        error_at_key(cell->job, host->context, res->error, sizeof res->error);
    }
    int all = dlg_ranks_all_set_up(run, rc >= 0, stopped, res);
    if (all <= 0) {
        if (rc >= 0)
            ops->teardown(state);
        if (all < 0) /* a stop on some rank (its signal every rank's now) */
            mark_stopped(res);
        return all < 0 ? 0 : -1;
    }
    uint64_t steps0 = res->steps;
    double rate = 0;
    rc = measure_repetition(cx, rep, rep_mark, state, res, &rate);
    if (rc != 0 && dlg_comm_size(run->comm) > 1)
        dlg_ranks_abort(run, res->error); /* the others may wait for this rank in a collective */
    bool cut = rc == 0 && strcmp(res->status, "partial") == 0; /* by a stop or the timeout */
    /* stopped before its first timed step, a repetition measured nothing:
     * its throughput of 0 would drag the mean down.  repeats counts the
     * complete ones. */
    if (rc == 0 && res->steps > steps0 && !cut)
        rates->full[res->reps++] = rate;
    else if (cut && res->steps > steps0) {
        rates->cut = rate;
        rates->have_cut = true;
    }
    checkpoint(run, cell, res, rates);
    ops->teardown(state);
    return rc;
}

/* The CPU packages' energy counters, or NULL; why there are none is said
 * once per run, by `dlgauge run` (cmd_run.c), not by each cell. */
static dlg_rapl *open_rapl(void)
{
    dlg_rapl *r;
    char why[1024];
    if (dlg_rapl_open(&r, NULL, why, sizeof why) == 0)
        return r;
    free(r);
    return NULL;
}

/* libgomp ends a process that cannot start its threads (ulimit -u,
 * pids.max) with exit code 1 and the reason on stderr only.  A cell's
 * process tells its parent first, as a result that the real one replaces
 * if the workload copes; in-process the reason is said before it may end
 * dlgauge. */
static void check_threads(dlg_run *run, const dlg_cell *cell, dlg_cell_result *res)
{
    char why[512];
    if (dlg_threads_startable(res->cpus_used, why, sizeof why) == 0)
        return;
    snprintf(res->error, sizeof res->error, "%s:%d: [job %s] %s", cell->job->sec->file, cell->job->sec->line,
             cell->job->name, why);
    res->status = "error";
    bool sent = send_result(run, cell, res);
    res->status = "ok";
    if (!sent) {
        fprintf(stderr, "dlgauge: %s:%d: [job %s] warning: %s\n", cell->job->sec->file, cell->job->sec->line,
                cell->job->name, why);
    }
    res->error[0] = '\0';
}

/* The CPUs this rank's cell is pinned to, as its figures send them: a
 * node's ranks that share CPUs count them once (rank_totals.h).  Left
 * unknown (their sum counts) where the set cannot be read. */
static void cpu_mask(cell_ctx *cx)
{
    dlg_cpuset s;
    if (dlg_cpuset_init(&s, 0) == 0 && dlg_cpuset_get_affinity(&s) == 0) {
        size_t chunks = dlg_cpu_mask_chunks(&s);
        cx->mask = chunks ? calloc(chunks, sizeof *cx->mask) : NULL;
        if (cx->mask) {
            dlg_cpu_mask_pack(&s, cx->mask, chunks);
            cx->mask_chunks = chunks;
        }
    }
    dlg_cpuset_fini(&s);
}

/* The cell's repetitions, once it is pinned to its CPUs (pinned of them). */
static void run_reps(cell_ctx *cx, int pinned, const dlg_cgroup_limits *env, dlg_cell_result *res)
{
    const dlg_cell *cell = cx->cell;
    double cq = cell->core[DLG_K_CPU_QUOTA].d;
    cx->pinned = pinned;
    res->cpus_used = cx->cpus = dlg_cpus_granted((int)cell->core[DLG_K_CPUS].i, pinned, cq, env->cpu_quota);
    double q = cq > 0 && (env->cpu_quota <= 0 || cq < env->cpu_quota) ? cq : env->cpu_quota;
    res->cpu_capacity = cx->capacity = q > 0 && q < pinned ? q : pinned;
    check_threads(cx->run, cell, res);
    cpu_mask(cx);
    dlg_proc_reset_hwm();
    rep_rates rates = {.have_cut = false};
    dlg_host_cpu_times(&cx->busy0, &cx->iowait0);
    char nvwhy[256];
    if (dlg_nvml_open(&cx->nv, getenv("DLGAUGE_NVML_LIB"), nvwhy, sizeof nvwhy) != 0)
        cx->nv = NULL; /* no driver: no GPU metrics, nothing to say */
    cx->gpu = dlg_cell_gpu(cell, cx->run->comm, cx->nv); /* the one its workload runs on */
    if (cx->gpu >= 0)
        dlg_nvml_name(cx->nv, cx->gpu, res->gpu_name, sizeof res->gpu_name);
    cx->rapl = open_rapl();
    if (res->ranks > 1 && !(cx->rep_lat = dlg_hist_new()))
        dlg_ranks_abort(cx->run, "out of memory for a repetition's step latencies");
    if (res->ranks > 1) /* the nodes' mean, from the repetitions' figures */
        res->iowait_fraction = NAN;
    int reps = (int)cell->core[DLG_K_REPEAT].i;
    for (int r = 0; r < reps && r < MAX_REPS; r++)
        if (one_repetition(cx, r, res, &rates) != 0 || strcmp(res->status, "partial") == 0)
            break;
    uint64_t busy1, iowait1;
    dlg_host_cpu_times(&busy1, &iowait1);
    if (res->ranks <= 1 && busy1 > cx->busy0)
        res->iowait_fraction = (double)(iowait1 - cx->iowait0) / (double)(busy1 - cx->busy0);
    summarize_rates(res, &rates);
    if (cx->nv)
        dlg_nvml_close(cx->nv);
    free(cx->rapl);
    free(cx->mask);
    dlg_hist_free(cx->rep_lat);
    note_rss(res);
}

void dlg_run_cell(dlg_run *run, const dlg_cell *cell, dlg_cell_result *res)
{
    res->start_realtime_ns = dlg_realtime_ns();
    res->unit = ((const dlg_workload_ops *)cell->job->workload->ops)->unit;
    res->warmup = (int)cell->core[DLG_K_WARMUP].i;
    dlg_services svc;
    dlg_services_init(&svc, run->plan, cell->core[DLG_K_STORAGE].text, run->verbosity);
    dlg_services_set_context(&svc, "%s:%d: [job %s]", cell->job->sec->file, cell->job->sec->line, cell->job->name);
    svc.comm = run->comm;
    res->ranks = dlg_comm_size(run->comm);
    int node;
    dlg_comm_node(run->comm, &node, &res->nodes);
    dlg_host_impl *host = dlg_host_new(&svc, "%s:%d: [job %s] %s", cell->job->sec->file, cell->job->sec->line,
                                       cell->job->name, cell->job->workload->name);
    dlg_cpuset saved;
    char why[256], where[600];
    dlg_cgroup_limits env;
    dlg_cgroup_env_limits(NULL, &env);
    int pinned = -DLG_ENOMEM;
    dlg_cpu_share share = dlg_cpu_share_exchange(run, node); /* every rank, before any can fail */
    if (dlg_cpuset_init(&saved, 0) != 0)
        snprintf(why, sizeof why, "out of memory");
    else
        pinned = dlg_pin_cpus(cell->core[DLG_K_CPUS].text, &env, share, &saved, res->cpu_list, sizeof res->cpu_list,
                              why, sizeof why);
    if (pinned >= 0)
        dlg_cpu_share_warn(cell, share, dlg_cpuset_count(&saved));
    if (!host) { /* said as every row's error is: for its job */
        snprintf(res->error, sizeof res->error, "%s:%d: [job %s] out of memory setting up the cell",
                 cell->job->sec->file, cell->job->sec->line, cell->job->name);
        res->status = dlg_failed_status(-DLG_ENOMEM);
    } else if (pinned < 0) {
        /* at the cpus key's line, as the plan's check says it */
        dlg_plan_where(cell->job->core_src[DLG_K_CPUS], cell->job->sec, where, sizeof where);
        snprintf(res->error, sizeof res->error, "%s[job %s] %s", where, cell->job->name, why);
        res->status = dlg_failed_status(pinned);
    }
    if (!host || pinned < 0) {
        dlg_ranks_all_set_up(run, false, false, res); /* the others set up its first repetition */
    } else {
        cell_ctx cx = {.run = run, .cell = cell, .svc = &svc, .host = host, .gpu = -1, .node = node};
        run_reps(&cx, pinned, &env, res);
        dlg_unpin_cpus(&saved);
    }
    dlg_cpuset_fini(&saved);
    dlg_host_free(host);
    dlg_services_fini(&svc);
}
