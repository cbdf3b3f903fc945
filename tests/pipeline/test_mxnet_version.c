/* transform = mxnet follows MXNet 1.3+'s default augmenter (the newest 1.x
 * checked: image_aug_default.cc of 1.3.0 and of a later upstream copy with
 * OpenCV 4's names are the same here) where older versions differ:
 * - the HLS shift of each channel draws u = (u1 + 4 u2) / 5 in float (its
 *   "approximation of gaussian"), not one uniform (up to 1.2);
 * - an image smaller than the crop on the plain crop path is enlarged to
 *   it (cv::resize, height then width, each in proportion, one method
 *   picked from the image's size to the crop's), not refused (up to 1.2).
 * Known answers: shifts for fixed keys (the float arithmetic redone by
 * hand), and enlarged bytes against cv2.resize (OpenCV 4.6, Debian's
 * python3-opencv) kept as constants. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "loader_work.h"
#include "cv_pattern.h"

/* keys 1 and 42 with random_h 36, random_l 50, random_s 50: u1 and u2 are
 * the keyed uniforms DLG_MXD_H/L/S and DLG_MXD_HLS2 + 0/2/1; the old single
 * draw gave (-8, 46, 5) and (0, -22, 7). */
static void test_hls_shift_known(void **st)
{
    (void)st;
    static const struct {
        uint64_t key;
        int want[3]; /* H, L, S */
    } k[] = {{1, {8, -10, -36}}, {42, {23, -39, 23}}, {0x9e3779b97f4a7c15ull, {-14, -19, 11}}};
    dlg_mxnet_aug mx;
    dlg_ld_mx_defaults(&mx);
    mx.random_h = 36;
    mx.random_l = 50;
    mx.random_s = 50;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        int got[3];
        dlg_ld_mx_hls_shift(&mx, k[i].key, got);
        if (memcmp(got, k[i].want, sizeof got) != 0)
            fail_msg("key %zu: shift (%d,%d,%d), want (%d,%d,%d)", i, got[0], got[1], got[2],
                     k[i].want[0], k[i].want[1], k[i].want[2]);
    }
    /* a channel left at 0 stays 0; v = 1 gives -1, 0 or 1, 0 most often
     * (the int truncates towards 0, and u clusters near its middle) */
    dlg_ld_mx_defaults(&mx);
    mx.random_h = 1;
    int zero = 0, n = 2000;
    for (int key = 0; key < n; key++) {
        int s[3];
        dlg_ld_mx_hls_shift(&mx, (uint64_t)key, s);
        assert_true(s[0] >= -1 && s[0] <= 1);
        assert_int_equal(s[1], 0);
        assert_int_equal(s[2], 0);
        zero += s[0] == 0;
    }
    assert_true(zero > n / 2);
}

/* cv2.resize(pattern 7x5, (12, 9), INTER_LINEAR): crop 9, inter_method 1;
 * 12 = int(9.f / 5 * 7). */
static const uint8_t enlarge_7x5_linear[324] = {
      0,  29,  58,  25,  54,  83,  64,  93, 122, 103, 132, 161, 142, 171, 168, 181, 210,  58,
    146, 175,  23,  35,  65,  61,  42,  72, 101,  82, 111, 140, 121, 150, 179, 146, 175, 204,
     44,  73, 102,  70,  99,  96, 112, 141,  88, 107, 136, 126, 110, 139, 146, 151, 180,  88,
    143, 172,  80,  85, 114, 122,  66,  96, 124,  62,  91, 120, 104, 132, 161, 130, 159, 188,
    116, 145, 174, 146, 175, 119, 192, 221,  32, 114, 143,  68,  56,  85, 110, 101, 130, 139,
    139, 168, 177, 168, 197, 223, 106, 135, 164,  29,  58,  87,  75, 104, 133, 104, 133, 162,
     75, 104, 133, 107, 137, 112, 158, 187,  79, 131, 160, 123, 101, 130, 159,  85, 114, 143,
    102, 131, 160, 152, 181, 210, 137, 166, 142, 105, 134,  54,  89, 117, 104,  78, 107, 136,
      6,  35,  64,  41,  70,  99,  95, 124, 153, 149, 178, 207, 172, 201, 230,  77, 106, 135,
     56,  85, 114, 110, 139, 168, 165, 194, 105, 208, 237,  21, 113, 142,  75,  52,  81, 110,
     79, 108, 137, 116,  92, 121, 175,  67,  96, 156, 120, 149, 135, 164, 175, 127, 156,  85,
    111, 140,  68,  87, 116, 127, 127, 156, 133, 175, 204, 124,  84, 113, 100,  26,  55,  84,
    123, 152, 181, 163, 107, 136, 226,  37,  66, 166,  75, 104, 120, 124, 125, 166, 187,  55,
    154, 175,  43,  84,  88,  89, 105, 119, 148, 143, 172, 200,  73, 102, 113,  28,  57,  58,
     53,  83, 112,  96,  94, 123, 164, 111, 140, 184,  81, 111, 190,  70,  89, 158, 137, 106,
    150, 129,  98, 167,  47,  65, 145,  82, 111, 116, 145, 167, 133, 162,  85, 144, 173,  32,
     12,  41,  70,  57,  86, 114, 126, 155, 184, 195,  86, 115, 233,  38,  67, 153, 107, 136,
    148, 102, 131, 217,  22,  51, 169,  59,  88, 100, 129, 147, 169, 198,  67, 214, 243,  16,
};
/* cv2.resize(cv2.resize(pattern 4x6, (6, 9), INTER_CUBIC), (9, 13),
 * INTER_CUBIC): crop 9, inter_method 9 (both sides of 4x6 grow to 9x9:
 * cubic, for both steps); 6 = int(9.f / 6 * 4), 13 = int(9.f / 6 * 9). */
