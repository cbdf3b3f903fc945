/* Cubic and lanczos4 (loader_interp.h): OpenCV's weights and fixed point,
 * written from its documented behaviour (imgwarp.cpp, resize.cpp), not
 * its code.  warpAffine takes the weights of a 2-D table over 32 x 32
 * fractions, each entry the product of the 1-D weights rounded to 1/32768
 * and nudged to sum to one; resize rounds the 1-D weights to 1/2048, sums
 * the rows in integers and, for cubic, combines them in float (its vector
 * loop) except for the row's last few values (its scalar loop).  The
 * warp's pixels with every tap inside take pmaddwd kernels: cubic's SSE2
 * one below, lanczos4's AVX2 one in loader_warp_avx2.c where the CPU has
 * it (integer sums, so the bytes are the scalar loop's). */
#include "loader_interp.h"
#include "loader_warp_simd.h"

#include <math.h>
#include <pthread.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define TAB 32        /* INTER_TAB_SIZE: fractions of a pixel in the warp */
#define REMAP_BITS 15 /* INTER_REMAP_COEF_BITS */
#define RESIZE_ONE 2048.0f /* INTER_RESIZE_COEF_SCALE */
#define AB_BITS 10
#define STRIP 256

static void cubic(float x, float *c)
{
    const float A = -0.75f;
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = 1.f - c[0] - c[1] - c[2];
}

/* sin(pi t / 4) sin(pi t) / (pi t / 4)^2 at t = x + 3 - i, from one sin
 * and cos (the others are their rotations by 45 degrees), normalised to
 * sum to one; a tap at t ~ 0 takes a huge weight, so that it becomes 1. */
static void lanczos4(float x, float *c)
{
    static const double r = 0.70710678118654752440084436210485;
    static const double rot[8][2] = {{1, 0},  {-r, -r}, {0, 1},  {r, -r},
                                     {-1, 0}, {r, r},   {0, -1}, {-r, r}};
    double y0 = -(x + 3) * M_PI * 0.25, s0 = sin(y0), c0 = cos(y0);
    float sum = 0;
    for (int i = 0; i < 8; i++) {
        float t = x + 3 - (float)i;
        if (fabsf(t) >= 1e-6f) {
            double y = -t * M_PI * 0.25;
            c[i] = (float)((rot[i][0] * s0 + rot[i][1] * c0) / (y * y));
        } else {
            c[i] = 1e30f;
        }
        sum += c[i];
    }
    sum = 1.f / sum;
    for (int i = 0; i < 8; i++)
        c[i] *= sum;
}

void dlg_interp_coeffs(float x, int ksize, float *c)
{
    if (ksize == 4)
        cubic(x, c);
    else
        lanczos4(x, c);
}

static int16_t sat16(float v)
{
    long r = lrintf(v); /* cvRound: to nearest, ties to even */
    return (int16_t)(r < -32768 ? -32768 : r > 32767 ? 32767 : r);
}

static inline uint8_t sat8(int32_t v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* ---- warpAffine ------------------------------------------------------- */

/* The 2-D tables, filled once and read-only after: entry fy * 32 + fx. */
static int16_t cubic_tab[TAB * TAB][16];
static int16_t lanczos_tab[TAB * TAB][64];
static pthread_once_t tabs_once = PTHREAD_ONCE_INIT;

/* One entry: the products rounded; if they miss one, the largest (sum
 * short) or smallest (sum over) of the 2 x 2 taps from (k/2, k/2) takes
 * the difference. */
static void fill_entry(const float *wy, const float *wx, int k, int16_t *e)
{
    int sum = 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            e[i * k + j] = sat16(wy[i] * wx[j] * (float)(1 << REMAP_BITS));
            sum += e[i * k + j];
        }
    int diff = sum - (1 << REMAP_BITS);
    if (diff == 0)
        return;
    int h = k / 2, lo = h * k + h, hi = lo;
    for (int i = h; i < h + 2; i++)
        for (int j = h; j < h + 2; j++) {
            int at = i * k + j;
            if (e[at] < e[lo])
                lo = at;
            else if (e[at] > e[hi])
                hi = at;
        }
    if (diff < 0)
        e[hi] = (int16_t)(e[hi] - diff);
    else
        e[lo] = (int16_t)(e[lo] - diff);
}

