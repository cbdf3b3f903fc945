/* Winograd F(4x4, 3x3) (Lavin & Gray 2015, points 0, +-1, +-2, inf), and
 * F(2x2, 5x5) on the same points.
 *
 * A 4x4 output tile comes from a 6x6 input tile d and the 3x3 filter g as
 *   y = A^T [ (G g G^T) . (B^T d B) ] A
 * so 36 multiplies per (tile, c, k) instead of 144.  With the points kept,
 * B^T is kept too: G's row for point p is s_p (1, p, p^2, ...) and A^T's
 * column (1, p, p^2, ...)^T, so a 2x2 tile of a 5x5 filter takes G's rows
 * to p^4 and A^T's to p^1 (36 multiplies instead of 100).  Over a batch
 * this is 36 independent matrix products V[xi] (tiles x c) * U[xi] (c x k), run by
 * oneDNN's sgemm; the transforms around them work on 8 channels at once,
 * which is exactly one nChw8c pixel.
 *
 * Backward data is the same convolution of dy with the filter rotated by
 * 180 degrees and c/k swapped (pad 2 - 1 = 1).  Backward weights is the
 * adjoint: dU[xi] = V[xi]^T (A dy A^T)[xi] summed over tiles, then
 * dg = G^T dU G.
 *
 * A grouped layer is its groups run one after another: in nChw8c each
 * group's channels are whole blocks of every image, and in oneDNN's
 * gOIhw8i8o each group's filter is one ABcd8b8a filter, so a group is an
 * ungrouped convolution whose images lie further apart. */
#include "cpu_winograd.h"
#include "cpu_wino_pass.h"

#include <string.h>

#define WINO_TARGET __attribute__((target("avx2,fma")))
#define NXI 36 /* 6x6 transformed points */

/* the OpenMP team oneDNN's primitives use (cpu_backend.c sets its size) */
#ifdef _OPENMP
#define WINO_PARALLEL _Pragma("omp parallel for schedule(static)")
#define WINO_PARALLEL2 _Pragma("omp parallel for collapse(2) schedule(static)")
#else
#define WINO_PARALLEL
#define WINO_PARALLEL2
#endif

typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t v8i __attribute__((vector_size(32)));

/* One convolution the kernels run: forward, or backward data as the
 * forward of dy with the rotated filter.  Input planes ih x iw, output
 * planes oh x ow = ih + 2 pad - (r - 1) (stride 1); the 6x6 input tile of
 * output tile (ty, tx) starts at (m ty - pad, m tx - pad).  icb, ocb: channel
 * blocks an input and an output image has (all groups'), which set how
 * far apart the images lie. */
typedef struct geom {
    int64_t n, ih, iw, oh, ow, pad;
    int64_t icb, ocb;
    int m; /* output tile: m x m */
} geom;

/* The filter (r x r) and the output tile it takes (m x m, m + r - 1 = 6). */
static int filter_r(const wino_shape *s) { return s->r == 5 ? 5 : 3; }
static int tile_m(const wino_shape *s) { return 7 - filter_r(s); }

static int64_t out_size(const wino_shape *s, int64_t in) { return in + 2 * s->pad - (filter_r(s) - 1); }

static geom forward_geom(const wino_shape *s, int64_t n)
{
    return (geom){n, s->h, s->w, out_size(s, s->h), out_size(s, s->w), s->pad, s->c / 8, s->k / 8, tile_m(s)};
}

/* Backward data: dy (oh x ow) in, dx (h x w) out, pad r - 1 - pad. */
static geom backward_geom(const wino_shape *s, int64_t n)
{
    geom f = forward_geom(s, n);
    return (geom){n, f.oh, f.ow, s->h, s->w, filter_r(s) - 1 - s->pad, s->k / 8, s->c / 8, tile_m(s)};
}

static int64_t groups_of(const wino_shape *s) { return s->groups > 1 ? s->groups : 1; }

/* One group's channels in and out. */
static int64_t group_c(const wino_shape *s) { return s->c / groups_of(s); }
static int64_t group_k(const wino_shape *s) { return s->k / groups_of(s); }

