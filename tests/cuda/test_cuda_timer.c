/* The CUDA backend's step timer (cuda_step.c) against the CPU stand-in
 * runtime (fakegpu): its four events are made all or none.  Before, an
 * event creation failing part-way (out of memory on the third) left the
 * first two made and the rest NULL; the next step saw timer[0][0] set,
 * skipped the creation and recorded the NULL event, so every later step
 * failed, and the failure's error stayed for the next kernel launch. */
#include "cuda/cuda.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

/* fakegpu/fake_runtime.cc's test hooks */
void fakegpu_fail_event_create(int nth);
size_t fakegpu_live_events(void);

static void timed_step(dlg_cuda_ctx *c)
{
    uint64_t ns = 0;
    assert_int_equal(dlg_cuda_timer_begin(c), 0);
    assert_int_equal(dlg_cuda_timer_end(c, &ns), 0);
    assert_true(ns > 0);
}

static void test_timer_events_all_or_none(void **state)
{
    (void)state;
    dlg_cuda_ctx *c = calloc(1, sizeof *c); /* stream NULL: the legacy stream */
    assert_non_null(c);
    const size_t live = fakegpu_live_events();
    fakegpu_fail_event_create(3);
    int rc = dlg_cuda_timer_begin(c);
    for (int i = 0; i < 4; i++)
        assert_null(c->timer[i / 2][i % 2]); /* none kept ... */
    assert_int_equal(fakegpu_live_events(), live); /* ... nor leaked */
    assert_int_equal(rc, -DLG_ENOMEM);
    assert_int_equal(cudaGetLastError(), cudaSuccess); /* not left for a launch */
    uint64_t ns = 7;
    assert_int_equal(dlg_cuda_timer_end(c, &ns), -DLG_EINVAL); /* nothing began */
    assert_int_equal(ns, 0);
    /* the next steps make all four and time with both pairs */
    timed_step(c);
    assert_int_equal(fakegpu_live_events(), live + 4);
    timed_step(c);
    timed_step(c);
    dlg_cuda_step_free(c);
    assert_int_equal(fakegpu_live_events(), live);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_events_all_or_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
