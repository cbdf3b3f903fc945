/* cpu_grad_sum for cpu-bf16's gradients (cpu_grad_sum.h): the parts
 * widened to fp32 and summed in order, masked where the bf16 output is
 * not > 0, rounded once to nearest even and written to both inputs'
 * gradients, in one pass.  It computes what oneDNN's sum, ReLU backward
 * and copy compute (an fp32 accumulation rounded once), in 5 passes over
 * memory where they take 8: ResNet-50 runs it once per block, on bf16
 * tensors up to 26 MB at batch 16.  cpu-bf16 runs on AVX-512 CPUs only,
 * so this is compiled for AVX-512 (cpu_bf16_simd.h). */
#include "cpu_grad_sum.h"

#include "cpu_bf16_simd.h"

#include <stdbool.h>
#include <stdint.h>

#define CHUNK 8192                       /* values a thread takes at a time: 16 KiB per stream */
#define STREAM_MIN ((int64_t)1 << 21)    /* values (4 MiB) from which stores stream */

/* Values lo..hi; stream: non-temporal stores for whole 16-value vectors
 * (chunks start 32-byte aligned: CHUNK values from aligned buffers). */
BF16_TARGET static void chunk(uint16_t *dx0, uint16_t *dx1, dlg_tensor *const *parts, int nparts,
                              const uint16_t *y, int64_t lo, int64_t hi, bool stream)
{
    for (int64_t i = lo; i < hi; i += 16) {
        __mmask16 m = bf16_lanes(hi - i);
        __m512 g = bf16_widen(m, (const uint16_t *)parts[0]->diff + i);
        for (int p = 1; p < nparts; p++)
            g = _mm512_add_ps(g, bf16_widen(m, (const uint16_t *)parts[p]->diff + i));
        if (y)
            g = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(bf16_widen(m, y + i), _mm512_setzero_ps(), _CMP_GT_OQ), g);
        __m256i b = bf16_narrow(g);
        uint16_t *out[2] = {dx0, dx1};
        for (int k = 0; k < 2; k++) {
            if (!out[k])
                continue;
            if (stream && m == 0xffff)
                _mm256_stream_si256((__m256i *)(out[k] + i), b);
            else
                _mm256_mask_storeu_epi16(out[k] + i, m, b);
        }
    }
    if (stream)
        _mm_sfence(); /* visible before the end of the region */
}

void cpu_grad_sum_bf16(uint16_t *dx0, uint16_t *dx1, dlg_tensor *const *parts, int nparts,
                       const uint16_t *y, int64_t n)
{
    int64_t nchunks = (n + CHUNK - 1) / CHUNK;
    bool stream = n >= STREAM_MIN && (uintptr_t)dx0 % 32 == 0 && (uintptr_t)dx1 % 32 == 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
        chunk(dx0, dx1, parts, nparts, y, lo, hi, stream);
    }
}
