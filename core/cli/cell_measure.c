#define _GNU_SOURCE
#include "cell_measure.h"

#include "affinity.h"
#include "cell_exec.h"
#include "git_rev.h"
#include "metrics.h"
#include "results.h"
#include "comm.h"
#include "runner.h"
#include "runner_ranks.h"
#include "signals.h"
#include "sinkset.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef DLG_VERSION
#define DLG_VERSION "0.0.0"
#endif

static void field_s(dlg_wire_point *wp, const char *k, const char *v)
{
    dlg_field f = {.key = k, .type = DLG_FIELD_STRING, .v.s = v};
    dlg_wire_add_field(wp, &f);
}

static void field_u(dlg_wire_point *wp, const char *k, uint64_t v)
{
    dlg_field f = {.key = k, .type = DLG_FIELD_UINT, .v.u = v};
    dlg_wire_add_field(wp, &f);
}

static void field_d(dlg_wire_point *wp, const char *k, double v)
{
    dlg_field f = {.key = k, .type = DLG_FIELD_DOUBLE, .v.d = v};
    dlg_wire_add_field(wp, &f);
}

static void field_b(dlg_wire_point *wp, const char *k, bool v)
{
    dlg_field f = {.key = k, .type = DLG_FIELD_BOOL, .v.b = v};
    dlg_wire_add_field(wp, &f);
}

static int copy_point(const dlg_point *p, dlg_wire_point *out)
{
    if (dlg_wire_point_init(out, p->measurement, p->time_ns) != 0)
        return -1;
    for (size_t i = 0; i < p->ntags; i++)
        dlg_wire_set_tag(out, p->tags[i].key, p->tags[i].value);
    for (size_t i = 0; i < p->nfields; i++)
        dlg_wire_add_field(out, &p->fields[i]);
    return 0;
}

/* "FILE:LINE: [job NAME] what", a row's error naming the line of key, the
 * setting that stopped the cell (timeout, or memory for its cgroup's OOM
 * killer; where it is set), else the job's section (-1: no key to blame,
 * as for a crash). */
static void job_line(const dlg_cell *cell, int key, const char *what, char *buf, size_t len)
{
    char where[600];
    dlg_plan_where(key >= 0 ? cell->job->core_src[key] : NULL, cell->job->sec, where, sizeof where);
    snprintf(buf, len, "%s[job %s] %s", where, cell->job->name, what);
}

/* The result of a cell that produced none itself (crashed, killed, ...). */
static void synth_result(const dlg_run *run, const dlg_cell *cell, const char *status, const char *why,
                         int64_t start_ns, dlg_wire_point *out)
{
    dlg_wire_point_init(out, DLG_MEASUREMENT_RESULT, start_ns);
    dlg_wire_set_tag(out, "run_id", run->run_id);
    dlg_wire_set_tag(out, "job", cell->job->name);
    dlg_wire_set_tag(out, "workload", cell->job->workload->name);
    dlg_wire_set_tag(out, "host", run->host);
    dlg_wire_set_tag(out, "status", status);
    for (size_t i = 0; i < cell->ntags; i++)
        dlg_wire_set_tag(out, cell->tags[i].key, cell->tags[i].value);
    field_s(out, "unit", ((const dlg_workload_ops *)cell->job->workload->ops)->unit);
    field_u(out, "items", 0);
    field_u(out, "steps", 0);
    /* the run's ranks (1 alone, and for a cell's own process, which is no rank) */
    dlg_field ranks = {.key = "ranks", .type = DLG_FIELD_INT, .v.i = dlg_comm_size(run->comm)};
    dlg_wire_add_field(out, &ranks);
    char when[40];
    dlg_format_rfc3339(start_ns, when, sizeof when);
    field_s(out, "start_time", when);
    field_s(out, "version", DLG_VERSION);
    field_s(out, "git_rev", dlg_git_rev());
    field_s(out, "error", why);
}

static void emit_to_sinks(dlg_run *run, const dlg_point *p) { dlg_sinkset_write(run->sinks, p, 1); }

static void progress_to_sinks(void *ctx, const dlg_point *p) { dlg_sinkset_write(((dlg_run *)ctx)->sinks, p, 1); }