/* Floats of one group's filter, r x r and transformed. */
static size_t group_filter(const wino_shape *s)
{
    return (size_t)(group_c(s) * group_k(s) * filter_r(s) * filter_r(s));
}
static size_t group_points(const wino_shape *s) { return (size_t)(group_c(s) * group_k(s) * NXI); }

typedef struct tiles {
    int64_t th, tw, count; /* tiles down, across, in the batch */
} tiles;

static tiles tiles_of(const geom *g)
{
    tiles t = {(g->oh + g->m - 1) / g->m, (g->ow + g->m - 1) / g->m, 0};
    t.count = g->n * t.th * t.tw;
    return t;
}

/* Tiles of one image in the direction with more of them (backward data
 * of a pad-0 layer tiles the larger input). */
static int64_t image_tiles(const wino_shape *s)
{
    geom f = forward_geom(s, 1), b = backward_geom(s, 1);
    int64_t tf = tiles_of(&f).count, tb = tiles_of(&b).count;
    return tf > tb ? tf : tb;
}

bool wino_supported(const wino_shape *s)
{
    __builtin_cpu_init();
    int64_t g = groups_of(s);
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && s->c % g == 0 &&
           s->k % g == 0 && group_c(s) % 8 == 0 && group_k(s) % 8 == 0 &&
           (s->r == 0 || s->r == 3 || s->r == 5) && s->pad >= 0 && s->pad < filter_r(s) &&
           out_size(s, s->h) > 0 && out_size(s, s->w) > 0 && s->n > 0;
}

/* Each call transforms the filter anew (training changes it every step):
 * 36/9 = 4x the weights' bytes written and read back by the products, a
 * cost the saved multiplications repay only over enough tiles.
 * scripts/bench/winograd-vs-onednn.sh on AVX2 (2 cores), speed against
 * oneDNN's direct kernels, median over passes: below 32 tiles 0.58x (7x7,
 * 512 channels at batch 1: 0.24-0.34x), 32-63 tiles 1.63x, 64 and more
 * 1.88x (docs/benchmarks.md).
 * The transforms move 36 (c + k) floats per tile, the products do 36 c k
 * multiply-adds: with few channels the transforms' memory traffic eats
 * the saving.  Same script: c = k = 32 (Inception's stem 2a) 0.84-0.89x,
 * c = 32, k = 64 (2b) 0.78-1.15x, c = k = 64 1.5-1.8x, c = 64, k = 96
 * 1.4-2.8x; so the bound c k / (c + k) >= 32, per group.
 *
 * F(2x2,5x5) replaces 100 multiplies of oneDNN's direct 5x5 kernel per
 * tile and channel pair, where that kernel runs further from its peak on
 * few channels: the same script at batch 16, forward + backward data +
 * backward filter summed, direct against Winograd: GoogLeNet's
 * inception_3b 5x5 (c = 32, k = 96, 28x28; c k / (c + k) = 24) 44.4
 * against 28.2 ms, 4e (32 -> 128 at 14x14) 12.0 against 12.3, 4d (32 ->
 * 64) 7.1 against 6.3, but 3a (16 -> 32 at 28x28) 7.2 against 8.6; so 24
 * for 5x5. */
static bool channels_pay(const wino_shape *s)
{
    int64_t c = group_c(s), k = group_k(s);
    return filter_r(s) == 5 ? c * k >= 24 * (c + k) : wino_channels_pay(c, k);
}

bool wino_pays(const wino_shape *s)
{
    geom f = forward_geom(s, s->n);
    return wino_items_pay(tiles_of(&f).count) && channels_pay(s);
}

/* With the filter transformed once (inference, wino_forward_transformed;
 * wino_keeps_filter holds for these) the per-call cost that needs 32 tiles
 * is gone: ResNet-50's 14x14 layers
 * at batch 1 (16 tiles, 256 channels) then beat oneDNN's direct kernel
 * (docs/benchmarks.md).  Fewer tiles leave the products too few rows to
 * repay reading the 4x larger transformed filter. */
bool wino_cached_pays(const wino_shape *s)
{
    geom f = forward_geom(s, s->n);
    int64_t t = tiles_of(&f).count;
    return t >= 16 && channels_pay(s);
}

