/* RGB <-> HLS in OpenCV's 8-bit units (see loader_hls.h).  Pixels are taken
 * apart into float planes of CHUNK, converted by loops of selects the
 * compiler vectorises (no branches, no calls), and put back together.
 * Every operation is a correctly rounded IEEE one in OpenCV's order, so the
 * bytes are OpenCV's, including two of its own quirks:
 * - its RGB2HLS hue is a multiply-add (v_muladd), fused on CPUs with FMA,
 *   where it rounds once instead of twice and so moves some hue ties by a
 *   unit;
 * - its RGB2HLS_b works in blocks of 256 pixels of a row, and the last
 *   (block % vector width) pixels of each block take its scalar loop, whose
 *   S divides by (2 - max) - min, not 2 - (max + min), and whose hue for a
 *   red maximum is never fused (the compiler fuses the green and blue ones
 *   in the FMA build): a level of S or H apart on a few colours.  Its
 *   HLS2RGB scalar loop gives the vector loop's bytes on all 2^24 inputs.
 * The loops are built twice on x86-64 -- for the baseline (SSE2, unfused,
 * OpenCV's 4 lanes) and for AVX2 with FMA (fused, 8 lanes) -- and the CPU
 * picks, as OpenCV's dispatch does.  The file is built with
 * -ffp-contract=off: nothing else fuses. */
#include "loader_hls.h"

#include <float.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define DLG_HLS_AVX2 1
#endif

#define CHUNK 256 /* OpenCV's BLOCK_SIZE: the scalar tails fall where its do */

/* Round half to even, as cvRound and the vector paths' v_round (the
 * current rounding mode), for |x| < 2^22: adding 1.5 * 2^23 leaves no
 * fraction bits.  Plain arithmetic, so it vectorises. */
static inline float rne(float x) { return (x + 0x1.8p23f) - 0x1.8p23f; }

static inline float sat8(float x)
{
    x = rne(x);
    x = x < 0 ? 0 : x;
    return x > 255 ? 255 : x;
}

/* RGB2HLS_f: process (the vector path) or, tail, its scalar loop; then
 * RGB2HLS_b's rounding.  r, g, b are bytes, the results whole bytes in
 * floats.  Selects are one level deep each: GCC does not if-convert deeper
 * nests, and the loop would stay scalar. */
static inline __attribute__((always_inline)) void to_hls(float r, float g, float b, float *ph,
                                                         float *pl, float *ps, bool fused,
                                                         bool tail)
{
    r *= 1.f / 255.f;
    g *= 1.f / 255.f;
    b *= 1.f / 255.f;
    float vmax = r > g ? r : g, vmin = r < g ? r : g;
    vmax = vmax > b ? vmax : b;
    vmin = vmin < b ? vmin : b;
    float diff = vmax - vmin, msum = vmax + vmin, l = msum * 0.5f;
    int hue = diff > FLT_EPSILON; /* else grey: H and S are 0 */
    /* grey lanes divide by 1, not by 0: their results are dropped anyway */
    float den = l < 0.5f ? msum : tail ? (2.0f - vmax) - vmin : 2.0f - msum;
    float dd = hue ? diff : 1.0f;
    den = hue ? den : 1.0f;
    float s = diff / den;
    /* the largest channel's sector: red, else green, else blue */
    float num = r - g, part = 240.f, red_part = g < b ? 360.f : 0.f;
    num = vmax == g ? b - r : num;
    part = vmax == g ? 120.f : part;
    num = vmax == r ? g - b : num;
    part = vmax == r ? red_part : part;
    float inv = 60.f / dd;
    float hu = num * inv + part, h = hu;
    if (fused) { /* the scalar loop's red hue: a product, then + 360 apart */
        float hf = __builtin_fmaf(num, inv, part);
        h = tail && vmax == r ? hu : hf;
    }
    h *= 0.5f; /* 180/360 */
    float hh = sat8(h), ss = sat8(s * 255.f);
    *ph = hue ? hh : 0;
    *pl = sat8(l * 255.f);
    *ps = hue ? ss : 0;
}

/* HLS2RGB_f::process (the vector path: sector from truncations, the four
 * candidates, selects) and HLS2RGB_b's scaling and rounding; h, l, s are
 * bytes in floats. */
static inline __attribute__((always_inline)) void to_rgb(float h, float l, float s, float *pr,
                                                         float *pg, float *pb)
{
    l *= 1.f / 255.f;
    s *= 1.f / 255.f;
    float ls = l * s, e0 = l <= 0.5f ? ls : s - ls;
    float raw = h * (6.f / 180.f);
    float pre = (float)(int)raw, hs = raw - pre;
    float sector = pre - 6.0f * (float)(int)(raw * (1.0f / 6.0f)), e1 = hs + hs;
    float t0 = l + e0, t1 = l - e0, t2 = (l + e0) - e0 * e1, t3 = (l - e0) + e0 * e1;
    /* OpenCV's nested selects, one level at a time (see to_hls) */
    float b = t2, g = t1, r = t3;
    b = sector <= 4 ? t0 : b;
    b = sector <= 2 ? t3 : b;
    b = sector < 2 ? t1 : b;
    g = sector < 4 ? t2 : g;
    g = sector <= 2 ? t0 : g;
    g = sector < 1 ? t3 : g;
    r = sector < 4 ? t1 : r;
    r = sector < 2 ? t2 : r;
    r = sector < 1 ? t0 : r;
    r = sector > 4 ? t0 : r;
    *pr = sat8(r * 255.f);
    *pg = sat8(g * 255.f);
    *pb = sat8(b * 255.f);
}

