/* One affine warp of a packed 8-bit RGB image, as OpenCV's warpAffine and
 * cv::resize compute it (pixel centres at integer coordinates, bilinear or
 * nearest), and the matrices MXNet's default augmenter builds for it.
 * Written by hand: OpenCV is no dependency of dlgauge. */
#ifndef DLG_LOADER_AFFINE_H
#define DLG_LOADER_AFFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A 2x3 map: x' = m[0] x + m[1] y + m[2], y' = m[3] x + m[4] y + m[5]. */
typedef struct dlg_affine {
    double m[6];
} dlg_affine;

/* Packed RGB, 3 bytes a pixel, `stride` bytes from row to row: a whole
 * buffer or a view into one (a crop). */
typedef struct dlg_rgb8 {
    uint8_t *px;
    int w, h;
    size_t stride;
} dlg_rgb8;

/* How a warp samples: the nearest source pixel, or bilinear with the
 * source coordinate rounded to 1/2^bits of a pixel and integer weights,
 * as OpenCV does: warpAffine to 1/32 (INTER_BITS 5), cv::resize to 1/2048
 * (INTER_RESIZE_COEF_BITS 11). */
enum { DLG_WARP_NEAREST = 0, DLG_WARP_AFFINE_BITS = 5, DLG_WARP_RESIZE_BITS = 11 };

/* OpenCV's other interpolations, in its fixed point (loader_interp.h):
 * INTER_CUBIC (a = -0.75, 4 x 4 taps), INTER_LANCZOS4 (8 x 8) and
 * INTER_AREA, which warpAffine treats as bilinear. */
enum { DLG_WARP_CUBIC = 100, DLG_WARP_LANCZOS4 = 101, DLG_WARP_AREA = 102 };

/* dst(x, y) = src(inv(x, y)) for every pixel of dst: inv maps output pixel
 * centres to source coordinates.  A tap outside src takes `fill` (fill >=
 * 0: cv::BORDER_CONSTANT, warpAffine's border) or the nearest edge pixel
 * (fill < 0: BORDER_REPLICATE, which is what cv::resize's clamping gives).
 * interp: DLG_WARP_NEAREST, the bilinear coordinate bits (above) or one
 * of OpenCV's other methods (their coordinate is warpAffine's, in 1/32);
 * the result is rounded to the nearest level.  Every output pixel is
 * computed.
 * With a constant border, every method is cv::warpAffine's own fixed
 * point (coordinates rounded to 1/1024 pixel per column and per row, then
 * to 1/32, or to the nearest pixel for DLG_WARP_NEAREST): its bytes are
 * OpenCV's. */
void dlg_warp_rgb(const dlg_rgb8 *src, const dlg_rgb8 *dst, const dlg_affine *inv, int fill,
                  int interp);

/* What the warp's loops run with (for benchmarks): the constant-border
 * warp's inside runs (bilinear 1/32 and nearest) and lanczos4's inside
 * pixels go through AVX2 where the CPU has it ("avx2 (dispatched)"),
 * cubic's through SSE2, everything else is scalar C. */
const char *dlg_warp_isa(void);

/* The inverse map, as cv::invertAffineTransform (a singular map gives 0s). */
void dlg_affine_invert(const dlg_affine *fwd, dlg_affine *inv);

/* cv::resize's bilinear map from an nw x nh output to a w x h source:
 * sx = (x + 0.5) w / nw - 0.5 (the same in y). */
void dlg_affine_resize(int w, int h, int nw, int nh, dlg_affine *inv);

/* cv::resize of src to dst's size, its bytes.  interp DLG_WARP_NEAREST:
 * INTER_NEAREST, which takes source column floor(x * (1 / (nw / w))) in
 * double (resizeNN; no pixel centres), row likewise, each at most the
 * last; DLG_WARP_RESIZE_BITS (INTER_LINEAR), DLG_WARP_CUBIC, _LANCZOS4,
 * _AREA: cv::resize's own fixed point (loader_interp.h). */
void dlg_resize_rgb(const dlg_rgb8 *src, const dlg_rgb8 *dst, int interp);

/* MXNet's augmenter matrix (image_aug_default.cc, in its float arithmetic)
 * for shear s, a whole angle in degrees, scale and aspect ratio on a w x h
 * image: the forward map (source to output) and the output size
 * (int)(scale * w) x (int)(scale * h); the image's centre goes to the
 * output's. */
void dlg_mx_affine(float shear, int angle, float scale, float ratio, int w, int h,
                   dlg_affine *fwd, int *nw, int *nh);
/* The same with MXNet's min_img_size / max_img_size: each output side is
 * max(min_size, min(max_size, scale * side)) before the truncation, and
 * the centre goes to that canvas's centre (no rescale: dlg_mx_affine is
 * min_size 0, max_size 1e10, MXNet's defaults). */
void dlg_mx_affine_sized(float shear, int angle, float scale, float ratio, int w, int h,
                         float min_size, float max_size, dlg_affine *fwd, int *nw, int *nh);

#endif
