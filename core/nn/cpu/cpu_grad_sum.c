/* The backward of an eltwise add that took over the split after it
 * (dlg_layer.top_parts): the split's output gradients summed, masked by a
 * folded ReLU's output, written to both input gradients, in one pass over
 * memory.  oneDNN needs three (sum, eltwise backward, copy: 8 passes over
 * the tensor against 5 here); ResNet-50 runs it once per block on tensors
 * up to 51 MB at batch 16.  Past the caches the stores are non-temporal:
 * the second gradient is read again only after the whole branch's
 * backward, and skipping the read-for-ownership of both cuts the pass's
 * traffic (51 MB x 5 streams on 2 cores: 16 -> 8 ms). */
#include "cpu_grad_sum.h"

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t v8i __attribute__((vector_size(32)));

#define CHUNK 4096 /* floats a thread takes at a time: 16 KiB per stream */
#define STREAM_MIN ((int64_t)1 << 20) /* floats (4 MiB) from which stores stream */

/* *g = the gradient of the 8 floats at i (through memory: no AVX
 * vector in the signature of code built for the baseline ISA) */
static inline void grad8(dlg_tensor *const *parts, int nparts, const float *y, int64_t i, v8 *g)
{
    v8 s = *(const v8 *)((const float *)parts[0]->diff + i), zero = {0};
    for (int p = 1; p < nparts; p++)
        s += *(const v8 *)((const float *)parts[p]->diff + i);
    *g = y ? (v8)((v8i)s & (*(const v8 *)(y + i) > zero)) : s;
}

/* Floats lo..hi one at a time (a chunk's end short of a vector). */
static void tail(float *dx0, float *dx1, dlg_tensor *const *parts, int nparts, const float *y,
                 int64_t lo, int64_t hi)
{
    for (int64_t i = lo; i < hi; i++) {
        float g = 0;
        for (int p = 0; p < nparts; p++)
            g += ((const float *)parts[p]->diff)[i];
        if (y && !(y[i] > 0))
            g = 0;
        if (dx0)
            dx0[i] = g;
        if (dx1)
            dx1[i] = g;
    }
}

/* Floats lo..hi of the outputs. */
static void chunk(float *dx0, float *dx1, dlg_tensor *const *parts, int nparts, const float *y,
                  int64_t lo, int64_t hi)
{
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        v8 g;
        grad8(parts, nparts, y, i, &g);
        if (dx0)
            *(v8 *)(dx0 + i) = g;
        if (dx1)
            *(v8 *)(dx1 + i) = g;
    }
    tail(dx0, dx1, parts, nparts, y, i, hi);
}

/* chunk() with non-temporal stores (32-byte aligned outputs, AVX). */
__attribute__((target("avx"))) static void chunk_stream(float *dx0, float *dx1,
                                                        dlg_tensor *const *parts, int nparts,
                                                        const float *y, int64_t lo, int64_t hi)
{
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        v8 g;
        grad8(parts, nparts, y, i, &g);
        if (dx0)
            _mm256_stream_ps(dx0 + i, (__m256)g);
        if (dx1)
            _mm256_stream_ps(dx1 + i, (__m256)g);
    }
    _mm_sfence(); /* visible before the tail and the end of the region */
    tail(dx0, dx1, parts, nparts, y, i, hi);
}

void cpu_grad_sum(float *dx0, float *dx1, dlg_tensor *const *parts, int nparts, const float *y,
                  int64_t n)
{
    int64_t nchunks = (n + CHUNK - 1) / CHUNK;
    bool stream = n >= STREAM_MIN && __builtin_cpu_supports("avx") &&
                  (uintptr_t)dx0 % 32 == 0 && (uintptr_t)dx1 % 32 == 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
        if (stream)
            chunk_stream(dx0, dx1, parts, nparts, y, lo, hi);
        else
            chunk(dx0, dx1, parts, nparts, y, lo, hi);
    }
}
