/* The Winograd F(4x4,3x3) and F(2x2,5x5) kernels (core/nn/cpu/cpu_winograd.c) against
 * direct convolution in double, on random data drawn fresh each run:
 * forward with bias, residual and ReLU, backward data, backward weights
 * and bias, over sizes that leave partial tiles at the right and bottom
 * edges, with pad 1 (same size), 0 (Inception's stem) and 2 (5x5: 0-4),
 * ungrouped and grouped (AlexNet's conv2, conv4, conv5).  Error = max |wino - ref| / max |ref| per tensor, < 1e-4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wino_testutil.h"

#include "cpu/cpu_winograd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct bufs {
    float *x, *w, *b, *res, *y, *dy, *dx, *dw, *db;
    void *ws;
} bufs;

/* Output planes: oh x ow. */
static int fr(const wino_shape *s) { return s->r == 5 ? 5 : 3; }
static int64_t oh(const wino_shape *s) { return s->h + 2 * s->pad - (fr(s) - 1); }
static int64_t ow(const wino_shape *s) { return s->w + 2 * s->pad - (fr(s) - 1); }

/* nChw8c offset of (n, c, y, x) for a tensor of nc channels of h x w */
static size_t act(int64_t nc, int64_t h, int64_t w, int64_t n, int64_t c, int64_t y, int64_t x)
{
    return (size_t)((((n * (nc / 8) + c / 8) * h + y) * w + x) * 8 + c % 8);
}

/* the input (c channels) and output (k channels) of shape s */
static size_t in_at(const wino_shape *s, int64_t n, int64_t c, int64_t y, int64_t x)
{
    return act(s->c, s->h, s->w, n, c, y, x);
}

static size_t out_at(const wino_shape *s, int64_t n, int64_t k, int64_t y, int64_t x)
{
    return act(s->k, oh(s), ow(s), n, k, y, x);
}

static int64_t groups(const wino_shape *s) { return s->groups > 1 ? s->groups : 1; }
/* a group's channels in and out */
static int64_t gc(const wino_shape *s) { return s->c / groups(s); }
static int64_t gk(const wino_shape *s) { return s->k / groups(s); }
/* the first input channel output channel k reads, the first output
 * channel that reads input channel c */
static int64_t c0_of(const wino_shape *s, int64_t k) { return k / gk(s) * gc(s); }
static int64_t k0_of(const wino_shape *s, int64_t c) { return c / gc(s) * gk(s); }

/* gOIhw8i8o offset of filter (k, c, i, j), c in k's group: that group's
 * ABcd8b8a filter (ungrouped: the whole one) */
static size_t wgt(const wino_shape *s, int64_t k, int64_t c, int i, int j)
{
    int64_t g = k / gk(s), kl = k % gk(s), cl = c % gc(s), r = fr(s);
    return (size_t)(g * gk(s) * gc(s) * r * r) +
           (size_t)((((kl / 8) * (gc(s) / 8) + cl / 8) * r * r + i * r + j) * 64 + (cl % 8) * 8 + kl % 8);
}


static double check_forward(const wino_shape *s, const bufs *b, bool res, bool relu)
{
    wino_forward(s, b->x, b->w, b->b, res ? b->res : NULL, relu, b->y, b->ws);
    err e = {0, 0};
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t k = 0; k < s->k; k++)
            for (int64_t y = 0; y < oh(s); y++)
                for (int64_t x = 0; x < ow(s); x++) {
                    double a = b->b[k];
                    for (int64_t c = c0_of(s, k); c < c0_of(s, k) + gc(s); c++)
                        for (int i = 0; i < fr(s); i++)
                            for (int j = 0; j < fr(s); j++) {
                                int64_t iy = y + i - s->pad, ix = x + j - s->pad;
                                if (iy >= 0 && ix >= 0 && iy < s->h && ix < s->w)
                                    a += (double)b->w[wgt(s, k, c, i, j)] *
                                         b->x[in_at(s, n, c, iy, ix)];
                            }
                    size_t o = out_at(s, n, k, y, x);
                    if (res)
                        a += b->res[o];
                    if (relu && a < 0)
                        a = 0;
                    track(&e, a, b->y[o]);
                }
    return rel(&e);
}

static double check_backward_data(const wino_shape *s, const bufs *b)
{
    wino_backward_data(s, b->dy, b->w, b->dx, b->ws);
    err e = {0, 0};
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t c = 0; c < s->c; c++)
            for (int64_t y = 0; y < s->h; y++)
                for (int64_t x = 0; x < s->w; x++) {
                    double a = 0;
                    for (int64_t k = k0_of(s, c); k < k0_of(s, c) + gk(s); k++)
                        for (int i = 0; i < fr(s); i++)
                            for (int j = 0; j < fr(s); j++) {
                                int64_t oy = y - i + s->pad, ox = x - j + s->pad;
                                if (oy >= 0 && ox >= 0 && oy < oh(s) && ox < ow(s))
                                    a += (double)b->w[wgt(s, k, c, i, j)] *
                                         b->dy[out_at(s, n, k, oy, ox)];
                            }
                    track(&e, a, b->dx[in_at(s, n, c, y, x)]);
                }
    return rel(&e);
}

