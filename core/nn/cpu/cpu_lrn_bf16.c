/* Across-channel LRN over nhwc bf16 activations (cpu_lrn_bf16.h).  Each
 * thread takes whole rows (one pixel's C channels); a row's squares, and
 * backward its dy x s^(-b-1), go into an fp32 buffer with size/2 zeros on
 * either side, so that a window sum is size unaligned loads. */
#include "cpu_lrn_bf16.h"

#include "cpu_bf16_simd.h"

#define MAX_HALF 7 /* size <= 15 */
#define PAD 16     /* the buffers' zeros either side: >= MAX_HALF, whole vectors */

bool cpu_lrn_bf16_supported(int64_t C, int size, float beta)
{
    return beta == 0.75f && size % 2 == 1 && size / 2 <= MAX_HALF && C > 0 && C <= CPU_LRN_BF16_MAX_C;
}

/* a^-1/2: the 14-bit estimate and one Newton step (about 2^-27 off) */
BF16_TARGET static inline __m512 rsqrt(__m512 a)
{
    __m512 y = _mm512_rsqrt14_ps(a);
    __m512 t = _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), a), _mm512_mul_ps(y, y), _mm512_set1_ps(1.5f));
    return _mm512_mul_ps(y, t);
}

/* s^-0.75 (= r^2 q with r = s^-1/2, q = r^-1/2 = s^1/4), and s^-1 in *inv:
 * FMAs rather than square roots and divisions, which made backward
 * slower than oneDNN's */
BF16_TARGET static inline __m512 pow_m075(__m512 s, __m512 *inv)
{
    __m512 r = rsqrt(s), rr = _mm512_mul_ps(r, r);
    if (inv)
        *inv = rr;
    return _mm512_mul_ps(rr, rsqrt(r));
}

/* buf[PAD + c] = a[c] * b[c] (b NULL: a[c]^2) for the row's C channels,
 * zeros around; a, b widened from bf16 */
BF16_TARGET static void products(const cpu_lrn_shape *s, const uint16_t *a, const uint16_t *b, float *buf)
{
    const int64_t C = s->C;
    for (int64_t c = 0; c < PAD; c += 16) {
        _mm512_storeu_ps(buf + c, _mm512_setzero_ps());
        _mm512_storeu_ps(buf + PAD + (C + 15) / 16 * 16 + c, _mm512_setzero_ps());
    }
    for (int64_t c = 0; c < C; c += 16) {
        __mmask16 m = bf16_lanes(C - c);
        __m512 u = bf16_widen(m, a + c);
        _mm512_storeu_ps(buf + PAD + c, _mm512_mul_ps(u, b ? bf16_widen(m, b + c) : u));
    }
}

/* The window sum around channels c .. c + 15 */
BF16_TARGET static inline __m512 window(const float *buf, int64_t c, int size)
{
    const float *p = buf + PAD + c - size / 2;
    __m512 sum = _mm512_loadu_ps(p);
    for (int o = 1; o < size; o++)
        sum = _mm512_add_ps(sum, _mm512_loadu_ps(p + o));
    return sum;
}

/* s = k + alpha/size * (window sum of squares) */
BF16_TARGET static inline __m512 scale(const cpu_lrn_shape *s, const float *sq, int64_t c)
{
    return _mm512_fmadd_ps(_mm512_set1_ps(s->alpha / (float)s->size), window(sq, c, s->size),
                           _mm512_set1_ps(s->k));
}

BF16_TARGET static void fwd_row(const cpu_lrn_shape *s, const uint16_t *x, uint16_t *y)
{
    float sq[CPU_LRN_BF16_MAX_C + 2 * PAD + 16];
    products(s, x, NULL, sq);
    for (int64_t c = 0; c < s->C; c += 16) {
        __mmask16 m = bf16_lanes(s->C - c);
        __m512 v = _mm512_mul_ps(bf16_widen(m, x + c), pow_m075(scale(s, sq, c), NULL));
        _mm256_mask_storeu_epi16(y + c, m, bf16_narrow(v));
    }
}

BF16_TARGET static void bwd_row(const cpu_lrn_shape *s, const uint16_t *x, const uint16_t *dy, uint16_t *dx)
{
    /* sq: x^2, then t = dy x s^(-b-1), zeros around; p: s^-b */
    float sq[CPU_LRN_BF16_MAX_C + 2 * PAD + 16], t[CPU_LRN_BF16_MAX_C + 2 * PAD + 16], p[CPU_LRN_BF16_MAX_C + 16];
    const int64_t C = s->C;
    products(s, x, NULL, sq);
    products(s, dy, x, t);
    for (int64_t c = 0; c < C; c += 16) { /* lanes past C keep t's zeros */
        __m512 inv, pw = pow_m075(scale(s, sq, c), &inv);
        _mm512_storeu_ps(p + c, pw);
        _mm512_mask_storeu_ps(t + PAD + c, bf16_lanes(C - c),
                              _mm512_mul_ps(_mm512_loadu_ps(t + PAD + c), _mm512_mul_ps(pw, inv)));
    }
    const __m512 k2 = _mm512_set1_ps(2.0f * s->alpha * 0.75f / (float)s->size);
    for (int64_t c = 0; c < C; c += 16) {
        __mmask16 m = bf16_lanes(C - c);
        __m512 xv = bf16_widen(m, x + c), g = bf16_widen(m, dy + c);
        __m512 v = _mm512_mul_ps(g, _mm512_loadu_ps(p + c));
        v = _mm512_fnmadd_ps(_mm512_mul_ps(k2, xv), window(t, c, s->size), v);
        _mm256_mask_storeu_epi16(dx + c, m, bf16_narrow(v));
    }
}

void cpu_lrn_bf16_fwd(const cpu_lrn_shape *s, const uint16_t *x, uint16_t *y)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t r = 0; r < s->rows; r++)
        fwd_row(s, x + r * s->C, y + r * s->C);
}

void cpu_lrn_bf16_bwd(const cpu_lrn_shape *s, const uint16_t *x, const uint16_t *dy, uint16_t *dx)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t r = 0; r < s->rows; r++)
        bwd_row(s, x + r * s->C, dy + r * s->C, dx + r * s->C);
}
