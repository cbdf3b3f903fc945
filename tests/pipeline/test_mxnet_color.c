/* transform = mxnet's colour jitter and PCA lighting (loader_color.c)
 * against known answers: MXNet's formulas (convertTo, addWeighted with
 * OpenCV 4's fixed-point RGB2GRAY on MXNet's BGR bytes, its PCA loop)
 * computed once in numpy float32 -- fused and unfused multiply-adds agree
 * on these inputs -- and kept here as bytes.  Then properties: factors of
 * 1 leave any image unchanged in every order, results are clamped bytes,
 * and the order of the steps matters.  Last, a wider image against the
 * formulas applied a step at a time, so the vector loops' whole blocks
 * and their tails are checked too. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loader_color.h"

/* 3 x 2 RGB: saturated, grey and mixed colours. */
static const uint8_t SRC[18] = {200, 30, 90, 12, 250, 128, 77, 77, 77,
                                255, 0,  0,  0,  0,   255, 140, 180, 60};

static void run(const float alpha[3], const int order[3], uint8_t out[18])
{
    memcpy(out, SRC, 18);
    dlg_rgb8 img = {out, 3, 2, 9};
    dlg_mx_color_jitter(&img, alpha, order);
}

static void expect(const char *what, const uint8_t *got, const uint8_t *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s: byte %d (pixel %d, channel %d) is %d, want %d", what, i, i / 3, i % 3,
                     got[i], want[i]);
}

/* One step alone (the others at 1, MXNet's factor when their option is 0). */
static void one(int step, float a, const uint8_t want[18], const char *what)
{
    float alpha[3] = {1, 1, 1};
    alpha[step] = a;
    uint8_t out[18];
    run(alpha, (const int[3]){0, 1, 2}, out);
    expect(what, out, want, 18);
}

static void test_gray(void **st)
{
    (void)st;
    /* 0.299 on blue: (200, 30, 90) -> (9798*90 + 19235*30 + 3735*200 + 2^14) >> 15 */
    static const uint8_t want[6] = {67, 186, 77, 29, 76, 140};
    for (int i = 0; i < 6; i++)
        assert_int_equal(dlg_mx_gray(SRC + 3 * i), want[i]);
    /* OpenCV 4's 15-bit weights sum to 2^15: white stays 255, black 0 */
    assert_int_equal(dlg_mx_gray((const uint8_t[3]){255, 255, 255}), 255);
    assert_int_equal(dlg_mx_gray((const uint8_t[3]){0, 0, 0}), 0);
}

static void test_brightness(void **st)
{
    (void)st;
    one(DLG_MX_BRIGHTNESS, 1.25f,
        (const uint8_t[18]){250, 38, 112, 15, 255, 160, 96, 96, 96, 255,
                            0, 0, 0, 0, 255, 175, 225, 75},
        "brightness 1.25");
    one(DLG_MX_BRIGHTNESS, 0.6f,
        (const uint8_t[18]){120, 18, 54, 7, 150, 77, 46, 46, 46, 153,
                            0, 0, 0, 0, 153, 84, 108, 36},
        "brightness 0.6");
}

static void test_contrast(void **st)
{
    (void)st;
    /* mean grey 575/6: 200 * 0.5 + 0.5 * 95.83 = 147.9 -> 148 */
    one(DLG_MX_CONTRAST, 0.5f,
        (const uint8_t[18]){148, 63, 93, 54, 173, 112, 86, 86, 86, 175,
                            48, 48, 48, 48, 175, 118, 138, 78},
        "contrast 0.5");
    one(DLG_MX_CONTRAST, 1.7f,
        (const uint8_t[18]){255, 0, 86, 0, 255, 151, 64, 64, 64, 255,
                            0, 0, 0, 0, 255, 171, 239, 35},
        "contrast 1.7");
}

static void test_saturation(void **st)
{
    (void)st;
    one(DLG_MX_SATURATION, 1.5f,
        (const uint8_t[18]){255, 12, 102, 0, 255, 99, 77, 77, 77, 255,
                            0, 0, 0, 0, 255, 140, 200, 20},
        "saturation 1.5");
    one(DLG_MX_SATURATION, 0.3f,
        (const uint8_t[18]){107, 56, 74, 134, 205, 169, 77, 77, 77, 97,
                            20, 20, 53, 53, 130, 140, 152, 116},
        "saturation 0.3");
}

