/* Across-channel LRN (Caffe's: y = x (k + alpha/size sum x^2 over the size
 * channels around)^-beta) over the cpu backend's nChw8c fp32 activations
 * on AVX2, forward, for beta = 0.75 (AlexNet's and GoogLeNet's), in
 * inference plans.  oneDNN 2.6's took 8% of a GoogLeNet inference step on
 * a Zen 3 (24 ms of 295; these 10).  Training keeps oneDNN's: its
 * backward reads the scale its forward saved, and took half the time of
 * a backward written as this forward is, which recomputed it (GoogLeNet's
 * two LRNs, forward and backward, were 36 ms either way).  One pixel at a
 * time: its channels, spread over the 8-channel blocks, are gathered into
 * an fp32 row with size/2 zeros on either side, and the window sums are
 * unaligned loads of it, as cpu_lrn_bf16.c does for nhwc rows. */
#ifndef DLG_NN_CPU_LRN_AVX2_H
#define DLG_NN_CPU_LRN_AVX2_H

#include <stdbool.h>
#include <stdint.h>

#define CPU_LRN_AVX2_MAX_C 4096 /* a pixel's rows live on the stack */

typedef struct cpu_lrn8_shape {
    int64_t N, C, HW; /* C: the real channels; in memory blocks of 8, the last zero-padded */
    int size;         /* odd */
    float alpha, k;   /* beta is 0.75 */
} cpu_lrn8_shape;

/* Whether these kernels take the layer on this CPU (AVX2 and FMA, beta
 * 0.75, size odd and <= 15, C <= CPU_LRN_AVX2_MAX_C). */
bool cpu_lrn_avx2_supported(int64_t C, int size, float beta);

/* y = LRN(x); the padded channels of y are written as zeros. */
void cpu_lrn_avx2_fwd(const cpu_lrn8_shape *s, const float *x, float *y);

#endif
