#define _GNU_SOURCE
#include "runner.h"

#include "affinity.h"
#include "cell_gpu.h"
#include "comm.h"
#include "cpu_energy.h"
#include "gpu_nvml.h"
#include "gpu_sampler.h"
#include "topology.h"
#include "host.h"
#include "options.h"
#include "proc_limits.h"
#include "progress.h"
#include "results.h"
#include "runner_ranks.h"
#include "signals.h"

#include <fcntl.h>
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

/* CPU time of every thread of this process, in ns (rusage has us). */
static uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

/* /proc/self/io read_bytes: what the process made block devices read. */
static uint64_t proc_read_bytes(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    if (!f)
        return 0;
    char line[128];
    unsigned long long v = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "read_bytes: %llu", &v) == 1)
            break;
    fclose(f);
    return v;
}

/* Peak RSS since the last reset (VmHWM), so each cell gets its own peak. */
static uint64_t proc_hwm_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[128];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}

static void reset_hwm(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, "5", 1) < 0) { /* older kernels: peak stays process-wide */ }
        close(fd);
    }
}

/* All CPUs' jiffies and their iowait part (/proc/stat), for the share of
 * time the machine waited on I/O while the cell ran. */
static void host_cpu_times(uint64_t *total, uint64_t *iowait)
{
    unsigned long long v[8] = {0};
    *total = *iowait = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
               &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++)
            *total += v[i];
        *iowait = v[4];
    }
    fclose(f);
}

/* Bytes read by the machine's disks (/proc/diskstats sectors x 512, whole
 * disks only, as listed in /sys/block), for what the cell cost the disk. */
static uint64_t disk_read_bytes(void)
{
    FILE *f = fopen("/proc/diskstats", "r");
    if (!f)
        return 0;
    char line[512], name[64];
    unsigned long long sectors, total = 0;
    unsigned maj, min_;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%u %u %63s %*u %*u %llu", &maj, &min_, name, &sectors) != 4)
            continue;
        char path[128];
        snprintf(path, sizeof path, "/sys/block/%s", name);
        if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0 || strncmp(name, "zram", 4) == 0 ||
            access(path, F_OK) != 0)
            continue;
        total += sectors * 512ull;
    }
    fclose(f);
    return total;
}

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

/* ---- the report API given to workloads ------------------------------- */
typedef struct field_sink {
    dlg_cell_result *res;
    const dlg_metric *metrics;
    dlg_host_impl *host;
} field_sink;

static dlg_wfield *wfield(dlg_fields *f, const char *key, dlg_field_type want)
{
    field_sink *fs = (field_sink *)f;
    const dlg_metric *m = fs->metrics;
    while (m && m->name && strcmp(m->name, key) != 0)
        m++;
    if (!m || !m->name) {
        fs->host->pub.log(&fs->host->pub, DLG_LOG_WARN, "reported field '%s' is not declared in its metrics; dropped", key);
        return NULL;
    }
    /* a string where a number was declared (or the reverse) would be
     * written as 0, or overwrite the repetitions' sum */
    if ((want == DLG_FIELD_STRING) != (m->type == DLG_FIELD_STRING)) {
        fs->host->pub.log(&fs->host->pub, DLG_LOG_WARN, "reported field '%s' is declared %s but reported with %s; dropped",
                          key, m->type == DLG_FIELD_STRING ? "a string" : "a number",
                          want == DLG_FIELD_STRING ? "add_string" : "add_int/add_double");
        return NULL;
    }
    for (size_t i = 0; i < fs->res->nwf; i++)
        if (fs->res->wf[i].key == m->name)
            return &fs->res->wf[i];
    dlg_wfield *arr = realloc(fs->res->wf, (fs->res->nwf + 1) * sizeof *arr);
    if (!arr)
        return NULL;
    fs->res->wf = arr;
    dlg_wfield *w = &arr[fs->res->nwf++];
    memset(w, 0, sizeof *w);
    w->key = m->name;
    w->type = m->type;
    return w;
}

static void add_double(dlg_fields *f, const char *key, double v)
{
    dlg_wfield *w = wfield(f, key, DLG_FIELD_DOUBLE);
    if (w) {
        w->sum += v;
        w->count++;
    }
}

static void add_int(dlg_fields *f, const char *key, int64_t v) { add_double(f, key, (double)v); }

static void add_string(dlg_fields *f, const char *key, const char *v)
{
    dlg_wfield *w = wfield(f, key, DLG_FIELD_STRING);
    if (w) {
        free(w->text);
        w->text = strdup(v ? v : "");
        w->count = 1;
    }
}

