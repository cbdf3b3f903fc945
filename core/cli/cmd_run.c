/* dlgauge run: plan, then measure every cell and hand each result to the
 * sinks as soon as it exists, so nothing measured is lost to a later failure. */
#define _GNU_SOURCE
#include "cli.h"

#include "cell_measure.h"
#include "config.h"
#include "cpu_energy.h"
#include "deliver.h"
#include "host.h"
#include "inventory.h"
#include "journal.h"
#include "registry.h"
#include "results.h"
#include "run_ranks.h"
#include "runner.h"
#include "signals.h"
#include "sinkset.h"
#include "units.h"
#include "utf8_out.h"

#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* run's options that take a value (cli.h: main.c reads this list too). */
const char *const dlg_run_valued[] = {"--job", "--set", NULL};

static bool takes_value(const char *opt)
{
    for (const char *const *v = dlg_run_valued; *v; v++)
        if (strcmp(opt, *v) == 0)
            return true;
    return false;
}

/* (dlgauge's own options, -v and the like, are caught in main.c.) */
static void unknown_option(const char *opt)
{
    if (takes_value(opt))
        fprintf(stderr, "dlgauge run: %s needs a value (%s)\n", opt,
                strcmp(opt, "--job") == 0 ? "--job NAME" : "--set SECTION.key=value");
    else
        fprintf(stderr, "dlgauge run: unknown option '%s' (dlgauge help run lists them)\n", opt);
}

/* One of dlg_run_valued with its value; 0, or -1 after saying why. */
static int set_valued(dlg_run_args *a, const char *opt, const char *val)
{
    bool job = strcmp(opt, "--job") == 0;
    const char **list = job ? a->jobs : a->sets;
    size_t *n = job ? &a->njobs : &a->nsets;
    size_t max = job ? sizeof a->jobs / sizeof *a->jobs : sizeof a->sets / sizeof *a->sets;
    if (*n == max) {
        fprintf(stderr, "dlgauge run: too many %s options\n", opt);
        return -1;
    }
    list[(*n)++] = val;
    return 0;
}

static int parse_args(int argc, char **argv, dlg_run_args *a)
{
    memset(a, 0, sizeof *a);
    bool file_only = false; /* after "--": FILE, even one that starts with '-' */
    for (int i = 1; i < argc; i++) {
        if (!file_only && strcmp(argv[i], "--") == 0)
            file_only = true;
        else if (file_only || argv[i][0] != '-') {
            if (a->file) {
                fprintf(stderr, "dlgauge run: unexpected argument '%s' (one FILE.ini)\n", argv[i]);
                return -1;
            }
            a->file = argv[i];
        } else if (strcmp(argv[i], "--dry-run") == 0)
            a->dry_run = true;
        else if (strcmp(argv[i], "--resume") == 0)
            a->resume = true;
        /* "--job --set x": --job needs a value, as main.c has it (no job "--set") */
        else if (takes_value(argv[i]) && i + 1 < argc && !takes_value(argv[i + 1])) {
            if (set_valued(a, argv[i], argv[i + 1]) != 0)
                return -1;
            i++;
        } else {
            unknown_option(argv[i]);
            return -1;
        }
    }
    if (!a->file) {
        fprintf(stderr, "usage: dlgauge run FILE.ini [--job NAME]... [--set SECTION.key=value]... [--dry-run] "
                        "[--resume]\n");
        return -1;
    }
    return 0;
}

static void print_cells(const dlg_plan *p)
{
    printf("%zu cell%s in %zu job%s\n", p->total_cells, p->total_cells == 1 ? "" : "s", p->njobs,
           p->njobs == 1 ? "" : "s");
    for (size_t j = 0; j < p->njobs; j++) {
        const dlg_job *job = &p->jobs[j];
        for (size_t k = 0; k < job->ncells; k++) {
            dlg_cell cell;
            char err[1024];
            if (dlg_plan_cell(p, job, k, &cell, err, sizeof err) != 0) {
                printf("  %s #%zu: %s\n", job->name, k, err);
                dlg_cell_free(&cell);
                continue;
            }
            printf("  %s #%zu: workload=%s", job->name, k, job->workload->name);
            for (size_t i = 0; i < DLG_K_COUNT; i++)
                if (cell.core[i].set && i != DLG_K_WORKLOAD)
                    printf(" %s=%s", dlg_core_job_options[i].name, cell.core[i].text);
            for (size_t i = 0; i < job->nwl; i++)
                if (cell.wl[i].set)
                    printf(" %s=%s", job->workload->options[i].name, cell.wl[i].text);
            printf("\n");
            dlg_cell_free(&cell);
        }
    }
    for (size_t i = 0; i < p->nsinks; i++)
        printf("sink %s: %s (%s)\n", p->sinks[i].name, p->sinks[i].desc->name, p->sinks[i].plugin_path);
}

