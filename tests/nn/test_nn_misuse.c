/* Public-API inputs a model author may plausibly pass that used to crash
 * or give wrong numbers: pooling with a stride above the kernel, tying a
 * decoder twice, sizes whose element count overflows, SGD on an inference
 * plan or without parameters, and (cpu) backward in test mode.  Each now
 * works or is one clear error naming what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <dlgauge/plugin.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void plan(dlg_net *net, const char *backend, bool train)
{
    dlg_plan_opts o = {.backend = backend, .threads = 1, .train = train, .seed = 3,
                       .input_grads = train};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s: %s", backend, dlg_net_error(net));
}

/* Max or average pooling of one 1 x 1 x h x h image whose pixel i is i;
 * returns the output count, values in out. */
static int64_t pool_once(const char *backend, bool avg, int h, int k, int s, float *out,
                         float *dx)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "pool"), 0);
    int x = dlg_input(net, "x", 1, 1, h, h);
    int p = avg ? dlg_avg_pool(net, "p", x, k, s, 0) : dlg_max_pool(net, "p", x, k, s, 0);
    plan(net, backend, true);
    float in[64];
    for (int i = 0; i < h * h; i++)
        in[i] = (float)i;
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, in, (size_t)(h * h)), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    int64_t n = tu_count(net, p);
    assert_int_equal(dlg_net_read(net, p, DLG_DATA, out, (size_t)n), 0);
    float ones[64];
    for (int i = 0; i < n; i++)
        ones[i] = 1;
    assert_int_equal(dlg_net_write(net, p, DLG_DIFF, ones, (size_t)n), 0);
    assert_int_equal(dlg_net_backward(net), 0);
    assert_int_equal(dlg_net_read(net, x, DLG_DIFF, dx, (size_t)(h * h)), 0);
    dlg_net_destroy(net);
    return n;
}

/* A stride above the kernel without padding: Caffe's ceil-mode size had a
 * last window starting past the input (ref: -inf max, 0/0 average and a
 * max-pool gradient written out of bounds; cpu: -FLT_MAX, or a plan error
 * for average).  That window is dropped: 4x4, k 1, s 2 is 2x2 (PyTorch's
 * ceil mode too), 6x6, k 2, s 3 is 2x2. */
static void test_pool_stride_above_kernel(void **st)
{
    static const int cfg[][3] = {{4, 1, 2}, {6, 2, 3}, {5, 1, 3}};
    for (int b = 0; b < tu_nbackends; b++)
        for (int c = 0; c < 3; c++)
            for (int avg = 0; avg < 2; avg++) {
                int h = cfg[c][0], k = cfg[c][1], s = cfg[c][2];
                float out[64], dx[64];
                int64_t n = pool_once(tu_backends[b], avg, h, k, s, out, dx);
                assert_int_equal(n, 4);
                double gsum = 0;
                for (int i = 0; i < h * h; i++)
                    gsum += dx[i];
                for (int oy = 0; oy < 2; oy++)
                    for (int ox = 0; ox < 2; ox++) {
                        /* window [o*s, o*s + k) along each axis */
                        int y1 = oy * s + k - 1, x1 = ox * s + k - 1;
                        double want = avg ? (oy * s + y1) / 2.0 * h + (ox * s + x1) / 2.0
                                          : (double)(y1 * h + x1);
                        if (fabs(out[oy * 2 + ox] - want) > 1e-5)
                            fail_msg("%s %s %dx%d k%d s%d: out[%d] = %g, want %g", tu_backends[b],
                                     avg ? "avg" : "max", h, h, k, s, oy * 2 + ox,
                                     (double)out[oy * 2 + ox], want);
                    }
                assert_true(fabs(gsum - 4.0) < 1e-5); /* each output's gradient lands once */
            }
}

