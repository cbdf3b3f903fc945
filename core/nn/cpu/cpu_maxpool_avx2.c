/* Max pooling over nChw8c fp32 activations on AVX2 (cpu_maxpool.h): the
 * cpu backend's layout on CPUs without AVX-512.  The same windows, first
 * maximum and gradient order as the AVX-512 kernels of cpu_maxpool.c, one
 * 8-channel vector at a time; C is a multiple of 8 (oneDNN pads the
 * blocks), so no vector is partial. */
#include "cpu_maxpool_rows.h"

#include <immintrin.h>

#define AVX2_TARGET __attribute__((target("avx2,fma")))

#define CB 6 /* channel vectors one window sweep keeps in registers (2 each) */

/* Eight window positions (0..255 each) as bytes at p. */
AVX2_TARGET static inline void store_positions(uint8_t *p, __m256i pos)
{
    __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(pos), _mm256_extracti128_si256(pos, 1));
    _mm_storel_epi64((__m128i *)p, _mm_packus_epi16(w, w));
}

/* Output (n, oh, ow), channels c0 .. c0 + 8 nv: nv independent maxima per
 * window value.  nv is a constant where it is inlined, and the loops over
 * it are unrolled so that the maxima stay in registers. */
AVX2_TARGET static inline __attribute__((always_inline)) void
fwd_block(const cpu_pool_shape *s, const cpu_pool_strides *xt, const cpu_pool_strides *yt, const float *x, float *y,
          uint8_t *idx, int64_t n, int64_t oh, int64_t ow, int64_t c0, const int nv)
{
    const int64_t xs = 8 * xt->cf, ys = 8 * yt->cf; /* one channel vector to the next */
    int64_t ah, h0, h1, aw, w0, w1;
    cpu_pool_window(oh, s->kh, s->sh, s->ph, s->H, &ah, &h0, &h1);
    cpu_pool_window(ow, s->kw, s->sw, s->pw, s->W, &aw, &w0, &w1);
    __m256 best[CB], pos[CB]; /* positions as int32 bit patterns in float lanes, for blendv */
#pragma GCC unroll 6
    for (int v = 0; v < nv; v++) {
        best[v] = _mm256_set1_ps(-__builtin_inff());
        pos[v] = _mm256_castsi256_ps(_mm256_set1_epi32(CPU_POOL_NO_MAX));
    }
    const __m256 all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    bool first = true;
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++) {
            const float *xp = x + cpu_pool_at(xt, n, h, w, c0);
            __m256 k = _mm256_castsi256_ps(_mm256_set1_epi32((int)((h - ah) * s->kw + (w - aw))));
#pragma GCC unroll 6
            for (int v = 0; v < nv; v++) {
                __m256 a = _mm256_loadu_ps(xp + v * xs);
                /* the first value wins whatever it is (-inf, NaN), then
                 * only a larger one: Caffe's first maximum */
                __m256 gt = first ? all : _mm256_cmp_ps(a, best[v], _CMP_GT_OQ);
                best[v] = _mm256_blendv_ps(best[v], a, gt);
                pos[v] = _mm256_blendv_ps(pos[v], k, gt);
            }
            first = false;
        }
    int64_t o = cpu_pool_at(yt, n, oh, ow, c0);
#pragma GCC unroll 6
    for (int v = 0; v < nv; v++) {
        _mm256_storeu_ps(y + o + v * ys, best[v]);
        if (idx)
            store_positions(idx + o + v * ys, _mm256_castps_si256(pos[v]));
    }
}

/* Input (n, ih, iw), channels c0 .. c0 + 8 nv, from the outputs whose
 * window holds it, in ascending (oh, ow) as the reference sums (a miss
 * adds +0, which leaves every sum from +0 as it was). */
AVX2_TARGET static inline __attribute__((always_inline)) void
bwd_block(const cpu_pool_shape *s, const cpu_pool_strides *xt, const cpu_pool_strides *yt, const float *dy,
          const uint8_t *idx, float *dx, int64_t n, int64_t ih, int64_t iw, int64_t c0, const int nv)
{
    const int64_t xs = 8 * xt->cf, ys = 8 * yt->cf;
    int64_t oh0, oh1, ow0, ow1;
    cpu_pool_outputs_of(ih, s->kh, s->sh, s->ph, s->OH, &oh0, &oh1);
    cpu_pool_outputs_of(iw, s->kw, s->sw, s->pw, s->OW, &ow0, &ow1);
    __m256 acc[CB];
#pragma GCC unroll 6
    for (int v = 0; v < nv; v++)
        acc[v] = _mm256_setzero_ps();
    for (int64_t oh = oh0; oh <= oh1; oh++)
        for (int64_t ow = ow0; ow <= ow1; ow++) {
            int64_t o = cpu_pool_at(yt, n, oh, ow, c0);
            __m256i k = _mm256_set1_epi32((int)((ih + s->ph - oh * s->sh) * s->kw + (iw + s->pw - ow * s->sw)));
#pragma GCC unroll 6
            for (int v = 0; v < nv; v++) {
                __m256i p = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(idx + o + v * ys)));
                __m256 hit = _mm256_castsi256_ps(_mm256_cmpeq_epi32(p, k));
                acc[v] = _mm256_add_ps(acc[v], _mm256_and_ps(hit, _mm256_loadu_ps(dy + o + v * ys)));
            }
        }
    int64_t xo = cpu_pool_at(xt, n, ih, iw, c0);
#pragma GCC unroll 6
    for (int v = 0; v < nv; v++)
        _mm256_storeu_ps(dx + xo + v * xs, acc[v]);
}

AVX2_TARGET void cpu_maxpool_row_avx2(const cpu_pool_shape *s, const float *in, const uint8_t *idx_in, float *out,
                                      uint8_t *idx_out, int64_t n, int64_t r, bool bwd)
{
    const cpu_pool_strides xt = cpu_pool_strides_of(s, s->H, s->W), yt = cpu_pool_strides_of(s, s->OH, s->OW);
    int64_t cols = bwd ? s->W : s->OW;
    for (int64_t col = 0; col < cols; col++)
        for (int64_t c0 = 0; c0 < s->C; c0 += 8 * CB) {
            int64_t nv = (s->C - c0) / 8;
            switch (nv < CB ? nv : CB) {
#define NV(k)                                                             \
    case k:                                                               \
        if (bwd)                                                          \
            bwd_block(s, &xt, &yt, in, idx_in, out, n, r, col, c0, k);    \
        else                                                              \
            fwd_block(s, &xt, &yt, in, out, idx_out, n, r, col, c0, k);   \
        break;
                NV(1) NV(2) NV(3) NV(4) NV(5) NV(6)
#undef NV
            }
        }
}
