/* cpu_maxpool (core/nn/cpu/cpu_maxpool.c, cpu_maxpool_avx2.c), max pooling
 * over cpu-bf16's nhwc bf16 and the cpu backend's nChw16c (AVX-512) and
 * nChw8c (AVX2) fp32 activations, bit for bit
 * against a scalar reference with Caffe's windows and first-maximum rule:
 * y, and dx as the fp32 sum of dy over the outputs whose maximum each
 * input is, in ascending output order (bf16: rounded once).  Inputs take 16 values only, so windows hold ties;
 * -inf and NaN values appear too.  Shapes: stride 2 without padding
 * (GoogLeNet's and ResNet-50's), stride 1 with padding 1 (GoogLeNet's
 * inception pools), Caffe's ceil mode (a last window cut short by the
 * input's edge), 2x2 windows, channel counts with a tail (24, 40) and
 * past one register block (200: 8 vectors, then 5 with a tail; fp32
 * 208; nChw8c 200: 25 vectors, sweeps of 6 then 1).  Each layout runs
 * where the CPU has its kernels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bf16_testutil.h"
#include "cpu/cpu_maxpool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Caffe's output size: ceil mode, the last window starting inside the
 * input and its padding. */
static int64_t out_size(int64_t in, int k, int s, int p)
{
    int64_t o = (in + 2 * p - k + s - 1) / s + 1;
    if (p > 0 && (o - 1) * s >= in + p)
        o--;
    return o;
}

/* Where value (n, c, h, w) sits in the layout. */
static int64_t at(cpu_pool_layout layout, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c, int64_t h,
                  int64_t w)
{
    if (layout == CPU_POOL_BF16_NHWC)
        return ((n * H + h) * W + w) * C + c;
    int64_t b = layout == CPU_POOL_F32_NCHW8C ? 8 : 16;
    return ((n * (C / b) + c / b) * H + h) * W * b + w * b + c % b;
}

