/* The cpu-bf16 LSTM's own fp32 -> bf16 rounding (cpu_lstm_cell.c): round
 * to nearest even, Inf stays Inf, and every NaN stays a NaN (its rounding
 * carried some payloads into the exponent, +Inf, or the sign, -0).  The
 * loops are compiled for AVX-512: elsewhere the test skips (77). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cpu/cpu_lstm_gemm.h"

#include <stdio.h>
#include <string.h>

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_rounding(void **st)
{
    (void)st;
    /* {input bits, expected bf16} */
    static const uint32_t cases[][2] = {
        {0x3f800000u, 0x3f80u}, /* 1 */
        {0x3f808000u, 0x3f80u}, /* a tie, to even (down) */
        {0x3f818000u, 0x3f82u}, /* a tie, to even (up) */
        {0x3f808001u, 0x3f81u}, /* above the tie */
        {0xbf80ffffu, 0xbf81u}, /* negative, up in magnitude */
        {0x7f7fffffu, 0x7f80u}, /* FLT_MAX rounds to Inf */
        {0x7f800000u, 0x7f80u}, /* Inf */
        {0xff800000u, 0xff80u}, /* -Inf */
        {0x00000001u, 0x0000u}, /* the smallest subnormal */
    };
    enum { N = sizeof cases / sizeof cases[0] };
    float src[N];
    uint16_t dst[N];
    for (int i = 0; i < N; i++)
        src[i] = from_bits(cases[i][0]);
    cpu_lstm_to_bf16(src, dst, N);
    for (int i = 0; i < N; i++)
        if (dst[i] != cases[i][1])
            fail_msg("0x%08x -> 0x%04x, want 0x%04x", cases[i][0], dst[i], cases[i][1]);
}

static void test_nan_stays_nan(void **st)
{
    (void)st;
    /* quiet and signalling NaNs of both signs, payloads low and high */
    static const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7f807fffu,
                                    0x7fffffffu, 0xffffffffu, 0xff800001u, 0x7fff8000u};
    enum { N = sizeof nans / sizeof nans[0] };
    float src[N];
    uint16_t dst[N];
    for (int i = 0; i < N; i++)
        src[i] = from_bits(nans[i]);
    cpu_lstm_to_bf16(src, dst, N);
    for (int i = 0; i < N; i++) {
        bool nan = (dst[i] & 0x7f80u) == 0x7f80u && (dst[i] & 0x7fu) != 0;
        bool sign = (dst[i] & 0x8000u) == ((nans[i] >> 16) & 0x8000u);
        if (!nan || !sign)
            fail_msg("NaN 0x%08x -> 0x%04x, not a NaN of its sign", nans[i], dst[i]);
    }
}

int main(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512vl") ||
        !__builtin_cpu_supports("fma")) {
        printf("no AVX-512: the cpu-bf16 loops do not run here\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rounding),
                                       cmocka_unit_test(test_nan_stays_nan)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
