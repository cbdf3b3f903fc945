/* The one-dimensional Winograd kernels (core/nn/cpu/cpu_wino1d.c: F(3,7)
 * for 1x7 / 7x1 filters, F(4,3) for 1x3 / 3x1) against direct convolution
 * in double, on random data drawn fresh each run: forward with bias,
 * residual and ReLU, backward data and backward weights, along either
 * axis, with the padding that keeps the size and with none, partial strips
 * at the line ends and passes of a few images.  Error = max |wino - ref| /
 * max |ref| per tensor, < 1e-4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wino_testutil.h"

#include "cpu/cpu_wino1d.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct bufs {
    float *x, *w, *b, *res, *y, *dy, *dx, *dw;
    void *ws;
} bufs;

typedef struct dims {
    int64_t oh, ow;
} dims;

static dims out_of(const wino1d_shape *s)
{
    dims d;
    wino1d_out(s, &d.oh, &d.ow);
    return d;
}

/* nChw8c offset of (n, c, y, x) in a tensor of nc channels of h x w */
static size_t act(int64_t nc, int64_t h, int64_t w, int64_t n, int64_t c, int64_t y, int64_t x)
{
    return (size_t)((((n * (nc / 8) + c / 8) * h + y) * w + x) * 8 + c % 8);
}

/* ABcd8b8a offset of tap j of filter (k, c) */
static size_t wgt(const wino1d_shape *s, int64_t k, int64_t c, int j)
{
    return (size_t)((((k / 8) * (s->c / 8) + c / 8) * s->r + j) * 64 + (c % 8) * 8 + k % 8);
}

/* the input pixel tap j of output (y, x) reads; false outside (padding) */
static bool tap(const wino1d_shape *s, int64_t y, int64_t x, int j, int64_t *iy, int64_t *ix)
{
    *iy = s->axis ? y : y + j - s->pad;
    *ix = s->axis ? x + j - s->pad : x;
    return *iy >= 0 && *ix >= 0 && *iy < s->h && *ix < s->w;
}


static double check_forward(const wino1d_shape *s, const bufs *b, bool res, bool relu)
{
    dims o = out_of(s);
    wino1d_forward(s, b->x, b->w, b->b, res ? b->res : NULL, relu, b->y, b->ws);
    err e = {0, 0};
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t k = 0; k < s->k; k++)
            for (int64_t y = 0; y < o.oh; y++)
                for (int64_t x = 0; x < o.ow; x++) {
                    double a = b->b[k];
                    for (int64_t c = 0; c < s->c; c++)
                        for (int j = 0; j < s->r; j++) {
                            int64_t iy, ix;
                            if (tap(s, y, x, j, &iy, &ix))
                                a += (double)b->w[wgt(s, k, c, j)] *
                                     b->x[act(s->c, s->h, s->w, n, c, iy, ix)];
                        }
                    size_t at = act(s->k, o.oh, o.ow, n, k, y, x);
                    if (res)
                        a += b->res[at];
                    if (relu && a < 0)
                        a = 0;
                    track(&e, a, b->y[at]);
                }
    return rel(&e);
}

/* dx and dw by scattering every output's gradient over the taps it read */
static double check_backward(const wino1d_shape *s, const bufs *b, double *ew)
{
    dims o = out_of(s);
    size_t nx = (size_t)(s->n * s->c * s->h * s->w), nw = (size_t)(s->k * s->c * s->r);
    double *dx = calloc(nx, sizeof(double)), *dw = calloc(nw, sizeof(double));
    assert_non_null(dx);
    assert_non_null(dw);
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t k = 0; k < s->k; k++)
            for (int64_t y = 0; y < o.oh; y++)
                for (int64_t x = 0; x < o.ow; x++) {
                    double g = b->dy[act(s->k, o.oh, o.ow, n, k, y, x)];
                    for (int64_t c = 0; c < s->c; c++)
                        for (int j = 0; j < s->r; j++) {
                            int64_t iy, ix;
                            if (!tap(s, y, x, j, &iy, &ix))
                                continue;
                            size_t xi = act(s->c, s->h, s->w, n, c, iy, ix), wi = wgt(s, k, c, j);
                            dx[xi] += g * b->w[wi];
                            dw[wi] += g * b->x[xi];
                        }
                }
    wino1d_backward_data(s, b->dy, b->w, b->dx, b->ws);
    wino1d_backward_weights(s, b->x, b->dy, b->dw, b->ws);
    err e = {0, 0}, f = {0, 0};
    for (size_t i = 0; i < nx; i++)
        track(&e, dx[i], b->dx[i]);
    for (size_t i = 0; i < nw; i++)
        track(&f, dw[i], b->dw[i]);
    free(dx);
    free(dw);
    *ew = rel(&f);
    return rel(&e);
}

