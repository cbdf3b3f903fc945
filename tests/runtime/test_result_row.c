/* What a cell's row says of its rate: none where no repetition was
 * measured (a failed cell's 0 would be averaged and plotted), and the run
 * line's relative CI readable at any size. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rt_cell.h"
#include "rt_util.h"

static bool has_field(const rt_cell *c, const char *key) { return rt_cell_field(c, key) != NULL; }

static void run(rt_dir *d, rt_cell *c, const char *body)
{
    char ini[512], text[1024];
    snprintf(text, sizeof text, "[job f]\nplugin = %s/testwl.so\n%s", DLG_TEST_PLUGIN_DIR, body);
    rt_write(d, "row.ini", text, ini, sizeof ini);
    rt_cell_run(c, ini);
}

static void test_failed_cell_has_no_rate(void **state)
{
    rt_cell c;
    /* 3 timed steps, then the repetition fails: steps, no rate */
    run(*state, &c, "workload = fail_step\nfail_at = 3\nwarmup = 0\niterations = 10\n");
    assert_string_equal(c.res.status, "error");
    assert_int_equal(rt_cell_uint(&c, "steps"), 3);
    assert_false(has_field(&c, "throughput"));
    assert_false(has_field(&c, "throughput_ci95"));
    assert_false(has_field(&c, "throughput_stddev"));
    assert_true(has_field(&c, "error"));
    rt_cell_done(&c);

    run(*state, &c, "workload = fail_setup\n");
    assert_string_equal(c.res.status, "error");
    assert_false(has_field(&c, "throughput"));
    assert_false(has_field(&c, "throughput_ci95"));
    rt_cell_done(&c);

    /* one repetition measured: its rate, and a CI of 0 */
    run(*state, &c, "workload = count\nwarmup = 0\niterations = 4\n");
    assert_string_equal(c.res.status, "ok");
    assert_true(has_field(&c, "throughput"));
    assert_true(has_field(&c, "throughput_ci95"));
    rt_cell_done(&c);
}

static int64_t int_field(const rt_cell *c, const char *key)
{
    const dlg_field *f = rt_cell_field(c, key);
    if (!f || f->type != DLG_FIELD_INT)
        fail_msg("the row has no integer %s", key);
    return f->v.i;
}

/* Alone, nodes = 1 and no gpus without GPU stats; a job's row (as the
 * ranks' figures leave it, rank_totals.h) says its nodes and GPUs, and its
 * cpu_user_share is the ranks' CPU time over what their CPUs could give
 * (each rank's window x capacity, summed), not over rank 0's window. */
static void test_job_row(void **state)
{
    rt_cell c;
    run(*state, &c, "workload = count\nwarmup = 0\niterations = 4\n");
    assert_string_equal(c.res.status, "ok");
    assert_int_equal(int_field(&c, "nodes"), 1);
    assert_int_equal(int_field(&c, "ranks"), 1);
    assert_false(has_field(&c, "gpus"));

    dlg_cell_result *r = &c.res;
    r->ranks = 4;
    r->nodes = 2;
    r->cpu_capacity = 1;      /* rank 0's own */
    r->cpu_window_s = 2;      /* rank 0's window */
    r->cpu_window_cpu_s = 6;  /* four ranks' CPU time */
    r->cpu_window_cap_s = 8;  /* four ranks x 2 s x 1 CPU */
    r->items = 100;
    r->gpus = 2;
    r->gpu_samples = 40;
    r->gpu_seconds = 4;
    r->gpu_util_sum_s = 300;
    r->gpu_power_sum_s = 1000;
    r->gpu_energy_j = 1000;
    dlg_run run = {.plan = &c.plan, .wire_fd = -1};
    dlg_result_point(&run, &c.cell, r, &c.row);
    assert_int_equal(int_field(&c, "nodes"), 2);
    assert_int_equal(int_field(&c, "ranks"), 4);
    assert_int_equal(int_field(&c, "gpus"), 2);
    assert_true(rt_cell_double(&c, "cpu_user_share") == 0.75);
    assert_true(rt_cell_double(&c, "gpu_util") == 75);
    assert_true(rt_cell_double(&c, "power_avg_w") == 250);
    assert_true(rt_cell_double(&c, "energy_per_item_j") == 10);
    rt_cell_done(&c);
}

/* A workload's numeric field is the mean of its repetitions' values: an
 * integer one rounded to the nearest (80 over 3 repetitions is 27, where
 * truncating said 26; halves away from 0), kept an integer so that a
 * database typing the field by its first write takes every row; a float
 * one exact. */
static void test_workload_int_mean_rounds(void **state)
{
    rt_cell c;
    run(*state, &c, "workload = count\nwarmup = 0\niterations = 4\n");
    assert_string_equal(c.res.status, "ok");
    dlg_wfield wf[] = {
        {.key = "ios", .type = DLG_FIELD_INT, .sum = 80, .count = 3},
        {.key = "few", .type = DLG_FIELD_INT, .sum = 79, .count = 3},
        {.key = "delta", .type = DLG_FIELD_INT, .sum = -80, .count = 3},
        {.key = "half", .type = DLG_FIELD_UINT, .sum = 5, .count = 2},
        {.key = "ratio", .type = DLG_FIELD_DOUBLE, .sum = 80, .count = 3},
    };
    dlg_wfield *own = c.res.wf;
    size_t nown = c.res.nwf;
    c.res.wf = wf;
    c.res.nwf = sizeof wf / sizeof *wf;
    dlg_run run = {.plan = &c.plan, .wire_fd = -1};
    dlg_result_point(&run, &c.cell, &c.res, &c.row);
    c.res.wf = own;
    c.res.nwf = nown;
    assert_int_equal(int_field(&c, "ios"), 27);
    assert_int_equal(int_field(&c, "few"), 26);
    assert_int_equal(int_field(&c, "delta"), -27);
    const dlg_field *half = rt_cell_field(&c, "half");
    assert_non_null(half);
    assert_int_equal(half->type, DLG_FIELD_UINT);
    assert_int_equal(half->v.u, 3);
    assert_true(rt_cell_double(&c, "ratio") == 80.0 / 3);
    rt_cell_done(&c);
}

static void test_ci_text(void **unused)
{
    (void)unused;
    char buf[32];
    static const struct {
        double ci, mean;
        const char *want;
    } cases[] = {{2.5, 100, "2.5%"}, {0.01, 100, "0.0%"}, {9.9, 100, "9.9%"}, {9.96, 100, "10%"},
                 {37.4, 100, "37%"}, {210, 100, "210%"}, {1234, 100, "1234%"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dlg_format_ci_pct(cases[i].ci, cases[i].mean, buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failed_cell_has_no_rate, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_job_row, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_workload_int_mean_rounds, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(test_ci_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
