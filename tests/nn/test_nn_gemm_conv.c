/* The im2col + sgemm weights' gradient (core/nn/cpu/cpu_gemm_conv.c)
 * against direct summation in double, on random data drawn fresh each
 * run: stride 2 with pad 1 and 0 (ResNet-50's and Inception-v3's layers),
 * odd sizes that leave the last tap column in the padding, passes of a
 * few images (the product accumulates over passes), a 5x5 stride-3
 * filter.  Error = max |got - ref| / max |ref|, < 1e-4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wino_testutil.h"

#include "cpu/cpu_gemm_conv.h"

#include <stdio.h>
#include <time.h>

static int64_t oh(const gemm_conv_shape *s) { return (s->h + 2 * s->pad - s->kh) / s->stride + 1; }
static int64_t ow(const gemm_conv_shape *s) { return (s->w + 2 * s->pad - s->kw) / s->stride + 1; }

/* nChw8c offset of (n, c, y, x) for a tensor of nc channels of h x w */
static size_t act(int64_t nc, int64_t h, int64_t w, int64_t n, int64_t c, int64_t y, int64_t x)
{
    return (size_t)((((n * (nc / 8) + c / 8) * h + y) * w + x) * 8 + c % 8);
}

/* ABcd8b8a offset of filter (k, c, i, j) */
static size_t wgt(const gemm_conv_shape *s, int64_t k, int64_t c, int64_t i, int64_t j)
{
    return (size_t)(((((k / 8) * (s->c / 8) + c / 8) * s->kh + i) * s->kw + j) * 64 +
                    (c % 8) * 8 + k % 8);
}

/* dw[k][c][i][j] = sum over images and output pixels of dy x, in double */
static double reference_error(const gemm_conv_shape *s, const float *x, const float *dy,
                              const float *dw)
{
    err e = {0, 0};
    for (int64_t k = 0; k < s->k; k++)
        for (int64_t c = 0; c < s->c; c++)
            for (int64_t i = 0; i < s->kh; i++)
                for (int64_t j = 0; j < s->kw; j++) {
                    double a = 0;
                    for (int64_t n = 0; n < s->n; n++)
                        for (int64_t y = 0; y < oh(s); y++)
                            for (int64_t xx = 0; xx < ow(s); xx++) {
                                int64_t iy = y * s->stride + i - s->pad;
                                int64_t ix = xx * s->stride + j - s->pad;
                                if (iy >= 0 && ix >= 0 && iy < s->h && ix < s->w)
                                    a += (double)dy[act(s->k, oh(s), ow(s), n, k, y, xx)] *
                                         x[act(s->c, s->h, s->w, n, c, iy, ix)];
                            }
                    track(&e, a, dw[wgt(s, k, c, i, j)]);
                }
    return rel(&e);
}

static void run_shape(gemm_conv_shape s, unsigned seed)
{
    assert_true(gemm_conv_supported(&s));
    size_t nx = (size_t)(s.n * s.c * s.h * s.w), ny = (size_t)(s.n * s.k * oh(&s) * ow(&s));
    size_t nw = (size_t)(s.k * s.c * s.kh * s.kw);
    float *x = randoms(nx, &seed, 2), *dy = randoms(ny, &seed, 2), *dw = randoms(nw, &seed, 1);
    void *ws = aligned_alloc(64, (gemm_conv_ws_bytes(&s) + 63) / 64 * 64);
    assert_non_null(ws);
    gemm_conv_backward_weights(&s, x, dy, dw, ws);
    double e = reference_error(&s, x, dy, dw);
    printf("  n%lld c%lld k%lld %lldx%lld filter %lldx%lld stride %lld pad %lld pass %lld: "
           "bwd weights %.1e\n",
           (long long)s.n, (long long)s.c, (long long)s.k, (long long)s.h, (long long)s.w,
           (long long)s.kh, (long long)s.kw, (long long)s.stride, (long long)s.pad,
           (long long)s.pass, e);
    assert_true(e < 1e-4);
    free(x);
    free(dy);
    free(dw);
    free(ws);
}

static void test_shapes(void **st)
{
    unsigned seed = (unsigned)time(NULL);
    printf("  seed %u\n", seed);
    /* n, c, k, h, w, kh, kw, stride, pad, images per pass (0: all) */
    run_shape((gemm_conv_shape){2, 16, 24, 9, 8, 3, 3, 2, 1, 0}, seed);
    run_shape((gemm_conv_shape){3, 8, 16, 11, 11, 3, 3, 2, 0, 0}, seed + 1); /* pad 0 */
    /* passes of 2 images and a last one of 1: the product accumulates */
    run_shape((gemm_conv_shape){5, 16, 8, 7, 10, 3, 3, 2, 1, 2}, seed + 2);
    run_shape((gemm_conv_shape){2, 8, 8, 13, 9, 5, 5, 3, 2, 1}, seed + 3);
}

/* When the engine takes it (gemm_conv_pays): 3x3 stride 2 with >= 128
 * output pixels in the batch. */
static void test_pays(void **st)
{
    /* n, c, k, h, w, kh, kw, stride, pad, pass */
    assert_true(gemm_conv_pays(&(gemm_conv_shape){16, 128, 128, 56, 56, 3, 3, 2, 1, 0}));
    assert_true(gemm_conv_pays(&(gemm_conv_shape){16, 512, 512, 14, 14, 3, 3, 2, 1, 0}));
    assert_true(gemm_conv_pays(&(gemm_conv_shape){4, 512, 512, 14, 14, 3, 3, 2, 1, 0}));
    assert_false(gemm_conv_pays(&(gemm_conv_shape){1, 512, 512, 14, 14, 3, 3, 2, 1, 0}));
    assert_false(gemm_conv_pays(&(gemm_conv_shape){16, 64, 64, 56, 56, 3, 3, 1, 1, 0}));
}

int main(void)
{
    gemm_conv_shape any = {1, 8, 8, 4, 4, 3, 3, 2, 1, 0};
    if (!gemm_conv_supported(&any)) {
        printf("no AVX2+FMA here: the im2col kernels are not used, nothing to test\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shapes), cmocka_unit_test(test_pays)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
