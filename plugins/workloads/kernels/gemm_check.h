/* Known answer for gemm: sampled entries of C against a double-precision
 * reference product of the same A and B. */
#ifndef DLG_KERNELS_GEMM_CHECK_H
#define DLG_KERNELS_GEMM_CHECK_H

#include <stdbool.h>
#include <stdint.h>

/* Row-major C = op(A) op(B) as dnnl_sgemm computes it (ta, tb: 'N' or 'T'). */
typedef struct gemm_operands {
    char ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    const float *a, *b, *c;
} gemm_operands;

#define GEMM_CHECK_SAMPLES 64

/* Largest |C[i][j] - exact| over GEMM_CHECK_SAMPLES entries (the corners
 * among them); *ok is false when one is beyond fp32 rounding of its dot
 * product, at *bad_i, *bad_j. */
double gemm_check(const gemm_operands *g, bool *ok, int64_t *bad_i, int64_t *bad_j);

#endif
