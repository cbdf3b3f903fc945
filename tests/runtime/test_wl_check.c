/* The workloads' check (workload ops version 3), asked about every cell
 * before any runs (dlg_plan_check_workloads): options refused together
 * fail the plan at the key's line, a sweep where only some cells fail
 * warns naming them, and a version-2 plugin (no check) is never called
 * past its table and still runs.  check and setup are told the caps of
 * the cell's storage; a setup error names the key's line as check does. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rt_plan.h"
#include "runner.h"

typedef struct fixture {
    rt_plan p;
    char err[4096];
    char *warn;
    size_t warnlen;
} fixture;

/* Plans `body` (after the job's header and plugin line: line 3 is its
 * first) and checks it; the warnings land in f->warn. */
static int check_plugin(void **state, fixture *f, const char *plugin, const char *body)
{
    memset(f, 0, sizeof *f);
    char text[1024];
    snprintf(text, sizeof text, "[job a]\nplugin = %s\n%s", plugin, body);
    rt_plan_load(*state, "check.ini", text, &f->p);
    if (dlg_plan_build(&f->p.plan, &f->p.cfg, &f->p.reg, NULL, f->err, sizeof f->err) != 0)
        fail_msg("plan: %s", f->err);
    FILE *warn = open_memstream(&f->warn, &f->warnlen);
    assert_non_null(warn);
    int rc = dlg_plan_check_workloads(&f->p.plan, 0, warn, f->err, sizeof f->err);
    fclose(warn);
    return rc;
}

static int check(void **state, fixture *f, const char *body)
{
    return check_plugin(state, f, DLG_TEST_PLUGIN_DIR "/timedwl.so", body);
}

static void done(fixture *f)
{
    free(f->warn);
    rt_plan_done(&f->p);
}

static void conflict_at_key_line(void **state)
{
    fixture f;
    assert_int_equal(check(state, &f, "workload = checked\nhi = 1\nlo = 5\n"), -1);
    rt_assert_error_at(f.err, f.p.path, 5, "[job a] checked: lo = 5: above hi = 1", NULL);
    assert_string_equal(f.warn, "");
    done(&f);
}

/* A check that fails without a message: its code, as a silent setup's. */
static void silent_check_says_code(void **state)
{
    fixture f;
    assert_int_equal(check_plugin(state, &f, DLG_TEST_RT_PLUGIN_DIR "/readwl.so", "workload = silent_check\npath = x\n"), -1);
    rt_assert_error_at(f.err, f.p.path, 1, "[job a] silent_check: check failed (DLG_EIO) without saying why", NULL);
    done(&f);
}

/* A message about an option the job leaves at its default is said at the
 * job's header. */
static void default_key_at_section(void **state)
{
    fixture f;
    assert_int_equal(check(state, &f, "workload = checked\nhi = 0\n"), -1);
    rt_assert_error_at(f.err, f.p.path, 1, "[job a] checked: lo = 1: above hi = 0", NULL);
    done(&f);
}

/* body's plan passes, with the one warning want_fmt ("%s": the file). */
static void assert_warns(void **state, const char *body, const char *want_fmt)
{
    fixture f;
    assert_int_equal(check(state, &f, body), 0);
    char want[1024];
    snprintf(want, sizeof want, want_fmt, f.p.path);
    assert_string_equal(f.warn, want);
    done(&f);
}

static void sweep_some_cells_warns(void **state)
{
    assert_warns(state, "workload = checked\nhi = 3\nlo = 1, 5, 2, 7\n",
                 "dlgauge: %s:5: [job a] checked: warning: lo = 5: above hi = 3: the 2 cells with lo = 5; lo = 7 "
                 "will fail at setup\n");
}

static void sweep_every_cell_fails(void **state)
{
    fixture f;
    assert_int_equal(check(state, &f, "workload = checked\nhi = 3\nlo = 5, 7\n"), -1);
    rt_assert_error_at(f.err, f.p.path, 5, "[job a] checked: lo = 5: above hi = 3",
                       "(every cell fails: lo = 5; lo = 7)", NULL);
    done(&f);
}

/* Cells that differ only in what check never sees (core keys) are asked
 * once: a CNN's check builds its model, 1 ms a cell. */
static void same_values_checked_once(void **state)
{
    fixture f;
    char calls[600], body[1024];
    snprintf(calls, sizeof calls, "%s/calls", ((const rt_dir *)*state)->path);
    snprintf(body, sizeof body, "workload = checked\ncalls = %s\niterations = 1, 2, 3, 4\nlo = 1, 2\nhi = 3\n", calls);
    assert_int_equal(check(state, &f, body), 0);
    assert_int_equal(f.p.plan.jobs[0].ncells, 8);
    FILE *c = fopen(calls, "r");
    assert_non_null(c);
    fseek(c, 0, SEEK_END);
    assert_int_equal(ftell(c), 2); /* lo = 1 and lo = 2 */
    fclose(c);
    done(&f);
}

/* Cells whose refused values differ only in core keys are asked once too,
 * and each is still named (they were asked once a cell). */