/* Two steps, both orders: each result is bytes before the next step. */
static void test_order(void **st)
{
    (void)st;
    float alpha[3] = {1.5f, 0.5f, 1};
    uint8_t out[18];
    run(alpha, (const int[3]){DLG_MX_BRIGHTNESS, DLG_MX_CONTRAST, DLG_MX_SATURATION}, out);
    expect("brightness 1.5 then contrast 0.5", out,
           (const uint8_t[18]){188, 83, 128, 70, 188, 157, 119, 119, 119, 188,
                            61, 61, 61, 61, 188, 166, 188, 106},
           18);
    run(alpha, (const int[3]){DLG_MX_CONTRAST, DLG_MX_SATURATION, DLG_MX_BRIGHTNESS}, out);
    expect("contrast 0.5 then brightness 1.5", out,
           (const uint8_t[18]){222, 94, 140, 81, 255, 168, 129, 129, 129, 255,
                            72, 72, 72, 72, 255, 177, 207, 117},
           18);
    float all[3] = {1.2f, 0.45f, 1.8f};
    run(all, (const int[3]){DLG_MX_SATURATION, DLG_MX_CONTRAST, DLG_MX_BRIGHTNESS}, out);
    expect("saturation 1.8, contrast 0.45, brightness 1.2", out,
           (const uint8_t[18]){199, 61, 120, 61, 199, 106, 103, 103, 103, 199,
                            61, 61, 61, 61, 199, 137, 175, 61},
           18);
}

static void test_orders_table(void **st)
{
    (void)st;
    bool seen[3][3] = {{false}};
    for (int i = 0; i < 6; i++) {
        int o[3];
        dlg_mx_color_order(i, o);
        assert_true(o[0] != o[1] && o[1] != o[2] && o[0] != o[2]);
        for (int k = 0; k < 3; k++)
            seen[k][o[k]] = true;
    }
    for (int k = 0; k < 3; k++) /* every step comes first, second and last */
        assert_true(seen[k][0] && seen[k][1] && seen[k][2]);
}

/* Factors of 1 (an option at 0) leave every byte as it was, in every
 * order, on an image of all byte values at odd sizes and strides. */
static void test_identity(void **st)
{
    (void)st;
    enum { W = 37, H = 23, STRIDE = W * 3 + 5 };
    static uint8_t px[H * STRIDE], copy[H * STRIDE];
    for (int i = 0; i < H * STRIDE; i++)
        px[i] = (uint8_t)(i * 97 + i / 7);
    memcpy(copy, px, sizeof px);
    dlg_rgb8 img = {px, W, H, STRIDE};
    for (int i = 0; i < 6; i++) {
        int o[3];
        dlg_mx_color_order(i, o);
        dlg_mx_color_jitter(&img, (const float[3]){1, 1, 1}, o);
        assert_memory_equal(px, copy, sizeof px);
    }
    /* a factor other than 1 touches only the image, not the stride's gap */
    dlg_mx_color_jitter(&img, (const float[3]){0.5f, 1.5f, 1.5f}, (const int[3]){0, 1, 2});
    for (int y = 0; y < H; y++)
        assert_memory_equal(px + y * STRIDE + W * 3, copy + y * STRIDE + W * 3, 5);
}

/* Factors at the ends of the range: 0 and 2 clamp to bytes, never wrap. */
static void test_clamped(void **st)
{
    (void)st;
    uint8_t out[18];
    run((const float[3]){2, 1, 1}, (const int[3]){0, 1, 2}, out);
    for (int i = 0; i < 18; i++)
        assert_int_equal(out[i], SRC[i] * 2 > 255 ? 255 : SRC[i] * 2);
    run((const float[3]){0, 1, 1}, (const int[3]){0, 1, 2}, out);
    for (int i = 0; i < 18; i++)
        assert_int_equal(out[i], 0);
    /* contrast 0: every byte is the mean grey, 95.83 -> 96 */
    run((const float[3]){1, 0, 1}, (const int[3]){0, 1, 2}, out);
    for (int i = 0; i < 18; i++)
        assert_int_equal(out[i], 96);
    /* saturation 0: every pixel its grey */
    run((const float[3]){1, 1, 0}, (const int[3]){0, 1, 2}, out);
    for (int i = 0; i < 18; i++)
        assert_int_equal(out[i], dlg_mx_gray(SRC + i / 3 * 3));
}