static void fill_table(int k, int16_t *tab)
{
    float w[TAB][8];
    for (int i = 0; i < TAB; i++)
        dlg_interp_coeffs((float)i * (1.f / TAB), k, w[i]);
    for (int fy = 0; fy < TAB; fy++)
        for (int fx = 0; fx < TAB; fx++)
            fill_entry(w[fy], w[fx], k, tab + (size_t)(fy * TAB + fx) * k * k);
}

#if defined(__SSE2__)
/* cubic_tab laid out for pmaddwd: entry e, tap-row pair r (rows 2r, 2r +
 * 1), vector v: the 4 bytes 4v .. 4v + 3 of a row's 4 taps (12 bytes,
 * pixel q / 3), each as the pair (row 2r's weight, row 2r + 1's). */
static int16_t cubic_pairs[TAB * TAB][2][3][8];

static void fill_pairs(void)
{
    for (int e = 0; e < TAB * TAB; e++)
        for (int r = 0; r < 2; r++)
            for (int q = 0; q < 12; q++) {
                cubic_pairs[e][r][q / 4][2 * (q % 4)] = cubic_tab[e][(2 * r) * 4 + q / 3];
                cubic_pairs[e][r][q / 4][2 * (q % 4) + 1] = cubic_tab[e][(2 * r + 1) * 4 + q / 3];
            }
}
#endif

static void fill_tables(void)
{
    fill_table(4, cubic_tab[0]);
    fill_table(8, lanczos_tab[0]);
#if defined(__SSE2__)
    fill_pairs();
#endif
}

static int32_t sat_round(double v)
{
    v = v < -2147483648.0 ? -2147483648.0 : v > 2147483647.0 ? 2147483647.0 : v;
    return (int32_t)lrint(v);
}

static int clamp_short(int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : v; }

static inline uint8_t remap_out(int32_t acc)
{
    return sat8((acc + (1 << (REMAP_BITS - 1))) >> REMAP_BITS);
}

/* Output pixel from taps at (sx, sy) .. (sx + k - 1, sy + k - 1), some
 * outside src: those take fill, or the nearest edge pixel (fill < 0). */
static void border_pixel(const dlg_rgb8 *src, int sx, int sy, const int16_t *w, int k, int fill,
                         uint8_t *out)
{
    if (fill >= 0 && (sx >= src->w || sy >= src->h || sx + k <= 0 || sy + k <= 0)) {
        out[0] = out[1] = out[2] = (uint8_t)fill; /* the weights sum to one */
        return;
    }
    int32_t acc[3] = {0, 0, 0};
    for (int i = 0; i < k; i++) {
        int y = sy + i;
        bool yin = y >= 0 && y < src->h;
        y = y < 0 ? 0 : y >= src->h ? src->h - 1 : y;
        for (int j = 0; j < k; j++) {
            int x = sx + j;
            bool in = yin && x >= 0 && x < src->w;
            x = x < 0 ? 0 : x >= src->w ? src->w - 1 : x;
            const uint8_t *p = src->px + (size_t)y * src->stride + (size_t)x * 3;
            for (int c = 0; c < 3; c++)
                acc[c] += (in || fill < 0 ? p[c] : fill) * w[i * k + j];
        }
    }
    for (int c = 0; c < 3; c++)
        out[c] = remap_out(acc[c]);
}

#if defined(__SSE2__)
/* Cubic's 16 taps of one pixel inside src, by pmaddwd over row pairs:
 * sums per byte of the 4-pixel window, then per channel.  Reads 16 bytes
 * a row (12 used): the caller keeps that inside src's buffer. */
