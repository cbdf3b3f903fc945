/* What cpu_maxpool.c (AVX-512) and cpu_maxpool_avx2.c share: Caffe's
 * windows along one axis, where a layout puts a value, and the AVX2
 * kernels' row entry. */
#ifndef DLG_NN_CPU_MAXPOOL_ROWS_H
#define DLG_NN_CPU_MAXPOOL_ROWS_H

#include "cpu_maxpool.h"

#define CPU_POOL_NO_MAX 255 /* an empty window's position: no input gets its gradient */

/* The window along one axis: [*lo, *hi) clipped to the input, a its start. */
static inline void cpu_pool_window(int64_t o, int k, int s, int pad, int64_t in, int64_t *a, int64_t *lo,
                                   int64_t *hi)
{
    *a = o * s - pad;
    *lo = *a < 0 ? 0 : *a;
    *hi = *a + k < in ? *a + k : in;
}

/* floor(a / b) for b > 0 and any a */
static inline int64_t cpu_pool_floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* The outputs along one axis whose window holds input i: [*lo, *hi]. */
static inline void cpu_pool_outputs_of(int64_t i, int k, int s, int pad, int64_t out, int64_t *lo, int64_t *hi)
{
    *lo = cpu_pool_floor_div(i + pad - k, s) + 1; /* the first o with o*s - pad + k > i */
    *lo = *lo < 0 ? 0 : *lo;
    *hi = cpu_pool_floor_div(i + pad, s); /* the last o with o*s - pad <= i */
    *hi = *hi > out - 1 ? out - 1 : *hi;
}

/* An H x W image's strides in the layout, in values: the channel vector
 * from c (a multiple of the layout's block: 16, 8) of pixel (n, h, w)
 * starts at n img + h row + w px + c cf; in nhwc all of them are one row. */
typedef struct cpu_pool_strides {
    int64_t img, row, px, cf;
} cpu_pool_strides;

static inline cpu_pool_strides cpu_pool_strides_of(const cpu_pool_shape *s, int64_t H, int64_t W)
{
    if (s->layout == CPU_POOL_BF16_NHWC)
        return (cpu_pool_strides){H * W * s->C, W * s->C, s->C, 1};
    int64_t b = s->layout == CPU_POOL_F32_NCHW8C ? 8 : 16;
    return (cpu_pool_strides){H * W * s->C, W * b, b, H * W};
}

static inline int64_t cpu_pool_at(const cpu_pool_strides *t, int64_t n, int64_t h, int64_t w, int64_t c)
{
    return n * t->img + h * t->row + w * t->px + c * t->cf;
}

/* nChw8c (AVX2): output row (n, oh) forward, or input row (n, ih)
 * backward, every channel. */
void cpu_maxpool_row_avx2(const cpu_pool_shape *s, const float *in, const uint8_t *idx_in, float *out,
                          uint8_t *idx_out, int64_t n, int64_t r, bool bwd);

#endif
