/* The affine warp (see loader_affine.h).  Source coordinates are fixed
 * point, as OpenCV's: 1/2^bits of a pixel, weights the products of the
 * two fractions, so a value is sum(p w) / 2^(2 bits) rounded, in integers.
 * Each output row is split into the run whose taps all lie inside the
 * source (a loop without bounds checks) and the edges, where every tap is
 * checked. */
#include "loader_affine.h"
#include "loader_interp.h"
#include "loader_warp_simd.h"

#include <math.h>

/* Coordinates are kept within +-LIMIT pixels (further out is all border)
 * and offset by OFFSET pixels, so that shifts and masks floor them.  They
 * step along a row in integers with EXTRA more fraction bits than the
 * sampling's, so that both paths below compute the very same taps. */
#define LIMIT 524288.0 /* 2^19 */
#define OFFSET 2097152 /* 2^21 */
#define EXTRA 16

typedef struct row_map {
    double x0, dx, y0, dy; /* source coordinate of output x: (x0 + dx x, y0 + dy x) */
    int64_t bx, sx, by, sy; /* the same in fixed point: (bx + sx x) >> EXTRA */
    int bits;               /* DLG_WARP_NEAREST (0) or the fraction bits */
} row_map;

static double clampd(double v, double lim) { return v < -lim ? -lim : v > lim ? lim : v; }

/* v + OFFSET pixels, in 1/2^(bits + EXTRA), plus half a sampling unit:
 * the shift by EXTRA then rounds to the nearest 1/2^bits. */
static int64_t start_of(double v, int bits)
{
    return (int64_t)llround((clampd(v, LIMIT) + OFFSET) * ldexp(1, bits + EXTRA)) +
           ((int64_t)1 << (EXTRA - 1));
}

static row_map map_row(const dlg_affine *inv, int y, int bits)
{
    const double *m = inv->m;
    row_map r = {m[1] * y + m[2], clampd(m[0], 1024), m[4] * y + m[5], clampd(m[3], 1024), 0, 0,
                 0, 0, bits};
    r.bx = start_of(r.x0, bits);
    r.by = start_of(r.y0, bits);
    r.sx = (int64_t)llround(r.dx * ldexp(1, bits + EXTRA));
    r.sy = (int64_t)llround(r.dy * ldexp(1, bits + EXTRA));
    return r;
}

typedef struct tap_pos {
    int ix, iy, fx, fy; /* the top-left tap, the fractions in 1/2^bits */
} tap_pos;

static inline tap_pos position(const row_map *r, int x)
{
    int64_t X = (r->bx + r->sx * x) >> EXTRA, Y = (r->by + r->sy * x) >> EXTRA;
    int64_t mask = ((int64_t)1 << r->bits) - 1;
    return (tap_pos){(int)((X >> r->bits) - OFFSET), (int)((Y >> r->bits) - OFFSET),
                     (int)(X & mask), (int)(Y & mask)};
}

/* Whether every tap of output x lies inside the source: bilinear reads
 * (ix, iy) to (ix + 1, iy + 1), nearest (ix, iy) alone. */
static bool inside(const row_map *r, int x, int w, int h)
{
    tap_pos t = position(r, x);
    int reach = r->bits ? 1 : 0;
    return t.ix >= 0 && t.iy >= 0 && t.ix + reach < w && t.iy + reach < h;
}

/* [*lo, *hi) narrowed to about the xs where lo_v <= v0 + dv x <= hi_v
 * (fast_run settles the ends with inside()). */
static void clip_run(double v0, double dv, double lo_v, double hi_v, double *lo, double *hi)
{
    if (dv == 0) {
        if (v0 < lo_v || v0 > hi_v)
            *hi = *lo;
        return;
    }
    double a = (lo_v - v0) / dv, b = (hi_v - v0) / dv;
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    if (a > *lo)
        *lo = a;
    if (b + 1 < *hi)
        *hi = b + 1;
}

/* The run [*xa, *xb) of outputs whose taps are all inside.  The set is an
 * interval (each coordinate is monotonic in x), so once both ends are
 * inside, everything between is. */
