/* dlgauge: benchmark deep-learning workloads and find the machine shape
 * that runs them at full speed for the least money. */
#include "cell_exec.h"
#include "cli.h"
#include "comm.h"
#include "compare.h"
#include "git_rev.h"
#include "options.h"
#include "report.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* where `cmake --install` puts the docs and conf/ (core/report/CMakeLists.txt) */
#ifndef DLG_DOCS_INSTALLED
#define DLG_DOCS_INSTALLED "PREFIX/share/doc/dlgauge/docs"
#endif
#ifndef DLG_CONF_INSTALLED
#define DLG_CONF_INSTALLED "PREFIX/share/dlgauge/conf"
#endif

static int cmd_version(const dlg_cli *cli, int argc, char **argv)
{
    (void)cli;
    (void)argc;
    (void)argv;
    printf("dlgauge %s (git %s)\n", DLG_VERSION, dlg_git_rev());
    return DLG_EXIT_OK;
}

/* Every command once: the usage text, `dlgauge help COMMAND` and
 * `dlgauge COMMAND --help` all print from here, so they cannot disagree. */
static const struct dlg_command {
    const char *name;
    int (*fn)(const dlg_cli *, int, char **);
    const char *args;  /* after the name; NULL: the command takes none */
    const char *what;  /* NULL: not listed (internal); '\n' continues it */
    bool own_help;     /* prints its own, longer usage for --help */
    const char *more;  /* what only the command's own help adds */
    bool prints;       /* stdout is its product: a write that failed there fails it */
    bool dash_parts;   /* its "--" parts its arguments (base from new), options go on after it */
    const char *const *valued; /* its options that take the next argument as their value, NULL-terminated:
                                * the list its own parser goes by (cli.h, report.h, compare.h) */
} commands[] = {
    {"run", dlg_cmd_run, "FILE.ini [--job NAME]... [--set SECTION.key=value]... [--dry-run] [--resume]",
     "run the jobs of FILE.ini and write results to its sinks", false,
     "  --job NAME       only this job (repeatable; the jobs run in file order)\n"
     "  --set S.key=v    override a key: job.KEY in every job, global.KEY as the jobs' default,\n"
     "                   NAME.KEY in the section called NAME (or job:NAME, storage:NAME, sink:NAME)\n"
     "  --dry-run        check the configuration (sinks too) and print the cells; nothing is\n"
     "                   measured, created or sent\n"
     "  --resume         go on with an interrupted run from its journal (results/journal/\n"
     "                   CONFIG-HASH.journal, or [global] journal): same run id, recorded cells skipped\n",
     false, false, dlg_run_valued},
    {"list", dlg_cmd_list, NULL, "the plugins found: kind, name, version, file", false,
     "  a plugin file that cannot be loaded is named on stderr with the reason, and list exits 1;\n"
     "  so it does when it finds no plugin at all (saying where it looked)\n", true, false, NULL},
    {"help", dlg_cmd_help, "[--markdown] NAME...", "options of a workload, storage or sink, or a command's usage;\n"
     "also: job, global, metrics, all (add --markdown for the reference docs)", false,
     NULL, true, false, NULL},
    {"sysinfo", dlg_cmd_sysinfo, NULL, "CPU (topology, caches), memory, GPUs, disks, kernel and library versions",
     false, NULL, true, false, NULL},
    {"flush", dlg_cmd_flush, "FILE.ini", "send what the sinks of FILE.ini spooled earlier", false,
     "  exits 1, saying how many points stay spooled and where, if a sink still cannot deliver\n"
     "  (unreachable, or a spool it cannot read or rewrite: retry later); 2 if a sink's\n"
     "  configuration is wrong or FILE.ini has no [sink] section (fix it; 2 wins when both happen);\n"
     "  every sink's configuration is checked, but only sinks that spool are opened (influx over\n"
     "  HTTP; csv and json files are not created): with none, it says so and exits 0\n",
     false, false, NULL},
    {"mkdata", dlg_cmd_mkdata, "images|text", "generate a photo-like JPEG tree or a PTB-like corpus", true, NULL,
     false, false, dlg_mkdata_valued},
    {"report", dlg_cmd_report, "RESULTS...", "knees, bottlenecks and the cheapest instance (docs/report.md)", true,
     NULL, false, false, rep_report_valued},
    {"compare", dlg_cmd_compare, "BASE... -- NEW...",
     "new results against base, cell by cell: significance, geomean,\na regression gate (docs/compare.md)", true, NULL,
     false, true, rep_compare_valued},
    {"version", cmd_version, NULL, "dlgauge's version and git revision (also --version)", false, NULL, true, false,
     NULL},
    {"__cell", dlg_cmd_cell, "", NULL, false, NULL, false, false, NULL},
};
enum { NCOMMANDS = sizeof commands / sizeof *commands, WHAT_COLUMN = 21 };