static inline void cubic_sse2(const uint8_t *p, size_t stride, const int16_t (*w)[3][8],
                              uint8_t *out)
{
    const __m128i z = _mm_setzero_si128();
    __m128i s[3] = {z, z, z};
    for (int r = 0; r < 2; r++, p += 2 * stride) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + stride));
        __m128i a0 = _mm_unpacklo_epi8(a, z), b0 = _mm_unpacklo_epi8(b, z);
        __m128i a1 = _mm_unpackhi_epi8(a, z), b1 = _mm_unpackhi_epi8(b, z);
        const __m128i *wv = (const __m128i *)(const void *)w[r];
        s[0] = _mm_add_epi32(s[0], _mm_madd_epi16(_mm_unpacklo_epi16(a0, b0),
                                                  _mm_loadu_si128(wv)));
        s[1] = _mm_add_epi32(s[1], _mm_madd_epi16(_mm_unpackhi_epi16(a0, b0),
                                                  _mm_loadu_si128(wv + 1)));
        s[2] = _mm_add_epi32(s[2], _mm_madd_epi16(_mm_unpacklo_epi16(a1, b1),
                                                  _mm_loadu_si128(wv + 2)));
    }
    int32_t q[12];
    for (int v = 0; v < 3; v++)
        _mm_storeu_si128((__m128i *)(void *)(q + 4 * v), s[v]);
    for (int c = 0; c < 3; c++)
        out[c] = remap_out(q[c] + q[c + 3] + q[c + 6] + q[c + 9]);
}
#endif

typedef struct warp_line {
    const int32_t *a, *b; /* the strip's column terms */
    int32_t xr, yr;       /* the row's terms */
    int n;
} warp_line;

/* One row of a strip; k is a constant in each caller, so the inside
 * loops unroll. */
static inline __attribute__((always_inline)) void warp_row(const dlg_rgb8 *src,
                                                           const warp_line *l, const int16_t *tab,
                                                           int fill, uint8_t *out, int k,
                                                           bool avx2)
{
    const int back = k / 2 - 1;
    for (int x = 0; x < l->n; x++) {
        int32_t X = dlg_wrap_add(l->xr, l->a[x]) >> (AB_BITS - 5);
        int32_t Y = dlg_wrap_add(l->yr, l->b[x]) >> (AB_BITS - 5);
        const int16_t *w = tab + (size_t)((Y & (TAB - 1)) * TAB + (X & (TAB - 1))) * k * k;
        int sx = clamp_short(X >> 5) - back, sy = clamp_short(Y >> 5) - back;
        if (sx < 0 || sy < 0 || sx + k > src->w || sy + k > src->h) {
            border_pixel(src, sx, sy, w, k, fill, out + 3 * x);
            continue;
        }
#if defined(__SSE2__)
        /* its 16-byte reads stay in src: a row below, or 4 bytes to spare */
        if (k == 4 && (sy + k < src->h || sx + k + 2 <= src->w)) {
            cubic_sse2(src->px + (size_t)sy * src->stride + (size_t)sx * 3, src->stride,
                       cubic_pairs[(Y & (TAB - 1)) * TAB + (X & (TAB - 1))], out + 3 * x);
            continue;
        }
#endif
        if (k == 8 && avx2) {
            int32_t sum[3];
            dlg_lanczos4_avx2(src->px + (size_t)sy * src->stride + (size_t)sx * 3, src->stride, w,
                              sum);
            for (int c = 0; c < 3; c++)
                out[3 * x + c] = remap_out(sum[c]);
            continue;
        }
        int32_t r = 0, g = 0, bl = 0;
        for (int i = 0; i < k; i++) {
            const uint8_t *p = src->px + (size_t)(sy + i) * src->stride + (size_t)sx * 3;
            for (int j = 0; j < k; j++) {
                r += p[3 * j] * w[i * k + j];
                g += p[3 * j + 1] * w[i * k + j];
                bl += p[3 * j + 2] * w[i * k + j];
            }
        }
        out[3 * x] = remap_out(r);
        out[3 * x + 1] = remap_out(g);
        out[3 * x + 2] = remap_out(bl);
    }
}

