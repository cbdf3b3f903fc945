/* Log-linear histogram: percentiles against exact nearest rank from a
 * sorted copy, exact moments, merge (also by an allreduce's sum) and reset. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "histogram.h"
#include <dlgauge/splitmix.h>

#define N 20000

static double unit(uint64_t *s) { return ((double)(dlg_splitmix_next(s) >> 11) + 0.5) / 9007199254740992.0; }

typedef uint64_t (*gen_fn)(uint64_t *s);

static uint64_t gen_uniform(uint64_t *s) { return dlg_splitmix_next(s) % 1000000000u; }
static uint64_t gen_constant(uint64_t *s) { return 123456789u; }
static uint64_t gen_small(uint64_t *s) { return dlg_splitmix_next(s) % 300u; } /* linear and first log buckets */
static uint64_t gen_huge(uint64_t *s) /* around 2^63 */
{
    return (1ull << 63) - (1ull << 40) + (dlg_splitmix_next(s) % (1ull << 41));
}
static uint64_t gen_fullrange(uint64_t *s) { return dlg_splitmix_next(s) >> (dlg_splitmix_next(s) % 64); }
static uint64_t gen_lognormal(uint64_t *s) /* heavy tail: exp(N(13, 2^2)) ns */
{
    double z = sqrt(-2.0 * log(unit(s))) * cos(2.0 * M_PI * unit(s));
    double v = exp(13.0 + 2.0 * z);
    return v > 1e18 ? (uint64_t)1e18 : (uint64_t)v;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static const double pcts[] = {0, 0.1, 1, 5, 10, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 99.99, 100};

/* Exact nearest rank in integers: every p above has at most two decimals,
 * so rank = ceil(p * 100 * n / 10000) (a float product would carry 99.9's
 * rounding into the rank). */
static uint64_t nearest_rank(const uint64_t *sorted, size_t n, double p)
{
    uint64_t hundredths = (uint64_t)llround(p * 100.0);
    size_t rank = (size_t)((hundredths * n + 9999) / 10000);
    return sorted[(rank < 1 ? 1 : rank > n ? n : rank) - 1];
}

static void check_distribution(gen_fn gen, uint64_t seed)
{
    uint64_t *v = malloc(N * sizeof *v);
    assert_non_null(v);
    dlg_histogram *h = dlg_hist_new();
    assert_non_null(h);
    long double sum = 0;
    for (size_t i = 0; i < N; i++) {
        v[i] = gen(&seed);
        dlg_hist_record(h, v[i]);
        sum += (long double)v[i];
    }
    long double mean = sum / N, ss = 0;
    for (size_t i = 0; i < N; i++)
        ss += ((long double)v[i] - mean) * ((long double)v[i] - mean);
    double sd = (double)sqrtl(ss / (N - 1));
    qsort(v, N, sizeof *v, cmp_u64);

    assert_int_equal(dlg_hist_count(h), N);
    assert_true(dlg_hist_min(h) == v[0]);
    assert_true(dlg_hist_max(h) == v[N - 1]);
    assert_true(fabs(dlg_hist_mean(h) - (double)mean) <= 1e-12 * (double)mean + 1e-12);
    assert_true(fabs(dlg_hist_stddev(h) - sd) <= 1e-6 * sd + 1e-9);

    double tol = dlg_hist_relative_error();
    for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
        double want = (double)nearest_rank(v, N, pcts[i]);
        double got = dlg_hist_percentile(h, pcts[i]);
        if (!(fabs(got - want) <= tol * want * (1 + 1e-12)))
            fail_msg("p%g: got %.17g want %.17g (rel %.3g > %.3g)", pcts[i], got, want,
                     fabs(got - want) / want, tol);
    }
    dlg_hist_free(h);
    free(v);
}

static void test_uniform(void **st) { check_distribution(gen_uniform, 1); }
static void test_lognormal(void **st) { check_distribution(gen_lognormal, 2); }
static void test_constant(void **st)
{
    check_distribution(gen_constant, 3);
    dlg_histogram *h = dlg_hist_new();
    for (int i = 0; i < 100; i++)
        dlg_hist_record(h, 123456789u);
    assert_true(dlg_hist_stddev(h) == 0.0);
    assert_true(dlg_hist_percentile(h, 50) == 123456789.0); /* clamped to [min, max] */
    dlg_hist_free(h);
}
static void test_small(void **st) { check_distribution(gen_small, 4); }
static void test_huge(void **st) { check_distribution(gen_huge, 5); }
static void test_fullrange(void **st) { check_distribution(gen_fullrange, 6); }

