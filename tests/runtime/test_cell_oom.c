/* A cell when memory runs out: each allocation made while one cell runs
 * in-process fails in turn (rt_oom.h).  The cell must end ok, or with
 * status oom (a memory need, as a cgroup's OOM kill is) and a row whose
 * error names its job's file, line and section and says out of memory:
 * the run prints that text alone for the cell, so one without the job
 * ("out of memory" when the cell's host could not be allocated) left the
 * user no way to tell which job failed. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan.h"
#include "results.h"
#include "rt_oom.h"
#include "rt_util.h"
#include "runner.h"

static void no_emit(dlg_run *run, const dlg_point *p) { (void)run, (void)p; }

/* Runs the planned cell with the n-th allocation failing; returns how many
 * allocations it made. */
static long run_failing_at(dlg_plan *plan, const dlg_cell *cell, long n, dlg_cell_result *res)
{
    assert_int_equal(dlg_cell_result_init(res), 0);
    dlg_run run = {.plan = plan, .emit = no_emit, .wire_fd = -1, .cell_no = 1};
    rt_oom_arm(n);
    dlg_run_cell(&run, cell, res);
    return rt_oom_disarm();
}

static void every_failure_names_the_job(void **state)
{
    if (!rt_oom_possible())
        skip();
    const rt_dir *d = *state;
    char text[2048], ini[512], err[4096], want[600];
    snprintf(text, sizeof text,
             "[global]\nwarmup = 1\n\n[job w]\nplugin = %s/writewl.so\nworkload = write_blocks\n"
             "path = %s/out.bin\niterations = 4\nrepeat = 2\n",
             DLG_TEST_WRITEWL_DIR, d->path);
    rt_write(d, "oom.ini", text, ini, sizeof ini);
    dlg_config cfg;
    dlg_registry reg;
    dlg_plan plan;
    dlg_cell cell;
    if (dlg_config_load(&cfg, ini, err, sizeof err) != 0)
        fail_msg("config did not load: %s", err);
    assert_int_equal(dlg_registry_init(&reg, NULL), 0);
    dlg_registry_scan(&reg);
    if (dlg_plan_build(&plan, &cfg, &reg, NULL, err, sizeof err) != 0)
        fail_msg("plan: %s", err);
    assert_int_equal(dlg_plan_cell(&plan, &plan.jobs[0], 0, &cell, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s:4: [job w] ", ini);
    long n = 1, failed = 0;
    for (; n < 100000; n++) {
        dlg_cell_result res;
        long made = run_failing_at(&plan, &cell, n, &res);
        if (strcmp(res.status, "ok") != 0) {
            failed++;
            if (strcmp(res.status, "oom") != 0 || strncmp(res.error, want, strlen(want)) != 0 ||
                !strstr(res.error, "out of memory"))
                fail_msg("allocation %ld of %ld failed: status %s, error '%s', expected status oom, the error to "
                         "start with '%s' and say out of memory", n, made, res.status, res.error, want);
        }
        dlg_cell_result_fini(&res);
        if (made < n) /* nothing failed: every allocation has been tried */
            break;
    }
    assert_true(n > 10 && n < 100000); /* the cell did allocate, and ran through */
    assert_true(failed > 0);
    dlg_cell_free(&cell);
    dlg_plan_free(&plan);
    dlg_registry_free(&reg);
    dlg_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_failure_names_the_job, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
