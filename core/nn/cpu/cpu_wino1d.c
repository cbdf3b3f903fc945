/* One-dimensional Winograd convolutions (cpu_wino1d.h): along one axis an
 * output strip of m pixels comes from n = m + r - 1 input pixels d and the
 * r taps g as  y = A^T [ (G g) . (B^T d) ]  (Toom-Cook on n - 1 finite
 * points and infinity; the tables below were generated from the points in
 * exact fractions and checked against direct convolution in double).  Over
 * a batch that is n independent products V[xi] (strips x c) * U[xi] (c x k)
 * by oneDNN's sgemm, as in cpu_winograd.c; the transforms work on 8
 * channels at once (one nChw8c pixel).  Backward data is the convolution
 * of dy with the taps reversed, c and k swapped, pad r - 1 - pad;
 * backward weights the adjoint: dU[xi] = V[xi]^T (A dy)[xi] summed over
 * strips, dg = G^T dU. */
#include "cpu_wino1d.h"
#include "cpu_wino_pass.h"

#include <string.h>

#define W1_TARGET __attribute__((target("avx2,fma")))
#define NMAX 9 /* points */
#define MMAX 4 /* outputs per strip */
#define RMAX 7 /* taps */

#ifdef _OPENMP
#define W1_PARALLEL _Pragma("omp parallel for schedule(static)")
#define W1_PARALLEL2 _Pragma("omp parallel for collapse(2) schedule(static)")
#else
#define W1_PARALLEL
#define W1_PARALLEL2
#endif

typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t v8i __attribute__((vector_size(32)));

typedef struct kind {
    const char *name;
    int m, r, n;
    float at[MMAX][NMAX], g[NMAX][RMAX], bt[NMAX][NMAX];
} kind;

/* F(3,7): fp32 error ~3e-6 relative (median, 192 channels; F(4,7) was
 * ~1e-5 and up to 4e-5); F(4,3) is the 2-d kernels' 1-d factor. */
static const kind kinds[] = {
    {"F(3,7)", 3, 7, 9,
     /* points 0, 1, -1, 2, -2, 1/2, -1/2, -3, inf */
     .at = {{1, 1, 1, 1, 1, 1, 1, 1, 0},
          {0, 1, -1, 2, -2, 1.0f / 2, -1.0f / 2, -3, 0},
          {0, 1, 1, 4, 4, 1.0f / 4, 1.0f / 4, 9, 1},
          {0, 0, 0, 0, 0, 0, 0, 0, 0}},
     .g = {{-1.0f / 3, 0, 0, 0, 0, 0, 0},
          {-1.0f / 18, -1.0f / 18, -1.0f / 18, -1.0f / 18, -1.0f / 18, -1.0f / 18, -1.0f / 18},
          {-1.0f / 9, 1.0f / 9, -1.0f / 9, 1.0f / 9, -1.0f / 9, 1.0f / 9, -1.0f / 9},
          {1.0f / 450, 1.0f / 225, 2.0f / 225, 4.0f / 225, 8.0f / 225, 16.0f / 225, 32.0f / 225},
          {1.0f / 90, -1.0f / 45, 2.0f / 45, -4.0f / 45, 8.0f / 45, -16.0f / 45, 32.0f / 45},
          {64.0f / 315, 32.0f / 315, 16.0f / 315, 8.0f / 315, 4.0f / 315, 2.0f / 315, 1.0f / 315},
          {64.0f / 225, -32.0f / 225, 16.0f / 225, -8.0f / 225, 4.0f / 225, -2.0f / 225, 1.0f / 225},
          {-1.0f / 1050, 1.0f / 350, -3.0f / 350, 9.0f / 350, -27.0f / 350, 81.0f / 350, -243.0f / 350},
          {0, 0, 0, 0, 0, 0, 1}},
     .bt = {{-3, -1, 63.0f / 4, 21.0f / 4, -63.0f / 4, -21.0f / 4, 3, 1, 0},
          {0, 3, 4, -47.0f / 4, -17, -5.0f / 4, 4, 1, 0},
          {0, -3, 2, 55.0f / 4, -17.0f / 2, -29.0f / 4, 2, 1, 0},
          {0, 3.0f / 2, 5.0f / 4, -29.0f / 4, -25.0f / 4, 19.0f / 4, 5, 1, 0},
          {0, -3.0f / 2, 1.0f / 4, 31.0f / 4, -5.0f / 4, -29.0f / 4, 1, 1, 0},
          {0, 6, 14, -7.0f / 2, -35.0f / 2, -7.0f / 2, 7.0f / 2, 1, 0},
          {0, -6, 10, 23.0f / 2, -25.0f / 2, -13.0f / 2, 5.0f / 2, 1, 0},
          {0, -1, 0, 21.0f / 4, 0, -21.0f / 4, 0, 1, 0},
          {0, -3, -1, 63.0f / 4, 21.0f / 4, -63.0f / 4, -21.0f / 4, 3, 1}}},
    {"F(4,3)", 4, 3, 6,
     /* points 0, 1, -1, 2, -2, inf */
     .at = {{1, 1, 1, 1, 1, 0, 0, 0, 0},
          {0, 1, -1, 2, -2, 0, 0, 0, 0},
          {0, 1, 1, 4, 4, 0, 0, 0, 0},
          {0, 1, -1, 8, -8, 1, 0, 0, 0}},
     .g = {{1.0f / 4, 0, 0, 0, 0, 0, 0},
          {-1.0f / 6, -1.0f / 6, -1.0f / 6, 0, 0, 0, 0},
          {-1.0f / 6, 1.0f / 6, -1.0f / 6, 0, 0, 0, 0},
          {1.0f / 24, 1.0f / 12, 1.0f / 6, 0, 0, 0, 0},
          {1.0f / 24, -1.0f / 12, 1.0f / 6, 0, 0, 0, 0},
          {0, 0, 1, 0, 0, 0, 0},
          {0, 0, 0, 0, 0, 0, 0},
          {0, 0, 0, 0, 0, 0, 0},
          {0, 0, 0, 0, 0, 0, 0}},
     .bt = {{4, 0, -5, 0, 1, 0, 0, 0, 0},
          {0, -4, -4, 1, 1, 0, 0, 0, 0},
          {0, 4, -4, -1, 1, 0, 0, 0, 0},
          {0, -2, -1, 2, 1, 0, 0, 0, 0},
          {0, 2, -1, -2, 1, 0, 0, 0, 0},
          {0, 4, 0, -5, 0, 1, 0, 0, 0},
          {0, 0, 0, 0, 0, 0, 0, 0, 0},
          {0, 0, 0, 0, 0, 0, 0, 0, 0},
          {0, 0, 0, 0, 0, 0, 0, 0, 0}}},
};