static const char *in_process(dlg_run *run, const dlg_cell *cell, dlg_wire_point *out)
{
    dlg_cell_result res;
    if (dlg_cell_result_init(&res) != 0) {
        char line[1600];
        job_line(cell, -1, "out of memory for the cell's result", line, sizeof line);
        memset(&res, 0, sizeof res);
        snprintf(res.error, sizeof res.error, "%s", line);
        res.status = "oom"; /* the other ranks' rows say it too */
        dlg_ranks_cell_failed(run, &res);
        /* the row's time: when the cell failed, not 1970 */
        synth_result(run, cell, "oom", res.error, dlg_realtime_ns(), out);
        return "oom";
    }
    run->emit = emit_to_sinks;
    /* a crash of the cell is dlgauge's own: at least say which cell it was,
     * and whose code, as a process-isolated cell's crash says it */
    char who[DLG_CRASH_LINE_MAX];
    snprintf(who, sizeof who, "%s:%d: [job %s] workload %s (%s)", cell->job->sec->file, cell->job->sec->line,
             cell->job->name, cell->job->workload->name,
             cell->job->workload_path ? cell->job->workload_path : "built in");
    dlg_crash_guard guard;
    dlg_crash_guard_arm(&guard, who);
    dlg_run_cell(run, cell, &res);
    dlg_crash_guard_disarm(&guard);
    dlg_point_buf *pb = malloc(sizeof *pb);
    if (pb) {
        dlg_result_point(run, cell, &res, pb);
        copy_point(&pb->point, out);
        free(pb);
    } else {
        char line[1600];
        job_line(cell, -1, "out of memory for the cell's result", line, sizeof line);
        synth_result(run, cell, "oom", line, res.start_realtime_ns, out);
    }
    dlg_cell_result_fini(&res);
    return "ok";
}

/* Formats v into the next free part of buf, returning where it went. */
static char *num_arg(char *buf, size_t buflen, size_t *used, size_t v)
{
    char *at = buf + *used;
    int n = snprintf(at, buflen - *used, "%zu", v);
    *used += (size_t)n + 1;
    return at;
}

/* argv for `dlgauge __cell`: the child re-plans the same configuration. */
static char **child_argv(const dlg_run *run, const dlg_cli *cli, const dlg_run_args *a, const dlg_job *job,
                         size_t k, char *buf, size_t buflen)
{
    /* room for every -v too: any number of them may be given */
    size_t nv = cli->verbosity > 1 ? (size_t)cli->verbosity - 1 : 0;
    size_t ndirs = 0;
    while (cli->plugin_dirs && cli->plugin_dirs[ndirs])
        ndirs++;
    char **v = calloc(40 + nv + 2 * a->nsets + 2 * ndirs, sizeof *v);
    if (!v)
        return NULL;
    size_t n = 0, o = 0;
    v[n++] = "dlgauge";
    for (size_t i = 0; i < ndirs; i++) { /* every one, in order: the child finds what the parent found */
        v[n++] = "--plugin-dir";
        v[n++] = (char *)cli->plugin_dirs[i];
    }
    for (size_t i = 0; i < nv; i++)
        v[n++] = "-v";
    if (cli->verbosity == 0)
        v[n++] = "-q";
    v[n++] = "__cell";
    v[n++] = "--run-id";
    v[n++] = (char *)run->run_id;
    v[n++] = "--host";
    v[n++] = (char *)run->host;
    v[n++] = "--job";
    v[n++] = (char *)job->name;
    v[n++] = "--cell";
    v[n++] = num_arg(buf, buflen, &o, k);
    v[n++] = "--cell-no";
    v[n++] = num_arg(buf, buflen, &o, run->cell_no);
    v[n++] = "--total";
    v[n++] = num_arg(buf, buflen, &o, run->plan->total_cells);
    v[n++] = "--config-id";
    v[n++] = (char *)run->config_id;
    if (run->tty)
        v[n++] = "--tty";
    for (size_t i = 0; i < a->nsets; i++) {
        v[n++] = "--set";
        v[n++] = (char *)a->sets[i];
    }
    v[n++] = (char *)a->file;
    v[n] = NULL;
    return v;
}

