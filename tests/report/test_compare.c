/* dlgauge compare on hand-built result sets: cells matched by their axis
 * values as text (different sweeps, an axis one side did not sweep),
 * only-in lists, geometric means, and through the command (in process):
 * the regression gate's exit status and stderr lines, "~" for an
 * insignificant slowdown, no verdict from one repeat, a new failure, and
 * one error line with exit 2 for bad input; profiled cells' layer kinds,
 * base -> new. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_more.h"

#include "compare.h"
#include "compare_view.h"
#include "model_csv.h"
#include "temp_file.h"

#define HEAD                                                                                                      \
    "time,batch,cpus,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,version,config\n"
/* A row of workload sim, job j: batch, cpus, status, throughput, sd, repeats
 * (the CI is left out: compare needs the sd, and derives it where only the CI is given). */
#define ROW(batch, cpus, st, thr, sd, n) "2026-12-01T10:00:00Z," batch "," cpus ",j," st ",sim," thr ",1," sd ",images," n ",0.1.0,batch=32\n"

static void compare_csv(rep_compare *c, const char *base, const char *new)
{
    memset(c, 0, sizeof *c);
    c->alpha = 0.05;
    model_from_csv(base, &c->base.rows, &c->base.model);
    model_from_csv(new, &c->new.rows, &c->new.model);
    char err[256];
    assert_int_equal(rep_compare_build(c, err, sizeof err), 0);
}

static const rep_cmp_cell *cell(const rep_cmp_group *g, const char *label)
{
    for (size_t i = 0; i < g->ncells; i++)
        if (strcmp(g->cells[i].label, label) == 0)
            return &g->cells[i];
    fail_msg("no cell %s", label);
    return NULL;
}

/* base sweeps cpus 4, 1, 2 and has a group of its own; new sweeps 8, 2, 4
 * and has one of its own: values match by text, not by index. */
static void matches_cells_by_value(void **state)
{
    (void)state;
    rep_compare c;
    compare_csv(&c,
                HEAD ROW("", "4", "ok", "400", "4", "5") ROW("", "1", "ok", "100", "1", "5")
                    ROW("", "2", "ok", "200", "2", "5")
                    "2026-12-01T10:00:00Z,,,k,ok,other,10,1,1,images,5,0.1.0,\n",
                HEAD ROW("", "8", "ok", "800", "8", "5") ROW("", "2", "ok", "100", "2", "5")
                    ROW("", "4", "ok", "400", "4", "5")
                    "2026-12-01T10:00:00Z,,,k,ok,third,10,1,1,images,5,0.1.0,\n");
    assert_int_equal(c.n, 3);
    const rep_cmp_group *g = &c.g[0];
    assert_ptr_equal(g->base, &c.base.model.g[0]);
    assert_ptr_equal(g->new, &c.new.model.g[0]);
    assert_int_equal(rep_cmp_matched(g), 2);
    const rep_cmp_cell *two = cell(g, "cpus=2"), *four = cell(g, "cpus=4");
    assert_near(two->base->thr, 200, 1e-9);
    assert_near(two->new->thr, 100, 1e-9);
    assert_near(two->ratio, 0.5, 1e-12);
    assert_int_equal(two->verdict, REP_CMP_SLOWER);
    assert_near(four->new->thr, 400, 1e-9);
    assert_int_equal(four->verdict, REP_CMP_SAME);
    char buf[256];
    rep_cmp_only_text(g, true, buf, sizeof buf);
    assert_string_equal(buf, "cpus=1");
    rep_cmp_only_text(g, false, buf, sizeof buf);
    assert_string_equal(buf, "cpus=8");
    /* the groups of one side only, each listed, base's first */
    assert_string_equal(c.g[1].base->workload, "other");
    assert_null(c.g[1].new);
    assert_string_equal(c.g[2].new->workload, "third");
    assert_null(c.g[2].base);
    /* geomean over the two matched cells: sqrt(0.5 x 1) */
    assert_near(g->geomean, sqrt(0.5), 1e-12);
    assert_int_equal(c.ngeo, 2);
    rep_compare_free(&c);
}

/* base did not sweep batch (its config says 32); new swept 32 and 64:
 * batch=32 matches what base ran with. */
