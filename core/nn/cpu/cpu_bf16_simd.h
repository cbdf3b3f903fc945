/* bf16 <-> fp32 in AVX-512 registers, for cpu-bf16's hand-written passes
 * (cpu_grad_sum_bf16.c, cpu_bn_bf16.c): sixteen values at a time, loads
 * masked for a tail.  Callers compile for BF16_TARGET (cpu-bf16 runs on
 * AVX-512 CPUs only). */
#ifndef DLG_NN_CPU_BF16_SIMD_H
#define DLG_NN_CPU_BF16_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#define BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/* The values of p under m, exactly (bf16 is fp32's upper half); 0 elsewhere. */
BF16_TARGET static inline __m512 bf16_widen(__mmask16 m, const uint16_t *p)
{
    __m512i u = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
}

/* Round to nearest even; a NaN stays a NaN (quieted), as in cpu_lstm_cell.c */
BF16_TARGET static inline __m256i bf16_narrow(__m512 f)
{
    __m512i u = _mm512_castps_si512(f);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd));
    __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x400000));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

/* The first n (<= 16) lanes. */
static inline __mmask16 bf16_lanes(int64_t n) { return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1); }

#endif