/* The status of a cell's process that ended as oc says, why in why, and in
 * *key the setting to blame (DLG_K_*, or -1). */
static const char *classify(const dlg_cell_outcome *oc, int64_t oom_kills, const dlg_cell *cell, char *why,
                            size_t len, int *key)
{
    *key = -1;
    int stop = dlg_stop_signal();
    if (stop && (oc->term_signal == SIGINT || oc->term_signal == SIGTERM || oc->term_signal == SIGHUP)) {
        /* the user's stop reached the cell before it could say what it measured */
        snprintf(why, len, "stopped by signal %d before the cell sent a result", stop);
        return "partial";
    }
    if (oom_kills > 0) {
        snprintf(why, len, "killed by the kernel's OOM killer: the cell needs more than memory = %s",
                 cell->core[DLG_K_MEMORY].text);
        *key = DLG_K_MEMORY;
        return "oom";
    }
    if (oc->timed_out) {
        snprintf(why, len, "stopped after timeout = %s", cell->core[DLG_K_TIMEOUT].text);
        *key = DLG_K_TIMEOUT;
        return "timeout";
    }
    if (oc->term_signal == SIGKILL && oc->system_oom_kills > 0) {
        /* not its own cgroup's: the machine's, or a container's around dlgauge */
        snprintf(why, len, "killed (SIGKILL) by the kernel's OOM killer (/proc/vmstat oom_kill +%lld while it ran): "
                 "the machine, or the container dlgauge runs in, ran out of memory%s%s",
                 (long long)oc->system_oom_kills,
                 cell->core[DLG_K_MEMORY].set ? " before the cell reached memory = " : "; memory = SIZE gives the "
                 "cell a limit of its own", cell->core[DLG_K_MEMORY].set ? cell->core[DLG_K_MEMORY].text : "");
        return "oom";
    }
    if (oc->term_signal) {
        /* SIGBUS from reading a mapping is a file that shrank under it */
        /* named as an in-process crash names it: the workload and its file */
        snprintf(why, len, "the cell's process died of signal %d (%s) in workload %s (%s)%s", oc->term_signal,
                 strsignal(oc->term_signal), cell->job->workload->name,
                 cell->job->workload_path ? cell->job->workload_path : "built in",
                 oc->term_signal == SIGBUS    ? "; a data file read through a mapping (an LMDB dataset, or storage "
                                                "type = mmap) shrank while it was read?"
                 : oc->term_signal == SIGABRT ? ": the code called abort(), e.g. a failed assert (its message, if "
                                                "it wrote one, is on stderr)"
                                              : "");
        return "crashed";
    }
    if (oc->exit_code == DLG_CELL_EXIT_NOMEM) {
        snprintf(why, len, "the cell's process ran out of memory as it started, before it could send a result");
        return "oom";
    }
    if (oc->exit_code == DLG_CELL_EXIT_CGROUP) {
        snprintf(why, len, "the cell's process could not join its cgroup, so it did not run (its limits would not "
                 "have held; the reason is on stderr)");
        return "error";
    }
    if (oc->frame_lost) {
        snprintf(why, len, "out of memory receiving the cell's points: its result was lost (the cell's process "
                 "exited with code %d)", oc->exit_code);
        return "error";
    }
    snprintf(why, len, "the cell's process exited with code %d without a result", oc->exit_code);
    return "error";
}

/* The status tag of a result point is st. */
static bool point_status_is(const dlg_wire_point *wp, const char *st)
{
    for (size_t i = 0; i < wp->point.ntags; i++)
        if (strcmp(wp->tags[i].key, "status") == 0)
            return strcmp(wp->tags[i].value, st) == 0;
    return false;
}

/* The cell's process sent what it had measured, then ended as `what` says
 * (the watchdog's SIGTERM, its cgroup's OOM killer, a crash in a teardown
 * or a later repetition's setup): keep those steps, under status. */
