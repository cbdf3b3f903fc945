/* The CUDA backend's own kernels (the .cu files in core/nn/cuda), run on the CPU
 * by the fiber emulator in tests/cuda/emu, against plain C references.
 *
 * CI has no GPU, and most of these kernels (channels-last pooling and
 * transposes, fp16 storage, the embedding and LSTM packing, the clipping
 * sums, the loss scaler) had never met an input before a lent GPU ran
 * them.  Here every launch goes through the same wrapper the backend
 * calls, with the same grid, block and index arithmetic; host pointers
 * stand in for device ones.  The emulator shuffles the threads of a block
 * between barriers, so results that depend on a missing __syncthreads
 * differ from the reference.  Shapes are odd on purpose (not multiples of
 * 32, windows that overhang the padding), and larger than one block where
 * a kernel loops over blocks or tiles. */
#include "cuda_half_cvt.h"
#include "cuda_kernels.h"
#include "cuda_nhwc_kernels.h"
#include "cuda_seq_kernels.h"
#include "../rng.h" /* the dropout stream every backend draws */

#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* the emulator's launch check and self-test kernels (emu_selftest.cu) */
int dlg_emu_selftest_race(float *out, int n);
int dlg_emu_selftest_synced(float *out, int n);
int dlg_emu_selftest_divergent(void);
int dlg_emu_selftest_deep_deadlock(int *out, int *after);
int dlg_emu_selftest_too_many_threads(void);
int dlg_emu_selftest_uninit(float *out);
int dlg_emu_selftest_atomic(float *out);
int dlg_emu_selftest_global_races(float *out);

static const dlg_cuk_htype kHalf[2] = {DLG_CUK_BF16, DLG_CUK_FP16};

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static float frand(void) /* uniform in [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    assert_non_null(p);
    return p;
}

static void fill(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = frand();
}

static bool is_fp16(dlg_cuk_htype t) { return t == DLG_CUK_FP16; }

/* x rounded to the half type, as float */
static float rounded(dlg_cuk_htype t, float x)
{
    return is_fp16(t) ? dlg_fp16_to_f32(dlg_fp16_from_f32(x))
                      : dlg_bf16_to_f32(dlg_bf16_from_f32(x));
}

static void near(const char *what, const float *got, const float *want, int64_t n, float tol)
{
    for (int64_t i = 0; i < n; i++) {
        float err = fabsf(got[i] - want[i]), lim = tol * fmaxf(1.0f, fabsf(want[i]));
        if (!(err <= lim))
            fail_msg("%s[%lld]: got %.9g, want %.9g (tolerance %g)", what, (long long)i,
                     (double)got[i], (double)want[i], (double)lim);
    }
}

/* ---- layout conversions -------------------------------------------------- */

/* y[m][j][i] = x[m][i][j] for every mix of fp32 and half ends, on a grid
 * whose y and z dimensions are capped at max_gy and max_gz */
static void transpose_case(int64_t n, int64_t a, int64_t b, int64_t max_gy, int64_t max_gz)
{
    const int64_t total = n * a * b;
    float *x = xcalloc(total, sizeof *x), *yf = xcalloc(total, sizeof *yf);
    uint16_t *xh = xcalloc(total, 2), *yh = xcalloc(total, 2);
    float *got = xcalloc(total, sizeof *got), *want = xcalloc(total, sizeof *want);
    fill(x, total);
    for (int t = 0; t < 2; t++) {
        dlg_cuk_htype ht = kHalf[t];
        dlg_half_from_f32_n(is_fp16(ht), x, xh, total);
        for (int mode = 0; mode < 4; mode++) {
            bool src_half = mode & 1, dst_half = mode & 2;
            memset(yf, 0xff, total * sizeof *yf);
            memset(yh, 0xff, total * 2);
            assert_int_equal(dlg_cuk_transpose_grid(NULL, ht, src_half, dst_half,
                                                    src_half ? (const void *)xh : (const void *)x,
                                                    dst_half ? (void *)yh : (void *)yf, n, a, b,
                                                    max_gy, max_gz),
                             0);
            if (dst_half)
                dlg_half_to_f32_n(is_fp16(ht), yh, got, total);
            else
                memcpy(got, yf, total * sizeof *got);
            for (int64_t m = 0; m < n; m++)
                for (int64_t i = 0; i < a; i++)
                    for (int64_t j = 0; j < b; j++) {
                        float v = x[(m * a + i) * b + j];
                        if (src_half || dst_half)
                            v = rounded(ht, v);
                        want[(m * b + j) * a + i] = v;
                    }
            near(mode == 0 ? "transpose f32" : src_half && dst_half ? "transpose half"
                 : src_half ? "transpose half->f32" : "transpose f32->half",
                 got, want, total, 0.0f);
        }
    }
    free(x), free(yf), free(xh), free(yh), free(got), free(want);
}

static void test_transpose(void **state)
{
    (void)state;
    /* the hardware's grid: one pass */
    transpose_case(3, 37, 45, 65535, 65535);
    /* more rows of tiles (7) and matrices (5) than the grid holds (2 and
     * 2): blocks take further tiles and matrices, the last pass partial,
     * reusing the shared tile after a barrier */
    transpose_case(5, 200, 45, 2, 2);
    transpose_case(2, 45, 200, 3, 1);
    /* fewer than 32 columns (a 3x3 filter's taps, an image's channels):
     * a thread per element, whatever the caps; 32 is a tile again */
    transpose_case(3, 37, 9, 65535, 65535);
    transpose_case(2, 45, 31, 2, 2);
    transpose_case(2, 33, 32, 2, 2);
#ifndef DLG_EMU_TSAN /* about 3 s here (65535 blocks); minutes under TSan's fibers */
    /* an NHWC -> NCHW transpose of a 1449 x 1449 image (b = 3 channels: the
     * narrow kernel), which as tiles needed 65613 rows of them in grid y
     * and was refused (cudaErrorInvalidConfiguration) */
    {
        const int64_t hw = 1449 * 1449, c = 3;
        float *xm = xcalloc(hw * c, sizeof *xm), *ym = xcalloc(hw * c, sizeof *ym);
        float *want = xcalloc(hw * c, sizeof *want);
        fill(xm, hw * c);
        memset(ym, 0xff, hw * c * sizeof *ym);
        for (int64_t i = 0; i < hw; i++)
            for (int64_t j = 0; j < c; j++)
                want[j * hw + i] = xm[i * c + j];
        assert_int_equal(dlg_cuk_transpose(NULL, DLG_CUK_BF16, false, false, xm, ym, 1, hw, c), 0);
        near("transpose, more rows of tiles than grid y", ym, want, hw * c, 0.0f);
        free(xm), free(ym), free(want);
    }
#endif
    /* a cap below one block is a caller's error, refused before any launch */
    float v = 1.0f, w = 0.0f;
    assert_int_equal(dlg_cuk_transpose_grid(NULL, DLG_CUK_BF16, false, false, &v, &w, 1, 1, 1, 0, 1),
                     1 /* cudaErrorInvalidValue */);
    assert_true(w == 0.0f);
}