static inline float clampf(float v, float lo, float hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

typedef struct planes {
    float a[CHUNK], b[CHUNK], c[CHUNK];
} planes;

static void split(const uint8_t *px, int n, planes *p)
{
    for (int i = 0; i < n; i++) {
        p->a[i] = px[3 * i];
        p->b[i] = px[3 * i + 1];
        p->c[i] = px[3 * i + 2];
    }
}

static void join(const planes *p, int n, uint8_t *px)
{
    for (int i = 0; i < n; i++) {
        px[3 * i] = (uint8_t)(int)p->a[i];
        px[3 * i + 1] = (uint8_t)(int)p->b[i];
        px[3 * i + 2] = (uint8_t)(int)p->c[i];
    }
}

/* The per-plane loops, n <= CHUNK pixels (one block of a row) in place;
 * fused: see the top.  RGB2HLS: whole vectors of OpenCV's lanes, then its
 * scalar tail. */
static inline __attribute__((always_inline)) void hls_loop(planes *p, int n, bool fused)
{
    float *restrict r = p->a, *restrict g = p->b, *restrict b = p->c;
    int lanes = fused ? 8 : 4, nv = n - n % lanes;
    for (int i = 0; i < nv; i++)
        to_hls(r[i], g[i], b[i], &r[i], &g[i], &b[i], fused, false);
    for (int i = nv; i < n; i++)
        to_hls(r[i], g[i], b[i], &r[i], &g[i], &b[i], fused, true);
}

static inline __attribute__((always_inline)) void rgb_loop(planes *p, int n)
{
    float *restrict h = p->a, *restrict l = p->b, *restrict s = p->c;
    for (int i = 0; i < n; i++) /* H past 180: the sector formula wraps it */
        to_rgb(h[i], l[i], s[i], &h[i], &l[i], &s[i]);
}

/* RGB -> HLS bytes, MXNet's shift and clamp, -> RGB: three loops (as one,
 * GCC leaves the AVX2 build scalar). */
static inline __attribute__((always_inline)) void jitter_loop(planes *p, int n, const float d[3],
                                                              bool fused)
{
    hls_loop(p, n, fused);
    float *restrict h = p->a, *restrict l = p->b, *restrict s = p->c;
    float dh = d[0], dl = d[1], ds = d[2];
    for (int i = 0; i < n; i++) {
        h[i] = clampf(h[i] + dh, 0, 180);
        l[i] = clampf(l[i] + dl, 0, 255);
        s[i] = clampf(s[i] + ds, 0, 255);
    }
    rgb_loop(p, n);
}

/* What each public call runs: 0 rgb -> hls, 1 hls -> rgb, 2 jitter. */
static void planes_base(planes *p, int n, int what, const float d[3])
{
    if (what == 0)
        hls_loop(p, n, false);
    else if (what == 1)
        rgb_loop(p, n);
    else
        jitter_loop(p, n, d, false);
}

#ifdef DLG_HLS_AVX2
__attribute__((target("avx2,fma"))) static void planes_avx2(planes *p, int n, int what,
                                                            const float d[3])
{
    if (what == 0)
        hls_loop(p, n, true);
    else if (what == 1)
        rgb_loop(p, n);
    else
        jitter_loop(p, n, d, true);
}

static bool have_avx2(void)
{
    __builtin_cpu_init(); /* cheap once done; callers may run before constructors */
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

typedef void planes_fn(planes *p, int n, int what, const float d[3]);

static planes_fn *pick(void)
{
#ifdef DLG_HLS_AVX2
    if (have_avx2())
        return planes_avx2;
#endif
    return planes_base;
}

void dlg_rgb_to_hls8(const uint8_t *rgb, int n, uint8_t *hls)
{
    planes p;
    planes_fn *fn = pick();
    for (int at = 0; at < n; at += CHUNK) {
        int m = n - at < CHUNK ? n - at : CHUNK;
        split(rgb + (size_t)at * 3, m, &p);
        fn(&p, m, 0, NULL);
        join(&p, m, hls + (size_t)at * 3);
    }
}

void dlg_hls8_to_rgb(const uint8_t *hls, int n, uint8_t *rgb)
{
    planes p;
    planes_fn *fn = pick();
    for (int at = 0; at < n; at += CHUNK) {
        int m = n - at < CHUNK ? n - at : CHUNK;
        split(hls + (size_t)at * 3, m, &p);
        fn(&p, m, 1, NULL);
        join(&p, m, rgb + (size_t)at * 3);
    }
}

void dlg_hls_jitter_row(const uint8_t *rgb, int n, const int shift[3], float *out)
{
    planes p;
    planes_fn *fn = pick();
    const float d[3] = {(float)shift[0], (float)shift[1], (float)shift[2]};
    for (int at = 0; at < n; at += CHUNK) {
        int m = n - at < CHUNK ? n - at : CHUNK;
        split(rgb + (size_t)at * 3, m, &p);
        fn(&p, m, 2, d);
        float *o = out + (size_t)at * 3;
        for (int i = 0; i < m; i++) {
            o[3 * i] = p.a[i];
            o[3 * i + 1] = p.b[i];
            o[3 * i + 2] = p.c[i];
        }
    }
}

const char *dlg_hls_isa(void)
{
#ifdef DLG_HLS_AVX2
    if (have_avx2())
        return "avx2+fma (dispatched)";
    return "sse2 (x86-64 baseline)";
#else
    return "compiler default";
#endif
}
