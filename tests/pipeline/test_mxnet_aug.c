/* transform = mxnet's arithmetic on small synthetic images: the affine warp
 * (identity, a pure 2x scale, a 90-degree rotation, a shear, cv::resize's
 * map), each against values known in advance or computed here by a plain
 * double-precision reference of OpenCV's rules (bilinear at the source
 * coordinate in 1/32 pixel, rounded as cv::warpAffine rounds it), and the HLS round trip and jitter
 * against known colours. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* OpenCV's bilinear sample at source (X, Y) in 1/32 pixel with a constant
 * border, in double. */
static double ref_sample(const dlg_rgb8 *src, long X, long Y, int c, int fill)
{
    int x0 = (int)(X >> 5), y0 = (int)(Y >> 5);
    double fx = (X & 31) / 32.0, fy = (Y & 31) / 32.0, v[2][2];
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            int x = x0 + i, y = y0 + j;
            v[j][i] = x < 0 || y < 0 || x >= src->w || y >= src->h ? fill : at(src, x, y, c);
        }
    return (v[0][0] * (1 - fx) + v[0][1] * fx) * (1 - fy) + (v[1][0] * (1 - fx) + v[1][1] * fx) * fy;
}

/* cv::warpAffine's source coordinate (imgwarp.cpp) of output (x, y) for the
 * inverse map sx = a x + b y + c, in 1/32 pixel: the column term and the
 * row term each rounded to 1/1024 pixel, their sum shifted down. */