/* ---- pooling ------------------------------------------------------------- */

static int64_t caffe_out(int64_t in, int k, int s, int p)
{
    int64_t o = (in + 2 * p - k + s - 1) / s + 1;
    if ((o - 1) * s >= in + p)
        o--;
    return o;
}

/* Caffe's pooling on NCHW floats: forward, argmax, and the scattered backward */
static void ref_pool(const dlg_cuk_pool *p, const float *x, const float *dy, float *y, float *dx)
{
    memset(dx, 0, (size_t)(p->nc * p->h * p->w) * sizeof *dx);
    for (int64_t c = 0; c < p->nc; c++)
        for (int64_t oh = 0; oh < p->oh; oh++)
            for (int64_t ow = 0; ow < p->ow; ow++) {
                int64_t h0 = oh * p->sh - p->ph, w0 = ow * p->sw - p->pw;
                int64_t h1 = h0 + p->kh < p->h + p->ph ? h0 + p->kh : p->h + p->ph;
                int64_t w1 = w0 + p->kw < p->w + p->pw ? w0 + p->kw : p->w + p->pw;
                float div = (float)((h1 - h0) * (w1 - w0));
                h0 = h0 < 0 ? 0 : h0, w0 = w0 < 0 ? 0 : w0;
                h1 = h1 > p->h ? p->h : h1, w1 = w1 > p->w ? p->w : w1;
                const float *xc = x + c * p->h * p->w;
                float *dxc = dx + c * p->h * p->w;
                int64_t o = (c * p->oh + oh) * p->ow + ow, arg = -1;
                float acc = p->max ? -FLT_MAX : 0.0f;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) {
                        float v = xc[h * p->w + w];
                        if (p->max && (arg < 0 || v > acc))
                            acc = v, arg = h * p->w + w;
                        else if (!p->max)
                            acc += v;
                    }
                y[o] = p->max ? acc : acc / div;
                if (p->max)
                    dxc[arg] += dy[o];
                else
                    for (int64_t h = h0; h < h1; h++)
                        for (int64_t w = w0; w < w1; w++)
                            dxc[h * p->w + w] += dy[o] / div;
            }
}

static void nchw_to_nhwc(const float *x, float *y, int64_t n, int64_t c, int64_t hw)
{
    for (int64_t m = 0; m < n; m++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t s = 0; s < hw; s++)
                y[(m * hw + s) * c + k] = x[(m * c + k) * hw + s];
}

/* PyTorch's floor-mode size: the kernels take any output size */
static int64_t floor_out(int64_t in, int k, int s, int p) { return (in + 2 * p - k) / s + 1; }

/* one pooling case through the fp32 NCHW kernels, both half NCHW ones and
 * both half NHWC ones, against the reference; floor_mode: floor-mode sizes */
static void pool_case_r(int64_t n, int64_t c, int64_t h, int64_t w, int k, int s, int pad, int max,
                        bool floor_mode)
{
    int64_t (*out_size)(int64_t, int, int, int) = floor_mode ? floor_out : caffe_out;
    dlg_cuk_pool p = {n * c, h, w, out_size(h, k, s, pad), out_size(w, k, s, pad),
                      k, k, s, s, pad, pad, max};
    const int64_t in = n * c * h * w, out = n * c * p.oh * p.ow;
    float *x = xcalloc(in, 4), *dy = xcalloc(out, 4), *y = xcalloc(out, 4), *dx = xcalloc(in, 4);
    float *ry = xcalloc(out, 4), *rdx = xcalloc(in, 4), *t_in = xcalloc(in, 4);
    float *t_out = xcalloc(out, 4);
    uint16_t *hx = xcalloc(in, 2), *hy = xcalloc(out, 2), *hdy = xcalloc(out, 2);
    uint16_t *hdx = xcalloc(in, 2);
    int *mask = xcalloc(out, sizeof *mask);
    fill(x, in);
    fill(dy, out);

    ref_pool(&p, x, dy, ry, rdx);
    assert_int_equal(dlg_cuk_pool_fwd(NULL, &p, x, y, max ? mask : NULL), 0);
    near("pool fwd f32", y, ry, out, 1e-6f);
    assert_int_equal(dlg_cuk_pool_bwd(NULL, &p, dy, mask, dx), 0);
    near("pool bwd f32", dx, rdx, in, 1e-5f);

    for (int t = 0; t < 2; t++) {
        dlg_cuk_htype ht = kHalf[t];
        bool f16 = is_fp16(ht);
        /* inputs on the half grid, so the reference sees what the kernel sees */
        for (int64_t i = 0; i < in; i++)
            x[i] = rounded(ht, x[i]);
        for (int64_t i = 0; i < out; i++)
            dy[i] = rounded(ht, dy[i]);
        ref_pool(&p, x, dy, ry, rdx);
        const float tol = f16 ? 2e-3f : 1.6e-2f; /* one rounding of the output */

        dlg_half_from_f32_n(f16, x, hx, in);
        dlg_half_from_f32_n(f16, dy, hdy, out);
        assert_int_equal(dlg_cuk_pool_fwd_h(NULL, ht, &p, hx, hy, mask), 0);
        dlg_half_to_f32_n(f16, hy, y, out);
        near("pool fwd half nchw", y, ry, out, tol);
        assert_int_equal(dlg_cuk_pool_bwd_h(NULL, ht, &p, hdy, mask, hdx), 0);
        dlg_half_to_f32_n(f16, hdx, dx, in);
        near("pool bwd half nchw", dx, rdx, in, tol);

        /* channels-last: inputs and expected outputs transposed on the host */
        nchw_to_nhwc(x, t_in, n, c, h * w);
        dlg_half_from_f32_n(f16, t_in, hx, in);
        nchw_to_nhwc(dy, t_out, n, c, p.oh * p.ow);
        dlg_half_from_f32_n(f16, t_out, hdy, out);
        memset(mask, 0xff, (size_t)out * sizeof *mask);
        assert_int_equal(dlg_cuk_pool_fwd_nhwc_h(NULL, ht, &p, c, hx, hy, mask), 0);
        dlg_half_to_f32_n(f16, hy, y, out);
        nchw_to_nhwc(ry, t_out, n, c, p.oh * p.ow);
        near("pool fwd nhwc", y, t_out, out, tol);
        assert_int_equal(dlg_cuk_pool_bwd_nhwc_h(NULL, ht, &p, c, hdy, mask, hdx), 0);
        dlg_half_to_f32_n(f16, hdx, dx, in);
        nchw_to_nhwc(rdx, t_in, n, c, h * w);
        near("pool bwd nhwc", dx, t_in, in, tol);
    }
    free(x), free(dy), free(y), free(dx), free(ry), free(rdx), free(t_in), free(t_out);
    free(hx), free(hy), free(hdy), free(hdx), free(mask);
}

static void pool_case(int64_t n, int64_t c, int64_t h, int64_t w, int k, int s, int pad, int max)
{
    pool_case_r(n, c, h, w, k, s, pad, max, false);
}

