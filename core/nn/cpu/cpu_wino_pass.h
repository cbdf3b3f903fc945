/* What the engine's convolution kernels (cpu_winograd.c, 2-d Winograd;
 * cpu_wino1d.c, 1-d; cpu_gemm_conv.c, im2col) share: the batch in passes,
 * the scratch they lay out, the weights' blocked layout, and the products
 * by oneDNN's sgemm. */
#ifndef DLG_NN_CPU_WINO_PASS_H
#define DLG_NN_CPU_WINO_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether `items` output tiles (or strips) of c channels in and k out
 * repay transforming the filter and moving the transformed data (the
 * measurements are in cpu_winograd.c's wino_pays; both kernels use them). */
bool wino_batch_pays(int64_t items, int64_t c, int64_t k);
/* Its channel half: c k / (c + k) >= 32. */
bool wino_channels_pay(int64_t c, int64_t k);
/* Its item half: 32 or more. */
bool wino_items_pay(int64_t items);
/* Images per pass over a batch of n: `pass` when set (tests), else as
 * many as keep `per_image` bytes of transformed data each within 16 MiB,
 * balanced over the passes. */
int64_t wino_pass_images(int64_t n, int64_t pass, size_t per_image);
/* Images in the pass from image n0 of n on, `per` images a pass. */
static inline int64_t wino_pass_count(int64_t n, int64_t n0, int64_t per)
{
    return n - n0 < per ? n - n0 : per;
}

/* Offset of filter (k, c, i, j) of nc channels in and kh x kw taps in
 * oneDNN's ABcd8b8a layout, [k/8][c/8][kh][kw][8 c][8 k]: the one its AVX2
 * kernels pick, which the engine's kernels read in place. */
static inline size_t wino_widx(int64_t k, int64_t c, int64_t i, int64_t j, int64_t nc, int64_t kh,
                               int64_t kw)
{
    return (size_t)(((((k / 8) * (nc / 8) + c / 8) * kh + i) * kw + j) * 64 + (c % 8) * 8 +
                    k % 8);
}

/* Scratch for npts points: `count` transformed items of ci and co
 * channels, and the transformed filter; 64-byte aligned inside. */
size_t wino_scratch_bytes(int npts, int64_t count, int64_t ci, int64_t co);

typedef struct wino_bufs {
    float *in, *out, *u; /* [xi][item][ci], [xi][item][co], [xi][ci][co] */
} wino_bufs;

wino_bufs wino_bufs_of(void *ws, int npts, int64_t count, int64_t ci, int64_t co);
/* out[xi] = in[xi] (count x ci) * u[xi] (ci x co), every point. */
void wino_products(int npts, int64_t count, int64_t ci, int64_t co, const wino_bufs *b);
/* u[xi] (ci x co) = in[xi]^T out[xi] over count items, added to u when
 * `accumulate` (the passes after the first). */
void wino_weight_products(int npts, int64_t count, int64_t ci, int64_t co, bool accumulate,
                          const wino_bufs *b);

#endif
