/* Planning when memory runs out: each allocation made while a plan is
 * built fails in turn (rt_oom.h), and every failure must come back as a
 * non-zero status with a message the user can read -- it used to be an
 * empty "dlgauge: " line (a [job]'s storage list), or whatever the stack
 * held (a sink). */
#define _GNU_SOURCE
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan.h"
#include "rt_oom.h"
#include "rt_util.h"

static const char ini[] = "[global]\n"
                          "sinks = csv, json\n"
                          "[sink csv]\n"
                          "path = out.csv\n"
                          "[sink json]\n"
                          "path = out.jsonl\n"
                          "[storage fast]\n"
                          "type = posix\n"
                          "[job a]\n"
                          "workload = sleep\n"
                          "storage = posix, fast\n"
                          "seed = 1, 2\n"
                          "[job b]\n"
                          "workload = noop\n";

static int build_failing_at(const char *path, dlg_registry *reg, long n, char *err, size_t errlen)
{
    dlg_config cfg;
    dlg_plan plan;
    if (dlg_config_load(&cfg, path, err, errlen) != 0)
        fail_msg("config did not load: %s", err);
    rt_oom_arm(n);
    int rc = dlg_plan_build_jobs(&plan, &cfg, reg, NULL, 0, err, errlen);
    rt_oom_disarm();
    dlg_plan_free(&plan);
    dlg_config_free(&cfg);
    return rc;
}

static bool readable(const char *s)
{
    for (; *s; s++)
        if (!isprint((unsigned char)*s))
            return false;
    return true;
}

static void every_allocation_fails_once(void **state)
{
    if (!rt_oom_possible())
        skip();
    char path[512], err[4096];
    rt_write(*state, "oom.ini", ini, path, sizeof path);
    dlg_registry reg;
    assert_int_equal(dlg_registry_init(&reg, NULL), 0);
    dlg_registry_scan(&reg);
    assert_int_equal(build_failing_at(path, &reg, 0, err, sizeof err), 0); /* plugins loaded, nothing fails */
    long n = 1;
    for (; n < 100000; n++) {
        memset(err, 0x7f, sizeof err - 1); /* no message set: not a readable one either */
        err[sizeof err - 1] = '\0';
        if (build_failing_at(path, &reg, n, err, sizeof err) == 0)
            break;
        if (!err[0] || !readable(err))
            fail_msg("allocation %ld failed: status non-zero but the message is '%.60s'", n, err);
    }
    assert_true(n > 20); /* the plan did allocate, and every failure was seen */
    assert_true(n < 100000);
    dlg_registry_free(&reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_allocation_fails_once, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
