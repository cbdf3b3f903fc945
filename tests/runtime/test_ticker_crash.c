/* A fault on the runtime's ticker thread (the RAPL reader, the GPU
 * sampler: ticker.c), in a cell run inside dlgauge's process (isolation =
 * none), gets the crash guard's one line before the process dies of
 * SIGSEGV, as one on a data loader worker does (test_thread_stack.c).
 * The ticker used to start with every signal blocked, so that the kernel
 * killed it at its first fault with the default action, and it had no
 * alternate signal stack for an overflow: both died with nothing said. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt_util.h"
#include "signals.h"
#include "ticker.h"

static const char who[] = "t.ini:5: [job energy] workload diag";

/* Deeper than any thread's stack (2 KiB a frame, depth up to 2^30). */
__attribute__((noinline)) static int64_t recurse(volatile char *up, long depth)
{
    volatile char frame[2048];
    frame[0] = up ? up[0] : 1;
    if (depth >= 1L << 30)
        return frame[0];
    return recurse(frame, depth + 1) + frame[1]; /* not a tail call */
}

static void tick_overflows(void *arg)
{
    (void)arg;
    recurse(NULL, 0);
}

/* A write to a page without access: a plain SIGSEGV, the stack intact. */
static void tick_faults(void *arg) { *(volatile char *)arg = 1; }

/* In a child whose stderr goes to errpath: the guard armed, a ticker
 * whose first tick runs fn; the main thread waits to be taken along. */
static void child(const char *errpath, dlg_tick_fn fn)
{
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0 || page == MAP_FAILED)
        _exit(2);
    dlg_crash_guard g;
    dlg_crash_guard_arm(&g, who);
    dlg_ticker *t;
    if (dlg_ticker_start(&t, 1, fn, page) != 0)
        _exit(3);
    struct timespec ten = {10, 0};
    nanosleep(&ten, NULL); /* not finished: the tick kills the process */
    _exit(4);
}

/* Runs child(fn) and checks it died of SIGSEGV with the guard's one line. */
static void dies_with_line(const rt_dir *d, dlg_tick_fn fn)
{
    char errpath[600], err[4096] = "";
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", d->path);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child(errpath, fn);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    FILE *f = fopen(errpath, "r");
    assert_non_null(f);
    err[fread(err, 1, sizeof err - 1, f)] = '\0';
    fclose(f);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
        fail_msg("child: status %#x, expected death by SIGSEGV; stderr: %s", status, err);
    char want[256];
    snprintf(want, sizeof want, "dlgauge: %s: killed by SIGSEGV", who);
    if (strncmp(err, want, strlen(want)) != 0 || !strchr(err, '\n') || strchr(err, '\n')[1])
        fail_msg("stderr \"%s\" is not the one line \"%s...\"", err, want);
}

static void ticker_fault_says_which_cell(void **state) { dies_with_line(*state, tick_faults); }

static void ticker_overflow_says_which_cell(void **state) { dies_with_line(*state, tick_overflows); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ticker_fault_says_which_cell, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(ticker_overflow_says_which_cell, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
