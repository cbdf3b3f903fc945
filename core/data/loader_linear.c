/* cv::resize's bilinear (INTER_LINEAR, and INTER_AREA where a side grows)
 * on 8-bit data, from OpenCV's documented behaviour, not its code: each
 * source row is blended across in integers with weights in 1/2048, two
 * such rows are blended down as OpenCV's vector loop does it (each row
 * sum >> 4 times the weight, keeping the high 16 bits, their sum + 2 >> 2),
 * which on this data covers every value of the row. */
#include "loader_interp.h"

#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define STRIP 256

static inline uint8_t sat8(int32_t v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* Output d's left tap for an n-pixel source and its weights in 1/2048.
 * The fraction: bilinear's pixel-centre map (d + 0.5) scale - 0.5 in
 * float, or area's, how far the output cell's right edge lies past the
 * source pixel's, in output pixels.  Columns (clamp) before the first
 * pixel and from the last on take the edge pixel alone; rows keep their
 * fraction and blend the edge row with itself, as OpenCV's do. */
static int tap_of(int d, double scale, double inv_scale, int n, bool area, bool clamp,
                  int16_t w[2])
{
    int s;
    float f;
    if (area) {
        s = (int)floor(d * scale);
        f = (float)((d + 1) - (s + 1) * inv_scale);
        f = f <= 0 ? 0.f : f - floorf(f);
    } else {
        f = (float)((d + 0.5) * scale - 0.5);
        s = (int)floorf(f);
        f -= (float)s;
    }
    if (clamp && s < 0) {
        f = 0;
        s = 0;
    }
    if (clamp && s >= n - 1) {
        f = 0;
        s = n - 1;
    }
    w[0] = (int16_t)lrintf((1.f - f) * 2048.f);
    w[1] = (int16_t)lrintf(f * 2048.f);
    return s;
}

/* The strip's columns: per output pixel, the byte of its left tap, of
 * its right one (the left at the edge) and their weights. */
typedef struct strip_taps {
    int32_t at0[STRIP], at1[STRIP];
    int16_t w[STRIP][2];
    int n; /* pixels */
} strip_taps;

static void strip_of(int x0, int n, double scale, double inv_scale, int n_src, bool area,
                     strip_taps *st)
{
    st->n = n;
    for (int x = 0; x < n; x++) {
        int s = tap_of(x0 + x, scale, inv_scale, n_src, area, true, st->w[x]);
        st->at0[x] = 3 * s;
        st->at1[x] = 3 * (s + 1 < n_src ? s + 1 : s);
    }
}

/* One source row (row_bytes long) blended across: 3 sums per pixel into
 * out, which has room for one more value.  SSE2: per pixel, the 4 bytes
 * at each tap interleaved and multiplied-added with the weight pair (the
 * 4th sum is junk, overwritten by the next pixel). */
static void blend_row(const uint8_t *row, int row_bytes, const strip_taps *st, int32_t *out)
{
    int x = 0;
#if defined(__SSE2__)
    const __m128i z = _mm_setzero_si128();
    for (; x < st->n && st->at1[x] + 4 <= row_bytes; x++) {
        int32_t a, b, wp;
        memcpy(&a, row + st->at0[x], 4);
        memcpy(&b, row + st->at1[x], 4);
        memcpy(&wp, st->w[x], 4);
        __m128i ab = _mm_unpacklo_epi8(_mm_cvtsi32_si128(a), _mm_cvtsi32_si128(b));
        __m128i v = _mm_madd_epi16(_mm_unpacklo_epi8(ab, z), _mm_set1_epi32(wp));
        _mm_storeu_si128((__m128i *)(void *)(out + 3 * x), v);
    }
#endif
    for (; x < st->n; x++)
        for (int c = 0; c < 3; c++)
            out[3 * x + c] = row[st->at0[x] + c] * st->w[x][0] + row[st->at1[x] + c] * st->w[x][1];
}

/* The vertical step, OpenCV's vector arithmetic: (r >> 4) as int16 times
 * the weight, high half; the two summed, + 2 >> 2, to bytes. */
static void blend_down(const int32_t *r0, const int32_t *r1, const int16_t b[2], int n,
                       uint8_t *out)
{
    int e = 0;
#if defined(__SSE2__)
    const __m128i b0 = _mm_set1_epi16(b[0]), b1 = _mm_set1_epi16(b[1]), two = _mm_set1_epi16(2);
    for (; e + 16 <= n; e += 16) {
        __m128i v[2];
        for (int h = 0; h < 2; h++) {
            const __m128i *p = (const __m128i *)(const void *)(r0 + e + 8 * h);
            const __m128i *q = (const __m128i *)(const void *)(r1 + e + 8 * h);
            __m128i a = _mm_packs_epi32(_mm_srai_epi32(_mm_loadu_si128(p), 4),
                                        _mm_srai_epi32(_mm_loadu_si128(p + 1), 4));
            __m128i c = _mm_packs_epi32(_mm_srai_epi32(_mm_loadu_si128(q), 4),
                                        _mm_srai_epi32(_mm_loadu_si128(q + 1), 4));
            __m128i sum = _mm_adds_epi16(_mm_mulhi_epi16(a, b0), _mm_mulhi_epi16(c, b1));
            v[h] = _mm_srai_epi16(_mm_adds_epi16(sum, two), 2);
        }
        _mm_storeu_si128((__m128i *)(void *)(out + e), _mm_packus_epi16(v[0], v[1]));
    }
#endif
    for (; e < n; e++) {
        int32_t v = (((r0[e] >> 4) * b[0]) >> 16) + (((r1[e] >> 4) * b[1]) >> 16);
        out[e] = sat8((v + 2) >> 2);
    }
}

void dlg_resize_linear(const dlg_rgb8 *src, const dlg_rgb8 *dst, bool area)
{
    const double ix = (double)dst->w / src->w, iy = (double)dst->h / src->h;
    const double scale_x = 1.0 / ix, scale_y = 1.0 / iy;
    strip_taps st;
    int32_t rows[2][STRIP * 3 + 1];
    for (int x0 = 0; x0 < dst->w; x0 += STRIP) {
        strip_of(x0, dst->w - x0 < STRIP ? dst->w - x0 : STRIP, scale_x, ix, src->w, area, &st);
        int held[2] = {-1, -1}; /* the source row in each of rows[] */
        for (int y = 0; y < dst->h; y++) {
            int16_t b[2];
            int s = tap_of(y, scale_y, iy, src->h, area, false, b);
            int want[2] = {s < 0 ? 0 : s < src->h ? s : src->h - 1,
                           s + 1 < 0 ? 0 : s + 1 < src->h ? s + 1 : src->h - 1};
            int32_t *r[2];
            for (int k = 0; k < 2; k++) { /* slot = row & 1: the pair never collides */
                int slot = want[k] & 1;
                if (held[slot] != want[k]) {
                    blend_row(src->px + (size_t)want[k] * src->stride, 3 * src->w, &st,
                              rows[slot]);
                    held[slot] = want[k];
                }
                r[k] = rows[slot];
            }
            blend_down(r[0], r[1], b, 3 * st.n,
                       dst->px + (size_t)y * dst->stride + (size_t)x0 * 3);
        }
    }
}
