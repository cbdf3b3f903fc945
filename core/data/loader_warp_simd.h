/* The vector kernel of the warpAffine-exact warp (loader_affine.c): one
 * output row's run whose taps all lie inside the source.  Private to
 * core/data. */
#ifndef DLG_LOADER_WARP_SIMD_H
#define DLG_LOADER_WARP_SIMD_H

#include <stdbool.h>
#include <stdint.h>

/* One row of a column strip: source coordinate of strip column x in 1/32
 * pixel is ((xr + a[x]) >> 5, (yr + b[x]) >> 5), as cv::warpAffine's.
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

#endif