static double num(const dlg_wire_point *wp, const char *key)
{
    const dlg_field *f = dlg_wire_field(wp, key);
    if (!f)
        return -1;
    return f->type == DLG_FIELD_DOUBLE ? f->v.d : f->type == DLG_FIELD_UINT ? (double)f->v.u : (double)f->v.i;
}

/* " [memory not enforced]": a limit the cell's row names but its cgroup
 * could not hold, on the cell's own line (the warning is said once per
 * job); "" where every limit held. */
static const char *unenforced_note(const dlg_wire_point *wp)
{
    const dlg_field *m = dlg_wire_field(wp, "memory_enforced"), *q = dlg_wire_field(wp, "cpu_quota_enforced");
    bool mem = m && m->type == DLG_FIELD_BOOL && !m->v.b, quota = q && q->type == DLG_FIELD_BOOL && !q->v.b;
    return mem && quota ? " [memory, cpu_quota not enforced]"
           : mem        ? " [memory not enforced]"
           : quota      ? " [cpu_quota not enforced]"
                        : "";
}

/* repeat: the cell's configured repetitions (0 unknown); a cell that
 * ended early says how many were complete, the ones its rate is over. */
static void rate_line(const char *status, const dlg_wire_point *wp, long long repeat)
{
    const dlg_field *unit = dlg_wire_field(wp, "unit");
    char rate[64];
    double thr = num(wp, "throughput");
    dlg_format_rate(thr, unit ? unit->v.s : "items", rate, sizeof rate);
    printf("  %s %s", status, rate);
    if (num(wp, "repeats") > 1 && thr > 0) { /* the 95% CI, relative: readable at any scale */
        char ci[32];
        dlg_format_ci_pct(num(wp, "throughput_ci95"), thr, ci, sizeof ci);
        printf(" ±%s", ci);
    }
    if (num(wp, "latency_p50_us") >= 0) {
        char p50[32], p99[32];
        dlg_format_latency_us(num(wp, "latency_p50_us"), p50, sizeof p50);
        dlg_format_latency_us(num(wp, "latency_p99_us"), p99, sizeof p99);
        printf("  p50 %s  p99 %s", p50, p99);
    }
    printf("  (%.0f steps", num(wp, "steps"));
    if (strcmp(status, "ok") != 0 && repeat > 0)
        printf(", %.0f of %lld repetitions complete", num(wp, "repeats"), repeat);
    printf(")%s\n", unenforced_note(wp));
}

/* A cell without a rate: its status, not a rate of 0 from the steps of a
 * repetition that failed (why is the error line on stderr). */
static void no_rate(const char *status, const dlg_wire_point *wp)
{
    printf("  %s", status);
    if (num(wp, "steps") > 0)
        printf(" (%.0f steps, no repetition completed)", num(wp, "steps"));
    printf("%s\n", unenforced_note(wp));
}

static void summary_line(const dlg_run *run, const dlg_job *job, size_t k, const char *status,
                         const dlg_wire_point *wp)
{
    /* padded by characters, not bytes, so a job named "résumé" lines up */
    size_t cols = rep_utf8_columns(job->name);
    printf("[%zu/%zu] %s%*s", run->cell_no, run->plan->total_cells, job->name,
           cols < 16 ? (int)(16 - cols) : 0, "");
    dlg_cell cell;
    char err[256];
    long long repeat = 0;
    if (dlg_plan_cell(run->plan, job, k, &cell, err, sizeof err) == 0) {
        for (size_t i = 0; i < cell.ntags; i++)
            printf(" %s=%s", cell.tags[i].key, cell.tags[i].value);
        repeat = (long long)cell.core[DLG_K_REPEAT].i;
    }
    dlg_cell_free(&cell);
    if (!dlg_wire_field(wp, "throughput")) /* no repetition was measured */
        no_rate(status, wp);
    else
        rate_line(status, wp, repeat);
    fflush(stdout);
}