static void test_pca(void **st)
{
    (void)st;
    float off[3];
    dlg_mx_pca_offsets((const float[3]){0.1f, -0.2f, 0.05f}, off);
    /* sum_i a_i l_i e_ci in float (numpy float32) */
    assert_true(off[0] == -3.8139121532440186f);
    assert_true(off[1] == -3.2635257244110107f);
    assert_true(off[2] == -2.5463459491729736f);
    float px[18];
    for (int i = 0; i < 18; i++)
        px[i] = SRC[i];
    dlg_mx_pca_apply(px, 6, off);
    static const uint8_t want[18] = {196, 26, 87, 8, 246, 125, 73, 73, 74,
                                     251, 0,  0,  0, 0,   252, 136, 176, 57};
    for (int i = 0; i < 18; i++)
        if (px[i] != want[i])
            fail_msg("pca, byte %d: %g, want %d", i, (double)px[i], want[i]);
    /* the opposite draws: +3.81 truncates (200 -> 203, not 204) and clamps at 255 */
    dlg_mx_pca_offsets((const float[3]){-0.1f, 0.2f, -0.05f}, off);
    assert_true(off[0] == 3.8139121532440186f);
    for (int i = 0; i < 18; i++)
        px[i] = SRC[i];
    dlg_mx_pca_apply(px, 6, off);
    static const uint8_t up[18] = {203, 33, 92, 15, 253, 130, 80, 80, 79,
                                   255, 3,  2,  3,  3,   255, 143, 183, 62};
    for (int i = 0; i < 18; i++)
        if (px[i] != up[i])
            fail_msg("pca up, byte %d: %g, want %d", i, (double)px[i], up[i]);
    /* no noise, no change */
    dlg_mx_pca_offsets((const float[3]){0, 0, 0}, off);
    assert_true(off[0] == 0 && off[1] == 0 && off[2] == 0);
}

/* The formulas of loader_color.h, one step at a time over the whole
 * image: fused multiply-adds where the loops run fused (OpenCV's AVX2
 * kernels), else a product rounded before the add. */
static uint8_t ref_byte(float v, float a, float b, bool fused)
{
    volatile float prod = v * a; /* rounded: no contraction into an fma */
    float x = rintf(fused ? fmaf(v, a, b) : prod + b);
    return (uint8_t)(x < 0 ? 0 : x > 255 ? 255 : x);
}

static void ref_jitter(uint8_t *px, int w, int h, int stride, const float alpha[3],
                       const int order[3], bool fused)
{
    for (int k = 0; k < 3; k++) {
        float a = alpha[order[k]], b = 0;
        if (order[k] == DLG_MX_CONTRAST) {
            long long sum = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    sum += dlg_mx_gray(px + y * stride + 3 * x);
            b = (1.0f - a) * (float)((double)sum * (1.0 / ((double)w * h)));
        }
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint8_t *p = px + y * stride + 3 * x;
                float g = (float)dlg_mx_gray(p) * (1.0f - a);
                for (int c = 0; c < 3; c++)
                    p[c] = ref_byte(p[c], a, order[k] == DLG_MX_SATURATION ? g : b, fused);
            }
    }
}

/* 71 pixels a row (two blocks of 32 and a tail of 7; 213 bytes: six blocks
 * of 32 and 21), a gap after each row that must stay, pseudo-random bytes;
 * several factor sets (one at 1, some past 0..2) in all six orders. */
static void test_wide(void **st)
{
    (void)st;
    enum { W = 71, H = 9, STRIDE = W * 3 + 7 };
    static uint8_t src[H * STRIDE], got[H * STRIDE], want[H * STRIDE];
    uint32_t r = 12345;
    for (int i = 0; i < H * STRIDE; i++) {
        r = r * 1103515245u + 12345u;
        src[i] = (uint8_t)(r >> 16);
    }
    static const float sets[5][3] = {{1.3f, 0.7f, 1.35f},  {0.45f, 1.8f, 0.2f},
                                     {2.5f, -0.3f, 1.0f},  {1.0f, 1.6f, 0.6f},
                                     {0.83f, 0.61f, 1.27f}};
    bool fused = strstr(dlg_mx_color_isa(), "fma") != NULL;
    for (int f = 0; f < 5; f++)
        for (int i = 0; i < 6; i++) {
            int o[3];
            dlg_mx_color_order(i, o);
            memcpy(got, src, sizeof src);
            memcpy(want, src, sizeof src);
            dlg_rgb8 img = {got, W, H, STRIDE};
            dlg_mx_color_jitter(&img, sets[f], o);
            ref_jitter(want, W, H, STRIDE, sets[f], o, fused);
            for (int k = 0; k < H * STRIDE; k++)
                if (got[k] != want[k])
                    fail_msg("factors %g %g %g, order %d %d %d: row %d byte %d is %d, want %d",
                             (double)sets[f][0], (double)sets[f][1], (double)sets[f][2], o[0],
                             o[1], o[2], k / STRIDE, k % STRIDE, got[k], want[k]);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gray),          cmocka_unit_test(test_brightness),
        cmocka_unit_test(test_contrast),      cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_order),         cmocka_unit_test(test_orders_table),
        cmocka_unit_test(test_identity),      cmocka_unit_test(test_clamped),
        cmocka_unit_test(test_pca),           cmocka_unit_test(test_wide),
    };
    printf("colour jitter loops: %s\n", dlg_mx_color_isa());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
