/* A large sweep's model: every cell found by its coordinates and listed in
 * axis order, in time linear-ish in the cells (judged against a smaller
 * grid on the same machine).  A 150 x 150 sweep written
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

/* side x side cells, both axes descending in the file. */
static char *grid_csv(int side)
{
    size_t cap = 64 + (size_t)side * side * 96, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    n += (size_t)snprintf(s + n, cap - n, "time,host,job,run_id,aa,bb,status,workload,throughput,throughput_ci95,unit,repeats,version\n");
    for (int b = side; b >= 1; b--)
        for (int a = side; a >= 1; a--)
            n += (size_t)snprintf(s + n, cap - n, "2026-12-01T00:00:00Z,vm,j,r1,%d,%d,ok,sleep,%d,1,steps,1,0.1.0\n", a, b,
                                  1000 + a + b);
    assert_true(n < cap);
    return s;
}

/* CPU seconds to model a side x side grid and order its cells. */
static double model_seconds(int side)
{
    char *csv = grid_csv(side);
    rep_rows rows;
    rep_model m;
    clock_t t0 = clock();
    model_from_csv(csv, &rows, &m);
    size_t *order = rep_group_cell_order(&m.g[0]);
    double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    free(order);
    free(csv);
    rep_model_free(&m);
    rep_rows_free(&rows);
    return s;
}

static void test_large_grid(void **st)
{
    (void)st;
    char *csv = grid_csv(N);
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
    /* against a third of the grid on the same machine, so that a slow or
     * sanitized build does not decide it: 9x the cells cost ~9x in linear
     * time, 81x in quadratic (the scans: 2.4 s against 0.13 s for 150) */
    double small_s = model_seconds(N / 3);
    double ratio = cpu_s / (small_s > 1e-4 ? small_s : 1e-4);
    printf("  %d cells: model and order in %.3f s CPU, %.1fx that of %d cells\n", N * N, cpu_s, ratio, N * N / 9);
    assert_true(ratio < 30);
    free(order);
    rep_model_free(&m);
    rep_rows_free(&rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_large_grid)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