/* Below 64 tiles the per-call filter transform is a large share of the
 * call: ResNet-50's 28x28 layers at batch 1 (49 tiles, 128 channels) run
 * 1.07 ms transforming it and 0.83 ms with it kept, for 2.4 MB each.
 * Larger batches keep transforming per call rather than hold 4x the
 * weights (ResNet-50: ~130 MB). */
bool wino_keeps_filter(const wino_shape *s)
{
    geom f = forward_geom(s, s->n);
    return tiles_of(&f).count < 64;
}

size_t wino_filter_bytes(const wino_shape *s)
{
    return sizeof(float) * group_points(s) * (size_t)groups_of(s);
}

/* Images per pass (cpu_wino_pass.c), for one group at a time. */
static int64_t pass_images(const wino_shape *s)
{
    size_t per = sizeof(float) * NXI * (size_t)image_tiles(s) * (size_t)(group_c(s) + group_k(s));
    return wino_pass_images(s->n, s->pass, per);
}

/* One pass's transformed tiles, input and output side, and the
 * transformed filter, of one group. */
size_t wino_ws_bytes(const wino_shape *s)
{
    return wino_scratch_bytes(NXI, pass_images(s) * image_tiles(s), group_c(s), group_k(s));
}

/* ---- the three 1-d transforms and their adjoints, on 8 channels ---- */

/* B^T d: 6 -> 6 */
WINO_TARGET static inline void bt6(const v8 d[6], v8 r[6])
{
    v8 four = {4, 4, 4, 4, 4, 4, 4, 4}, five = {5, 5, 5, 5, 5, 5, 5, 5};
    v8 two = {2, 2, 2, 2, 2, 2, 2, 2};
    r[0] = four * d[0] - five * d[2] + d[4];
    r[1] = d[3] + d[4] - four * (d[1] + d[2]);
    r[2] = four * (d[1] - d[2]) - d[3] + d[4];
    r[3] = two * (d[3] - d[1]) - d[2] + d[4];
    r[4] = two * (d[1] - d[3]) - d[2] + d[4];
    r[5] = four * d[1] - five * d[3] + d[5];
}

/* A^T m: 6 -> 4 */
WINO_TARGET static inline void at4(const v8 m[6], v8 o[4])
{
    v8 two = {2, 2, 2, 2, 2, 2, 2, 2}, four = {4, 4, 4, 4, 4, 4, 4, 4};
    v8 eight = {8, 8, 8, 8, 8, 8, 8, 8};
    v8 s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
    o[0] = m[0] + s12 + s34;
    o[1] = d12 + two * d34;
    o[2] = s12 + four * s34;
    o[3] = d12 + eight * d34 + m[5];
}

/* A o: 4 -> 6, the adjoint of at4 */
WINO_TARGET static inline void a6(const v8 o[4], v8 m[6])
{
    v8 two = {2, 2, 2, 2, 2, 2, 2, 2}, four = {4, 4, 4, 4, 4, 4, 4, 4};
    v8 eight = {8, 8, 8, 8, 8, 8, 8, 8};
    v8 s02 = o[0] + o[2], s13 = o[1] + o[3];
    v8 e = o[0] + four * o[2], f = two * o[1] + eight * o[3];
    m[0] = o[0];
    m[1] = s02 + s13;
    m[2] = s02 - s13;
    m[3] = e + f;
    m[4] = e - f;
    m[5] = o[3];
}

/* G g: 3 -> 6 */
WINO_TARGET static inline void g6(const v8 g[3], v8 u[6])
{
    v8 q = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
    v8 s6 = {1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f};
    v8 s02 = g[0] + g[2], e = q * g[0] + g[2];
    u[0] = q * g[0];
    u[1] = -s6 * (s02 + g[1]);
    u[2] = -s6 * (s02 - g[1]);
    u[3] = s6 * (e + g[1] * 0.5f);
    u[4] = s6 * (e - g[1] * 0.5f);
    u[5] = g[2];
}

/* G^T u: 6 -> 3, the adjoint of g6 */
WINO_TARGET static inline void gt3(const v8 u[6], v8 g[3])
{
    v8 s6 = {1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f};
    v8 s12 = u[1] + u[2], s34 = u[3] + u[4];
    g[0] = u[0] * 0.25f + s6 * (s34 * 0.25f - s12);
    g[1] = s6 * (u[2] - u[1] + (u[3] - u[4]) * 0.5f);
    g[2] = s6 * (s34 - s12) + u[5];
}

