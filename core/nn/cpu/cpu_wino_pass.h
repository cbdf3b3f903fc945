/* What the Winograd kernels (cpu_winograd.c, 2-d; cpu_wino1d.c, 1-d)
 * share: the batch in passes, the scratch they lay out, and the products
 * per transformed point, by oneDNN's sgemm. */
#ifndef DLG_NN_CPU_WINO_PASS_H
#define DLG_NN_CPU_WINO_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether `items` output tiles (or strips) of c channels in and k out
 * repay transforming the filter and moving the transformed data (the
 * measurements are in cpu_winograd.c's wino_pays; both kernels use them). */
bool wino_batch_pays(int64_t items, int64_t c, int64_t k);
/* Images per pass over a batch of n: `pass` when set (tests), else as
 * many as keep `per_image` bytes of transformed data each within 16 MiB,
 * balanced over the passes. */
int64_t wino_pass_images(int64_t n, int64_t pass, size_t per_image);
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
