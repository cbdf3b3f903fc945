/* The runner's begin_timed call (workload ops version 2): once per
 * repetition, after exactly `warmup` steps and before the first timed
 * one; a version-1 plugin, whose table ends before begin_timed, runs as
 * before and is never called past its version.  Step timings that
 * cannot be true fail the cell with one line naming the step and value.
 * A field reported twice in one repetition keeps its last value. */
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

/* Runs the one cell of `workload` from timedwl.so with the given warm-up,
 * iterations and repetitions. */
static void run_cell(void **state, rt_cell *c, const char *workload, int warmup, int iterations, int repeat)
{
    char text[1024], path[512];
    snprintf(text, sizeof text,
             "[job t]\nplugin = %s/timedwl.so\nworkload = %s\nwarmup = %d\niterations = %d\nrepeat = %d\n",
             DLG_TEST_PLUGIN_DIR, workload, warmup, iterations, repeat);
    rt_write(*state, "timed.ini", text, path, sizeof path);
    rt_cell_run(c, path);
}

/* A numeric workload field: its mean over the repetitions. */
static double field(const rt_cell *f, const char *key)
{
    for (size_t i = 0; i < f->res.nwf; i++)
        if (strcmp(f->res.wf[i].key, key) == 0)
            return f->res.wf[i].sum / f->res.wf[i].count;
    fail_msg("no field %s (status %s: %s)", key, f->res.status, f->res.error);
    return 0;
}

static void called_after_warmup(void **state)
{
    rt_cell f;
    run_cell(state, &f, "timed_count", 4, 6, 3);
    assert_string_equal(f.res.status, "ok");
    assert_int_equal(f.res.reps, 3);
    assert_int_equal(f.res.steps, 18);
    /* each repetition: one call, after its 4 warm-up steps, then its 6 steps */
    assert_true(field(&f, "begin_timed_calls") == 1);
    assert_true(field(&f, "steps_before_timed") == 4);
    assert_true(field(&f, "steps_after_timed") == 6);
    rt_cell_done(&f);
}

static void called_without_warmup(void **state)
{
    rt_cell f;
    run_cell(state, &f, "timed_count", 0, 5, 1);
    assert_string_equal(f.res.status, "ok");
    assert_true(field(&f, "begin_timed_calls") == 1);
    assert_true(field(&f, "steps_before_timed") == 0);
    assert_true(field(&f, "steps_after_timed") == 5);
    rt_cell_done(&f);
}

static void version1_untouched(void **state)
{
    rt_cell f;
    run_cell(state, &f, "timed_v1", 2, 3, 2);
    if (strcmp(f.res.status, "ok") != 0)
        fail_msg("version-1 workload: %s: %s", f.res.status, f.res.error);
    assert_int_equal(f.res.steps, 6);
    assert_true(field(&f, "begin_timed_calls") == 0);
    assert_true(field(&f, "steps_before_timed") == -1);
    rt_cell_done(&f);
}

/* Runs times with bad = what: 5 steps a repetition, no warm-up. */
static void run_times_repeat(void **state, rt_cell *c, const char *what, int repeat)
{
    char text[1024], path[512];
    snprintf(text, sizeof text, "[job t]\nplugin = %s/timedwl.so\nworkload = times\nbad = %s\nwarmup = 0\n"
             "iterations = 5\nrepeat = %d\n", DLG_TEST_PLUGIN_DIR, what, repeat);
    rt_write(*state, "times.ini", text, path, sizeof path);
    rt_cell_run(c, path);
}

static void run_times(void **state, rt_cell *c, const char *what) { run_times_repeat(state, c, what, 1); }

static void assert_error(const rt_cell *c, const char *want)
{
    assert_string_equal(c->res.status, "error");
    if (!strstr(c->res.error, want) || !strstr(c->res.error, "a bug in the workload (") ||
        !strstr(c->res.error, "timedwl.so)"))
        fail_msg("error \"%s\" lacks \"%s\" or the plugin's file", c->res.error, want);
}

/* it used to give data_wait_fraction 63829787 */
static void wait_longer_than_step_fails(void **state)
{
    rt_cell c;
    run_times(state, &c, "wait");
    assert_error(&c, "[job t] times: step 3 reported wait_ns 10000000000 > its elapsed ");
    rt_cell_done(&c);
}

/* it used to give latency_max_us 1.8e16 */
static void garbage_elapsed_fails(void **state)
{
    rt_cell c;
    run_times(state, &c, "elapsed");
    assert_error(&c, "[job t] times: step 3 reported elapsed_ns 18446744073709551615, but it took ");
    rt_cell_done(&c);
}

/* a device-timed step whose host-timed wait passes it, within the host's
 * time for the step: the step counts as all wait, never more */
static void wait_within_host_time_is_capped(void **state)
{
    rt_cell c;
    run_times(state, &c, "apart");
    if (strcmp(c.res.status, "ok") != 0)
        fail_msg("%s: %s", c.res.status, c.res.error);
    assert_true(rt_cell_double(&c, "data_wait_fraction") == 1.0);
    rt_cell_done(&c);
}

typedef struct twice_run {
    void **state;
    double value;
} twice_run;

static void run_twice(void *arg)
{
    twice_run *t = arg;
    rt_cell c;
    run_times_repeat(t->state, &c, "none", 3);
    assert_string_equal(c.res.status, "ok");
    t->value = field(&c, "twice");
    rt_cell_done(&c);
}

/* the mean is over repetitions: a second report of a key in one replaces
 * the first (it used to be averaged with it: 52.5), said once a cell */
static void twice_in_a_report_keeps_the_last(void **state)
{
    twice_run t = {state, 0};
    char err[4096];
    rt_capture_stderr(run_twice, &t, err, sizeof err);
    assert_true(t.value == 5.0);
    const char *said = "reported field 'twice' twice in one repetition's report; the last value is kept";
    const char *at = strstr(err, said);
    if (!at || strstr(at + 1, said))
        fail_msg("not said once: %s", err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(called_after_warmup, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(called_without_warmup, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(version1_untouched, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(wait_longer_than_step_fails, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(garbage_elapsed_fails, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(wait_within_host_time_is_capped, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(twice_in_a_report_keeps_the_last, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
