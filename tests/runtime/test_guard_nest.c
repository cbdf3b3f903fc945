/* Crash guards nest (signals.h): a sink written from inside an in-process
 * cell (its progress points) arms its own guard within the cell's, and
 * disarming it must put the cell's back: a crash of the workload after
 * that is still named as the cell's (it used to end with no line at all,
 * as the inner disarm cleared the guard).  A crash inside the inner guard
 * is the sink's, in its own line. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt_util.h"
#include "signals.h"

static const char cell[] = "t.ini:7: [job j] workload w";
static const char sink[] = "t.ini:2: [sink s]";

/* the address from a variable: no sanitizer check stands in front of it */
static void segv(void)
{
    volatile uintptr_t nowhere = 16;
    *(volatile int *)nowhere = 1;
}

/* In a child: arms the cell's guard, then the sink's (disarmed again
 * unless *crash_in_sink), and crashes. */
static void nested(void *crash_in_sink)
{
    dlg_crash_guard outer, inner;
    dlg_crash_guard_arm(&outer, cell);
    dlg_crash_guard_arm_for(&inner, sink, " in its write op");
    if (!*(bool *)crash_in_sink)
        dlg_crash_guard_disarm(&inner);
    segv();
}

/* The signal the child died of (0: it exited), its stderr in err[]. */
static int nested_crash(bool crash_in_sink, char *err, size_t len)
{
    return rt_child_stderr(nested, &crash_in_sink, err, len);
}

static void test_outer_guard_back(void **unused)
{
    (void)unused;
    char err[4096], want[256];
    assert_int_equal(nested_crash(false, err, sizeof err), SIGSEGV);
    snprintf(want, sizeof want, "dlgauge: %s: killed by SIGSEGV, ", cell);
    if (strncmp(err, want, strlen(want)) != 0 || strchr(err, '\n')[1] != '\0')
        fail_msg("stderr \"%s\", expected one line starting \"%s\"", err, want);
}

static void test_inner_guard_line(void **unused)
{
    (void)unused;
    char err[4096], want[256];
    assert_int_equal(nested_crash(true, err, sizeof err), SIGSEGV);
    snprintf(want, sizeof want, "dlgauge: %s: killed by SIGSEGV (an invalid memory access) in its write op\n", sink);
    assert_string_equal(err, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outer_guard_back),
        cmocka_unit_test(test_inner_guard_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