/* G' g: 5 -> 6, G's rows s_p (1, p, p^2) carried on to p^4 */
WINO_TARGET static inline void g6_5(const v8 g[5], v8 u[6])
{
    v8 s6 = {1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f};
    v8 s24 = {1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f};
    v8 even = g[0] + g[2] + g[4], odd = g[1] + g[3];
    v8 even2 = g[0] + 4 * g[2] + 16 * g[4], odd2 = 2 * g[1] + 8 * g[3];
    u[0] = g[0] * 0.25f;
    u[1] = -s6 * (even + odd);
    u[2] = -s6 * (even - odd);
    u[3] = s24 * (even2 + odd2);
    u[4] = s24 * (even2 - odd2);
    u[5] = g[4];
}

/* G'^T u: 6 -> 5, the adjoint of g6_5 */
WINO_TARGET static inline void gt5(const v8 u[6], v8 g[5])
{
    v8 s6 = {1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f, 1 / 6.f};
    v8 s24 = {1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f, 1 / 24.f};
    v8 s12 = u[1] + u[2], d12 = u[1] - u[2], s34 = s24 * (u[3] + u[4]), d34 = s24 * (u[3] - u[4]);
    g[0] = u[0] * 0.25f - s6 * s12 + s34;
    g[1] = -s6 * d12 + 2 * d34;
    g[2] = -s6 * s12 + 4 * s34;
    g[3] = -s6 * d12 + 8 * d34;
    g[4] = -s6 * s12 + 16 * s34 + u[5];
}

/* A'^T m: 6 -> 2 */
WINO_TARGET static inline void at2(const v8 m[6], v8 o[2])
{
    o[0] = m[0] + m[1] + m[2] + m[3] + m[4];
    o[1] = m[1] - m[2] + 2 * (m[3] - m[4]) + m[5];
}

/* A' o: 2 -> 6, the adjoint of at2 */
WINO_TARGET static inline void a6_2(const v8 o[2], v8 m[6])
{
    m[0] = o[0];
    m[1] = o[0] + o[1];
    m[2] = o[0] - o[1];
    m[3] = o[0] + 2 * o[1];
    m[4] = o[0] - 2 * o[1];
    m[5] = o[1];
}

/* A filter row or column of r taps to the 6 points, and back (adjoint). */
WINO_TARGET static inline void to_points(const v8 *g, int r, v8 u[6])
{
    if (r == 5)
        g6_5(g, u);
    else
        g6(g, u);
}

WINO_TARGET static inline void from_points(const v8 u[6], int r, v8 *g)
{
    if (r == 5)
        gt5(u, g);
    else
        gt3(u, g);
}

/* 6x6 = M(r x r) M^T for one 8-wide filter block: t = G g, u = t G^T. */
WINO_TARGET static inline void filter_6x6(v8 g[5][5], int r, v8 u[6][6])
{
    v8 col[5], p[6], t[6][5];
    for (int j = 0; j < r; j++) {
        for (int i = 0; i < r; i++)
            col[i] = g[i][j];
        to_points(col, r, p);
        for (int i = 0; i < 6; i++)
            t[i][j] = p[i];
    }
    for (int i = 0; i < 6; i++)
        to_points(t[i], r, u[i]);
}

/* Offset of r x r filter (k, c, i, j) in ABcd8b8a. */
static inline size_t widx(int64_t k, int64_t c, int i, int j, int64_t nc, int r)
{
    return wino_widx(k, c, i, j, nc, r, r);
}

/* ---- filters ---- */

/* One transformed 8-wide filter block: point xi goes to plane xi. */
WINO_TARGET static inline void store_points(v8 r[6][6], float *u, int64_t plane)
{
    for (int xi = 0; xi < NXI; xi++)
        *(v8 *)(u + xi * plane) = r[xi / 6][xi % 6];
}

/* u[xi][c][k] = (G g G^T)[xi] for one group's filter w, 8 out channels at
 * a time (contiguous in the blocked layout); written in rows so each plane
 * fills in order. */
