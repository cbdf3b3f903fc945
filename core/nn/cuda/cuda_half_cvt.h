/* Host-side bf16 <-> fp32 conversion (no CUDA calls, so CI tests it
 * anywhere): how dlg_net_read/write see bf16 tensors of cuda-bf16:N. */
#ifndef DLG_NN_CUDA_BF16_CVT_H
#define DLG_NN_CUDA_BF16_CVT_H

#include <stdint.h>

/* Round to nearest, ties to even (as __float2bfloat16_rn); NaN stays a
 * quiet NaN, infinities and overflow to infinity as IEEE rounding says. */
uint16_t dlg_bf16_from_f32(float f);
float dlg_bf16_to_f32(uint16_t v);
void dlg_bf16_from_f32_n(const float *src, uint16_t *dst, int64_t n);
void dlg_bf16_to_f32_n(const uint16_t *src, float *dst, int64_t n);

#endif
