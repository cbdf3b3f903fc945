/* MXNet's colour augmentation (random_h, random_s, random_l): each pixel
 * converted to HLS as OpenCV's cvtColor(BGR2HLS) defines it, shifted,
 * clamped, and converted back (HLS2BGR).  Units are OpenCV's for 8-bit
 * images: H in 0..180 (two degrees a unit; 180 is 0 again), L and S in
 * 0..255; RGB in 0..255.  The HLS values stay in float between the two
 * conversions (OpenCV rounds them to bytes, which alone moves a saturated
 * colour by up to 4 levels), so a zero shift gives back the input. */
#ifndef DLG_LOADER_HLS_H
#define DLG_LOADER_HLS_H

#include <stdint.h>

void dlg_rgb_to_hls(float r, float g, float b, float hls[3]);
void dlg_hls_to_rgb(float h, float l, float s, float rgb[3]);

/* n packed RGB pixels (bytes) to n float RGB pixels: HLS, plus shift
 * (dh, dl, ds) clamped to H 0..180, L and S 0..255, back to RGB rounded to
 * whole levels (MXNet's result is bytes again). */
void dlg_hls_jitter_row(const uint8_t *rgb, int n, const int shift[3], float *out);

#endif