static void test_pool(void **state)
{
    (void)state;
    pool_case(2, 5, 7, 6, 3, 2, 1, 1);   /* ceil-mode windows over the padding */
    pool_case(2, 5, 7, 6, 3, 2, 1, 0);   /* average: Caffe's clipped divisor */
    pool_case(1, 3, 13, 13, 3, 2, 0, 1); /* AlexNet's pool shape, no padding */
    pool_case(3, 33, 5, 5, 2, 2, 0, 0);  /* more channels than a warp */
    /* floor mode where ceil has one more output: the last input rows and
     * columns in no window get no gradient (8 x 9 -> 3 x 4, ceil 4 x 4;
     * 11 -> 3 with k5 s3 pad 1, ceil 4) */
    for (int max = 0; max < 2; max++) {
        pool_case_r(2, 5, 8, 9, 3, 2, 0, max, true);
        pool_case_r(2, 5, 8, 9, 3, 2, 1, max, true);
        pool_case_r(1, 3, 11, 11, 5, 3, 1, max, true);
    }
}

/* ---- bias and its gradient ------------------------------------------------ */

static void bias_grad_case(int64_t n, int64_t c, int64_t hw)
{
    const int64_t total = n * c * hw;
    float *dy = xcalloc(total, 4), *t = xcalloc(total, 4), *db = xcalloc(c, 4);
    double *want = xcalloc(c, sizeof *want);
    float *wantf = xcalloc(c, 4);
    uint16_t *h = xcalloc(total, 2);
    for (int t2 = 0; t2 < 2; t2++) {
        dlg_cuk_htype ht = kHalf[t2];
        fill(dy, total);
        for (int64_t i = 0; i < total; i++)
            dy[i] = rounded(ht, dy[i]);
        memset(want, 0, (size_t)c * sizeof *want);
        for (int64_t m = 0; m < n; m++)
            for (int64_t k = 0; k < c; k++)
                for (int64_t s = 0; s < hw; s++)
                    want[k] += dy[(m * c + k) * hw + s];
        for (int64_t k = 0; k < c; k++)
            wantf[k] = (float)want[k];

        dlg_half_from_f32_n(is_fp16(ht), dy, h, total);
        for (int64_t k = 0; k < c; k++)
            db[k] = 1e6f; /* the wrapper zeroes before it adds */
        assert_int_equal(dlg_cuk_bias_grad_nchw_h(NULL, ht, h, db, n, c, hw), 0);
        near("bias grad nchw", db, wantf, c, 1e-4f);

        nchw_to_nhwc(dy, t, n, c, hw);
        dlg_half_from_f32_n(is_fp16(ht), t, h, total);
        for (int64_t k = 0; k < c; k++)
            db[k] = 1e6f;
        assert_int_equal(dlg_cuk_bias_grad_nhwc_h(NULL, ht, h, db, n * hw, c), 0);
        near("bias grad nhwc", db, wantf, c, 1e-4f);
    }
    free(dy), free(t), free(db), free(want), free(wantf), free(h);
}

static void test_bias(void **state)
{
    (void)state;
    bias_grad_case(3, 7, 45);    /* hw >= 32: a block per channel and image slice */
    bias_grad_case(5, 9, 3);     /* hw < 32: a thread per channel and slice */
    bias_grad_case(40, 300, 1);  /* fc: 2 blocks of channels, 3 slices of the batch */
    bias_grad_case(3, 5, 31);    /* the last hw of that path, slices across images */
    bias_grad_case(2, 70, 1100); /* several y blocks in the NHWC grid, 70 channels */

    /* forward: y[n][c][s] += b[c] on half storage; fc rows: y[r][k] += b[k] */
    const int64_t n = 2, c = 5, hw = 29, total = n * c * hw;
    float *y = xcalloc(total, 4), *b = xcalloc(c, 4), *got = xcalloc(total, 4);
    float *want = xcalloc(total, 4);
    uint16_t *h = xcalloc(total, 2);
    fill(b, c);
    for (int t = 0; t < 2; t++) {
        dlg_cuk_htype ht = kHalf[t];
        fill(y, total);
        for (int64_t i = 0; i < total; i++)
            y[i] = rounded(ht, y[i]), want[i] = rounded(ht, y[i] + b[(i / hw) % c]);
        dlg_half_from_f32_n(is_fp16(ht), y, h, total);
        assert_int_equal(dlg_cuk_bias_nchw_h(NULL, ht, h, b, n, c, hw), 0);
        dlg_half_to_f32_n(is_fp16(ht), h, got, total);
        near("bias nchw half", got, want, total, 0.0f);
    }
    fill(y, total);
    for (int64_t i = 0; i < total; i++)
        want[i] = y[i] + b[i % c];
    assert_int_equal(dlg_cuk_bias_rows(NULL, y, b, total / c, c), 0);
    near("bias rows", y, want, total, 0.0f);
    float colsum[5] = {0};
    for (int64_t i = 0; i < total; i++)
        colsum[i % c] += y[i];
    assert_int_equal(dlg_cuk_col_sum(NULL, y, b, total / c, c), 0);
    near("col sum", b, colsum, c, 0.0f);
    free(y), free(b), free(got), free(want), free(h);
}

/* ---- element-wise layers ---------------------------------------------------- */