WINO_TARGET static void transform_filters(const wino_shape *s, const float *w, float *u)
{
    int64_t nk = group_k(s), nc = group_c(s), plane = nk * nc;
    int r = filter_r(s);
WINO_PARALLEL
    for (int64_t c = 0; c < nc; c++)
        for (int64_t kb = 0; kb < nk / 8; kb++) {
            v8 g[5][5], t[6][6];
            for (int i = 0; i < r; i++)
                for (int j = 0; j < r; j++)
                    g[i][j] = *(const v8 *)(w + widx(kb * 8, c, i, j, nc, r));
            filter_6x6(g, r, t);
            store_points(t, u + c * nk + kb * 8, plane);
        }
}

/* u[xi][k][c] for backward data: one group's filter rotated by 180
 * degrees, 8 in channels at a time (gathered: they are 8 apart in the
 * layout). */
WINO_TARGET static void transform_filters_rotated(const wino_shape *s, const float *w, float *u)
{
    int64_t nk = group_k(s), nc = group_c(s), plane = nk * nc;
    int r = filter_r(s);
WINO_PARALLEL
    for (int64_t k = 0; k < nk; k++)
        for (int64_t cb = 0; cb < nc / 8; cb++) {
            v8 g[5][5], t[6][6];
            for (int i = 0; i < r; i++)
                for (int j = 0; j < r; j++) {
                    const float *p = w + widx(k, cb * 8, i, j, nc, r);
                    v8 v = {p[0], p[8], p[16], p[24], p[32], p[40], p[48], p[56]};
                    g[r - 1 - i][r - 1 - j] = v;
                }
            filter_6x6(g, r, t);
            store_points(t, u + k * nc + cb * 8, plane);
        }
}

/* dw = G^T du G for one group, with du[xi][c][k]; 8 out channels at a
 * time. */
WINO_TARGET static void untransform_filters(const wino_shape *s, const float *du, float *dw)
{
    int64_t nk = group_k(s), nc = group_c(s), plane = nk * nc;
    int r = filter_r(s);
WINO_PARALLEL
    for (int64_t c = 0; c < nc; c++)
        for (int64_t kb = 0; kb < nk / 8; kb++) {
            v8 row[6], t[6][5], col[6], g[5];
            for (int i = 0; i < 6; i++) { /* rows: du G */
                for (int j = 0; j < 6; j++)
                    row[j] = *(const v8 *)(du + (i * 6 + j) * plane + c * nk + kb * 8);
                from_points(row, r, t[i]);
            }
            for (int j = 0; j < r; j++) { /* columns: G^T (du G) */
                for (int i = 0; i < 6; i++)
                    col[i] = t[i][j];
                from_points(col, r, g);
                for (int i = 0; i < r; i++)
                    *(v8 *)(dw + widx(kb * 8, c, i, j, nc, r)) = g[i];
            }
        }
}

/* ---- tiles ---- */

/* One 6x6 tile of 8 channels from a plane (h x w x 8) whose top-left
 * input pixel is (y0, x0), zeros outside. */
WINO_TARGET static inline void load_tile(const float *plane, int64_t h, int64_t w, int64_t y0,
                                         int64_t x0, v8 d[6][6])
{
    if (y0 >= 0 && x0 >= 0 && y0 + 6 <= h && x0 + 6 <= w) {
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++)
                d[i][j] = *(const v8 *)(plane + ((y0 + i) * w + x0 + j) * 8);
        return;
    }
    v8 zero = {0};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            int64_t y = y0 + i, x = x0 + j;
            bool in = y >= 0 && y < h && x >= 0 && x < w;
            d[i][j] = in ? *(const v8 *)(plane + (y * w + x) * 8) : zero;
        }
}

/* v[xi][tile][ci] = B^T d B for every tile of src (nChw8c, ci channels
 * from the first of each image's g->icb blocks, ih x iw).  Channel blocks
 * are the inner loop so each tile's row of every plane is written whole. */
