/* The CUDA backend's step timer (cuda_step.c) and profile marks
 * (cuda_prof.c) against the CPU stand-in runtime (fakegpu): the timer's
 * four events, and the marks' n, are made all or none.  Before, an
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
#include <string.h>

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

/* The profile's marks: made all or none, once; recorded in stream order
 * and read as n - 1 gaps; bad indices refused. */
static void test_prof_marks(void **state)
{
    (void)state;
    dlg_cuda_ctx *c = calloc(1, sizeof *c);
    assert_non_null(c);
    const size_t live = fakegpu_live_events();
    char err[200] = "";
    fakegpu_fail_event_create(5);
    assert_int_equal(dlg_cuda_prof_open(c, 8, err, sizeof err), -DLG_ENOMEM);
    assert_non_null(strstr(err, "cudaEventCreate (mark 5 of 8)"));
    assert_int_equal(fakegpu_live_events(), live); /* the four made are gone */
    assert_int_equal(c->prof_n, 0);
    assert_null(c->prof_ev);
    assert_int_equal(cudaGetLastError(), cudaSuccess);

    assert_int_equal(dlg_cuda_prof_open(c, 8, err, sizeof err), 0);
    assert_int_equal(fakegpu_live_events(), live + 8);
    assert_int_equal(dlg_cuda_prof_open(c, 8, err, sizeof err), -DLG_EINVAL); /* once */
    assert_int_equal(dlg_cuda_prof_mark(c, 8), -DLG_EINVAL);
    assert_int_equal(dlg_cuda_prof_mark(c, -1), -DLG_EINVAL);
    uint64_t ns[8];
    for (int round = 0; round < 2; round++) { /* the marks are recorded again */
        for (int i = 0; i < 4; i++)
            assert_int_equal(dlg_cuda_prof_mark(c, i), 0);
        for (int i = 0; i < 8; i++)
            ns[i] = 12345;
        assert_int_equal(dlg_cuda_prof_read(c, 4, ns), 0);
        for (int i = 0; i < 3; i++) /* the stand-in never reports 0 (1 us at least) */
            assert_true(ns[i] >= 1000 && ns[i] < 1000000000ull);
        assert_int_equal(ns[3], 12345); /* n - 1 gaps, no more */
    }
    assert_int_equal(dlg_cuda_prof_read(c, 9, ns), -DLG_EINVAL);
    assert_int_equal(dlg_cuda_prof_read(c, 0, ns), -DLG_EINVAL);
    dlg_cuda_prof_free(c);
    assert_int_equal(fakegpu_live_events(), live);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_events_all_or_none),
        cmocka_unit_test(test_prof_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
