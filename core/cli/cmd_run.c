/* dlgauge run: plan, then measure every cell and hand each result to the
 * sinks as soon as it exists, so nothing measured is lost to a later failure. */
#define _GNU_SOURCE
#include "cli.h"

#include "config.h"
#include "registry.h"
#include "results.h"
#include "runner.h"
#include "signals.h"
#include "sinkset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SETS 64

typedef struct run_args {
    const char *file;
    const char *job;
    const char *sets[MAX_SETS];
    size_t nsets;
    bool dry_run;
} run_args;

static int parse_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dry-run") == 0)
            a->dry_run = true;
        else if (strcmp(argv[i], "--job") == 0 && i + 1 < argc)
            a->job = argv[++i];
        else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
            if (a->nsets == MAX_SETS) {
                fprintf(stderr, "dlgauge run: more than %d --set options\n", MAX_SETS);
                return -1;
            }
            a->sets[a->nsets++] = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "dlgauge run: unknown option '%s' (or missing its value)\n", argv[i]);
            return -1;
        } else if (!a->file)
            a->file = argv[i];
        else {
            fprintf(stderr, "dlgauge run: unexpected argument '%s'\n", argv[i]);
            return -1;
        }
    }
    if (!a->file) {
        fprintf(stderr, "usage: dlgauge run FILE.ini [--job NAME] [--set SECTION.key=value]... [--dry-run]\n");
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

static void summary_line(const dlg_run *run, const dlg_cell *cell, const dlg_cell_result *res)
{
    printf("[%zu/%zu] %-16s", run->cell_no, run->plan->total_cells, cell->job->name);
    for (size_t i = 0; i < cell->ntags; i++)
        printf(" %s=%s", cell->tags[i].key, cell->tags[i].value);
    if (strcmp(res->status, "error") == 0) {
        printf("  error\n");
        return;
    }
    printf("  %s %.4g %s/s", res->status, res->throughput.mean, res->unit);
    if (res->reps > 1)
        printf(" ±%.2g", res->throughput.ci95);
    if (dlg_hist_count(res->latency))
        printf("  p50 %.4g us  p99 %.4g us", dlg_hist_percentile(res->latency, 50) / 1e3,
               dlg_hist_percentile(res->latency, 99) / 1e3);
    printf("  (%llu steps)\n", (unsigned long long)res->steps);
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

/* Runs every cell; returns the number of cells that failed. */
static int run_cells(dlg_run *run)
{
    int failed = 0;
    for (size_t j = 0; j < run->plan->njobs && !dlg_stop_signal(); j++) {
        const dlg_job *job = &run->plan->jobs[j];
        for (size_t k = 0; k < job->ncells && !dlg_stop_signal(); k++) {
            dlg_cell cell;
            dlg_cell_result res;
            char err[1024];
            run->cell_no++;
            if (dlg_plan_cell(run->plan, job, k, &cell, err, sizeof err) != 0 || dlg_cell_result_init(&res) != 0) {
                fprintf(stderr, "dlgauge: %s\n", err);
                dlg_cell_free(&cell);
                failed++;
                continue;
            }
            dlg_run_cell(run, &cell, &res);
            if (strcmp(res.status, "error") == 0) {
                fprintf(stderr, "dlgauge: %s\n", res.error);
                failed++;
            }
            dlg_point_buf *pb = malloc(sizeof *pb);
            if (pb) {
                dlg_result_point(run, &cell, &res, pb);
                dlg_sinkset_write(run->sinks, &pb->point, 1);
                free(pb);
            }
            summary_line(run, &cell, &res);
            dlg_cell_result_fini(&res);
            dlg_cell_free(&cell);
        }
    }
    return failed;
}

static int exit_code(int failed, const dlg_sinkset *ss)
{
    int sig = dlg_stop_signal();
    if (sig)
        return sig == 2 ? DLG_EXIT_SIGINT : DLG_EXIT_SIGTERM;
    return failed || ss->failures ? DLG_EXIT_FAILED : DLG_EXIT_OK;
}

int dlg_cmd_run(const dlg_cli *cli, int argc, char **argv)
{
    run_args a;
    if (parse_args(argc, argv, &a) != 0)
        return DLG_EXIT_USAGE;
    char err[4096];
    dlg_config cfg;
    dlg_registry reg = {0};
    dlg_plan plan = {0};
    int rc = DLG_EXIT_USAGE;
    if (dlg_config_load(&cfg, a.file, err, sizeof err) != 0)
        goto fail;
    for (size_t i = 0; i < a.nsets; i++)
        if (dlg_config_set(&cfg, a.sets[i], err, sizeof err) != 0)
            goto fail;
    if (dlg_registry_init(&reg, cli->plugin_dir) != 0) {
        snprintf(err, sizeof err, "out of memory");
        goto fail;
    }
    dlg_registry_scan(&reg);
    if (dlg_plan_build(&plan, &cfg, &reg, a.job, err, sizeof err) != 0)
        goto fail;
    if (a.dry_run) {
        print_cells(&plan);
        rc = DLG_EXIT_OK;
        goto done;
    }
    dlg_signals_install();
    dlg_sinkset ss;
    if (dlg_sinkset_open(&ss, &plan, true, cli->verbosity, err, sizeof err) != 0) {
        dlg_sinkset_close(&ss, 0);
        goto fail;
    }
    dlg_run run = {.plan = &plan, .sinks = &ss, .verbosity = cli->verbosity, .tty = isatty(2) != 0};
    make_run_id(&plan, run.run_id, sizeof run.run_id);
    if (gethostname(run.host, sizeof run.host) != 0 || !run.host[0])
        snprintf(run.host, sizeof run.host, "unknown");
    if (cli->verbosity > 0)
        fprintf(stderr, "dlgauge: run %s: %zu cells\n", run.run_id, plan.total_cells);
    int failed = run_cells(&run);
    dlg_sinkset_close(&ss, 10ull * 1000000000ull);
    rc = exit_code(failed, &ss);
    if (dlg_stop_signal())
        fprintf(stderr, "dlgauge: interrupted: results so far were written (the last marked partial)\n");
    goto done;
fail:
    fprintf(stderr, "dlgauge: %s\n", err);
done:
    dlg_plan_free(&plan);
    dlg_registry_free(&reg);
    dlg_config_free(&cfg);
    return rc;
}
