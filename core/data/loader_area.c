/* cv::resize INTER_AREA (loader_interp.h), from OpenCV's documented
 * behaviour, not its code.  Three cases, as OpenCV picks them:
 *   - both sides shrink by whole factors: the block mean (2 x 2 rounds
 *     half up in integers, in AVX2 where the CPU has it; other blocks
 *     multiply by 1/area in float and round to nearest even, a pixel an
 *     SSE2 vector);
 *   - both sides shrink (or keep): each source pixel's overlap with the
 *     output cell, as float weights summed in float;
 *   - a side grows: OpenCV's bilinear with its area-shaped fraction
 *     (dlg_resize_linear). */
#include "loader_interp.h"
#include "loader_area_simd.h"
#include "loader_warp_simd.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define STRIP 256

static inline uint8_t sat8(long v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* ---- whole factors -------------------------------------------------------- */

/* OpenCV's own 2 x 2 loop, outputs [x, n) of a row: the block's four
 * bytes summed, half up. */
static void half_row(const uint8_t *r0, const uint8_t *r1, uint8_t *out, int x, int n)
{
    for (; x < n; x++)
        for (int c = 0; c < 3; c++) {
            const int i = 6 * x + c;
            out[3 * x + c] = (uint8_t)((r0[i] + r0[i + 3] + r1[i] + r1[i + 3] + 2) >> 2);
        }
}

static void area_half(const dlg_rgb8 *src, const dlg_rgb8 *dst)
{
    const bool avx2 = dlg_warp_have_avx2();
    for (int y = 0; y < dst->h; y++) {
        const uint8_t *r0 = src->px + (size_t)2 * y * src->stride, *r1 = r0 + src->stride;
        uint8_t *out = dst->px + (size_t)y * dst->stride;
        half_row(r0, r1, out, avx2 ? dlg_area_half_avx2(r0, r1, out, dst->w) : 0, dst->w);
    }
}

/* Outputs [0, n) of a row from col (fx pixels' column sums each, one
 * value of room past them): each channel's fx sums added, times 1/area in
 * float, to nearest even.  SSE2: a pixel's 3 channels (and a junk 4th)
 * in one vector, the same float steps. */
static void block_means(const int32_t *col, int n, int fx, float inv, uint8_t *out)
{
    int x = 0;
#if defined(__SSE2__)
    const __m128 vinv = _mm_set1_ps(inv);
    for (; x < n; x++) {
        const int32_t *p = col + 3 * x * fx;
        __m128i s = _mm_loadu_si128((const __m128i *)(const void *)p);
        for (int i = 1; i < fx; i++)
            s = _mm_add_epi32(s, _mm_loadu_si128((const __m128i *)(const void *)(p + 3 * i)));
        __m128i v = _mm_cvtps_epi32(_mm_mul_ps(_mm_cvtepi32_ps(s), vinv));
        v = _mm_packus_epi16(_mm_packs_epi32(v, v), v);
        int32_t rgb = _mm_cvtsi128_si32(v);
        memcpy(out + 3 * x, &rgb, 3);
    }
#endif
    for (; x < n; x++) {
        const int32_t *p = col + 3 * x * fx;
        int32_t r = 0, g = 0, b = 0;
        for (int i = 0; i < fx; i++, p += 3) {
            r += p[0];
            g += p[1];
            b += p[2];
        }
        out[3 * x] = sat8(dlg_round_even((float)r * inv));
        out[3 * x + 1] = sat8(dlg_round_even((float)g * inv));
        out[3 * x + 2] = sat8(dlg_round_even((float)b * inv));
    }
}

static void area_fast(const dlg_rgb8 *src, const dlg_rgb8 *dst, int fx, int fy)
{
    enum { SUMS = 3 * 4096 };
    const int area = fx * fy, step = SUMS / (3 * fx) < STRIP ? SUMS / (3 * fx) : STRIP;
    const float inv = 1.f / (float)area;
    int32_t col[SUMS + 1]; /* per source value of the strip: its fy rows summed */
    for (int x0 = 0; x0 < dst->w; x0 += step) {
        int n = dst->w - x0 < step ? dst->w - x0 : step, span = 3 * n * fx;
        col[span] = 0; /* the last pixel's junk lane */
        for (int y = 0; y < dst->h; y++) {
            const uint8_t *top = src->px + (size_t)y * fy * src->stride + (size_t)x0 * fx * 3;
            for (int i = 0; i < span; i++)
                col[i] = top[i];
            for (int j = 1; j < fy; j++)
                for (int i = 0; i < span; i++)
                    col[i] += top[(size_t)j * src->stride + i];
            block_means(col, n, fx, inv, dst->px + (size_t)y * dst->stride + (size_t)x0 * 3);
        }
    }
}

/* ---- shrink by any factor --------------------------------------------------- */

/* Output d's cell [d scale, (d + 1) scale) over source pixels: a partial
 * first pixel (lo - 1, w_lo), whole pixels [lo, hi) at w_mid, a partial
 * last (hi, w_hi); a weight of 0 marks a partial that is absent. */
typedef struct cell {
    int lo, hi;
    float w_lo, w_mid, w_hi;
} cell;

static cell cell_of(int d, double scale, int n)
{
    double f1 = d * scale, f2 = f1 + scale, width = fmin(scale, n - f1);
    int s1 = (int)ceil(f1), s2 = (int)floor(f2);
    s2 = s2 < n - 1 ? s2 : n - 1;
    s1 = s1 < s2 ? s1 : s2;
    cell c = {s1, s2, 0, (float)(1.0 / width), 0};
    if (s1 - f1 > 1e-3)
        c.w_lo = (float)((s1 - f1) / width);
    if (f2 - s2 > 1e-3)
        c.w_hi = (float)(fmin(fmin(f2 - s2, 1.), width) / width);
    return c;
}

/* The strip's cells as up to FLAT taps per output value (3 per pixel), in
 * OpenCV's order, padded with weight 0 (v + 0 * p is v: the padding
 * changes no sum); cells wider than that take area_row_cells. */
#define FLAT 8

typedef struct strip_cells {
    const cell *cx;
    int n, k;             /* pixels, taps per pixel (0: too wide for the table) */
    int32_t at[FLAT][STRIP]; /* byte of each tap pixel */
    float w[FLAT][STRIP];
    int32_t last[STRIP];  /* the furthest tap's byte */
} strip_cells;

static void strip_of(const cell *cx, int n, strip_cells *sc)
{
    sc->cx = cx;
    sc->n = n;
    sc->k = 0;
    for (int x = 0; x < n; x++) {
        int k = (cx[x].w_lo > 0) + (cx[x].hi - cx[x].lo) + (cx[x].w_hi > 0);
        sc->k = k > sc->k ? k : sc->k;
    }
    if (sc->k > FLAT) {
        sc->k = 0;
        return;
    }
    for (int x = 0; x < n; x++) {
        const cell *c = &cx[x];
        int j = 0, at[FLAT];
        float w[FLAT];
        if (c->w_lo > 0)
            at[j] = c->lo - 1, w[j++] = c->w_lo;
        for (int s = c->lo; s < c->hi; s++)
            at[j] = s, w[j++] = c->w_mid;
        if (c->w_hi > 0)
            at[j] = c->hi, w[j++] = c->w_hi;
        sc->last[x] = 3 * at[j - 1];
        for (; j < sc->k; j++)
            at[j] = at[0], w[j] = 0;
        for (j = 0; j < sc->k; j++) {
            sc->at[j][x] = 3 * at[j];
            sc->w[j][x] = w[j];
        }
    }
}

/* One source row into buf over wide cells, in OpenCV's order. */
static void area_row_cells(const uint8_t *row, const cell *cx, int n, float *buf)
{
    for (int x = 0; x < n; x++) {
        const cell *c = &cx[x];
        for (int ch = 0; ch < 3; ch++) {
            float v = 0;
            if (c->w_lo > 0)
                v = v + (float)row[(size_t)(c->lo - 1) * 3 + ch] * c->w_lo;
            for (int s = c->lo; s < c->hi; s++)
                v = v + (float)row[(size_t)s * 3 + ch] * c->w_mid;
            if (c->w_hi > 0)
                v = v + (float)row[(size_t)c->hi * 3 + ch] * c->w_hi;
            buf[3 * x + ch] = v;
        }
    }
}

/* One source row (row_bytes long) into buf (room for one more value):
 * per pixel, its taps in order, buf = buf + p w in float.  SSE2: the
 * pixel's 3 channels (and a junk 4th, overwritten next) in one vector. */
static void area_row(const uint8_t *row, int row_bytes, const strip_cells *sc, float *buf)
{
    if (sc->k == 0) {
        area_row_cells(row, sc->cx, sc->n, buf);
        return;
    }
    int x = 0;
#if defined(__SSE2__)
    const __m128i z = _mm_setzero_si128();
    for (; x < sc->n && sc->last[x] + 4 <= row_bytes; x++) {
        __m128 v = _mm_setzero_ps();
        for (int j = 0; j < sc->k; j++) {
            int32_t p;
            memcpy(&p, row + sc->at[j][x], 4);
            __m128i q = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(p), z), z);
            v = _mm_add_ps(v, _mm_mul_ps(_mm_cvtepi32_ps(q), _mm_set1_ps(sc->w[j][x])));
        }
        _mm_storeu_ps(buf + 3 * x, v);
    }
