/* A large sweep's model: every cell found by its coordinates and listed in
 * axis order, in time linear-ish in the cells.  A 150 x 150 sweep written
 * in descending order (a config listing its values largest first) took
 * seconds: each row scanned every cell to find its own, and the table's
 * order was an insertion sort that order reverses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_csv.h"
#include "report.h"

enum { N = 150 };

/* N x N cells, both axes descending in the file. */
static char *grid_csv(void)
{
    size_t cap = 64 + (size_t)N * N * 96, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    n += (size_t)snprintf(s + n, cap - n, "time,host,job,run_id,aa,bb,status,workload,throughput,throughput_ci95,unit,repeats,version\n");
    for (int b = N; b >= 1; b--)
        for (int a = N; a >= 1; a--)
            n += (size_t)snprintf(s + n, cap - n, "2026-12-01T00:00:00Z,vm,j,r1,%d,%d,ok,sleep,%d,1,steps,1,0.1.0\n", a, b,
                                  1000 + a + b);
    assert_true(n < cap);
    return s;
}

static void test_large_grid(void **st)
{
    (void)st;
    char *csv = grid_csv();
    rep_rows rows;
    rep_model m;
    clock_t t0 = clock(); /* CPU time: other jobs on the machine do not count */
    model_from_csv(csv, &rows, &m);
    size_t *order = rep_group_cell_order(&m.g[0]);
    double cpu_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    free(csv);
    assert_int_equal(m.n, 1);
    const rep_group *g = &m.g[0];
    assert_int_equal(g->ncells, N * N);
    assert_non_null(order);
    for (size_t i = 0; i < g->ncells; i++) {
        const size_t *c = g->cells[order[i]].coord;
        assert_int_equal(rep_group_find(g, c), (long)order[i]);
        if (i) { /* ascending by the first axis, then the second */
            const size_t *p = g->cells[order[i - 1]].coord;
            assert_true(p[0] < c[0] || (p[0] == c[0] && p[1] < c[1]));
        }
    }
    size_t none[2] = {N, 0};
    assert_int_equal(rep_group_find(g, none), -1);
    assert_true(g->has_best);
    assert_int_equal(g->cells[g->best].thr, 1000 + 2 * N);
    printf("  %d cells: model and order in %.2f s CPU\n", N * N, cpu_s);
    /* ~0.13 s here (ASan ~0.7 s); the scans took 2.4 s */
    assert_true(cpu_s < 1.5);
    free(order);
    rep_model_free(&m);
    rep_rows_free(&rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_large_grid)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
