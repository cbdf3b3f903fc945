/* transform = mxnet's arithmetic on small synthetic images: the affine warp
 * (identity, a pure 2x scale, a 90-degree rotation, a shear, cv::resize's
 * map), each against values known in advance or computed here by a plain
 * double-precision reference of OpenCV's rules (bilinear at the source
 * coordinate rounded to 1/32 pixel), and the HLS round trip and jitter
 * against known colours. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_affine.h"
#include "loader_hls.h"

enum { W = 13, H = 9, FILL = 200 };

/* A pattern whose every pixel and channel differ: (x, y, c) is unique. */
static void pattern(uint8_t *px, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                px[((size_t)y * w + x) * 3 + c] = (uint8_t)((x * 17 + y * 29 + c * 71) % 251);
}

static int at(const dlg_rgb8 *im, int x, int y, int c)
{
    return im->px[(size_t)y * im->stride + (size_t)x * 3 + (size_t)c];
}

/* OpenCV's bilinear sample at (sx, sy) with a constant border, in double:
 * warpAffine rounds the coordinate to 1/32 pixel first. */
static double ref_sample(const dlg_rgb8 *src, double sx, double sy, int c, int fill)
{
    sx = floor(sx * 32 + 0.5) / 32;
    sy = floor(sy * 32 + 0.5) / 32;
    int x0 = (int)floor(sx), y0 = (int)floor(sy);
    double fx = sx - x0, fy = sy - y0, v[2][2];
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            int x = x0 + i, y = y0 + j;
            v[j][i] = x < 0 || y < 0 || x >= src->w || y >= src->h ? fill : at(src, x, y, c);
        }
    return (v[0][0] * (1 - fx) + v[0][1] * fx) * (1 - fy) + (v[1][0] * (1 - fx) + v[1][1] * fx) * fy;
}

static void test_identity_is_a_copy(void **st)
{
    (void)st;
    uint8_t a[W * H * 3], b[W * H * 3];
    pattern(a, W, H);
    dlg_rgb8 src = {a, W, H, W * 3}, dst = {b, W, H, W * 3};
    dlg_affine id = {{1, 0, 0, 0, 1, 0}};
    for (int nearest = 0; nearest < 2; nearest++) {
        memset(b, 0, sizeof b);
        dlg_warp_rgb(&src, &dst, &id, FILL, nearest ? DLG_WARP_NEAREST : DLG_WARP_AFFINE_BITS);
        assert_memory_equal(a, b, sizeof a);
    }
    /* MXNet's own matrix with nothing asked: the identity too */
    dlg_affine fwd;
    int nw, nh;
    dlg_mx_affine(0, 0, 1, 1, W, H, &fwd, &nw, &nh);
    assert_int_equal(nw, W);
    assert_int_equal(nh, H);
    const double want[6] = {1, 0, 0, 0, 1, 0};
    for (int i = 0; i < 6; i++)
        assert_true(fabs(fwd.m[i] - want[i]) < 1e-6);
}

/* MXNet's scale 2: output 2W x 2H, dst(x) = src(x / 2): even pixels are
 * source pixels, odd ones the rounded mean of two neighbours, the last
 * column and row half fill_value (the warp's border). */
static void test_pure_scale(void **st)
{
    (void)st;
    uint8_t a[W * H * 3];
    pattern(a, W, H);
    dlg_affine fwd, inv;
    int nw, nh;
    dlg_mx_affine(0, 0, 2, 1, W, H, &fwd, &nw, &nh);
    assert_int_equal(nw, 2 * W);
    assert_int_equal(nh, 2 * H);
    dlg_affine_invert(&fwd, &inv);
    uint8_t *b = malloc((size_t)nw * nh * 3);
    dlg_rgb8 src = {a, W, H, W * 3}, dst = {b, nw, nh, (size_t)nw * 3};
    dlg_warp_rgb(&src, &dst, &inv, FILL, DLG_WARP_AFFINE_BITS);
    for (int y = 0; y < nh; y += 2) /* even rows: only x interpolates */
        for (int x = 0; x < nw; x++)
            for (int c = 0; c < 3; c++) {
                int l = at(&src, x / 2, y / 2, c);
                int r = x / 2 + 1 < W ? at(&src, x / 2 + 1, y / 2, c) : FILL;
                int want = x % 2 ? (l + r + 1) / 2 : l;
                if (at(&dst, x, y, c) != want)
                    fail_msg("scale 2: (%d,%d,%d) = %d, want %d", x, y, c, at(&dst, x, y, c), want);
            }
    for (int x = 0; x < nw; x += 2) /* the last row: half the border */
        assert_int_equal(at(&dst, x, nh - 1, 0), (at(&src, x / 2, H - 1, 0) + FILL + 1) / 2);
    free(b);
}

/* MXNet's 90 degrees on a square image: (x, y) -> (y, S - x), the centre
 * S/2 kept, so dst(x, y) = src(S - y, x) and row 0 (from x = S, outside)
 * is fill_value -- MXNet's one-pixel shift, kept. */