static void make_run_id(const dlg_plan *p, char *buf, size_t len)
{
    if (p->run_id) {
        snprintf(buf, len, "%s", p->run_id);
        return;
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(buf, len, "%s-%x", stamp, (unsigned)getpid());
}

/* A cell's process plans the file anew: edited since the run began, the
 * cell would measure other settings than the plan and the journal say. */
static bool config_edited(const dlg_run *run, const dlg_run_args *a, char *why, size_t len)
{
    char what[1400];
    int rc = dlg_journal_config_recheck(a->file, a->sets, a->nsets, run->config_id, what, sizeof what);
    if (rc == 0)
        return false;
    snprintf(why, len, "%s: stopped before cell %zu/%zu; %s", what, run->cell_no, run->plan->total_cells,
             rc > 0 ? "restore it and run --resume to go on, or start a new run" : "run --resume to go on");
    return true;
}

/* No memory for the cell's result point: nothing reaches the sinks, so the
 * cell is not done either (status becomes error, said once). */
static bool result_lost(const dlg_run *run, const dlg_job *job, const dlg_wire_point *wp, char *st, size_t stlen)
{
    if (wp->point.nfields)
        return false;
    if (strcmp(st, "error") != 0) { /* an error has said why already */
        fprintf(stderr, "dlgauge: %s:%d: [job %s] cell %zu/%zu: out of memory for its result, which is lost; "
                "--resume measures it again\n", job->sec->file, job->sec->line, job->name, run->cell_no,
                run->plan->total_cells);
        snprintf(st, stlen, "error");
    }
    return true;
}

/* The run's dlgauge_host point, once per run: a resumed run writes it
 * only to sinks that lack it, or where the machine it resumes on differs
 * from what the journal says went out.  A journal that cannot be written
 * is said by the first cell. */
static void write_inventory(const dlg_run *run, dlg_journal *jn)
{
    dlg_wire_point inv;
    if (dlg_inventory_point(&inv, run->run_id, run->host, dlg_realtime_ns()) != 0)
        return;
    char id[24];
    dlg_inventory_id(&inv, id, sizeof id);
    /* journaled for each sink that took it (a sink returns from write with
     * it delivered or on disk): --resume writes it to the others alone */
    (void)dlg_inventory_send(run->sinks, jn, &inv, id);
    dlg_wire_point_free(&inv);
}

/* Once per run (a resumed one too): why the cells will have no
 * cpu_energy_j, when the RAPL counters cannot be read here. */
static void note_no_cpu_energy(void)
{
    dlg_rapl *r = NULL;
    char why[1024];
    if (dlg_rapl_open(&r, NULL, why, sizeof why) != 0)
        fprintf(stderr, "dlgauge: note: cpu energy: %s: no cpu_energy_j\n", why);
    free(r);
}

/* The word on cell k of job (every rank's under several): run it, skip
 * it (done in rank 0's journal, or its row kept there: *kept holds that
 * row then, for rank 0 to send to the sinks that lack it) or stop the run
 * (a stop asked for on any rank, or the file edited since the run began:
 * *failed counts that). */
static int cell_action(dlg_run *run, const dlg_run_args *a, dlg_delivery *d, const dlg_job *job, size_t k,
                       int *failed, dlg_wire_point *kept, char *st, size_t stlen)
{
    int action = dlg_stop_signal() ? DLG_CELL_STOP : DLG_CELL_RUN;
    char note[1600];
    st[0] = '\0';
    if (dlg_comm_rank(run->comm) == 0 && action != DLG_CELL_STOP) {
        if (dlg_journal_is_done(d->jn, job->name, k))
            action = DLG_CELL_SKIP;
        else if (dlg_deliver_kept_row(d, job->name, k, kept, st, stlen) == 0)
            action = DLG_CELL_SKIP; /* nothing to measure: its row is sent from here */
        else if (config_edited(run, a, note, sizeof note)) {
            fprintf(stderr, "dlgauge: %s\n", note);
            (*failed)++;
            action = DLG_CELL_STOP;
        }
    }
    return dlg_ranks_cell_action(run, action);
}

/* A cell's process that failed because the file was edited between the
 * check before it and its own reading of the file (it refuses to measure
 * other settings than the plan's): no measurement, so no row and not
 * done; the run stops there as it would have a moment earlier.  Alone
 * only: under ranks cells run in-process and never read the file again. */
static bool edited_under_cell(const dlg_run *run, const dlg_run_args *a, const char *status)
{
    char note[1600];
    if (strcmp(status, "error") != 0 || dlg_comm_size(run->comm) > 1 || !config_edited(run, a, note, sizeof note))
        return false;
    fprintf(stderr, "dlgauge: %s\n", note);
    return true;
}

/* A row kept by the interrupted run goes to the sinks that lack it, as
 * the cell's result; returns whether it counts as a failure. */
static bool send_kept(dlg_run *run, dlg_delivery *d, const dlg_job *job, size_t k, const char *st,
                      dlg_wire_point *wp)
{
    size_t lack = dlg_deliver_row(d, job->name, k, st, &wp->point, DLG_ROW_KEPT);
    summary_line(run, job, k, st, wp);
    if (run->verbosity > 0)
        fprintf(stderr, "dlgauge: note: [%zu/%zu] %s: not measured again: the row kept by the interrupted run %s\n",
                run->cell_no, run->plan->total_cells, job->name,
                lack ? "missed a sink again, and stays kept" : "went to the sinks that lacked it");
    dlg_wire_point_free(wp);
    return strcmp(st, "ok") != 0 || lack > 0;
}

/* Before measuring cell k again for --resume: some sinks have its row
 * already (a sink killed dlgauge while it was sent).  Said, as the sinks
 * will then hold two measurements of it, one each. */
static void note_partly_sent(const dlg_run *run, const dlg_delivery *d, const dlg_job *job, size_t k)
{
    char lacking[1024];
    if (run->verbosity > 0 && dlg_deliver_partly_sent(d, job->name, k, lacking, sizeof lacking))
        fprintf(stderr, "dlgauge: note: [%zu/%zu] %s: measured again for the sinks that lack its row (%s); the "
                "others keep the row of the interrupted run\n", run->cell_no, run->plan->total_cells, job->name,
                lacking);
}

/* What this process measured, for the line that ends an interrupted run:
 * a stop before the first cell measured nothing. */
typedef struct cells_run {
    size_t measured;
    bool last_partial;
} cells_run;

/* Runs every cell not yet in the journal; returns how many failed.  Under
 * several ranks each runs every cell, and rank 0 alone keeps its results. */
static int run_cells(dlg_run *run, const dlg_cli *cli, const dlg_run_args *a, dlg_delivery *d, cells_run *ran)
{
    int failed = 0, action = DLG_CELL_RUN;
    bool lead = dlg_comm_rank(run->comm) == 0;
    for (size_t j = 0; j < run->plan->njobs && action != DLG_CELL_STOP; j++) {
        const dlg_job *job = &run->plan->jobs[j];
        for (size_t k = 0; k < job->ncells; k++) {
            run->cell_no++;
            dlg_wire_point wp;
            char st[32];
            if ((action = cell_action(run, a, d, job, k, &failed, &wp, st, sizeof st)) == DLG_CELL_STOP) {
                if (st[0]) /* another rank's stop: the kept row stays kept */
                    dlg_wire_point_free(&wp);
                break;
            }
            if (action == DLG_CELL_SKIP) {
                if (lead && st[0])
                    failed += send_kept(run, d, job, k, st, &wp);
                continue;
            }
            if (lead)
                note_partly_sent(run, d, job, k);
            dlg_signals_cell_started(); /* a stop from here on ends this cell */
            const char *status = dlg_measure_cell(run, cli, a, job, k, &wp);
            ran->measured++;
            ran->last_partial = strcmp(status, "partial") == 0;
            if (!lead) { /* its failure is in rank 0's row, said there */
                dlg_wire_point_free(&wp);
                continue;
            }
            if (edited_under_cell(run, a, status)) { /* not done: --resume measures it */
                dlg_wire_point_free(&wp);
                failed++;
                action = DLG_CELL_STOP;
                break;
            }
            dlg_result_tag_columns(run->plan, &wp);
            snprintf(st, sizeof st, "%s", status);
            bool lost = result_lost(run, job, &wp, st, sizeof st);
            const dlg_field *why = dlg_wire_field(&wp, "error");
            /* partial while the run goes on: its cell's process alone was
             * stopped (cell_measure.c), which is no success either */
            if (strcmp(st, "ok") != 0 && (strcmp(st, "partial") != 0 || !dlg_stop_signal())) {
                failed++;
                if (why)
                    fprintf(stderr, "dlgauge: %s\n", why->v.s);
            }
            /* a cell stopped by the user, or lost, is not done: --resume
             * runs it again (and a row that missed a sink is kept) */
            if (!lost)
                dlg_deliver_row(d, job->name, k, st, &wp.point,
                                strcmp(st, "partial") != 0 ? DLG_ROW_MEASURED : DLG_ROW_PARTIAL);
            summary_line(run, job, k, st, &wp);
            dlg_wire_point_free(&wp);
        }
    }
    return failed;
}

/* Identity of a configuration for --resume: every resolved entry, and the
 * --job selection. */
static void config_hash(const dlg_config *cfg, const dlg_run_args *a, char *out, size_t len)
{
    uint64_t h = 0;
    dlg_journal_hash_config(cfg, &h);
    for (size_t i = 0; i < a->njobs; i++)
        dlg_journal_hash(a->jobs[i], strlen(a->jobs[i]) + 1, &h);
    snprintf(out, len, "%016llx", (unsigned long long)h);
}

/* The run journal: [global] journal, else results/journal/NAME-HASH.journal
 * where HASH is of the INI's absolute path, so that two configurations of
 * one name (d1/x.ini, d2/x.ini) neither block nor overwrite each other's.
 * legacy: the name without HASH, as dlgauge gave it before (--resume of a
 * run it interrupted); "" with [global] journal. */
static void journal_path(const dlg_config *cfg, char *out, size_t len, char *legacy, size_t legacy_len)
{
    legacy[0] = '\0';
    const dlg_entry *e = dlg_section_get(dlg_config_find(cfg, DLG_SEC_GLOBAL, ""), "journal");
    if (e) {
        snprintf(out, len, "%s", e->value);
        return;
    }
    const char *base = strrchr(cfg->path, '/') ? strrchr(cfg->path, '/') + 1 : cfg->path;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".ini") == 0)
        n -= 4;
    char *real = realpath(cfg->path, NULL);
    const char *where = real ? real : cfg->path;
    uint64_t h = 0;
    dlg_journal_hash(where, strlen(where), &h);
    free(real);
    snprintf(out, len, "results/journal/%.*s-%08llx.journal", (int)n, base, (unsigned long long)(h & 0xffffffffu));
    snprintf(legacy, legacy_len, "results/journal/%.*s.journal", (int)n, base);
}