static void test_elementwise(void **state)
{
    (void)state;
    const int64_t n = 1000;
    float *a = xcalloc(n, 4), *b = xcalloc(n, 4), *y = xcalloc(n, 4), *want = xcalloc(n, 4);
    float *mask = xcalloc(n, 4), *got = xcalloc(n, 4);
    uint16_t *ha = xcalloc(n, 2), *hb = xcalloc(n, 2), *hy = xcalloc(n, 2);
    fill(a, n);
    fill(b, n);

    assert_int_equal(dlg_cuk_relu_fwd(NULL, a, y, n), 0);
    for (int64_t i = 0; i < n; i++)
        want[i] = a[i] > 0 ? a[i] : 0;
    near("relu", y, want, n, 0);
    assert_int_equal(dlg_cuk_relu_bwd(NULL, a, b, y, n), 0);
    for (int64_t i = 0; i < n; i++)
        want[i] = a[i] > 0 ? b[i] : 0;
    near("relu bwd", y, want, n, 0);
    assert_int_equal(dlg_cuk_add(NULL, a, b, y, n), 0);
    for (int64_t i = 0; i < n; i++)
        want[i] = a[i] + b[i];
    near("add", y, want, n, 0);
    assert_int_equal(dlg_cuk_acc(NULL, y, a, n), 0);
    for (int64_t i = 0; i < n; i++)
        want[i] += a[i];
    near("acc", y, want, n, 0);
    assert_int_equal(dlg_cuk_mul(NULL, a, b, y, n), 0);
    for (int64_t i = 0; i < n; i++)
        want[i] = a[i] * b[i];
    near("mul", y, want, n, 0);

    /* dropout: the mask is 0 or 1/(1-ratio), y = x * mask, about ratio of it
     * dropped, and a new mask on the next call (the device step counter):
     * at each step the elements rng.h's stream keeps, as on the cpu */
    uint64_t step = 0;
    for (int call = 0; call < 2; call++) {
        assert_int_equal(dlg_cuk_dropout_fwd(NULL, a, y, mask, n, 0.25f, 42, &step), 0);
        assert_int_equal(step, call + 1);
        int dropped = 0;
        uint64_t seed = dlg_dropout_seed(42, (uint64_t)call);
        for (int64_t i = 0; i < n; i++) {
            bool keep = dlg_dropout_u(seed, (uint64_t)i) >= 0.25f;
            assert_true(mask[i] == (keep ? 1.0f / 0.75f : 0.0f));
            dropped += !keep;
            want[i] = a[i] * mask[i];
        }
        near("dropout", y, want, n, 0);
        assert_in_range(dropped, 180, 320);
        if (call == 0)
            memcpy(got, mask, n * 4);
        else
            assert_memory_not_equal(got, mask, n * 4);
    }

    for (int t = 0; t < 2; t++) {
        dlg_cuk_htype ht = kHalf[t];
        bool f16 = is_fp16(ht);
        /* the device conversion gives the host converter's bits */
        uint16_t *host = xcalloc(n, 2);
        assert_int_equal(dlg_cuk_f2h(NULL, ht, a, ha, n), 0);
        dlg_half_from_f32_n(f16, a, host, n);
        assert_memory_equal(ha, host, n * 2);
        free(host);
        assert_int_equal(dlg_cuk_h2f(NULL, ht, ha, got, n), 0);
        for (int64_t i = 0; i < n; i++)
            want[i] = rounded(ht, a[i]);
        near("h2f", got, want, n, 0);
        dlg_half_from_f32_n(f16, b, hb, n);

        assert_int_equal(dlg_cuk_relu_fwd_h(NULL, ht, ha, hy, n), 0);
        dlg_half_to_f32_n(f16, hy, got, n);
        for (int64_t i = 0; i < n; i++)
            want[i] = rounded(ht, a[i]) > 0 ? rounded(ht, a[i]) : 0;
        near("relu half", got, want, n, 0);
        assert_int_equal(dlg_cuk_relu_bwd_h(NULL, ht, ha, hb, hy, n), 0);
        dlg_half_to_f32_n(f16, hy, got, n);
        for (int64_t i = 0; i < n; i++)
            want[i] = rounded(ht, a[i]) > 0 ? rounded(ht, b[i]) : 0;
        near("relu bwd half", got, want, n, 0);
        assert_int_equal(dlg_cuk_add_h(NULL, ht, ha, hb, hy, n), 0);
        dlg_half_to_f32_n(f16, hy, got, n);
        for (int64_t i = 0; i < n; i++)
            want[i] = rounded(ht, rounded(ht, a[i]) + rounded(ht, b[i]));
        near("add half", got, want, n, 0);
        assert_int_equal(dlg_cuk_acc_h(NULL, ht, hy, ha, n), 0);
        dlg_half_to_f32_n(f16, hy, got, n);
        for (int64_t i = 0; i < n; i++)
            want[i] = rounded(ht, want[i] + rounded(ht, a[i]));
        near("acc half", got, want, n, 0);
        /* half dropout draws the fp32 layer's masks: same seed, same step
         * counter on the device, a new mask per call */
        uint64_t hstep = 0, fstep = 0;
        float *fmask = xcalloc(n, 4);
        for (int call = 0; call < 2; call++) {
            assert_int_equal(dlg_cuk_dropout_fwd_h(NULL, ht, ha, hy, mask, n, 0.5f, 7, &hstep), 0);
            assert_int_equal(hstep, call + 1);
            assert_int_equal(dlg_cuk_dropout_fwd(NULL, a, y, fmask, n, 0.5f, 7, &fstep), 0);
            assert_memory_equal(mask, fmask, n * 4);
            if (call == 0)
                memcpy(got, mask, n * 4);
            else
                assert_memory_not_equal(got, mask, n * 4);
        }
        free(fmask);
        dlg_half_to_f32_n(f16, hy, got, n);
        for (int64_t i = 0; i < n; i++) {
            assert_true(mask[i] == 0.0f || mask[i] == 2.0f);
            want[i] = rounded(ht, rounded(ht, a[i]) * mask[i]);
        }
        near("dropout half", got, want, n, 0);
        assert_int_equal(dlg_cuk_mul_h(NULL, ht, ha, mask, hy, n), 0);
        dlg_half_to_f32_n(f16, hy, got, n);
        near("mul half", got, want, n, 0);
    }
    free(a), free(b), free(y), free(want), free(mask), free(got), free(ha), free(hb), free(hy);
}

/* ---- softmax loss -------------------------------------------------------- */

static void test_loss(void **state)
{
    (void)state;
    const int64_t n = 6, k = 300; /* more classes than threads in a block */
    float *x = xcalloc(n * k, 4), *labels = xcalloc(n, 4), *lse = xcalloc(3 * n, 4);
    float *dx = xcalloc(n * k, 4), *want = xcalloc(n * k, 4), out[3], wout[3];
    uint16_t *hx = xcalloc(n * k, 2), *hdx = xcalloc(n * k, 2);
    dlg_scaler sc;
    dlg_scaler_init(&sc);
    for (int half = 0; half < 3; half++) {
        dlg_cuk_htype ht = kHalf[half == 2];
        /* weight 0.4 (Inception-v3's auxiliary head) in the fp32 and fp16 passes */
        const float weight = half == 1 ? 1.0f : 0.4f;
        fill(x, n * k);
        for (int64_t i = 0; i < n * k; i++)
            x[i] = 4.0f * (half ? rounded(ht, x[i]) : x[i]);
        for (int64_t r = 0; r < n; r++) {
            labels[r] = (float)((r * 37) % k);
            if (r == 1)
                x[r * k + (int64_t)labels[r]] = 9.0f; /* a top-1 hit */
        }
        /* reference in double */
        double loss = 0, top1 = 0, top5 = 0;
        for (int64_t r = 0; r < n; r++) {
            const float *xr = x + r * k;
            double mx = -1e30, s = 0;
            int above = 0;
            for (int64_t j = 0; j < k; j++)
                mx = xr[j] > mx ? xr[j] : mx;
            for (int64_t j = 0; j < k; j++) {
                s += exp(xr[j] - mx);
                above += xr[j] > xr[(int64_t)labels[r]];
            }
            double l = mx + log(s);
            loss += l - xr[(int64_t)labels[r]];
            top1 += above < 1, top5 += above < 5;
            for (int64_t j = 0; j < k; j++)
                want[r * k + j] = (float)((exp(xr[j] - l) - (j == (int64_t)labels[r])) / n *
                                          weight * (half == 2 ? sc.scale : 1.0));
        }
        wout[0] = (float)(loss / n), wout[1] = (float)(top1 / n), wout[2] = (float)(top5 / n);
        int flag = 0;
        if (!half) {
            assert_int_equal(dlg_cuk_loss_fwd(NULL, x, labels, n, k, out, lse, &flag), 0);
            near("loss", out, wout, 3, 1e-5f);
            assert_int_equal(dlg_cuk_loss_bwd(NULL, x, labels, lse, n, k, weight, dx), 0);
            near("loss grad", dx, want, n * k, 1e-5f);
        } else {
            dlg_half_from_f32_n(is_fp16(ht), x, hx, n * k);
            assert_int_equal(dlg_cuk_loss_fwd_h(NULL, ht, hx, labels, n, k, out, lse, &flag), 0);
            near("loss half", out, wout, 3, 1e-5f);
            /* fp16 training scales the loss gradient by S (2^16 here) */
            assert_int_equal(dlg_cuk_loss_bwd_h(NULL, ht, hx, labels, lse, n, k, weight, hdx,
                                                half == 2 ? &sc : NULL),
                             0);
            dlg_half_to_f32_n(is_fp16(ht), hdx, dx, n * k);
            for (int64_t i = 0; i < n * k; i++)
                want[i] = rounded(ht, want[i]);
            near("loss grad half", dx, want, n * k, is_fp16(ht) ? 2e-3f : 1.6e-2f);
        }
        assert_int_equal(flag, 0);
    }
    /* a label that is no class sets the sticky flag */
    int flag = 0;
    labels[3] = 2.5f;
    assert_int_equal(dlg_cuk_loss_fwd(NULL, x, labels, n, k, out, lse, &flag), 0);
    assert_int_equal(flag, 1);
    flag = 0;
    labels[3] = (float)k;
    assert_int_equal(dlg_cuk_loss_fwd(NULL, x, labels, n, k, out, lse, &flag), 0);
    assert_int_equal(flag, 1);
    free(x), free(labels), free(lse), free(dx), free(want), free(hx), free(hdx);
}