static void matches_an_unswept_key_by_config(void **state)
{
    (void)state;
    rep_compare c;
    compare_csv(&c, HEAD ROW("", "2", "ok", "100", "1", "5") ROW("", "4", "ok", "200", "2", "5"),
                HEAD ROW("32", "2", "ok", "110", "1", "5") ROW("64", "2", "ok", "150", "1", "5"));
    const rep_cmp_group *g = &c.g[0];
    assert_int_equal(g->nkeys, 2);
    const rep_cmp_cell *m = cell(g, "cpus=2 batch=32");
    assert_non_null(m->base);
    assert_non_null(m->new);
    assert_near(m->ratio, 1.1, 1e-12);
    char buf[256];
    rep_cmp_only_text(g, true, buf, sizeof buf);
    assert_string_equal(buf, "cpus=4 batch=32");
    rep_cmp_only_text(g, false, buf, sizeof buf);
    assert_string_equal(buf, "cpus=2 batch=64");
    rep_compare_free(&c);
}

/* base swept batch but one row lacks the tag (its config says 32); it
 * matches new's batch=32, and its table row says 32 (it said "-"). */
static void table_names_the_value_matched_on(void **state)
{
    (void)state;
    rep_compare c;
    compare_csv(&c, HEAD ROW("64", "2", "ok", "100", "1", "5") ROW("", "2", "ok", "50", "1", "5"),
                HEAD ROW("32", "2", "ok", "50", "1", "5") ROW("64", "2", "ok", "100", "1", "5"));
    const rep_cmp_group *g = &c.g[0];
    assert_int_equal(rep_cmp_matched(g), 2);
    assert_non_null(cell(g, "batch=32 cpus=2")->new);
    rep_table t;
    assert_int_equal(rep_cmp_table(&t, g), 0);
    assert_string_equal(t.cell[0 * t.ncols + 0], "batch");
    assert_string_equal(t.cell[1 * t.ncols + 0], "64");
    assert_string_equal(t.cell[2 * t.ncols + 0], "32");
    assert_string_equal(t.cell[2 * t.ncols + 1], "2");
    rep_table_free(&t);
    rep_compare_free(&c);
}

/* An only-in list longer than its buffer ends in whole labels and a count:
 * cut short, "cpus=1" of cpus=16 read as a sixth value. */
static void long_only_in_list_says_how_many_more(void **state)
{
    (void)state;
    rep_compare c;
    compare_csv(&c,
                HEAD ROW("", "1", "ok", "1", "1", "5") ROW("", "2", "ok", "2", "1", "5") ROW("", "4", "ok", "4", "1", "5")
                    ROW("", "8", "ok", "8", "1", "5") ROW("", "16", "ok", "16", "1", "5")
                        ROW("", "32", "ok", "32", "1", "5"),
                HEAD ROW("", "64", "ok", "64", "1", "5"));
    char buf[64];
    rep_cmp_only_text(&c.g[0], true, buf, sizeof buf);
    assert_string_equal(buf, "cpus=1; cpus=2; cpus=4; cpus=8; cpus=16; cpus=32");
    rep_cmp_only_text(&c.g[0], true, buf, 40);
    assert_string_equal(buf, "cpus=1; cpus=2; ... and 4 more");
    rep_cmp_only_text(&c.g[0], false, buf, 40);
    assert_string_equal(buf, "cpus=64");
    rep_compare_free(&c);
}

/* ---- through the command ------------------------------------------------- */

typedef struct ran {
    int rc;
    char out[16384], err[4096];
    size_t err_lines;
} ran;

static void slurp(FILE *f, char *buf, size_t len)
{
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = 0;
    fclose(f);
}

