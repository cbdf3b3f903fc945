/* dlgauge __cell: the child process of one cell (see cell_exec.h).  It
 * plans the same configuration as its parent, runs cell K of job J and
 * sends progress and result points down fd 3.  Not for users. */
#include "cli.h"

#include "config.h"
#include "journal.h"
#include "metrics.h"
#include "point_wire.h"
#include "registry.h"
#include "results.h"
#include "runner.h"
#include "cell_exec.h"
#include "signals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cell_args {
    const char *file, *run_id, *host, *job, *config_id;
    size_t cell, cell_no, total;
    bool tty;
    const char *sets[64];
    size_t nsets;
} cell_args;

static int parse(int argc, char **argv, cell_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--tty"))
            a->tty = true;
        else if (!v && o[0] == '-')
            return -1;
        else if (!strcmp(o, "--run-id"))
            a->run_id = argv[++i];
        else if (!strcmp(o, "--host"))
            a->host = argv[++i];
        else if (!strcmp(o, "--job"))
            a->job = argv[++i];
        else if (!strcmp(o, "--config-id"))
            a->config_id = argv[++i];
        else if (!strcmp(o, "--cell"))
            a->cell = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(o, "--cell-no"))
            a->cell_no = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(o, "--total"))
            a->total = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(o, "--set") && a->nsets < 64)
            a->sets[a->nsets++] = argv[++i];
        else if (o[0] != '-' && !a->file)
            a->file = o;
        else
            return -1;
    }
    return a->file && a->run_id && a->host && a->job ? 0 : -1;
}

/* The file as planned by the parent, not as edited since (the parent
 * checks this too, just before starting the cell). */
static int same_config(const dlg_config *cfg, const cell_args *a, char *err, size_t errlen)
{
    char id[20];
    dlg_journal_config_id(cfg, id, sizeof id);
    if (!a->config_id || strcmp(id, a->config_id) == 0)
        return 0;
    snprintf(err, errlen, "%s changed since this run started (its settings differ): cell not measured; start a "
             "new run for the new settings", a->file);
    return -1;
}

static void emit_to_parent(dlg_run *run, const dlg_point *p) { dlg_wire_send(run->wire_fd, p); }

/* A failure before the cell's setup, for the job (what names no line or
 * key is said at the file), sent to the run as a result of the error
 * alone (status oom where it says out of memory), which the run makes the
 * cell's row and prints once; said here only when the run cannot take it
 * (its row then says the process ended without a result). */
static void say_failure(const cell_args *a, const char *err)
{
    char line[4200];
    size_t fl = strlen(a->file);
    const char *sep = strncmp(err, a->file, fl) == 0 && err[fl] == ':' ? strstr(err + fl, ": ") : NULL;
    int loc = sep ? (int)(sep - err) : (int)fl; /* "FILE" or "FILE:LINE" */
    const char *rest = sep ? sep + 2 : err;
    if (strstr(err, "[job "))
        snprintf(line, sizeof line, "%s%s%s", err[0] == '[' ? a->file : "", err[0] == '[' ? ": " : "", err);
    else /* the job named after the place */
        snprintf(line, sizeof line, "%.*s: [job %s] %s%s", loc, sep ? err : a->file, a->job, rest,
                 strcmp(rest, "out of memory") == 0 ? " before the cell's setup" : "");
    dlg_tag tags[] = {{"job", a->job}, {"status", dlg_says_out_of_memory(err) ? "oom" : "error"}};
    dlg_field why = {.key = "error", .type = DLG_FIELD_STRING, .v.s = line};
    dlg_point p = {DLG_MEASUREMENT_RESULT, tags, 2, &why, 1, 0};
    if (dlg_wire_send(DLG_CELL_FD, &p) != 0)
        fprintf(stderr, "dlgauge: %s\n", line);
}

int dlg_cmd_cell(const dlg_cli *cli, int argc, char **argv)
{
    cell_args a;
    if (parse(argc, argv, &a) != 0) {
        fprintf(stderr, "dlgauge __cell: bad arguments (this command is started by dlgauge run)\n");
        return DLG_EXIT_USAGE;
    }
    dlg_signals_install_child();
    char err[4096];
    dlg_config cfg;
    dlg_registry reg = {0};
    dlg_plan plan = {0};
    dlg_cell cell = {0};
    int rc = DLG_EXIT_USAGE;
    if (dlg_config_load(&cfg, a.file, err, sizeof err) != 0)
        goto fail;
    for (size_t i = 0; i < a.nsets; i++)
        if (dlg_config_set(&cfg, a.sets[i], err, sizeof err) != 0)
            goto fail;
    if (same_config(&cfg, &a, err, sizeof err) != 0)
        goto fail;
    if (dlg_registry_init(&reg, cli->plugin_dirs) != 0 || dlg_registry_scan(&reg) != 0) {
        snprintf(err, sizeof err, "%s", reg.why); /* err held nothing to say */
        goto fail;
    }
    if (dlg_plan_build(&plan, &cfg, &reg, a.job, err, sizeof err) != 0 ||
        dlg_plan_cell(&plan, &plan.jobs[0], a.cell, &cell, err, sizeof err) != 0)
        goto fail;
    plan.total_cells = a.total;
    dlg_run run = {.plan = &plan, .emit = emit_to_parent, .wire_fd = DLG_CELL_FD, .verbosity = cli->verbosity,
                   .tty = a.tty, .cell_no = a.cell_no};
    snprintf(run.run_id, sizeof run.run_id, "%s", a.run_id);
    snprintf(run.host, sizeof run.host, "%s", a.host);
    dlg_cell_result res;
    dlg_point_buf *pb = malloc(sizeof *pb);
    if (!pb || dlg_cell_result_init(&res) != 0) {
        free(pb);
        snprintf(err, sizeof err, "out of memory");
        goto fail;
    }
    dlg_run_cell(&run, &cell, &res);
    dlg_result_point(&run, &cell, &res, pb);
    rc = dlg_wire_send(DLG_CELL_FD, &pb->point) == 0 ? DLG_EXIT_OK : DLG_EXIT_FAILED;
    free(pb);
    dlg_cell_result_fini(&res);
    goto done;
fail:
    say_failure(&a, err);
done:
    dlg_cell_free(&cell);
    dlg_plan_free(&plan);
    dlg_registry_free(&reg);
    dlg_config_free(&cfg);
    return rc;
}