WINO_TARGET static void transform_inputs(const geom *g, int64_t ci, const float *src,
                                         const tiles *t, float *v)
{
    int64_t ncb = ci / 8, xi_stride = t->count * ci, chw = g->ih * g->iw * 8;
WINO_PARALLEL2
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t ty = 0; ty < t->th; ty++)
            for (int64_t tx = 0; tx < t->tw; tx++) {
                float *row = v + ((n * t->th + ty) * t->tw + tx) * ci;
                for (int64_t cb = 0; cb < ncb; cb++) {
                    v8 d[6][6], col[6], r[6], tmp[6][6];
                    load_tile(src + (n * g->icb + cb) * chw, g->ih, g->iw, ty * g->m - g->pad,
                              tx * g->m - g->pad, d);
                    for (int j = 0; j < 6; j++) {
                        for (int i = 0; i < 6; i++)
                            col[i] = d[i][j];
                        bt6(col, r);
                        for (int i = 0; i < 6; i++)
                            tmp[i][j] = r[i];
                    }
                    for (int i = 0; i < 6; i++) {
                        bt6(tmp[i], r);
                        for (int j = 0; j < 6; j++)
                            *(v8 *)(row + (i * 6 + j) * xi_stride + cb * 8) = r[j];
                    }
                }
            }
}

/* An output tile's M rows from the 6 points (A^T), and back (the
 * adjoint A). */
WINO_TARGET static inline void out_of_points(const v8 m[6], int M, v8 *o)
{
    if (M == 2)
        at2(m, o);
    else
        at4(m, o);
}

WINO_TARGET static inline void points_of_out(const v8 *o, int M, v8 m[6])
{
    if (M == 2)
        a6_2(o, m);
    else
        a6(o, m);
}

/* One M x M tile (ty, tx) of image n's gradient dy, every channel block,
 * as A dy A^T into its row of dm; inlined with M constant. */
WINO_TARGET __attribute__((always_inline)) static inline void
grad_tile(const geom *g, int64_t ncb, const float *dy, int64_t n, int64_t ty, int64_t tx, float *row,
          int64_t xi_stride, const int M)
{
    int64_t chw = g->oh * g->ow * 8;
    for (int64_t kb = 0; kb < ncb; kb++) {
        const float *plane = dy + (n * g->ocb + kb) * chw;
        v8 o[4][4], col[4], r[6], tmp[6][4], zero = {0};
        for (int i = 0; i < M; i++)
            for (int j = 0; j < M; j++) {
                int64_t y = ty * M + i, x = tx * M + j;
                o[i][j] = y < g->oh && x < g->ow ? *(const v8 *)(plane + (y * g->ow + x) * 8) : zero;
            }
        for (int j = 0; j < M; j++) {
            for (int i = 0; i < M; i++)
                col[i] = o[i][j];
            points_of_out(col, M, r);
            for (int i = 0; i < 6; i++)
                tmp[i][j] = r[i];
        }
        for (int i = 0; i < 6; i++) {
            points_of_out(tmp[i], M, r);
            for (int j = 0; j < 6; j++)
                *(v8 *)(row + (i * 6 + j) * xi_stride + kb * 8) = r[j];
        }
    }
}

/* dm[xi][tile][co] = A dy A^T for every m x m tile of dy (nChw8c, co
 * channels from the first of each image's g->ocb blocks, oh x ow). */
WINO_TARGET static void transform_grads(const geom *g, int64_t co, const float *dy,
                                        const tiles *t, float *dm)
{
    int64_t ncb = co / 8, xi_stride = t->count * co;
WINO_PARALLEL2
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t ty = 0; ty < t->th; ty++)
            for (int64_t tx = 0; tx < t->tw; tx++) {
                float *row = dm + ((n * t->th + ty) * t->tw + tx) * co;
                if (g->m == 2)
                    grad_tile(g, ncb, dy, n, ty, tx, row, xi_stride, 2);
                else
                    grad_tile(g, ncb, dy, n, ty, tx, row, xi_stride, 4);
            }
}

typedef struct epilogue {
    const float *bias, *res;
    bool relu;
} epilogue;

/* One M x M tile (ty, tx) of image n's output, every channel block, from
 * its row of m as A^T m A, then the epilogue; inlined with M constant. */
