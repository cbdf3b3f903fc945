/* dlgauge compare's statistics against known answers: Welch's t, its
 * degrees of freedom and two-sided p-value (computed with mpmath's
 * regularized incomplete beta at 30 digits), the t distribution against
 * the runtime's own t quantile table, and no test below 2 repeats. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "assert_more.h"

#include "compare.h"
#include "stats.h"

static const struct {
    double m1, sd1, n1, m2, sd2, n2;
    double t, df, p;
} known[] = {
    /* equal n, unequal sd: a significant slowdown */
    {100, 2, 5, 95, 3, 5, -3.10086836473021, 6.96907216494845, 0.017398560671269},
    /* unequal n and sd: not significant */
    {10, 1, 3, 12, 4, 10, 1.43838990445615, 10.9934640522876, 0.178177344900473},
    /* equal sd and n: df = 2n - 2 as the pooled test */
    {200, 10, 3, 190, 10, 3, -1.22474487139159, 4.0, 0.287864134726691},
    /* a tight base against a loose new: df near the loose side's n - 1 */
    {50, 0.5, 30, 50.2, 2, 4, 0.199171839092791, 3.05018642107456, 0.854668170106403},
};

static void welch_known_answers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        rep_welch w = rep_welch_test(known[i].m1, known[i].sd1, known[i].n1, known[i].m2, known[i].sd2, known[i].n2);
        assert_near(w.t, known[i].t, 1e-10);
        assert_near(w.df, known[i].df, 1e-10);
        assert_near(w.p, known[i].p, 1e-9);
    }
}

/* At the 97.5% quantile of the runtime's table the two-sided p is 0.05. */
static void t_distribution_matches_quantile_table(void **state)
{
    (void)state;
    const size_t dfs[] = {1, 2, 3, 5, 10, 30, 31, 100, 1000};
    for (size_t i = 0; i < sizeof dfs / sizeof *dfs; i++)
        assert_near(rep_t_two_sided_p(dlg_t_quantile_975(dfs[i]), (double)dfs[i]), 0.05, 1e-7);
    assert_near(rep_t_two_sided_p(0, 4), 1.0, 1e-12);
    assert_near(rep_t_two_sided_p(INFINITY, 4), 0.0, 0);
}

static void no_test_below_two_repeats(void **state)
{
    (void)state;
    assert_true(isnan(rep_welch_test(100, 0, 1, 50, 1, 5).p));
    assert_true(isnan(rep_welch_test(100, 1, 5, 50, 0, 1).p));
    /* no spread on either side: any difference is certain, none is none */
    assert_near(rep_welch_test(100, 0, 3, 90, 0, 3).p, 0.0, 0);
    assert_near(rep_welch_test(100, 0, 3, 100, 0, 3).p, 1.0, 0);
}

/* Huge degrees of freedom (repeats in the millions and beyond): still a
 * probability, and the right one (references: mpmath, the t density
 * integrated at 40 digits).  The incomplete beta once gave -6.9 at t = 0.5
 * and 0.047 at t = 2 for df = 1e15, calling a 0.5-sigma difference slower. */
static void huge_df_is_the_normal_limit(void **state)
{
    (void)state;
    static const struct {
        double t, df, p;
    } ref[] = {
        {0.5, 1e15, 0.6170750774519739},  {2, 1e15, 0.045500263896358684}, {1.96, 1e12, 0.049995790296718161},
        {1.75, 1e9, 0.080118314034323088}, {3, 2e7, 0.0026997993871475866},
    };
    for (size_t i = 0; i < sizeof ref / sizeof *ref; i++)
        assert_near(rep_t_two_sided_p(ref[i].t, ref[i].df) / ref[i].p, 1.0, 1e-9);
    /* through the test: 1e15 repeats a side, half a standard error apart */
    rep_welch w = rep_welch_test(100, 1e7, 1e15, 100 + 0.5 * sqrt(2) * 1e7 / sqrt(1e15), 1e7, 1e15);
    assert_near(w.t, 0.5, 1e-6);
    assert_near(w.p, 0.6170750774519739, 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(welch_known_answers),
        cmocka_unit_test(t_distribution_matches_quantile_table),
        cmocka_unit_test(no_test_below_two_repeats),
        cmocka_unit_test(huge_df_is_the_normal_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
