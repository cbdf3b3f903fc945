/* A cell's failure is what was said during the call that failed: an error
 * raised earlier and got over (an optional file that could not be opened
 * at setup) is not why a later step failed silently, which reads "step
 * failed (DLG_EIO) without saying why"; it was the old open's line.  What
 * a worker thread said during the step is the step's, and so is what a
 * worker said during an earlier step of the repetition (prefetching). */
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

/* Runs mutewl with step = how; the cell's error into err. */
static void run_mute(const rt_dir *d, const char *how, char *ini, size_t inilen, char *err, size_t errlen)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[job m]\nplugin = %s/mutewl.so\nworkload = mute_step\noptional = %s/no-such-mean.bin\n"
             "step = %s\nwarmup = 0\niterations = 3\n",
             DLG_TEST_RT_PLUGIN_DIR, d->path, how);
    rt_write(d, "mute.ini", text, ini, inilen);
    rt_cell c;
    rt_cell_run(&c, ini);
    assert_string_equal(c.res.status, "error");
    snprintf(err, errlen, "%s", c.res.error);
    rt_cell_done(&c);
}

static void silent_step_after_recovered_error(void **state)
{
    char ini[512], err[2048], want[1024];
    run_mute(*state, "silent", ini, sizeof ini, err, sizeof err);
    snprintf(want, sizeof want, "%s:1: [job m] mute_step: step failed (DLG_EIO) without saying why", ini);
    assert_string_equal(err, want);
}

static void worker_thread_says_why(void **state)
{
    char ini[512], err[2048], want[1024];
    run_mute(*state, "worker", ini, sizeof ini, err, sizeof err);
    snprintf(want, sizeof want, "%s:1: [job m] mute_step: loader: worker 2: record 17 is truncated", ini);
    assert_string_equal(err, want);
}

static void prefetching_worker_says_why(void **state)
{
    char ini[512], err[2048], want[1024];
    run_mute(*state, "prefetched", ini, sizeof ini, err, sizeof err);
    snprintf(want, sizeof want, "%s:1: [job m] mute_step: loader: worker 2: record 17 is truncated", ini);
    assert_string_equal(err, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(silent_step_after_recovered_error, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(worker_thread_says_why, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(prefetching_worker_says_why, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
