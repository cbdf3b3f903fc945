/* Channels-last (NHWC) storage of the half backends, the parts that run
 * without a GPU (core/nn/cuda/cuda_nhwc.c): which tensors are stored NHWC,
 * the index mapping, the host conversions behind dlg_net_read/write of
 * NHWC half tensors, the layout switch, and the batch-norm path tiers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cuda/cuda_half_cvt.h"
#include "cuda/cuda_nhwc.h"

#include <stdlib.h>
#include <string.h>

static void test_dims(void **st)
{
    (void)st;
    int64_t n, c, s;
    dlg_shape a = {4, {2, 3, 4, 5}};
    assert_true(dlg_nhwc_dims(&a, &n, &c, &s));
    assert_int_equal(n, 2);
    assert_int_equal(c, 3);
    assert_int_equal(s, 20);
    assert_true(dlg_nhwc_moves(&a));
    dlg_shape fc = {2, {6, 10}}; /* fc outputs keep their order */
    assert_false(dlg_nhwc_dims(&fc, &n, &c, &s));
    assert_int_equal(s, 1);
    assert_false(dlg_nhwc_moves(&fc));
    dlg_shape one = {4, {6, 10, 1, 1}}; /* 1x1 maps: NHWC is the NCHW memory */
    assert_true(dlg_nhwc_dims(&one, &n, &c, &s));
    assert_false(dlg_nhwc_moves(&one));
    dlg_shape gray = {4, {2, 1, 7, 7}};
    assert_false(dlg_nhwc_moves(&gray));
    dlg_shape seq = {3, {5, 2, 8}}; /* other ranks stay plain */
    assert_false(dlg_nhwc_dims(&seq, &n, &c, &s));
    assert_false(dlg_nhwc_moves(&seq));
}

static void test_index(void **st)
{
    (void)st;
    /* N=2 C=3 S=4: (n0, c1, s2) is NCHW 6, NHWC 7 */
    assert_int_equal(dlg_nchw_index(0, 1, 2, 3, 4), 6);
    assert_int_equal(dlg_nhwc_index(0, 1, 2, 3, 4), 7);
    /* both are bijections onto 0..N*C*S-1 */
    enum { N = 3, C = 5, S = 7 };
    int seen[2][N * C * S] = {{0}};
    for (int i = 0; i < N; i++)
        for (int k = 0; k < C; k++)
            for (int j = 0; j < S; j++) {
                seen[0][dlg_nchw_index(i, k, j, C, S)]++;
                seen[1][dlg_nhwc_index(i, k, j, C, S)]++;
            }
    for (int i = 0; i < N * C * S; i++) {
        assert_int_equal(seen[0][i], 1);
        assert_int_equal(seen[1][i], 1);
    }
}

/* fp32 NCHW -> 16-bit NHWC lands each value where an independently written
 * 4-d loop says, and back gives the input (the values are on both grids) */
static void check_round_trip(bool fp16)
{
    enum { N = 2, C = 3, H = 4, W = 5, T = N * C * H * W };
    float src[T], back[T];
    uint16_t mid[T];
    for (int i = 0; i < T; i++)
        src[i] = (float)(i % 61) - 30.0f; /* small integers: exact in bf16 and fp16 */
    dlg_half_from_f32_nhwc(fp16, src, mid, N, C, H * W);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    float want = src[((n * C + c) * H + h) * W + w];
                    uint16_t got = mid[((n * H + h) * W + w) * C + c];
                    assert_true((fp16 ? dlg_fp16_to_f32(got) : dlg_bf16_to_f32(got)) == want);
                }
    memset(back, 0, sizeof back);
    dlg_half_to_f32_nchw(fp16, mid, back, N, C, H * W);
    assert_memory_equal(back, src, sizeof src);
}

static void test_host_round_trip(void **st)
{
    (void)st;
    check_round_trip(false);
    check_round_trip(true);
}

