/* MXNet's colour augmentation (random_h, random_s, random_l): each pixel
 * converted to HLS by OpenCV's cvtColor(BGR2HLS) on 8-bit images, shifted,
 * clamped, and converted back (HLS2BGR).  Units are OpenCV's for 8-bit
 * images: H in 0..180 (two degrees a unit; 180 is 0 again), L and S in
 * 0..255, all whole bytes, as OpenCV stores them between the two
 * conversions (so even a zero shift moves a saturated colour by a few
 * levels, in MXNet too).  The float arithmetic is OpenCV 4's
 * (color_hsv.simd.hpp), operation for operation: its vector loop, and its
 * scalar loop for the tail of each 256-pixel block of a row, as cvtColor
 * converts a crop row by row; so results are OpenCV's bytes for rows of any
 * width (scripts/bench/augment-vs-opencv.sh compares them with cv2's). */
#ifndef DLG_LOADER_HLS_H
#define DLG_LOADER_HLS_H

#include <stdint.h>

/* n packed pixels, one row of an image: RGB bytes to HLS bytes (cvtColor
 * RGB2HLS) and back (HLS2RGB; an H past 180 wraps, as OpenCV's sectors
 * do). */
void dlg_rgb_to_hls8(const uint8_t *rgb, int n, uint8_t *hls);
void dlg_hls8_to_rgb(const uint8_t *hls, int n, uint8_t *rgb);

/* One row of n packed RGB pixels (bytes) to n float RGB pixels: HLS, plus shift
 * (dh, dl, ds) clamped to H 0..180, L and S 0..255, back to RGB (MXNet's
 * result is bytes again, so every value is a whole level). */
void dlg_hls_jitter_row(const uint8_t *rgb, int n, const int shift[3], float *out);

/* The instruction set the conversions run with here ("avx2", "sse2"...). */
const char *dlg_hls_isa(void);

#endif
