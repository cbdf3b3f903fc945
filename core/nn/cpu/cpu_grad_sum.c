/* The backward of an eltwise add that took over the split after it
 * (dlg_layer.top_parts): the split's output gradients summed, masked by a
 * folded ReLU's output, written to both input gradients, in one pass over
 * memory.  oneDNN needs three (sum, eltwise backward, copy: 8 passes over
 * the tensor against 5 here); ResNet-50 runs it once per block on tensors
 * up to 51 MB at batch 16. */
#include "cpu_grad_sum.h"

#include <stdint.h>

typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t v8i __attribute__((vector_size(32)));

#define CHUNK 4096 /* floats a thread takes at a time: 16 KiB per stream */

static void chunk(float *dx0, float *dx1, dlg_tensor *const *parts, int nparts, const float *y,
                  int64_t lo, int64_t hi)
{
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        v8 g = *(const v8 *)((const float *)parts[0]->diff + i), zero = {0};
        for (int p = 1; p < nparts; p++)
            g += *(const v8 *)((const float *)parts[p]->diff + i);
        if (y)
            g = (v8)((v8i)g & (*(const v8 *)(y + i) > zero));
        if (dx0)
            *(v8 *)(dx0 + i) = g;
        if (dx1)
            *(v8 *)(dx1 + i) = g;
    }
    for (; i < hi; i++) {
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

void cpu_grad_sum(float *dx0, float *dx1, dlg_tensor *const *parts, int nparts, const float *y,
                  int64_t n)
{
    int64_t nchunks = (n + CHUNK - 1) / CHUNK;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
        chunk(dx0, dx1, parts, nparts, y, lo, hi);
    }
}
