/* The crash guard around a cell run inside dlgauge's process (isolation =
 * none): a real SIGBUS (a mapped file truncated under its reader) and a
 * SIGSEGV end the process with that signal after ONE line on stderr that
 * names the cell, the signal and the way out; disarming puts back the
 * handlers found before, and an alternate stack only where none was set.
 * Also the run's stop note, before the first cell and in one. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt_util.h"
#include "signals.h"

static const char who[] = "t.ini:7: [job reader] workload io";

/* Reads a page of a mapped file after truncating it: a genuine SIGBUS. */
static void read_shrunk_mapping(void)
{
    char path[] = "/tmp/test_signals_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || ftruncate(fd, 65536) != 0)
        _exit(2);
    unlink(path);
    volatile const char *p = mmap(NULL, 65536, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED || ftruncate(fd, 0) != 0)
        _exit(2);
    (void)p[4096];
    _exit(3); /* not reached: the read must fault */
}

typedef struct crash_fn {
    void (*crash)(void);
} crash_fn;

/* In a child: arms a guard and dies as crash() makes it. */
static void guarded(void *arg)
{
    dlg_crash_guard g;
    dlg_crash_guard_arm(&g, who);
    ((crash_fn *)arg)->crash();
}

/* The signal the guarded child died of (0: it exited), its stderr in err[]. */
static int crash_in_child(void (*crash)(void), char *err, size_t len)
{
    crash_fn f = {crash};
    return rt_child_stderr(guarded, &f, err, len);
}

static void assert_one_line(const char *err, const char *signame)
{
    char want[128];
    snprintf(want, sizeof want, "dlgauge: %s: killed by %s", who, signame);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("stderr \"%s\" does not start \"%s\"", err, want);
    const char *nl = strchr(err, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0'); /* one line, and nothing else */
    assert_non_null(strstr(err, "use isolation = process to survive it and keep the run going"));
}

static void sigbus_says_which_cell(void **st)
{
    (void)st;
    char err[2048];
    assert_int_equal(crash_in_child(read_shrunk_mapping, err, sizeof err), SIGBUS);
    assert_one_line(err, "SIGBUS");
    assert_non_null(strstr(err, "a mapped file shrank"));
    assert_non_null(strstr(err, "type = mmap"));
}

/* a fault where the address comes from a variable: no compiler warning,
 * and no sanitizer check stands in front of it */
static void bad_store(void)
{
    volatile uintptr_t bad = 16;
    *(volatile int *)bad = 1;
}

static void sigsegv_says_which_cell(void **st)
{
    (void)st;
    char err[2048];
    assert_int_equal(crash_in_child(bad_store, err, sizeof err), SIGSEGV);
    assert_one_line(err, "SIGSEGV");
}

static void raise_fpe(void) { raise(SIGFPE); }

static void sigfpe_says_which_cell(void **st)
{
    (void)st;
    char err[2048];
    assert_int_equal(crash_in_child(raise_fpe, err, sizeof err), SIGFPE);
    assert_one_line(err, "SIGFPE");
}

/* abort() (a failed assert) used to end an in-process cell with a bare
 * "Aborted": it gets the cell's line too */
static void call_abort(void) { abort(); }

static void sigabrt_says_which_cell(void **st)
{
    (void)st;
    char err[2048];
    assert_int_equal(crash_in_child(call_abort, err, sizeof err), SIGABRT);
    assert_one_line(err, "SIGABRT");
    assert_non_null(strstr(err, "the code called abort(), e.g. a failed assert"));
}

/* In a child: arms a sink's guard (arm_for) and calls abort(). */
static void sink_aborts(void *arg)
{
    (void)arg;
    dlg_crash_guard g;
    dlg_crash_guard_arm_for(&g, "k.ini:1: [sink bk]", " in its write op");
    abort();
}

/* and a sink's op that aborts is named as one that faults */
static void sigabrt_says_which_sink(void **st)
{
    (void)st;
    char err[2048];
    assert_int_equal(rt_child_stderr(sink_aborts, NULL, err, sizeof err), SIGABRT);
    assert_string_equal(err, "dlgauge: k.ini:1: [sink bk]: killed by SIGABRT (the code called abort(), e.g. a "
                             "failed assert) in its write op\n");
}

static void mine(int sig) { (void)sig; }

static void disarm_restores_handlers(void **st)
{
    (void)st;
    static const int sigs[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGABRT};
    struct sigaction before[5], sa, now;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = mine;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 5; i++)
        assert_int_equal(sigaction(sigs[i], &sa, &before[i]), 0);
    stack_t stack_before, stack_now;
    assert_int_equal(sigaltstack(NULL, &stack_before), 0);
    dlg_crash_guard g;
    dlg_crash_guard_arm(&g, who);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(sigaction(sigs[i], NULL, &now), 0);
        assert_true(now.sa_handler != mine);
    }
    dlg_crash_guard_disarm(&g);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(sigaction(sigs[i], &before[i], &now), 0);
        assert_true(now.sa_handler == mine);
    }
    assert_int_equal(sigaltstack(NULL, &stack_now), 0);
    assert_int_equal(stack_now.ss_flags, stack_before.ss_flags);
    assert_ptr_equal(stack_now.ss_sp, stack_before.ss_sp);
}

/* In a child: the run's stop handlers, a cell begun if arg says so, and
 * one SIGINT; the child then ends of itself (exit 0). */
static void stop_once(void *arg)
{
    dlg_signals_install();
    if (*(const bool *)arg)
        dlg_signals_cell_started();
    raise(SIGINT);
    _exit(dlg_stop_signal() == SIGINT ? 0 : 5);
}

/* The first stop request's note says what happens: before any cell,
 * that nothing was measured (it said a running cell would be written
 * partial); once a cell began, that it is.  stderr is a pipe here, so
 * no terminal line is cleared before it. */
static void stop_note_before_and_in_a_cell(void **st)
{
    (void)st;
    char err[1024];
    bool begun = false;
    assert_int_equal(rt_child_stderr(stop_once, &begun, err, sizeof err), 0);
    assert_string_equal(err, "dlgauge: stopping before the first cell: nothing was measured; a second signal "
                             "(Ctrl-C again) stops at once\n");
    begun = true;
    assert_int_equal(rt_child_stderr(stop_once, &begun, err, sizeof err), 0);
    assert_string_equal(err, "dlgauge: stopping: the running cell ends after its current step (or its setup) and "
                             "is written as partial; a second signal (Ctrl-C again) stops at once and loses that "
                             "cell's row\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sigbus_says_which_cell),
        cmocka_unit_test(sigsegv_says_which_cell),
        cmocka_unit_test(sigfpe_says_which_cell),
        cmocka_unit_test(sigabrt_says_which_cell),
        cmocka_unit_test(sigabrt_says_which_sink),
        cmocka_unit_test(disarm_restores_handlers),
        cmocka_unit_test(stop_note_before_and_in_a_cell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