/* the conversion rounds as the plain one does (only the order differs) */
static void test_host_rounding(void **st)
{
    (void)st;
    enum { N = 1, C = 2, S = 3 };
    float src[6] = {1.00390625f, -3.0e-8f, 70000.0f, 0.1f, 1e-3f, -2.5f};
    uint16_t a[6], b[6];
    for (int f = 0; f < 2; f++) {
        dlg_half_from_f32_nhwc(f, src, a, N, C, S);
        dlg_half_from_f32_n(f, src, b, 6);
        for (int k = 0; k < C; k++)
            for (int j = 0; j < S; j++)
                assert_int_equal(a[dlg_nhwc_index(0, k, j, C, S)], b[dlg_nchw_index(0, k, j, C, S)]);
    }
}

static void test_wanted(void **st)
{
    (void)st;
    assert_true(dlg_nhwc_wanted(true, false));   /* bf16/fp16 default: NHWC */
    assert_false(dlg_nhwc_wanted(true, true));   /* half_nchw */
    assert_false(dlg_nhwc_wanted(false, false)); /* fp32/tf32: NCHW */
    assert_false(dlg_nhwc_wanted(false, true));
}

static void test_bn_tiers(void **st)
{
    (void)st;
    /* first tier: Ex only for NHWC training with answered queries */
    assert_int_equal(dlg_bn_tier_first(true, true, true, true, true), DLG_BN_EX_ACT);
    assert_int_equal(dlg_bn_tier_first(true, true, true, true, false), DLG_BN_EX);
    assert_int_equal(dlg_bn_tier_first(true, true, false, true, false), DLG_BN_EX);
    assert_int_equal(dlg_bn_tier_first(true, true, false, true, true), DLG_BN_EX);
    assert_int_equal(dlg_bn_tier_first(true, true, true, false, true), DLG_BN_PLAIN);
    assert_int_equal(dlg_bn_tier_first(true, false, true, true, true), DLG_BN_PLAIN);
    assert_int_equal(dlg_bn_tier_first(false, true, true, true, true), DLG_BN_PLAIN);
    /* forward refusals walk down one tier at a time and end at fp32 */
    dlg_bn_tier t = DLG_BN_EX_ACT;
    const dlg_bn_tier fwd[] = {DLG_BN_EX, DLG_BN_PLAIN, DLG_BN_F32, DLG_BN_F32};
    for (int i = 0; i < 4; i++) {
        t = dlg_bn_tier_after_refusal(t, false);
        assert_int_equal(t, fwd[i]);
    }
    /* a refused Ex backward skips Ex (the reserve space is the forward's) */
    assert_int_equal(dlg_bn_tier_after_refusal(DLG_BN_EX_ACT, true), DLG_BN_PLAIN);
    assert_int_equal(dlg_bn_tier_after_refusal(DLG_BN_EX, true), DLG_BN_PLAIN);
    assert_int_equal(dlg_bn_tier_after_refusal(DLG_BN_PLAIN, true), DLG_BN_F32);
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            assert_string_not_equal(dlg_bn_tier_name((dlg_bn_tier)i), dlg_bn_tier_name((dlg_bn_tier)j));
}

/* the plan option reaches every backend; ref ignores it */
static void test_plan_option(void **st)
{
    (void)st;
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "nchw"), 0);
    int x = dlg_input(net, "x", 2, 3, 4, 4);
    int y = dlg_relu(net, "r", x);
    dlg_plan_opts o = {.backend = "ref", .seed = 1, .half_nchw = true};
    assert_int_equal(dlg_net_plan(net, &o), 0);
    float in[96], out[96];
    for (int i = 0; i < 96; i++)
        in[i] = (float)i - 48;
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, in, 96), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, y, DLG_DATA, out, 96), 0);
    for (int i = 0; i < 96; i++)
        assert_true(out[i] == (in[i] > 0 ? in[i] : 0));
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dims),           cmocka_unit_test(test_index),
        cmocka_unit_test(test_host_round_trip), cmocka_unit_test(test_host_rounding),
        cmocka_unit_test(test_wanted),         cmocka_unit_test(test_bn_tiers),
        cmocka_unit_test(test_plan_option)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