static long cv_coord(double a, double b, double c, int x, int y)
{
    return (lrint(a * x * 1024) + lrint((b * y + c) * 1024) + 16) >> 5;
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
static void check_against_reference(float shear, int angle, float scale, float ratio, int SW,
                                    int SH, int pad)
{
    /* a view into a wider buffer when pad > 0: the pad bytes are never read */
    size_t row = (size_t)SW * 3 + (size_t)pad;
    uint8_t *a = malloc(row * SH), *t = malloc((size_t)SW * SH * 3);
    pattern(t, SW, SH);
    memset(a, 0xee, row * SH);
    for (int y = 0; y < SH; y++)
        memcpy(a + row * y, t + (size_t)SW * 3 * y, (size_t)SW * 3);
    free(t);
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
    dlg_rgb8 src = {a, SW, SH, row}, dst = {b, nw, nh, (size_t)nw * 3};
    dlg_warp_rgb(&src, &dst, &inv, FILL, DLG_WARP_AFFINE_BITS);
    double det = m00 * m11 - m01 * m10;
    int off = 0;
    for (int y = 0; y < nh; y++)
        for (int x = 0; x < nw; x++) {
            /* M (sx, sy) + t = (x, y), solved: sx = (m11 (x - tx) - m01 (y - ty)) / det */
            long X = cv_coord(m11 / det, -m01 / det, (-m11 * tx + m01 * ty) / det, x, y);
            long Y = cv_coord(-m10 / det, m00 / det, (m10 * tx - m00 * ty) / det, x, y);
            for (int c = 0; c < 3; c++) {
                double want = ref_sample(&src, X, Y, c, FILL);
                int got = at(&dst, x, y, c);
                if (fabs(got - want) > 1.0)
                    fail_msg("shear %g angle %d scale %g ratio %g: (%d,%d,%d) = %d, reference %.2f",
                             (double)shear, angle, (double)scale, (double)ratio, x, y, c, got, want);
                off += got != (int)floor(want + 0.5);
            }
        }
    assert_int_equal(off, 0);
    free(b);
    free(a);
}

static void test_shear_and_mixed(void **st)
{
    (void)st;
    check_against_reference(0.3f, 0, 1, 1, 23, 17, 0);
    check_against_reference(-0.1f, 0, 1, 1, 23, 17, 0);
    check_against_reference(0.1f, 10, 1, 1.25f, 23, 17, 0);
    check_against_reference(0.05f, -7, 0.8f, 0.75f, 23, 17, 0);
    /* rows long enough for the vector kernel (8 outputs a step) and its
     * leftovers, in a view of a wider buffer */
    check_against_reference(0.1f, 10, 1, 1, 157, 101, 0);
    check_against_reference(-0.2f, -33, 1.3f, 0.8f, 90, 61, 7);
    check_against_reference(0, 180, 0.7f, 1, 71, 45, 3);
}

/* A source that fills whole pages, with unmapped pages on both sides: a
 * warp whose taps reach the first and the last pixel (x and y scaled by
 * 62.5 / 63, a small turn) reads no byte outside the image (a read
 * past it faults) and gives the reference's bytes. */
static void test_warp_reads_only_the_image(void **st)
{
    (void)st;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const int w = 64, h = (int)(page / 64); /* w h 3 = 3 pages */
    const size_t len = (size_t)w * h * 3;
    uint8_t *map = mmap(NULL, len + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    uint8_t *a = map + page;
    assert_int_equal(mprotect(a, len, PROT_READ | PROT_WRITE), 0);
    pattern(a, w, h);
    const double k = 62.5 / 63, s = 0.002; /* the turn: a few 1/32 across the image */
    dlg_affine inv = {{k, s, 0, -s, k * (h - 1.5) / (h - 1), s * (w - 1)}};
    uint8_t *b = malloc(len);
    dlg_rgb8 src = {a, w, h, (size_t)w * 3}, dst = {b, w, h, (size_t)w * 3};
    dlg_warp_rgb(&src, &dst, &inv, FILL, DLG_WARP_AFFINE_BITS);
    int inside = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            long X = cv_coord(inv.m[0], inv.m[1], inv.m[2], x, y);
            long Y = cv_coord(inv.m[3], inv.m[4], inv.m[5], x, y);
            inside += X >= 0 && Y >= 0 && (X >> 5) < w - 1 && (Y >> 5) < h - 1;
            for (int c = 0; c < 3; c++) {
                int want = (int)floor(ref_sample(&src, X, Y, c, FILL) + 0.5);
                if (at(&dst, x, y, c) != want)
                    fail_msg("(%d,%d,%d) = %d, reference %d", x, y, c, at(&dst, x, y, c), want);
            }
        }
    assert_true(inside > w * h / 2);
    /* the taps did reach both corners */
    assert_true(cv_coord(inv.m[0], inv.m[1], inv.m[2], 0, 0) >> 5 == 0);
    assert_true(cv_coord(inv.m[0], inv.m[1], inv.m[2], w - 1, h - 1) >> 5 == w - 2);
    assert_true(cv_coord(inv.m[3], inv.m[4], inv.m[5], w - 1, h - 1) >> 5 == h - 2);
    free(b);
    munmap(map, len + 2 * page);
}

/* cv::resize INTER_NEAREST (cv2 4.6 on these bytes): source column
 * floor(x * (1 / (nw / w))), no pixel centres, so 7 -> 3 takes columns
 * 0, 2, 4 (centres would give 1, 3, 5); and 14 -> 18 takes column 6 for
 * x = 9, where 9 x 14 / 18 is 7 exactly but OpenCV's reciprocal rounds
 * it down. */
static void test_resize_nearest(void **st)
{
    (void)st;
    static const struct {
        int w, h, nw, nh;
        int xs[18], ys[9];
    } k[] = {{14, 5, 18, 3, {0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 10, 10, 11, 12, 13}, {0, 1, 3}},
             {7, 5, 3, 9, {0, 2, 4}, {0, 0, 1, 1, 2, 2, 3, 3, 4}}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        uint8_t a[14 * 5 * 3], b[18 * 9 * 3];
        pattern(a, k[i].w, k[i].h);
        dlg_rgb8 src = {a, k[i].w, k[i].h, (size_t)k[i].w * 3};
        dlg_rgb8 dst = {b, k[i].nw, k[i].nh, (size_t)k[i].nw * 3};
        dlg_resize_rgb(&src, &dst, DLG_WARP_NEAREST);
        for (int y = 0; y < k[i].nh; y++)
            for (int x = 0; x < k[i].nw; x++)
                for (int c = 0; c < 3; c++)
                    if (at(&dst, x, y, c) != at(&src, k[i].xs[x], k[i].ys[y], c))
                        fail_msg("%dx%d -> %dx%d: (%d,%d,%d) = %d, cv2 takes (%d,%d): %d",
                                 k[i].w, k[i].h, k[i].nw, k[i].nh, x, y, c, at(&dst, x, y, c),
                                 k[i].xs[x], k[i].ys[y], at(&src, k[i].xs[x], k[i].ys[y], c));
    }
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

/* The HLS known answers below are cv2.cvtColor's (OpenCV 4.6, Debian's
 * python3-opencv) for the same bytes: OpenCV rounds H, L and S to bytes
 * between the two conversions, so a zero shift moves colours too, by up
 * to 5 levels (MXNet's augmenter does the same: its HLS image is 8-bit).
 * None of these colours is a hue tie, where a CPU with FMA rounds one
 * unit otherwise (loader_hls.c). */
static void check_rgb(const char *what, const uint8_t got[3], const uint8_t want[3])
{
    if (memcmp(got, want, 3) != 0)
        fail_msg("%s: (%d,%d,%d), cv2 gives (%d,%d,%d)", what, got[0], got[1], got[2], want[0],
                 want[1], want[2]);
}

/* OpenCV's 8-bit units: red H 0, green 60, blue 120, yellow 30 (two
 * degrees a unit); L = (max + min) / 2 and S in 0..255, rounded. */
static void test_hls_known_colours(void **st)
{
    (void)st;
    static const uint8_t k[][6] = {
        {255, 0, 0, 0, 128, 255},      {0, 255, 0, 60, 128, 255},    {0, 0, 255, 120, 128, 255},
        {255, 255, 0, 30, 128, 255},   {128, 128, 128, 0, 128, 0},   {255, 128, 128, 0, 192, 255},
        {0, 0, 0, 0, 0, 0},            {64, 32, 32, 0, 48, 85},      {12, 200, 77, 70, 106, 226},
        {250, 251, 3, 30, 127, 249},   {1, 2, 3, 105, 2, 128},       {200, 30, 180, 154, 115, 188}};
    uint8_t in[12 * 3], out[12 * 3];
    for (int i = 0; i < 12; i++)
        memcpy(in + 3 * i, k[i], 3);
    dlg_rgb_to_hls8(in, 12, out);
    for (int i = 0; i < 12; i++)
        check_rgb("RGB2HLS", out + 3 * i, k[i] + 3);
    /* and back: H 180 is red again; L 128 is just above a half, so the
     * saturated colours keep a level of the others (p1 = 2 l - 1) */
    static const uint8_t b[][6] = {{180, 128, 255, 255, 1, 1},  {90, 64, 200, 14, 114, 114},
                                   {0, 255, 0, 255, 255, 255},  {45, 10, 255, 10, 20, 0},
                                   {179, 200, 128, 228, 172, 174}, {30, 128, 255, 255, 255, 1},
                                   {60, 128, 255, 1, 255, 1}};
    for (int i = 0; i < 7; i++)
        memcpy(in + 3 * i, b[i], 3);
    dlg_hls8_to_rgb(in, 7, out);
    for (int i = 0; i < 7; i++)
        check_rgb("HLS2RGB", out + 3 * i, b[i] + 3);
}

/* A zero shift: every 5th/3rd/5th level through the round trip moves by
 * at most 5 levels, and the worst cases are cv2's. */
static void test_hls_round_trip(void **st)
{
    (void)st;
    int worst = 0;
    const int zero[3] = {0, 0, 0};
    for (int r = 0; r < 256; r += 5)
        for (int g = 0; g < 256; g += 3)
            for (int b = 0; b < 256; b += 5) {
                uint8_t px[3] = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
                float out[3];
                dlg_hls_jitter_row(px, 1, zero, out);
                for (int c = 0; c < 3; c++) {
                    int d = abs((int)out[c] - px[c]);
                    worst = d > worst ? d : worst;
                }
            }
    assert_int_equal(worst, 5);
    static const uint8_t k[][6] = {{0, 30, 255, 1, 35, 255}, {0, 192, 235, 0, 197, 236}};
    for (int i = 0; i < 2; i++) {
        float out[3];
        dlg_hls_jitter_row(k[i], 1, zero, out);
        const uint8_t got[3] = {(uint8_t)out[0], (uint8_t)out[1], (uint8_t)out[2]};
        check_rgb("round trip", got, k[i] + 3);
    }
}

/* MXNet's jitter on red: a shift then a clamp to 0..180 / 0..255, no
 * wrap; results in whole levels, cv2's. */
static void test_hls_jitter(void **st)
{
    (void)st;
    const uint8_t red[3] = {255, 0, 0};
    static const struct {
        int shift[3];
        uint8_t want[3];
    } k[] = {{{60, 0, 0}, {1, 255, 1}},        /* +120 degrees: green */
             {{120, 0, 0}, {1, 1, 255}},       /* +240: blue */
             {{-10, 0, 0}, {255, 1, 1}},       /* clamped at 0: still red, not magenta */
             {{200, 0, 0}, {255, 1, 1}},       /* clamped at 180 = 360 degrees: red */
             {{0, -128, 0}, {0, 0, 0}},        /* L clamped at 0: black */
             {{0, 128, 0}, {255, 255, 255}},   /* L clamped at 255: white */
             {{0, 0, -255}, {128, 128, 128}},  /* S 0: the grey of L 128 */
             {{30, 0, 0}, {255, 255, 1}},      /* +60: yellow */
             {{7, -12, 25}, {232, 54, 0}}};    /* all three */
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        float out[3];
        dlg_hls_jitter_row(red, 1, k[i].shift, out);
        for (int c = 0; c < 3; c++)
            if (out[c] != k[i].want[c])
                fail_msg("red shifted by (%d,%d,%d) is (%g,%g,%g), cv2 gives (%d,%d,%d)",
                         k[i].shift[0], k[i].shift[1], k[i].shift[2], (double)out[0],
                         (double)out[1], (double)out[2], k[i].want[0], k[i].want[1],
                         k[i].want[2]);
    }
}

/* OpenCV's RGB2HLS_b converts a row in blocks of 256 pixels, and the last
 * (block % vector width) pixels of each block take its scalar loop, whose
 * S differs by a level on some colours: a 299-pixel row is 256 + 40 vector
 * pixels and a tail of 3 (on 8 lanes and on 4), and a 1-pixel row is all
 * tail.  The bytes are cv2's (4.6, with AVX2 and with it disabled) for
 * rows of these colours; the pixels before the tail match the one-pixel
 * row only where the two loops agree. */
static void test_hls_row_tails(void **st)
{
    (void)st;
    enum { N = 299 };
    static const struct {
        uint8_t rgb[3], s_vec, s_tail, jit_vec[3], jit_tail[3];
    } k[] = {{{164, 142, 162}, 28, 27, {165, 117, 149}, {164, 118, 149}},
             {{134, 144, 172}, 48, 47, {108, 111, 174}, {109, 111, 173}}};
    const int shift[3] = {7, -12, 25};
    static uint8_t px[N * 3], hls[N * 3];
    static float row[N * 3];
    for (size_t c = 0; c < sizeof k / sizeof k[0]; c++) {
        for (int i = 0; i < N; i++)
            memcpy(px + 3 * i, k[c].rgb, 3);
        dlg_rgb_to_hls8(px, N, hls);
        dlg_hls_jitter_row(px, N, shift, row);
        for (int i = 0; i < N; i++) {
            bool tail = i >= 296;
            const uint8_t *want = tail ? k[c].jit_tail : k[c].jit_vec;
            if (hls[3 * i + 2] != (tail ? k[c].s_tail : k[c].s_vec))
                fail_msg("colour %zu, pixel %d: S %d, cv2 gives %d", c, i, hls[3 * i + 2],
                         tail ? k[c].s_tail : k[c].s_vec);
            for (int ch = 0; ch < 3; ch++)
                if (row[3 * i + ch] != want[ch])
                    fail_msg("colour %zu, pixel %d: jitter (%g,%g,%g), cv2 gives (%d,%d,%d)", c, i,
                             (double)row[3 * i], (double)row[3 * i + 1], (double)row[3 * i + 2],
                             want[0], want[1], want[2]);
        }
        float one[3];
        dlg_hls_jitter_row(px, 1, shift, one);
        for (int ch = 0; ch < 3; ch++)
            assert_true(one[ch] == k[c].jit_tail[ch]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_is_a_copy), cmocka_unit_test(test_pure_scale),
        cmocka_unit_test(test_rotate_90),          cmocka_unit_test(test_shear_and_mixed),
        cmocka_unit_test(test_resize_map),         cmocka_unit_test(test_hls_round_trip),
        cmocka_unit_test(test_hls_known_colours),  cmocka_unit_test(test_hls_jitter),
        cmocka_unit_test(test_hls_row_tails),
        cmocka_unit_test(test_warp_reads_only_the_image),
        cmocka_unit_test(test_resize_nearest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
