/* One-pass backward of an add that took over the split after it. */
#ifndef DLG_NN_CPU_GRAD_SUM_H
#define DLG_NN_CPU_GRAD_SUM_H

#include "../tensor.h"

#include <stdint.h>

/* g = the sum of the nparts tensors' diffs, zeroed where y <= 0 (y NULL:
 * no ReLU), written to dx0 and dx1 (either may be NULL); every buffer holds
 * n floats in one and the same layout. */
void cpu_grad_sum(float *dx0, float *dx1, dlg_tensor *const *parts, int nparts, const float *y,
                  int64_t n);
/* The same over bf16 tensors of n values, summed in fp32 and rounded once
 * (cpu_grad_sum_bf16.c; AVX-512 CPUs only, as cpu-bf16 is). */
void cpu_grad_sum_bf16(uint16_t *dx0, uint16_t *dx1, dlg_tensor *const *parts, int nparts,
                       const uint16_t *y, int64_t n);

#endif
