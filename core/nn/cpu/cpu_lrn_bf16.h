/* Across-channel LRN (Caffe's: y = x (k + alpha/size sum x^2 over the size
 * channels around)^-beta) over channels-last (nhwc) bf16 activations,
 * forward and backward, for beta = 0.75 (AlexNet's and GoogLeNet's), as
 * cpu-bf16 runs it.  oneDNN 2.6's bf16 LRN took 23 of GoogLeNet's 196 ms
 * bf16 training step, 4-6x the time its bytes take to move; here a row of
 * C channels is one pass: squares into a padded fp32 buffer, window sums
 * by offset loads, s^-0.75 by two refined reciprocal square roots.
 * AVX-512 CPUs only, as cpu-bf16 is. */
#ifndef DLG_NN_CPU_LRN_BF16_H
#define DLG_NN_CPU_LRN_BF16_H

#include <stdbool.h>
#include <stdint.h>

#define CPU_LRN_BF16_MAX_C 4096 /* a row's buffers live on the stack */

typedef struct cpu_lrn_shape {
    int64_t rows, C; /* rows = N*H*W */
    int size;        /* odd */
    float alpha, k;  /* beta is 0.75 */
} cpu_lrn_shape;

/* Whether these kernels take the layer (beta 0.75, size odd and <= 15,
 * C <= CPU_LRN_BF16_MAX_C). */
bool cpu_lrn_bf16_supported(int64_t C, int size, float beta);

void cpu_lrn_bf16_fwd(const cpu_lrn_shape *s, const uint16_t *x, uint16_t *y);

/* dx_c = dy_c s_c^-b - 2ab/size x_c sum_{j near c} dy_j x_j s_j^(-b-1),
 * s recomputed from x. */
void cpu_lrn_bf16_bwd(const cpu_lrn_shape *s, const uint16_t *x, const uint16_t *dy, uint16_t *dx);

#endif