/* ---- SGD, the inf check and the loss scaler ----------------------------- */

/* element j of tensor t after one SGD step with unscaled gradients */
static void sgd_ref(const dlg_cuk_sgd_tensor *t, int64_t j, float lr, float mom, float decay,
                    float *w, float *h)
{
    float v = mom * t->h[j] + lr * t->lr_mult * (t->g[j] + decay * t->decay_mult * t->w[j]);
    *h = v;
    *w = t->w[j] - v;
}

static void test_sgd_scaled(void **state)
{
    (void)state;
    const int64_t n0 = 2 * DLG_CUK_SGD_CHUNK + 77, n1 = 5;
    float *w[2], *g[2], *h[2], *w0[2], *h0[2];
    int64_t sizes[2] = {n0, n1};
    dlg_cuk_sgd_tensor t[2];
    dlg_cuk_sgd_chunk c[4];
    int nchunks = 0;
    for (int i = 0; i < 2; i++) {
        w[i] = xcalloc(sizes[i], 4), g[i] = xcalloc(sizes[i], 4), h[i] = xcalloc(sizes[i], 4);
        w0[i] = xcalloc(sizes[i], 4), h0[i] = xcalloc(sizes[i], 4);
        fill(w[i], sizes[i]), fill(g[i], sizes[i]), fill(h[i], sizes[i]);
        t[i] = (dlg_cuk_sgd_tensor){w[i], g[i], h[i], sizes[i], i ? 2.0f : 1.0f, i ? 0.0f : 1.0f};
        for (int64_t s = 0; s < sizes[i]; s += DLG_CUK_SGD_CHUNK)
            c[nchunks++] = (dlg_cuk_sgd_chunk){i, s};
    }
    assert_int_equal(nchunks, 4);
    const float lr = 0.01f, mom = 0.9f, decay = 5e-4f;
    dlg_scaler sc;
    dlg_scaler_init(&sc);

    /* plain multi-tensor SGD */
    for (int i = 0; i < 2; i++)
        for (int64_t j = 0; j < sizes[i]; j++)
            sgd_ref(&t[i], j, lr, mom, decay, &w0[i][j], &h0[i][j]);
    assert_int_equal(dlg_cuk_sgd_multi(NULL, t, c, nchunks, lr, mom, decay), 0);
    for (int i = 0; i < 2; i++) {
        near("sgd w", w[i], w0[i], sizes[i], 1e-6f);
        near("sgd h", h[i], h0[i], sizes[i], 1e-6f);
    }

    /* scaled: finite gradients carry S; the update divides it out */
    for (int i = 0; i < 2; i++)
        for (int64_t j = 0; j < sizes[i]; j++) {
            sgd_ref(&t[i], j, lr, mom, decay, &w0[i][j], &h0[i][j]);
            g[i][j] *= sc.scale;
        }
    assert_int_equal(dlg_cuk_grad_check_multi(NULL, t, c, nchunks, &sc), 0);
    assert_int_equal(sc.found_inf, 0);
    assert_int_equal(dlg_cuk_sgd_multi_scaled(NULL, t, c, nchunks, lr, mom, decay, &sc), 0);
    for (int i = 0; i < 2; i++) {
        near("scaled sgd w", w[i], w0[i], sizes[i], 1e-6f);
        near("scaled sgd h", h[i], h0[i], sizes[i], 1e-6f);
    }
    assert_int_equal(dlg_cuk_scaler_update(NULL, &sc), 0);
    assert_int_equal(sc.good, 1);
    assert_true(sc.scale == 65536.0f);

    /* an inf in the last chunk of the first tensor: no param moves, S halves */
    g[0][n0 - 1] = INFINITY;
    for (int i = 0; i < 2; i++) {
        memcpy(w0[i], w[i], sizes[i] * 4);
        memcpy(h0[i], h[i], sizes[i] * 4);
    }
    assert_int_equal(dlg_cuk_grad_check_multi(NULL, t, c, nchunks, &sc), 0);
    assert_int_equal(sc.found_inf, 1);
    assert_int_equal(dlg_cuk_sgd_multi_scaled(NULL, t, c, nchunks, lr, mom, decay, &sc), 0);
    for (int i = 0; i < 2; i++) {
        assert_memory_equal(w[i], w0[i], sizes[i] * 4);
        assert_memory_equal(h[i], h0[i], sizes[i] * 4);
    }
    assert_int_equal(dlg_cuk_scaler_update(NULL, &sc), 0);
    assert_true(sc.scale == 32768.0f);
    assert_int_equal(sc.found_inf, 0);
    assert_int_equal(sc.good, 0);
    assert_int_equal(sc.skipped, 1);

    /* a NaN in the small tensor is caught too */
    g[0][n0 - 1] = 0.0f;
    g[1][2] = NAN;
    assert_int_equal(dlg_cuk_grad_check_multi(NULL, t, c, nchunks, &sc), 0);
    assert_int_equal(sc.found_inf, 1);

    /* the single-tensor update */
    float ws[3] = {1, 2, 3}, gs[3] = {0.5f, -1, 2}, hs[3] = {0.1f, 0, -0.1f}, want[3];
    for (int j = 0; j < 3; j++)
        want[j] = ws[j] - (mom * hs[j] + lr * (gs[j] + decay * ws[j]));
    assert_int_equal(dlg_cuk_sgd(NULL, ws, gs, hs, 3, lr, mom, decay), 0);
    near("sgd single", ws, want, 3, 1e-6f);
    for (int i = 0; i < 2; i++)
        free(w[i]), free(g[i]), free(h[i]), free(w0[i]), free(h0[i]);
}