static const dlg_report_api report_api = {add_double, add_int, add_string};

/* ---- one repetition ---------------------------------------------------- */
typedef struct rep_totals {
    uint64_t items, steps, wait_ns, busy_ns, wall_ns;
    bool stopped;
} rep_totals;

/* The failure of a call made since mark: what was said during it (or by a
 * worker thread since the repetition began, rep_mark), else ctx ("file:line:
 * [job x] workload") names the cell. */
static int fail(dlg_cell_result *res, dlg_services *svc, uint64_t rep_mark, uint64_t mark, const char *ctx,
                const char *what, int rc)
{
    if (!dlg_services_said(svc, rep_mark, mark, res->error, sizeof res->error))
        snprintf(res->error, sizeof res->error, "%s: %s failed (code %d) without saying why", ctx, what, rc);
    res->status = "error";
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
        uint64_t lat = s.elapsed_ns ? s.elapsed_ns : now - t0;
        dlg_hist_record(res->latency, lat);
        t->items += s.items;
        t->wait_ns += s.wait_ns;
        t->busy_ns += lat;
        t->steps++;
        dlg_progress_tick(&prog, now, t->steps, t->items);
    }
    t->wall_ns = now - start;
    dlg_progress_end(&prog);
    return 0;
}

static void add_gpu_stats(dlg_cell_result *res, const dlg_gpu_stats *g)
{
    if (g->samples <= 0)
        return;
    res->gpu_samples += g->samples;
    res->gpu_util_sum_s += g->gpu_util * g->seconds;
    res->gpu_power_sum_s += g->power_avg_w * g->seconds;
    res->gpu_seconds += g->seconds;
    res->gpu_energy_j += g->energy_j;
    if (g->gpu_mem_peak > res->gpu_mem_peak)
        res->gpu_mem_peak = g->gpu_mem_peak;
}

/* The services' storage counters: bytes and I/Os read and written. */
typedef struct storage_io {
    uint64_t rb, ri, wb, wi;
} storage_io;

static storage_io storage_io_now(dlg_services *svc)
{
    return (storage_io){__atomic_load_n(&svc->bytes_read, __ATOMIC_RELAXED), __atomic_load_n(&svc->ios, __ATOMIC_RELAXED),
                        __atomic_load_n(&svc->bytes_written, __ATOMIC_RELAXED),
                        __atomic_load_n(&svc->write_ios, __ATOMIC_RELAXED)};
}

/* Adds what went through storage since t0 (the timed steps) to the cell. */
static void storage_io_add(dlg_cell_result *res, dlg_services *svc, storage_io t0)
{
    storage_io t1 = storage_io_now(svc);
    res->storage_bytes += t1.rb - t0.rb;
    res->storage_ios += t1.ri - t0.ri;
    res->storage_write_bytes += t1.wb - t0.wb;
    res->storage_write_ios += t1.wi - t0.wi;
}

/* Warm-up, timed steps and the workload's report of one repetition whose
 * setup went well; its teardown is the caller's. */
