/* cpu_grad_sum (core/nn/cpu/cpu_grad_sum.c), the one-pass backward of an
 * add that took over the split after it: both input gradients equal the
 * sum of the split's output gradients, masked by the ReLU's output, on
 * tensors below and past the size from which the stores are
 * non-temporal, with a tail that is not a whole vector, and with one
 * input gradient not wanted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cpu/cpu_grad_sum.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *buffer(int64_t n, unsigned seed)
{
    float *p = aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = (float)rand_r(&seed) / (float)RAND_MAX - 0.5f;
    return p;
}

static void check(int64_t n, int nparts, bool relu, bool both)
{
    float *g[3], *y = buffer(n, 7), *dx0 = buffer(n, 8), *dx1 = buffer(n, 9);
    dlg_tensor t[3];
    dlg_tensor *parts[3];
    for (int p = 0; p < nparts; p++) {
        g[p] = buffer(n, 10 + (unsigned)p);
        memset(&t[p], 0, sizeof t[p]);
        t[p].diff = g[p];
        parts[p] = &t[p];
    }
    float *keep = malloc((size_t)n * sizeof(float));
    assert_non_null(keep);
    memcpy(keep, dx1, (size_t)n * sizeof(float));
    cpu_grad_sum(dx0, both ? dx1 : NULL, parts, nparts, relu ? y : NULL, n);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float want = g[0][i];
        for (int p = 1; p < nparts; p++)
            want += g[p][i];
        if (relu && !(y[i] > 0))
            want = 0;
        bad += dx0[i] != want || (both ? dx1[i] != want : dx1[i] != keep[i]);
    }
    printf("  n %lld, %d parts%s%s: %lld wrong\n", (long long)n, nparts, relu ? ", relu" : "",
           both ? "" : ", one gradient", (long long)bad);
    assert_int_equal(bad, 0);
    for (int p = 0; p < nparts; p++)
        free(g[p]);
    free(y);
    free(dx0);
    free(dx1);
    free(keep);
}

static void test_sums(void **st)
{
    check(1000, 2, true, true);            /* cached stores, a 0-vector tail */
    check(1003, 3, false, true);           /* a 3-float tail */
    check((1 << 20) + 5, 2, true, true);   /* non-temporal stores, a tail */
    check((1 << 20) + 8, 2, true, false);  /* only the first gradient */
    check((3 << 20) + 1, 3, false, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sums)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