/* ---- embedding ------------------------------------------------------------ */

static void embed_bwd_ref(const float *ids, const float *dy, float *dt, int64_t n, int64_t d,
                          int64_t vocab)
{
    for (int64_t v = 0; v < vocab; v++)
        for (int64_t k = 0; k < d; k++) {
            float acc = 0.0f;
            bool any = false;
            for (int64_t r = 0; r < n; r++)
                if (ids[r] == (float)v)
                    acc += dy[r * d + k], any = true;
            if (any)
                dt[v * d + k] += acc;
        }
}

static void test_embed(void **state)
{
    (void)state;
    /* more rows and columns than a block has threads: the row tiles and the
     * column loop of the deterministic kernel both run more than once */
    const int64_t n = 300, d = 260, vocab = 23;
    float *ids = xcalloc(n, 4), *table = xcalloc(vocab * d, 4), *y = xcalloc(n * d, 4);
    float *dy = xcalloc(n * d, 4), *dt = xcalloc(vocab * d, 4), *want = xcalloc(vocab * d, 4);
    for (int64_t r = 0; r < n; r++)
        ids[r] = (float)((r * r + 3 * r) % vocab);
    fill(table, vocab * d);
    fill(dy, n * d);

    int flag = 0;
    assert_int_equal(dlg_cuk_embed_fwd(NULL, ids, table, y, n, d, vocab, &flag), 0);
    assert_int_equal(flag, 0);
    for (int64_t r = 0; r < n; r++)
        assert_memory_equal(y + r * d, table + (int64_t)ids[r] * d, d * 4);

    /* deterministic: one writer per row, rows summed in order: exact */
    memset(want, 0, vocab * d * 4);
    embed_bwd_ref(ids, dy, want, n, d, vocab);
    assert_int_equal(dlg_cuk_embed_bwd(NULL, ids, dy, dt, n, d, vocab, 0, 1), 0);
    near("embed bwd", dt, want, vocab * d, 0.0f);
    /* accumulate = 1 adds to what is there */
    embed_bwd_ref(ids, dy, want, n, d, vocab);
    assert_int_equal(dlg_cuk_embed_bwd(NULL, ids, dy, dt, n, d, vocab, 1, 1), 0);
    near("embed bwd accumulate", dt, want, vocab * d, 0.0f);

    /* ids that are no token: zero rows and the flag forward, ignored backward */
    ids[0] = -1.0f, ids[7] = (float)vocab, ids[9] = 2.5f;
    flag = 0;
    assert_int_equal(dlg_cuk_embed_fwd(NULL, ids, table, y, n, d, vocab, &flag), 0);
    assert_int_equal(flag, 1);
    for (int64_t k = 0; k < d; k++)
        assert_true(y[k] == 0.0f && y[7 * d + k] == 0.0f && y[9 * d + k] == 0.0f);
    memset(want, 0, vocab * d * 4);
    embed_bwd_ref(ids, dy, want, n, d, vocab);
    assert_int_equal(dlg_cuk_embed_bwd(NULL, ids, dy, dt, n, d, vocab, 0, 1), 0);
    near("embed bwd, bad ids", dt, want, vocab * d, 0.0f);
    free(ids), free(table), free(y), free(dy), free(dt), free(want);

    /* past DLG_CUK_EMBED_ROWS_MAX rows the atomic kernel runs */
    const int64_t big = DLG_CUK_EMBED_ROWS_MAX + 3, d2 = 2, v2 = 11;
    ids = xcalloc(big, 4), dy = xcalloc(big * d2, 4);
    dt = xcalloc(v2 * d2, 4), want = xcalloc(v2 * d2, 4);
    double acc[22] = {0};
    for (int64_t r = 0; r < big; r++) {
        ids[r] = (float)(r % v2);
        for (int64_t k = 0; k < d2; k++)
            dy[r * d2 + k] = (float)((r + k) % 5) * 0.25f; /* exact sums */
    }
    for (int64_t r = 0; r < big; r++)
        for (int64_t k = 0; k < d2; k++)
            acc[(r % v2) * d2 + k] += dy[r * d2 + k];
    for (int64_t i = 0; i < v2 * d2; i++)
        want[i] = (float)acc[i];
    assert_int_equal(dlg_cuk_embed_bwd(NULL, ids, dy, dt, big, d2, v2, 0, 0), 0);
    near("embed bwd atomic", dt, want, v2 * d2, 0.0f);
    free(ids), free(dy), free(dt), free(want);
}

/* ---- LSTM weight packing for cuDNN ----------------------------------------- */

/* Partial tiles both ways, and a different count of them (3 x 2): a grid
 * with rows and h swapped would leave rows unpacked (equal counts, 45 x 37,
 * hid that). */
enum { LSTM_ROWS = 70, LSTM_H = 37 };

static void test_lstm_pack(void **state)
{
    (void)state;
    /* w: rows x 4h (the engine's Wx or Wh); gate g: the h x rows matrix cuDNN keeps */
    const int64_t rows = LSTM_ROWS, h = LSTM_H;
    float *w = xcalloc(rows * 4 * h, 4), *back = xcalloc(rows * 4 * h, 4);
    float *g[4], *b = xcalloc(4 * h, 4), *bback = xcalloc(4 * h, 4), *bg[4];
    dlg_cuk_gates gates, bgates;
    for (int i = 0; i < 4; i++) {
        g[i] = xcalloc(h * rows, 4), bg[i] = xcalloc(h, 4);
        gates.p[i] = g[i], bgates.p[i] = bg[i];
    }
    fill(w, rows * 4 * h);
    fill(b, 4 * h);
    assert_int_equal(dlg_cuk_lstm_pack(NULL, w, rows, h, gates), 0);
    for (int gi = 0; gi < 4; gi++)
        for (int64_t c = 0; c < h; c++)
            for (int64_t r = 0; r < rows; r++)
                if (g[gi][c * rows + r] != w[r * 4 * h + gi * h + c])
                    fail_msg("lstm pack: gate %d [%lld][%lld]", gi, (long long)c, (long long)r);
    assert_int_equal(dlg_cuk_lstm_unpack(NULL, gates, rows, h, back), 0);
    assert_memory_equal(back, w, rows * 4 * h * 4);

    assert_int_equal(dlg_cuk_lstm_pack_bias(NULL, b, h, bgates), 0);
    for (int gi = 0; gi < 4; gi++)
        assert_memory_equal(bg[gi], b + gi * h, h * 4);
    assert_int_equal(dlg_cuk_lstm_unpack_bias(NULL, bgates, h, bback), 0);
    assert_memory_equal(bback, b, 4 * h * 4);
    for (int i = 0; i < 4; i++)
        free(g[i]), free(bg[i]);
    free(w), free(back), free(b), free(bback);
}

