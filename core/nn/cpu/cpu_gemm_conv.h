/* The weights' gradient of strided convolutions by im2col and sgemm for
 * the cpu backend: activations in oneDNN's nChw8c layout, weights in its
 * ABcd8b8a layout (the ones its AVX2 kernels pick).  oneDNN 2.6's AVX2
 * kernel computes it for ResNet-50's stride-2 3x3 layers at 35-38% of
 * peak; one sgemm per pass of images reaches 60-75%.  Forward and
 * backward data stay with oneDNN, whose kernels there run as fast as the
 * product alone (see docs/architecture.md). */
#ifndef DLG_NN_CPU_GEMM_CONV_H
#define DLG_NN_CPU_GEMM_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gemm_conv_shape {
    int64_t n, c, k;      /* batch, channels in, out */
    int64_t h, w;         /* input planes */
    int64_t kh, kw;       /* filter */
    int64_t stride, pad;  /* the same along both axes */
    int64_t pass;         /* images per pass; 0: as many as fit 16 MiB */
} gemm_conv_shape;

/* True when the shape can run here: channels in blocks of 8, outputs
 * not empty, pad smaller than the filter. */
bool gemm_conv_supported(const gemm_conv_shape *s);
/* True where this beats oneDNN's kernel: 3x3, stride 2, with enough
 * output pixels in the batch for the sgemm to pay. */
bool gemm_conv_pays(const gemm_conv_shape *s);
/* Scratch one pass needs (the image columns, dy as rows, the filter
 * gradient as a matrix), in bytes. */
size_t gemm_conv_ws_bytes(const gemm_conv_shape *s);

/* dw = the gradient of the weights (overwritten). */
void gemm_conv_backward_weights(const gemm_conv_shape *s, const float *x, const float *dy,
                                float *dw, void *ws);

#endif