static const uint8_t enlarge_4x6_cubic[351] = {
      0,   2,  26,   0,  13,  50,  13,  43,  99,  52,  81, 148,  98, 127, 209, 143, 172, 208,
    180, 209, 127, 209, 238,  35, 220, 249,   0,  31,  52,  90,  46,  71,  86,  75, 104,  88,
    101, 130,  98, 101, 129, 143, 103, 132, 162, 137, 166, 122, 179, 209,  69, 204, 233,  36,
     86, 116, 174, 118, 148, 134, 156, 186,  75, 169, 198,  38, 112, 141,  60,  59,  88, 108,
     79, 108, 124, 125, 154, 128, 162, 191, 123, 112, 140, 205, 149, 178, 153, 190, 222,  73,
    200, 232,  21, 129, 160,  37,  52,  81,  97,  52,  80, 135,  81, 109, 170, 109, 138, 185,
     39,  63, 111,  65, 102, 103, 107, 162,  98, 141, 204, 107, 155, 204, 148, 135, 163, 184,
     96, 120, 180,  49,  75, 161,  22,  52, 144,   4,  36,  66,  25,  48,  78,  70,  82, 112,
    116, 124, 154, 172, 194, 225, 183, 220, 249, 136, 174, 195,  65,  98, 110,  18,  46,  52,
     58, 109, 134,  89,  82, 116, 137,  55, 102, 172,  54, 108, 171, 122, 182, 145, 189, 222,
    130, 188, 160, 116, 161,  60, 110, 134,   0, 110, 175, 203, 152, 126, 157, 205,  57,  94,
    228,  18,  59, 170,  50, 112, 108, 125, 159, 124, 173, 112, 167, 213,  32, 202, 229,   0,
     72, 126, 156, 117, 115, 143, 182,  92, 119, 224,  69,  97, 199,  39,  87, 156,  50,  83,
    161, 112,  76, 181, 195,  70, 199, 245,  67,   1,  31,  60,  32,  72, 101,  95, 123, 152,
    157, 146, 176, 221,  83, 116, 238,  26,  56, 206,  60,  80, 151, 127, 133, 112, 176, 174,
     39,  64,  93,  41,  88, 117,  60, 119, 148,  96, 133, 162, 180, 102, 129, 227,  68,  96,
    187,  75, 111, 113,  97, 142,  58, 115, 166, 123, 149, 178,  88, 126, 155,  47,  95, 124,
     37,  81, 109, 112, 114, 140, 175, 143, 172, 139, 121, 157,  68,  81, 127,  14,  52, 104,
    184, 214, 243, 128, 154, 183,  51,  76, 105,   9,  37,  66,  66, 116, 145, 131, 195, 224,
    102, 159, 187,  43,  81, 108,   0,  22,  49,
};

static void check_enlarge(int w, int h, int method, const uint8_t *want, int ww, int wh)
{
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.transform = DLG_TRANSFORM_MXNET;
    dlg_ld_mx_defaults(&cfg.mx);
    cfg.mx.inter_method = method;
    cfg.crop = 9;
    dlg_ld_scratch sc;
    dlg_data_err err = {0};
    assert_int_equal(dlg_ld_scratch_init(&sc, cfg.crop, &err), 0);
    uint8_t src[7 * 6 * 3];
    cv_pattern(src, w, h);
    dlg_rgb8 img = {src, w, h, (size_t)w * 3};
    assert_int_equal(dlg_ld_mx_enlarge(&cfg, &sc, 7, &img, "test", &err), 0);
    assert_int_equal(img.w, ww);
    assert_int_equal(img.h, wh);
    for (int y = 0; y < wh; y++)
        for (int i = 0; i < ww * 3; i++)
            if (img.px[(size_t)y * img.stride + i] != want[y * ww * 3 + i])
                fail_msg("%dx%d, method %d: (%d,%d,%d) is %d, cv2 gives %d", w, h, method, i / 3,
                         y, i % 3, img.px[(size_t)y * img.stride + i], want[y * ww * 3 + i]);
    dlg_ld_scratch_free(&sc);
}

static void test_enlarge_bytes(void **st)
{
    (void)st;
    check_enlarge(7, 5, 1, enlarge_7x5_linear, 12, 9);
    check_enlarge(4, 6, 9, enlarge_4x6_cubic, 9, 13);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hls_shift_known),
        cmocka_unit_test(test_enlarge_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
