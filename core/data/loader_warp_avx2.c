/* The warp's inside run in AVX2, 8 outputs at a time (loader_warp_simd.h),
 * bilinear and nearest, and lanczos4's taps of one pixel (below).
 * Bilinear's arithmetic is the scalar loop's, in integers, so the bytes are
 * the same: with fx, fy in 1/32, sum(p w) over the four taps equals
 * (top (32 - fy) + bottom fy) with top = p00 (32 - fx) + p01 fx (at most
 * 255 x 32, a 16-bit pmaddubsw) and likewise bottom; the second step is a
 * 32-bit pmaddwd, then (+ 512) >> 10.  Taps are gathered 4 bytes at a time
 * from p and p + 2 (R0 G0 B0 R1, B0 R1 G1 B1), which never reads past the
 * tap pair's last byte.  Built with a target attribute and picked at run
 * time, so the library still runs on the x86-64 baseline. */
#include "loader_warp_simd.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

bool dlg_warp_have_avx2(void)
{
    __builtin_cpu_init(); /* cheap once done; callers may run before constructors */
    return __builtin_cpu_supports("avx2");
}

#define AVX2 __attribute__((target("avx2")))

/* The x weights as pmaddubsw byte pairs (32 - fx, fx), two per dword. */
static inline AVX2 __m256i x_weights(__m256i fx)
{
    __m256i w = _mm256_or_si256(_mm256_sub_epi32(_mm256_set1_epi32(32), fx),
                                _mm256_slli_epi32(fx, 8));
    return _mm256_or_si256(w, _mm256_slli_epi32(w, 16));
}

/* One source row's horizontal blend for the pixels whose taps g (at p)
 * and h (at p + 2) hold, lo: pixels 0, 1 | 4, 5 of the 8, else 2, 3 | 6, 7:
 * 16-bit R, G, B, 0 per pixel. */
static inline AVX2 __m256i row_blend(__m256i g, __m256i h, __m256i wx, bool lo)
{
    /* per pixel: bytes R0 G0 B0 R1 B0 R1 G1 B1 -> pairs (R0 R1) (G0 G1) (B0 B1) (0 0) */
    const __m256i pairs = _mm256_setr_epi8(0, 3, 1, 6, 2, 7, -1, -1, 8, 11, 9, 14, 10, 15, -1, -1,
                                           0, 3, 1, 6, 2, 7, -1, -1, 8, 11, 9, 14, 10, 15, -1, -1);
    __m256i px = lo ? _mm256_unpacklo_epi32(g, h) : _mm256_unpackhi_epi32(g, h);
    __m256i w = lo ? _mm256_unpacklo_epi32(wx, wx) : _mm256_unpackhi_epi32(wx, wx);
    return _mm256_maddubs_epi16(_mm256_shuffle_epi8(px, pairs), w);
}

/* The vertical blend of one pixel per 128-bit lane, rounded to bytes'
 * range in 32 bits; wy: that pixel's (32 - fy, fy) word pair everywhere. */
static inline AVX2 __m256i col_blend(__m256i top, __m256i bot, __m256i wy, bool lo)
{
    __m256i tb = lo ? _mm256_unpacklo_epi16(top, bot) : _mm256_unpackhi_epi16(top, bot);
    __m256i s = _mm256_madd_epi16(tb, wy);
    return _mm256_srli_epi32(_mm256_add_epi32(s, _mm256_set1_epi32(512)), 10);
}

/* 8 pixels' 24 bytes, 12 in each lane's low bytes, to o (no byte past). */
static inline AVX2 void store24(uint8_t *o, __m256i b)
{
    /* 16 bytes, the last 4 of them rewritten by the second store */
    _mm_storeu_si128((__m128i *)(void *)o, _mm256_castsi256_si128(b));
    __m128i hi = _mm256_extracti128_si256(b, 1);
    _mm_storel_epi64((__m128i *)(void *)(o + 12), hi);
    int32_t last = _mm_cvtsi128_si32(_mm_srli_si128(hi, 8));
    memcpy(o + 20, &last, 4);
}