/* Runs `dlgauge compare ARGS` in this process, its stdout and stderr caught. */
static void run_compare(ran *r, const char *const *args)
{
    char *argv[32] = {"compare"};
    int argc = 1;
    for (; args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    FILE *to = tmpfile(), *te = tmpfile(); /* unnamed: gone when closed */
    assert_true(to && te);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    dup2(fileno(to), 1);
    dup2(fileno(te), 2);
    r->rc = rep_compare_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    slurp(to, r->out, sizeof r->out);
    slurp(te, r->err, sizeof r->err);
    r->err_lines = 0;
    for (const char *p = r->err; *p; p++)
        r->err_lines += *p == '\n';
}

/* Writes both sides, runs compare with up to two options (opt2 may be
 * NULL), removes the files. */
static void compare_files2(ran *r, const char *base, const char *new, const char *opt, const char *val,
                           const char *opt2, const char *val2)
{
    char pb[32], pn[32];
    temp_file(pb, base);
    temp_file(pn, new);
    const char *args[] = {pb, "--", pn, "--color", "never", opt, val, opt2, val2, NULL};
    run_compare(r, args);
    unlink(pb);
    unlink(pn);
}

static void compare_files(ran *r, const char *base, const char *new, const char *opt, const char *val)
{
    compare_files2(r, base, new, opt, val, NULL, NULL);
}

/* 100 -> 90 with sd 1 over 5 repeats: significantly 10% slower. */
static const char slow_base[] = HEAD ROW("", "2", "ok", "100", "1", "5") ROW("", "4", "ok", "200", "1", "5");
static const char slow_new[] = HEAD ROW("", "2", "ok", "90", "1", "5") ROW("", "4", "ok", "200", "1", "5");

static void significant_slowdown_fails_the_gate(void **state)
{
    (void)state;
    ran r;
    compare_files(&r, slow_base, slow_new, "--fail-below", "-5%");
    assert_int_equal(r.rc, 1);
    assert_int_equal(r.err_lines, 1);
    assert_non_null(strstr(r.err, "regression: sim (job j), mode -, precision -: cpus=2: 100 images/s -> 90 images/s (-10.0%"));
    assert_non_null(strstr(r.out, "slower (gate)"));
    /* within the limit, or no gate: exit 0, still reported slower */
    compare_files(&r, slow_base, slow_new, "--fail-below", "-15");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "slower\n"));
    assert_string_equal(r.err, "");
    compare_files(&r, slow_base, slow_new, "--alpha", "0.05");
    assert_int_equal(r.rc, 0);
    /* Markdown that cannot be written: exit 2, and the regression still named */
    compare_files2(&r, slow_base, slow_new, "--fail-below", "-5", "--markdown", "/nonexistent/out.md");
    assert_int_equal(r.rc, 2);
    assert_int_equal(r.err_lines, 2);
    assert_non_null(strstr(r.err, "dlgauge compare: /nonexistent/out.md: cannot write"));
    assert_non_null(strstr(r.err, "regression: sim (job j), mode -, precision -: cpus=2: 100 images/s -> 90"));
}

/* A side whose row was stopped by a signal (status partial) is compared,
 * and says so: its figure is the steps it ran, not a whole measurement. */
static void partial_side_is_marked(void **state)
{
    (void)state;
    static const char base[] = HEAD ROW("", "2", "ok", "100", "1", "5");
    static const char new[] = HEAD ROW("", "2", "partial", "90", "1", "5");
    ran r;
    compare_files(&r, base, new, "--alpha", "0.05");
    assert_int_equal(r.rc, 0);
    assert_has(r.out, "90 images/s (partial)");
    assert_null(strstr(r.out, "100 images/s (partial)"));
}

/* 100 -> 90 with sd 30 over 3 repeats: within the noise, "~". */
static void insignificant_slowdown_passes(void **state)
{
    (void)state;
    ran r;
    compare_files(&r, HEAD ROW("", "2", "ok", "100", "30", "3"), HEAD ROW("", "2", "ok", "90", "30", "3"),
                  "--fail-below", "-5");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "-10.0%"));
    assert_non_null(strstr(r.out, "3+3  ~\n"));
}

static void new_failure_fails_the_gate(void **state)
{
    (void)state;
    ran r;
    compare_files(&r, slow_base,
                  HEAD ROW("", "2", "oom", "", "", "") ROW("", "4", "ok", "200", "1", "5"), "--fail-below", "-5");
    assert_int_equal(r.rc, 1);
    assert_int_equal(r.err_lines, 1);
    assert_non_null(strstr(r.err, "cpus=2: newly failing (oom); base ran at 100 images/s"));
    assert_non_null(strstr(r.out, "NEW FAILURE (gate)"));
}

/* A cell that ran in one of new's runs and was OOM-killed in another
 * (two files merged): its figure is the run that worked, which hid the
 * failure and passed the gate; now it is named, and fails any gate unless
 * base's runs failed so too (then it is said, not gated). */
