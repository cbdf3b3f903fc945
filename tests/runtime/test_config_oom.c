/* Re-reading the configuration when memory runs out, as `dlgauge run` does
 * before each cell to see whether the file was edited: each allocation
 * fails in turn (rt_oom.h).  Every failure must say "cannot read ... (out
 * of memory)", never "changed since this run started" (it used to), and
 * inih's own failure must read as out of memory, not "cannot parse (error
 * -2)". */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "journal.h"
#include "rt_oom.h"
#include "rt_util.h"

static void every_allocation_fails_once(void **state)
{
    if (!rt_oom_possible())
        skip();
    char path[512], inc[512], err[1024], id[20], why[2048];
    rt_write(*state, "more.ini", "sleep = 2ms\n", inc, sizeof inc);
    rt_write(*state, "run.ini", "[global]\nrun_id = r\n[job a]\nworkload = sleep\ninclude = more.ini\n", path,
             sizeof path);
    const char *sets[] = {"a.seed=3"};
    dlg_config cfg;
    assert_int_equal(dlg_config_load(&cfg, path, err, sizeof err), 0);
    assert_int_equal(dlg_config_set(&cfg, sets[0], err, sizeof err), 0);
    dlg_journal_config_id(&cfg, id, sizeof id);
    dlg_config_free(&cfg);
    int failures = 0;
    long n = 1;
    for (; n < 10000; n++) {
        why[0] = '\0';
        rt_oom_arm(n);
        int rc = dlg_journal_config_recheck(path, sets, 1, id, why, sizeof why);
        if (rt_oom_disarm() < n)
            break; /* nothing failed: every allocation was seen */
        if (rc == 0)
            continue; /* one the loader can do without (a stdio buffer) */
        failures++;
        if (rc != -1 || strncmp(why, "cannot read ", 12) != 0 ||
            (!strstr(why, "out of memory") && !strstr(why, "Cannot allocate memory")))
            fail_msg("allocation %ld failed: %d '%s'", n, rc, why);
    }
    assert_true(failures > 5);
    assert_true(n < 10000);
    assert_int_equal(dlg_journal_config_recheck(path, sets, 1, id, why, sizeof why), 0);
    rt_write(*state, "more.ini", "sleep = 3ms\n", inc, sizeof inc); /* an edit is still one */
    assert_int_equal(dlg_journal_config_recheck(path, sets, 1, id, why, sizeof why), 1);
    assert_non_null(strstr(why, "changed since this run started"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_allocation_fails_once, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
