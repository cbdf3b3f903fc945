/* Host-side pieces of the half-storage CUDA backends that run without a
 * GPU: the fp16 <-> fp32 conversion behind dlg_net_read/write of
 * cuda-fp16:N, and the dynamic loss-scale rule (cuda_scaler.h), the same
 * code the device runs after each fp16 SGD step. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cuda/cuda_half_cvt.h"
#include "cuda/cuda_scaler.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static float f_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_fp16_known(void **st)
{
    (void)st;
    assert_int_equal(dlg_fp16_from_f32(1.0f), 0x3c00);
    assert_int_equal(dlg_fp16_from_f32(-2.0f), 0xc000);
    assert_int_equal(dlg_fp16_from_f32(0.1f), 0x2e66);
    assert_int_equal(dlg_fp16_from_f32(65504.0f), 0x7bff);   /* largest finite */
    assert_int_equal(dlg_fp16_from_f32(65519.99f), 0x7bff);  /* below the tie */
    assert_int_equal(dlg_fp16_from_f32(65520.0f), 0x7c00);   /* tie rounds to even: inf */
    assert_int_equal(dlg_fp16_from_f32(FLT_MAX), 0x7c00);
    assert_int_equal(dlg_fp16_from_f32(-INFINITY), 0xfc00);
    assert_int_equal(dlg_fp16_from_f32(ldexpf(1, -14)), 0x0400); /* smallest normal */
    assert_int_equal(dlg_fp16_from_f32(ldexpf(1, -24)), 0x0001); /* smallest subnormal */
    assert_int_equal(dlg_fp16_from_f32(ldexpf(1, -25)), 0x0000); /* tie: even is 0 */
    assert_int_equal(dlg_fp16_from_f32(ldexpf(3, -25)), 0x0002); /* tie: 1.5 -> 2 */
    assert_int_equal(dlg_fp16_from_f32(nextafterf(ldexpf(1, -25), 1)), 0x0001);
    assert_int_equal(dlg_fp16_from_f32(ldexpf(1023, -24) + ldexpf(1, -25)), 0x0400); /* carry */
    assert_int_equal(dlg_fp16_from_f32(1e-10f), 0x0000);
    assert_int_equal(dlg_fp16_from_f32(-0.0f), 0x8000);
    assert_int_equal(dlg_fp16_from_f32(f_of(0x00000001u)), 0x0000); /* fp32 subnormal */
    assert_true(dlg_fp16_to_f32(0x3c00) == 1.0f);
    assert_true(dlg_fp16_to_f32(0x7bff) == 65504.0f);
    assert_true(dlg_fp16_to_f32(0x0001) == ldexpf(1, -24));
    assert_true(dlg_fp16_to_f32(0x03ff) == ldexpf(1023, -24));
    assert_true(isinf(dlg_fp16_to_f32(0x7c00)) && dlg_fp16_to_f32(0xfc00) < 0);
    assert_true(isnan(dlg_fp16_to_f32(dlg_fp16_from_f32(NAN))));
    assert_true(isnan(dlg_fp16_to_f32(dlg_fp16_from_f32(f_of(0x7f800001u))))); /* stays NaN */
}

/* Every fp16 value round-trips; every midpoint between neighbours rounds
 * to the even one, and just off it to the nearer one. */
static void test_fp16_exhaustive(void **st)
{
    (void)st;
    int bad = 0;
    for (uint32_t v = 0; v < 0x10000u; v++) {
        float f = dlg_fp16_to_f32((uint16_t)v);
        if (!isnan(f) && dlg_fp16_from_f32(f) != v)
            bad++;
    }
    assert_int_equal(bad, 0);
    for (uint32_t h = 0; h < 0x7bffu; h++) {
        for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u) {
            float a = dlg_fp16_to_f32((uint16_t)(h | sign)),
                  b = dlg_fp16_to_f32((uint16_t)((h + 1) | sign));
            float mid = (a + b) / 2; /* exact: 11 significant bits + 1 */
            uint16_t even = (uint16_t)(((h & 1u) ? h + 1 : h) | sign);
            bad += dlg_fp16_from_f32(mid) != even;
            bad += dlg_fp16_from_f32(nextafterf(mid, a)) != (uint16_t)(h | sign);
            bad += dlg_fp16_from_f32(nextafterf(mid, b)) != (uint16_t)((h + 1) | sign);
        }
    }
    assert_int_equal(bad, 0);