static int exit_code(int failed, const dlg_sinkset *ss)
{
    int sig = dlg_stop_signal();
    if (sig) /* 128 + the signal, as a shell says it; 129 for a hangup */
        return sig == SIGINT ? DLG_EXIT_SIGINT : sig == SIGTERM ? DLG_EXIT_SIGTERM : 128 + sig;
    /* points spooled for a later `dlgauge flush` are not lost, but the
     * database did not get them: a script or CI job must not read that as
     * success (the house rule for an unreachable database) */
    return failed || ss->failures || ss->kept ? DLG_EXIT_FAILED : DLG_EXIT_OK;
}

/* The plan's cells that the journal has done: not its every record (a
 * journal edited by hand, or one whose config named other cells). */
static size_t plan_cells_done(const dlg_plan *plan, const dlg_journal *jn)
{
    size_t n = 0;
    for (size_t i = 0; i < plan->njobs; i++)
        for (size_t k = 0; k < plan->jobs[i].ncells; k++)
            n += dlg_journal_is_done(jn, plan->jobs[i].name, k);
    return n;
}

/* A fresh journal, or the interrupted run's (which also gives the run id). */
static int open_journal(const dlg_run_args *a, const dlg_config *cfg, dlg_run *run, dlg_journal *jn, char *err,
                        size_t errlen)
{
    char path[1024], legacy[1024], hash[32];
    int ranks = dlg_comm_size(run->comm), node, nodes;
    dlg_comm_node(run->comm, &node, &nodes);
    journal_path(cfg, path, sizeof path, legacy, sizeof legacy);
    config_hash(cfg, a, hash, sizeof hash);
    if (!a->resume) {
        make_run_id(run->plan, run->run_id, sizeof run->run_id);
        if (dlg_journal_create(jn, path, run->run_id, hash, err, errlen) == 0)
            return dlg_journal_record_ranks(jn, ranks, nodes, err, errlen);
        if (legacy[0]) /* the default place: say how to choose another */
            snprintf(err + strlen(err), errlen - strlen(err), " (set [global] journal = PATH for another place)");
        return -1;
    }
    if (legacy[0] && access(path, F_OK) != 0 && access(legacy, F_OK) == 0)
        snprintf(path, sizeof path, "%s", legacy); /* interrupted before journals were named by path */
    if (dlg_journal_resume(jn, path, hash, err, errlen) != 0 ||
        dlg_journal_check_ranks(jn, ranks, nodes, err, errlen) != 0)
        return -1;
    snprintf(run->run_id, sizeof run->run_id, "%s", jn->run_id);
    size_t done = plan_cells_done(run->plan, jn);
    char kept[128] = "";
    if (dlg_journal_nkept(jn))
        snprintf(kept, sizeof kept, ", %zu more with %s row kept for the sinks that may lack it", dlg_journal_nkept(jn),
                 dlg_journal_nkept(jn) == 1 ? "its" : "each");
    if (run->verbosity > 0)
        fprintf(stderr, "dlgauge: resuming run %s: %zu cell%s already done%s\n", jn->run_id, done,
                done == 1 ? "" : "s", kept);
    return 0;
}