static void run_shape(wino1d_shape s, unsigned seed)
{
    dims o = out_of(&s);
    size_t nx = (size_t)(s.n * s.c * s.h * s.w), ny = (size_t)(s.n * s.k * o.oh * o.ow);
    size_t nw = (size_t)(s.k * s.c * s.r);
    assert_true(wino1d_supported(&s));
    bufs b = {randoms(nx, &seed, 2), randoms(nw, &seed, 0.5f), randoms((size_t)s.k, &seed, 1),
              randoms(ny, &seed, 1), randoms(ny, &seed, 1), randoms(ny, &seed, 2),
              randoms(nx, &seed, 1), randoms(nw, &seed, 1), NULL};
    b.ws = aligned_alloc(64, (wino1d_ws_bytes(&s) + 63) / 64 * 64);
    assert_non_null(b.ws);
    double ew, e[4] = {check_forward(&s, &b, false, false), check_forward(&s, &b, true, true),
                       check_backward(&s, &b, &ew), 0};
    e[3] = ew;
    printf("  %s along %s: n%lld c%lld k%lld %lldx%lld pad %lld pass %lld: fwd %.1e, +res+relu "
           "%.1e, bwd data %.1e, bwd weights %.1e\n",
           wino1d_name(&s), s.axis ? "w" : "h", (long long)s.n, (long long)s.c, (long long)s.k,
           (long long)s.h, (long long)s.w, (long long)s.pad, (long long)s.pass, e[0], e[1], e[2],
           e[3]);
    for (int i = 0; i < 4; i++)
        assert_true(e[i] < 1e-4);
    float *all[] = {b.x, b.w, b.b, b.res, b.y, b.dy, b.dx, b.dw, b.ws};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

static void test_shapes(void **st)
{
    unsigned seed = (unsigned)time(NULL);
    printf("  seed %u\n", seed);
    /* n, c, k, h, w, axis, r, pad, images per pass (0: all) */
    run_shape((wino1d_shape){2, 16, 24, 9, 17, 1, 7, 3, 0}, seed);      /* 1x7, 17 = 5 x 3 + 2 */
    run_shape((wino1d_shape){2, 24, 16, 17, 5, 0, 7, 3, 0}, seed + 1);  /* 7x1 */
    run_shape((wino1d_shape){3, 8, 8, 4, 12, 1, 7, 0, 2}, seed + 2);    /* no pad, passes */
    run_shape((wino1d_shape){1, 8, 16, 7, 3, 0, 7, 0, 0}, seed + 3);    /* one output row */
    run_shape((wino1d_shape){2, 16, 16, 6, 8, 1, 3, 1, 0}, seed + 4);   /* 1x3 */
    run_shape((wino1d_shape){3, 8, 24, 7, 6, 0, 3, 1, 1}, seed + 5);    /* 3x1, passes of 1 */
    run_shape((wino1d_shape){1, 16, 8, 5, 9, 1, 7, 5, 0}, seed + 6);    /* pad 5 of 6 */
}

/* When the engine takes them: enough strips and channels. */
static void test_pays(void **st)
{
    assert_true(wino1d_pays(&(wino1d_shape){16, 192, 192, 17, 17, 1, 7, 3, 0})); /* Mixed_6 */
    assert_true(wino1d_pays(&(wino1d_shape){16, 128, 192, 17, 17, 0, 7, 3, 0}));
    assert_false(wino1d_pays(&(wino1d_shape){1, 192, 192, 3, 3, 1, 7, 3, 0})); /* 3 strips */
    assert_false(wino1d_pays(&(wino1d_shape){16, 32, 32, 17, 17, 1, 7, 3, 0})); /* 32 channels */
}

int main(void)
{
    wino1d_shape any = {1, 8, 8, 1, 7, 1, 7, 0, 0};
    if (!wino1d_supported(&any)) {
        printf("no AVX2+FMA here: the 1-d Winograd kernels are not used, nothing to test\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shapes), cmocka_unit_test(test_pays)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