#define RUNS_HEAD "time,cpus,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,version\n"
#define RUNS_ROW(run, st, thr, n) "2026-12-01T10:00:00Z,1,j," run "," st ",sim," thr ",1,1,images," n ",0.1.0\n"
static void failure_in_some_new_runs_fails_the_gate(void **state)
{
    (void)state;
    static const char base[] = RUNS_HEAD RUNS_ROW("a", "ok", "100", "5");
    static const char new[] = RUNS_HEAD RUNS_ROW("x", "ok", "100", "5") RUNS_ROW("y", "oom", "0", "0");
    static const char base_too[] = RUNS_HEAD RUNS_ROW("a", "ok", "100", "5") RUNS_ROW("b", "timeout", "0", "0")
        RUNS_ROW("c", "ok", "100", "5");
    ran r;
    compare_files(&r, base, new, "--fail-below", "-5");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "dlgauge compare: regression: sim (job j), mode -, precision -: cpus=1: failed in 1 "
                               "of 2 new runs (oom), in none of base's\n");
    assert_has(r.out, "5+5  ~, failed in 1 of 2 new runs (oom) (gate)\n");
    assert_has(r.out, "1 cell fails the gate");
    /* no gate: said, exit 0 */
    compare_files(&r, base, new, "--alpha", "0.05");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_has(r.out, "~, failed in 1 of 2 new runs (oom)\n");
    /* base's runs failed so too: said of both sides, not gated */
    compare_files(&r, base_too, new, "--fail-below", "-5");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_has(r.out, "~, failed in 1 of 2 new runs (oom), failed in 1 of 3 base runs (timeout)\n");
}
#undef RUNS_HEAD
#undef RUNS_ROW

/* A group whose unit changed (images in base, bytes in new) was listed
 * "not compared" and passed the gate: base's benchmark as measured is
 * gone from new, so it fails as a missing cell does, one stderr line
 * naming both units, unless --allow-missing. */
static void unit_changed_fails_the_gate(void **state)
{
    (void)state;
    static const char base[] = HEAD ROW("", "1", "ok", "100", "1", "5") ROW("", "2", "ok", "100", "1", "5");
    static const char new[] = "time,batch,cpus,job,status,workload,throughput,throughput_ci95,throughput_stddev,"
                              "unit,repeats,version,config\n"
                              "2026-12-01T10:00:00Z,,1,j,ok,sim,10,1,1,bytes,5,0.1.0,\n"
                              "2026-12-01T10:00:00Z,,2,j,ok,sim,10,1,1,bytes,5,0.1.0,\n";
    ran r;
    compare_files(&r, base, new, "--fail-below", "-5");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "dlgauge compare: regression: sim (job j), mode -, precision -: base counts images, "
                               "new counts bytes (2 cells not compared)\n");
    assert_has(r.out, "  not compared (gate): base counts images, new counts bytes\n");
    assert_has(r.out, "2 cells fail the gate");
    compare_files2(&r, base, new, "--fail-below", "-5", "--allow-missing", NULL);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_has(r.out, "  not compared: base counts images, new counts bytes\n");
    compare_files(&r, base, new, "--alpha", "0.05");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
}

/* A cell of base missing from new fails the gate, one stderr line each,
 * so does every cell of a group only in base (it passed the gate, only
 * listed); --allow-missing lets a sweep changed on purpose pass. */
static void missing_cell_fails_the_gate(void **state)
{
    (void)state;
    static const char base[] = HEAD ROW("", "2", "ok", "100", "1", "5") ROW("", "4", "oom", "", "", "")
        "2026-12-01T10:00:00Z,,,k,ok,gone,10,1,1,images,5,0.1.0,\n";
    static const char new[] = HEAD ROW("", "2", "ok", "100", "1", "5");
    ran r;
    compare_files(&r, base, new, "--fail-below", "-5");
    assert_int_equal(r.rc, 1);
    assert_int_equal(r.err_lines, 2);
    assert_non_null(strstr(r.err, "dlgauge compare: regression: sim (job j), mode -, precision -: cpus=4: missing "
                                  "from new; base failed: oom\n"));
    assert_non_null(strstr(r.err, "dlgauge compare: regression: gone (job k), mode -, precision -: missing from "
                                  "new; base ran at 10 images/s\n"));
    assert_non_null(strstr(r.out, "  only in base (gate): cpus=4\n"));
    assert_non_null(strstr(r.out, "  only in base (gate): the whole group (1 cell)\n"));
    assert_non_null(strstr(r.out, "2 cells fail the gate"));
    char pb[32], pn[32];
    temp_file(pb, base);
    temp_file(pn, new);
    const char *allow[] = {pb, "--", pn, "--fail-below", "-5", "--allow-missing", NULL};
    run_compare(&r, allow);
    unlink(pb);
    unlink(pn);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "  only in base: cpus=4\n"));
    /* no gate: listed, exit 0 */
    compare_files(&r, base, new, "--alpha", "0.05");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
}

/* Rows that carry only a CI (no throughput_stddev), two runs a cell:
 * each row's s from its CI and n before pooling.  base: s = 2 per row (CI
 * 2.48331 over 5, t(4) = 2.776), pooled s^2 = 4 x 4 x 2 / 9; new: s = 3
 * (CI 4.77367 over 4), s^2 = 3 x 9 x 2 / 7.  Welch (mpmath): t = -2.6113,
 * df 11.860, p 0.02293.  Pooled as s = 0, the cell's CI was 0 and p 0. */