static void refused_values_checked_once(void **state)
{
    fixture f;
    char calls[600], body[1024];
    snprintf(calls, sizeof calls, "%s/calls", ((const rt_dir *)*state)->path);
    snprintf(body, sizeof body, "workload = checked\ncalls = %s\niterations = 1, 2, 3\nlo = 5\nhi = 3\n", calls);
    assert_int_equal(check(state, &f, body), -1);
    rt_assert_error_at(f.err, f.p.path, 6, "[job a] checked: lo = 5: above hi = 3",
                       "(every cell fails: iterations = 1; iterations = 2; iterations = 3)", NULL);
    FILE *c = fopen(calls, "r");
    assert_non_null(c);
    fseek(c, 0, SEEK_END);
    assert_int_equal(ftell(c), 1);
    fclose(c);
    done(&f);
}

static void no_emit(dlg_run *run, const dlg_point *p) { (void)run, (void)p; }

/* Runs the plan's first cell in-process, as its setup sees it (no check). */
static void run_first_cell(fixture *f, dlg_cell_result *res)
{
    dlg_cell cell;
    assert_int_equal(dlg_plan_cell(&f->p.plan, &f->p.plan.jobs[0], 0, &cell, f->err, sizeof f->err), 0);
    assert_int_equal(dlg_cell_result_init(res), 0);
    dlg_run run = {.plan = &f->p.plan, .emit = no_emit, .wire_fd = -1, .cell_no = 1};
    dlg_run_cell(&run, &cell, res);
    dlg_cell_free(&cell);
}

/* check gets the caps of the cell's storage (its backend type's, known at
 * plan time: here mmap's zero-copy): before, it could not see the storage,
 * so what a backend cannot do (io's depth > 1 without DLG_CAP_ASYNC) was
 * found only at setup, cell by cell. */
static void storage_caps_in_check(void **state)
{
    fixture f;
    if (check(state, &f, "workload = checked\nstorage = mmap\ncaps = 1\n") != 0)
        fail_msg("mmap's caps: %s", f.err);
    done(&f);
    assert_int_equal(check(state, &f, "workload = checked\ncaps = 1\n"), -1);
    rt_assert_error_at(f.err, f.p.path, 4, "[job a] checked: caps = 1: the job's storage has caps 0", NULL);
    done(&f);
    /* a [storage] section: its type's caps */
    if (check(state, &f, "workload = checked\nstorage = fast\ncaps = 1\n[storage fast]\ntype = mmap\n") != 0)
        fail_msg("[storage fast] type = mmap: %s", f.err);
    done(&f);
}

/* Cells that differ only in their storage are asked each: the caps are
 * part of what check sees. */
static void storage_sweep_warns_per_caps(void **state)
{
    assert_warns(state, "workload = checked\ncaps = 1\nstorage = mmap, posix\n",
                 "dlgauge: %s:4: [job a] checked: warning: caps = 1: the job's storage has caps 0: the 1 cell "
                 "with storage = posix will fail at setup\n");
}

/* setup is told the same caps as check */
static void storage_caps_in_setup(void **state)
{
    fixture f;
    dlg_cell_result res;
    assert_int_equal(check(state, &f, "workload = checked\nstorage = mmap\ncaps = 1\niterations = 1\n"), 0);
    run_first_cell(&f, &res);
    if (strcmp(res.status, "ok") != 0)
        fail_msg("setup saw other caps than check: %s: %s", res.status, res.error);
    dlg_cell_result_fini(&res);
    done(&f);
}

/* A setup message that starts with an option's name is said at that key's
 * line, as check's is; it named the job's section line before. */
static void setup_error_at_key_line(void **state)
{
    fixture f;
    dlg_cell_result res;
    check(state, &f, "workload = checked\nhi = 1\nlo = 5\n");
    run_first_cell(&f, &res);
    assert_string_equal(res.status, "error");
    char want[1024];
    snprintf(want, sizeof want, "%s:5: [job a] checked: lo = 5: above hi = 1", f.p.path);
    assert_string_equal(res.error, want);
    dlg_cell_result_fini(&res);
    done(&f);
    /* an option left at its default: the job's section */
    check(state, &f, "workload = checked\nhi = 0\n");
    run_first_cell(&f, &res);
    snprintf(want, sizeof want, "%s:1: [job a] checked: lo = 1: above hi = 0", f.p.path);
    assert_string_equal(res.error, want);
    dlg_cell_result_fini(&res);
    done(&f);
}

/* check_v2's table ends before check, where a trap that fails follows:
 * the plan passes, and its cell runs. */
static void version2_untouched(void **state)
{
    fixture f;
    if (check(state, &f, "workload = check_v2\niterations = 2\nwarmup = 0\n") != 0)
        fail_msg("a version-2 workload was checked: %s", f.err);
    dlg_cell_result res;
    run_first_cell(&f, &res);
    if (strcmp(res.status, "ok") != 0)
        fail_msg("version-2 workload: %s: %s", res.status, res.error);
    assert_int_equal(res.steps, 2);
    dlg_cell_result_fini(&res);
    done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(conflict_at_key_line, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(default_key_at_section, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(silent_check_says_code, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(sweep_some_cells_warns, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(sweep_every_cell_fails, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(same_values_checked_once, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(refused_values_checked_once, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(version2_untouched, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(storage_caps_in_check, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(storage_sweep_warns_per_caps, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(storage_caps_in_setup, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(setup_error_at_key_line, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
