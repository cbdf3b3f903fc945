/* Kernels of the channels-last (NHWC) half storage (cuda_nhwc_kernels.cu):
 * layout conversions and the NHWC variants of the own pooling and bias
 * kernels.  Plain C prototypes, 0 = launched (a cudaError_t otherwise). */
#ifndef DLG_NN_CUDA_NHWC_KERNELS_H
#define DLG_NN_CUDA_NHWC_KERNELS_H

#include "cuda_kernels.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[m][j][i] = x[m][i][j] for m < n, i < a, j < b, converting between fp32
 * and the 16-bit type ht (src_half/dst_half say which side is 16-bit).
 * NCHW -> NHWC: a = C, b = H*W; NHWC -> NCHW: a = H*W, b = C.  Conv
 * weights OIHW -> OHWI: n = O, a = I/groups, b = kh*kw.  Any n, a and b:
 * the grid's y and z dimensions loop where a / 32 or n pass 65535. */
int dlg_cuk_transpose(dlg_cu_stream s, dlg_cuk_htype ht, bool src_half, bool dst_half,
                      const void *x, void *y, int64_t n, int64_t a, int64_t b);
/* The same with grid y and z capped at max_gy and max_gz (>= 1) instead of
 * the hardware's 65535, so that the kernel tests take those loops with a
 * tensor small enough for the emulator. */
int dlg_cuk_transpose_grid(dlg_cu_stream s, dlg_cuk_htype ht, bool src_half, bool dst_half,
                           const void *x, void *y, int64_t n, int64_t a, int64_t b,
                           int64_t max_gy, int64_t max_gz);

/* Caffe pooling on NHWC half tensors (the windows, divisor and argmax
 * rule of dlg_cuk_pool_fwd_h); p->nc = N*C, c = C.  The mask holds h*W + w
 * of the winner per output element, in the output's (NHWC) order. */
int dlg_cuk_pool_fwd_nhwc_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_cuk_pool *p, int64_t c,
                            const dlg_half *x, dlg_half *y, int *mask);
int dlg_cuk_pool_bwd_nhwc_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_cuk_pool *p, int64_t c,
                            const dlg_half *dy, const int *mask, dlg_half *dx);

/* db[c] = sum over rows r of dy[r*C + c] (overwrites db); rows = N*H*W */
int dlg_cuk_bias_grad_nhwc_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *dy, float *db,
                             int64_t rows, int64_t c);

#ifdef __cplusplus
}
#endif
#endif
