/* Repetition statistics: known answers for t quantiles and summaries. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"

#define near(got, want, tol) assert_true(fabs((got) - (want)) <= (tol))

static void test_t_table(void **st)
{
    near(dlg_t_quantile_975(1), 12.706, 5e-4);
    near(dlg_t_quantile_975(2), 4.303, 5e-4);
    near(dlg_t_quantile_975(9), 2.262, 5e-4);
    near(dlg_t_quantile_975(30), 2.042272456, 1e-9);
    assert_true(isinf(dlg_t_quantile_975(0)));
}

/* Beyond the table: values from numerically integrating the t density. */
static void test_t_approximation(void **st)
{
    near(dlg_t_quantile_975(31), 2.039513446, 1e-7);
    near(dlg_t_quantile_975(40), 2.021075390, 1e-7);
    near(dlg_t_quantile_975(60), 2.000297822, 1e-7);
    near(dlg_t_quantile_975(120), 1.979930405, 1e-7);
    near(dlg_t_quantile_975(1000), 1.962339081, 1e-7);
    near(dlg_t_quantile_975((size_t)1 << 40), 1.959963985, 1e-8); /* the normal limit */
    for (size_t df = 1; df < 500; df++) /* strictly decreasing across the seam */
        assert_true(dlg_t_quantile_975(df + 1) < dlg_t_quantile_975(df));
}

static void test_known_set(void **st)
{
    const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    double copy[8];
    memcpy(copy, x, sizeof x);
    dlg_summary s;
    dlg_summarize(x, 8, &s);
    assert_int_equal(s.n, 8);
    near(s.mean, 5.0, 1e-15);
    near(s.stddev, 2.138089935299395, 1e-12); /* sqrt(32/7) */
    near(s.ci95, 1.7874879185440362, 1e-9);   /* 2.364624252 * sd / sqrt(8) */
    near(s.min, 2, 0);
    near(s.max, 9, 0);
    near(s.median, 4.5, 0);
    assert_memory_equal(x, copy, sizeof x); /* not modified */
}

static void test_odd_and_offset(void **st)
{
    const double x[] = {1e9 + 16, 1e9 + 4, 1e9 + 13, 1e9 + 7, 1e9 + 10};
    dlg_summary s;
    dlg_summarize(x, 5, &s);
    near(s.mean, 1e9 + 10, 1e-6);
    near(s.stddev, sqrt(90.0 / 4.0), 1e-6); /* deviations 6,-6,3,-3,0 */
    near(s.median, 1e9 + 10, 0);
    near(s.ci95, 2.776445105 * sqrt(22.5) / sqrt(5.0), 1e-6);
}

static void test_one_and_zero(void **st)
{
    const double x[] = {42.5};
    dlg_summary s;
    dlg_summarize(x, 1, &s);
    assert_int_equal(s.n, 1);
    near(s.mean, 42.5, 0);
    near(s.median, 42.5, 0);
    near(s.min, 42.5, 0);
    near(s.max, 42.5, 0);
    assert_true(s.stddev == 0 && s.ci95 == 0);
    memset(&s, 0x55, sizeof s);
    dlg_summarize(NULL, 0, &s);
    assert_int_equal(s.n, 0);
    assert_true(s.mean == 0 && s.stddev == 0 && s.ci95 == 0 && s.min == 0 && s.max == 0 &&
                s.median == 0);
}

/* More than 64 values: the heap path. 1..100 in a scrambled order. */
static void test_large(void **st)
{
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = (double)((i * 37) % 100 + 1);
    dlg_summary s;
    dlg_summarize(x, 100, &s);
    near(s.mean, 50.5, 1e-12);
    near(s.median, 50.5, 0);
    near(s.stddev, 29.011491975882016, 1e-9); /* sqrt(n(n+1)/12) */
    near(s.ci95, dlg_t_quantile_975(99) * 29.011491975882016 / 10.0, 1e-9);
    near(s.ci95, 5.7565, 1e-3);
    near(s.min, 1, 0);
    near(s.max, 100, 0);
    assert_true(x[1] == 38.0); /* untouched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_table),    cmocka_unit_test(test_t_approximation),
        cmocka_unit_test(test_known_set),  cmocka_unit_test(test_odd_and_offset),
        cmocka_unit_test(test_one_and_zero), cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
