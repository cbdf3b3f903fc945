/* dlgauge: benchmark deep-learning workloads and find the machine shape
 * that runs them at full speed for the least money. */
#include "cli.h"
#include "git_rev.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: dlgauge [--plugin-dir DIR] [-v|-q] COMMAND [ARGS]\n"
            "\n"
            "commands:\n"
            "  run FILE.ini [--job NAME]... [--set SECTION.key=value]... [--dry-run] [--resume]\n"
            "                     run the jobs of FILE.ini and write results to its sinks\n"
            "  list               the plugins found: kind, name, version, file\n"
            "  help NAME          options of a workload, storage or sink; also: job, global,\n"
            "                     metrics, all (add --markdown for the reference docs)\n"
            "  sysinfo            CPU, memory, GPUs, disks, kernel and library versions\n"
            "  flush FILE.ini     send what the sinks of FILE.ini spooled earlier\n"
            "  mkdata images|text generate a photo-like JPEG tree or a PTB-like corpus\n"
            "  report RESULTS...  knees, bottlenecks and the cheapest instance (docs/report.md)\n"
            "  --version          print the version\n"
            "\n"
            "exit codes: 0 ok, 1 a cell or sink failed, 2 bad input, 130/143 interrupted\n");
}

int main(int argc, char **argv)
{
    /* past a file size limit (ulimit -f, a batch system's) a write then
     * fails with EFBIG, which the writer names, instead of SIGXFSZ killing
     * dlgauge mid-row with no word */
    signal(SIGXFSZ, SIG_IGN);
    dlg_cli cli = {NULL, 1};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--plugin-dir") == 0 && i + 1 < argc)
            cli.plugin_dir = argv[++i];
        else if (strncmp(argv[i], "--plugin-dir=", 13) == 0)
            cli.plugin_dir = argv[i] + 13;
        else if (strcmp(argv[i], "-v") == 0)
            cli.verbosity++;
        else if (strcmp(argv[i], "-q") == 0)
            cli.verbosity = 0;
        else if (strcmp(argv[i], "--version") == 0) {
            printf("dlgauge %s (git %s)\n", DLG_VERSION, dlg_git_rev);
            return DLG_EXIT_OK;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return DLG_EXIT_OK;
        } else {
            fprintf(stderr, "dlgauge: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return DLG_EXIT_USAGE;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return DLG_EXIT_USAGE;
    }
    static const struct {
        const char *name;
        int (*fn)(const dlg_cli *, int, char **);
    } cmds[] = {
        {"run", dlg_cmd_run},         {"list", dlg_cmd_list},   {"help", dlg_cmd_help},
        {"sysinfo", dlg_cmd_sysinfo}, {"flush", dlg_cmd_flush},   {"mkdata", dlg_cmd_mkdata},
        {"__cell", dlg_cmd_cell},
        {"report", dlg_cmd_report},
    };
    for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++)
        if (strcmp(argv[i], cmds[c].name) == 0)
            return cmds[c].fn(&cli, argc - i, argv + i);
    if (strcmp(argv[i], "version") == 0) {
        printf("dlgauge %s (git %s)\n", DLG_VERSION, dlg_git_rev);
        return DLG_EXIT_OK;
    }
    fprintf(stderr, "dlgauge: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return DLG_EXIT_USAGE;
}