static const kind *kind_of(int r) { return r == 7 ? &kinds[0] : r == 3 ? &kinds[1] : NULL; }

/* A convolution the kernels run along the axis: `len` input pixels, `out`
 * outputs, pad; `across` pixels of the other axis; planes len x across
 * (axis h) or across x len (axis w). */
typedef struct geom {
    int64_t n, len, out, across, pad;
    int axis;
} geom;

typedef struct strips {
    int64_t per_line, count; /* strips along one line, in the batch */
} strips;

static int64_t axis_len(const wino1d_shape *s) { return s->axis ? s->w : s->h; }

static geom forward_geom(const wino1d_shape *s, int64_t n)
{
    int64_t len = axis_len(s);
    return (geom){n, len, len + 2 * s->pad - s->r + 1, s->axis ? s->h : s->w, s->pad, s->axis};
}

static geom backward_geom(const wino1d_shape *s, int64_t n)
{
    geom f = forward_geom(s, n);
    return (geom){n, f.out, f.len, f.across, s->r - 1 - s->pad, s->axis};
}

static strips strips_of(const geom *g, int m)
{
    strips t = {(g->out + m - 1) / m, 0};
    t.count = g->n * g->across * t.per_line;
    return t;
}

/* Offset of pixel (p along the axis, a across) in a plane. */
static inline int64_t pix(const geom *g, int64_t len, int64_t p, int64_t a)
{
    return g->axis ? a * len + p : p * g->across + a;
}

void wino1d_out(const wino1d_shape *s, int64_t *oh, int64_t *ow)
{
    geom f = forward_geom(s, 1);
    *oh = s->axis ? s->h : f.out;
    *ow = s->axis ? f.out : s->w;
}

const char *wino1d_name(const wino1d_shape *s) { return kind_of(s->r)->name; }

bool wino1d_supported(const wino1d_shape *s)
{
    __builtin_cpu_init();
    geom f = forward_geom(s, s->n);
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && kind_of(s->r) &&
           s->c % 8 == 0 && s->k % 8 == 0 && s->pad >= 0 && s->pad < s->r && f.out > 0 &&
           f.across > 0 && s->n > 0;
}