/* The converting variants (cuda-fp16's half weight space): pack rounds
 * each fp32 weight to the half type's nearest (the host conversion's
 * bits), unpack widens exactly; both transpose as the fp32 ones do. */
static void lstm_pack_h_for(dlg_cuk_htype t)
{
    const int64_t rows = LSTM_ROWS, h = LSTM_H, n = rows * 4 * h;
    float *w = xcalloc(n, 4), *back = xcalloc(n, 4), *want = xcalloc(n, 4);
    float *b = xcalloc(4 * h, 4), *bback = xcalloc(4 * h, 4);
    uint16_t *g[4], *bg[4];
    dlg_cuk_gates gates, bgates;
    for (int i = 0; i < 4; i++) {
        g[i] = xcalloc(h * rows, 2), bg[i] = xcalloc(h, 2);
        gates.p[i] = g[i], bgates.p[i] = bg[i];
    }
    fill(w, n);
    fill(b, 4 * h);
    w[5] = 70000.0f; /* beyond fp16's range: inf there, finite in bf16 */
    assert_int_equal(dlg_cuk_lstm_pack_h(NULL, t, w, rows, h, gates), 0);
    for (int gi = 0; gi < 4; gi++)
        for (int64_t c = 0; c < h; c++)
            for (int64_t r = 0; r < rows; r++) {
                float v = w[r * 4 * h + gi * h + c];
                uint16_t bits = is_fp16(t) ? dlg_fp16_from_f32(v) : dlg_bf16_from_f32(v);
                if (g[gi][c * rows + r] != bits)
                    fail_msg("lstm pack_h: gate %d [%lld][%lld]: 0x%04x, want 0x%04x", gi,
                             (long long)c, (long long)r, g[gi][c * rows + r], bits);
            }
    for (int64_t i = 0; i < n; i++)
        want[i] = rounded(t, w[i]);
    assert_int_equal(dlg_cuk_lstm_unpack_h(NULL, t, gates, rows, h, back), 0);
    assert_memory_equal(back, want, n * 4);
    assert_true(is_fp16(t) ? isinf(back[5]) : back[5] > 69000.0f);

    assert_int_equal(dlg_cuk_lstm_pack_bias_h(NULL, t, b, h, bgates), 0);
    for (int gi = 0; gi < 4; gi++)
        for (int64_t k = 0; k < h; k++)
            assert_int_equal(bg[gi][k], is_fp16(t) ? dlg_fp16_from_f32(b[gi * h + k])
                                                   : dlg_bf16_from_f32(b[gi * h + k]));
    assert_int_equal(dlg_cuk_lstm_unpack_bias_h(NULL, t, bgates, h, bback), 0);
    for (int64_t i = 0; i < 4 * h; i++)
        assert_true(bback[i] == rounded(t, b[i]));
    for (int i = 0; i < 4; i++)
        free(g[i]), free(bg[i]);
    free(w), free(back), free(want), free(b), free(bback);
}

static void test_lstm_pack_h(void **state)
{
    (void)state;
    lstm_pack_h_for(DLG_CUK_FP16);
    lstm_pack_h_for(DLG_CUK_BF16);
}

/* Grid y capped below the tiles' count (1 and 2 of 3 along rows, of 2
 * along h): each block loops over the tiles the grid does not hold, as it
 * must past the hardware's 65535 (2 M rows or h).  Before, a grid y short
 * of the tiles left the rest of the gates (pack) or of w (unpack) unwritten. */
static void test_lstm_pack_grid(void **state)
{
    (void)state;
    const int64_t rows = LSTM_ROWS, h = LSTM_H, n = rows * 4 * h;
    float *w = xcalloc(n, 4), *back = xcalloc(n, 4), *g[4], *want[4];
    uint16_t *hg[4], *hwant[4];
    dlg_cuk_gates gates, hgates, gw, hgw;
    for (int i = 0; i < 4; i++) {
        g[i] = xcalloc(h * rows, 4), want[i] = xcalloc(h * rows, 4);
        hg[i] = xcalloc(h * rows, 2), hwant[i] = xcalloc(h * rows, 2);
        gates.p[i] = g[i], gw.p[i] = want[i], hgates.p[i] = hg[i], hgw.p[i] = hwant[i];
    }
    fill(w, n);
    assert_int_equal(dlg_cuk_lstm_pack(NULL, w, rows, h, gw), 0);
    assert_int_equal(dlg_cuk_lstm_pack_h(NULL, DLG_CUK_FP16, w, rows, h, hgw), 0);
    for (int64_t cap = 1; cap <= 2; cap++) {
        for (int i = 0; i < 4; i++) {
            memset(g[i], 0xff, (size_t)(h * rows) * 4);
            memset(hg[i], 0xff, (size_t)(h * rows) * 2);
        }
        assert_int_equal(dlg_cuk_lstm_pack_grid(NULL, 0, DLG_CUK_BF16, w, rows, h, gates, cap), 0);
        assert_int_equal(dlg_cuk_lstm_pack_grid(NULL, 1, DLG_CUK_FP16, w, rows, h, hgates, cap), 0);
        for (int i = 0; i < 4; i++) {
            assert_memory_equal(g[i], want[i], (size_t)(h * rows) * 4);
            assert_memory_equal(hg[i], hwant[i], (size_t)(h * rows) * 2);
        }
        /* unpack's grid y runs along h (2 tiles) */
        memset(back, 0xff, (size_t)n * 4);
        assert_int_equal(dlg_cuk_lstm_unpack_grid(NULL, 0, DLG_CUK_BF16, gates, rows, h, back, cap),
                         0);
        assert_memory_equal(back, w, (size_t)n * 4);
    }
    /* a cap below 1 is refused, not a launch of nothing */
    assert_int_not_equal(dlg_cuk_lstm_pack_grid(NULL, 0, DLG_CUK_BF16, w, rows, h, gates, 0), 0);
    for (int i = 0; i < 4; i++)
        free(g[i]), free(want[i]), free(hg[i]), free(hwant[i]);
    free(w), free(back);
}

/* ---- gradient clipping sums ------------------------------------------------- */