void dlg_warp_taps(const dlg_rgb8 *src, const dlg_rgb8 *dst, const dlg_affine *inv, int fill,
                   int ksize)
{
    pthread_once(&tabs_once, fill_tables);
    const int16_t *tab = ksize == 4 ? cubic_tab[0] : lanczos_tab[0];
    const double *m = inv->m, scale = 1 << AB_BITS;
    const int32_t round = (1 << AB_BITS) >> 6;
    const bool avx2 = dlg_warp_have_avx2(); /* lanczos4's inside pixels */
    int32_t a[STRIP], b[STRIP];
    for (int x0 = 0; x0 < dst->w; x0 += STRIP) {
        warp_line l = {a, b, 0, 0, dst->w - x0 < STRIP ? dst->w - x0 : STRIP};
        for (int x = 0; x < l.n; x++) {
            a[x] = sat_round(m[0] * (x0 + x) * scale);
            b[x] = sat_round(m[3] * (x0 + x) * scale);
        }
        for (int y = 0; y < dst->h; y++) {
            l.xr = dlg_wrap_add(sat_round((m[1] * y + m[2]) * scale), round);
            l.yr = dlg_wrap_add(sat_round((m[4] * y + m[5]) * scale), round);
            uint8_t *out = dst->px + (size_t)y * dst->stride + (size_t)x0 * 3;
            if (ksize == 4)
                warp_row(src, &l, tab, fill, out, 4, false);
            else
                warp_row(src, &l, tab, fill, out, 8, avx2);
        }
    }
}

/* ---- resize ----------------------------------------------------------- */

/* Output d's first tap (before the edge clamp) and its weights in 1/2048:
 * source coordinate (d + 0.5) scale - 0.5, in float. */
static int taps_of(int d, double scale, int k, int16_t *w)
{
    float f = (float)((d + 0.5) * scale - 0.5);
    int s = (int)floorf(f);
    float c[8];
    dlg_interp_coeffs(f - (float)s, k, c);
    for (int i = 0; i < k; i++)
        w[i] = sat16(c[i] * RESIZE_ONE);
    return s - k / 2 + 1;
}

static inline int clampi(int v, int hi) { return v < 0 ? 0 : v > hi ? hi : v; }

/* The strip's columns, one entry per output value (3 per pixel): the
 * source byte of each tap (edges replicated) and its weight. */
typedef struct strip_cols {
    int32_t at[8][STRIP * 3];
    int16_t w[8][STRIP * 3];
    int n, k; /* values, taps */
} strip_cols;

static void strip_of(int x0, int n, double scale, int w, strip_cols *sc)
{
    sc->n = 3 * n;
    for (int x = 0; x < n; x++) {
        int16_t wt[8];
        int first = taps_of(x0 + x, scale, sc->k, wt);
        for (int j = 0; j < sc->k; j++)
            for (int c = 0; c < 3; c++) {
                sc->at[j][3 * x + c] = 3 * clampi(first + j, w - 1) + c;
                sc->w[j][3 * x + c] = wt[j];
            }
    }
}

/* One source row through the strip's columns: sum of taps times weights
 * (integers: any order gives OpenCV's sums). */
static void hpass(const uint8_t *row, const strip_cols *sc, int32_t *out)
{
    for (int e = 0; e < sc->n; e++)
        out[e] = row[sc->at[0][e]] * sc->w[0][e] + row[sc->at[1][e]] * sc->w[1][e] +
                 row[sc->at[2][e]] * sc->w[2][e] + row[sc->at[3][e]] * sc->w[3][e];
    for (int j = 4; j < sc->k; j += 4)
        for (int e = 0; e < sc->n; e++)
            out[e] += row[sc->at[j][e]] * sc->w[j][e] + row[sc->at[j + 1][e]] * sc->w[j + 1][e] +
                      row[sc->at[j + 2][e]] * sc->w[j + 2][e] +
                      row[sc->at[j + 3][e]] * sc->w[j + 3][e];
}

/* Cubic's vector loop: from the last row up, in float, rounded to
 * nearest even, saturated to bytes. */
