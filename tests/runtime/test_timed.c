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

#include "plan.h"
#include "rt_util.h"
#include "runner.h"

typedef struct fixture {
    dlg_config cfg;
    dlg_registry reg;
    dlg_plan plan;
    dlg_cell cell;
    dlg_cell_result res;
    char path[512];
    char err[4096];
} fixture;

static void no_emit(dlg_run *run, const dlg_point *p) { (void)run, (void)p; }

/* Runs the one cell of `workload` from timedwl.so with the given warm-up,
 * iterations and repetitions. */
static void run_cell(void **state, fixture *f, const char *workload, int warmup, int iterations, int repeat)
{
    memset(f, 0, sizeof *f);
    char text[1024];
    snprintf(text, sizeof text,
             "[job t]\nplugin = %s/timedwl.so\nworkload = %s\nwarmup = %d\niterations = %d\nrepeat = %d\n",
             DLG_TEST_PLUGIN_DIR, workload, warmup, iterations, repeat);
    rt_write(*state, "timed.ini", text, f->path, sizeof f->path);
    if (dlg_config_load(&f->cfg, f->path, f->err, sizeof f->err) != 0)
        fail_msg("config did not load: %s", f->err);
    assert_int_equal(dlg_registry_init(&f->reg, NULL), 0);
    dlg_registry_scan(&f->reg); /* the default storage, posix */
    if (dlg_plan_build(&f->plan, &f->cfg, &f->reg, NULL, f->err, sizeof f->err) != 0)
        fail_msg("plan: %s", f->err);
    assert_int_equal(dlg_plan_cell(&f->plan, &f->plan.jobs[0], 0, &f->cell, f->err, sizeof f->err), 0);
    assert_int_equal(dlg_cell_result_init(&f->res), 0);
    dlg_run run = {.plan = &f->plan, .emit = no_emit, .wire_fd = -1, .cell_no = 1};
    dlg_run_cell(&run, &f->cell, &f->res);
}

static void done(fixture *f)
{
    dlg_cell_result_fini(&f->res);
    dlg_cell_free(&f->cell);
    dlg_plan_free(&f->plan);
    dlg_registry_free(&f->reg);
    dlg_config_free(&f->cfg);
}

/* A numeric workload field: its mean over the repetitions. */
static double field(const fixture *f, const char *key)
{
    for (size_t i = 0; i < f->res.nwf; i++)
        if (strcmp(f->res.wf[i].key, key) == 0)
            return f->res.wf[i].sum / f->res.wf[i].count;
    fail_msg("no field %s (status %s: %s)", key, f->res.status, f->res.error);
    return 0;
}

static void called_after_warmup(void **state)
{
    fixture f;
    run_cell(state, &f, "timed_count", 4, 6, 3);
    assert_string_equal(f.res.status, "ok");
    assert_int_equal(f.res.reps, 3);
    assert_int_equal(f.res.steps, 18);
    /* each repetition: one call, after its 4 warm-up steps, then its 6 steps */
    assert_true(field(&f, "begin_timed_calls") == 1);
    assert_true(field(&f, "steps_before_timed") == 4);
    assert_true(field(&f, "steps_after_timed") == 6);
    done(&f);
}

static void called_without_warmup(void **state)
{
    fixture f;
    run_cell(state, &f, "timed_count", 0, 5, 1);
    assert_string_equal(f.res.status, "ok");
    assert_true(field(&f, "begin_timed_calls") == 1);
    assert_true(field(&f, "steps_before_timed") == 0);
    assert_true(field(&f, "steps_after_timed") == 5);
    done(&f);
}

static void version1_untouched(void **state)
{
    fixture f;
    run_cell(state, &f, "timed_v1", 2, 3, 2);
    if (strcmp(f.res.status, "ok") != 0)
        fail_msg("version-1 workload: %s: %s", f.res.status, f.res.error);
    assert_int_equal(f.res.steps, 6);
    assert_true(field(&f, "begin_timed_calls") == 0);
    assert_true(field(&f, "steps_before_timed") == -1);
    done(&f);
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