static const struct dlg_command *find_command(const char *name)
{
    for (size_t c = 0; c < NCOMMANDS; c++)
        if (strcmp(name, commands[c].name) == 0)
            return &commands[c];
    return NULL;
}

/* The description, its continuation lines indented to `indent`. */
static void print_what(FILE *out, const char *what, int indent)
{
    for (; *what; what++) {
        fputc(*what, out);
        if (*what == '\n')
            fprintf(out, "%*s", indent, "");
    }
    fputc('\n', out);
}

/* "  run FILE.ini ...": the description beside it, or below if it is long. */
static void command_line(FILE *out, const struct dlg_command *c)
{
    char head[256];
    int n = snprintf(head, sizeof head, "  %s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
    if (n + 1 > WHAT_COLUMN)
        fprintf(out, "%s\n%*s", head, WHAT_COLUMN, "");
    else
        fprintf(out, "%-*s", WHAT_COLUMN, head);
    print_what(out, c->what, WHAT_COLUMN);
}

void dlg_usage(FILE *out)
{
    fprintf(out, "usage: dlgauge [--plugin-dir DIR]... [-v|-q] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t c = 0; c < NCOMMANDS; c++)
        if (commands[c].what)
            command_line(out, &commands[c]);
    fprintf(out, "\n"
                 "--plugin-dir DIR looks for plugins (*.so) in DIR first; given more than once, every DIR is\n"
                 "searched in the order given, then each folder of $DLGAUGE_PLUGIN_PATH, then the built-in\n"
                 "plugins: where two provide one name, the first found is used (dlgauge list shows which).\n"
                 "\n"
                 "dlgauge help COMMAND (or dlgauge COMMAND --help) prints a command's usage.\n"
                 "docs/NAME.md: in the source tree, and in " DLG_DOCS_INSTALLED " once installed;\n"
                 "the shipped quickstart.ini, study/, disks/ and instances/: conf/ and " DLG_CONF_INSTALLED ".\n"
                 "exit codes: 0 ok, 1 a cell or sink failed (or memory ran out), 2 bad input, 130/143/129 interrupted\n");
}

static bool is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

int dlg_command_help(const dlg_cli *cli, const char *name)
{
    const struct dlg_command *c = find_command(name);
    if (!c || !c->what)
        return -1;
    if (c->own_help) {
        char *argv[] = {(char *)c->name, "--help", NULL};
        return c->fn(cli, 2, argv);
    }
    printf("usage: dlgauge %s%s%s\n  ", c->name, c->args ? " " : "", c->args ? c->args : "");
    print_what(stdout, c->what, 2);
    if (c->more)
        fputs(c->more, stdout);
    return DLG_EXIT_OK;
}

size_t dlg_command_names(const char **names, size_t max)
{
    size_t n = 0;
    for (size_t c = 0; c < NCOMMANDS && n < max; c++)
        if (commands[c].what)
            names[n++] = commands[c].name;
    return n;
}

/* --plugin-dir names a folder the user means: a typo must not fall back,
 * unsaid, to the built-in plugins (a custom workload is then "unknown"). */
static int check_plugin_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "dlgauge: --plugin-dir '%s': %s\n", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "dlgauge: --plugin-dir '%s': not a directory\n", dir);
        return -1;
    }
    return 0;
}

int dlg_stdout_written(int rc)
{
    errno = 0;
    bool failed = fflush(stdout) != 0;
    failed |= ferror(stdout) != 0;
    if (!failed)
        return rc;
    fprintf(stderr, "dlgauge: standard output: %s\n", errno ? strerror(errno) : "a write failed");
    return rc == DLG_EXIT_OK ? DLG_EXIT_FAILED : rc;
}

bool dlg_says_out_of_memory(const char *line)
{
    return strstr(line, "out of memory") || strstr(line, strerror(ENOMEM));
}

