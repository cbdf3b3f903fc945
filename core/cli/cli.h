/* The dlgauge command-line subcommands. */
#ifndef DLG_CLI_H
#define DLG_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Exit codes (README.md, "Exit codes"). */
enum {
    DLG_EXIT_OK = 0,
    DLG_EXIT_FAILED = 1,   /* something measured failed, or a sink lost contact */
    DLG_EXIT_USAGE = 2,    /* bad command line, configuration or plugin */
    DLG_EXIT_SIGINT = 130,
    DLG_EXIT_SIGTERM = 143
};

typedef struct dlg_cli {
    /* each --plugin-dir, in the order given (searched so: a name two
     * folders provide is the first one's), NULL-terminated; NULL: none */
    const char *const *plugin_dirs;
    int verbosity;          /* -v / -q */
} dlg_cli;

/* The top-level usage (core/cli/main.c). */
void dlg_usage(FILE *out);
/* A command's usage on stdout and DLG_EXIT_OK; -1 if NAME is no command. */
int dlg_command_help(const dlg_cli *cli, const char *name);
/* The listed commands' names (for suggestions); returns how many. */
size_t dlg_command_names(const char **names, size_t max);

/* rc, or 1 when what went to stdout did not all get there (a full disk
 * under `dlgauge help --markdown all > docs/config.md` left half a file
 * and exit 0).  Said on stderr, once. */
int dlg_stdout_written(int rc);
/* The exit status of a failure before any work, from its one line: memory
 * that ran out may be back on the next try (1, as flush's unreachable
 * database), anything else needs a person (2).  Every out-of-memory line
 * says "out of memory" or strerror(ENOMEM); the OOM sweeps
 * (tests/e2e/oom_sweep*.sh) hold each failure to it. */
int dlg_exit_for_error(const char *line);
/* Whether an error line says out of memory (as above). */
bool dlg_says_out_of_memory(const char *line);
int dlg_cmd_run(const dlg_cli *cli, int argc, char **argv);
/* The options of run (cmd_run.c) and of mkdata (cmd_mkdata.c, either kind)
 * that take the next argument as their value, NULL-terminated: their
 * parsers go by these, and main.c reads them to tell such a value ("-h")
 * from an option. */
extern const char *const dlg_run_valued[];
extern const char *const dlg_mkdata_valued[];
int dlg_cmd_list(const dlg_cli *cli, int argc, char **argv);
int dlg_cmd_help(const dlg_cli *cli, int argc, char **argv);
int dlg_cmd_sysinfo(const dlg_cli *cli, int argc, char **argv);
int dlg_cmd_flush(const dlg_cli *cli, int argc, char **argv);
/* One line naming, made absolute, the files that the plan's sinks write
 * under relative paths and that changed since `since` (CLOCK_REALTIME_
 * COARSE, the clock of file times): "dlgauge: results in /cwd/results.csv,
 * ..." (a resumed run passes 0: its earlier part may be in a file this
 * part leaves as it was); none when there are none (core/cli/sink_files.c).  A path the run
 * did not write (a csv sink that put its rows in PATH.2.csv) is not
 * named; the files the open sinks ss (NULL: none) named as where their
 * rows went instead are, absolute ones too.  Less the files of sink i
 * where skip[i] (NULL: none skipped): a sink that lacks rows of the run
 * (said on its own line) is no place where its results are. */
struct dlg_plan;
struct dlg_sinkset;
struct timespec;
void dlg_say_sink_files_but(const struct dlg_plan *plan, const struct dlg_sinkset *ss, const bool *skip,
                            struct timespec since, FILE *out);
/* dlgauge mkdata images|text ...: generated datasets (core/cli/cmd_mkdata.c) */
int dlg_cmd_mkdata(const dlg_cli *cli, int argc, char **argv);
/* mkdata's usage text (also `dlgauge help mkdata`). */
void dlg_mkdata_usage(FILE *out);
/* dlgauge __cell: one cell in its own process (started by dlgauge run) */
int dlg_cmd_cell(const dlg_cli *cli, int argc, char **argv);
/* dlgauge report RESULTS...: knees, bottlenecks, recommendation (core/cli/cmd_report.c) */
int dlg_cmd_report(const dlg_cli *cli, int argc, char **argv);
/* dlgauge compare BASE... -- NEW...: A/B with significance and a gate (core/cli/cmd_compare.c) */
int dlg_cmd_compare(const dlg_cli *cli, int argc, char **argv);

#endif
