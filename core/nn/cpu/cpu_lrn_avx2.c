/* Across-channel LRN over nChw8c fp32 activations on AVX2
 * (cpu_lrn_avx2.h).  Each thread takes whole pixels; a pixel's squares go
 * into an fp32 row with PAD zeros on either side, so that a window sum is
 * size unaligned loads. */
#include "cpu_lrn_avx2.h"

#include <immintrin.h>

#define AVX2_TARGET __attribute__((target("avx2,fma")))
#define MAX_HALF 7 /* size <= 15 */
#define PAD 8      /* the rows' zeros either side: >= MAX_HALF, a whole vector */
#define ROW (CPU_LRN_AVX2_MAX_C + 2 * PAD + 8)

bool cpu_lrn_avx2_supported(int64_t C, int size, float beta)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && beta == 0.75f && size % 2 == 1 &&
           size / 2 <= MAX_HALF && C > 0 && C <= CPU_LRN_AVX2_MAX_C;
}

/* a^-1/2: the 12-bit estimate and one Newton step (about 2^-23 off) */
AVX2_TARGET static inline __m256 rsqrt(__m256 a)
{
    __m256 y = _mm256_rsqrt_ps(a);
    __m256 t = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), a), _mm256_mul_ps(y, y), _mm256_set1_ps(1.5f));
    return _mm256_mul_ps(y, t);
}

/* s^-0.75 (= r^2 q with r = s^-1/2, q = r^-1/2 = s^1/4) */
AVX2_TARGET static inline __m256 pow_m075(__m256 s)
{
    __m256 r = rsqrt(s);
    return _mm256_mul_ps(_mm256_mul_ps(r, r), rsqrt(r));
}

/* Lanes of the block from channel c that are real channels (all ones) */
AVX2_TARGET static inline __m256 real_lanes(const cpu_lrn8_shape *s, int64_t c)
{
    __m256i lane = _mm256_add_epi32(_mm256_set1_epi32((int)c), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)s->C), lane));
}

/* row[PAD + c] = a[c]^2 for the pixel's real channels (a: the pixel's
 * first block; blocks bs values apart), zeros around them */
AVX2_TARGET static void squares(const cpu_lrn8_shape *s, const float *a, int64_t bs, float *row)
{
    int64_t cp = (s->C + 7) / 8 * 8;
    _mm256_storeu_ps(row, _mm256_setzero_ps());
    for (int64_t c = 0; c < cp; c += 8) {
        __m256 u = _mm256_loadu_ps(a + c / 8 * bs);
        __m256 v = _mm256_mul_ps(u, u);
        _mm256_storeu_ps(row + PAD + c, _mm256_and_ps(v, real_lanes(s, c)));
    }
    _mm256_storeu_ps(row + PAD + cp, _mm256_setzero_ps());
}

/* The window sum around channels c .. c + 7 */
AVX2_TARGET static inline __m256 window(const float *row, int64_t c, int size)
{
    const float *p = row + PAD + c - size / 2;
    __m256 sum = _mm256_loadu_ps(p);
    for (int o = 1; o < size; o++)
        sum = _mm256_add_ps(sum, _mm256_loadu_ps(p + o));
    return sum;
}

/* s = k + alpha/size * (window sum of squares) */
AVX2_TARGET static inline __m256 scale(const cpu_lrn8_shape *s, const float *sq, int64_t c)
{
    return _mm256_fmadd_ps(_mm256_set1_ps(s->alpha / (float)s->size), window(sq, c, s->size),
                           _mm256_set1_ps(s->k));
}

AVX2_TARGET static void fwd_pixel(const cpu_lrn8_shape *s, const float *x, float *y, int64_t bs)
{
    float sq[ROW];
    squares(s, x, bs, sq);
    for (int64_t c = 0; c < s->C; c += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + c / 8 * bs), pow_m075(scale(s, sq, c)));
        _mm256_storeu_ps(y + c / 8 * bs, _mm256_and_ps(v, real_lanes(s, c)));
    }
}

/* Pixel i of the batch (image i / HW): where its first block starts */
static inline int64_t pixel(const cpu_lrn8_shape *s, int64_t i)
{
    return (i / s->HW) * ((s->C + 7) / 8 * 8) * s->HW + (i % s->HW) * 8;
}

void cpu_lrn_avx2_fwd(const cpu_lrn8_shape *s, const float *x, float *y)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t i = 0; i < s->N * s->HW; i++)
        fwd_pixel(s, x + pixel(s, i), y + pixel(s, i), 8 * s->HW);
}
