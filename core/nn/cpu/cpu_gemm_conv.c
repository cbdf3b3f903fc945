/* The weights' gradient of strided convolutions by im2col and sgemm
 * (cpu_gemm_conv.h).
 *
 * A pass over a few images lays their input patches out as rows,
 *   col[(image, oy, ox)][(i, j, c)] = x[image][c][oy s - pad + i][ox s - pad + j]
 * and dy as rows dy'[(image, oy, ox)][k]; then one matrix product per pass
 *   dwt[(i, j, c)][k] += col^T . dy'
 * gives the filter as a (kh kw c) x k matrix.  In nChw8c, 8 channels of
 * one pixel are 32 contiguous bytes, and so are 8 output channels of one
 * filter tap in ABcd8b8a: every copy here moves one such block. */
#include "cpu_gemm_conv.h"
#include "cpu_wino_pass.h"

#include <oneapi/dnnl/dnnl.h>
#include <string.h>

#define GC_TARGET __attribute__((target("avx2,fma")))

#ifdef _OPENMP
#define GC_PARALLEL2 _Pragma("omp parallel for collapse(2) schedule(static)")
#else
#define GC_PARALLEL2
#endif

typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t pad)
{
    return (in + 2 * pad - k) / s + 1;
}

static int64_t out_h(const gemm_conv_shape *s) { return out_size(s->h, s->kh, s->stride, s->pad); }
static int64_t out_w(const gemm_conv_shape *s) { return out_size(s->w, s->kw, s->stride, s->pad); }
/* columns of col: one per filter tap and input channel */
static int64_t taps(const gemm_conv_shape *s) { return s->kh * s->kw * s->c; }

bool gemm_conv_supported(const gemm_conv_shape *s)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && s->n > 0 &&
           s->c % 8 == 0 && s->k % 8 == 0 && s->kh > 0 && s->kw > 0 && s->stride > 0 &&
           s->pad >= 0 && s->pad < s->kh && s->pad < s->kw && s->h + 2 * s->pad >= s->kh &&
           s->w + 2 * s->pad >= s->kw;
}

/* scripts/bench/strided-vs-onednn.sh (docs/benchmarks.md), ResNet-50's
 * stride-2 3x3 layers, backward weights against oneDNN's AVX2 kernel: at
 * batch 16 1.0-1.3x (56 -> 28), 0.9-1.2x (28 -> 14), 1.65-2.2x (14 -> 7);
 * 1.3x with 196 output pixels in the batch, 0.9x with 49: too few rows
 * for the product, hence the floor of 128.  The forward by the same
 * product measured 0.7-1.4x (the sgemm alone runs at the direct kernel's
 * speed; im2col adds 2-5 ms), so forward stays with oneDNN. */
bool gemm_conv_pays(const gemm_conv_shape *s)
{
    return s->kh == 3 && s->kw == 3 && s->stride == 2 && s->n * out_h(s) * out_w(s) >= 128;
}

static int64_t pass_images(const gemm_conv_shape *s)
{
    size_t per = sizeof(float) * (size_t)(out_h(s) * out_w(s)) * (size_t)(taps(s) + s->k);
    return wino_pass_images(s->n, s->pass, per);
}

/* Rows of one pass: its images' output pixels. */
static int64_t pass_rows(const gemm_conv_shape *s) { return pass_images(s) * out_h(s) * out_w(s); }

/* The Winograd kernels' scratch with one point: in = col [row][tap],
 * out = dy' [row][k], u = dwt [tap][k]. */
size_t gemm_conv_ws_bytes(const gemm_conv_shape *s)
{
    return wino_scratch_bytes(1, pass_rows(s), taps(s), s->k);
}

/* Row (i kw + j) c + c of wt. */
static inline size_t wtrow(const gemm_conv_shape *s, int64_t c, int64_t i, int64_t j)
{
    return (size_t)((i * s->kw + j) * s->c + c);
}