/* Strips of one image in the direction with more of them. */
static int64_t image_strips(const wino1d_shape *s)
{
    const kind *k = kind_of(s->r);
    geom f = forward_geom(s, 1), b = backward_geom(s, 1);
    int64_t tf = strips_of(&f, k->m).count, tb = strips_of(&b, k->m).count;
    return tf > tb ? tf : tb;
}

/* Inception-v3's layers at batch 16 against oneDNN's direct kernels,
 * scripts/bench/winograd-vs-onednn.sh on AVX2 (2 cores), per pass: 17x17
 * 1x7 and 7x1, 128-192 channels, 0.98-1.85x (7x1 backward data at break
 * even); 8x8 1x3 and 3x1, 384 channels, 1.50-2.83x; median 1.59x
 * (docs/benchmarks.md).  The bounds are the 2-d kernels'
 * (wino_batch_pays): the transforms do not repay few strips or channels. */
bool wino1d_pays(const wino1d_shape *s)
{
    geom f = forward_geom(s, s->n);
    return wino_batch_pays(strips_of(&f, kind_of(s->r)->m).count, s->c, s->k);
}

static int64_t pass_images(const wino1d_shape *s)
{
    size_t per = sizeof(float) * (size_t)kind_of(s->r)->n * (size_t)image_strips(s) *
                 (size_t)(s->c + s->k);
    return wino_pass_images(s->n, s->pass, per);
}

size_t wino1d_ws_bytes(const wino1d_shape *s)
{
    return wino_scratch_bytes(kind_of(s->r)->n, pass_images(s) * image_strips(s), s->c, s->k);
}

/* Offset of tap j of filter (k, c) in ABcd8b8a with one spatial dim 1. */
static inline size_t widx(int64_t k, int64_t c, int j, int r, int64_t nc)
{
    return wino_widx(k, c, 0, j, nc, 1, r);
}

/* ---- filters ---- */

/* u[xi][c][k] = (G g)[xi], 8 out channels at a time. */
W1_TARGET static void transform_filters(const wino1d_shape *s, const kind *kd, const float *w,
                                        float *u)
{
    int64_t nk = s->k, nc = s->c, plane = nk * nc;
W1_PARALLEL
    for (int64_t c = 0; c < nc; c++)
        for (int64_t kb = 0; kb < nk / 8; kb++) {
            v8 g[RMAX];
            for (int j = 0; j < kd->r; j++)
                g[j] = *(const v8 *)(w + widx(kb * 8, c, j, kd->r, nc));
            for (int xi = 0; xi < kd->n; xi++) {
                v8 a = {0};
                for (int j = 0; j < kd->r; j++)
                    a += kd->g[xi][j] * g[j];
                *(v8 *)(u + xi * plane + c * nk + kb * 8) = a;
            }
        }
}

/* u[xi][k][c] for backward data: taps reversed, 8 in channels gathered. */
W1_TARGET static void transform_filters_reversed(const wino1d_shape *s, const kind *kd,
                                                 const float *w, float *u)
{
    int64_t nk = s->k, nc = s->c, plane = nk * nc;
W1_PARALLEL
    for (int64_t k = 0; k < nk; k++)
        for (int64_t cb = 0; cb < nc / 8; cb++) {
            v8 g[RMAX];
            for (int j = 0; j < kd->r; j++) {
                const float *p = w + widx(k, cb * 8, j, kd->r, nc);
                v8 v = {p[0], p[8], p[16], p[24], p[32], p[40], p[48], p[56]};
                g[kd->r - 1 - j] = v;
            }
            for (int xi = 0; xi < kd->n; xi++) {
                v8 a = {0};
                for (int j = 0; j < kd->r; j++)
                    a += kd->g[xi][j] * g[j];
                *(v8 *)(u + xi * plane + k * nc + cb * 8) = a;
            }
        }
}

/* dw = G^T du, with du[xi][c][k]. */
W1_TARGET static void untransform_filters(const wino1d_shape *s, const kind *kd, const float *du,
                                          float *dw)
{
    int64_t nk = s->k, nc = s->c, plane = nk * nc;
W1_PARALLEL
    for (int64_t c = 0; c < nc; c++)
        for (int64_t kb = 0; kb < nk / 8; kb++) {
            v8 d[NMAX];
            for (int xi = 0; xi < kd->n; xi++)
                d[xi] = *(const v8 *)(du + xi * plane + c * nk + kb * 8);
            for (int j = 0; j < kd->r; j++) {
                v8 a = {0};
                for (int xi = 0; xi < kd->n; xi++)
                    a += kd->g[xi][j] * d[xi];
                *(v8 *)(dw + widx(kb * 8, c, j, kd->r, nc)) = a;
            }
        }
}