static void vpass_float(int32_t *const rows[4], const float bf[4], int e0, int e1, uint8_t *out)
{
    int e = e0;
#if defined(__SSE2__)
    const __m128 b0 = _mm_set1_ps(bf[0]), b1 = _mm_set1_ps(bf[1]), b2 = _mm_set1_ps(bf[2]),
                 b3 = _mm_set1_ps(bf[3]);
    for (; e + 8 <= e1; e += 8) {
        __m128i v[2];
        for (int h = 0; h < 2; h++) {
            const int i = e + 4 * h;
#define ROW(r) _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)(const void *)(rows[r] + i)))
            __m128 t = _mm_mul_ps(ROW(3), b3);
            t = _mm_add_ps(_mm_mul_ps(ROW(2), b2), t);
            t = _mm_add_ps(_mm_mul_ps(ROW(1), b1), t);
            t = _mm_add_ps(_mm_mul_ps(ROW(0), b0), t);
#undef ROW
            v[h] = _mm_cvtps_epi32(t);
        }
        __m128i p = _mm_packs_epi32(v[0], v[1]);
        _mm_storel_epi64((__m128i *)(void *)(out + e), _mm_packus_epi16(p, p));
    }
#endif
    for (; e < e1; e++) {
        float t = (float)rows[3][e] * bf[3];
        t = (float)rows[2][e] * bf[2] + t;
        t = (float)rows[1][e] * bf[1] + t;
        t = (float)rows[0][e] * bf[0] + t;
        out[e] = sat8(dlg_round_even(t));
    }
}

/* The rows' combination for values [e0, e0 + cnt) of the output row (e:
 * its index in the whole row, which picks OpenCV's loop): cubic's vector
 * loop below vec_end, else the scalar loop, which sums in int (wrapping,
 * as OpenCV's does on extreme lanczos4 inputs) and rounds half up. */
static void vpass(int32_t *const rows[8], const int16_t *beta, int k, int e0, int cnt,
                  int vec_end, uint8_t *out)
{
    int nf = k == 4 ? (vec_end - e0 < 0 ? 0 : vec_end - e0 < cnt ? vec_end - e0 : cnt) : 0;
    if (nf > 0) {
        float bf[4];
        for (int i = 0; i < 4; i++)
            bf[i] = (float)beta[i] * (1.f / (RESIZE_ONE * RESIZE_ONE));
        vpass_float(rows, bf, 0, nf, out);
    }
    uint32_t acc[STRIP * 3];
    for (int e = nf; e < cnt; e++)
        acc[e] = (1u << 21) + (uint32_t)rows[0][e] * (uint32_t)(int32_t)beta[0];
    for (int i = 1; i < k; i++)
        for (int e = nf; e < cnt; e++)
            acc[e] += (uint32_t)rows[i][e] * (uint32_t)(int32_t)beta[i];
    for (int e = nf; e < cnt; e++)
        out[e] = sat8((int32_t)acc[e] >> 22);
}

/* One strip of output columns, every row: source rows are summed once
 * each into a ring of k rows (slot = row mod k). */
static void resize_strip(const dlg_rgb8 *src, const dlg_rgb8 *dst, int x0, const strip_cols *sc,
                         double scale_y)
{
    const int k = sc->k, vec_end = dst->w * 3 / 8 * 8;
    int32_t ring[8][STRIP * 3];
    int held[8];
    for (int i = 0; i < k; i++)
        held[i] = -1;
    for (int y = 0; y < dst->h; y++) {
        int16_t beta[8];
        int first = taps_of(y, scale_y, k, beta);
        int32_t *rows[8];
        for (int i = 0; i < k; i++) {
            int r = clampi(first + i, src->h - 1), slot = r % k;
            if (held[slot] != r) {
                hpass(src->px + (size_t)r * src->stride, sc, ring[slot]);
                held[slot] = r;
            }
            rows[i] = ring[slot];
        }
        vpass(rows, beta, k, x0 * 3, sc->n, vec_end,
              dst->px + (size_t)y * dst->stride + (size_t)x0 * 3);
    }
}

void dlg_resize_taps(const dlg_rgb8 *src, const dlg_rgb8 *dst, int ksize)
{
    /* OpenCV's scale is the reciprocal of the size ratio, not w / nw */
    double scale_x = 1.0 / ((double)dst->w / src->w), scale_y = 1.0 / ((double)dst->h / src->h);
    strip_cols sc;
    sc.k = ksize;
    for (int x0 = 0; x0 < dst->w; x0 += STRIP) {
        strip_of(x0, dst->w - x0 < STRIP ? dst->w - x0 : STRIP, scale_x, src->w, &sc);
        resize_strip(src, dst, x0, &sc, scale_y);
    }
}