static int measure_repetition(dlg_run *run, const dlg_cell *cell, int rep, dlg_services *svc, uint64_t rep_mark,
                              dlg_host_impl *host,
                              dlg_nvml *nv, int gpu, dlg_rapl *rapl, void *state, dlg_cell_result *res,
                              double *throughput)
{
    const dlg_workload_ops *ops = cell->job->workload->ops;
    int rc;
    int64_t warmup = cell->core[DLG_K_WARMUP].i;
    dlg_ranks_gate gate; /* under several ranks, a stop ends every rank's warm-up at one step */
    dlg_ranks_gate_init(&gate, RANKS_GATE_NS);
    for (int64_t i = 0; i < warmup; i++) {
        if (dlg_ranks_gate_end(run, &gate, (uint64_t)i, mono_ns(), dlg_stop_signal() ? 2 : 0))
            break;
        dlg_step s = {0};
        uint64_t mark = dlg_services_mark(svc);
        if ((rc = ops->step(state, &s)) < 0 && !(rc == -DLG_ESTOP && dlg_stop_signal()))
            return fail(res, svc, rep_mark, mark, host->context, "warm-up step", rc);
    }
    /* the workload's own fields start here, as the runner's do */
    uint64_t mark = dlg_services_mark(svc);
    if (dlg_workload_has_begin_timed(ops) && (rc = ops->begin_timed(state)) < 0)
        return fail(res, svc, rep_mark, mark, host->context, "begin_timed", rc);
    /* read outside the CPU window below: a process of many threads takes
     * a while to read */
    dlg_sched_snap sch0, sch1;
    dlg_sched_snap_take(&sch0, "/proc", NULL);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    uint64_t ru0_ns = mono_ns(), cpu0_ns = process_cpu_ns();
    uint64_t io0 = proc_read_bytes(), disk0 = disk_read_bytes();
    storage_io io_t0 = storage_io_now(svc);
    rep_totals t = {0};
    dlg_gpu_sampler *gs = NULL;
    if (gpu >= 0 && dlg_gpu_sampler_start(&gs, nv, gpu, 100) != 0)
        gs = NULL;
    if (rapl)
        dlg_rapl_begin(rapl);
    rc = timed_steps(run, cell, ops, state, rep, res, svc, rep_mark, host->context, &t);
    if (rc == 0) /* the ranks' items, by the slowest rank's time */
        dlg_ranks_rep_totals(run, &t.items, &t.wall_ns, &t.stopped);
    if (rapl)
        dlg_rapl_end(rapl, &res->cpu_energy);
    dlg_gpu_stats gst;
    if (gs && dlg_gpu_sampler_stop(gs, &gst) == 0)
        add_gpu_stats(res, &gst);
    getrusage(RUSAGE_SELF, &ru1);
    /* the CPU time's own window: the timed steps plus the readings and
     * samplers around them, which a cell of a few microseconds is all;
     * rusage's microseconds would be too coarse for its share */
    res->cpu_window_cpu_s += (double)(process_cpu_ns() - cpu0_ns) / 1e9;
    res->cpu_window_s += (double)(mono_ns() - ru0_ns) / 1e9;
    res->cpu_user_s += tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
    res->cpu_sys_s += tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
    dlg_sched_snap_take(&sch1, "/proc", NULL);
    dlg_sched_add(&res->sched, &sch0, &sch1);
    dlg_sched_snap_free(&sch0);
    dlg_sched_snap_free(&sch1);
    res->major_faults += (uint64_t)(ru1.ru_majflt - ru0.ru_majflt);
    res->ctx_voluntary += (uint64_t)(ru1.ru_nvcsw - ru0.ru_nvcsw);
    res->ctx_involuntary += (uint64_t)(ru1.ru_nivcsw - ru0.ru_nivcsw);
    res->read_bytes += proc_read_bytes() - io0;
    res->disk_read_bytes += disk_read_bytes() - disk0;
    storage_io_add(res, svc, io_t0);
    res->items += t.items;
    res->steps += t.steps;
    res->wait_ns += t.wait_ns;
    res->busy_ns += t.busy_ns;
    res->wall_s += (double)t.wall_ns / 1e9;
    *throughput = t.wall_ns ? (double)t.items / ((double)t.wall_ns / 1e9) : 0;
    if (rc == 0 && ops->report && !t.stopped) {
        field_sink fs = {res, cell->job->workload->metrics, host};
        mark = dlg_services_mark(svc);
        int rrc = ops->report(state, &report_api, (dlg_fields *)&fs);
        if (rrc < 0)
            rc = fail(res, svc, rep_mark, mark, host->context, "report", rrc);
    }
    if (rc == 0 && t.stopped) {
        res->status = "partial";
        snprintf(res->error, sizeof res->error, "stopped by signal %d after %llu timed steps",
                 dlg_stop_signal(), (unsigned long long)res->steps);
    }
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

/* What the repetitions so far measured, sent before a teardown, which may
 * crash the process (or a later setup may): the parent keeps it then,
 * marked with how the process ended, rather than lose finished work. */
static void checkpoint(dlg_run *run, const dlg_cell *cell, dlg_cell_result *res, const rep_rates *rates)
{
    if (run->wire_fd < 0)
        return;
    summarize_rates(res, rates);
    res->rss_peak = proc_hwm_bytes();
    send_result(run, cell, res);
}

static int one_repetition(dlg_run *run, const dlg_cell *cell, int rep, dlg_services *svc, dlg_host_impl *host,
                          dlg_nvml *nv, int gpu, dlg_rapl *rapl, dlg_cell_result *res, rep_rates *rates)
{
    const dlg_workload_ops *ops = cell->job->workload->ops;
    dlg_job_info info = dlg_cell_job_info(run->plan, cell, res->cpus_used, rep);
    void *state = NULL;
    uint64_t rep_mark = dlg_services_mark(svc);
    int rc = ops->setup(&host->pub, cell->wl, &info, &state);
    if (rc < 0) {
        fail(res, svc, rep_mark, rep_mark, host->context, "setup", rc);
        error_at_key(cell->job, host->context, res->error, sizeof res->error);
    }
    if (!dlg_ranks_all_set_up(run, rc >= 0, res)) {
        if (rc >= 0)
            ops->teardown(state);
        return -1;
    }
    uint64_t steps0 = res->steps;
    double rate = 0;
    rc = measure_repetition(run, cell, rep, svc, rep_mark, host, nv, gpu, rapl, state, res, &rate);
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

void dlg_run_cell(dlg_run *run, const dlg_cell *cell, dlg_cell_result *res)
{
    res->start_realtime_ns = real_ns();
    res->unit = ((const dlg_workload_ops *)cell->job->workload->ops)->unit;
    res->warmup = (int)cell->core[DLG_K_WARMUP].i;
    dlg_services svc;
    dlg_services_init(&svc, run->plan, cell->core[DLG_K_STORAGE].text, run->verbosity);
    dlg_services_set_context(&svc, "%s:%d: [job %s]", cell->job->sec->file, cell->job->sec->line, cell->job->name);
    svc.comm = run->comm;
    res->ranks = dlg_comm_size(run->comm);
    dlg_host_impl *host = dlg_host_new(&svc, "%s:%d: [job %s] %s", cell->job->sec->file, cell->job->sec->line,
                                       cell->job->name, cell->job->workload->name);
    dlg_cpuset saved;
    char why[256], where[600];
    dlg_cgroup_limits env;
    dlg_cgroup_env_limits(NULL, &env);
    int pinned = -1;
    if (dlg_cpuset_init(&saved, 0) != 0)
        snprintf(why, sizeof why, "out of memory");
    else
        pinned = dlg_pin_cpus(cell->core[DLG_K_CPUS].text, &env, &saved, res->cpu_list, sizeof res->cpu_list, why,
                              sizeof why);
    if (!host) {
        snprintf(res->error, sizeof res->error, "out of memory");
        res->status = "error";
    } else if (pinned < 0) {
        /* at the cpus key's line, as the plan's check says it */
        dlg_plan_where(cell->job->core_src[DLG_K_CPUS], cell->job->sec, where, sizeof where);
        snprintf(res->error, sizeof res->error, "%s[job %s] %s", where, cell->job->name, why);
        res->status = "error";
    }
    if (!host || pinned < 0) {
        dlg_ranks_all_set_up(run, false, res); /* the others set up its first repetition */
    } else {
        double cq = cell->core[DLG_K_CPU_QUOTA].d;
        res->cpus_used = dlg_cpus_granted((int)cell->core[DLG_K_CPUS].i, pinned, cq, env.cpu_quota);
        double q = cq > 0 && (env.cpu_quota <= 0 || cq < env.cpu_quota) ? cq : env.cpu_quota;
        res->cpu_capacity = q > 0 && q < pinned ? q : pinned;
        check_threads(run, cell, res);
        reset_hwm();
        int reps = (int)cell->core[DLG_K_REPEAT].i;
        rep_rates rates = {.have_cut = false};
        uint64_t busy0, iowait0, busy1, iowait1;
        host_cpu_times(&busy0, &iowait0);
        dlg_nvml *nv = NULL;
        char nvwhy[256];
        if (dlg_nvml_open(&nv, getenv("DLGAUGE_NVML_LIB"), nvwhy, sizeof nvwhy) != 0)
            nv = NULL; /* no driver: no GPU metrics, nothing to say */
        int gpu = dlg_cell_gpu(cell, run->comm, nv); /* the one its workload runs on */
        if (gpu >= 0)
            dlg_nvml_name(nv, gpu, res->gpu_name, sizeof res->gpu_name);
        dlg_rapl *rapl = open_rapl();
        for (int r = 0; r < reps && r < MAX_REPS; r++)
            if (one_repetition(run, cell, r, &svc, host, nv, gpu, rapl, res, &rates) != 0 ||
                strcmp(res->status, "partial") == 0)
                break;
        host_cpu_times(&busy1, &iowait1);
        if (busy1 > busy0)
            res->iowait_fraction = (double)(iowait1 - iowait0) / (double)(busy1 - busy0);
        summarize_rates(res, &rates);
        if (nv)
            dlg_nvml_close(nv);
        free(rapl);
        res->rss_peak = proc_hwm_bytes();
        dlg_unpin_cpus(&saved);
    }
    dlg_cpuset_fini(&saved);
    dlg_host_free(host);
    dlg_services_fini(&svc);
}