/* Every [storage] section created and destroyed once before any cell:
 * what only creation finds (a profile that cannot be read) stops the run
 * at its section's line instead of failing its cells one by one. */
static int check_storages(dlg_plan *plan, int verbosity, char *err, size_t errlen)
{
    for (size_t i = 0; i < plan->nstorages; i++) {
        const dlg_instance_spec *spec = &plan->storages[i];
        if (!spec->sec)
            continue; /* a bare type with its defaults */
        dlg_services svc;
        dlg_services_init(&svc, plan, NULL, verbosity);
        int rc = dlg_services_storage_check(&svc, spec->name);
        if (rc < 0)
            dlg_services_error_copy(&svc, err, errlen); /* at the key's or section's line */
        dlg_services_fini(&svc);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* A cell's own process loads the file again (and the run checks it is
 * unchanged), which a pipe (`run /dev/stdin`, `run <(...)`) cannot give
 * twice: refused before any cell, where --dry-run still reads it once. */
static int check_rereadable(const dlg_plan *plan, const char *file, char *err, size_t errlen)
{
    struct stat st;
    if (stat(file, &st) != 0 || S_ISREG(st.st_mode))
        return 0;
    for (size_t j = 0; j < plan->njobs; j++)
        if (strcmp(plan->jobs[j].core_text[DLG_K_ISOLATION], "none") != 0) {
            snprintf(err, errlen, "%s: is not a regular file (a pipe?): each cell's process reads it again, "
                     "which a pipe cannot give twice: save it to a file and run that", file);
            return -1;
        }
    return 0;
}

/* Where the plan's warnings go: rank 0's stderr; the other ranks would
 * say the same again.  NULL: none could be opened, so stderr. */
static FILE *notes_stream(bool lead)
{
    FILE *f = lead ? stderr : fopen("/dev/null", "w");
    return f ? f : stderr;
}

/* What the run of a file holds, freed by run_file in any case. */
typedef struct run_files {
    dlg_config cfg;
    dlg_registry reg;
    dlg_plan plan;
    dlg_journal jn;
    dlg_sinkset ss;
    bool sinks_open; /* rank 0's sinks, until the run's end closes them */
} run_files;

/* The file (with --set) loaded, the plugins scanned, the plan built and
 * checked against this machine: what --dry-run and a run share.  Its
 * warnings go to notes.  0, or -1 with err[] filled. */
static int plan_file(const dlg_cli *cli, const dlg_run_args *a, dlg_comm *comm, FILE *notes, run_files *f, char *err,
                     size_t errlen)
{
    bool lead = dlg_comm_rank(comm) == 0;
    if (dlg_config_load(&f->cfg, a->file, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < a->nsets; i++)
        if (dlg_config_set(&f->cfg, a->sets[i], err, errlen) != 0)
            return -1;
    if (dlg_registry_init(&f->reg, cli->plugin_dirs) != 0 || dlg_registry_scan(&f->reg) != 0) {
        snprintf(err, errlen, "%s", f->reg.why);
        return -1;
    }
    dlg_registry_notes(&f->reg, notes);
    if (dlg_plan_build_jobs(&f->plan, &f->cfg, &f->reg, a->jobs, a->njobs, err, errlen) != 0 ||
        dlg_plan_check_inputs(&f->plan, notes, err, errlen) != 0 ||
        dlg_plan_check_workloads(&f->plan, lead ? cli->verbosity : 0, notes, err, errlen) != 0 ||
        check_storages(&f->plan, cli->verbosity, err, errlen) != 0 ||
        dlg_ranks_check_isolation(&f->plan, dlg_comm_size(comm), err, errlen) != 0)
        return -1;
    return 0;
}

/* --dry-run after plan_file: the sinks checked too, then rank 0 lists the
 * cells.  The exit code, or -1 with err[] filled. */
static int dry_run(const dlg_cli *cli, dlg_comm *comm, dlg_plan *plan, char *err, size_t errlen)
{
    if (dlg_sinkset_check(plan, cli->verbosity, err, errlen) != 0)
        return -1;
    int ready = dlg_ranks_ready(comm, 0, "", plan);
    if (ready != 0)
        return ready;
    if (dlg_comm_rank(comm) == 0)
        print_cells(plan);
    return dlg_stdout_written(DLG_EXIT_OK); /* the cells are its product */
}

/* The run's own fields: a rank other than 0 keeps no journal, writes no
 * sink and draws no progress: its results go to rank 0. */
static void init_run(dlg_run *run, dlg_plan *plan, const dlg_config *cfg, const dlg_cli *cli, dlg_comm *comm)
{
    bool lead = dlg_comm_rank(comm) == 0;
    *run = (dlg_run){.plan = plan, .wire_fd = -1, .verbosity = lead ? cli->verbosity : 0,
                     .tty = lead && isatty(2) != 0, .comm = comm};
    dlg_journal_config_id(cfg, run->config_id, sizeof run->config_id);
    if (gethostname(run->host, sizeof run->host) != 0 || !run->host[0])
        snprintf(run->host, sizeof run->host, "unknown");
}

/* Rank 0's lines before the first cell (unless -q): the run and its
 * cells, a missing cpu energy, results that no sink keeps. */
static void say_start(const dlg_cli *cli, const dlg_run_args *a, const dlg_run *run)
{
    if (cli->verbosity <= 0)
        return;
    if (!a->resume)
        fprintf(stderr, "dlgauge: run %s: %zu cell%s\n", run->run_id, run->plan->total_cells,
                run->plan->total_cells == 1 ? "" : "s");
    note_no_cpu_energy();
    if (run->plan->nsinks == 0)
        fprintf(stderr, "dlgauge: %s has no [sink]: results are only printed here (add [sink csv] with "
                        "path = results.csv to keep them)\n", a->file);
}

/* Rank 0's sinks closed (their flush's lines), then the files that hold
 * the results said (made while the sinks are open: the files they named
 * live as long), but for a sink that lacks rows, which d says. */
static void close_sinks(const dlg_cli *cli, run_files *f, const dlg_delivery *d, struct timespec opened)
{
    bool *incomplete = calloc(f->plan.nsinks + 1, sizeof *incomplete);
    if (incomplete) /* a sink that lacks rows is not where the results are */
        dlg_deliver_say_missed(d, incomplete, stderr);
    char *files_line = NULL;
    size_t files_len = 0;
    FILE *files = cli->verbosity > 0 ? open_memstream(&files_line, &files_len) : NULL;
    if (files) {
        dlg_say_sink_files_but(&f->plan, &f->ss, incomplete, opened, files);
        fclose(files);
    }
    dlg_sinkset_close(&f->ss, 10ull * 1000000000ull);
    f->sinks_open = false;
    if (files_line)
        fputs(files_line, stderr);
    free(files_line);
    free(incomplete);
}

/* The last line of a run a signal stopped, true to what it measured. */
static void say_interrupted(const cells_run *ran)
{
    if (ran->measured == 0)
        fprintf(stderr, "dlgauge: interrupted before a cell started: nothing was measured; dlgauge run --resume "
                        "continues\n");
    else
        fprintf(stderr, "dlgauge: interrupted: results so far were written%s; dlgauge run --resume continues\n",
                ran->last_partial ? " (the last marked partial)" : "");
}

/* The cells of the plan_file'd plan measured and delivered, from opening
 * the journal and the sinks to closing them.  The exit code, or -1 with
 * err[] filled. */
static int run_plan(const dlg_cli *cli, const dlg_run_args *a, dlg_comm *comm, run_files *f, char *err,
                    size_t errlen)
{
    bool lead = dlg_comm_rank(comm) == 0;
    if (check_rereadable(&f->plan, a->file, err, errlen) != 0)
        return -1;
    dlg_run run;
    init_run(&run, &f->plan, &f->cfg, cli, comm);
    if (lead) {
        if (open_journal(a, &f->cfg, &run, &f->jn, err, errlen) != 0)
            return -1;
        dlg_journal_print_notes(&f->jn, stderr); /* even with -q: a cron job's overlap goes unguarded */
    }
    dlg_signals_install();
    /* the files the run wrote are those changed since; a resumed run's
     * earlier part may be in a file this part does not change */
    struct timespec opened = {0, 0};
    if (!a->resume)
        clock_gettime(CLOCK_REALTIME_COARSE, &opened);
    if (lead) {
        f->sinks_open = true;
        if (dlg_sinkset_open(&f->ss, &f->plan, true, cli->verbosity, err, errlen) != 0)
            return -1;
        run.sinks = &f->ss;
    }
    int ready = dlg_ranks_ready(comm, 0, "", &f->plan);
    if (ready != 0)
        return ready;
    if (lead) {
        write_inventory(&run, &f->jn);
        say_start(cli, a, &run);
    }
    dlg_delivery delivery = {.ss = &f->ss, .jn = &f->jn};
    cells_run ran = {0, false};
    int failed = run_cells(&run, cli, a, &delivery, &ran);
    if (f->jn.nfailed) { /* the exit code is the whole run's, not this part's */
        fprintf(stderr, "dlgauge: %zu cell%s failed before the run was interrupted (see %s and their rows)\n",
                f->jn.nfailed, f->jn.nfailed == 1 ? "" : "s", f->jn.path);
        failed += (int)f->jn.nfailed;
    }
    if (lead)
        close_sinks(cli, f, &delivery, opened);
    int rc = exit_code(failed, &f->ss);
    if (lead && dlg_stop_signal())
        say_interrupted(&ran);
    return dlg_ranks_exit_status(comm, rc);
}

/* The run of a.file on this rank (alone: the whole run). */
static int run_file(const dlg_cli *cli, const dlg_run_args *a, dlg_comm *comm)
{
    char err[4096];
    run_files f = {.jn = {.fd = -1}};
    FILE *notes = notes_stream(dlg_comm_rank(comm) == 0);
    int rc = -1;
    if (plan_file(cli, a, comm, notes, &f, err, sizeof err) == 0)
        rc = a->dry_run ? dry_run(cli, comm, &f.plan, err, sizeof err) : run_plan(cli, a, comm, &f, err, sizeof err);
    if (rc < 0) {
        if (strcmp(err, "out of memory") == 0) /* said where no line or key was to blame */
            snprintf(err, sizeof err, "%s: out of memory before the first cell", a->file);
        rc = dlg_ranks_ready(comm, dlg_exit_for_error(err), err, NULL);
    }
    if (f.sinks_open)
        dlg_sinkset_close(&f.ss, 0);
    if (notes != stderr)
        fclose(notes);
    dlg_journal_close(&f.jn);
    dlg_plan_free(&f.plan);
    dlg_registry_free(&f.reg);
    dlg_config_free(&f.cfg);
    return rc;
}

int dlg_cmd_run(const dlg_cli *cli, int argc, char **argv)
{
    dlg_run_args a;
    if (parse_args(argc, argv, &a) != 0)
        return DLG_EXIT_USAGE;
    /* the ranks, when a launcher started this process: every rank then
     * runs the same cells in step, and rank 0 writes the results */
    dlg_comm *comm;
    char err[1024];
    if (dlg_comm_open(&comm, err, sizeof err) != 0) {
        /* named as its lines will be once it has a rank (run_ranks.c) */
        int rank = dlg_comm_launched_rank();
        if (rank > 0)
            fprintf(stderr, "rank %d: dlgauge: %s\n", rank, err);
        else
            fprintf(stderr, "dlgauge: %s\n", err);
        return dlg_exit_for_error(err);
    }
    dlg_rank_stderr rs;
    dlg_rank_stderr_begin(&rs, dlg_comm_rank(comm));
    int rc = run_file(cli, &a, comm);
    dlg_rank_stderr_end(&rs);
    dlg_comm_close(comm);
    return rc;
}
