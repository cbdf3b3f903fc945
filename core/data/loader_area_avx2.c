/* INTER_AREA's 2 x 2 shrink in AVX2 (loader_area_simd.h), 8 output pixels
 * a block.  A block's 48 source bytes of a row are read as four 16-byte
 * pieces at 0, 12, 24 and 32 (the last shifted back 4 bytes so that no
 * read passes byte 48); within a piece, pshufb pairs byte c of pixel 2k
 * with byte c of pixel 2k + 1 and pmaddubsw by 1 sums each pair into a
 * word, so 12 bytes give 6 sums.  The two rows' words added, + 2, >> 2 is
 * OpenCV's half-up mean in integers: the scalar loop's bytes.  A row not a
 * whole number of blocks ends with a block overlapping the one before
 * (the same bytes written twice).  Built with a target attribute and
 * picked at run time, so the library still runs on the x86-64 baseline. */
#include "loader_area_simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* Two 16-byte pieces of p, at a (low lane) and b (high lane). */
static inline AVX2 __m256i load2(const uint8_t *p, int a, int b)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)(p + a));
    __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(p + b));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* One row's pair sums of a block, as words: pixels 0-1 | 4-5 in even,
 * 2-3 | 6-7 in odd (6 words a lane, then 2 zero). */
static inline AVX2 void pair_sums(const uint8_t *p, __m256i *even, __m256i *odd)
{
    const __m256i at0 = _mm256_setr_epi8(0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, -1, -1, -1, -1,
                                         0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, -1, -1, -1, -1);
    const __m256i at4 = _mm256_setr_epi8(0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, -1, -1, -1, -1,
                                         4, 7, 5, 8, 6, 9, 10, 13, 11, 14, 12, 15, -1, -1, -1, -1);
    const __m256i one = _mm256_set1_epi8(1);
    *even = _mm256_maddubs_epi16(_mm256_shuffle_epi8(load2(p, 0, 24), at0), one);
    *odd = _mm256_maddubs_epi16(_mm256_shuffle_epi8(load2(p, 12, 32), at4), one);
}

AVX2 int dlg_area_half_avx2(const uint8_t *r0, const uint8_t *r1, uint8_t *out, int n)
{
    if (n < 8)
        return 0;
    const __m256i two = _mm256_set1_epi16(2);
    /* per lane: bytes 0-5 and 8-13 of the pack (pixels 0-3 | 4-7), then
     * lanes' 12 bytes side by side */
    const __m256i pack = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1,
                                          0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    for (int x0 = 0; x0 < n; x0 += 8) {
        const int x = x0 + 8 <= n ? x0 : n - 8;
        __m256i e0, o0, e1, o1;
        pair_sums(r0 + (size_t)x * 6, &e0, &o0);
        pair_sums(r1 + (size_t)x * 6, &e1, &o1);
        __m256i e = _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(e0, e1), two), 2);
        __m256i o = _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(o0, o1), two), 2);
        __m256i b = _mm256_shuffle_epi8(_mm256_packus_epi16(e, o), pack);
        b = _mm256_permutevar8x32_epi32(b, join);
        uint8_t *o24 = out + (size_t)x * 3;
        _mm_storeu_si128((__m128i *)(void *)o24, _mm256_castsi256_si128(b));
        _mm_storel_epi64((__m128i *)(void *)(o24 + 16), _mm256_extracti128_si256(b, 1));
    }
    return n;
}

#else

int dlg_area_half_avx2(const uint8_t *r0, const uint8_t *r1, uint8_t *out, int n)
{
    (void)r0, (void)r1, (void)out, (void)n;
    return 0;
}

#endif
