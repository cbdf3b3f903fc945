/* Winograd F(4x4, 3x3) and F(2x2, 5x5) convolutions for the cpu backend:
 * 3x3 or 5x5, stride 1, padded below the filter's size (the same both
 * ways), grouped or not (whole 8-channel blocks a group), activations in
 * oneDNN's nChw8c layout.  oneDNN 2.6
 * has Winograd kernels for AVX-512 only; on AVX2 its direct kernels do 4x
 * the multiplications of these (see docs/architecture.md). */
#ifndef DLG_NN_CPU_WINOGRAD_H
#define DLG_NN_CPU_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wino_shape {
    int64_t n, c, k; /* batch, channels in, out */
    int64_t h, w;    /* input planes; output planes h + 2 pad - (r - 1) by w + 2 pad - (r - 1) */
    int64_t pad;     /* zeros around the input, 0 to r - 1 (the same on every side) */
    int64_t pass;    /* images per pass; 0: as many as keep the transformed
                      * tiles within 16 MiB (tests set it) */
    int64_t groups;  /* c and k split in this many (0 or 1: ungrouped) */
    int64_t r;       /* the filter: r x r, 3 (or 0) by F(4x4, 3x3), 5 by F(2x2, 5x5) */
} wino_shape;

/* True when this machine and shape can run here (AVX2+FMA, each group's
 * channels in blocks of 8, r 3 or 5, pad below r, outputs not empty). */
bool wino_supported(const wino_shape *s);
/* True when the batch has enough output tiles for Winograd to beat
 * direct convolution (the measurements are beside the definition). */
bool wino_pays(const wino_shape *s);
/* The same when the filter is transformed once for many calls
 * (inference): fewer tiles repay it. */
bool wino_cached_pays(const wino_shape *s);
/* Whether an inference layer should keep its transformed filter rather
 * than transform it per call (few tiles). */
bool wino_keeps_filter(const wino_shape *s);
/* Bytes of the transformed filter (36 points x c x k / groups). */
size_t wino_filter_bytes(const wino_shape *s);
/* Scratch the three directions need at most (transformed tiles and
 * weights), in bytes. */
size_t wino_ws_bytes(const wino_shape *s);

/* Weights are in oneDNN's ABcd8b8a layout ([k/8][c/8][r][r][8 c][8 k]),
 * the one its AVX2 kernels pick for these shapes; grouped, gOIhw8i8o
 * (that layout per group of c/groups in, k/groups out, group after
 * group).
 *
 * y = conv(x, w) + bias, then + res, then ReLU (bias, res may be NULL). */
void wino_forward(const wino_shape *s, const float *x, const float *w, const float *bias,
                  const float *res, bool relu, float *y, void *ws);
/* u = the filter w transformed, for wino_forward_transformed. */
void wino_transform_filters(const wino_shape *s, const float *w, float *u);
/* wino_forward with the filter already transformed into u. */
void wino_forward_transformed(const wino_shape *s, const float *x, const float *u,
                              const float *bias, const float *res, bool relu, float *y, void *ws);
/* dx = the gradient of the input from dy. */
void wino_backward_data(const wino_shape *s, const float *dy, const float *w, float *dx, void *ws);
/* dw = the gradient of the weights (overwritten). */
void wino_backward_weights(const wino_shape *s, const float *x, const float *dy, float *dw,
                           void *ws);
/* db = the gradient of the bias: dy (nChw8c: n images, k channels, hw
 * pixels each) summed over batch and pixels. */
void wino_bias_grad(int64_t n, int64_t k, int64_t hw, const float *dy, float *db);

#endif
