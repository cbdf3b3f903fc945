/* transform = mxnet's other interpolations (inter_method 2 cubic, 3 area,
 * 4 lanczos4, 9 auto, 10 random), and cv::resize / cv::warpAffine's bytes
 * for every method: small images against bytes OpenCV 4.6 (Debian's
 * python3-opencv) produced once (tests/pipeline/test_mxnet_interp.c keeps
 * them as constants: facts of OpenCV's output), properties (a constant
 * image stays constant, area at a whole factor is the block mean rounded
 * as OpenCV rounds), MXNet's rule for 9 and 10, and the loader end to end
 * taking the method that rule picks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loader_affine.h"
#include "loader_image.h"
#include "mock_host.h"
#include "pipe_util.h"
#include "cv_pattern.h"

/* ---- cv2's bytes ------------------------------------------------------------ */
/* cv2.resize(pattern 7x5, (3, 4), interpolation=m), pattern 4x3 to (9, 7),
 * and cv2.warpAffine(pattern 6x5, M, (6, 5), flags=m, BORDER_CONSTANT,
 * 40) with M = getRotationMatrix2D((2.5, 2), 30, 1) in float32. */
static const uint8_t shrink_nearest[36] = {
      0,  29,  58, 134, 163, 192,  12,  41,  70, 131, 160, 189,  35,  64,  93, 195, 224, 253,
      6,  35,  64, 192, 221, 250, 122, 151, 180, 137, 166, 195,  93, 122, 151,  49,  78, 107,
};
static const uint8_t shrink_linear[36] = {
     62,  91,  99, 190, 219,  24,  94, 123, 152, 140, 170,  92,  83, 112, 141,  89, 118,  83,
    155,  78, 106, 135, 164,  33, 126, 155, 120, 106, 114, 142, 124, 153, 150, 131, 160, 114,
};
static const uint8_t shrink_cubic[36] = {
     57,  86,  92, 193, 222,  22,  97, 126, 157, 160, 203,  79,  63,  92, 166,  73, 102,  44,
    173,  46,  88, 142, 171,   8, 149, 175, 126,  97, 128, 157, 124, 153, 152, 117, 171, 130,
};
static const uint8_t shrink_area[36] = {
     69,  98, 105, 125, 154,  96,  94, 123, 152, 120, 149, 112, 110, 139, 168, 100, 129, 114,
    135,  98, 127, 116, 145, 109,  98, 127, 112, 113,  91, 120, 174,  86,  93, 148, 147,  89,
};
static const uint8_t shrink_lanczos4[36] = {
     68,  94,  81, 198, 227,  21, 103, 132, 156, 150, 209,  81,  54,  83, 179,  63,  94,  30,
    169,  31,  75, 145, 174,   0, 166, 189, 120,  95, 141, 165, 128, 157, 153, 106, 178, 143,
};
static const uint8_t grow_nearest[189] = {
      0,  29,  58,   0,  29,  58,   0,  29,  58,  67,  96, 125,  67,  96, 125, 134, 163, 192,
    134, 163, 192, 201, 230,   3, 201, 230,   3,   0,  29,  58,   0,  29,  58,   0,  29,  58,
     67,  96, 125,  67,  96, 125, 134, 163, 192, 134, 163, 192, 201, 230,   3, 201, 230,   3,
      0,  29,  58,   0,  29,  58,   0,  29,  58,  67,  96, 125,  67,  96, 125, 134, 163, 192,
    134, 163, 192, 201, 230,   3, 201, 230,   3, 131, 160, 189, 131, 160, 189, 131, 160, 189,
    211, 240,  13, 211, 240,  13,  35,  64,  93,  35,  64,  93, 115, 144, 173, 115, 144, 173,
    131, 160, 189, 131, 160, 189, 131, 160, 189, 211, 240,  13, 211, 240,  13,  35,  64,  93,
     35,  64,  93, 115, 144, 173, 115, 144, 173,   6,  35,  64,   6,  35,  64,   6,  35,  64,
     99, 128, 157,  99, 128, 157, 192, 221, 250, 192, 221, 250,  29,  58,  87,  29,  58,  87,
      6,  35,  64,   6,  35,  64,   6,  35,  64,  99, 128, 157,  99, 128, 157, 192, 221, 250,
    192, 221, 250,  29,  58,  87,  29,  58,  87,
};
static const uint8_t grow_linear[189] = {
      0,  29,  58,  11,  40,  69,  41,  70,  99,  71,  99, 129, 100, 129, 158, 130, 159, 188,
    160, 189, 118, 190, 219,  34, 201, 230,   3,  19,  48,  77,  30,  59,  82,  61,  90,  96,
     89, 118, 113, 104, 132, 143, 118, 147, 174, 146, 175, 119, 177, 206,  52, 188, 218,  27,
     75, 104, 133,  87, 116, 121, 120, 149,  89, 145, 174,  65, 113, 142,  98,  81, 110, 131,
    106, 135, 122, 139, 168, 106, 152, 181, 100, 131, 160, 189, 144, 173, 160, 180, 209,  81,
    201, 230,  17, 123, 152,  53,  45,  74,  89,  66,  95, 124, 102, 131, 160, 115, 144, 173,
     77, 106, 135,  91, 121, 125, 130, 159,  98, 159, 189,  79, 133, 162, 117, 106, 135, 155,
     93, 122, 151,  82, 111, 140,  78, 107, 136,  24,  53,  82,  39,  68,  91,  79, 108, 115,
    118, 147, 141, 142, 171, 182, 166, 195, 222, 119, 149, 178,  63,  91, 121,  41,  70,  99,
      6,  35,  64,  21,  50,  79,  63,  92, 121, 104, 133, 162, 145, 174, 203, 187, 216, 245,
    128, 158, 187,  56,  85, 114,  29,  58,  87,
};
static const uint8_t grow_cubic[189] = {
      0,   8,  33,   0,  22,  56,  16,  45,  95,  58,  87, 144,  98, 127, 199, 138, 167, 208,
    180, 209, 128, 203, 232,  17, 217, 246,   0,  10,  39,  72,  27,  56,  79,  57,  86,  89,
     90, 119, 114, 103, 132, 161, 116, 145, 181, 151, 180, 128, 182, 211,  48, 199, 228,   8,
     81, 110, 158, 101, 130, 131, 146, 175,  75, 160, 189,  44, 109, 138,  73,  61,  90, 115,
     87, 116, 123, 144, 173, 113, 171, 200, 110, 122, 151, 208, 145, 174, 162, 200, 229,  70,
    206, 235,  10, 123, 152,  29,  40,  69,  86,  46,  75, 132, 100, 129, 163, 124, 153, 182,
     83, 112, 160, 106, 135, 136, 156, 185,  86, 178, 207,  62, 145, 174,  96,  95, 124, 144,
     73, 102, 160,  71, 100, 155,  68,  97, 155,  13,  42,  75,  35,  64,  87,  74, 103, 107,
    121, 150, 144, 164, 193, 201, 174, 203, 231, 128, 157, 191,  58,  87, 120,  24,  53,  85,
      0,  11,  37,   4,  33,  66,  38,  67, 117,  96, 125, 182, 175, 204, 249, 211, 240, 255,
    151, 180, 206,  49,  78, 106,   0,  28,  57,
};
static const uint8_t grow_area[189] = {
      0,  29,  58,   0,  29,  58,  50,  79, 108,  67,  96, 125, 101, 130, 159, 134, 163, 192,
    151, 180, 145, 201, 230,   3, 201, 230,   3,   0,  29,  58,   0,  29,  58,  50,  79, 108,
     67,  96, 125, 101, 130, 159, 134, 163, 192, 151, 180, 145, 201, 230,   3, 201, 230,   3,
     87, 116, 145,  87, 116, 145, 144, 173,  74, 163, 192,  50, 115, 144,  88,  68,  97, 126,
     87, 116, 124, 144, 172, 116, 144, 172, 116, 131, 160, 189, 131, 160, 189, 191, 220,  57,
    211, 240,  13, 123, 152,  53,  35,  64,  93,  55,  84, 113, 115, 144, 173, 115, 144, 173,
     89, 118, 147,  89, 118, 147, 153, 181,  82, 174, 202,  61, 130, 159, 103,  87, 116, 145,
     87, 116, 145,  86, 115, 144,  86, 115, 144,   6,  35,  64,   6,  35,  64,  76, 105, 134,
     99, 128, 157, 146, 175, 204, 192, 221, 250, 151, 180, 209,  29,  58,  87,  29,  58,  87,
      6,  35,  64,   6,  35,  64,  76, 105, 134,  99, 128, 157, 146, 175, 204, 192, 221, 250,
    151, 180, 209,  29,  58,  87,  29,  58,  87,
};
static const uint8_t grow_lanczos4[189] = {
      0,   4,  31,   0,  14,  45,  10,  39,  85,  51,  80, 154, 100, 129, 218, 147, 176, 217,
    183, 212, 128, 203, 232,  11, 210, 239,   0,  11,  40,  79,  29,  58,  76,  62,  91,  80,
     90, 119, 113, 101, 130, 162, 114, 143, 178, 146, 175, 127, 184, 213,  48, 203, 232,   5,
     77, 106, 166, 109, 138, 132, 157, 186,  72, 162, 191,  41, 107, 136,  65,  58,  87, 110,
     78, 107, 128, 142, 171, 118, 180, 209, 108, 113, 142, 212, 151, 180, 163, 207, 236,  72,
    206, 235,   9, 123, 152,  22,  40,  69,  85,  39,  67, 141,  95, 124, 169, 133, 162, 176,
     81, 110, 168, 111, 140, 137, 161, 190,  83, 182, 211,  59, 148, 177,  90,  94, 123, 141,
     65,  94, 166,  66,  95, 162,  71, 100, 155,  18,  47,  82,  33,  62,  84,  69,  98,  99,
    124, 153, 144, 171, 200, 204, 174, 203, 230, 123, 152, 191,  55,  84, 123,  19,  48,  85,
      0,  12,  35,   0,  18,  54,  18,  47, 107,  91, 120, 190, 181, 210, 255, 217, 246, 255,
    156, 185, 203,  53,  82,  99,   0,  25,  44,
};
static const uint8_t rot_nearest[90] = {
     40,  40,  40, 134, 163, 192, 201, 230,   3, 195, 224, 253,  19,  48,  77,  40,  40,  40,
     67,  96, 125, 134, 163, 192, 115, 144, 173, 115, 144, 173, 122, 151, 180, 215, 244,  17,
    131, 160, 189, 211, 240,  13, 192, 221, 250,  29,  58,  87,  49,  78, 107, 155, 184, 213,
      6,  35,  64,  99, 128, 157,  93, 122, 151,  93, 122, 151, 113, 142, 171, 232,   5,  34,
     40,  40,  40, 137, 166, 195, 243,  16,  45, 250,  23,  52, 113, 142, 171,  40,  40,  40,
};
static const uint8_t rot_linear[90] = {
     42,  42,  43,  97, 112, 102, 187, 216,  13, 112, 141, 163,  57,  86, 108,  69,  79,  42,
     54,  80, 105, 104, 133, 132,  91, 120, 131, 120, 149, 178, 150, 179, 138, 169, 193,  83,
    125, 154, 117, 163, 192,  65, 146, 175, 204,  77, 106,  75,  84, 113, 106, 124, 131, 160,
     51,  75, 100,  87,  94, 123, 156, 115, 144, 146, 157,  88, 151, 130,  93, 189,  26,  51,
     49,  59,  69, 153, 135, 164, 189,  83, 112, 238,  34,  63,  92,  82,  98,  45,  40,  41,
};
static const uint8_t rot_cubic[90] = {
     41,  42,  43, 114, 130, 113, 196, 226,   2, 122, 153, 176,  51,  83, 109,  64,  74,  21,
     39,  65, 109, 101, 133, 149,  71, 101, 130, 125, 154, 223, 175, 206, 149, 207, 231,  74,
    155, 189, 135, 182, 219,  38, 158, 186, 220,  66,  96,  58,  52, 106,  99, 126, 133, 201,
     37,  60,  94,  69,  75, 120, 160, 110, 167, 144, 181,  84, 167, 155,  97, 218,   9,  34,
     43,  60,  68, 166, 150, 182, 216,  79, 111, 251,  27,  57,  80,  80, 119,  44,  40,  41,
};
static const uint8_t rot_area[90] = {
     42,  42,  43,  97, 112, 102, 187, 216,  13, 112, 141, 163,  57,  86, 108,  69,  79,  42,
     54,  80, 105, 104, 133, 132,  91, 120, 131, 120, 149, 178, 150, 179, 138, 169, 193,  83,
    125, 154, 117, 163, 192,  65, 146, 175, 204,  77, 106,  75,  84, 113, 106, 124, 131, 160,
     51,  75, 100,  87,  94, 123, 156, 115, 144, 146, 157,  88, 151, 130,  93, 189,  26,  51,
     49,  59,  69, 153, 135, 164, 189,  83, 112, 238,  34,  63,  92,  82,  98,  45,  40,  41,
};
static const uint8_t rot_lanczos4[90] = {
     40,  41,  45, 128, 144, 120, 196, 226,   0, 120, 155, 174,  50,  82, 106,  52,  63,   7,
     37,  67, 107,  90, 119, 143,  59,  91, 133, 128, 152, 239, 198, 221, 156, 217, 237,  68,
    176, 204, 142, 179, 226,  34, 161, 174, 209,  74, 105,  42,  34,  90,  78, 118, 121, 216,
     36,  55,  92,  57,  59, 108, 144,  99, 182, 144, 199, 101, 179, 164,  96, 229,   7,  30,
     38,  67,  72, 170, 150, 176, 227,  82, 102, 254,  24,  54,  69,  69, 125,  44,  40,  41,
};

