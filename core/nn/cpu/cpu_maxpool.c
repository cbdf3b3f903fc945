/* Max pooling over nhwc bf16 or nChw16c fp32 activations (cpu_maxpool.h),
 * and the dispatch to cpu_maxpool_avx2.c for nChw8c.
 * Threads take whole output rows forward and whole input rows backward,
 * so every value is written once and nothing is zeroed first. */
#include "cpu_maxpool_rows.h"

#include "cpu_bf16_simd.h"

#include <stdbool.h>

#define CB 8 /* channel vectors one window sweep keeps in registers */

BF16_TARGET static inline __m512 load(bool f32, __mmask16 m, const void *p, int64_t i)
{
    return f32 ? _mm512_maskz_loadu_ps(m, (const float *)p + i) : bf16_widen(m, (const uint16_t *)p + i);
}

BF16_TARGET static inline void store(bool f32, __mmask16 m, void *p, int64_t i, __m512 v)
{
    if (f32)
        _mm512_mask_storeu_ps((float *)p + i, m, v);
    else
        _mm256_mask_storeu_epi16((uint16_t *)p + i, m, bf16_narrow(v));
}

/* Only the last of a block's vectors may be partial: one mask register
 * (tail) rather than nv, which would not all fit. */
#define LANES(v) ((v) == nv - 1 ? tail : (__mmask16)0xffff)

/* Output (n, oh, ow), channels c0 .. c0 + 16 nv: nv independent maxima per
 * window value (one would wait on each compare's latency).  nv and f32
 * are constants where it is inlined, and the loops over nv are unrolled
 * so that the maxima stay in registers. */
BF16_TARGET static inline __attribute__((always_inline)) void
fwd_block(const cpu_pool_shape *s, const cpu_pool_strides *xt, const cpu_pool_strides *yt, const void *x, void *y, uint8_t *idx,
          int64_t n, int64_t oh, int64_t ow, int64_t c0, const int nv, const bool f32)
{
    const __mmask16 tail = bf16_lanes(s->C - c0 - 16 * (nv - 1));
    /* nhwc's vectors are adjacent: a constant where f32 is false */
    const int64_t xs = f32 ? 16 * xt->cf : 16, ys = f32 ? 16 * yt->cf : 16;
    int64_t ah, h0, h1, aw, w0, w1;
    cpu_pool_window(oh, s->kh, s->sh, s->ph, s->H, &ah, &h0, &h1);
    cpu_pool_window(ow, s->kw, s->sw, s->pw, s->W, &aw, &w0, &w1);
    __m512 best[CB];
    __m512i pos[CB];
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
        best[v] = _mm512_set1_ps(-__builtin_inff());
        pos[v] = _mm512_set1_epi32(CPU_POOL_NO_MAX);
    }
    bool first = true;
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++) {
            int64_t xo = cpu_pool_at(xt, n, h, w, c0);
            __m512i k = _mm512_set1_epi32((int)((h - ah) * s->kw + (w - aw)));
#pragma GCC unroll 8
            for (int v = 0; v < nv; v++) {
                __m512 a = load(f32, LANES(v), x, xo + v * xs);
                /* the first value wins whatever it is (-inf, NaN), then
                 * only a larger one: Caffe's first maximum */
                __mmask16 gt = first ? (__mmask16)0xffff : _mm512_cmp_ps_mask(a, best[v], _CMP_GT_OQ);
                best[v] = _mm512_mask_mov_ps(best[v], gt, a);
                pos[v] = _mm512_mask_mov_epi32(pos[v], gt, k);
            }
            first = false;
        }
    int64_t o = cpu_pool_at(yt, n, oh, ow, c0);
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
        store(f32, LANES(v), y, o + v * ys, best[v]);
        if (idx)
            _mm_mask_storeu_epi8(idx + o + v * ys, LANES(v), _mm512_cvtepi32_epi8(pos[v]));
    }
}

/* Input (n, ih, iw), channels c0 .. c0 + 16 nv, from the outputs whose
 * window holds it, in ascending (oh, ow) as the reference sums. */