static void ci_only_rows_keep_their_spread(void **state)
{
    (void)state;
#define CI_HEAD "time,cpus,job,mode,run_id,status,workload,throughput,repeats,throughput_ci95,unit,version\n"
#define CI_ROW(run, thr, n, ci) "2026-11-29T10:00:00Z,1,j,train," run ",ok,sim," thr "," n "," ci ",images,0.1.0\n"
    rep_compare c;
    compare_csv(&c, CI_HEAD CI_ROW("a", "100", "5", "2.48331") CI_ROW("b", "100", "5", "2.48331"),
                CI_HEAD CI_ROW("a", "97", "4", "4.77367") CI_ROW("b", "97", "4", "4.77367"));
    const rep_cmp_cell *cc = cell(&c.g[0], "cpus=1");
    assert_near(cc->base->repeats, 10, 0);
    assert_near(cc->base->sd, sqrt(32.0 / 9), 1e-4);
    assert_near(cc->new->sd, sqrt(54.0 / 7), 1e-4);
    assert_near(cc->base->ci, 2.262157 * sqrt(32.0 / 9) / sqrt(10), 1e-4); /* t(9) */
    assert_near(cc->w.t, -2.6113, 1e-3);
    assert_near(cc->w.df, 11.860, 1e-2);
    assert_near(cc->w.p, 0.02293, 2e-4);
    assert_int_equal(cc->verdict, REP_CMP_SLOWER);
    rep_compare_free(&c);
#undef CI_HEAD
#undef CI_ROW
}

/* One repeat a side: no evidence, never a regression, however far apart. */
static void one_repeat_gives_no_verdict(void **state)
{
    (void)state;
    ran r;
    compare_files(&r, HEAD ROW("", "2", "ok", "100", "0", "1"), HEAD ROW("", "2", "ok", "50", "0", "1"),
                  "--fail-below", "-5");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "-50.0%"));
    assert_non_null(strstr(r.out, "1+1  ~ (no CI)\n"));
    /* the gate checked nothing: the footer says how many it could not test */
    assert_has(r.out, "1 cell with fewer than 2 repeats on a side: throughput not tested there (nor gated)\n");
}

static void bad_input_is_one_line_and_exit_2(void **state)
{
    (void)state;
    ran r;
    const char *missing[] = {"/nonexistent/base.csv", "--", "/nonexistent/new.csv", NULL};
    run_compare(&r, missing);
    assert_int_equal(r.rc, 2);
    assert_int_equal(r.err_lines, 1);
    assert_non_null(strstr(r.err, "dlgauge compare: base: /nonexistent/base.csv: cannot open"));
    assert_string_equal(r.out, "");
    /* no throughput column: every column before it is a tag */
    compare_files(&r, slow_base, "time,job,status,workload,version\n2026-12-01T10:00:00Z,j,ok,sim,0.1.0\n", "--alpha",
                  "0.05");
    assert_int_equal(r.rc, 2);
    assert_int_equal(r.err_lines, 1);
    assert_non_null(strstr(r.err, "dlgauge compare: new: /tmp/dlg-report-test"));
    assert_non_null(strstr(r.err, ":1: missing column 'throughput'"));
    compare_files(&r, slow_base, slow_new, "--fail-below", "5%"); /* a limit above zero is no slowdown */
    assert_int_equal(r.rc, 2);
    assert_int_equal(r.err_lines, 1);
    const char *one_side[] = {"a.csv", NULL};
    run_compare(&r, one_side);
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.err, "dlgauge compare: no new results file given (BASE... -- NEW...)\n");
}

/* A job name with an escape sequence and a line break (a quoted CSV
 * cell): the terminal output shows each as a space, as the report's does;
 * raw, ESC[2J cleared the screen and the newline split the heading. */
static void text_output_has_no_control_characters(void **state)
{
    (void)state;
    rep_compare c;
    const char *rows = "time,cpus,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,"
                       "version,config\n"
                       "2026-12-01T10:00:00Z,1,\"na\033[2J\nX\",ok,sim,100,1,1,images,5,0.1.0,\n"
                       "2026-12-01T10:00:00Z,2,\"na\033[2J\nX\",ok,sim,200,1,1,images,5,0.1.0,\n";
    compare_csv(&c, rows, HEAD ROW("", "1", "ok", "100", "1", "5"));
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    rep_cmp_out_text(f, &c, false);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(out, "(job na [2J X)"));
    for (const char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\n')
            fail_msg("control character 0x%02x at offset %td of:\n%s", *p, p - out, out);
    assert_null(strstr(out, "\nX")); /* no line starts with the name's tail */
    free(out);
    rep_compare_free(&c);
}