static void test_rotate_90(void **st)
{
    (void)st;
    enum { S = 11 };
    uint8_t a[S * S * 3], b[S * S * 3];
    pattern(a, S, S);
    dlg_affine fwd, inv;
    int nw, nh;
    dlg_mx_affine(0, 90, 1, 1, S, S, &fwd, &nw, &nh);
    assert_int_equal(nw, S);
    assert_int_equal(nh, S);
    dlg_affine_invert(&fwd, &inv);
    dlg_rgb8 src = {a, S, S, S * 3}, dst = {b, S, S, S * 3};
    for (int nearest = 0; nearest < 2; nearest++) {
        dlg_warp_rgb(&src, &dst, &inv, FILL, nearest ? DLG_WARP_NEAREST : DLG_WARP_AFFINE_BITS);
        for (int y = 0; y < S; y++)
            for (int x = 0; x < S; x++)
                for (int c = 0; c < 3; c++) {
                    int want = y == 0 ? FILL : at(&src, S - y, x, c);
                    if (at(&dst, x, y, c) != want)
                        fail_msg("rotate 90%s: (%d,%d,%d) = %d, want %d", nearest ? " nearest" : "",
                                 x, y, c, at(&dst, x, y, c), want);
                }
    }
}

/* Shear m = 0.3 (MXNet: x' = x + m y, centred): against the reference
 * sampling at x = x' - m y' + m H / 2, y = y'.  And a rotation with shear,
 * scale and aspect at once against the reference inverse of MXNet's
 * matrix, built here in double from its formula. */
static void check_against_reference(float shear, int angle, float scale, float ratio)
{
    enum { SW = 23, SH = 17 };
    uint8_t a[SW * SH * 3];
    pattern(a, SW, SH);
    dlg_affine fwd, inv;
    int nw, nh;
    dlg_mx_affine(shear, angle, scale, ratio, SW, SH, &fwd, &nw, &nh);
    double ca = cos(angle * M_PI / 180), sa = sin(angle * M_PI / 180);
    double hs = 2.0 * scale / (1 + ratio), ws = ratio * hs;
    double m00 = hs * ca - shear * sa * ws, m01 = hs * sa + shear * ca * ws;
    double m10 = -sa * ws, m11 = ca * ws;
    double tx = (scale * SW - (m00 * SW + m01 * SH)) / 2, ty = (scale * SH - (m10 * SW + m11 * SH)) / 2;
    assert_int_equal(nw, (int)(scale * SW));
    assert_int_equal(nh, (int)(scale * SH));
    dlg_affine_invert(&fwd, &inv);
    uint8_t *b = malloc((size_t)nw * nh * 3);
    dlg_rgb8 src = {a, SW, SH, SW * 3}, dst = {b, nw, nh, (size_t)nw * 3};
    dlg_warp_rgb(&src, &dst, &inv, FILL, DLG_WARP_AFFINE_BITS);
    double det = m00 * m11 - m01 * m10;
    int off = 0;
    for (int y = 0; y < nh; y++)
        for (int x = 0; x < nw; x++) {
            double u = x - tx, v = y - ty; /* solve M (sx, sy) = (u, v) */
            double sx = (m11 * u - m01 * v) / det, sy = (-m10 * u + m00 * v) / det;
            for (int c = 0; c < 3; c++) {
                double want = ref_sample(&src, sx, sy, c, FILL);
                int got = at(&dst, x, y, c);
                if (fabs(got - want) > 1.0)
                    fail_msg("shear %g angle %d scale %g ratio %g: (%d,%d,%d) = %d, reference %.2f",
                             (double)shear, angle, (double)scale, (double)ratio, x, y, c, got, want);
                off += fabs(got - want) > 0.5 + 1e-3;
            }
        }
    assert_true(off <= nw * nh * 3 / 100); /* rounding ties only */
    free(b);
}

static void test_shear_and_mixed(void **st)
{
    (void)st;
    check_against_reference(0.3f, 0, 1, 1);
    check_against_reference(-0.1f, 0, 1, 1);
    check_against_reference(0.1f, 10, 1, 1.25f);
    check_against_reference(0.05f, -7, 0.8f, 0.75f);
}

/* cv::resize's map: 4x4 -> 2x2 averages each 2x2 block; 2x2 -> 4x4 keeps
 * the edge pixels (replicate) and blends 3:1 inside. */
