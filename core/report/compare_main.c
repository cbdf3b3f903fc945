/* dlgauge compare BASE... -- NEW... [options]: reads both sides, models
 * each as the report does, matches, judges, writes, gates. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

#include "cmd_files.h"
#include "compare.h"
#include "report.h"

static void usage(FILE *f)
{
    fputs("usage: dlgauge compare BASE.csv|.jsonl... -- NEW.csv|.jsonl... [--alpha 0.05] [--fail-below PCT]\n"
          "                       [--latency p99] [--fail-above-latency PCT] [--allow-missing]\n"
          "                       [--markdown OUT.md|-] [--color auto|always|never]\n"
          "       (or --base FILE... --new FILE...; '-' on one side: standard input)\n"
          "  new against base, cell by cell: throughput +-CI95 of each side, new/base, delta and Welch's\n"
          "  t-test (\"~\": not significant; one repeat on a side: no CI, no verdict); geometric means;\n"
          "  a cell profiled on both sides (profile = true): its layer kinds' ms per step, base -> new\n"
          "  --alpha A         significance level of the two-sided test (default 0.05)\n"
          "  --fail-below PCT  exit 1 if a cell is significantly slower than base by more than PCT\n"
          "                    (e.g. -5%), ran in base and fails in new, or is in base and missing\n"
          "                    from new; each named on stderr\n"
          "  --allow-missing   a cell missing from new, or a group whose unit changed, does not fail the gate\n"
          "  --latency STAT    also compare this step latency per cell: p50, p90, p99, p999, mean or max\n"
          "                    (lower is better; no test: a percentile is one figure per cell)\n"
          "  --fail-above-latency PCT  exit 1 if a cell's step latency (--latency, default p99) rose by\n"
          "                    more than PCT (e.g. 10%), or a cell newly fails or is missing from new\n"
          "  exit codes: 0 compared (gate passed), 1 the gate failed, 2 bad input or unwritable output,\n"
          "  130/143/129 stopped by SIGINT/SIGTERM/SIGHUP while --markdown's file was written (left as it was)\n",
          f);
}

typedef struct opts {
    const char **files[2]; /* base, new */
    size_t nfiles[2];
    const char *markdown, *color, *latency;
    double alpha, fail_below, fail_above_latency;
    bool gate, allow_missing, latency_gate;
    int stdin_side; /* the side that reads "-", -1: none */
} opts;

/* "-5%", "-5", "-2.5%" (a slowdown, rise false) or "10%", "+10" (a
 * latency rise): a limit in percent, as a fraction. */
static int parse_pct(const char *s, bool rise, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end == '%')
        end++;
    if (end == s || *end || errno || !(rise ? v >= 0 && v < 1e6 : v <= 0 && v > -100))
        return -1;
    *out = v / 100;
    return 0;
}

/* The options that take a value (compare.h: main.c reads this list too),
 * then those that do not. */
const char *const rep_compare_valued[] = {"--markdown", "--color", "--colour", "--alpha", "--fail-below",
                                          "--fail-above-latency", "--latency", NULL};
static const char *const unvalued[] = {"--allow-missing", "--base", "--new", "--", NULL};

/* a is in the NULL-terminated list */
static bool listed(const char *const *list, const char *a)
{
    for (; *list; list++)
        if (strcmp(a, *list) == 0)
            return true;
    return false;
}