int dlg_exit_for_error(const char *line) { return dlg_says_out_of_memory(line) ? DLG_EXIT_FAILED : DLG_EXIT_USAGE; }

/* Where c's options end: at its first "--", unless that only parts its
 * arguments (compare's base from new, with options after it too). */
static int options_end(const struct dlg_command *c, int argc, char **argv)
{
    int i = 1;
    while (i < argc && (c->dash_parts || strcmp(argv[i], "--") != 0))
        i++;
    return i;
}

/* Whether a is one of c's options that take a value. */
static bool takes_value(const struct dlg_command *c, const char *a)
{
    for (const char *const *v = c->valued; v && *v; v++)
        if (strcmp(*v, a) == 0)
            return true;
    return false;
}

/* Where argv[i] (before end) is one of c's valued options, the index of
 * its value, else i: getopt's rule, the next argument is the value whatever
 * it looks like (`report r.csv --html -h` writes to a file "-h"), unless it
 * is another of c's valued options (the command then says the first needs
 * a value). */
static int value_of(const struct dlg_command *c, int i, int end, char **argv)
{
    return takes_value(c, argv[i]) && i + 1 < end && !takes_value(c, argv[i + 1]) ? i + 1 : i;
}

/* -h or --help anywhere among the options, but not as the value of one:
 * `dlgauge run x.ini --help` was an unknown option, `flush x.ini -h` a
 * second file. */
static bool wants_help(const struct dlg_command *c, int argc, char **argv)
{
    for (int i = 1, end = options_end(c, argc, argv); i < end; i = value_of(c, i, end, argv) + 1)
        if (is_help(argv[i]))
            return true;
    return false;
}

/* Which of dlgauge's own options a is (an index into own[]), or -1. */
static const char *const own[] = {"-v", "-q", "--plugin-dir", "--version"};
static int own_option(const char *a)
{
    for (size_t k = 0; k < sizeof own / sizeof *own; k++) {
        size_t n = strlen(own[k]);
        if (strncmp(a, own[k], n) == 0 && (a[n] == '\0' || a[n] == '='))
            return (int)k;
    }
    return -1;
}

/* Says where dlgauge's own option a (own[k]) goes, after command c. */
static void say_own_option(const struct dlg_command *c, const char *a, int k)
{
    if (k == 3) {
        fprintf(stderr, "dlgauge %s: '%s' is an option of dlgauge itself: dlgauge --version\n", c->name, a);
        return;
    }
    /* the command's first argument as its usage names it: run FILE.ini */
    size_t w = c->args && c->args[0] != '[' ? strcspn(c->args, " ") : 0;
    fprintf(stderr, "dlgauge %s: '%s' is an option of dlgauge itself: put it before the command, as in "
                    "dlgauge %s %s%s%.*s\n", c->name, a, k == 2 ? "--plugin-dir DIR" : own[k], c->name,
            w ? " " : "", (int)w, w ? c->args : "");
}

/* dlgauge's own option given after the command (`dlgauge list -v`):
 * says where it goes, rather than that the command does not know it, and
 * returns true.  Among the options, as for -h, but not as the value of
 * one (`report r.csv --markdown -q` writes to a file "-q", as getopt would
 * have it), unless that value is another of its options (the command then
 * says the first needs a value). */
static bool misplaced_own_option(const struct dlg_command *c, int argc, char **argv)
{
    for (int i = 1, end = options_end(c, argc, argv); i < end; i = value_of(c, i, end, argv) + 1) {
        int k = own_option(argv[i]);
        if (k >= 0) {
            say_own_option(c, argv[i], k);
            return true;
        }
    }
    return false;
}