static double check_backward_weights(const wino_shape *s, const bufs *b)
{
    wino_backward_weights(s, b->x, b->dy, b->dw, b->ws);
    wino_bias_grad(s->n, s->k, oh(s) * ow(s), b->dy, b->db);
    err e = {0, 0}, eb = {0, 0};
    for (int64_t k = 0; k < s->k; k++) {
        double sum = 0;
        for (int64_t n = 0; n < s->n; n++)
            for (int64_t y = 0; y < oh(s); y++)
                for (int64_t x = 0; x < ow(s); x++)
                    sum += b->dy[out_at(s, n, k, y, x)];
        track(&eb, sum, b->db[k]);
        for (int64_t c = c0_of(s, k); c < c0_of(s, k) + gc(s); c++)
            for (int i = 0; i < fr(s); i++)
                for (int j = 0; j < fr(s); j++) {
                    double a = 0;
                    for (int64_t n = 0; n < s->n; n++)
                        for (int64_t y = 0; y < oh(s); y++)
                            for (int64_t x = 0; x < ow(s); x++) {
                                int64_t iy = y + i - s->pad, ix = x + j - s->pad;
                                if (iy >= 0 && ix >= 0 && iy < s->h && ix < s->w)
                                    a += (double)b->dy[out_at(s, n, k, y, x)] *
                                         b->x[in_at(s, n, c, iy, ix)];
                            }
                    track(&e, a, b->dw[wgt(s, k, c, i, j)]);
                }
    }
    return fmax(rel(&e), rel(&eb));
}