static const uint8_t *const shrink[5] = {shrink_nearest, shrink_linear, shrink_cubic, shrink_area,
                                         shrink_lanczos4};
static const uint8_t *const grow[5] = {grow_nearest, grow_linear, grow_cubic, grow_area,
                                       grow_lanczos4};
static const uint8_t *const rot[5] = {rot_nearest, rot_linear, rot_cubic, rot_area, rot_lanczos4};

static void resize_case(int w, int h, int nw, int nh, const uint8_t *want, const char *what, int m)
{
    uint8_t in[7 * 5 * 3], out[9 * 7 * 3];
    cv_pattern(in, w, h);
    memset(out, 0xee, sizeof out);
    dlg_rgb8 src = {in, w, h, (size_t)w * 3}, dst = {out, nw, nh, (size_t)nw * 3};
    dlg_resize_rgb(&src, &dst, cv_interp_code(m, false));
    cv_same_bytes(out, want, (size_t)nw * nh * 3, what, m);
}

static void test_resize_known_answers(void **st)
{
    (void)st;
    for (int m = 0; m < 5; m++) {
        resize_case(7, 5, 3, 4, shrink[m], "7x5 -> 3x4", m);
        resize_case(4, 3, 9, 7, grow[m], "4x3 -> 9x7", m);
    }
}