WINO_TARGET __attribute__((always_inline)) static inline void
output_tile(const geom *g, int64_t ncb, const float *row, int64_t xi_stride, int64_t n, int64_t ty,
            int64_t tx, const epilogue *e, float *dst, const int M)
{
    int64_t chw = g->oh * g->ow * 8;
    for (int64_t kb = 0; kb < ncb; kb++) {
        size_t off = (size_t)((n * g->ocb + kb) * chw);
        v8 bias = {0}, zero = {0}, in[6], r[4], tmp[4][6], col[4];
        if (e->bias)
            bias = *(const v8 *)(e->bias + kb * 8);
        for (int i = 0; i < 6; i++) {
            for (int j = 0; j < 6; j++)
                in[j] = *(const v8 *)(row + (i * 6 + j) * xi_stride + kb * 8);
            out_of_points(in, M, r);
            for (int j = 0; j < M; j++)
                tmp[j][i] = r[j];
        }
        for (int j = 0; j < M; j++) {
            out_of_points(tmp[j], M, col);
            for (int i = 0; i < M; i++) {
                int64_t y = ty * M + i, x = tx * M + j;
                if (y >= g->oh || x >= g->ow)
                    continue;
                size_t p = off + (size_t)((y * g->ow + x) * 8);
                v8 out = col[i] + bias;
                if (e->res)
                    out += *(const v8 *)(e->res + p);
                if (e->relu)
                    out = (v8)((v8i)out & (out > zero));
                *(v8 *)(dst + p) = out;
            }
        }
    }
}

/* dst (nChw8c, co channels from the first of each image's g->ocb blocks,
 * oh x ow) = A^T m A per tile, then the epilogue (bias: those co
 * channels'; res: laid out as dst). */
WINO_TARGET static void transform_outputs(const geom *g, int64_t co, const float *m,
                                          const tiles *t, const epilogue *e, float *dst)
{
    int64_t ncb = co / 8, xi_stride = t->count * co;
WINO_PARALLEL2
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t ty = 0; ty < t->th; ty++)
            for (int64_t tx = 0; tx < t->tw; tx++) {
                const float *row = m + ((n * t->th + ty) * t->tw + tx) * co;
                if (g->m == 2)
                    output_tile(g, ncb, row, xi_stride, n, ty, tx, e, dst, 2);
                else
                    output_tile(g, ncb, row, xi_stride, n, ty, tx, e, dst, 4);
            }
}

/* out (co channels) = conv(in (ci channels), filters already in b.u). */
static void convolve(const geom *g, int64_t ci, int64_t co, const float *in, const epilogue *e,
                     float *out, wino_bufs *b)
{
    tiles t = tiles_of(g);
    transform_inputs(g, ci, in, &t, b->in);
    wino_products(NXI, t.count, ci, co, b);
    transform_outputs(g, co, b->out, &t, e, out);
}

/* Where image n0 starts in a tensor of cb channel blocks of h x w. */
static size_t image_offset(int64_t n0, int64_t cb, int64_t h, int64_t w)
{
    return (size_t)(n0 * cb * 8 * h * w);
}

/* Where group gi's channels of ch (a group's count) start in an image of
 * h x w: its first block. */
static size_t group_offset(int64_t gi, int64_t ch, int64_t h, int64_t w)
{
    return (size_t)(gi * ch * h * w);
}

/* The geometry of the images [n0, n0 + per) (at most), forward or
 * backward data. */
static geom pass_geom(const wino_shape *s, bool backward, int64_t n0, int64_t per)
{
    int64_t n = wino_pass_count(s->n, n0, per);
    return backward ? backward_geom(s, n) : forward_geom(s, n);
}

/* The scratch laid out for the passes of one direction, one group. */
static wino_bufs batch_bufs(const wino_shape *s, bool backward, void *ws)
{
    geom first = pass_geom(s, backward, 0, pass_images(s));
    int64_t ci = backward ? group_k(s) : group_c(s), co = backward ? group_c(s) : group_k(s);
    return wino_bufs_of(ws, NXI, tiles_of(&first).count, ci, co);
}

/* How a direction's filter reaches b->u for each group: transformed per
 * call (from the weights, rotated for backward data) or already (u, every
 * group's). */
typedef struct filters {
    const float *w, *u;
} filters;

/* out = conv(in) + bias (+ res, ReLU) over the batch, group by group and
 * pass by pass: the forward (c -> k channels) or the backward data (dy,
 * k -> c). */
