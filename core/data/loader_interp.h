/* cv::resize and cv::warpAffine's other interpolations on packed 8-bit RGB
 * (loader_affine.h's DLG_WARP_CUBIC, _LANCZOS4, _AREA), in OpenCV's own
 * fixed point so that the bytes are OpenCV's.  Private to core/data: the
 * callers go through dlg_warp_rgb and dlg_resize_rgb. */
#ifndef DLG_LOADER_INTERP_H
#define DLG_LOADER_INTERP_H

#include "loader_affine.h"

#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* a + b as OpenCV's int sums of coordinates wrap on absurd maps (its
 * int32 overflow), computed without C's signed overflow. */
static inline int32_t dlg_wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* cvRound of a float: to nearest, ties to even (the FPU's mode), inline
 * (lrintf is a libm call at -O2). */
static inline int32_t dlg_round_even(float v)
{
#if defined(__SSE2__)
    return _mm_cvtss_si32(_mm_set_ss(v));
#else
    return (int32_t)lrintf(v);
#endif
}

/* OpenCV's interpolation weights of the fraction x in [0, 1): ksize 4 is
 * cubic (a = -0.75), 8 is lanczos4; in float, as interpolateCubic and
 * interpolateLanczos4 compute them. */
void dlg_interp_coeffs(float x, int ksize, float *c);

/* cv::warpAffine with INTER_CUBIC (ksize 4) or INTER_LANCZOS4 (ksize 8):
 * the source coordinate in 1/32 pixel as for bilinear, the ksize x ksize
 * taps weighted by OpenCV's 2-D table (1/32768, summing to one exactly),
 * taps outside src take fill (fill >= 0) or the nearest edge pixel. */
void dlg_warp_taps(const dlg_rgb8 *src, const dlg_rgb8 *dst, const dlg_affine *inv, int fill,
                   int ksize);

/* cv::resize with INTER_CUBIC (ksize 4) or INTER_LANCZOS4 (ksize 8):
 * separable, weights in 1/2048, edges replicated. */
void dlg_resize_taps(const dlg_rgb8 *src, const dlg_rgb8 *dst, int ksize);

/* cv::resize with INTER_LINEAR (area false) or, where a side grows,
 * INTER_AREA (area true: OpenCV's area-shaped fraction): weights in
 * 1/2048, edges replicated, rows blended as OpenCV's vector loop rounds. */
void dlg_resize_linear(const dlg_rgb8 *src, const dlg_rgb8 *dst, bool area);

/* cv::resize with INTER_AREA: the block mean at an integer shrink, the
 * exact area weights (in float) at any other shrink, and OpenCV's
 * area-shaped bilinear when either side grows. */
void dlg_resize_area(const dlg_rgb8 *src, const dlg_rgb8 *dst);

#endif
