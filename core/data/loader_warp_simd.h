/* The vector kernels of the warpAffine-exact warps (loader_affine.c): one
 * output row's run whose taps all lie inside the source, bilinear or
 * nearest, and lanczos4's taps of one pixel.  Private to core/data. */
#ifndef DLG_LOADER_WARP_SIMD_H
#define DLG_LOADER_WARP_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One row of a column strip: source coordinate of strip column x in 1/32
 * pixel is ((xr + a[x]) >> 5, (yr + b[x]) >> 5), as cv::warpAffine's
 * (nearest: in whole pixels, (xr + a[x]) >> 10).
 * px + off (off = iy * stride + 3 ix) fits int32 for every tap. */
typedef struct dlg_warp_row {
    const uint8_t *px;
    int32_t stride;
    const int32_t *a, *b;
    int32_t xr, yr;
} dlg_warp_row;

/* Whether this CPU runs dlg_warp_run_avx2 (always false off x86-64/GCC). */
bool dlg_warp_have_avx2(void);

/* Outputs [xa, xb) of the row into out (3 bytes a pixel, out[0] is strip
 * column 0); returns the first column it left undone (fewer than 8 remain,
 * for the scalar loop). */
int dlg_warp_run_avx2(const dlg_warp_row *r, uint8_t *out, int xa, int xb);

/* cv::warpAffine's nearest (terms in 1/1024, xr and yr holding the half
 * pixel) for outputs [x, n) of the row of a w x h src, 8 at a time while
 * a block's taps all lie inside; returns the first output it left undone
 * (for the scalar loop: 8 of them, then this again). */
int dlg_warp_nearest_avx2(const dlg_warp_row *r, int32_t w, int32_t h, uint8_t *out, int x, int n);

/* Lanczos4's 8 x 8 taps at p (rows stride apart, 24 bytes each, all
 * inside src) times the weights w (8 rows of 8): sum[c] = sum over taps
 * of byte c times its weight, as the scalar loop's int sums. */
void dlg_lanczos4_avx2(const uint8_t *p, size_t stride, const int16_t *w, int32_t sum[3]);

#endif