/* ---- strips ---- */

/* v[xi][strip][ci] = B^T d for every strip of src (nChw8c, ci channels). */
W1_TARGET static void transform_inputs(const geom *g, const kind *kd, int64_t ci,
                                       const float *src, const strips *t, float *v)
{
    int64_t ncb = ci / 8, xi_stride = t->count * ci, chw = g->len * g->across * 8;
W1_PARALLEL2
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t a = 0; a < g->across; a++)
            for (int64_t ts = 0; ts < t->per_line; ts++) {
                float *row = v + ((n * g->across + a) * t->per_line + ts) * ci;
                int64_t p0 = ts * kd->m - g->pad;
                for (int64_t cb = 0; cb < ncb; cb++) {
                    const float *plane = src + (n * ncb + cb) * chw;
                    v8 d[NMAX], zero = {0};
                    for (int i = 0; i < kd->n; i++) {
                        int64_t p = p0 + i;
                        d[i] = p >= 0 && p < g->len ? *(const v8 *)(plane + pix(g, g->len, p, a) * 8)
                                                    : zero;
                    }
                    for (int xi = 0; xi < kd->n; xi++) {
                        v8 r = {0};
                        for (int i = 0; i < kd->n; i++)
                            r += kd->bt[xi][i] * d[i];
                        *(v8 *)(row + xi * xi_stride + cb * 8) = r;
                    }
                }
            }
}

/* dm[xi][strip][co] = (A dy)[xi] for every strip of dy (nChw8c). */
W1_TARGET static void transform_grads(const geom *g, const kind *kd, int64_t co, const float *dy,
                                      const strips *t, float *dm)
{
    int64_t ncb = co / 8, xi_stride = t->count * co, chw = g->out * g->across * 8;
W1_PARALLEL2
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t a = 0; a < g->across; a++)
            for (int64_t ts = 0; ts < t->per_line; ts++) {
                float *row = dm + ((n * g->across + a) * t->per_line + ts) * co;
                for (int64_t kb = 0; kb < ncb; kb++) {
                    const float *plane = dy + (n * ncb + kb) * chw;
                    v8 o[MMAX], zero = {0};
                    for (int i = 0; i < kd->m; i++) {
                        int64_t p = ts * kd->m + i;
                        o[i] = p < g->out ? *(const v8 *)(plane + pix(g, g->out, p, a) * 8) : zero;
                    }
                    for (int xi = 0; xi < kd->n; xi++) {
                        v8 r = {0};
                        for (int i = 0; i < kd->m; i++)
                            r += kd->at[i][xi] * o[i];
                        *(v8 *)(row + xi * xi_stride + kb * 8) = r;
                    }
                }
            }
}

typedef struct epilogue {
    const float *bias, *res;
    bool relu;
} epilogue;

/* dst (nChw8c, co channels) = A^T m per strip, then the epilogue. */
W1_TARGET static void transform_outputs(const geom *g, const kind *kd, int64_t co,
                                        const float *m, const strips *t, const epilogue *e,
                                        float *dst)
{
    int64_t ncb = co / 8, xi_stride = t->count * co, chw = g->out * g->across * 8;
W1_PARALLEL2
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t a = 0; a < g->across; a++)
            for (int64_t ts = 0; ts < t->per_line; ts++) {
                const float *row = m + ((n * g->across + a) * t->per_line + ts) * co;
                for (int64_t kb = 0; kb < ncb; kb++) {
                    v8 in[NMAX], bias = {0}, zero = {0};
                    if (e->bias)
                        bias = *(const v8 *)(e->bias + kb * 8);
                    for (int xi = 0; xi < kd->n; xi++)
                        in[xi] = *(const v8 *)(row + xi * xi_stride + kb * 8);
                    for (int i = 0; i < kd->m; i++) {
                        int64_t p = ts * kd->m + i;
                        if (p >= g->out)
                            break;
                        v8 out = bias;
                        for (int xi = 0; xi < kd->n; xi++)
                            out += kd->at[i][xi] * in[xi];
                        size_t o = (size_t)((n * ncb + kb) * chw + pix(g, g->out, p, a) * 8);
                        if (e->res)
                            out += *(const v8 *)(e->res + o);
                        if (e->relu)
                            out = (v8)((v8i)out & (out > zero));
                        *(v8 *)(dst + o) = out;
                    }
                }
            }
}