static void test_resize_map(void **st)
{
    (void)st;
    uint8_t a[4 * 4 * 3], b[4 * 4 * 3];
    pattern(a, 4, 4);
    dlg_rgb8 src = {a, 4, 4, 12}, half = {b, 2, 2, 6};
    dlg_affine inv;
    dlg_affine_resize(4, 4, 2, 2, &inv);
    dlg_warp_rgb(&src, &half, &inv, -1, DLG_WARP_RESIZE_BITS);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 2; x++)
            for (int c = 0; c < 3; c++) {
                int s = at(&src, 2 * x, 2 * y, c) + at(&src, 2 * x + 1, 2 * y, c) +
                        at(&src, 2 * x, 2 * y + 1, c) + at(&src, 2 * x + 1, 2 * y + 1, c);
                assert_true(abs(at(&half, x, y, c) * 4 - s) <= 2);
            }
    uint8_t small[2 * 2 * 3] = {0, 0, 0, 100, 100, 100, 200, 200, 200, 40, 40, 40}, big[4 * 4 * 3];
    dlg_rgb8 s2 = {small, 2, 2, 6}, b4 = {big, 4, 4, 12};
    dlg_affine_resize(2, 2, 4, 4, &inv);
    dlg_warp_rgb(&s2, &b4, &inv, -1, DLG_WARP_RESIZE_BITS);
    assert_int_equal(at(&b4, 0, 0, 0), 0);   /* the corner: replicated */
    assert_int_equal(at(&b4, 3, 0, 0), 100);
    assert_int_equal(at(&b4, 1, 0, 0), 25);  /* x = 0.25: 0 * 0.75 + 100 * 0.25 */
    assert_int_equal(at(&b4, 0, 3, 0), 200);
    assert_int_equal(at(&b4, 3, 3, 0), 40);
}

/* Every 5th level of each channel: RGB -> HLS -> RGB within one level. */
static void test_hls_round_trip(void **st)
{
    (void)st;
    int worst = 0;
    for (int r = 0; r < 256; r += 5)
        for (int g = 0; g < 256; g += 3)
            for (int b = 0; b < 256; b += 5) {
                uint8_t px[3] = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
                float out[3];
                const int zero[3] = {0, 0, 0};
                dlg_hls_jitter_row(px, 1, zero, out);
                for (int c = 0; c < 3; c++) {
                    int d = abs((int)out[c] - px[c]);
                    worst = d > worst ? d : worst;
                    if (d > 1)
                        fail_msg("(%d,%d,%d) comes back as (%g,%g,%g)", r, g, b, (double)out[0],
                                 (double)out[1], (double)out[2]);
                }
            }
    assert_true(worst <= 1);
}

/* OpenCV's units: red H 0, green 60, blue 120, yellow 30 (two degrees a
 * unit); grey has S 0; L is (max + min) / 2. */
static void test_hls_known_colours(void **st)
{
    (void)st;
    static const struct {
        float r, g, b, h, l, s;
    } k[] = {{255, 0, 0, 0, 127.5f, 255},   {0, 255, 0, 60, 127.5f, 255},
             {0, 0, 255, 120, 127.5f, 255}, {255, 255, 0, 30, 127.5f, 255},
             {128, 128, 128, 0, 128, 0},    {255, 128, 128, 0, 191.5f, 255},
             {0, 0, 0, 0, 0, 0},            {64, 32, 32, 0, 48, 85}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        float hls[3];
        dlg_rgb_to_hls(k[i].r, k[i].g, k[i].b, hls);
        if (fabsf(hls[0] - k[i].h) > 0.01f || fabsf(hls[1] - k[i].l) > 0.01f ||
            fabsf(hls[2] - k[i].s) > 0.01f)
            fail_msg("(%g,%g,%g) -> HLS (%g,%g,%g), want (%g,%g,%g)", (double)k[i].r,
                     (double)k[i].g, (double)k[i].b, (double)hls[0], (double)hls[1],
                     (double)hls[2], (double)k[i].h, (double)k[i].l, (double)k[i].s);
    }
}

/* MXNet's jitter: a shift then a clamp to 0..180 / 0..255, no wrap. */
static void test_hls_jitter(void **st)
{
    (void)st;
    const uint8_t red[3] = {255, 0, 0};
    static const struct {
        int shift[3];
        float want[3];
    } k[] = {{{60, 0, 0}, {0, 255, 0}},       /* +120 degrees: green */
             {{120, 0, 0}, {0, 0, 255}},      /* +240: blue */
             {{-10, 0, 0}, {255, 0, 0}},      /* clamped at 0: still red, not magenta */
             {{200, 0, 0}, {255, 0, 0}},      /* clamped at 180 = 360 degrees: red */
             {{0, -128, 0}, {0, 0, 0}},       /* L clamped at 0: black */
             {{0, 128, 0}, {255, 255, 255}},  /* L clamped at 255: white */
             {{0, 0, -255}, {128, 128, 128}}, /* S 0: the grey of L 127.5 */
             {{30, 0, 0}, {255, 255, 0}}};    /* +60: yellow */
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        float out[3];
        dlg_hls_jitter_row(red, 1, k[i].shift, out);
        for (int c = 0; c < 3; c++)
            if (fabsf(out[c] - k[i].want[c]) > 0.5f)
                fail_msg("red shifted by (%d,%d,%d) is (%g,%g,%g), want (%g,%g,%g)",
                         k[i].shift[0], k[i].shift[1], k[i].shift[2], (double)out[0],
                         (double)out[1], (double)out[2], (double)k[i].want[0],
                         (double)k[i].want[1], (double)k[i].want[2]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_is_a_copy), cmocka_unit_test(test_pure_scale),
        cmocka_unit_test(test_rotate_90),          cmocka_unit_test(test_shear_and_mixed),
        cmocka_unit_test(test_resize_map),         cmocka_unit_test(test_hls_round_trip),
        cmocka_unit_test(test_hls_known_colours),  cmocka_unit_test(test_hls_jitter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
