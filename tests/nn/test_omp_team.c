/* dlg_omp_team (core/nn/cpu/omp_team.c): libgomp keeps a thread's pool
 * from one parallel region to the next, each pool thread on the CPUs its
 * creator had then.  An in-process cell pinned to fewer or other CPUs than
 * an earlier one must not run its team on the earlier cell's CPUs.  Needs
 * two CPUs (else skips, 77). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cpu/omp_team.h"

#include <omp.h>
#include <sched.h>
#include <stdlib.h>

#define TEAM 2

typedef struct {
    cpu_set_t all;
    int a, b; /* two CPUs of the process */
} cpus;

static int pin(int a, int b)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(a, &s);
    if (b >= 0)
        CPU_SET(b, &s);
    return sched_setaffinity(0, sizeof s, &s);
}

/* Each team thread's CPU set, by thread number. */
static void team_masks(cpu_set_t masks[TEAM])
{
#pragma omp parallel num_threads(TEAM)
    {
        int t = omp_get_thread_num();
        if (t < TEAM)
            sched_getaffinity(0, sizeof masks[t], &masks[t]);
    }
}

static int setup(void **st)
{
    cpus *c = calloc(1, sizeof *c);
    if (!c || sched_getaffinity(0, sizeof c->all, &c->all) != 0) {
        free(c);
        return -1;
    }
    c->a = c->b = -1;
    for (int i = 0; i < CPU_SETSIZE && c->b < 0; i++)
        if (CPU_ISSET(i, &c->all))
            *(c->a < 0 ? &c->a : &c->b) = i;
    *st = c;
    return 0;
}

static int teardown(void **st)
{
    cpus *c = *st;
    sched_setaffinity(0, sizeof c->all, &c->all);
    free(c);
    return 0;
}

/* A team made on CPUs {a, b}; then the caller on {a} alone: after
 * dlg_omp_team every thread of the team is on {a}. */
static void test_pool_follows_caller(void **st)
{
    cpus *c = *st;
    if (c->b < 0 || getenv("OMP_PROC_BIND") || getenv("OMP_PLACES") || getenv("GOMP_CPU_AFFINITY"))
        skip();
    assert_int_equal(pin(c->a, c->b), 0);
    cpu_set_t masks[TEAM];
    team_masks(masks); /* the pool thread is made here, on {a, b} */
    assert_true(CPU_ISSET(c->b, &masks[1]));

    assert_int_equal(pin(c->a, -1), 0);
    assert_int_equal(dlg_omp_team(TEAM), 0);
    assert_int_equal(omp_get_max_threads(), TEAM);
    team_masks(masks);
    for (int t = 0; t < TEAM; t++) {
        assert_int_equal(CPU_COUNT(&masks[t]), 1);
        assert_true(CPU_ISSET(c->a, &masks[t]));
    }
}

/* A pool thread already inside the caller's CPUs stays where it is (as
 * OMP_PROC_BIND would have placed it); a team of one runs no region. */
static void test_inside_kept(void **st)
{
    cpus *c = *st;
    if (c->b < 0 || getenv("OMP_PROC_BIND") || getenv("OMP_PLACES") || getenv("GOMP_CPU_AFFINITY"))
        skip();
    assert_int_equal(pin(c->a, c->b), 0);
    cpu_set_t masks[TEAM];
    team_masks(masks);
    /* put the pool thread on {b} alone, then ask for the team on {a, b} */
#pragma omp parallel num_threads(TEAM)
    if (omp_get_thread_num() == 1)
        pin(c->b, -1);
    assert_int_equal(dlg_omp_team(TEAM), 0);
    team_masks(masks);
    assert_int_equal(CPU_COUNT(&masks[1]), 1);
    assert_true(CPU_ISSET(c->b, &masks[1]));

    assert_int_equal(dlg_omp_team(1), 0);
    assert_int_equal(omp_get_max_threads(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pool_follows_caller, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inside_kept, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