static void test_sumsq(void **state)
{
    (void)state;
    const int64_t n1 = 100003, n2 = 77;
    float *g1 = xcalloc(n1, 4), *g2 = xcalloc(n2, 4);
    double *slots = xcalloc(DLG_CUK_SUMSQ_SLOTS, sizeof *slots), total = -1, want = 0;
    fill(g1, n1);
    fill(g2, n2);
    for (int64_t i = 0; i < n1; i++)
        want += (double)g1[i] * g1[i];
    for (int64_t i = 0; i < n2; i++)
        want += (double)g2[i] * g2[i];
    for (int i = 0; i < DLG_CUK_SUMSQ_SLOTS; i++)
        slots[i] = 1e300; /* first = 1 overwrites */
    assert_int_equal(dlg_cuk_sumsq(NULL, g1, n1, slots, 1), 0);
    assert_int_equal(dlg_cuk_sumsq(NULL, g2, n2, slots, 0), 0);
    assert_int_equal(dlg_cuk_sumsq_total(NULL, slots, &total), 0);
    assert_true(fabs(total - want) <= 1e-12 * want);
    /* first the small array (one block: the other slots cleared), then
     * one of 2 blocks, then the large one over every slot */
    for (int i = 0; i < DLG_CUK_SUMSQ_SLOTS; i++)
        slots[i] = 1e300;
    const int64_t n3 = 300;
    double want3 = 0;
    for (int64_t i = 0; i < n3; i++)
        want3 += (double)g1[i] * g1[i];
    total = -1;
    assert_int_equal(dlg_cuk_sumsq(NULL, g2, n2, slots, 1), 0);
    assert_int_equal(dlg_cuk_sumsq(NULL, g1, n3, slots, 0), 0);
    assert_int_equal(dlg_cuk_sumsq(NULL, g1, n1, slots, 0), 0);
    assert_int_equal(dlg_cuk_sumsq_total(NULL, slots, &total), 0);
    assert_true(fabs(total - (want + want3)) <= 1e-12 * (want + want3));

    float f = 0.375f, *w = xcalloc(n2, 4);
    for (int64_t i = 0; i < n2; i++)
        w[i] = g2[i] * f;
    assert_int_equal(dlg_cuk_scale(NULL, g2, n2, f), 0);
    near("scale", g2, w, n2, 0.0f);
    free(g1), free(g2), free(slots), free(w);
}

/* Clipping's factor on the device (torch.nn.utils.clip_grad_norm_'s
 * rule, the host's in clip.c) and the scaling that reads it: known
 * answers, and the norm and count of clipped steps it keeps. */
static void test_clip_coef(void **state)
{
    (void)state;
    dlg_cuk_clip *st = xcalloc(1, sizeof *st);
    st->total = 25.0; /* norm 5 */
    assert_int_equal(dlg_cuk_clip_coef(NULL, st, NULL, 2.0), 0);
    assert_true(st->norm == 5.0);
    assert_true(st->coef == (float)(2.0 / (5.0 + 1e-6)));
    assert_true(st->clipped == 1);
    assert_int_equal(dlg_cuk_clip_coef(NULL, st, NULL, 5.0), 0); /* not above: kept */
    assert_true(st->coef == 1.f && st->clipped == 1);
    assert_int_equal(dlg_cuk_clip_coef(NULL, st, NULL, 0.0), 0); /* measure only */
    assert_true(st->coef == 1.f && st->clipped == 1 && st->norm == 5.0);
    /* gradients carrying a loss scale: the norm is the true gradient's */
    float scale = 1024.f;
    st->total = 25.0 * 1024.0 * 1024.0;
    assert_int_equal(dlg_cuk_clip_coef(NULL, st, &scale, 4.0), 0);
    assert_true(st->norm == 5.0 && st->clipped == 2);
    assert_true(st->coef == (float)(4.0 / (5.0 + 1e-6)));
    /* an overflowed step: factor 0, so its gradients stay non-finite */
    st->total = INFINITY;
    assert_int_equal(dlg_cuk_clip_coef(NULL, st, NULL, 1.0), 0);
    assert_true(isinf(st->norm) && st->coef == 0.f && st->clipped == 3);

    const int64_t n = 1000;
    float *g = xcalloc(n, 4), *want = xcalloc(n, 4);
    fill(g, n);
    st->total = 100.0;
    assert_int_equal(dlg_cuk_clip_coef(NULL, st, NULL, 2.5), 0);
    for (int64_t i = 0; i < n; i++)
        want[i] = g[i] * (float)(2.5 / (10.0 + 1e-6));
    assert_int_equal(dlg_cuk_scale_by(NULL, g, n, &st->coef), 0);
    assert_memory_equal(g, want, (size_t)n * 4);
    st->total = 1.0; /* norm 1 <= 2.5: the gradients keep their bits */
    assert_int_equal(dlg_cuk_clip_coef(NULL, st, NULL, 2.5), 0);
    assert_int_equal(dlg_cuk_scale_by(NULL, g, n, &st->coef), 0);
    assert_memory_equal(g, want, (size_t)n * 4);
    free(st), free(g), free(want);
}

/* ---- the emulator itself: it must be able to fail ------------------------- */

static void test_emulator_catches(void **state)
{
    (void)state;
    float out[256];
    /* a kernel that reads its neighbour's shared slot without a barrier gives
     * a result that depends on the order threads run in; with the barrier it
     * is exact */
    assert_int_equal(dlg_emu_selftest_synced(out, 256), 0);
    for (int i = 0; i < 256; i++)
        assert_true(out[i] == (float)((i + 1) % 256));
#ifndef DLG_EMU_TSAN /* there, the race is reported (--planted-races) */
    assert_int_equal(dlg_emu_selftest_race(out, 256), 0);
    int wrong = 0;
    for (int i = 0; i < 256; i++)
        wrong += out[i] != 1000.0f + (float)((i + 1) % 256);
    assert_true(wrong > 0);
#endif
    /* shared memory no thread wrote reads as the poison, in every block */
    assert_int_equal(dlg_emu_selftest_uninit(out), 0);
    for (int i = 0; i < 128; i++)
        assert_true(isnan(out[i]));
    /* 3 blocks x 64 atomic adds of one */
    out[0] = 0.5f;
    assert_int_equal(dlg_emu_selftest_atomic(out), 0);
    assert_true(out[0] == 192.5f);
    /* half a warp at a ballot, the other half at a block barrier: deadlock */
    assert_int_not_equal(dlg_emu_selftest_divergent(), 0);
    /* a deadlock 24 KiB down the fiber stacks, then a kernel that writes
     * 32 KiB of them: it runs clean (under ASan, no redzones are left) */
    int sums[64], after = -1;
    assert_int_not_equal(dlg_emu_selftest_deep_deadlock(sums, &after), 0);
    assert_int_equal(after, 0);
    for (int i = 0; i < 64; i++)
        assert_int_equal(sums[i], 8191 * 8192 / 2);
    /* 2048 threads in a block: refused, as the hardware would */
    assert_int_equal(dlg_emu_selftest_too_many_threads(), 9);
}

/* The planted races (emu_selftest.cu), for the ThreadSanitizer build's
 * ctest to find reported: a shared word read without a barrier, a global
 * word two blocks write, one a whole block writes. */
static int planted_races(void)
{
    float out[256] = {0};
    int rc = dlg_emu_selftest_race(out, 256) || dlg_emu_selftest_global_races(out);
    printf("planted races ran: %s\n", rc ? "launch failed" : "ok");
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--planted-races"))
        return planted_races();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emulator_catches), cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_pool),             cmocka_unit_test(test_bias),
        cmocka_unit_test(test_elementwise),      cmocka_unit_test(test_loss),
        cmocka_unit_test(test_sgd_scaled),       cmocka_unit_test(test_embed),
        cmocka_unit_test(test_lstm_pack), cmocka_unit_test(test_lstm_pack_h),
        cmocka_unit_test(test_lstm_pack_grid), cmocka_unit_test(test_clip_coef),        cmocka_unit_test(test_sumsq),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
