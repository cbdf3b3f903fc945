/* dlgauge flush: open the sinks of a configuration that may hold points
 * back (which replays whatever they spooled while their database was
 * unreachable), flush, close.  The others (csv, json) are not opened: that
 * would only create their files, in the directory flush runs in.
 *
 * Exit codes (README): 2 when a sink's configuration must be fixed (or the
 * file has no sink at all), 1 when points could not be delivered now but
 * stay where they were (a script retries on 1 and alerts on 2), 0 when
 * everything was delivered, or when no sink holds points back (said).  Each
 * sink is flushed on its own, so that one that cannot open does not keep
 * the others' spools from being sent; the worst outcome is the exit code. */
#include "cli.h"

#include "config.h"
#include "plan.h"
#include "registry.h"
#include "sinkset.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The exit an open failure calls for, from its DLG_E* code (the one the
 * sink gave host->error(), else the one it returned): what may pass by
 * itself (a spool it cannot read or rewrite, a full disk, no memory, the
 * database) is worth a retry; a value it calls invalid or unsupported, and
 * a code it does not have, need a person. */
static int open_failure_exit(int code)
{
    switch (code) {
    case DLG_EIO:
    case DLG_EAGAIN:
    case DLG_ENOMEM:
    case DLG_ESTOP:
        return DLG_EXIT_FAILED;
    default:
        return DLG_EXIT_USAGE;
    }
}

/* Sink i of plan alone (a plan of that one sink) through its check, as
 * `run --dry-run` does: what the sink's own check refuses is a
 * configuration error whatever code it carries.  Every sink is checked,
 * those flush does not open too (they create nothing when checked), so a
 * broken configuration still exits 2.  0, DLG_EXIT_USAGE, or
 * DLG_EXIT_FAILED where the check ran out of memory. */
static int check_one(const dlg_cli *cli, const dlg_plan *plan, size_t i, dlg_plan *one)
{
    *one = *plan;
    one->sinks = &plan->sinks[i];
    one->nsinks = 1;
    char err[4096];
    if (dlg_sinkset_check(one, cli->verbosity, err, sizeof err) != 0) {
        fprintf(stderr, "dlgauge: %s\n", err);
        return dlg_exit_for_error(err);
    }
    return 0;
}

/* Flushes sink i of plan alone, after check_one. */
static int flush_one(const dlg_cli *cli, const dlg_plan *plan, size_t i)
{
    /* What the sinks send, or that they found nothing to send and where
     * they looked, is what a flush is for: their info lines show unless -q. */
    int verbosity = cli->verbosity > 0 && cli->verbosity < DLG_LOG_INFO ? DLG_LOG_INFO : cli->verbosity;
    dlg_plan one;
    int checked = check_one(cli, plan, i, &one);
    if (checked != 0)
        return checked;
    char err[4096];
    dlg_sinkset ss;
    if (dlg_sinkset_open(&ss, &one, false, verbosity, err, sizeof err) != 0) {
        int rc = open_failure_exit(ss.open_error);
        dlg_sinkset_close(&ss, 0);
        fprintf(stderr, "dlgauge: %s\n", err);
        return rc;
    }
    dlg_sinkset_close(&ss, 30ull * 1000000000ull);
    /* what failed or stays spooled (how many points, where) was said */
    return ss.failures || ss.kept ? DLG_EXIT_FAILED : DLG_EXIT_OK;
}

/* The one FILE.ini, or NULL after saying (in one line) what is wrong: an
 * option flush does not have was opened as a file called "--dry-run". */
static const char *config_arg(int argc, char **argv)
{
    const char *file = NULL;
    bool options = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *why = NULL;
        if (options && strcmp(a, "--") == 0)
            options = false;
        else if (options && a[0] == '-' && a[1])
            why = "unknown option";
        else if (file)
            why = "a second FILE.ini";
        else
            file = a;
        if (why) {
            fprintf(stderr, "dlgauge flush: %s '%s' (usage: dlgauge flush FILE.ini)\n", why, a);
            return NULL;
        }
    }
    if (!file)
        fprintf(stderr, "dlgauge flush: no FILE.ini given (usage: dlgauge flush FILE.ini)\n");
    return file;
}

/* A configuration whose sinks all deliver at write has nothing held back:
 * not an error (exit 0), but said, so that a flush of the wrong file does
 * not pass unnoticed. */
static void say_none_spools(const char *file, const dlg_plan *plan)
{
    char names[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < plan->nsinks && len < sizeof names; i++) {
        int n = snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", plan->sinks[i].name);
        len += n > 0 ? (size_t)n : 0;
    }
    fprintf(stderr, "dlgauge: %s: nothing to flush: its sinks (%s) deliver as they write and spool nothing\n",
            file, names);
}

int dlg_cmd_flush(const dlg_cli *cli, int argc, char **argv)
{
    const char *file = config_arg(argc, argv);
    if (!file)
        return DLG_EXIT_USAGE;
    char err[4096];
    dlg_config cfg;
    dlg_registry reg = {0};
    dlg_plan plan = {0};
    int rc = DLG_EXIT_USAGE;
    if (dlg_config_load(&cfg, file, err, sizeof err) != 0)
        goto fail;
    if (dlg_registry_init(&reg, cli->plugin_dirs) != 0 || dlg_registry_scan(&reg) != 0) {
        snprintf(err, sizeof err, "%s", reg.why); /* err held nothing to say */
        goto fail;
    }
    dlg_registry_notes(&reg, stderr);
    if (dlg_plan_build_sinks(&plan, &cfg, &reg, err, sizeof err) != 0)
        goto fail;
    if (plan.nsinks == 0) { /* "flushed 0 sinks", exit 0, told a user who gave the wrong file nothing */
        snprintf(err, sizeof err, "%s has no [sink] section: nothing to flush (pass the configuration the run used)",
                 file);
        goto fail;
    }
    rc = DLG_EXIT_OK;
    size_t flushed = 0;
    for (size_t i = 0; i < plan.nsinks; i++) {
        if (!dlg_sink_may_spool(plan.sinks[i].desc->ops, plan.sinks[i].vals)) {
            dlg_plan one;
            int checked = check_one(cli, &plan, i, &one);
            rc = checked > rc ? checked : rc;
            continue;
        }
        int r = flush_one(cli, &plan, i);
        rc = r > rc ? r : rc; /* 2 (fix the configuration) over 1 (retry) over 0 */
        flushed++;
    }
    if (flushed == 0 && rc == DLG_EXIT_OK && cli->verbosity > 0)
        say_none_spools(file, &plan);
    else if (rc == DLG_EXIT_OK && cli->verbosity > 0)
        fprintf(stderr, "dlgauge: flushed %zu sink%s\n", flushed, flushed == 1 ? "" : "s");
    goto done;
fail:
    fprintf(stderr, "dlgauge: %s\n", err);
    rc = dlg_exit_for_error(err);
done:
    dlg_plan_free(&plan);
    dlg_registry_free(&reg);
    dlg_config_free(&cfg);
    return rc;
}
