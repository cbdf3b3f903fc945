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
        cmocka_unit_test(test_ci_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
