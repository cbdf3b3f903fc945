/* A sink's failure is said in one form, "FILE:LINE: [sink NAME]: TEXT",
 * whether the sink said why (its message) or not ("write failed (DLG_E*)
 * without saying why", as a silent workload's): it was "[sink s]: ..."
 * for one and "[sink s] write failed (DLG_EIO)" for the other.  What one
 * sink said before another's silent failure is not that failure's. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rt_plan.h"
#include "sinkset.h"

typedef struct fixture {
    rt_plan p;
    dlg_sinkset ss;
} fixture;

static void write_one(void *arg)
{
    fixture *f = arg;
    const dlg_point p = {.measurement = "dlgauge_result"};
    dlg_sinkset_write(&f->ss, &p, 1);
}

/* What writing a point to failing sinks (fail = how, for each of the
 * space-separated hows: sinks s, t, ...) prints. */
static void written(void **state, const char *hows, char *text, size_t len, fixture *f)
{
    char ini[1024], err[4096], how[32], name = 's';
    size_t at = 0;
    for (int n = 0; sscanf(hows, "%31s%n", how, &n) == 1; hows += n, name++)
        at += (size_t)snprintf(ini + at, sizeof ini - at, "[sink %c]\nplugin = %s/failsink.so\ntype = failing\n"
                               "fail = %s\n", name, DLG_TEST_RT_PLUGIN_DIR, how);
    rt_plan_load(*state, "sinks.ini", ini, &f->p);
    if (dlg_plan_build_sinks(&f->p.plan, &f->p.cfg, &f->p.reg, err, sizeof err) != 0)
        fail_msg("sinks did not plan: %s", err);
    if (dlg_sinkset_open(&f->ss, &f->p.plan, false, 0, err, sizeof err) != 0)
        fail_msg("sinks did not open: %s", err);
    rt_capture_stderr(write_one, f, text, len);
    assert_int_equal(f->ss.failures, 1);
    dlg_sinkset_close(&f->ss, 0);
    rt_plan_done(&f->p);
}

/* Fails unless writing to sinks `hows` (see written) prints one line,
 * "dlgauge: INI:LINE: [sink NAME]: " then tail. */
static void assert_printed(void **state, const char *hows, int line, char name, const char *tail)
{
    fixture f;
    char text[2048], want[2048];
    memset(&f, 0, sizeof f);
    written(state, hows, text, sizeof text, &f);
    snprintf(want, sizeof want, "dlgauge: %s:%d: [sink %c]: %s\n", f.p.path, line, name, tail);
    assert_string_equal(text, want);
}

static void one_form_said_or_not(void **state)
{
    assert_printed(state, "said", 1, 's', "results/out.x: injected write error");
    assert_printed(state, "silent", 1, 's', "write failed (DLG_EIO) without saying why");
}

/* Sink s raised an error and got by (its write returned 0); sink t's
 * silent failure is t's, "without saying why".  It was printed as s's
 * text (the slot still held it). */
static void said_before_is_not_why(void **state)
{
    assert_printed(state, "recovers silent", 5, 't', "write failed (DLG_EIO) without saying why");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(one_form_said_or_not, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(said_before_is_not_why, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