/* embedding "emb" (vocab 6, dim 3) -> fc "dec" (6) [-> fc "dec2" (6)] */
static dlg_net *lm(bool two)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "lm"), 0);
    int ids = dlg_labels(net, "ids", 4), tgt = dlg_labels(net, "tgt", 4);
    int e = dlg_embedding(net, "emb", ids, 6, 3);
    dlg_softmax_loss(net, "loss", dlg_fc(net, "dec", e, 6), tgt);
    if (two)
        dlg_softmax_loss(net, "loss2", dlg_fc(net, "dec2", e, 6), tgt);
    assert_int_equal(dlg_net_status(net), 0);
    return net;
}

/* A second tie of the same fc retired the embedding's table (its forward
 * then read past a one-float buffer); a second decoder tied to the same
 * table had its gradient overwritten by the first's.  Both are refused. */
static void test_tie_twice(void **st)
{
    dlg_net *net = lm(false);
    assert_int_equal(dlg_net_tie(net, "dec", "emb"), 0);
    assert_int_equal(dlg_net_tie(net, "dec", "emb"), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "already tied"));
    dlg_net_destroy(net);

    net = lm(true);
    assert_int_equal(dlg_net_tie(net, "dec", "emb"), 0);
    assert_int_equal(dlg_net_tie(net, "dec2", "emb"), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "'dec2'"));
    dlg_net_destroy(net);

    net = lm(false); /* one tie still trains */
    assert_int_equal(dlg_net_tie(net, "dec", "emb"), 0);
    plan(net, "ref", true);
    float ids[4] = {0, 1, 2, 5};
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "ids"), DLG_DATA, ids, 4), 0);
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "tgt"), DLG_DATA, ids, 4), 0);
    dlg_sgd sgd = {0.5f, 0, 0};
    assert_int_equal(dlg_net_train_step(net, &sgd), 0);
    dlg_net_destroy(net);
}

/* Element counts past int64 wrapped (65536^4 became 0 elements, planned
 * as an empty buffer); a layer's multiply-adds could overflow too. */
static void test_huge_sizes(void **st)
{
    static const int dims[][4] = {{65536, 65536, 65536, 65536},
                                  {2147483647, 2147483647, 2147483647, 2147483647},
                                  {1, 1 << 20, 1 << 15, 1 << 15}};
    for (int i = 0; i < 3; i++) {
        dlg_net *net;
        assert_int_equal(dlg_net_create(&net, "huge"), 0);
        assert_int_equal(dlg_input(net, "x", dims[i][0], dims[i][1], dims[i][2], dims[i][3]),
                         -DLG_EINVAL);
        assert_non_null(strstr(dlg_net_error(net), "'x'"));
        dlg_net_destroy(net);
    }
    /* a weight too large: fan-in 2^30 x 2^30 outputs */
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "huge-fc"), 0);
    int x = dlg_input(net, "x", 1, 1, 1, 1 << 30);
    assert_true(x >= 0);
    assert_int_equal(dlg_fc(net, "fc", x, 1 << 30), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "fc/param0"));
    dlg_net_destroy(net);
}

/* Twice a pad above INT_MAX / 2 overflowed int in the shape rules (a
 * "kernel larger than padded input" error for a valid convolution, a
 * misleading pooling error, and an abort under UBSan); a global pooling
 * over more than INT_MAX rows truncated its window to a few rows and
 * built a wrong-shaped output without a word. */