static void test_warp_known_answers(void **st)
{
    (void)st;
    const dlg_affine fwd = {{0.866025388, 0.5, -0.6650635, -0.5, 0.866025388, 1.51794922}};
    dlg_affine inv;
    dlg_affine_invert(&fwd, &inv);
    uint8_t in[6 * 5 * 3], out[6 * 5 * 3];
    cv_pattern(in, 6, 5);
    dlg_rgb8 src = {in, 6, 5, 18}, dst = {out, 6, 5, 18};
    for (int m = 0; m < 5; m++) {
        memset(out, 0xee, sizeof out);
        dlg_warp_rgb(&src, &dst, &inv, 40, cv_interp_code(m, true));
        cv_same_bytes(out, rot[m], sizeof out, "rotation by 30 degrees", m);
    }
}

/* A constant image stays that constant under every method: resized to
 * sizes that shrink, grow and mix, and warped with the same fill. */
static void test_constant_stays_constant(void **st)
{
    (void)st;
    enum { W = 23, H = 17 };
    static uint8_t in[W * H * 3], out[46 * 37 * 3];
    memset(in, 201, sizeof in);
    dlg_rgb8 src = {in, W, H, W * 3};
    static const int sizes[][2] = {{5, 4}, {41, 37}, {11, 30}, {23, 17}, {46, 34}, {1, 1}};
    const dlg_affine fwd = {{0.8, 0.3, 2.5, -0.35, 1.1, -1.5}};
    dlg_affine inv;
    dlg_affine_invert(&fwd, &inv);
    for (int m = 0; m < 5; m++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            for (int warp = 0; warp < 2; warp++) {
                dlg_rgb8 dst = {out, sizes[s][0], sizes[s][1], (size_t)sizes[s][0] * 3};
                memset(out, 0, sizeof out);
                if (warp)
                    dlg_warp_rgb(&src, &dst, &inv, 201, cv_interp_code(m, true));
                else
                    dlg_resize_rgb(&src, &dst, cv_interp_code(m, false));
                for (size_t i = 0; i < (size_t)dst.w * dst.h * 3; i++)
                    if (out[i] != 201) {
                        print_error("%s %s to %dx%d: byte %zu is %d\n", warp ? "warp" : "resize",
                                    cv_method_names[m], dst.w, dst.h, i, out[i]);
                        fail();
                    }
            }
        }
}