#endif
    for (; x < sc->n; x++)
        for (int ch = 0; ch < 3; ch++) {
            float v = 0;
            for (int j = 0; j < sc->k; j++)
                v = v + (float)row[sc->at[j][x] + ch] * sc->w[j][x];
            buf[3 * x + ch] = v;
        }
}

/* sum = w buf (first row of the cell) or sum + w buf. */
static void accumulate(const uint8_t *row, int row_bytes, const strip_cells *sc, float w,
                       bool first, float *buf, float *sum)
{
    area_row(row, row_bytes, sc, buf);
    const int n = 3 * sc->n;
    if (first)
        for (int i = 0; i < n; i++)
            sum[i] = w * buf[i];
    else
        for (int i = 0; i < n; i++)
            sum[i] = sum[i] + w * buf[i];
}

static void area_strip(const dlg_rgb8 *src, const dlg_rgb8 *dst, int x0, const strip_cells *sc,
                       double scale_y)
{
    const int rb = 3 * src->w;
    float buf[STRIP * 3 + 1], sum[STRIP * 3];
    for (int y = 0; y < dst->h; y++) {
        cell cy = cell_of(y, scale_y, src->h);
        bool first = true;
        if (cy.w_lo > 0) {
            accumulate(src->px + (size_t)(cy.lo - 1) * src->stride, rb, sc, cy.w_lo, first, buf,
                       sum);
            first = false;
        }
        for (int s = cy.lo; s < cy.hi; s++, first = false)
            accumulate(src->px + (size_t)s * src->stride, rb, sc, cy.w_mid, first, buf, sum);
        if (cy.w_hi > 0)
            accumulate(src->px + (size_t)cy.hi * src->stride, rb, sc, cy.w_hi, first, buf, sum);
        uint8_t *out = dst->px + (size_t)y * dst->stride + (size_t)x0 * 3;
        for (int i = 0; i < 3 * sc->n; i++)
            out[i] = sat8(dlg_round_even(sum[i]));
    }
}