AVX2 int dlg_warp_run_avx2(const dlg_warp_row *r, uint8_t *out, int xa, int xb)
{
    const __m256i xr = _mm256_set1_epi32(r->xr), yr = _mm256_set1_epi32(r->yr);
    const __m256i m31 = _mm256_set1_epi32(31), stride = _mm256_set1_epi32(r->stride);
    const __m256i pack3 = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                           0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    const int *p0 = (const int *)(const void *)r->px;
    const int *p2 = (const int *)(const void *)(r->px + 2);
    const int *q0 = (const int *)(const void *)(r->px + r->stride);
    const int *q2 = (const int *)(const void *)(r->px + r->stride + 2);
    int x = xa;
    for (; x + 8 <= xb; x += 8) {
        __m256i X = _mm256_loadu_si256((const __m256i *)(const void *)(r->a + x));
        __m256i Y = _mm256_loadu_si256((const __m256i *)(const void *)(r->b + x));
        X = _mm256_srai_epi32(_mm256_add_epi32(xr, X), 5);
        Y = _mm256_srai_epi32(_mm256_add_epi32(yr, Y), 5);
        __m256i ix = _mm256_srai_epi32(X, 5), iy = _mm256_srai_epi32(Y, 5);
        __m256i off = _mm256_add_epi32(_mm256_mullo_epi32(iy, stride),
                                       _mm256_add_epi32(ix, _mm256_add_epi32(ix, ix)));
        __m256i gp0 = _mm256_i32gather_epi32(p0, off, 1), gp2 = _mm256_i32gather_epi32(p2, off, 1);
        __m256i gq0 = _mm256_i32gather_epi32(q0, off, 1), gq2 = _mm256_i32gather_epi32(q2, off, 1);
        __m256i wx = x_weights(_mm256_and_si256(X, m31));
        __m256i fy = _mm256_and_si256(Y, m31);
        __m256i wy = _mm256_or_si256(_mm256_sub_epi32(_mm256_set1_epi32(32), fy),
                                     _mm256_slli_epi32(fy, 16));
        __m256i tl = row_blend(gp0, gp2, wx, true), th = row_blend(gp0, gp2, wx, false);
        __m256i bl = row_blend(gq0, gq2, wx, true), bh = row_blend(gq0, gq2, wx, false);
        __m256i s0 = col_blend(tl, bl, _mm256_shuffle_epi32(wy, 0x00), true);  /* 0 | 4 */
        __m256i s1 = col_blend(tl, bl, _mm256_shuffle_epi32(wy, 0x55), false); /* 1 | 5 */
        __m256i s2 = col_blend(th, bh, _mm256_shuffle_epi32(wy, 0xaa), true);  /* 2 | 6 */
        __m256i s3 = col_blend(th, bh, _mm256_shuffle_epi32(wy, 0xff), false); /* 3 | 7 */
        __m256i b = _mm256_packus_epi16(_mm256_packs_epi32(s0, s1), _mm256_packs_epi32(s2, s3));
        b = _mm256_shuffle_epi8(b, pack3); /* lane 0: pixels 0-3, lane 1: 4-7, 12 bytes each */
        store24(out + (size_t)x * 3, b);
    }
    return x;
}

/* Nearest: a block of 8 outputs goes through here when every tap lies
 * inside src, its 16-bit clamped index as cv::warpAffine's map keeps it,
 * and is not src's very last pixel (the gather reads 4 bytes a tap). */
AVX2 int dlg_warp_nearest_avx2(const dlg_warp_row *r, int32_t w, int32_t h, uint8_t *out, int x,
                               int n)
{
    const __m256i xr = _mm256_set1_epi32(r->xr), yr = _mm256_set1_epi32(r->yr);
    const __m256i lo = _mm256_set1_epi32(-32768), hi = _mm256_set1_epi32(32767);
    const __m256i wv = _mm256_set1_epi32(w), hv = _mm256_set1_epi32(h), none = _mm256_set1_epi32(-1);
    const __m256i stride = _mm256_set1_epi32(r->stride);
    const __m256i last = _mm256_set1_epi32((h - 1) * r->stride + 3 * (w - 1));
    const __m256i pack3 = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                           0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    for (; x + 8 <= n; x += 8) {
        __m256i ix = _mm256_loadu_si256((const __m256i *)(const void *)(r->a + x));
        __m256i iy = _mm256_loadu_si256((const __m256i *)(const void *)(r->b + x));
        ix = _mm256_min_epi32(_mm256_max_epi32(_mm256_srai_epi32(_mm256_add_epi32(xr, ix), 10), lo), hi);
        iy = _mm256_min_epi32(_mm256_max_epi32(_mm256_srai_epi32(_mm256_add_epi32(yr, iy), 10), lo), hi);
        __m256i off = _mm256_add_epi32(_mm256_mullo_epi32(iy, stride),
                                       _mm256_add_epi32(ix, _mm256_add_epi32(ix, ix)));
        __m256i in = _mm256_and_si256(_mm256_cmpgt_epi32(ix, none), _mm256_cmpgt_epi32(wv, ix));
        in = _mm256_and_si256(in, _mm256_and_si256(_mm256_cmpgt_epi32(iy, none),
                                                   _mm256_cmpgt_epi32(hv, iy)));
        in = _mm256_and_si256(in, _mm256_cmpgt_epi32(last, off));
        if (_mm256_movemask_epi8(in) != -1)
            break;
        __m256i b = _mm256_i32gather_epi32((const int *)(const void *)r->px, off, 1);
        b = _mm256_shuffle_epi8(b, pack3); /* lane 0: pixels 0-3, lane 1: 4-7, 12 bytes each */
        store24(out + (size_t)x * 3, b);
    }
    return x;
}