/* INTER_AREA at whole factors fx x fy: the block's mean, rounded half up
 * for 2 x 2 (OpenCV's (sum + 2) >> 2), to nearest even for the others
 * (sum / area in float: 2 x 1 has ties, 3 x 3 none). */
static void area_blocks(int fx, int fy)
{
    enum { NW = 5, NH = 4 };
    uint8_t in[NW * 3 * NH * 3 * 3], out[NW * NH * 3];
    int w = NW * fx, h = NH * fy, ties = 0;
    for (int i = 0; i < w * h * 3; i++)
        in[i] = (uint8_t)(((uint32_t)i * 2654435761u) >> 24); /* scattered bytes */
    dlg_rgb8 src = {in, w, h, (size_t)w * 3}, dst = {out, NW, NH, NW * 3};
    dlg_resize_rgb(&src, &dst, DLG_WARP_AREA);
    for (int y = 0; y < NH; y++)
        for (int x = 0; x < NW; x++)
            for (int c = 0; c < 3; c++) {
                int sum = 0, area = fx * fy;
                for (int j = 0; j < fy; j++)
                    for (int i = 0; i < fx; i++)
                        sum += in[((size_t)(y * fy + j) * w + x * fx + i) * 3 + c];
                int want = area == 4 ? (sum + 2) / 4 : (int)rint((double)sum / area);
                ties += 2 * (sum % area) == area;
                assert_int_equal(out[(y * NW + x) * 3 + c], want);
            }
    if (fx * fy % 2 == 0)
        assert_true(ties > 0); /* the rounding rule was exercised */
}

