/* INTER_AREA's exact 2 x 2 shrink in AVX2 (loader_area_avx2.c), picked at
 * run time by loader_area.c with dlg_warp_have_avx2.  Private to core/data. */
#ifndef DLG_LOADER_AREA_SIMD_H
#define DLG_LOADER_AREA_SIMD_H

#include <stdint.h>

/* Outputs [0, n) of one RGB output row from source rows r0 and r1 (6 n
 * bytes each, none read past): out byte i = (the four bytes of its 2 x 2
 * block summed + 2) >> 2, OpenCV's own 2 x 2 loop.  Returns the count
 * done: n, or 0 when n < 8 (the scalar loop's then). */
int dlg_area_half_avx2(const uint8_t *r0, const uint8_t *r1, uint8_t *out, int n);

#endif