static void keep_sent(dlg_wire_point *out, const dlg_cell *cell, const char *status, int key, const char *what)
{
    const dlg_field *steps = dlg_wire_field(out, "steps");
    char line[1200], why[1400];
    job_line(cell, key, what, line, sizeof line);
    snprintf(why, sizeof why, "%s; the %llu timed steps before it are kept", line,
             steps ? (unsigned long long)(steps->type == DLG_FIELD_UINT ? steps->v.u : (uint64_t)steps->v.i) : 0ull);
    dlg_wire_set_tag(out, "status", status);
    field_s(out, "error", why);
}

/* Whether a cell's process that sent a result ended otherwise than it says:
 * an error it reported stands, an "ok" from before a crash does not. */
static bool ended_badly(const dlg_cell_outcome *oc, int64_t ooms, const dlg_wire_point *res)
{
    return oc->timed_out || ooms > 0 || ((oc->term_signal || oc->exit_code != 0) && point_status_is(res, "ok"));
}

/* A partial result while dlgauge itself was not asked to stop: a signal
 * reached the cell's process alone (a kill by hand, a low-memory daemon
 * such as earlyoom).  Said so, in the row and on stderr (cmd_run.c); not
 * recorded, so --resume measures the cell again. */
static void stopped_alone(dlg_wire_point *out, const dlg_cell *cell)
{
    const dlg_field *e = dlg_wire_field(out, "error");
    char what[600], line[1400];
    snprintf(what, sizeof what, "%s: a signal sent to the cell's process alone, not to dlgauge; --resume measures "
             "it again", e && e->type == DLG_FIELD_STRING ? e->v.s : "stopped by a signal");
    job_line(cell, -1, what, line, sizeof line);
    field_s(out, "error", line);
}

/* The file a cell's process runs: dlgauge's own path, or /proc/self/exe
 * once that path no longer holds it (dlgauge reinstalled while a sweep
 * ran: each later cell failed to start, exit 127), so that every cell runs
 * the build the run began with. */
static void self_exe(char *exe, size_t len)
{
    static const char gone[] = " (deleted)";
    ssize_t n = readlink("/proc/self/exe", exe, len - 1);
    size_t k = n > 0 ? (size_t)n : 0, g = sizeof gone - 1;
    exe[k] = '\0';
    if (k == 0 || (k > g && strcmp(exe + k - g, gone) == 0))
        snprintf(exe, len, "/proc/self/exe");
}

