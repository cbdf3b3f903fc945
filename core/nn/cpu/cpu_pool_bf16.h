/* Max pooling over channels-last (nhwc) bf16 activations, forward and
 * backward, as cpu-bf16 runs GoogLeNet's, Inception-v3's and ResNet-50's
 * pools.  oneDNN 2.6's bf16 nhwc max pooling ran GoogLeNet's at about a
 * sixteenth of the vector rate (a quarter of a bf16 training step); here
 * each output is a 16-channel max over its window, the window position
 * of the first maximum kept per value for backward, and backward gathers
 * each input's gradient from the outputs whose window holds it (summed in
 * fp32, in Caffe's order, rounded once).  AVX-512 CPUs only, as cpu-bf16
 * is. */
#ifndef DLG_NN_CPU_POOL_BF16_H
#define DLG_NN_CPU_POOL_BF16_H

#include <stdint.h>

/* Caffe's windows: output (oh, ow) covers rows oh*sh - ph .. + kh and
 * columns ow*sw - pw .. + kw, clipped to the input (padding never wins). */
typedef struct cpu_pool_shape {
    int64_t N, H, W, C, OH, OW;
    int kh, kw, sh, sw, ph, pw; /* kh * kw <= 255: a window position fits a byte */
} cpu_pool_shape;

/* y = the window maxima; idx (NULL: not kept) the first maximum's position
 * in its window (row-major, kh * kw of them), one byte per value of y. */
void cpu_maxpool_bf16_fwd(const cpu_pool_shape *s, const uint16_t *x, uint16_t *y, uint8_t *idx);

/* dx = the sum of dy over the outputs whose kept maximum is that input. */
void cpu_maxpool_bf16_bwd(const cpu_pool_shape *s, const uint16_t *dy, const uint8_t *idx, uint16_t *dx);

#endif
