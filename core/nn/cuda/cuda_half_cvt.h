/* Host-side 16-bit float <-> fp32 conversion (no CUDA calls, so CI tests it
 * anywhere): how dlg_net_read/write see the half tensors of cuda-bf16:N
 * (bf16) and cuda-fp16:N (IEEE binary16). */
#ifndef DLG_NN_CUDA_HALF_CVT_H
#define DLG_NN_CUDA_HALF_CVT_H

#include <stdbool.h>
#include <stdint.h>

/* Round to nearest, ties to even (as __float2bfloat16_rn); NaN stays a
 * quiet NaN, infinities and overflow to infinity as IEEE rounding says. */
uint16_t dlg_bf16_from_f32(float f);
float dlg_bf16_to_f32(uint16_t v);
void dlg_bf16_from_f32_n(const float *src, uint16_t *dst, int64_t n);
void dlg_bf16_to_f32_n(const uint16_t *src, float *dst, int64_t n);

/* IEEE binary16, as __float2half_rn / __half2float: round to nearest even,
 * subnormals kept, beyond 65504 (after rounding) infinity, NaN quiet. */
uint16_t dlg_fp16_from_f32(float f);
float dlg_fp16_to_f32(uint16_t v);

/* Either format: fp16 true for binary16, false for bf16. */
void dlg_half_from_f32_n(bool fp16, const float *src, uint16_t *dst, int64_t n);
void dlg_half_to_f32_n(bool fp16, const uint16_t *src, float *dst, int64_t n);

#endif