#ifdef __FLT16_MAX__
    /* and agrees with the compiler's own conversion on random fp32 bits */
    uint64_t x = 12345;
    for (int i = 0; i < 200000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        float f = f_of((uint32_t)(x >> 32));
        if (isnan(f))
            continue;
        _Float16 h = (_Float16)f;
        uint16_t want;
        memcpy(&want, &h, sizeof want);
        bad += dlg_fp16_from_f32(f) != want;
    }
    assert_int_equal(bad, 0);
#endif
}

static void test_half_n(void **st)
{
    (void)st;
    float src[4] = {0.5f, -0.0f, 1e-3f, 70000.f}, back[4];
    uint16_t mid[4];
    dlg_half_from_f32_n(true, src, mid, 4);
    assert_int_equal(mid[0], 0x3800);
    assert_int_equal(mid[1], 0x8000);
    assert_int_equal(mid[3], 0x7c00); /* fp16 overflows where bf16 does not */
    dlg_half_to_f32_n(true, mid, back, 4);
    assert_true(back[0] == 0.5f && back[1] == 0.0f && signbit(back[1]));
    assert_true(fabsf(back[2] - 1e-3f) <= 1e-3f / 2048);
    dlg_half_from_f32_n(false, src, mid, 4);
    assert_int_equal(mid[0], 0x3f00); /* bf16 */
    dlg_half_to_f32_n(false, mid, back, 4);
    assert_true(back[0] == 0.5f && back[3] == 70144.f);
}

static void steps(dlg_scaler *s, int n, int overflow)
{
    for (int i = 0; i < n; i++) {
        s->found_inf = overflow;
        dlg_scaler_update(s);
        assert_int_equal(s->found_inf, 0); /* the update clears the flag */
    }
}

/* GradScaler's rule: start at 2^16, halve and reset on an overflow, double
 * after 2000 clean steps in a row, never to infinity. */
static void test_scaler_rule(void **st)
{
    (void)st;
    dlg_scaler s;
    memset(&s, 0xff, sizeof s);
    dlg_scaler_init(&s);
    assert_true(s.scale == 65536.f);
    assert_int_equal(s.found_inf, 0);
    assert_int_equal(s.good, 0);
    assert_int_equal(s.skipped, 0);
    steps(&s, 1, 1);
    assert_true(s.scale == 32768.f);
    assert_int_equal(s.skipped, 1);
    steps(&s, 1999, 0);
    assert_true(s.scale == 32768.f);
    assert_int_equal(s.good, 1999);
    steps(&s, 1, 0); /* the 2000th clean step in a row */
    assert_true(s.scale == 65536.f);
    assert_int_equal(s.good, 0);
    /* an overflow restarts the count */
    steps(&s, 1500, 0);
    steps(&s, 1, 1);
    assert_true(s.scale == 32768.f);
    steps(&s, 1999, 0);
    assert_true(s.scale == 32768.f);
    steps(&s, 1, 0);
    assert_true(s.scale == 65536.f);
    /* three overflows in a row: three halvings, three skipped steps */
    steps(&s, 3, 1);
    assert_true(s.scale == 8192.f);
    assert_int_equal(s.skipped, 5);
    /* growth stops short of infinity; the count still restarts */
    s.scale = ldexpf(1, 127);
    s.good = 0;
    steps(&s, 2000, 0);
    assert_true(s.scale == ldexpf(1, 127));
    assert_int_equal(s.good, 0);
    /* a long clean run: one doubling per 2000 steps */
    s.scale = 1.f;
    steps(&s, 3 * 2000 + 7, 0);
    assert_true(s.scale == 8.f);
    assert_int_equal(s.good, 7);
    assert_int_equal(s.skipped, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp16_known), cmocka_unit_test(test_fp16_exhaustive),
        cmocka_unit_test(test_half_n), cmocka_unit_test(test_scaler_rule)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