/* ---- layer profiles (profile = true) ---------------------------------------- */

#define HEADP "time,cpus,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,version," \
              "layer_profile\n"
#define ROWP(cpus, thr, prof) "2026-12-01T10:00:00Z," cpus ",j,ok,sim," thr ",1,1,images,5,0.1.0,\"" prof "\"\n"

/* Both sides profiled: a line per cell of its kinds' ms per step, the
 * largest change first, a kernel that changed as one kind leaving (-) and
 * another arriving, at most 4 and how many more; a cell profiled on one
 * side only, or whose field is not a profile, gets none. */
static void layer_kinds_base_to_new(void **state)
{
    (void)state;
    static const char base[] = HEADP
        ROWP("2", "100", "conv winograd F(4x4,3x3) avx2: 60.0% (40.00+80.00 ms) | fc x64:gemm:jit: 20.0% "
                         "(10.00+30.00 ms) | pool cpu_maxpool (fp32 nChw8c, avx2): 10.0% (5.00+15.00 ms) | "
                         "relu cpu: 5.0% (4.00+6.00 ms) | lrn cpu: 5.0% (5.00+5.00 ms)")
        ROWP("4", "200", "conv jit:avx2: 100.0% (1.00+2.00 ms)")
        ROWP("8", "300", "conv jit:avx2: 100.0% (1.00+2.00 ms)");
    static const char new[] = HEADP
        ROWP("2", "90", "conv jit:avx2: 70.0% (60.00+100.00 ms) | fc x64:gemm:jit: 20.0% (10.00+35.00 ms) | "
                        "pool cpu_maxpool (fp32 nChw8c, avx2): 10.0% (5.00+15.00 ms) | relu cpu: 5.0% (4.00+6.00 ms) | "
                        "lrn cpu: 5.0% (5.00+5.00 ms)")
        ROWP("4", "200", "") ROWP("8", "300", "not a profile");
    ran r;
    compare_files(&r, base, new, NULL, NULL);
    assert_int_equal(r.rc, 0);
    if (!strstr(r.out, "  layers cpus=2: conv jit:avx2 - -> 160 ms, conv winograd F(4x4,3x3) avx2 120 ms -> -, "
                       "fc x64:gemm:jit 40 ms -> 45 ms (+12.5%), lrn cpu 10 ms -> 10 ms (+0.0%) (+2 more)\n"))
        fail_msg("%s", r.out);
    assert_null(strstr(r.out, "layers cpus=4"));
    assert_null(strstr(r.out, "layers cpus=8"));
}

/* ---- step latency (--latency, --fail-above-latency) and "-" ----------------- */

#define HEADL "time,cpus,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,version,steps," \
              "latency_p50_us,latency_p99_us\n"
/* A cell of workload sim at cpus with throughput 100 (sd 1, 5 repeats) and its step latencies. */
#define ROWL(cpus, steps, p50, p99) "2026-12-01T10:00:00Z," cpus ",j,ok,sim,100,1,1,images,5,0.1.0," steps "," p50 "," p99 "\n"

/* p99 1 ms -> 1.25 ms at unchanged throughput: beyond a 10% limit the
 * gate fails, named on stderr and marked in the latency column; a 30%
 * limit passes; without a gate the columns are shown, exit 0. */
