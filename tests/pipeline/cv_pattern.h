/* What the resize/warp known answers share: the source pattern cv2's
 * bytes were made from, OpenCV's method m (cv::INTER_*) as the warp's
 * interp code and its name, and the byte check.  Include after cmocka.h. */
#ifndef DLG_TEST_CV_PATTERN_H
#define DLG_TEST_CV_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader_affine.h"

static inline void cv_pattern(uint8_t *px, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                px[((size_t)y * w + x) * 3 + c] = (uint8_t)((x * 67 + y * 131 + c * 29 + x * y * 13) % 256);
}

static inline int cv_interp_code(int m, bool warp)
{
    static const int c[5] = {DLG_WARP_NEAREST, DLG_WARP_RESIZE_BITS, DLG_WARP_CUBIC, DLG_WARP_AREA,
                             DLG_WARP_LANCZOS4};
    return warp && m == 1 ? DLG_WARP_AFFINE_BITS : c[m];
}

static const char *const cv_method_names[5] = {"nearest", "bilinear", "cubic", "area", "lanczos4"};

/* The first differing byte, reported with the method and case. */
static inline void cv_same_bytes(const uint8_t *got, const uint8_t *want, size_t n, const char *what, int m)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            print_error("%s %s: byte %zu is %d, OpenCV's %d\n", what, cv_method_names[m], i, got[i], want[i]);
            fail();
        }
}

#endif
