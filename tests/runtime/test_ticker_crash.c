/* A fault on the runtime's ticker thread (the RAPL reader, the GPU
 * sampler: ticker.c), in a cell run inside dlgauge's process (isolation =
 * none), gets the crash guard's one line before the process dies of
 * SIGSEGV, as one on a data loader worker does (test_thread_stack.c).
 * The ticker used to start with every signal blocked, so that the kernel
 * killed it at its first fault with the default action, and it had no
 * alternate signal stack for an overflow: both died with nothing said. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt_crash.h"
#include "ticker.h"

static const char who[] = "t.ini:5: [job energy] workload diag";

/* An overflow of the ticker thread's stack. */
static void tick_overflows(void *arg)
{
    (void)arg;
    rt_recurse(NULL, 0);
}

/* A write to a page without access: a plain SIGSEGV, the stack intact. */
static void tick_faults(void *arg) { *(volatile char *)arg = 1; }

/* In the child: a ticker whose first tick runs fn; the main thread waits
 * to be taken along. */
static void start_ticker(void *fn)
{
    void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    dlg_ticker *t;
    if (page == MAP_FAILED || dlg_ticker_start(&t, 1, *(dlg_tick_fn *)fn, page) != 0)
        _exit(3);
    struct timespec ten = {10, 0};
    nanosleep(&ten, NULL); /* not finished: the tick kills the process */
}

static void ticker_fault_says_which_cell(void **state)
{
    dlg_tick_fn fn = tick_faults;
    rt_dies_with_line(*state, who, start_ticker, &fn);
}

static void ticker_overflow_says_which_cell(void **state)
{
    dlg_tick_fn fn = tick_overflows;
    rt_dies_with_line(*state, who, start_ticker, &fn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ticker_fault_says_which_cell, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(ticker_overflow_says_which_cell, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
