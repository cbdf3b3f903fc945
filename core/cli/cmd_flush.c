/* dlgauge flush: open the sinks of a configuration (which replays whatever
 * they spooled while their database was unreachable), flush, close. */
#include "cli.h"

#include "config.h"
#include "plan.h"
#include "registry.h"
#include "sinkset.h"

#include <stdio.h>

int dlg_cmd_flush(const dlg_cli *cli, int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dlgauge flush FILE.ini\n");
        return DLG_EXIT_USAGE;
    }
    char err[4096];
    dlg_config cfg;
    dlg_registry reg = {0};
    dlg_plan plan = {0};
    int rc = DLG_EXIT_USAGE;
    if (dlg_config_load(&cfg, argv[1], err, sizeof err) != 0 || dlg_registry_init(&reg, cli->plugin_dir) != 0)
        goto fail;
    dlg_registry_scan(&reg);
    if (dlg_plan_build_sinks(&plan, &cfg, &reg, err, sizeof err) != 0)
        goto fail;
    dlg_sinkset ss;
    if (dlg_sinkset_open(&ss, &plan, false, cli->verbosity, err, sizeof err) != 0) {
        dlg_sinkset_close(&ss, 0);
        goto fail;
    }
    dlg_sinkset_close(&ss, 30ull * 1000000000ull);
    rc = ss.failures || ss.kept ? DLG_EXIT_FAILED : DLG_EXIT_OK;
    /* what failed or stays spooled (how many points, where) was said above */
    if (rc == DLG_EXIT_OK && cli->verbosity > 0)
        fprintf(stderr, "dlgauge: flushed %zu sink%s\n", plan.nsinks, plan.nsinks == 1 ? "" : "s");
    goto done;
fail:
    fprintf(stderr, "dlgauge: %s\n", err);
done:
    dlg_plan_free(&plan);
    dlg_registry_free(&reg);
    dlg_config_free(&cfg);
    return rc;
}
