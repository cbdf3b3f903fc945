/* What the resize/warp known answers share: the source pattern cv2's
 * bytes were made from, and OpenCV's method m (cv::INTER_*) as the warp's
 * interp code. */
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

#endif
