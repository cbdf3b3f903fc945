/* A cell whose every repetition failed says what failed, each status
 * counted, and the first error, in every output; a cell that failed once
 * reads as it always did; compare's table says the same. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "model_csv.h"
#include "render.h"
#include "report.h"

/* cpus 2 ran; cpus 4 failed three times (error, timeout, error: the
 * first error is the cause); cpus 8 failed once. */
static const char failed_csv[] =
    "time,cpus,host,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,error,"
    "version\n"
    "2026-12-02T10:00:01Z,2,lab,g,r1,ok,sim,100,0,0,images,1,,0.1.0\n"
    "2026-12-02T10:00:02Z,4,lab,g,r1,error,sim,,,,,,out of GPU memory at step 3,0.1.0\n"
    "2026-12-02T10:00:03Z,4,lab,g,r2,timeout,sim,,,,,,stopped after 10s,0.1.0\n"
    "2026-12-02T10:00:04Z,4,lab,g,r3,error,sim,,,,,,no space left on device,0.1.0\n"
    "2026-12-02T10:00:05Z,8,lab,g,r1,oom,sim,,,,,,killed by the OOM killer,0.1.0\n";

static const rep_cell *cell_at_cpus(const rep_group *g, const char *cpus)
{
    for (size_t c = 0; c < g->ncells; c++)
        if (strcmp(g->axes[0].vals[g->cells[c].coord[0]], cpus) == 0)
            return &g->cells[c];
    fail_msg("no cell cpus=%s", cpus);
    return NULL;
}

static void test_every_repeat_failed(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv(failed_csv, &r.rows, &r.model);
    assert_int_equal(r.model.n, 1);
    const rep_group *g = &r.model.g[0];
    const rep_cell *four = cell_at_cpus(g, "4"), *eight = cell_at_cpus(g, "8");
    char buf[160];
    rep_cell_failures_text(four, buf, sizeof buf);
    assert_string_equal(buf, "error x2, timeout x1");
    assert_string_equal(four->evidence, "status error x2, timeout x1; the first error: out of GPU memory at step 3");
    rep_cell_failures_text(eight, buf, sizeof buf);
    assert_string_equal(buf, "oom");
    assert_string_equal(eight->evidence, "status oom: killed by the OOM killer");
    /* the cells table's status column, and every output */
    rep_table t;
    assert_int_equal(rep_table_cells(&t, &r, g), 0);
    bool seen = false;
    for (size_t row = 1; row < t.nrows; row++)
        seen = seen || strcmp(t.cell[row * t.ncols + 1], "error x2, timeout x1") == 0;
    assert_true(seen);
    rep_table_free(&t);
    char *md = render_report(&r, rep_out_markdown), *html = render_report(&r, rep_out_html);
    assert_non_null(strstr(md, "error x2, timeout x1"));
    assert_non_null(strstr(md, "the first error: out of GPU memory at step 3"));
    assert_non_null(strstr(html, "error x2, timeout x1"));
    free(md);
    free(html);
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
}

/* Run r2 ran out of GPU memory in each cell's setup, before the workload
 * named its backend: its rows join the cells of the one backend measured
 * (was: a "-" backend of their own beside them); with two backends
 * measured, which one it was cannot be told and the row stays at "-". */
static const char setup_failed_csv[] =
    "time,backend,batch,host,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,"
    "error,version\n"
    "2026-12-02T10:00:01Z,cuda:0,2,lab,g,r1,ok,alexnet,3.2,0,0,images,1,,0.1.0\n"
    "2026-12-02T10:00:02Z,cuda:0,4,lab,g,r1,ok,alexnet,4.3,0,0,images,1,,0.1.0\n"
    "2026-12-02T10:00:03Z,,2,lab,g,r2,oom,alexnet,,,,,,conv descriptor: out of host memory,0.1.0\n"
    "2026-12-02T10:00:04Z,,4,lab,g,r2,oom,alexnet,,,,,,conv descriptor: out of host memory,0.1.0\n";

static void test_setup_failure_joins_its_cell(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv(setup_failed_csv, &r.rows, &r.model);
    assert_int_equal(r.model.n, 1);
    const rep_group *g = &r.model.g[0];
    assert_int_equal(g->ncells, 2);
    for (size_t c = 0; c < g->ncells; c++) {
        assert_int_equal(g->cells[c].nok, 1);
        assert_int_equal(g->cells[c].nfailed, 1);
        assert_int_equal(g->cells[c].nfailed_status, 1);
        assert_string_equal(g->cells[c].failed_status[0], "oom");
    }
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
    /* a second backend measured: the failed rows' own "-" cells */
    char two[sizeof setup_failed_csv + 128];
    snprintf(two, sizeof two, "%s%s", setup_failed_csv, "2026-12-02T10:00:05Z,cpu,2,lab,g,r3,ok,alexnet,1.1,0,0,images,1,,0.1.0\n");
    rep_report r2 = {.target = 0.95};
    model_from_csv(two, &r2.rows, &r2.model);
    assert_int_equal(r2.model.n, 1);
    assert_int_equal(r2.model.g[0].ncells, 5);
    rep_model_free(&r2.model);
    rep_rows_free(&r2.rows);
}

/* compare: a cell failing in both says so on both sides */
static void test_compare_shows_failures(void **state)
{
    (void)state;
    rep_compare c;
    memset(&c, 0, sizeof c);
    c.alpha = 0.05;
    model_from_csv(failed_csv, &c.base.rows, &c.base.model);
    model_from_csv(failed_csv, &c.new.rows, &c.new.model);
    char err[256];
    assert_int_equal(rep_compare_build(&c, err, sizeof err), 0);
    char *text = render_compare(&c, true);
    assert_non_null(strstr(text, "error x2, timeout x1"));
    free(text);
    rep_compare_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_repeat_failed),
        cmocka_unit_test(test_compare_shows_failures),
        cmocka_unit_test(test_setup_failure_joins_its_cell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