static void test_huge_pads(void **st)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "huge-pad"), 0);
    int x = dlg_input(net, "x", 1, 1, 5, 5);
    dlg_conv_spec cs = {1, 3, 3, 1, 1, 1500000000, 0, 1, 1, 1, false};
    int c = dlg_conv_ex(net, "conv", x, &cs);
    if (c < 0)
        fail_msg("a valid conv refused: %s", dlg_net_error(net));
    dlg_shape sh;
    assert_int_equal(dlg_net_shape(net, c, &sh), 0);
    assert_true(sh.d[2] == 3000000003LL && sh.d[3] == 3);
    dlg_net_destroy(net);

    /* 5 + 2 * 1.5e9 rows and columns hold the 2e9 window: the output's
     * element count is what is wrong */
    assert_int_equal(dlg_net_create(&net, "huge-pool"), 0);
    x = dlg_input(net, "x", 1, 1, 5, 5);
    assert_int_equal(dlg_max_pool(net, "pool", x, 2000000000, 1, 1500000000), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "elements"));
    dlg_net_destroy(net);

    /* 1 + 2 * 2^30 rows, then + 2 * (2^30 + 2): 2^32 + 5 rows of 1 pixel */
    assert_int_equal(dlg_net_create(&net, "huge-global"), 0);
    x = dlg_input(net, "x", 1, 1, 1, 1);
    dlg_conv_spec c1 = {1, 1, 1, 1, 1, 1 << 30, 0, 1, 1, 1, false};
    dlg_conv_spec c2 = {1, 1, 1, 1, 1, (1 << 30) + 2, 0, 1, 1, 1, false};
    c = dlg_conv_ex(net, "c2", dlg_conv_ex(net, "c1", x, &c1), &c2);
    if (c < 0)
        fail_msg("valid convs refused: %s", dlg_net_error(net));
    assert_int_equal(dlg_net_shape(net, c, &sh), 0);
    assert_true(sh.d[2] == (1LL << 32) + 5);
    assert_int_equal(dlg_global_avg_pool(net, "gap", c), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "'gap'"));
    dlg_net_destroy(net);
}

/* x (2 x 3 x 4 x 4) -> conv -> batch norm -> fc (3) -> loss */
static dlg_net *small(const char *backend, bool train)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "small"), 0);
    int x = dlg_input(net, "x", 2, 3, 4, 4), y = dlg_labels(net, "y", 2);
    int c = dlg_batchnorm(net, "bn", dlg_conv(net, "conv", x, 4, 3, 1, 1, 1), 1e-5f);
    dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", c, 3), y);
    plan(net, backend, train);
    float lab[2] = {0, 2};
    assert_int_equal(tu_fill_blob(net, x, FILL_GAUSS, 5), 0);
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, 2), 0);
    return net;
}

/* dlg_net_sgd_step on an inference plan silently did nothing (train_step
 * refused it), and without parameters dereferenced NULL. */
static void test_sgd_misuse(void **st)
{
    dlg_sgd sgd = {0.1f, 0.9f, 0};
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *net = small(tu_backends[b], false);
        assert_int_equal(dlg_net_forward(net), 0);
        assert_int_equal(dlg_net_sgd_step(net, &sgd), -DLG_EINVAL);
        assert_non_null(strstr(dlg_net_error(net), "without train"));
        dlg_net_destroy(net);

        net = small(tu_backends[b], true);
        assert_int_equal(dlg_net_train_step(net, &sgd), 0);
        assert_int_equal(dlg_net_sgd_step(net, NULL), -DLG_EINVAL);
        assert_non_null(strstr(dlg_net_error(net), "SGD parameters"));
        dlg_net_destroy(net);
    }
}

/* Backward after dlg_net_set_train(false): ref differentiates through the
 * running statistics; cpu cannot and said only "backward of layer 'bn'
 * failed", now it says why. */
static void test_backward_in_test_mode(void **st)
{
    dlg_sgd sgd = {0.1f, 0, 0};
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *net = small(tu_backends[b], true);
        assert_int_equal(dlg_net_train_step(net, &sgd), 0);
        assert_int_equal(dlg_net_set_train(net, false), 0);
        int rc = dlg_net_train_step(net, &sgd);
        if (strcmp(tu_backends[b], "ref") == 0)
            assert_int_equal(rc, 0);
        else {
            assert_int_equal(rc, -DLG_ENOTSUP);
            assert_non_null(strstr(dlg_net_error(net), "'bn'"));
            assert_non_null(strstr(dlg_net_error(net), "test mode"));
        }
        dlg_net_destroy(net);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_stride_above_kernel),
        cmocka_unit_test(test_tie_twice),
        cmocka_unit_test(test_huge_sizes),
        cmocka_unit_test(test_huge_pads),
        cmocka_unit_test(test_sgd_misuse),
        cmocka_unit_test(test_backward_in_test_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