/* One option (of rep_compare_valued) with its value; 0, or 2 after saying why. */
static int parse_valued(opts *o, const char *a, const char *val)
{
    if (!val[0]) { /* every value names something */
        fprintf(stderr, "dlgauge compare: %s '': an empty value\n", a);
        return 2;
    }
    if (strcmp(a, "--markdown") == 0)
        o->markdown = val;
    else if (strcmp(a, "--color") == 0 || strcmp(a, "--colour") == 0)
        o->color = val;
    else if (strcmp(a, "--alpha") == 0) {
        char *end;
        o->alpha = strtod(val, &end);
        if (*end || end == val || !(o->alpha > 0 && o->alpha <= 0.5)) {
            fprintf(stderr, "dlgauge compare: --alpha '%s': a significance level in (0, 0.5], e.g. 0.05\n", val);
            return 2;
        }
    } else if (strcmp(a, "--fail-below") == 0 || strcmp(a, "--fail-above-latency") == 0) {
        bool rise = strcmp(a, "--fail-below") != 0; /* a latency's rise, not a throughput's fall */
        if (parse_pct(val, rise, rise ? &o->fail_above_latency : &o->fail_below) != 0) {
            fprintf(stderr, "dlgauge compare: %s '%s': %s\n", a, val,
                    rise ? "a latency rise in percent, zero or positive, e.g. 10%"
                         : "a slowdown in percent, zero or negative, e.g. -5%");
            return 2;
        }
        *(rise ? &o->latency_gate : &o->gate) = true;
    } else { /* --latency */
        if (!rep_cmp_latency_field(val)) {
            fprintf(stderr, "dlgauge compare: --latency '%s': p50, p90, p99, p999, mean or max\n", val);
            return 2;
        }
        o->latency = val;
    }
    return 0;
}

/* 0, 1 (--help shown) or 2 after printing why. */
static int parse_args(opts *o, int argc, char **argv)
{
    o->alpha = 0.05;
    o->color = "auto";
    o->stdin_side = -1;
    for (int s = 0; s < 2; s++)
        if (!(o->files[s] = calloc((size_t)argc, sizeof *o->files[s]))) { /* at most every argument a file */
            fputs("dlgauge compare: out of memory\n", stderr);
            return 2;
        }
    int side = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(a, "--") == 0 || strcmp(a, "--new") == 0 || strcmp(a, "--base") == 0) {
            side = strcmp(a, "--base") != 0;
            continue;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (strcmp(a, "-") == 0 && o->stdin_side >= 0) { /* read once, it would be empty the second time */
                fprintf(stderr, "dlgauge compare: '-' (standard input) given twice: one side may read it\n");
                return 2;
            }
            if (strcmp(a, "-") == 0)
                o->stdin_side = side;
            o->files[side][o->nfiles[side]++] = a;
            continue;
        }
        if (strcmp(a, "--allow-missing") == 0) {
            o->allow_missing = true;
            continue;
        }
        if (!listed(rep_compare_valued, a)) {
            fprintf(stderr, "dlgauge compare: unknown option '%s' (dlgauge compare --help)\n", a);
            return 2;
        }
        /* "--markdown --alpha 0.1": no file "--alpha" */
        if (i + 1 >= argc || listed(rep_compare_valued, argv[i + 1]) || listed(unvalued, argv[i + 1])) {
            fprintf(stderr, "dlgauge compare: %s needs a value\n", a);
            return 2;
        }
        int rc = parse_valued(o, a, argv[++i]);
        if (rc)
            return rc;
    }
    if (strcmp(o->color, "auto") && strcmp(o->color, "always") && strcmp(o->color, "never")) {
        fprintf(stderr, "dlgauge compare: --color '%s': auto, always or never\n", o->color);
        return 2;
    }
    if (o->latency_gate && !o->latency)
        o->latency = "p99"; /* the tail a latency gate is usually about */
    if (o->nfiles[0] == 0 || o->nfiles[1] == 0) {
        fprintf(stderr, "dlgauge compare: no %s results file given (BASE... -- NEW...)\n", o->nfiles[0] ? "new" : "base");
        return 2;
    }
    return 0;
}