/* w[k][c][i][j] = wt[(i, j, c)][k]: the weights' gradient in ABcd8b8a */
GC_TARGET static void matrix_to_filter(const gemm_conv_shape *s, const float *wt, float *w)
{
GC_PARALLEL2
    for (int64_t i = 0; i < s->kh; i++)
        for (int64_t j = 0; j < s->kw; j++)
            for (int64_t c = 0; c < s->c; c++)
                for (int64_t kb = 0; kb < s->k / 8; kb++)
                    *(v8 *)(w + wino_widx(kb * 8, c, i, j, s->c, s->kh, s->kw)) =
                        *(const v8 *)(wt + wtrow(s, c, i, j) * s->k + kb * 8);
}

/* col rows of images [0, n) of x (the pass's first image), zeros where a
 * tap falls in the padding. */
GC_TARGET static void im2col(const gemm_conv_shape *s, int64_t n, const float *x, float *col)
{
    int64_t oh = out_h(s), ow = out_w(s), ncb = s->c / 8, plane = s->h * s->w * 8;
    v8 zero = {0};
GC_PARALLEL2
    for (int64_t img = 0; img < n; img++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                float *row = col + ((img * oh + oy) * ow + ox) * taps(s);
                const float *xi = x + img * ncb * plane;
                for (int64_t i = 0; i < s->kh; i++) {
                    int64_t y = oy * s->stride - s->pad + i;
                    for (int64_t j = 0; j < s->kw; j++) {
                        int64_t xx = ox * s->stride - s->pad + j;
                        float *dst = row + (i * s->kw + j) * s->c;
                        if (y < 0 || y >= s->h || xx < 0 || xx >= s->w) {
                            for (int64_t cb = 0; cb < ncb; cb++)
                                *(v8 *)(dst + cb * 8) = zero;
                            continue;
                        }
                        const float *src = xi + (y * s->w + xx) * 8;
                        for (int64_t cb = 0; cb < ncb; cb++)
                            *(v8 *)(dst + cb * 8) = *(const v8 *)(src + cb * plane);
                    }
                }
            }
}

/* out rows [(img, p)][k] = dy (nChw8c, images [0, n) of the pass) */
GC_TARGET static void blocked_to_rows(const gemm_conv_shape *s, int64_t n, const float *dy,
                                      float *out)
{
    int64_t pix = out_h(s) * out_w(s), ncb = s->k / 8;
GC_PARALLEL2
    for (int64_t img = 0; img < n; img++)
        for (int64_t kb = 0; kb < ncb; kb++) {
            const float *src = dy + (img * ncb + kb) * pix * 8;
            for (int64_t p = 0; p < pix; p++)
                *(v8 *)(out + (img * pix + p) * s->k + kb * 8) = *(const v8 *)(src + p * 8);
        }
}

void gemm_conv_backward_weights(const gemm_conv_shape *s, const float *x, const float *dy,
                                float *dw, void *ws)
{
    wino_bufs b = wino_bufs_of(ws, 1, pass_rows(s), taps(s), s->k);
    int64_t per = pass_images(s), pix = out_h(s) * out_w(s);
    size_t xi = (size_t)(s->c * s->h * s->w), yi = (size_t)(s->k * pix);
    for (int64_t n0 = 0; n0 < s->n; n0 += per) {
        int64_t n = wino_pass_count(s->n, n0, per);
        im2col(s, n, x + n0 * xi, b.in);
        blocked_to_rows(s, n, dy + n0 * yi, b.out);
        /* one product, threaded by sgemm itself (wino_weight_products would
         * split it in single-threaded halves: not what was measured) */
        dnnl_sgemm('T', 'N', taps(s), s->k, n * pix, 1.0f, b.in, taps(s), b.out, s->k,
                   n0 > 0 ? 1.0f : 0.0f, b.u, s->k);
    }
    matrix_to_filter(s, b.u, dw);
}