/* Every power-of-two edge: the middle of {0, v, max} is v's bucket midpoint. */
static void test_bucket_edges(void **st)
{
    dlg_histogram *h = dlg_hist_new();
    double tol = dlg_hist_relative_error();
    assert_true(tol > 0 && tol <= 0.01);
    for (int k = 0; k < 64; k++) {
        uint64_t base = 1ull << k;
        uint64_t cand[] = {base - 1, base, base + 1, base + base / 2, base * 2 - 1};
        for (size_t c = 0; c < 5; c++) {
            uint64_t v = cand[c];
            if (v == 0 || v == UINT64_MAX)
                continue;
            dlg_hist_reset(h);
            dlg_hist_record(h, 0);
            dlg_hist_record(h, v);
            dlg_hist_record(h, UINT64_MAX);
            double got = dlg_hist_percentile(h, 50);
            if (!(fabs(got - (double)v) <= tol * (double)v * (1 + 1e-12)))
                fail_msg("v=%llu: p50 %.17g", (unsigned long long)v, got);
            if (v < 256)
                assert_true(got == (double)v); /* the linear range is exact */
        }
    }
    assert_true(dlg_hist_min(h) == 0);
    assert_true(dlg_hist_max(h) == UINT64_MAX);
    assert_true(dlg_hist_percentile(h, 100) == (double)UINT64_MAX);
    assert_true(dlg_hist_percentile(h, 0) == 0.0);
    dlg_hist_free(h);
}

static void test_percentile_args(void **st)
{
    dlg_histogram *h = dlg_hist_new();
    assert_true(dlg_hist_percentile(h, 50) == 0.0); /* empty */
    assert_true(dlg_hist_mean(h) == 0.0 && dlg_hist_stddev(h) == 0.0);
    assert_true(dlg_hist_min(h) == 0 && dlg_hist_max(h) == 0);
    for (uint64_t i = 1; i <= 10; i++)
        dlg_hist_record(h, i);
    assert_true(dlg_hist_percentile(h, -5) == 1.0);
    assert_true(dlg_hist_percentile(h, 250) == 10.0);
    assert_true(isnan(dlg_hist_percentile(h, NAN)));
    assert_true(dlg_hist_percentile(h, 50) == 5.0);  /* rank ceil(5) = 5 */
    assert_true(dlg_hist_percentile(h, 51) == 6.0);  /* rank ceil(5.1) = 6 */
    assert_true(dlg_hist_percentile(h, 10) == 1.0);
    assert_true(fabs(dlg_hist_mean(h) - 5.5) < 1e-15);
    assert_true(fabs(dlg_hist_stddev(h) - sqrt(110.0 / 12.0)) < 1e-12); /* var of 1..10 */
    dlg_hist_free(h);
}

/* p / 100 * n is not a whole number in floating point for p = 99.9 and
 * n = 1000 (999.0000000000001): the rank is still 999, not 1000, so one
 * slow step in a thousand is p99.9's max, not its p99.9. */
static void test_rank_decimal_percentiles(void **st)
{
    dlg_histogram *h = dlg_hist_new();
    static const uint64_t counts[] = {1000, 2000, 10000, 20000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint64_t n = counts[c], slow = n / 1000; /* exactly 0.1% slow steps */
        dlg_hist_reset(h);
        for (uint64_t i = 0; i < n; i++)
            dlg_hist_record(h, i < n - slow ? 100 : 200);
        if (dlg_hist_percentile(h, 99.9) != 100.0)
            fail_msg("n=%llu: p99.9 %g, want 100 (rank %llu)", (unsigned long long)n,
                     dlg_hist_percentile(h, 99.9), (unsigned long long)(n - slow));
        assert_true(dlg_hist_percentile(h, 99.91) == 200.0); /* the next rank */
        assert_true(dlg_hist_percentile(h, 100) == 200.0);
    }
    dlg_hist_reset(h); /* and at the bottom: p0.1 of 1000 is rank 1 */
    for (uint64_t i = 1; i <= 1000; i++)
        dlg_hist_record(h, i <= 2 ? i : 255);
    assert_true(dlg_hist_percentile(h, 0.1) == 1.0);
    assert_true(dlg_hist_percentile(h, 0.2) == 2.0);
    dlg_hist_free(h);
}

static void test_merge(void **st)
{
    dlg_histogram *all = dlg_hist_new(), *a = dlg_hist_new(), *b = dlg_hist_new(),
                  *m = dlg_hist_new();
    uint64_t seed = 7;
    for (int i = 0; i < N; i++) {
        uint64_t v = i % 3 ? gen_lognormal(&seed) : gen_uniform(&seed);
        dlg_hist_record(all, v);
        dlg_hist_record(i % 2 ? a : b, v);
    }
    dlg_hist_merge(m, a); /* into an empty one */
    dlg_hist_merge(m, b);
    dlg_histogram *empty = dlg_hist_new();
    dlg_hist_merge(m, empty); /* a no-op */
    assert_int_equal(dlg_hist_count(m), dlg_hist_count(all));
    assert_true(dlg_hist_min(m) == dlg_hist_min(all));
    assert_true(dlg_hist_max(m) == dlg_hist_max(all));
    assert_true(dlg_hist_mean(m) == dlg_hist_mean(all)); /* both from exact sums */
    assert_true(fabs(dlg_hist_stddev(m) - dlg_hist_stddev(all)) <= 1e-9 * dlg_hist_stddev(all));
    for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
        assert_true(dlg_hist_percentile(m, pcts[i]) == dlg_hist_percentile(all, pcts[i]));
    dlg_hist_free(all);
    dlg_hist_free(a);
    dlg_hist_free(b);
    dlg_hist_free(m);
    dlg_hist_free(empty);
}

