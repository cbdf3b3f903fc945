/* The four STREAM kernels (McCalpin) on a slice [lo, hi) of the arrays,
 * the scalar recurrence that predicts their results, and the check. */
#ifndef DLG_DIAG_STREAM_KERNELS_H
#define DLG_DIAG_STREAM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

enum stream_kernel { STREAM_COPY, STREAM_SCALE, STREAM_ADD, STREAM_TRIAD, STREAM_NKERNELS };

/* STREAM uses 3.0; any value works for bandwidth.  sqrt(2)-1 makes one
 * copy,scale,add,triad round multiply the values by s(2+s) = 1, so they
 * neither overflow nor underflow however many steps the runner takes. */
#define STREAM_SCALAR 0.41421356237309503
/* STREAM's tolerance for 8-byte reals: average relative error per array. */
#define STREAM_EPSILON 1e-13

const char *stream_kernel_name(int k);
/* Bytes STREAM counts for one pass over n elements: copy and scale touch
 * 2 arrays, add and triad 3. */
uint64_t stream_kernel_bytes(int k, size_t n);

void stream_fill(double *a, double *b, double *c, size_t lo, size_t hi); /* 1, 2, 0 */
void stream_kernel_run(int k, double *a, double *b, double *c, size_t lo, size_t hi);

/* The value every element of a, b, c holds: all elements see the same
 * operations, so one scalar per array predicts the whole array. */
typedef struct stream_expect {
    double a, b, c;
} stream_expect;
void stream_expect_init(stream_expect *e);
void stream_expect_step(stream_expect *e, int k);

/* Over x[lo, hi): the sum of |x - want| and how many elements are off by
 * more than STREAM_EPSILON relative. */
void stream_error(const double *x, size_t lo, size_t hi, double want, double *abs_sum, uint64_t *bad);
/* Average relative error of an array of n elements given its error sum. */
double stream_rel_error(double abs_sum, size_t n, double want);

#endif
