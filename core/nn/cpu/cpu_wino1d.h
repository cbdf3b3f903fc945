/* One-dimensional Winograd convolutions for the cpu backend: 1 x r and
 * r x 1 filters (Inception-v3's factorised 1x7/7x1 and 1x3/3x1 layers),
 * stride 1, ungrouped, activations in oneDNN's nChw8c layout.  F(3,7)
 * (9 points: 27 instead of 63 multiplies per 3 outputs) for r = 7, F(4,3)
 * (6 points) for r = 3; oneDNN 2.6 has no Winograd for these on any ISA. */
#ifndef DLG_NN_CPU_WINO1D_H
#define DLG_NN_CPU_WINO1D_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wino1d_shape {
    int64_t n, c, k; /* batch, channels in, out */
    int64_t h, w;    /* input planes */
    int axis;        /* 1: a 1 x r filter (along w); 0: r x 1 (along h) */
    int r;           /* taps: 7 or 3 */
    int64_t pad;     /* zeros on both ends along the axis, 0..r-1; none across */
    int64_t pass;    /* images per pass; 0: transformed tiles within 16 MiB */
} wino1d_shape;

/* True when this machine and shape can run here (AVX2+FMA, r 3 or 7,
 * channels in blocks of 8, a non-empty output). */
bool wino1d_supported(const wino1d_shape *s);
/* True when Winograd beats oneDNN's direct kernels here (measurements
 * beside the definition). */
bool wino1d_pays(const wino1d_shape *s);
size_t wino1d_ws_bytes(const wino1d_shape *s);
/* The output planes: along the axis h (or w) + 2 pad - r + 1. */
void wino1d_out(const wino1d_shape *s, int64_t *oh, int64_t *ow);
/* "F(3,7)" or "F(4,3)". */
const char *wino1d_name(const wino1d_shape *s);

/* Weights in oneDNN's ABcd8b8a layout ([k/8][c/8][r taps][8 c][8 k]).
 * y = conv(x, w) + bias, then + res, then ReLU (bias, res may be NULL). */
void wino1d_forward(const wino1d_shape *s, const float *x, const float *w, const float *bias,
                    const float *res, bool relu, float *y, void *ws);
void wino1d_backward_data(const wino1d_shape *s, const float *dy, const float *w, float *dx,
                          void *ws);
void wino1d_backward_weights(const wino1d_shape *s, const float *x, const float *dy, float *dw,
                             void *ws);

#endif