BF16_TARGET static inline __attribute__((always_inline)) void
bwd_block(const cpu_pool_shape *s, const cpu_pool_strides *xt, const cpu_pool_strides *yt, const void *dy, const uint8_t *idx,
          void *dx, int64_t n, int64_t ih, int64_t iw, int64_t c0, const int nv, const bool f32)
{
    const __mmask16 tail = bf16_lanes(s->C - c0 - 16 * (nv - 1));
    /* nhwc's vectors are adjacent: a constant where f32 is false */
    const int64_t xs = f32 ? 16 * xt->cf : 16, ys = f32 ? 16 * yt->cf : 16;
    int64_t oh0, oh1, ow0, ow1;
    cpu_pool_outputs_of(ih, s->kh, s->sh, s->ph, s->OH, &oh0, &oh1);
    cpu_pool_outputs_of(iw, s->kw, s->sw, s->pw, s->OW, &ow0, &ow1);
    __m512 acc[CB];
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++)
        acc[v] = _mm512_setzero_ps();
    for (int64_t oh = oh0; oh <= oh1; oh++)
        for (int64_t ow = ow0; ow <= ow1; ow++) {
            int64_t o = cpu_pool_at(yt, n, oh, ow, c0);
            __m512i k = _mm512_set1_epi32((int)((ih + s->ph - oh * s->sh) * s->kw + (iw + s->pw - ow * s->sw)));
#pragma GCC unroll 8
            for (int v = 0; v < nv; v++) {
                __m512i p = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(LANES(v), idx + o + v * ys));
                __mmask16 hit = _mm512_mask_cmpeq_epi32_mask(LANES(v), p, k);
                acc[v] = _mm512_mask_add_ps(acc[v], hit, acc[v], load(f32, LANES(v), dy, o + v * ys));
            }
        }
    int64_t xo = cpu_pool_at(xt, n, ih, iw, c0);
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++)
        store(f32, LANES(v), dx, xo + v * xs, acc[v]);
}

#undef LANES

/* Output row (n, oh) forward, or input row (n, ih) backward. */
BF16_TARGET static void row(const cpu_pool_shape *s, const void *in, const uint8_t *idx_in, void *out,
                            uint8_t *idx_out, int64_t n, int64_t r, bool bwd)
{
    const bool f32 = s->layout == CPU_POOL_F32_NCHW16C;
    const cpu_pool_strides xt = cpu_pool_strides_of(s, s->H, s->W), yt = cpu_pool_strides_of(s, s->OH, s->OW);
    int64_t cols = bwd ? s->W : s->OW;
    for (int64_t col = 0; col < cols; col++)
        for (int64_t c0 = 0; c0 < s->C; c0 += 16 * CB) {
            int64_t nv = (s->C - c0 + 15) / 16;
            switch ((nv < CB ? nv : CB) * 2 + f32) {
#define NV(k)                                                                \
    case 2 * k:                                                              \
        if (bwd)                                                             \
            bwd_block(s, &xt, &yt, in, idx_in, out, n, r, col, c0, k, false);          \
        else                                                                 \
            fwd_block(s, &xt, &yt, in, out, idx_out, n, r, col, c0, k, false);         \
        break;                                                               \
    case 2 * k + 1:                                                          \
        if (bwd)                                                             \
            bwd_block(s, &xt, &yt, in, idx_in, out, n, r, col, c0, k, true);           \
        else                                                                 \
            fwd_block(s, &xt, &yt, in, out, idx_out, n, r, col, c0, k, true);          \
        break;
                NV(1) NV(2) NV(3) NV(4) NV(5) NV(6) NV(7) NV(8)
#undef NV
            }
        }
}

bool cpu_maxpool_supported(cpu_pool_layout layout)
{
    if (layout == CPU_POOL_F32_NCHW8C)
        return __builtin_cpu_supports("avx2");
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

/* One row by the layout's kernels: the AVX-512 ones here, or AVX2's. */
static void any_row(const cpu_pool_shape *s, const void *in, const uint8_t *idx_in, void *out, uint8_t *idx_out,
                    int64_t r, bool bwd)
{
    int64_t rows = bwd ? s->H : s->OH;
    if (s->layout == CPU_POOL_F32_NCHW8C)
        cpu_maxpool_row_avx2(s, in, idx_in, out, idx_out, r / rows, r % rows, bwd);
    else
        row(s, in, idx_in, out, idx_out, r / rows, r % rows, bwd);
}

void cpu_maxpool_fwd(const cpu_pool_shape *s, const void *x, void *y, uint8_t *idx)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t r = 0; r < s->N * s->OH; r++)
        any_row(s, x, NULL, y, idx, r, false);
}

void cpu_maxpool_bwd(const cpu_pool_shape *s, const void *dy, const uint8_t *idx, void *dx)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t r = 0; r < s->N * s->H; r++)
        any_row(s, dy, idx, dx, NULL, r, true);
}
