/* Duration-valued sweep axes (sleep = 1500us, 2ms, 10ms): ordered by their
 * length in mixed units, "-" last, in the model, the cells table and the
 * curve; no knee, for a reason that says why (a duration is no resource),
 * where they had been text in first-seen order with "no order". */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_csv.h"
#include "report.h"
#include "svg.h"

static const char head[] = "time,job,run_id,status,workload,sleep,throughput,throughput_ci95,throughput_stddev,"
                           "unit,repeats,start_time,version\n";

/* Written out of order, in three units, and a run r2 that did not sweep
 * sleep ("-"): 1s is the largest though "1" < "2" as text. */
static const char rows[] = "t,j,r1,ok,sleep,10ms,99,1,1,steps,3,s1,0.1.0\n"
                           "t,j,r1,ok,sleep,1500us,660,1,1,steps,3,s2,0.1.0\n"
                           "t,j,r1,ok,sleep,1s,1,0.1,0.1,steps,3,s3,0.1.0\n"
                           "t,j,r1,ok,sleep,2ms,495,1,1,steps,3,s4,0.1.0\n"
                           "t,j,r2,ok,sleep,,98,1,1,steps,3,s5,0.1.0\n";

static const char *const sorted[] = {"1500us", "2ms", "10ms", "1s", "-"};

static void report_of(rep_report *r, const char *body)
{
    char csv[2048];
    snprintf(csv, sizeof csv, "%s%s", head, body);
    *r = (rep_report){.target = 0.95};
    model_from_csv(csv, &r->rows, &r->model);
}

static void report_free(rep_report *r)
{
    rep_model_free(&r->model);
    rep_rows_free(&r->rows);
}

static void test_axis_sorted_by_length(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, rows);
    const rep_axis *ax = &r.model.g[0].axes[0];
    assert_int_equal(ax->kind, REP_AX_DURATION);
    assert_int_equal(ax->n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(ax->vals[i], sorted[i]);
    assert_true(ax->order[0] == 1.5e6 && ax->order[3] == 1e9);
    report_free(&r);
}

/* The best is 1500us; a knee search would call it "the smallest value
 * reaching the target", as if a shorter sleep were less of a resource. */
static void test_no_knee_with_reason(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, rows);
    const rep_group *g = &r.model.g[0];
    assert_true(g->knees[0].unordered);
    assert_string_equal(g->axes[0].vals[g->knees[0].val], "1500us");
    char text[640];
    rep_knee_text(&r, g, 0, text, sizeof text);
    print_message("%s\n", text);
    assert_non_null(strstr(text, "sleep = 1500us is the best (660 steps/s); no knee: a duration, not a resource"));
    assert_null(strstr(text, "no order"));
    report_free(&r);
}

/* The cells table lists the rows by length, and so does the curve's x axis. */
static void test_table_and_curve_in_order(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, rows);
    const rep_group *g = &r.model.g[0];
    rep_table t;
    assert_int_equal(rep_table_cells(&t, &r, g), 0);
    assert_int_equal(t.nrows, 6);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(t.cell[(i + 1) * t.ncols], sorted[i]);
    rep_table_free(&t);
    char *svg = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&svg, &len);
    assert_non_null(f);
    rep_svg_curve(f, &r, g, 0);
    assert_int_equal(fclose(f), 0);
    const char *at = svg;
    for (size_t i = 0; i < 5; i++) {
        char want[32];
        snprintf(want, sizeof want, ">%s</text>", sorted[i]);
        const char *p = strstr(at, want);
        assert_non_null(p);
        at = p;
    }
    assert_null(strstr(svg, ">knee</text>"));
    free(svg);
    report_free(&r);
}

/* A bare 0 among durations is 0 s (as the config reads it); multi-unit
 * values order by their sum; bare numbers alone stay numbers, sizes sizes. */
static void test_kinds_of_mixed_values(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "t,j,r1,ok,sleep,1m30s,1,0,0,steps,3,s1,0.1.0\n"
                  "t,j,r1,ok,sleep,2m,1,0,0,steps,3,s2,0.1.0\n"
                  "t,j,r1,ok,sleep,0,2,0,0,steps,3,s3,0.1.0\n"
                  "t,j,r1,ok,sleep,500ms,3,0,0,steps,3,s4,0.1.0\n");
    const rep_axis *ax = &r.model.g[0].axes[0];
    assert_int_equal(ax->kind, REP_AX_DURATION);
    static const char *const want[] = {"0", "500ms", "1m30s", "2m"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(ax->vals[i], want[i]);
    report_free(&r);
    report_of(&r, "t,j,r1,ok,sleep,10,1,0,0,steps,3,s1,0.1.0\n"
                  "t,j,r1,ok,sleep,2,1,0,0,steps,3,s2,0.1.0\n");
    assert_int_equal(r.model.g[0].axes[0].kind, REP_AX_NUM);
    report_free(&r);
    report_of(&r, "t,j,r1,ok,sleep,1M,1,0,0,steps,3,s1,0.1.0\n"
                  "t,j,r1,ok,sleep,512k,1,0,0,steps,3,s2,0.1.0\n");
    assert_int_equal(r.model.g[0].axes[0].kind, REP_AX_SIZE);
    assert_false(r.model.g[0].knees[0].unordered);
    report_free(&r);
    report_of(&r, "t,j,r1,ok,sleep,1ms,1,0,0,steps,3,s1,0.1.0\n"
                  "t,j,r1,ok,sleep,fast,1,0,0,steps,3,s2,0.1.0\n");
    assert_int_equal(r.model.g[0].axes[0].kind, REP_AX_TEXT);
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axis_sorted_by_length),
        cmocka_unit_test(test_no_knee_with_reason),
        cmocka_unit_test(test_table_and_curve_in_order),
        cmocka_unit_test(test_kinds_of_mixed_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
