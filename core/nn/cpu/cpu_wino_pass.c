/* Passes, scratch and products of the Winograd kernels (cpu_wino_pass.h). */
#include "cpu_wino_pass.h"

#include <oneapi/dnnl/dnnl.h>

/* Bytes one pass's transformed data may take (both sides of the
 * products): passes over a few images keep them in the last-level cache
 * between the transforms and the products rather than in DRAM (ResNet-50's
 * 56x56 layers at batch 16 would need 58 MB at once). */
#define PASS_BYTES ((size_t)16 << 20)

bool wino_batch_pays(int64_t items, int64_t c, int64_t k)
{
    return items >= 32 && c * k >= 32 * (c + k);
}

int64_t wino_pass_images(int64_t n, int64_t pass, size_t per_image)
{
    if (pass > 0)
        return pass < n ? pass : n;
    int64_t most = (int64_t)(PASS_BYTES / (per_image ? per_image : 1));
    if (most < 1)
        most = 1;
    if (most >= n)
        return n;
    int64_t passes = (n + most - 1) / most;
    return (n + passes - 1) / passes;
}

size_t wino_scratch_bytes(int npts, int64_t count, int64_t ci, int64_t co)
{
    return sizeof(float) * (size_t)npts * ((size_t)count * (size_t)(ci + co) + (size_t)(ci * co)) +
           64;
}

wino_bufs wino_bufs_of(void *ws, int npts, int64_t count, int64_t ci, int64_t co)
{
    float *p = (float *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
    wino_bufs b = {p, p + npts * count * ci, p + npts * count * (ci + co)};
    return b;
}

void wino_products(int npts, int64_t count, int64_t ci, int64_t co, const wino_bufs *b)
{
    for (int xi = 0; xi < npts; xi++)
        dnnl_sgemm('N', 'N', count, co, ci, 1.0f, b->in + xi * count * ci, ci, b->u + xi * ci * co,
                   co, 0.0f, b->out + xi * count * co, co);
}

void wino_weight_products(int npts, int64_t count, int64_t ci, int64_t co, bool accumulate,
                          const wino_bufs *b)
{
    for (int xi = 0; xi < npts; xi++)
        dnnl_sgemm('T', 'N', ci, co, count, 1.0f, b->in + xi * count * ci, ci,
                   b->out + xi * count * co, co, accumulate ? 1.0f : 0.0f, b->u + xi * ci * co, co);
}