/* Reads, checks and models one side's files, merged as the report merges them. */
static int load_side(rep_cmp_side *s, const char *name, const char **files, size_t n, char *err, size_t errlen)
{
    char why[1024] = "";
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (strcmp(files[i], "-") == 0 || (rc = rep_input_check(files[i], "results file", why, sizeof why)) == 0)
            rc = rep_read_file(&s->rows, files[i], why, sizeof why);
    for (size_t i = 0; i < s->rows.nwarnings; i++) /* what was skipped, before any error */
        fprintf(stderr, "dlgauge compare: %s: %s\n", name, s->rows.warnings[i]);
    if (!rc)
        rc = rep_rows_validate(&s->rows, why, sizeof why);
    rep_disks none = {0};
    if (!rc)
        rc = rep_model_build(&s->model, &s->rows, &none, 0.95, why, sizeof why);
    for (size_t i = 0; !rc && i < s->model.nwarnings; i++) /* rows of one job not pooled: other settings */
        fprintf(stderr, "dlgauge compare: %s: warning: %s\n", name, s->model.warnings[i]);
    if (rc)
        snprintf(err, errlen, "%s: %s", name, why[0] ? why : "out of memory");
    return rc;
}

static int md_writer(FILE *f, const void *c) { return rep_cmp_out_markdown(f, c); }

/* 0, -DLG_EIO, -DLG_ENOMEM, or the stop signal that came while a file
 * was written. */
static int write_outputs(const rep_compare *c, const opts *o, char *err, size_t errlen)
{
    bool md_out = o->markdown && strcmp(o->markdown, "-") == 0;
    bool tty = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    int text_lost = 0; /* the file is still written, then the run fails */
    if (!md_out)
        text_lost =
            rep_cmp_out_text(stdout, c, strcmp(o->color, "always") == 0 || (strcmp(o->color, "auto") == 0 && tty));
    int rc = o->markdown ? rep_output_write(o->markdown, md_writer, c, err, errlen) : 0;
    if (rc == 0 && fflush(stdout) != 0) {
        snprintf(err, errlen, "standard output: %s", strerror(errno));
        return -DLG_EIO;
    }
    if (rc == 0 && text_lost) {
        snprintf(err, errlen, "standard output: out of memory: part of the comparison is missing");
        return -DLG_ENOMEM;
    }
    return rc;
}

static void say_regression(const char *why)
{
    fputs("dlgauge compare: regression: ", stderr);
    rep_term_text(stderr, why); /* one line each, whatever the cell's names hold */
    fputc('\n', stderr);
}

/* One stderr line per cell that fails the gate, one per group whose unit changed. */
static void say_regressions(const rep_compare *c)
{
    char buf[2048];
    for (size_t i = 0; i < c->n; i++) {
        if (c->g[i].regression) {
            rep_cmp_unit_regression_text(&c->g[i], buf, sizeof buf);
            say_regression(buf);
        }
        for (size_t j = 0; j < c->g[i].ncells; j++)
            if (c->g[i].cells[j].regression) {
                rep_cmp_regression_text(&c->g[i], &c->g[i].cells[j], buf, sizeof buf);
                say_regression(buf);
            }
    }
}

int rep_compare_main(int argc, char **argv)
{
    opts o = {0};
    int prc = parse_args(&o, argc, argv);
    if (prc) {
        free(o.files[0]);
        free(o.files[1]);
        return prc == 1 ? 0 : 2;
    }
    rep_compare c = {.alpha = o.alpha,
                     .fail_below = o.fail_below,
                     .gate = o.gate,
                     .allow_missing = o.allow_missing,
                     .latency = o.latency,
                     .fail_above_latency = o.fail_above_latency,
                     .latency_gate = o.latency_gate};
    char err[2048] = "";
    int rc = load_side(&c.base, "base", o.files[0], o.nfiles[0], err, sizeof err);
    if (!rc)
        rc = load_side(&c.new, "new", o.files[1], o.nfiles[1], err, sizeof err);
    bool built = false;
    if (!rc)
        built = (rc = rep_compare_build(&c, err, sizeof err)) == 0;
    if (!rc)
        rc = write_outputs(&c, &o, err, sizeof err);
    if (rc)
        fprintf(stderr, "dlgauge compare: %s\n", err[0] ? err : "out of memory");
    if (built) /* an output that could not be written hides no regression */
        say_regressions(&c);
    int exit_code = rc > 0 ? 128 + rc : rc ? 2 : c.nregressions ? 1 : 0; /* rc > 0: stopped by that signal */
    rep_compare_free(&c);
    free(o.files[0]);
    free(o.files[1]);
    return exit_code;
}