/* The sum form (an allreduce's merge): three parts, one empty, values
 * near 2^63 so the exact sum needs its high word; the words summed as an
 * allreduce would give what dlg_hist_merge gives, to the bit. */
static void test_merge_by_sum(void **st)
{
    enum { PARTS = 3 };
    dlg_histogram *part[PARTS], *merged = dlg_hist_new(), *from = dlg_hist_new();
    size_t nw = dlg_hist_sum_words(PARTS);
    int64_t *sum = calloc(nw, sizeof *sum), *w = malloc(nw * sizeof *w);
    assert_non_null(sum);
    assert_non_null(w);
    uint64_t seed = 11;
    for (int k = 0; k < PARTS; k++) {
        part[k] = dlg_hist_new();
        for (int i = 0; k != 1 && i < N / 4; i++) /* part 1 stays empty */
            dlg_hist_record(part[k], k ? gen_huge(&seed) : gen_lognormal(&seed));
        dlg_hist_merge(merged, part[k]);
        dlg_hist_to_sum(part[k], (size_t)k, PARTS, w);
        for (size_t j = 0; j < nw; j++)
            sum[j] += w[j];
    }
    dlg_hist_from_sum(from, sum, PARTS);
    assert_int_equal(dlg_hist_count(from), N / 2);
    assert_true(dlg_hist_min(from) == dlg_hist_min(merged));
    assert_true(dlg_hist_max(from) == dlg_hist_max(merged));
    assert_true(dlg_hist_mean(from) == dlg_hist_mean(merged)); /* the 128-bit sum came through */
    assert_true(dlg_hist_mean(from) > 1e18);
    assert_true(dlg_hist_stddev(from) == dlg_hist_stddev(merged));
    for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
        assert_true(dlg_hist_percentile(from, pcts[i]) == dlg_hist_percentile(merged, pcts[i]));
    /* nothing recorded anywhere: an empty histogram */
    memset(sum, 0, nw * sizeof *sum);
    dlg_hist_to_sum(part[1], 0, 1, sum);
    dlg_hist_from_sum(from, sum, 1);
    assert_int_equal(dlg_hist_count(from), 0);
    assert_true(dlg_hist_max(from) == 0 && dlg_hist_percentile(from, 50) == 0);
    for (int k = 0; k < PARTS; k++)
        dlg_hist_free(part[k]);
    dlg_hist_free(merged);
    dlg_hist_free(from);
    free(sum);
    free(w);
}

static void test_reset(void **st)
{
    dlg_histogram *h = dlg_hist_new();
    for (uint64_t i = 0; i < 1000; i++)
        dlg_hist_record(h, i * 1000);
    dlg_hist_reset(h);
    assert_int_equal(dlg_hist_count(h), 0);
    assert_true(dlg_hist_min(h) == 0 && dlg_hist_max(h) == 0);
    assert_true(dlg_hist_mean(h) == 0 && dlg_hist_percentile(h, 99) == 0);
    dlg_hist_record(h, 5000);
    dlg_hist_record(h, 7000);
    assert_int_equal(dlg_hist_count(h), 2);
    assert_true(dlg_hist_min(h) == 5000 && dlg_hist_max(h) == 7000);
    assert_true(dlg_hist_mean(h) == 6000.0);
    assert_true(fabs(dlg_hist_stddev(h) - sqrt(2e6)) < 1e-6);
    assert_true(fabs(dlg_hist_percentile(h, 50) - 5000) <= 5000 * dlg_hist_relative_error());
    assert_true(dlg_hist_percentile(h, 100) == 7000.0);
    dlg_hist_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform),      cmocka_unit_test(test_lognormal),
        cmocka_unit_test(test_constant),     cmocka_unit_test(test_small),
        cmocka_unit_test(test_huge),         cmocka_unit_test(test_fullrange),
        cmocka_unit_test(test_bucket_edges), cmocka_unit_test(test_percentile_args),
        cmocka_unit_test(test_rank_decimal_percentiles),
        cmocka_unit_test(test_merge),        cmocka_unit_test(test_merge_by_sum),
        cmocka_unit_test(test_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