/* Lanczos4: the 8 x 8 taps of one pixel, rows in pairs.  A row's 24 bytes
 * widen to words and pair with the next row's, byte q with byte q; the
 * weight pair (w[2r][q / 3], w[2r + 1][q / 3]) of each is spread from the
 * 8 of the row pair by vpermd; pmaddwd sums each pair.  Integer sums, so
 * any order gives the scalar loop's. */
AVX2 void dlg_lanczos4_avx2(const uint8_t *p, size_t stride, const int16_t *w, int32_t sum[3])
{
    const __m256i g0 = _mm256_setr_epi32(0, 0, 0, 1, 2, 3, 3, 3); /* bytes 0-3 | 8-11 */
    const __m256i g1 = _mm256_setr_epi32(1, 1, 2, 2, 4, 4, 4, 5); /* bytes 4-7 | 12-15 */
    const __m256i g2 = _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7); /* bytes 16-19 | 20-23 */
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0;
    for (int r = 0; r < 4; r++, p += 2 * stride, w += 16) {
        const uint8_t *q = p + stride;
        __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
        __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)q));
        __m128i a2 = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(p + 16)));
        __m128i b2 = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(q + 16)));
        __m256i ab2 = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(a2, b2)),
                                              _mm_unpackhi_epi16(a2, b2), 1);
        __m128i wa = _mm_loadu_si128((const __m128i *)(const void *)w);
        __m128i wb = _mm_loadu_si128((const __m128i *)(const void *)(w + 8));
        __m256i t = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(wa, wb)),
                                            _mm_unpackhi_epi16(wa, wb), 1);
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b),
                                                    _mm256_permutevar8x32_epi32(t, g0)));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b),
                                                    _mm256_permutevar8x32_epi32(t, g1)));
        s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(ab2, _mm256_permutevar8x32_epi32(t, g2)));
    }
    int32_t v[24]; /* bytes 0-3, 8-11, 4-7, 12-15, 16-23 */
    _mm256_storeu_si256((__m256i *)(void *)v, s0);
    _mm256_storeu_si256((__m256i *)(void *)(v + 8), s1);
    _mm256_storeu_si256((__m256i *)(void *)(v + 16), s2);
    sum[0] = v[0] + v[3] + v[5] + v[10] + v[12] + v[15] + v[18] + v[21];
    sum[1] = v[1] + v[6] + v[8] + v[11] + v[13] + v[16] + v[19] + v[22];
    sum[2] = v[2] + v[4] + v[7] + v[9] + v[14] + v[17] + v[20] + v[23];
}

#else

bool dlg_warp_have_avx2(void) { return false; }

int dlg_warp_run_avx2(const dlg_warp_row *r, uint8_t *out, int xa, int xb)
{
    (void)r, (void)out, (void)xb;
    return xa;
}

int dlg_warp_nearest_avx2(const dlg_warp_row *r, int32_t w, int32_t h, uint8_t *out, int x, int n)
{
    (void)r, (void)w, (void)h, (void)out, (void)n;
    return x;
}

void dlg_lanczos4_avx2(const uint8_t *p, size_t stride, const int16_t *w, int32_t sum[3])
{
    (void)p, (void)stride, (void)w, (void)sum;
}

#endif
