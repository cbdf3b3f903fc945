/* The runner's begin_timed call (workload ops version 2): once per
 * repetition, after exactly `warmup` steps and before the first timed
 * one; a version-1 plugin, whose table ends before begin_timed, runs as
 * before and is never called past its version. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(called_after_warmup, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(called_without_warmup, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(version1_untouched, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