static void latency_rise_fails_its_gate(void **state)
{
    (void)state;
    static const char base[] = HEADL ROWL("2", "400", "900", "1000") ROWL("4", "400", "900", "1000");
    static const char new[] = HEADL ROWL("2", "400", "900", "1250") ROWL("4", "400", "900", "1050");
    ran r;
    compare_files(&r, base, new, "--fail-above-latency", "10%");
    assert_int_equal(r.rc, 1);
    assert_int_equal(r.err_lines, 1);
    assert_string_equal(r.err, "dlgauge compare: regression: sim (job j), mode -, precision -: cpus=2: p99 step latency "
                               "1 ms -> 1.25 ms (+25.0%, limit +10.0%)\n");
    assert_non_null(strstr(r.out, "gate: a p99 step latency rise beyond +10%, a new failure or a cell missing from new fails"));
    assert_non_null(strstr(r.out, "base p99  new p99  p99 delta"));
    assert_non_null(strstr(r.out, "+25.0% (gate)  ~\n"));
    assert_non_null(strstr(r.out, "+5.0%  ~\n"));
    assert_non_null(strstr(r.out, "1 cell fails the gate"));
    compare_files(&r, base, new, "--fail-above-latency", "+30");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    compare_files(&r, base, new, "--latency", "p50");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "base p50  new p50  p50 delta"));
    assert_non_null(strstr(r.out, "+0.0%  ~\n"));
    /* with the throughput gate too: each fails on its own figure */
    compare_files2(&r, base, new, "--fail-below", "-5", "--fail-above-latency", "20");
    assert_int_equal(r.rc, 1);
    assert_int_equal(r.err_lines, 1);
    /* bad values: one line, exit 2 */
    compare_files(&r, base, new, "--latency", "p95");
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.err, "dlgauge compare: --latency 'p95': p50, p90, p99, p999, mean or max\n");
    compare_files(&r, base, new, "--fail-above-latency", "-10%");
    assert_int_equal(r.rc, 2);
    assert_int_equal(r.err_lines, 1);
}

/* c built from the two sides' CSV with --latency stat and a 10% latency gate. */
static void latency_gated(rep_compare *c, const char *stat, const char *base, const char *new)
{
    memset(c, 0, sizeof *c);
    c->alpha = 0.05;
    c->latency = stat;
    c->latency_gate = true;
    c->fail_above_latency = 0.1;
    model_from_csv(base, &c->base.rows, &c->base.model);
    model_from_csv(new, &c->new.rows, &c->new.model);
    char err[256];
    assert_int_equal(rep_compare_build(c, err, sizeof err), 0);
}

/* A cell run twice on a side (two files merged): its latency is the mean
 * of the runs' weighted by their timed steps; a side without the field
 * is counted, not gated. */
static void latency_pooled_over_runs(void **state)
{
    (void)state;
    rep_compare c;
    latency_gated(&c, "p99",
                  HEADL ROWL("2", "100", "1", "1000") ROWL("2", "300", "1", "2000") ROWL("4", "100", "1", "1000"),
                  HEADL ROWL("2", "100", "1", "1750") ROWL("4", "100", "1", ""));
    const rep_cmp_cell *two = cell(&c.g[0], "cpus=2"), *four = cell(&c.g[0], "cpus=4");
    assert_near(two->lat_base, 1750, 1e-9);
    assert_near(two->lat_delta, 0, 1e-12);
    assert_false(two->regression);
    assert_true(isnan(four->lat_new));
    assert_false(four->regression);
    assert_int_equal(c.nlat_missing, 1);
    assert_int_equal(c.nregressions, 0);
    rep_compare_free(&c);
}

/* --latency max over a cell run twice on a side is the larger of the
 * runs' maxima, not their mean: the slowest step the cell took.  The mean
 * (1750 us here) made an unchanged 4 ms worst step read as a +129% rise. */
static void latency_max_pooled_is_the_max(void **state)
{
    (void)state;
#define HEADM "time,cpus,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,version,steps," \
              "latency_max_us\n"
#define ROWM(steps, max) "2026-12-01T10:00:00Z,2,j,ok,sim,100,1,1,images,5,0.1.0," steps "," max "\n"
    rep_compare c;
    latency_gated(&c, "max", HEADM ROWM("300", "1000") ROWM("100", "4000"), HEADM ROWM("400", "4000"));
#undef HEADM
#undef ROWM
    const rep_cmp_cell *two = cell(&c.g[0], "cpus=2");
    assert_near(two->lat_base, 4000, 1e-9);
    assert_near(two->lat_delta, 0, 1e-12);
    assert_false(two->regression);
    assert_int_equal(c.nregressions, 0);
    rep_compare_free(&c);
}

/* Runs compare with standard input reading the file holding text. */
static void run_with_stdin(ran *r, const char *text, const char *const *args)
{
    char path[32];
    temp_file(path, text);
    int fd = open(path, O_RDONLY), saved = dup(0);
    assert_true(fd >= 0 && saved >= 0);
    dup2(fd, 0);
    close(fd);
    clearerr(stdin);
    run_compare(r, args);
    dup2(saved, 0);
    close(saved);
    clearerr(stdin);
    unlink(path);
}

/* "-": one side from standard input, named so in the header and in
 * errors; given twice, refused. */
