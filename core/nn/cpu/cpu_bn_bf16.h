/* Batch normalization over channels-last (nhwc) bf16 activations, as
 * cpu-bf16 trains: batch statistics forward with the scale and shift
 * (and an optional ReLU) applied, and the backward to the input, scale
 * and shift.  oneDNN 2.6's bf16 nhwc batch norm runs ResNet-50's layers
 * at 9-16 GB/s (a quarter of a step at batch 16), below the memory's rate
 * even for layers that fit in L2; these take the fewest passes (2 reads
 * and a write forward, 4 reads and a write backward) at vector speed.
 * AVX-512 CPUs only, as cpu-bf16 is. */
#ifndef DLG_NN_CPU_BN_BF16_H
#define DLG_NN_CPU_BN_BF16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* rows = N*H*W values of each of C channels, row-major (nhwc). */
typedef struct cpu_bn_shape {
    int64_t rows, C;
    float eps;
    bool relu;   /* y = max(0, bn(x)); backward masks dy where bn(x) <= 0 */
    int threads; /* the most the calls run on (>= 1) */
} cpu_bn_shape;

/* Bytes of scratch (64-byte aligned) the calls need. */
size_t cpu_bn_bf16_scratch(const cpu_bn_shape *s);

/* Forward with batch statistics: mean and var (biased) of each channel
 * written, y = relu?(gamma * (x - mean) / sqrt(var + eps) + beta + res)
 * (res NULL: none; a batch norm that took over a residual add, whose ReLU
 * then applies after the add). */
void cpu_bn_bf16_fwd(const cpu_bn_shape *s, const uint16_t *x, uint16_t *y, const float *gamma,
                     const float *beta, const uint16_t *res, float *mean, float *var, void *scratch);

/* Backward from the forward's mean and var: dgamma, dbeta (overwritten)
 * and dx, which may be dy's memory (the second pass reads each value
 * before it writes it, after every thread's first pass) but not x's.  beta is needed only with relu (the mask is
 * recomputed from x as forward computed it). */
void cpu_bn_bf16_bwd(const cpu_bn_shape *s, const uint16_t *x, const uint16_t *dy, uint16_t *dx,
                     const float *gamma, const float *beta, const float *mean, const float *var,
                     float *dgamma, float *dbeta, void *scratch);

/* sums[c] = the sum of x over the rows (a bias gradient from dy), by the
 * backward's first pass; scratch as above (eps and relu unused). */
void cpu_bf16_channel_sums(const cpu_bn_shape *s, const uint16_t *x, float *sums, void *scratch);

#endif
