/* bf16 / fp16 <-> fp32 on the host (cuda_half_cvt.h). */
#include "cuda_half_cvt.h"

#include <string.h>

uint16_t dlg_bf16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
        return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN, sign kept */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float dlg_bf16_to_f32(uint16_t v)
{
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

void dlg_bf16_from_f32_n(const float *src, uint16_t *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = dlg_bf16_from_f32(src[i]);
}

void dlg_bf16_to_f32_n(const uint16_t *src, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = dlg_bf16_to_f32(src[i]);
}

/* Shift right by s with round to nearest even (s >= 1). */
static uint32_t shift_rne(uint32_t m, int s)
{
    if (s > 31)
        return 0;
    uint32_t q = m >> s, rem = m & ((1u << s) - 1u), half = 1u << (s - 1);
    return q + (rem > half || (rem == half && (q & 1u)));
}

uint16_t dlg_fp16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    int32_t e = (int32_t)((u >> 23) & 0xffu);
    uint32_t m = u & 0x007fffffu;
    if (e == 0xff) /* inf, or NaN made quiet with its top payload bits */
        return (uint16_t)(sign | 0x7c00u | (m ? 0x0200u | (m >> 13) : 0u));
    int32_t he = e - 127 + 15; /* binary16 biased exponent */
    if (he >= 0x1f)
        return (uint16_t)(sign | 0x7c00u);
    if (he <= 0) { /* subnormal (or zero): value = m' * 2^-24 */
        if (e == 0)
            return sign; /* fp32 zero or subnormal: far below 2^-25 */
        return (uint16_t)(sign | shift_rne(m | 0x00800000u, 14 - he));
    }
    /* normal: the carry of the rounding may step into the exponent, and
     * from the largest exponent into infinity, which is the right answer */
    return (uint16_t)(sign | (((uint32_t)he << 10) + shift_rne(m, 13)));
}

float dlg_fp16_to_f32(uint16_t v)
{
    uint32_t sign = (uint32_t)(v & 0x8000u) << 16, e = (v >> 10) & 0x1fu, m = v & 0x3ffu, u;
    if (e == 0x1f)
        u = sign | 0x7f800000u | (m << 13);
    else if (e)
        u = sign | ((e - 15 + 127) << 23) | (m << 13);
    else if (!m)
        u = sign;
    else { /* subnormal: normalise */
        int32_t x = -1;
        do {
            m <<= 1;
            x++;
        } while (!(m & 0x400u));
        u = sign | ((uint32_t)(127 - 15 - x) << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

void dlg_half_from_f32_n(bool fp16, const float *src, uint16_t *dst, int64_t n)
{
    if (!fp16) {
        dlg_bf16_from_f32_n(src, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = dlg_fp16_from_f32(src[i]);
}

void dlg_half_to_f32_n(bool fp16, const uint16_t *src, float *dst, int64_t n)
{
    if (!fp16) {
        dlg_bf16_to_f32_n(src, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = dlg_fp16_to_f32(src[i]);
}