/* out (co channels) = conv(in (ci channels), filters already in b.u). */
static void convolve(const geom *g, const kind *kd, int64_t ci, int64_t co, const float *in,
                     const epilogue *e, float *out, const wino_bufs *b)
{
    strips t = strips_of(g, kd->m);
    transform_inputs(g, kd, ci, in, &t, b->in);
    wino_products(kd->n, t.count, ci, co, b);
    transform_outputs(g, kd, co, b->out, &t, e, out);
}

/* Floats of one image of ch channels on a plane of len x across. */
static size_t image_floats(int64_t ch, int64_t len, int64_t across)
{
    return (size_t)(ch * len * across);
}

/* The geometry of the images [n0, n0 + per) (at most), forward or
 * backward data. */
static geom pass_geom(const wino1d_shape *s, bool backward, int64_t n0, int64_t per)
{
    int64_t n = wino_pass_count(s->n, n0, per);
    return backward ? backward_geom(s, n) : forward_geom(s, n);
}

/* The scratch laid out for the passes of one direction. */
static wino_bufs batch_bufs(const wino1d_shape *s, const kind *kd, bool backward, void *ws)
{
    geom first = pass_geom(s, backward, 0, pass_images(s));
    int64_t ci = backward ? s->k : s->c, co = backward ? s->c : s->k;
    return wino_bufs_of(ws, kd->n, strips_of(&first, kd->m).count, ci, co);
}

/* out = conv(in) + bias (+ res, ReLU) over the batch, pass by pass, with
 * the transformed filter in b->u: the forward (c -> k channels) or the
 * backward data (dy, k -> c). */
static void convolve_batch(const wino1d_shape *s, const kind *kd, bool backward, const float *in,
                           const epilogue *e, float *out, const wino_bufs *b)
{
    int64_t per = pass_images(s), ci = backward ? s->k : s->c, co = backward ? s->c : s->k;
    for (int64_t n0 = 0; n0 < s->n; n0 += per) {
        geom g = pass_geom(s, backward, n0, per);
        size_t io = (size_t)n0 * image_floats(ci, g.len, g.across);
        size_t oo = (size_t)n0 * image_floats(co, g.out, g.across);
        epilogue pe = {e->bias, e->res ? e->res + oo : NULL, e->relu};
        convolve(&g, kd, ci, co, in + io, &pe, out + oo, b);
    }
}

void wino1d_forward(const wino1d_shape *s, const float *x, const float *w, const float *bias,
                    const float *res, bool relu, float *y, void *ws)
{
    const kind *kd = kind_of(s->r);
    wino_bufs b = batch_bufs(s, kd, false, ws);
    transform_filters(s, kd, w, b.u);
    convolve_batch(s, kd, false, x, &(epilogue){bias, res, relu}, y, &b);
}

void wino1d_backward_data(const wino1d_shape *s, const float *dy, const float *w, float *dx,
                          void *ws)
{
    const kind *kd = kind_of(s->r);
    wino_bufs b = batch_bufs(s, kd, true, ws);
    transform_filters_reversed(s, kd, w, b.u);
    convolve_batch(s, kd, true, dy, &(epilogue){NULL, NULL, false}, dx, &b);
}

void wino1d_backward_weights(const wino1d_shape *s, const float *x, const float *dy, float *dw,
                             void *ws)
{
    const kind *kd = kind_of(s->r);
    int64_t per = pass_images(s);
    wino_bufs b = batch_bufs(s, kd, false, ws);
    for (int64_t n0 = 0; n0 < s->n; n0 += per) {
        geom g = pass_geom(s, false, n0, per);
        strips t = strips_of(&g, kd->m);
        transform_inputs(&g, kd, s->c, x + (size_t)n0 * image_floats(s->c, g.len, g.across), &t,
                         b.in);
        transform_grads(&g, kd, s->k, dy + (size_t)n0 * image_floats(s->k, g.out, g.across), &t,
                        b.out);
        wino_weight_products(kd->n, t.count, s->c, s->k, n0 > 0, &b);
    }
    untransform_filters(s, kd, b.u, dw);
}