static void test_area_whole_factors(void **st)
{
    (void)st;
    area_blocks(2, 2);
    area_blocks(2, 1);
    area_blocks(3, 3);
    area_blocks(1, 2);
}

/* ---- MXNet's inter_method 9 and 10 -------------------------------------------- */

static dlg_mxnet_aug mx_with(int inter)
{
    dlg_mxnet_aug mx;
    dlg_ld_mx_defaults(&mx);
    mx.inter_method = inter;
    return mx;
}

/* GetInterMethod's 9: cubic when both sides grow, area when both shrink,
 * bilinear otherwise (one side of each, or a side kept). */
static void test_auto_picks_by_size(void **st)
{
    (void)st;
    dlg_mxnet_aug mx = mx_with(9);
    assert_int_equal(dlg_ld_mx_inter(&mx, 1, DLG_MXD_INTER, 100, 80, 224, 224), 2);
    assert_int_equal(dlg_ld_mx_inter(&mx, 1, DLG_MXD_INTER, 500, 375, 298, 224), 3);
    assert_int_equal(dlg_ld_mx_inter(&mx, 1, DLG_MXD_INTER, 300, 200, 224, 224), 1);
    assert_int_equal(dlg_ld_mx_inter(&mx, 1, DLG_MXD_INTER, 224, 300, 224, 256), 1);
    assert_int_equal(dlg_ld_mx_inter(&mx, 1, DLG_MXD_INTER, 224, 224, 224, 224), 1);
    for (int m = 0; m <= 4; m++) { /* the others are themselves */
        mx = mx_with(m);
        assert_int_equal(dlg_ld_mx_inter(&mx, 1, DLG_MXD_INTER, 100, 80, 224, 224), m);
    }
}

