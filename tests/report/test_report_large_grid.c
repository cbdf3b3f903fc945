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

#include "assert_more.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_csv.h"
#include "model_rows.h"
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

/* One cell of n rows, each measurement twice (both sinks of a run): run
 * r has throughput 100 + r % 7, 3 repeats, sd 1, p99 latency 10 + r % 3;
 * and 10 failed runs, each twice. */
static char *cell_csv(size_t n)
{
    char *csv = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&csv, &len);
    assert_non_null(f);
    fputs("time,cpus,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,"
          "latency_p99_us,start_time,version\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "t,1,j,r%zu,ok,sim,%zu,1,1,images,3,%zu,s%zu,0.1.0\n", i / 2, 100 + i / 2 % 7, 10 + i / 2 % 3,
                i / 2);
    for (size_t i = 0; i < 20; i++)
        fprintf(f, "t,1,j,f%zu,oom,sim,,,,images,,,s%zu,0.1.0\n", i / 2, i / 2);
    assert_int_equal(fclose(f), 0);
    return csv;
}

/* CPU seconds to model the cell of n rows and pool its p99 latency;
 * checks the figures, each measurement counted once. */
static double pool_seconds(size_t n)
{
    char *csv = cell_csv(n);
    rep_rows rows;
    rep_model m;
    double **p99 = NULL;
    clock_t t0 = clock();
    model_from_csv(csv, &rows, &m);
    assert_int_equal(rep_model_cell_field(&m, &rows, "latency_p99_us", REP_POOL_MEAN, &p99), 0);
    double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    free(csv);
    size_t runs = n / 2; /* a multiple of 21: each throughput and latency equally often */
    const rep_cell *c = &m.g[0].cells[0];
    assert_int_equal(m.g[0].ncells, 1);
    assert_near(c->repeats, 3.0 * (double)runs, 0);
    assert_near(c->thr, 103, 1e-9);
    assert_near(c->sd, sqrt((2.0 * (double)runs + 3.0 * 28 / 7 * (double)runs) / (3.0 * (double)runs - 1)), 1e-9);
    assert_int_equal(c->nfailed, 10);
    assert_near(p99[0][0], 11, 1e-9);
    rep_model_cell_field_free(&m, p99);
    rep_model_free(&m);
    rep_rows_free(&rows);
    return s;
}

/* The rows of one cell (many runs of it merged) pooled in time linear-ish
 * in them: each row was checked against every earlier row of its cell for
 * a repeat, 100k rows in 5 cells took 376 s.  Against 1/8 of the rows on
 * the same machine: 8x (or a little more) in n log n, 64x quadratic. */
static void test_large_cell_pool(void **st)
{
    (void)st;
    enum { ROWS = 21 * 2 * 320 }; /* 13440 rows: 18 s CPU in the old code, 0.05 s now */
    double big = INFINITY, small = INFINITY;
    for (int i = 0; i < 3; i++) { /* the least of three: another job's burst is no trend */
        big = fmin(big, pool_seconds(ROWS));
        small = fmin(small, pool_seconds(ROWS / 8));
    }
    double ratio = big / (small > 1e-3 ? small : 1e-3);
    printf("  one cell of %d rows: pooled in %.3f s CPU, %.1fx that of %d rows\n", ROWS, big, ratio, ROWS / 8);
    assert_true(ratio < 25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_large_grid), cmocka_unit_test(test_large_cell_pool)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
