/* STREAM kernels and their validation: see stream_kernels.h. */
#include "stream_kernels.h"

#include <math.h>

const char *stream_kernel_name(int k)
{
    static const char *const names[STREAM_NKERNELS] = {"copy", "scale", "add", "triad"};
    return k >= 0 && k < STREAM_NKERNELS ? names[k] : "?";
}

uint64_t stream_kernel_bytes(int k, size_t n)
{
    uint64_t arrays = k == STREAM_ADD || k == STREAM_TRIAD ? 3 : 2;
    return arrays * (uint64_t)n * sizeof(double);
}

void stream_fill(double *a, double *b, double *c, size_t lo, size_t hi)
{
    for (size_t j = lo; j < hi; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
}

/* restrict lets the compiler vectorise: the three arrays never overlap. */
static void copy(double *restrict c, const double *restrict a, size_t lo, size_t hi)
{
    for (size_t j = lo; j < hi; j++)
        c[j] = a[j];
}

static void scale(double *restrict b, const double *restrict c, size_t lo, size_t hi)
{
    for (size_t j = lo; j < hi; j++)
        b[j] = STREAM_SCALAR * c[j];
}

static void add(double *restrict c, const double *restrict a, const double *restrict b, size_t lo,
                size_t hi)
{
    for (size_t j = lo; j < hi; j++)
        c[j] = a[j] + b[j];
}

static void triad(double *restrict a, const double *restrict b, const double *restrict c,
                  size_t lo, size_t hi)
{
    for (size_t j = lo; j < hi; j++)
        a[j] = b[j] + STREAM_SCALAR * c[j];
}

void stream_kernel_run(int k, double *a, double *b, double *c, size_t lo, size_t hi)
{
    switch (k) {
    case STREAM_COPY: copy(c, a, lo, hi); break;
    case STREAM_SCALE: scale(b, c, lo, hi); break;
    case STREAM_ADD: add(c, a, b, lo, hi); break;
    case STREAM_TRIAD: triad(a, b, c, lo, hi); break;
    default: break;
    }
}

void stream_expect_init(stream_expect *e)
{
    e->a = 1.0;
    e->b = 2.0;
    e->c = 0.0;
}

void stream_expect_step(stream_expect *e, int k)
{
    switch (k) {
    case STREAM_COPY: e->c = e->a; break;
    case STREAM_SCALE: e->b = STREAM_SCALAR * e->c; break;
    case STREAM_ADD: e->c = e->a + e->b; break;
    case STREAM_TRIAD: e->a = e->b + STREAM_SCALAR * e->c; break;
    default: break;
    }
}

void stream_error(const double *x, size_t lo, size_t hi, double want, double *abs_sum, uint64_t *bad)
{
    double sum = 0.0, tol = STREAM_EPSILON * (want != 0.0 ? fabs(want) : 1.0);
    uint64_t off = 0;
    for (size_t j = lo; j < hi; j++) {
        double d = fabs(x[j] - want);
        sum += d;
        off += !(d <= tol); /* NaN counts as wrong */
    }
    *abs_sum = sum;
    *bad = off;
}

double stream_rel_error(double abs_sum, size_t n, double want)
{
    if (n == 0)
        return 0.0;
    double avg = abs_sum / (double)n;
    return want != 0.0 ? avg / fabs(want) : avg;
}