/* 10: one of 0..4 by the item's keyed draw: the same key gives the same
 * pick, keys cover all five about equally, and the three stages draw
 * apart. */
static void test_random_is_keyed(void **st)
{
    (void)st;
    dlg_mxnet_aug mx = mx_with(10);
    int count[5] = {0}, differ = 0;
    for (uint64_t key = 0; key < 1000; key++) {
        int m = dlg_ld_mx_inter(&mx, key * 0x9e3779b97f4a7c15ull, DLG_MXD_INTER, 10, 10, 20, 20);
        assert_in_range(m, 0, 4);
        assert_int_equal(dlg_ld_mx_inter(&mx, key * 0x9e3779b97f4a7c15ull, DLG_MXD_INTER, 50, 50,
                                         5, 5),
                         m); /* the sizes do not matter */
        count[m]++;
        differ += dlg_ld_mx_inter(&mx, key * 0x9e3779b97f4a7c15ull, DLG_MXD_INTER + 1, 10, 10,
                                  20, 20) != m;
    }
    for (int m = 0; m < 5; m++)
        assert_in_range(count[m], 140, 260);
    assert_in_range(differ, 700, 900); /* independent draws differ 4 times in 5 */
}

/* The option check takes every MXNet method and refuses the rest. */
static void test_option_accepts_all_methods(void **st)
{
    (void)st;
    static const int ok[] = {0, 1, 2, 3, 4, 9, 10}, bad[] = {5, 8, 11, -1};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.transform = DLG_TRANSFORM_MXNET;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cfg.mx.inter_method = ok[i];
        if (dlg_ld_mx_check(&cfg, &m.host) != 0) {
            print_error("inter_method = %d refused: %s\n", ok[i], m.last_error);
            fail();
        }
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg.mx.inter_method = bad[i];
        assert_int_not_equal(dlg_ld_mx_check(&cfg, &m.host), 0);
        assert_non_null(strstr(m.last_error, "MXNet's are 0 (nearest)"));
    }
    mock_host_fini(&m);
}

/* ---- the loader end to end ----------------------------------------------- */

enum { N_IMG = 8, MAX_CROP = 24 };