static int run_command(const dlg_cli *cli, const struct dlg_command *c, int argc, char **argv)
{
    /* under mpirun every rank starts the command: `run` is the ranks' one
     * run; any other (mkdata writing the same files, flush sending the
     * same spool) is rank 0's alone.  Not report and compare: they only
     * read results, no documented flow runs them under mpirun, and a rank
     * variable left in a job script's environment made them do nothing */
    if (c->fn != dlg_cmd_run && c->fn != dlg_cmd_cell && c->fn != dlg_cmd_report && c->fn != dlg_cmd_compare &&
        dlg_comm_launched_rank() > 0)
        return DLG_EXIT_OK;
    if (c->what && wants_help(c, argc, argv))
        return dlg_stdout_written(dlg_command_help(cli, c->name));
    if (c->what && misplaced_own_option(c, argc, argv))
        return DLG_EXIT_USAGE;
    if (!c->args && argc > 1) { /* a stray word would otherwise be ignored */
        /* argv[0] as typed: the version command is also --version */
        fprintf(stderr, "dlgauge: %s takes no arguments, not '%s' (usage: dlgauge %s)\n", argv[0], argv[1],
                argv[0]);
        return DLG_EXIT_USAGE;
    }
    /* a product goes out in one write at the end where it fits: a write
     * that fails mid-way (a full disk) leaves errno to calls after it, so
     * the last flush, finding nothing left, could not say why (list at 4 KiB
     * + 21 bytes said "a write failed") */
    char *product = c->prints && !isatty(STDOUT_FILENO) ? malloc((size_t)1 << 20) : NULL;
    if (product) /* (glibc ignores the size without a buffer); stdout's until exit */
        setvbuf(stdout, product, _IOFBF, (size_t)1 << 20);
    int rc = c->fn(cli, argc, argv);
    return c->prints ? dlg_stdout_written(rc) : rc;
}

/* dlgauge's own options, then the command; dirs has room for every
 * --plugin-dir (one per argument at most). */
static int start(int argc, char **argv, const char **dirs)
{
    dlg_cli cli = {dirs, 1};
    size_t ndirs = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--plugin-dir") == 0 && i + 1 < argc)
            dirs[ndirs++] = argv[++i];
        else if (strcmp(argv[i], "--plugin-dir") == 0) {
            fprintf(stderr, "dlgauge: --plugin-dir needs a value (dlgauge --plugin-dir DIR COMMAND ...)\n");
            return DLG_EXIT_USAGE;
        } else if (strncmp(argv[i], "--plugin-dir=", 13) == 0)
            dirs[ndirs++] = argv[i] + 13;
        else if (strcmp(argv[i], "-v") == 0)
            cli.verbosity++;
        else if (strcmp(argv[i], "-q") == 0)
            cli.verbosity = 0;
        else if (strcmp(argv[i], "--version") == 0)
            return run_command(&cli, find_command("version"), argc - i, argv + i);
        else if (is_help(argv[i])) {
            dlg_usage(stdout);
            return dlg_stdout_written(DLG_EXIT_OK);
        } else {
            fprintf(stderr, "dlgauge: unknown option '%s' (the options before a command are --plugin-dir DIR, -v, -q, "
                            "--version, --help)\n", argv[i]);
            return DLG_EXIT_USAGE;
        }
    }
    if (i >= argc) {
        dlg_usage(stderr);
        return DLG_EXIT_USAGE;
    }
    for (size_t d = 0; d < ndirs; d++) /* each one: a typo in the first is as wrong as in the last */
        if (check_plugin_dir(dirs[d]) != 0)
            return DLG_EXIT_USAGE;
    const struct dlg_command *c = find_command(argv[i]);
    if (c)
        return run_command(&cli, c, argc - i, argv + i);
    const char *names[NCOMMANDS];
    char msg[512];
    snprintf(msg, sizeof msg, "dlgauge: unknown command '%s'", argv[i]);
    dlg_append_suggestion(msg, sizeof msg, dlg_suggest(argv[i], names, dlg_command_names(names, NCOMMANDS)));
    fprintf(stderr, "%s; dlgauge --help lists the commands\n", msg); /* one line, as for any bad input */
    return DLG_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    /* past a file size limit (ulimit -f, a batch system's) a write then
     * fails with EFBIG, which the writer names, instead of SIGXFSZ killing
     * dlgauge mid-row with no word */
    signal(SIGXFSZ, SIG_IGN);
    const char **dirs = calloc((size_t)argc + 1, sizeof *dirs); /* NULL-terminated */
    if (!dirs) {
        fprintf(stderr, "dlgauge: out of memory\n");
        bool cell = false; /* a cell's process: its run says oom in the row */
        for (int i = 1; i < argc && !cell; i++)
            cell = strcmp(argv[i], "__cell") == 0;
        return cell ? DLG_CELL_EXIT_NOMEM : DLG_EXIT_FAILED;
    }
    int rc = start(argc, argv, dirs);
    free(dirs);
    return rc;
}