static void run_shape(wino_shape s, unsigned seed)
{
    size_t nx = (size_t)(s.n * s.c * s.h * s.w), ny = (size_t)(s.n * s.k * oh(&s) * ow(&s));
    size_t nw = (size_t)(s.k * gc(&s) * fr(&s) * fr(&s));
    bufs b = {randoms(nx, &seed, 2), randoms(nw, &seed, 0.5f), randoms((size_t)s.k, &seed, 1),
              randoms(ny, &seed, 1), randoms(ny, &seed, 1), randoms(ny, &seed, 2),
              randoms(nx, &seed, 1), randoms(nw, &seed, 1), randoms((size_t)s.k, &seed, 1),
              NULL};
    b.ws = aligned_alloc(64, (wino_ws_bytes(&s) + 63) / 64 * 64);
    assert_non_null(b.ws);
    double e[4] = {check_forward(&s, &b, false, false), check_forward(&s, &b, true, true),
                   check_backward_data(&s, &b), check_backward_weights(&s, &b)};
    printf("  %dx%d n%lld c%lld k%lld %lldx%lld pad %lld pass %lld groups %lld: fwd %.1e, +res+relu %.1e, bwd "
           "data %.1e, bwd weights %.1e\n",
           fr(&s), fr(&s), (long long)s.n, (long long)s.c, (long long)s.k, (long long)s.h, (long long)s.w,
           (long long)s.pad, (long long)s.pass, (long long)groups(&s), e[0], e[1], e[2], e[3]);
    for (int i = 0; i < 4; i++)
        assert_true(e[i] < 1e-4);
    float *all[] = {b.x, b.w, b.b, b.res, b.y, b.dy, b.dx, b.dw, b.db, b.ws};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

static void test_shapes(void **st)
{
    unsigned seed = (unsigned)time(NULL);
    printf("  seed %u\n", seed);
    /* n, c, k, h, w, pad, images per pass (0: all), groups */
    run_shape((wino_shape){2, 16, 24, 9, 7, 1, 0, 1, 3}, seed);   /* partial tiles both ways */
    run_shape((wino_shape){1, 8, 8, 4, 4, 1, 0, 1, 3}, seed + 1); /* one whole tile */
    run_shape((wino_shape){3, 24, 16, 13, 6, 1, 0, 1, 3}, seed + 2);
    run_shape((wino_shape){1, 32, 32, 1, 5, 1, 0, 1, 3}, seed + 3); /* a single row */
    /* passes of 2 images and a last one of 1 (weights accumulate over
     * passes; each pass's outputs land at its own images) */
    run_shape((wino_shape){5, 16, 8, 6, 9, 1, 2, 1, 3}, seed + 4);
    /* pad 0 (outputs 2 smaller; backward data pads dy by 2) and pad 2 */
    run_shape((wino_shape){2, 16, 8, 11, 10, 0, 0, 1, 3}, seed + 5);
    run_shape((wino_shape){1, 8, 16, 6, 6, 0, 0, 1, 3}, seed + 6); /* one whole output tile */
    run_shape((wino_shape){3, 8, 8, 3, 7, 0, 2, 1, 3}, seed + 7);  /* a single output row, passes */
    run_shape((wino_shape){2, 8, 16, 5, 6, 2, 0, 1, 3}, seed + 8);
    /* groups: each reads only its own channels and writes its own outputs,
     * filter, bias gradient; with passes, and unequal c and k per group */
    run_shape((wino_shape){2, 16, 16, 9, 7, 1, 0, 2, 3}, seed + 9);
    run_shape((wino_shape){3, 48, 24, 6, 5, 1, 2, 3, 3}, seed + 10);
    run_shape((wino_shape){2, 32, 64, 7, 6, 0, 0, 4, 3}, seed + 11);
    /* 5x5 by F(2x2,5x5): odd outputs (a partial tile each way), every pad
     * 0-4, passes, groups (AlexNet's conv2: pad 2, 2 groups) */
    run_shape((wino_shape){2, 16, 24, 9, 7, 2, 0, 1, 5}, seed + 12);
    run_shape((wino_shape){1, 8, 8, 6, 6, 0, 0, 1, 5}, seed + 13);
    run_shape((wino_shape){3, 8, 16, 5, 8, 1, 2, 1, 5}, seed + 14);
    run_shape((wino_shape){2, 16, 8, 4, 3, 3, 0, 1, 5}, seed + 15);
    run_shape((wino_shape){1, 8, 8, 3, 5, 4, 0, 1, 5}, seed + 16);
    run_shape((wino_shape){2, 32, 48, 11, 9, 2, 0, 2, 5}, seed + 17);
}

/* When the engine takes Winograd (wino_pays): enough output tiles, and
 * enough channels for the products to outweigh the transforms. */
static void test_pays(void **st)
{
    /* n, c, k, h, w, pad, pass, groups */
    assert_true(wino_pays(&(wino_shape){16, 64, 64, 56, 56, 1, 0, 1, 3}));   /* ResNet-50 res2 */
    assert_true(wino_pays(&(wino_shape){16, 80, 192, 73, 73, 0, 0, 1, 3}));  /* Inception 4a */
    assert_true(wino_pays(&(wino_shape){1, 128, 128, 22, 22, 1, 0, 1, 3}));  /* 36 tiles */
    assert_false(wino_pays(&(wino_shape){1, 512, 512, 7, 7, 1, 0, 1, 3}));   /* 4 tiles */
    assert_false(wino_pays(&(wino_shape){16, 32, 32, 149, 149, 0, 0, 1, 3})); /* Inception 2a */
    assert_false(wino_pays(&(wino_shape){16, 32, 64, 147, 147, 1, 0, 1, 3})); /* 2b */
    /* AlexNet's conv4 at batch 16: two groups of 192 channels, 13x13 */
    assert_true(wino_pays(&(wino_shape){16, 384, 384, 13, 13, 1, 0, 2, 3}));
    /* 64 channels in 4 groups of 16: too few a group */
    assert_false(wino_pays(&(wino_shape){16, 64, 64, 56, 56, 1, 0, 4, 3}));
    assert_false(wino_supported(&(wino_shape){1, 16, 16, 4, 4, 1, 0, 4, 3})); /* groups of 4 */
    /* 5x5: GoogLeNet's inception_3b (32 -> 96 at 28x28) pays, 3a (16 -> 32)
     * does not; AlexNet's conv2 (2 groups of 48 -> 128) does */
    assert_true(wino_pays(&(wino_shape){16, 32, 96, 28, 28, 2, 0, 1, 5}));
    assert_false(wino_pays(&(wino_shape){16, 16, 32, 28, 28, 2, 0, 1, 5}));
    assert_true(wino_pays(&(wino_shape){16, 96, 256, 27, 27, 2, 0, 2, 5}));
    assert_false(wino_pays(&(wino_shape){16, 32, 96, 28, 28, 1, 0, 1, 3})); /* 3x3 keeps 32 */
    assert_int_equal(wino_filter_bytes(&(wino_shape){1, 16, 32, 4, 4, 1, 0, 2, 3}), 36 * 2 * (8 * 16) * 4);
}

int main(void)
{
    wino_shape any = {1, 8, 8, 4, 4, 1, 0, 1, 3};
    if (!wino_supported(&any)) {
        printf("no AVX2+FMA here: the Winograd kernels are not used, nothing to test\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shapes), cmocka_unit_test(test_pays)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