/* The first n items (batch 1, inference: no shuffle, no warp) as floats. */
static void items(const char *data, const char *resize, const char *crop, const char *inter,
                  float *out, dlg_loader_config *cfg)
{
    const char *over[] = {data, "transform=mxnet", "pixel_range=255", "mean=0,0,0", "std=1,1,1",
                          resize, crop, inter, NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader *l = pu_loader_open(&m, over, false, cfg);
    size_t per = (size_t)cfg->crop * cfg->crop * 3;
    for (int i = 0; i < N_IMG; i++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < cfg->crop; y++)
                for (int x = 0; x < cfg->crop; x++)
                    out[i * per + ((size_t)c * cfg->crop + y) * cfg->crop + x] =
                        pu_at(cfg, b->data, 0, c, y, x);
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
    mock_host_fini(&m);
}

static bool same_item(const float *a, const float *b, int i, int crop)
{
    size_t per = (size_t)crop * crop * 3;
    return memcmp(a + i * per, b + i * per, per * sizeof *a) == 0;
}

/* inter_method = 9 on 32 x 32 images: resize = 48 grows both sides, so
 * its items are cubic's; resize = 20 shrinks both, so area's (not by 2:
 * there area and bilinear agree); neither is bilinear's. */
static void test_loader_auto(void **st)
{
    (void)st;
    static float got[N_IMG * MAX_CROP * MAX_CROP * 3], want[N_IMG * MAX_CROP * MAX_CROP * 3],
        lin[N_IMG * MAX_CROP * MAX_CROP * 3];
    pu_dataset d;
    pu_make_images(&d, "mxinterp", N_IMG, N_IMG, 32, 32, 11);
    pu_make_rec(&d);
    char data[700];
    snprintf(data, sizeof data, "data=recordio:%s", d.rec);
    static const char *const cases[2][3] = {{"resize=48", "crop=24", "inter_method=2"},
                                            {"resize=20", "crop=16", "inter_method=3"}};
    for (int k = 0; k < 2; k++) {
        dlg_loader_config cfg;
        items(data, cases[k][0], cases[k][1], "inter_method=9", got, &cfg);
        items(data, cases[k][0], cases[k][1], cases[k][2], want, &cfg);
        items(data, cases[k][0], cases[k][1], "inter_method=1", lin, &cfg);
        for (int i = 0; i < N_IMG; i++) {
            if (!same_item(got, want, i, cfg.crop))
                fail_msg("%s, inter_method = 9: item %d is not %s's", cases[k][0], i,
                         cases[k][2]);
            assert_false(same_item(got, lin, i, cfg.crop));
        }
    }
}

/* inter_method = 10: item i's bytes are those of the method its keyed
 * draw picks, and the 8 items take more than one method. */
static void test_loader_random(void **st)
{
    (void)st;
    static float got[N_IMG * MAX_CROP * MAX_CROP * 3], each[5][N_IMG * MAX_CROP * MAX_CROP * 3];
    pu_dataset d;
    pu_make_images(&d, "mxinterp10", N_IMG, N_IMG, 32, 32, 12);
    pu_make_rec(&d);
    char data[700];
    snprintf(data, sizeof data, "data=recordio:%s", d.rec);
    dlg_loader_config cfg;
    items(data, "resize=40", "crop=24", "inter_method=10", got, &cfg);
    for (int m = 0; m < 5; m++) {
        char opt[32];
        snprintf(opt, sizeof opt, "inter_method=%d", m);
        items(data, "resize=40", "crop=24", opt, each[m], &cfg);
    }
    int seen = 0;
    for (int i = 0; i < N_IMG; i++) {
        dlg_mxnet_aug mx = cfg.mx;
        mx.inter_method = 10;
        int m = dlg_ld_mx_inter(&mx, dlg_ld_item_key(&cfg, 0, (uint64_t)i), DLG_MXD_INTER, 32, 32,
                                40, 40);
        seen |= 1 << m;
        if (!same_item(got, each[m], i, cfg.crop))
            fail_msg("inter_method = 10: item %d is not method %d's", i, m);
    }
    assert_true(seen & (seen - 1)); /* two methods at least */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_known_answers),
        cmocka_unit_test(test_warp_known_answers),
        cmocka_unit_test(test_constant_stays_constant),
        cmocka_unit_test(test_area_whole_factors),
        cmocka_unit_test(test_auto_picks_by_size),
        cmocka_unit_test(test_random_is_keyed),
        cmocka_unit_test(test_option_accepts_all_methods),
        cmocka_unit_test(test_loader_auto),
        cmocka_unit_test(test_loader_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
