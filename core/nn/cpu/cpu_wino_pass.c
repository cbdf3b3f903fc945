/* Passes, scratch and products of the Winograd kernels (cpu_wino_pass.h). */
#include "cpu_wino_pass.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

/* Bytes one pass's transformed data may take (both sides of the
 * products): passes over a few images keep them in the last-level cache
 * between the transforms and the products rather than in DRAM (ResNet-50's
 * 56x56 layers at batch 16 would need 58 MB at once). */
#define PASS_BYTES ((size_t)16 << 20)

bool wino_channels_pay(int64_t c, int64_t k) { return c * k >= 32 * (c + k); }

bool wino_items_pay(int64_t items) { return items >= 32; }

bool wino_batch_pays(int64_t items, int64_t c, int64_t k)
{
    return wino_items_pay(items) && wino_channels_pay(c, k);
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

/* Work items of the products: every point, and when the points do not
 * divide among the threads (1-d kernels: 6 or 9), each split in as many
 * parts as threads.  Each item's sgemm runs on one thread (oneDNN's sgemm
 * does inside a parallel region), so the threads meet once per pass, not
 * once per point: per-point threaded sgemms left ~18% of the engine's
 * barrier waiting in ResNet-50 training. */
static int product_parts(int npts)
{
    int nthr = omp_get_max_threads();
    return nthr > 1 && npts % nthr ? nthr : 1;
}

static void part_range(int64_t n, int part, int parts, int64_t *lo, int64_t *len)
{
    *lo = n * part / parts;
    *len = n * (part + 1) / parts - *lo;
}

void wino_products(int npts, int64_t count, int64_t ci, int64_t co, const wino_bufs *b)
{
    int parts = product_parts(npts);
#pragma omp parallel for schedule(static)
    for (int item = 0; item < npts * parts; item++) {
        int64_t xi = item / parts, r0, rows; /* rows of count */
        part_range(count, item % parts, parts, &r0, &rows);
        if (rows > 0)
            dnnl_sgemm('N', 'N', rows, co, ci, 1.0f, b->in + (xi * count + r0) * ci, ci,
                       b->u + xi * ci * co, co, 0.0f, b->out + (xi * count + r0) * co, co);
    }
}

void wino_weight_products(int npts, int64_t count, int64_t ci, int64_t co, bool accumulate,
                          const wino_bufs *b)
{
    int parts = product_parts(npts);
#pragma omp parallel for schedule(static)
    for (int item = 0; item < npts * parts; item++) {
        int64_t xi = item / parts, c0, cols; /* columns of co */
        part_range(co, item % parts, parts, &c0, &cols);
        if (cols > 0)
            dnnl_sgemm('T', 'N', ci, cols, count, 1.0f, b->in + xi * count * ci, ci,
                       b->out + xi * count * co + c0, co, accumulate ? 1.0f : 0.0f,
                       b->u + xi * ci * co + c0, co);
    }
}