static void one_side_from_stdin(void **state)
{
    (void)state;
    char pn[32];
    temp_file(pn, slow_new);
    ran r;
    const char *base_stdin[] = {"-", "--", pn, "--fail-below", "-5", "--color", "never", NULL};
    run_with_stdin(&r, slow_base, base_stdin);
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.out, "  base: standard input (2 rows)"));
    assert_non_null(strstr(r.err, "cpus=2: 100 images/s -> 90 images/s (-10.0%"));
    const char *new_stdin[] = {pn, "--", "-", NULL};
    run_with_stdin(&r, "time,job,status,workload,version\n2026-12-01T10:00:00Z,j,ok,sim,0.1.0\n", new_stdin);
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.err, "dlgauge compare: new: standard input:1: missing column 'throughput' (needed for the "
                               "scaling curves)\n");
    const char *twice[] = {"-", "--", "-", NULL};
    run_with_stdin(&r, slow_base, twice);
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.err, "dlgauge compare: '-' (standard input) given twice: one side may read it\n");
    unlink(pn);
}

/* Exactly at the limit passes, just beyond it fails, whatever the
 * rounding: 100 -> 95 is -5.0000000000000044% in doubles and failed
 * -5% while 100 -> 90 passed -10%; 1000 -> 1100 us failed +10%. */
static void limit_at_its_boundary_passes(void **state)
{
    (void)state;
    static const char base[] = HEAD ROW("", "2", "ok", "100", "1", "5");
    ran r;
    compare_files(&r, base, HEAD ROW("", "2", "ok", "95", "1", "5"), "--fail-below", "-5");
    assert_int_equal(r.rc, 0);
    compare_files(&r, base, HEAD ROW("", "2", "ok", "90", "1", "5"), "--fail-below", "-10");
    assert_int_equal(r.rc, 0);
    compare_files(&r, base, HEAD ROW("", "2", "ok", "94.99", "1", "5"), "--fail-below", "-5");
    assert_int_equal(r.rc, 1);
    compare_files(&r, base, HEAD ROW("", "2", "ok", "89.99", "1", "5"), "--fail-below", "-10");
    assert_int_equal(r.rc, 1);
    static const char lbase[] = HEADL ROWL("2", "400", "900", "1000");
    compare_files(&r, lbase, HEADL ROWL("2", "400", "900", "1100"), "--fail-above-latency", "10");
    assert_int_equal(r.rc, 0);
    compare_files(&r, lbase, HEADL ROWL("2", "400", "900", "1100.01"), "--fail-above-latency", "10");
    assert_int_equal(r.rc, 1);
    compare_files(&r, lbase, HEADL ROWL("2", "400", "900", "1000"), "--fail-above-latency", "0");
    assert_int_equal(r.rc, 0);
}

/* A base latency of 0 gives no rise to judge: the gate skipped the cell
 * in silence; the footer counts it as it counts a missing latency. */
static void zero_base_latency_is_counted(void **state)
{
    (void)state;
    ran r;
    compare_files(&r, HEADL ROWL("2", "400", "900", "0"), HEADL ROWL("2", "400", "900", "5000"),
                  "--fail-above-latency", "10");
    assert_int_equal(r.rc, 0);
    assert_has(r.out, "1 cell with a base latency_p99_us of 0: latency not compared there (nor gated)\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_cells_by_value),
        cmocka_unit_test(text_output_has_no_control_characters),
        cmocka_unit_test(matches_an_unswept_key_by_config),
        cmocka_unit_test(table_names_the_value_matched_on),
        cmocka_unit_test(long_only_in_list_says_how_many_more),
        cmocka_unit_test(significant_slowdown_fails_the_gate),
        cmocka_unit_test(insignificant_slowdown_passes),
        cmocka_unit_test(partial_side_is_marked),
        cmocka_unit_test(limit_at_its_boundary_passes),
        cmocka_unit_test(zero_base_latency_is_counted),
        cmocka_unit_test(new_failure_fails_the_gate),
        cmocka_unit_test(missing_cell_fails_the_gate),
        cmocka_unit_test(failure_in_some_new_runs_fails_the_gate),
        cmocka_unit_test(unit_changed_fails_the_gate),
        cmocka_unit_test(one_repeat_gives_no_verdict),
        cmocka_unit_test(ci_only_rows_keep_their_spread),
        cmocka_unit_test(bad_input_is_one_line_and_exit_2),
        cmocka_unit_test(layer_kinds_base_to_new),
        cmocka_unit_test(latency_rise_fails_its_gate),
        cmocka_unit_test(latency_pooled_over_runs),
        cmocka_unit_test(latency_max_pooled_is_the_max),
        cmocka_unit_test(one_side_from_stdin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