/* Values of the layout's type, as float and back. */
static float get(cpu_pool_layout layout, const void *p, int64_t i)
{
    return layout == CPU_POOL_BF16_NHWC ? from_bf16(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

static void put(cpu_pool_layout layout, void *p, int64_t i, float v)
{
    if (layout == CPU_POOL_BF16_NHWC)
        ((uint16_t *)p)[i] = to_bf16(v);
    else
        ((float *)p)[i] = v;
}

static bool same(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static void check(cpu_pool_layout layout, int64_t N, int64_t C, int64_t H, int64_t W, int k, int s, int p)
{
    cpu_pool_shape ps = {.N = N, .H = H, .W = W, .C = C, .OH = out_size(H, k, s, p), .OW = out_size(W, k, s, p),
                         .kh = k, .kw = k, .sh = s, .sw = s, .ph = p, .pw = p, .layout = layout};
    int64_t nx = N * H * W * C, ny = N * ps.OH * ps.OW * C;
    size_t e = layout == CPU_POOL_BF16_NHWC ? 2 : 4;
    void *x = malloc((size_t)nx * e), *y = malloc((size_t)ny * e), *y2 = malloc((size_t)ny * e),
         *dy = malloc((size_t)ny * e), *dx = malloc((size_t)nx * e);
    uint8_t *idx = malloc((size_t)ny);
    float *want_dx = calloc((size_t)nx, sizeof(float));
    assert_true(x && y && y2 && dy && dx && idx && want_dx);
    unsigned seed = (unsigned)(N * 7 + C * 131 + H);
    for (int64_t i = 0; i < nx; i++) {
        int r = rand_r(&seed) % 200;
        put(layout, x, i, r == 0 ? -INFINITY : r == 1 ? NAN : (float)(r % 16) - 8.0f);
    }
    for (int64_t i = 0; i < ny; i++)
        put(layout, dy, i, (float)rand_r(&seed) / (float)RAND_MAX - 0.5f);
    cpu_maxpool_fwd(&ps, x, y, idx);
    cpu_maxpool_fwd(&ps, x, y2, NULL); /* inference: the same maxima */
    cpu_maxpool_bwd(&ps, dy, idx, dx);

    int64_t bad_y = 0, bad_dx = 0, ties = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oh = 0; oh < ps.OH; oh++)
            for (int64_t ow = 0; ow < ps.OW; ow++)
                for (int64_t c = 0; c < C; c++) {
                    int64_t h0 = oh * s - p, w0 = ow * s - p, best = -1, tie = 0;
                    for (int64_t h = h0 < 0 ? 0 : h0; h < h0 + k && h < H; h++)
                        for (int64_t w = w0 < 0 ? 0 : w0; w < w0 + k && w < W; w++) {
                            int64_t i = at(layout, C, H, W, n, c, h, w);
                            tie += best >= 0 && get(layout, x, i) == get(layout, x, best);
                            if (best < 0 || get(layout, x, i) > get(layout, x, best))
                                best = i;
                        }
                    int64_t o = at(layout, C, ps.OH, ps.OW, n, c, oh, ow);
                    ties += tie > 0;
                    bad_y += !same(get(layout, y, o), get(layout, x, best)) || !same(get(layout, y2, o), get(layout, x, best));
                    want_dx[best] += get(layout, dy, o);
                }
    for (int64_t i = 0; i < nx; i++) {
        float want = layout == CPU_POOL_BF16_NHWC ? from_bf16(to_bf16(want_dx[i])) : want_dx[i];
        bad_dx += !same(get(layout, dx, i), want);
    }
    printf("  %s %lldx%lldx%lldx%lld, %dx%d stride %d pad %d -> %lldx%lld: %lld bad y, %lld bad dx; %lld windows "
           "with ties\n",
           layout == CPU_POOL_BF16_NHWC     ? "bf16 nhwc"
           : layout == CPU_POOL_F32_NCHW16C ? "fp32 nChw16c"
                                            : "fp32 nChw8c", (long long)N, (long long)H, (long long)W,
           (long long)C, k, k, s, p, (long long)ps.OH, (long long)ps.OW, (long long)bad_y, (long long)bad_dx,
           (long long)ties);
    assert_int_equal(bad_y, 0);
    assert_int_equal(bad_dx, 0);
    assert_true(ties > 0);
    free(x), free(y), free(y2), free(dy), free(dx), free(idx), free(want_dx);
}

static void test_maxpool(void **st)
{
    const cpu_pool_layout b = CPU_POOL_BF16_NHWC, f = CPU_POOL_F32_NCHW16C, e = CPU_POOL_F32_NCHW8C;
    if (!cpu_maxpool_supported(f) && !cpu_maxpool_supported(e)) {
        printf("  neither AVX2 nor AVX-512 here: the kernels do not run, nothing to check\n");
        skip(); /* reported as skipped, not passed */
    }
    if (cpu_maxpool_supported(e)) {
        check(e, 2, 64, 15, 15, 3, 2, 0); /* fp32 8-channel blocks (AVX2), the same cases */
        check(e, 2, 40, 14, 14, 3, 2, 0);
        check(e, 3, 24, 9, 11, 3, 1, 1);
        check(e, 1, 200, 7, 7, 3, 1, 1); /* 25 blocks: sweeps of 6, then 1 */
        check(e, 2, 32, 10, 10, 2, 2, 0);
        check(e, 1, 8, 8, 8, 3, 2, 1);
    } else {
        printf("  no AVX2 here: nChw8c not checked\n");
    }
    if (!cpu_maxpool_supported(f)) {
        printf("  no AVX-512 BW/VL/DQ here: bf16 nhwc and fp32 nChw16c not checked\n");
        return;
    }
    check(b, 2, 64, 15, 15, 3, 2, 0); /* 7x7 windows of 3 */
    check(b, 2, 40, 14, 14, 3, 2, 0); /* ceil mode: the last window holds 2 columns */
    check(b, 3, 24, 9, 11, 3, 1, 1);  /* padding: edge windows of 2x2 and 2x3 */
    check(b, 1, 200, 7, 7, 3, 1, 1);  /* two channel blocks, the second with a tail */
    check(b, 2, 32, 10, 10, 2, 2, 0); /* 2x2, no overlap */
    check(b, 1, 16, 8, 8, 3, 2, 1);   /* padding with stride 2 */
    check(f, 2, 64, 15, 15, 3, 2, 0); /* fp32 16-channel blocks, the same cases */
    check(f, 3, 32, 9, 11, 3, 1, 1);
    check(f, 1, 208, 7, 7, 3, 1, 1);  /* 13 blocks: a sweep of 8, then 5 */
    check(f, 2, 16, 14, 14, 3, 2, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_maxpool)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
