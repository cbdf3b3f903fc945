/* Max pooling, forward and backward, over cpu-bf16's channels-last (nhwc)
 * bf16 activations and the cpu backend's fp32 ones in 16-channel blocks
 * (nChw16c, AVX-512) or 8-channel blocks (nChw8c, AVX2), as GoogLeNet,
 * Inception-v3, ResNet-50, AlexNet and VGG16 pool.  oneDNN 2.6's max
 * pooling ran GoogLeNet's at a sixteenth of the vector rate in bf16 (a
 * quarter of a training step) and at a few GB/s in fp32 (a quarter of a
 * GoogLeNet training step on AVX2 too); here each output is a vector of
 * channels' max over its window, the window position of the first maximum
 * kept per value for backward, and backward gathers each input's gradient
 * from the outputs whose window holds it (summed in fp32, in Caffe's
 * order; bf16 rounded once).  The AVX2 kernels: cpu_maxpool_avx2.c. */
#ifndef DLG_NN_CPU_MAXPOOL_H
#define DLG_NN_CPU_MAXPOOL_H

#include <stdbool.h>
#include <stdint.h>

typedef enum cpu_pool_layout {
    CPU_POOL_BF16_NHWC,    /* bf16, channels last */
    CPU_POOL_F32_NCHW16C,  /* fp32, 16-channel blocks (C a multiple of 16: oneDNN pads) */
    CPU_POOL_F32_NCHW8C,   /* fp32, 8-channel blocks (C a multiple of 8), AVX2 */
} cpu_pool_layout;

/* Caffe's windows: output (oh, ow) covers rows oh*sh - ph .. + kh and
 * columns ow*sw - pw .. + kw, clipped to the input (padding never wins). */
typedef struct cpu_pool_shape {
    int64_t N, H, W, C, OH, OW; /* C: the layout's channels (nChw16c, nChw8c: padded to 16, 8) */
    int kh, kw, sh, sw, ph, pw; /* kh * kw <= 255: a window position fits a byte */
    cpu_pool_layout layout;
} cpu_pool_shape;

/* Whether this CPU runs the kernels of this layout (nChw8c: AVX2; the
 * others: AVX-512 F, BW, VL, DQ). */
bool cpu_maxpool_supported(cpu_pool_layout layout);

/* y = the window maxima; idx (NULL: not kept) the first maximum's position
 * in its window (row-major, kh * kw of them), one byte per value of y, in
 * y's layout (N x OH x OW x C bytes). */
void cpu_maxpool_fwd(const cpu_pool_shape *s, const void *x, void *y, uint8_t *idx);

/* dx = the sum of dy over the outputs whose kept maximum is that input. */
void cpu_maxpool_bwd(const cpu_pool_shape *s, const void *dy, const uint8_t *idx, void *dx);

#endif