static void area_general(const dlg_rgb8 *src, const dlg_rgb8 *dst, double scale_x,
                         double scale_y)
{
    cell cx[STRIP];
    strip_cells sc;
    for (int x0 = 0; x0 < dst->w; x0 += STRIP) {
        int n = dst->w - x0 < STRIP ? dst->w - x0 : STRIP;
        for (int x = 0; x < n; x++)
            cx[x] = cell_of(x0 + x, scale_x, src->w);
        strip_of(cx, n, &sc);
        area_strip(src, dst, x0, &sc, scale_y);
    }
}

void dlg_resize_area(const dlg_rgb8 *src, const dlg_rgb8 *dst)
{
    double scale_x = 1.0 / ((double)dst->w / src->w), scale_y = 1.0 / ((double)dst->h / src->h);
    if (scale_x < 1 || scale_y < 1) {
        dlg_resize_linear(src, dst, true);
        return;
    }
    double fx = rint(scale_x), fy = rint(scale_y);
    bool whole = fabs(scale_x - fx) < DBL_EPSILON && fabs(scale_y - fy) < DBL_EPSILON;
    if (whole && fx == 2 && fy == 2)
        area_half(src, dst);
    else if (whole)
        area_fast(src, dst, (int)fx, (int)fy);
    else
        area_general(src, dst, scale_x, scale_y);
}
