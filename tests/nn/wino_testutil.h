/* Random buffers and error tracking shared by the Winograd kernel tests
 * (test_nn_winograd.c, test_nn_wino1d.c): error = max |got - ref| /
 * max |ref| per tensor.  Include after cmocka.h. */
#ifndef DLG_TESTS_WINO_TESTUTIL_H
#define DLG_TESTS_WINO_TESTUTIL_H

#include <math.h>
#include <stdlib.h>

/* n floats in [-scale/2, scale/2), 64-byte aligned (free()) */
static inline float *randoms(size_t n, unsigned *seed, float scale)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = scale * ((float)rand_r(seed) / (float)RAND_MAX - 0.5f);
    return p;
}

typedef struct err {
    double d, m;
} err;

static inline void track(err *e, double ref, double got)
{
    e->d = fmax(e->d, fabs(ref - got));
    e->m = fmax(e->m, fabs(ref));
}

static inline double rel(const err *e) { return e->d / fmax(e->m, 1e-6); }

#endif