static void fast_run(const row_map *r, int n, int w, int h, int *xa, int *xb)
{
    double lo = 0, hi = n, reach = r->bits ? 1 : 0;
    clip_run(r->x0, r->dx, 0, w - 1 - reach, &lo, &hi);
    clip_run(r->y0, r->dy, 0, h - 1 - reach, &lo, &hi);
    int a = lo > n ? n : (int)ceil(lo), b = hi > lo ? (hi > n ? n : (int)floor(hi)) : a;
    a = a < 0 ? 0 : a;
    b = b < a ? a : b;
    while (a > 0 && inside(r, a - 1, w, h)) /* the estimate may be a pixel short */
        a--;
    while (b < n && inside(r, b, w, h))
        b++;
    while (a < b && !inside(r, a, w, h))
        a++;
    while (b > a && !inside(r, b - 1, w, h))
        b--;
    *xa = a;
    *xb = b;
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One channel of the bilinear blend: the weights sum to 2^(2 bits). */
static inline __attribute__((always_inline)) uint8_t blend(const uint8_t *p, const uint8_t *q,
                                                           const int32_t w[4], int bits)
{
    return (uint8_t)((p[0] * w[0] + p[3] * w[1] + q[0] * w[2] + q[3] * w[3] +
                      (1 << (2 * bits - 1))) >> (2 * bits));
}

/* bits is a constant in each caller, so the shifts are too. */
static inline __attribute__((always_inline)) void bilinear_bits(const dlg_rgb8 *src,
                                                                const row_map *r, uint8_t *out,
                                                                int xa, int xb, int bits)
{
    const int32_t one = 1 << bits;
    for (int x = xa; x < xb; x++) {
        tap_pos t = position(r, x); /* inside: fast_run checked its ends */
        const uint8_t *p = src->px + (size_t)t.iy * src->stride + (size_t)t.ix * 3;
        const uint8_t *q = p + src->stride;
        const int32_t w[4] = {(one - t.fx) * (one - t.fy), t.fx * (one - t.fy),
                              (one - t.fx) * t.fy, t.fx * t.fy};
        out[3 * x] = blend(p, q, w, bits);
        out[3 * x + 1] = blend(p + 1, q + 1, w, bits);
        out[3 * x + 2] = blend(p + 2, q + 2, w, bits);
    }
}

static void bilinear_run(const dlg_rgb8 *src, const row_map *r, uint8_t *out, int xa, int xb)
{
    if (r->bits == DLG_WARP_AFFINE_BITS)
        bilinear_bits(src, r, out, xa, xb, DLG_WARP_AFFINE_BITS);
    else if (r->bits == DLG_WARP_RESIZE_BITS)
        bilinear_bits(src, r, out, xa, xb, DLG_WARP_RESIZE_BITS);
    else
        bilinear_bits(src, r, out, xa, xb, r->bits);
}

static void nearest_run(const dlg_rgb8 *src, const row_map *r, uint8_t *out, int xa, int xb)
{
    for (int x = xa; x < xb; x++) {
        tap_pos t = position(r, x);
        const uint8_t *p = src->px + (size_t)t.iy * src->stride + (size_t)t.ix * 3;
        out[3 * x] = p[0];
        out[3 * x + 1] = p[1];
        out[3 * x + 2] = p[2];
    }
}

/* Channel c of source pixel (ix, iy), the border rule outside. */
static int32_t tap(const dlg_rgb8 *src, int ix, int iy, int c, int fill)
{
    if (ix < 0 || iy < 0 || ix >= src->w || iy >= src->h) {
        if (fill >= 0)
            return fill;
        ix = clampi(ix, 0, src->w - 1);
        iy = clampi(iy, 0, src->h - 1);
    }
    return src->px[(size_t)iy * src->stride + (size_t)ix * 3 + (size_t)c];
}

/* Outputs [xa, xb) with every tap checked (the row's edges). */
static void checked_run(const dlg_rgb8 *src, const row_map *r, uint8_t *out, int xa, int xb,
                        int fill)
{
    const int32_t one = 1 << r->bits, sh = 2 * r->bits, half = sh ? 1 << (sh - 1) : 0;
    for (int x = xa; x < xb; x++) {
        tap_pos t = position(r, x);
        int32_t w00 = (one - t.fx) * (one - t.fy), w01 = t.fx * (one - t.fy);
        int32_t w10 = (one - t.fx) * t.fy, w11 = t.fx * t.fy;
        for (int c = 0; c < 3; c++) {
            int32_t v = tap(src, t.ix, t.iy, c, fill) * w00;
            if (r->bits) /* nearest: the one tap, weight 1 */
                v += tap(src, t.ix + 1, t.iy, c, fill) * w01 +
                     tap(src, t.ix, t.iy + 1, c, fill) * w10 +
                     tap(src, t.ix + 1, t.iy + 1, c, fill) * w11;
            out[3 * x + c] = (uint8_t)((v + half) >> sh);
        }
    }
}

/* cv::warpAffine's own fixed point (imgwarp.cpp), for bilinear at 1/32:
 * source coordinates in 1/1024 pixel, the x term rounded once per column
 * (adelta, bdelta) and the row term once per row, their sum shifted to
 * 1/32.  This is OpenCV's rounding, not the exact map's, so the taps and
 * the bytes are cv::warpAffine's.  Columns go in strips of STRIP so that
 * the per-column terms live on the stack and are computed once per strip,
 * not once per pixel.  Each row's inside run goes through the AVX2 kernel
 * (loader_warp_avx2.c, the same integers 8 outputs at a time) where the
 * CPU has it, through cv_fast otherwise. */
#define AB_BITS 10
#define STRIP 256

typedef struct cv_strip {
    int32_t a[STRIP], b[STRIP]; /* cvRound(m0 x 1024), cvRound(m3 x 1024) */
} cv_strip;

static int32_t sat_round(double v)
{
    v = v < -2147483648.0 ? -2147483648.0 : v > 2147483647.0 ? 2147483647.0 : v;
    return (int32_t)lrint(v); /* cvRound: to nearest, ties to even */
}

/* One output's source coordinate in 1/32 pixel. */
static inline int32_t cv_at(int32_t r, int32_t d)
{
    return dlg_wrap_add(r, d) >> (AB_BITS - DLG_WARP_AFFINE_BITS);
}

static inline bool cv_inside(const dlg_rgb8 *src, const cv_strip *st, int32_t xr, int32_t yr,
                             int x)
{
    int32_t ix = cv_at(xr, st->a[x]) >> DLG_WARP_AFFINE_BITS;
    int32_t iy = cv_at(yr, st->b[x]) >> DLG_WARP_AFFINE_BITS;
    return ix >= 0 && iy >= 0 && ix < src->w - 1 && iy < src->h - 1;
}

/* Outputs [xa, xb) of the strip's row, every tap inside: no checks. */
static void cv_fast(const dlg_rgb8 *src, const cv_strip *st, int32_t xr, int32_t yr, uint8_t *out,
                    int xa, int xb)
{
    const int bits = DLG_WARP_AFFINE_BITS, one = 1 << bits, mask = one - 1;
    const size_t stride = src->stride;
    for (int x = xa; x < xb; x++) {
        int32_t X = cv_at(xr, st->a[x]), Y = cv_at(yr, st->b[x]);
        int32_t fx = X & mask, fy = Y & mask;
        const uint8_t *p = src->px + (size_t)(Y >> bits) * stride + (size_t)(X >> bits) * 3;
        const uint8_t *q = p + stride;
        const int32_t w[4] = {(one - fx) * (one - fy), fx * (one - fy), (one - fx) * fy, fx * fy};
        out[3 * x] = blend(p, q, w, bits);
        out[3 * x + 1] = blend(p + 1, q + 1, w, bits);
        out[3 * x + 2] = blend(p + 2, q + 2, w, bits);
    }
}

/* Outputs [xa, xb) with every tap checked (the border).  Constant border:
 * an output whose four taps all lie outside is fill itself (the weights
 * sum to one). */
static void cv_checked(const dlg_rgb8 *src, const cv_strip *st, int32_t xr, int32_t yr,
                       uint8_t *out, int xa, int xb, int fill)
{
    const int bits = DLG_WARP_AFFINE_BITS, one = 1 << bits, mask = one - 1;
    for (int x = xa; x < xb; x++) {
        int32_t X = cv_at(xr, st->a[x]), Y = cv_at(yr, st->b[x]);
        int ix = X >> bits, iy = Y >> bits, fx = X & mask, fy = Y & mask;
        if (ix < -1 || iy < -1 || ix >= src->w || iy >= src->h) {
            out[3 * x] = out[3 * x + 1] = out[3 * x + 2] = (uint8_t)fill;
            continue;
        }
        const int32_t w[4] = {(one - fx) * (one - fy), fx * (one - fy), (one - fx) * fy, fx * fy};
        for (int c = 0; c < 3; c++) {
            int32_t v = tap(src, ix, iy, c, fill) * w[0] + tap(src, ix + 1, iy, c, fill) * w[1] +
                        tap(src, ix, iy + 1, c, fill) * w[2] +
                        tap(src, ix + 1, iy + 1, c, fill) * w[3];
            out[3 * x + c] = (uint8_t)((v + (1 << (2 * bits - 1))) >> (2 * bits));
        }
    }
}

/* One row of the strip: X and Y are monotonic in x, so the outputs with
 * every tap inside are one run; the border on either side is checked.
 * simd: the run goes through the AVX2 kernel, its last few through C. */
static void cv_row(const dlg_rgb8 *src, const cv_strip *st, int32_t xr, int32_t yr, uint8_t *out,
                   int n, int fill, bool simd)
{
    int xa = 0, xb = n;
    while (xa < n && !cv_inside(src, st, xr, yr, xa))
        xa++;
    while (xb > xa && !cv_inside(src, st, xr, yr, xb - 1))
        xb--;
    cv_checked(src, st, xr, yr, out, 0, xa, fill);
    int x = xa;
    if (simd) {
        dlg_warp_row r = {src->px, (int32_t)src->stride, st->a, st->b, xr, yr};
        x = dlg_warp_run_avx2(&r, out, xa, xb);
    }
    cv_fast(src, st, xr, yr, out, x, xb);
    cv_checked(src, st, xr, yr, out, xb, n, fill);
}

/* Whether the AVX2 kernel may run on src: the CPU has it, and every tap's
 * byte offset fits its 32-bit gather indices. */
static bool use_simd(const dlg_rgb8 *src)
{
    return src->w >= 2 && src->h >= 2 && (uint64_t)src->h * src->stride <= INT32_MAX &&
           dlg_warp_have_avx2();
}

static void warp_cv(const dlg_rgb8 *src, const dlg_rgb8 *dst, const dlg_affine *inv, int fill)
{
    const double *m = inv->m, scale = 1 << AB_BITS;
    const int32_t round = (1 << AB_BITS) >> (DLG_WARP_AFFINE_BITS + 1); /* half a 1/32 */
    const bool simd = use_simd(src);
    cv_strip st;
    for (int x0 = 0; x0 < dst->w; x0 += STRIP) {
        int n = dst->w - x0 < STRIP ? dst->w - x0 : STRIP;
        for (int x = 0; x < n; x++) {
            st.a[x] = sat_round(m[0] * (x0 + x) * scale);
            st.b[x] = sat_round(m[3] * (x0 + x) * scale);
        }
        for (int y = 0; y < dst->h; y++) {
            int32_t xr = dlg_wrap_add(sat_round((m[1] * y + m[2]) * scale), round);
            int32_t yr = dlg_wrap_add(sat_round((m[4] * y + m[5]) * scale), round);
            cv_row(src, &st, xr, yr, dst->px + (size_t)y * dst->stride + (size_t)x0 * 3, n, fill,
                   simd);
        }
    }
}

/* One output of cv::warpAffine's nearest: src's pixel or fill. */
static inline void nearest_px(const dlg_rgb8 *src, const dlg_warp_row *r, int x, int fill,
                              uint8_t *o)
{
    int ix = clampi(dlg_wrap_add(r->xr, r->a[x]) >> AB_BITS, -32768, 32767);
    int iy = clampi(dlg_wrap_add(r->yr, r->b[x]) >> AB_BITS, -32768, 32767);
    if ((unsigned)ix < (unsigned)src->w && (unsigned)iy < (unsigned)src->h) {
        const uint8_t *p = src->px + (size_t)iy * src->stride + (size_t)ix * 3;
        o[0] = p[0];
        o[1] = p[1];
        o[2] = p[2];
    } else {
        o[0] = o[1] = o[2] = (uint8_t)fill;
    }
}

/* cv::warpAffine's nearest: the same 1/1024 terms, their sum rounded to
 * the nearest pixel (half a pixel added, then shifted), kept to 16 bits
 * as OpenCV's map is; outside src, fill.  Blocks of 8 wholly inside go
 * through AVX2 where the CPU has it (a gather a block). */
static void warp_cv_nearest(const dlg_rgb8 *src, const dlg_rgb8 *dst, const dlg_affine *inv,
                            int fill)
{
    const double *m = inv->m, scale = 1 << AB_BITS;
    const int32_t round = (1 << AB_BITS) / 2;
    const bool simd = use_simd(src);
    cv_strip st;
    for (int x0 = 0; x0 < dst->w; x0 += STRIP) {
        int n = dst->w - x0 < STRIP ? dst->w - x0 : STRIP;
        for (int x = 0; x < n; x++) {
            st.a[x] = sat_round(m[0] * (x0 + x) * scale);
            st.b[x] = sat_round(m[3] * (x0 + x) * scale);
        }
        for (int y = 0; y < dst->h; y++) {
            int32_t xr = dlg_wrap_add(sat_round((m[1] * y + m[2]) * scale), round);
            int32_t yr = dlg_wrap_add(sat_round((m[4] * y + m[5]) * scale), round);
            uint8_t *out = dst->px + (size_t)y * dst->stride + (size_t)x0 * 3;
            dlg_warp_row r = {src->px, (int32_t)src->stride, st.a, st.b, xr, yr};
            for (int x = 0; x < n;) {
                if (simd) /* whole blocks inside; the next 8 (or the rest) in C */
                    x = dlg_warp_nearest_avx2(&r, src->w, src->h, out, x, n);
                for (int stop = simd && n - x > 8 ? x + 8 : n; x < stop; x++)
                    nearest_px(src, &r, x, fill, out + 3 * x);
            }
        }
    }
}

void dlg_warp_rgb(const dlg_rgb8 *src, const dlg_rgb8 *dst, const dlg_affine *inv, int fill,
                  int interp)
{
    if (interp == DLG_WARP_NEAREST && fill >= 0) {
        warp_cv_nearest(src, dst, inv, fill);
        return;
    }
    if (interp == DLG_WARP_CUBIC || interp == DLG_WARP_LANCZOS4) {
        dlg_warp_taps(src, dst, inv, fill, interp == DLG_WARP_CUBIC ? 4 : 8);
        return;
    }
    if (interp == DLG_WARP_AREA) /* cv::warpAffine's INTER_AREA is INTER_LINEAR */
        interp = DLG_WARP_AFFINE_BITS;
    if (interp == DLG_WARP_AFFINE_BITS && fill >= 0) {
        warp_cv(src, dst, inv, fill);
        return;
    }
    for (int y = 0; y < dst->h; y++) {
        uint8_t *out = dst->px + (size_t)y * dst->stride;
        row_map r = map_row(inv, y, interp);
        int xa, xb;
        fast_run(&r, dst->w, src->w, src->h, &xa, &xb);
        checked_run(src, &r, out, 0, xa, fill);
        if (interp == DLG_WARP_NEAREST)
            nearest_run(src, &r, out, xa, xb);
        else
            bilinear_run(src, &r, out, xa, xb);
        checked_run(src, &r, out, xb, dst->w, fill);
    }
}

const char *dlg_warp_isa(void)
{
    return dlg_warp_have_avx2() ? "avx2 (dispatched)" : "scalar C (x86-64 baseline)";
}

void dlg_affine_invert(const dlg_affine *fwd, dlg_affine *inv)
{
    const double *m = fwd->m;
    double d = m[0] * m[4] - m[1] * m[3];
    d = d != 0 ? 1.0 / d : 0.0;
    double a11 = m[4] * d, a22 = m[0] * d, a12 = -m[1] * d, a21 = -m[3] * d;
    inv->m[0] = a11;
    inv->m[1] = a12;
    inv->m[2] = -a11 * m[2] - a12 * m[5];
    inv->m[3] = a21;
    inv->m[4] = a22;
    inv->m[5] = -a21 * m[2] - a22 * m[5];
}

void dlg_affine_resize(int w, int h, int nw, int nh, dlg_affine *inv)
{
    double sx = (double)w / nw, sy = (double)h / nh;
    *inv = (dlg_affine){{sx, 0, 0.5 * sx - 0.5, 0, sy, 0.5 * sy - 0.5}};
}

/* resizeNN's source index of output i: floor(i * (1 / (n_out / n_in))) in
 * double, as OpenCV computes it (not i * n_in / n_out: the reciprocal's
 * rounding moves some exact quotients down one), the last pixel at most. */
static int nn_index(int i, double inv_scale, int n_in)
{
    int s = (int)floor(i * inv_scale);
    return s < n_in - 1 ? s : n_in - 1;
}

/* cv::resize INTER_NEAREST: columns in strips, their byte offsets on the
 * stack. */
static void resize_nearest(const dlg_rgb8 *src, const dlg_rgb8 *dst)
{
    const double ifx = 1.0 / ((double)dst->w / src->w), ify = 1.0 / ((double)dst->h / src->h);
    int32_t ofs[STRIP];
    for (int x0 = 0; x0 < dst->w; x0 += STRIP) {
        int n = dst->w - x0 < STRIP ? dst->w - x0 : STRIP;
        for (int x = 0; x < n; x++)
            ofs[x] = 3 * nn_index(x0 + x, ifx, src->w);
        for (int y = 0; y < dst->h; y++) {
            const uint8_t *row = src->px + (size_t)nn_index(y, ify, src->h) * src->stride;
            uint8_t *out = dst->px + (size_t)y * dst->stride + (size_t)x0 * 3;
            for (int x = 0; x < n; x++) {
                out[3 * x] = row[ofs[x]];
                out[3 * x + 1] = row[ofs[x] + 1];
                out[3 * x + 2] = row[ofs[x] + 2];
            }
        }
    }
}

void dlg_resize_rgb(const dlg_rgb8 *src, const dlg_rgb8 *dst, int interp)
{
    if (interp == DLG_WARP_NEAREST) {
        resize_nearest(src, dst);
        return;
    }
    if (interp == DLG_WARP_CUBIC || interp == DLG_WARP_LANCZOS4) {
        dlg_resize_taps(src, dst, interp == DLG_WARP_CUBIC ? 4 : 8);
        return;
    }
    if (interp == DLG_WARP_AREA) {
        dlg_resize_area(src, dst);
        return;
    }
    if (interp == DLG_WARP_RESIZE_BITS) {
        dlg_resize_linear(src, dst, false);
        return;
    }
    dlg_affine inv;
    dlg_affine_resize(src->w, src->h, dst->w, dst->h, &inv);
    dlg_warp_rgb(src, dst, &inv, -1, interp);
}

void dlg_mx_affine(float shear, int angle, float scale, float ratio, int w, int h,
                   dlg_affine *fwd, int *nw, int *nh)
{
    dlg_mx_affine_sized(shear, angle, scale, ratio, w, h, 0, 1e10f, fwd, nw, nh);
}

/* MXNet's min/max_img_size clamp of a side, in float (std::max/std::min). */
static float clamp_side(float v, float lo, float hi)
{
    v = hi < v ? hi : v;
    return v < lo ? lo : v;
}

void dlg_mx_affine_sized(float shear, int angle, float scale, float ratio, int w, int h,
                         float min_size, float max_size, dlg_affine *fwd, int *nw, int *nh)
{
    /* MXNet computes these in float (a CV_32F matrix); so do we */
    float a = (float)cos(angle / 180.0 * M_PI), b = (float)sin(angle / 180.0 * M_PI);
    float hs = 2 * scale / (1 + ratio), ws = ratio * hs;
    float new_w = clamp_side(scale * (float)w, min_size, max_size);
    float new_h = clamp_side(scale * (float)h, min_size, max_size);
    float m00 = hs * a - shear * b * ws, m01 = hs * b + shear * a * ws;
    float m10 = -b * ws, m11 = a * ws;
    float cw = m00 * (float)w + m01 * (float)h, ch = m10 * (float)w + m11 * (float)h;
    *fwd = (dlg_affine){{m00, m01, (new_w - cw) / 2, m10, m11, (new_h - ch) / 2}};
    *nw = (int)new_w; /* cv::Size(float, float) truncates */
    *nh = (int)new_h;
}