static void convolve_batch(const wino_shape *s, bool backward, const float *in, const filters *f,
                           const epilogue *e, float *out, wino_bufs *b)
{
    int64_t per = pass_images(s), ci = backward ? group_k(s) : group_c(s), co = backward ? group_c(s) : group_k(s);
    for (int64_t gi = 0; gi < groups_of(s); gi++) {
        if (f->u)
            b->u = (float *)f->u + gi * group_points(s); /* the products only read it */
        else if (backward)
            transform_filters_rotated(s, f->w + gi * group_filter(s), b->u);
        else
            transform_filters(s, f->w + gi * group_filter(s), b->u);
        for (int64_t n0 = 0; n0 < s->n; n0 += per) {
            geom g = pass_geom(s, backward, n0, per);
            size_t io = image_offset(n0, g.icb, g.ih, g.iw) + group_offset(gi, ci, g.ih, g.iw);
            size_t oo = image_offset(n0, g.ocb, g.oh, g.ow) + group_offset(gi, co, g.oh, g.ow);
            epilogue pe = {e->bias ? e->bias + gi * co : NULL, e->res ? e->res + oo : NULL, e->relu};
            convolve(&g, ci, co, in + io, &pe, out + oo, b);
        }
    }
}

void wino_transform_filters(const wino_shape *s, const float *w, float *u)
{
    for (int64_t gi = 0; gi < groups_of(s); gi++)
        transform_filters(s, w + gi * group_filter(s), u + gi * group_points(s));
}

void wino_forward(const wino_shape *s, const float *x, const float *w, const float *bias,
                  const float *res, bool relu, float *y, void *ws)
{
    wino_bufs b = batch_bufs(s, false, ws);
    convolve_batch(s, false, x, &(filters){w, NULL}, &(epilogue){bias, res, relu}, y, &b);
}

void wino_forward_transformed(const wino_shape *s, const float *x, const float *u,
                              const float *bias, const float *res, bool relu, float *y, void *ws)
{
    wino_bufs b = batch_bufs(s, false, ws);
    convolve_batch(s, false, x, &(filters){NULL, u}, &(epilogue){bias, res, relu}, y, &b);
}

void wino_backward_data(const wino_shape *s, const float *dy, const float *w, float *dx, void *ws)
{
    wino_bufs b = batch_bufs(s, true, ws);
    convolve_batch(s, true, dy, &(filters){w, NULL}, &(epilogue){NULL, NULL, false}, dx, &b);
}

/* du[xi] (c x k) = sum over passes of v[xi]^T dm[xi], then dw = G^T du G,
 * group by group. */
void wino_backward_weights(const wino_shape *s, const float *x, const float *dy, float *dw,
                           void *ws)
{
    int64_t per = pass_images(s), c = group_c(s), k = group_k(s);
    wino_bufs b = batch_bufs(s, false, ws);
    for (int64_t gi = 0; gi < groups_of(s); gi++) {
        for (int64_t n0 = 0; n0 < s->n; n0 += per) {
            geom g = pass_geom(s, false, n0, per);
            tiles t = tiles_of(&g);
            size_t xo = image_offset(n0, g.icb, g.ih, g.iw) + group_offset(gi, c, g.ih, g.iw);
            size_t yo = image_offset(n0, g.ocb, g.oh, g.ow) + group_offset(gi, k, g.oh, g.ow);
            transform_inputs(&g, c, x + xo, &t, b.in);
            transform_grads(&g, k, dy + yo, &t, b.out);
            wino_weight_products(NXI, t.count, c, k, n0 > 0, &b);
        }
        untransform_filters(s, b.u, dw + gi * group_filter(s));
    }
}

WINO_TARGET void wino_bias_grad(int64_t n, int64_t k, int64_t hw, const float *dy, float *db)
{
    int64_t ncb = k / 8;
    WINO_PARALLEL
    for (int64_t kb = 0; kb < ncb; kb++) {
        v8 sum = {0};
        for (int64_t i = 0; i < n; i++) {
            const float *plane = dy + (i * ncb + kb) * hw * 8;
            for (int64_t p = 0; p < hw; p++)
                sum += *(const v8 *)(plane + p * 8);
        }
        *(v8 *)(db + kb * 8) = sum;
    }
}
