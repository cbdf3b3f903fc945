/* The kernel workloads through the mock host: gemm's result is checked
 * against a double-precision reference product for every transposition
 * (max_abs_error within fp32 rounding), and a conv shape too large for
 * memory is one clear error for every algo, not an overflowed size, as is
 * a filter larger than the padded input. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "workload_run.h"

static void gemm_known_answer(const char *ta, const char *tb)
{
    const char *ov[] = {"m=37", "n=53", "k=301", ta, tb, NULL};
    wr_result r;
    wr_run("kernels.so", "gemm", ov, 2, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("%s %s: setup %d step %d: %s", ta, tb, r.setup_rc, r.step_rc, r.error);
    const char *e = wr_field(&r, "max_abs_error");
    if (!e)
        fail_msg("%s %s: no max_abs_error field (result not checked)", ta, tb);
    double err = wr_double(&r, "max_abs_error");
    /* entries are sums of 301 products of values in [-0.5, 0.5) */
    assert_true(err >= 0 && err < 1e-4);
    assert_true(wr_double(&r, "flops_per_item") == 2.0 * 37 * 53 * 301);
}

static void test_gemm_checked(void **st)
{
    (void)st;
    gemm_known_answer("transa=false", "transb=false");
    gemm_known_answer("transa=true", "transb=false");
    gemm_known_answer("transa=false", "transb=true");
    gemm_known_answer("transa=true", "transb=true");
}

/* 10^5 x 10^5 channels x 10^5 x 10^5 pixels: 4e20 bytes, past int64 */
static void huge_conv(const char *algo, const char *pass)
{
    const char *ov[] = {"n=100000", "c=100000", "k=8", "h=100000", "w=100000", algo, pass, NULL};
    wr_result r;
    wr_run("kernels.so", "conv", ov, 1, &r);
    if (r.setup_rc == 0)
        fail_msg("%s %s: a 4e20-byte conv was set up", algo, pass);
    /* 4 (10^20 + 8 x 9 x 10^5 + 8 x 10^15) bytes, and the limit it passes */
    if (!strstr(r.error, "needs 400032000000.0 GB") || !strstr(r.error, "64 GB limit"))
        fail_msg("%s %s: unclear error: %s", algo, pass, r.error);
    assert_int_equal(r.errors, 1);
}

static void test_conv_too_large(void **st)
{
    (void)st;
    huge_conv("algo=gemm", "pass=bwd_filter");
    huge_conv("algo=winograd", "pass=fwd");
    huge_conv("algo=direct", "pass=fwd");
}

/* the error names the padded size the filter is compared with */
static void test_conv_filter_too_large(void **st)
{
    (void)st;
    const char *ov[] = {"h=2", "w=3", "r=7", "s=5", "pad=1", NULL};
    wr_result r;
    wr_run("kernels.so", "conv", ov, 1, &r);
    assert_int_not_equal(r.setup_rc, 0);
    if (!strstr(r.error, "r, s = 7, 5: filter larger than the padded 4x5 input"))
        fail_msg("unclear error: %s", r.error);
    assert_int_equal(r.errors, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_checked),
        cmocka_unit_test(test_conv_too_large),
        cmocka_unit_test(test_conv_filter_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