static const char *in_child(dlg_run *run, const dlg_cli *cli, const dlg_run_args *a, const dlg_cell *cell,
                            dlg_wire_point *out)
{
    int64_t start_ns = dlg_realtime_ns();
    int64_t mem = cell->core[DLG_K_MEMORY].set ? cell->core[DLG_K_MEMORY].i : 0;
    double quota = cell->core[DLG_K_CPU_QUOTA].d;
    dlg_cgroup cg;
    char why[1024], cgname[128];
    snprintf(cgname, sizeof cgname, "dlgauge-%d-%zu", (int)getpid(), run->cell_no);
    bool enforced = dlg_cgroup_create(&cg, cgname, mem, quota, why, sizeof why) == 0;
    if (!enforced && run->limits_warned_job != cell->job) {
        /* why names each failed limit by its result field */
        fprintf(stderr, "dlgauge: %s:%d: [job %s] warning: limits not enforced: %s\n", cell->job->sec->file,
                cell->job->sec->line, cell->job->name, why);
        run->limits_warned_job = cell->job;
    }
    char exe[PATH_MAX], nums[256];
    self_exe(exe, sizeof exe);
    char **argv = child_argv(run, cli, a, cell->job, cell->index, nums, sizeof nums);
    dlg_cgroup_limits env;
    dlg_cgroup_env_limits(NULL, &env);
    int threads = dlg_cpus_granted((int)cell->core[DLG_K_CPUS].i, dlg_cpus_available(), quota, env.cpu_quota);
    dlg_cell_spawn sp = {exe, argv, &cg, threads,
                         (uint64_t)cell->core[DLG_K_TIMEOUT].i};
    dlg_cell_outcome oc;
    const char *status = "ok";
    bool lost = false; /* the result the cell sent, lost here */
    if (!argv || dlg_cell_exec(&sp, progress_to_sinks, run, &oc, why, sizeof why) != 0) {
        char line[1600];
        job_line(cell, -1, argv ? why : "out of memory", line, sizeof line);
        synth_result(run, cell, "error", line, start_ns, out);
        status = "error";
    } else {
        int64_t ooms = dlg_cgroup_oom_kills(&cg);
        char what[512];
        int key;
        const dlg_field *said = oc.have_result && !dlg_wire_field(&oc.result, "unit")
                                    ? dlg_wire_field(&oc.result, "error") : NULL;
        if (said && said->type == DLG_FIELD_STRING) {
            /* the cell failed before its setup and sent why alone (cmd_cell.c): its row, said once */
            status = point_status_is(&oc.result, "oom") ? "oom" : "error";
            synth_result(run, cell, status, said->v.s, start_ns, out);
        } else if (oc.have_result) {
            dlg_wire_point_move(out, &oc.result);
            oc.have_result = false;
            if (ended_badly(&oc, ooms, out)) {
                const char *st = classify(&oc, ooms, cell, what, sizeof what, &key);
                keep_sent(out, cell, st, key, what);
            } else if (point_status_is(out, "partial") && !dlg_stop_signal())
                stopped_alone(out, cell);
        } else if (oc.frame_lost && oc.exit_code == 0) {
            /* the cell measured and sent it; this process had no memory to
             * take it in: a point without fields is a cell not done */
            fprintf(stderr, "dlgauge: %s:%d: [job %s] out of memory receiving the cell's result, which is lost; "
                    "--resume measures it again\n", cell->job->sec->file, cell->job->sec->line, cell->job->name);
            dlg_wire_point_init(out, DLG_MEASUREMENT_RESULT, start_ns);
            status = "error";
            lost = true;
        } else {
            char line[1600];
            status = classify(&oc, ooms, cell, what, sizeof what, &key);
            job_line(cell, key, what, line, sizeof line);
            synth_result(run, cell, status, line, start_ns, out);
        }
        if (!lost)
            field_d(out, "cell_wall_s", oc.wall_s);
        dlg_cell_outcome_free(&oc);
    }
    if (mem > 0 && !lost) {
        field_u(out, "memory_limit_bytes", (uint64_t)mem);
        field_b(out, "memory_enforced", cg.mem_dir[0] != '\0');
        uint64_t peak = dlg_cgroup_peak_bytes(&cg); /* 0: not kept (v2 before Linux 5.19) */
        if (peak > 0)
            field_u(out, "memory_peak_bytes", peak);
    }
    if (quota > 0 && !lost)
        field_b(out, "cpu_quota_enforced", cg.cpu_dir[0] != '\0');
    dlg_cgroup_destroy(&cg);
    free(argv);
    return status;
}

const char *dlg_measure_cell(dlg_run *run, const dlg_cli *cli, const dlg_run_args *a, const dlg_job *job,
                             size_t k, dlg_wire_point *out)
{
    dlg_cell cell;
    char err[1024];
    int prc = dlg_plan_cell(run->plan, job, k, &cell, err, sizeof err);
    if (prc != 0) {
        dlg_cell_free(&cell);
        dlg_wire_point_init(out, DLG_MEASUREMENT_RESULT, 0);
        /* a point without fields: the cell is not done, --resume measures it */
        fprintf(stderr, "dlgauge: %s:%d: %s\n", job->sec->file, job->sec->line, err);
        dlg_cell_result r; /* the other ranks wait for its first setup */
        memset(&r, 0, sizeof r);
        snprintf(r.error, sizeof r.error, "%s:%d: %s", job->sec->file, job->sec->line, err);
        r.status = dlg_failed_status(prc);
        dlg_ranks_cell_failed(run, &r);
        return r.status;
    }
    const char *status = cell.core[DLG_K_ISOLATION].i == DLG_ISOLATE_NONE ? in_process(run, &cell, out)
                                                                          : in_child(run, cli, a, &cell, out);
    /* the status tag of the point is the truth (in-process sets it there) */
    for (size_t i = 0; i < out->point.ntags; i++)
        if (strcmp(out->tags[i].key, "status") == 0)
            status = out->tags[i].value;
    dlg_cell_free(&cell);
    return status;
}
