/* Builder semantics: shapes, counts, sticky errors, fillers, SGD and
 * dropout/batch-norm known answers on the reference backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <dlgauge/plugin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dlg_net *mk(void)
{
    dlg_net *net = NULL;
    assert_int_equal(dlg_net_create(&net, "t"), 0);
    return net;
}

static void plan(dlg_net *net, bool train)
{
    dlg_plan_opts o = {.backend = "ref", .train = train, .seed = 3};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
}

static void test_shapes_and_counts(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "data", 2, 3, 227, 227);
    int c = dlg_conv(net, "conv1", x, 96, 11, 4, 0, 1);
    int p = dlg_max_pool(net, "pool1", c, 3, 2, 0);
    int g = dlg_conv(net, "conv2", p, 256, 5, 1, 2, 2);
    int d = dlg_conv_dilated(net, "dil", g, 8, 3, 1, 2, 2, 1);
    int f = dlg_fc(net, "fc", d, 10);
    dlg_shape s;
    assert_int_equal(dlg_net_shape(net, c, &s), 0);
    assert_int_equal(s.d[1], 96);
    assert_int_equal(s.d[2], 55);
    assert_int_equal(dlg_net_shape(net, p, &s), 0);
    assert_int_equal(s.d[2], 27);
    assert_int_equal(dlg_net_shape(net, d, &s), 0);
    assert_int_equal(s.d[2], 27); /* dilation 2, pad 2 keeps the size */
    assert_int_equal(dlg_net_shape(net, f, &s), 0);
    assert_int_equal(s.d[1], 10);
    dlg_layer_info li;
    assert_int_equal(dlg_net_layer_info(net, 0, &li), 0);
    assert_string_equal(li.name, "conv1");
    assert_int_equal(li.params, 96 * 3 * 11 * 11 + 96);
    assert_int_equal(li.macs, 96LL * 55 * 55 * 3 * 11 * 11);
    assert_int_equal(dlg_net_layer_info(net, 2, &li), 0);
    assert_int_equal(li.params, 256 * 48 * 25 + 256); /* grouped */
    assert_int_equal(li.macs, 256LL * 27 * 27 * 48 * 25);
    int64_t fc_in = 8LL * 27 * 27;
    assert_int_equal(dlg_net_param_total(net),
                     34944 + 307456 + (8 * 256 * 9 + 8) + (fc_in * 10 + 10));
    assert_int_equal(dlg_net_status(net), 0);
    dlg_net_destroy(net);
}

/* Pooled size of an h x h input in the rounding given, or -1 with the
 * builder's error in err. */
static int64_t pooled(dlg_pool_rounding r, bool avg, int h, int k, int s, int p, char *err,
                      size_t n)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 1, 2, h, h);
    dlg_net_set_pool_rounding(net, r);
    int y = avg ? dlg_avg_pool(net, "p", x, k, s, p) : dlg_max_pool(net, "p", x, k, s, p);
    dlg_shape sh = {0};
    snprintf(err, n, "%s", y < 0 ? dlg_net_error(net) : "");
    if (y >= 0)
        assert_int_equal(dlg_net_shape(net, y, &sh), 0);
    dlg_net_destroy(net);
    return y < 0 ? -1 : sh.d[2];
}

/* Floor mode is floor((H + 2p - k) / s) + 1, PyTorch's; ceil mode stays
 * Caffe's, and is the default.  A kernel past the padded input is refused
 * in either, naming the layer; a rounding that is neither is a sticky
 * error. */
static void test_pool_rounding(void **st)
{
    static const struct {
        int h, k, s, p, ceil, floor;
    } c[] = {{6, 3, 2, 0, 3, 2},   {8, 3, 2, 0, 4, 3}, {6, 3, 2, 1, 4, 3}, {8, 3, 2, 1, 5, 4},
             {11, 5, 3, 1, 4, 3},  {7, 3, 2, 1, 4, 4}, {5, 2, 2, 1, 3, 3}, {13, 2, 3, 0, 5, 4},
             {112, 3, 2, 1, 57, 56}, {113, 3, 2, 1, 57, 57}, {1, 2, 1, 1, 2, 2}};
    char err[512];
    const size_t en = sizeof err;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (int avg = 0; avg < 2; avg++) {
            int64_t ce = pooled(DLG_POOL_CEIL, avg, c[i].h, c[i].k, c[i].s, c[i].p, err, en);
            int64_t fl = pooled(DLG_POOL_FLOOR, avg, c[i].h, c[i].k, c[i].s, c[i].p, err, en);
            if (ce != c[i].ceil || fl != c[i].floor)
                fail_msg("%d k%d s%d p%d: ceil %lld floor %lld, expected %d %d", c[i].h, c[i].k,
                         c[i].s, c[i].p, (long long)ce, (long long)fl, c[i].ceil, c[i].floor);
        }
    assert_int_equal(pooled(DLG_POOL_FLOOR, false, 2, 5, 1, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "pool 'p': need kernel, stride >= 1, 0 <= pad < kernel and "
                                "kernel <= padded input"));

    dlg_net *net = mk();
    int x = dlg_input(net, "x", 1, 1, 6, 6);
    dlg_net_set_pool_rounding(net, DLG_POOL_FLOOR);
    int a = dlg_max_pool(net, "a", x, 3, 2, 0);
    dlg_net_set_pool_rounding(net, DLG_POOL_CEIL); /* back to Caffe's for later pools */
    int b = dlg_max_pool(net, "b", x, 3, 2, 0);
    dlg_shape sa, sb;
    assert_int_equal(dlg_net_shape(net, a, &sa), 0);
    assert_int_equal(dlg_net_shape(net, b, &sb), 0);
    assert_int_equal(sa.d[2], 2);
    assert_int_equal(sb.d[2], 3);
    dlg_net_set_pool_rounding(net, (dlg_pool_rounding)7);
    assert_int_equal(dlg_net_status(net), -DLG_EINVAL);
    assert_string_equal(dlg_net_error(net),
                        "nn: net 't': pool rounding 7 is neither ceil (0) nor floor (1)");
    assert_int_equal(dlg_max_pool(net, "c", x, 3, 2, 0), -DLG_EINVAL);
    dlg_net_destroy(net);
}

static void test_sticky_errors(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 1, 6, 8, 8);
    int bad = dlg_conv(net, "conv_bad", x, 8, 3, 1, 1, 4); /* 6 % 4 != 0 */
    assert_int_equal(bad, -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "conv_bad"));
    assert_int_equal(dlg_relu(net, "r", x), -DLG_EINVAL); /* sticky */
    dlg_plan_opts o = {.backend = "ref"};
    assert_int_equal(dlg_net_plan(net, &o), -DLG_EINVAL);
    dlg_net_destroy(net);

    net = mk();
    x = dlg_input(net, "x", 1, 2, 4, 4);
    assert_true(dlg_relu(net, "r", x) >= 0);
    assert_int_equal(dlg_relu(net, "r", x), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "duplicate"));
    dlg_net_destroy(net);

    net = mk();
    int xs[2] = {dlg_input(net, "a", 1, 2, 4, 4), dlg_input(net, "b", 1, 2, 5, 4)};
    assert_true(dlg_concat(net, "cat", 2, xs) < 0);
    dlg_net_destroy(net);

    net = mk();
    x = dlg_input(net, "x", 1, 2, 4, 4);
    assert_true(dlg_max_pool(net, "p", x, 3, 1, 3) < 0); /* pad >= kernel */
    dlg_net_destroy(net);

    net = mk();
    x = dlg_input(net, "x", 1, 2, 4, 4);
    dlg_relu(net, "r", x);
    o.backend = "nosuch";
    assert_int_equal(dlg_net_plan(net, &o), -DLG_ENOTSUP);
    assert_non_null(strstr(dlg_net_error(net), "nosuch"));
    dlg_net_destroy(net);
}

/* A label outside 0..K-1 is bad data: an error, not a crash. */
static void test_bad_label(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 2, 3, 1, 1), y = dlg_labels(net, "y", 2);
    dlg_softmax_loss(net, "loss", x, y);
    plan(net, false);
    float lab[2] = {1, 3};
    /* misused host IO fails without poisoning the net */
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, 3), -DLG_EINVAL);
    assert_int_equal(dlg_net_read(net, x, DLG_DIFF, lab, 6), -DLG_EINVAL);
    assert_int_equal(dlg_net_read(net, 999, DLG_DATA, lab, 2), -DLG_EINVAL);
    assert_int_equal(dlg_net_status(net), 0);
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, 2), 0);
    assert_int_equal(dlg_net_forward(net), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "loss"));
    dlg_net_destroy(net);
}

static void stats(dlg_net *net, int b, double *mean, double *sd, double *maxabs)
{
    int64_t n = tu_count(net, b);
    float buf[4096];
    assert_true(n <= 4096);
    assert_int_equal(dlg_net_read(net, b, DLG_DATA, buf, (size_t)n), 0);
    double s = 0, q = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        s += buf[i];
        q += (double)buf[i] * buf[i];
        m = fmax(m, fabs(buf[i]));
    }
    *mean = s / (double)n;
    *sd = sqrt(q / (double)n - *mean * *mean);
    *maxabs = m;
}

static void test_fillers(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 1, 16, 4, 4);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0},
                        (dlg_filler){DLG_FILL_CONSTANT, 0.2f});
    dlg_conv(net, "xav", x, 16, 3, 1, 1, 1);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_MSRA, 0}, (dlg_filler){DLG_FILL_CONSTANT, 0});
    dlg_conv(net, "msra", x, 16, 3, 1, 1, 1);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.01f},
                        (dlg_filler){DLG_FILL_CONSTANT, 1});
    dlg_conv(net, "gauss", x, 16, 3, 1, 1, 1);
    plan(net, false);
    double fan = 16 * 9, mean, sd, mx;
    stats(net, dlg_net_param(net, "xav", 0), &mean, &sd, &mx);
    assert_true(mx <= sqrt(3 / fan) + 1e-6);
    assert_true(fabs(sd - 1 / sqrt(fan)) < 0.05 / sqrt(fan)); /* U(-a,a): sd a/sqrt3 */
    stats(net, dlg_net_param(net, "xav", 1), &mean, &sd, &mx);
    assert_true(fabs(mean - 0.2) < 1e-6 && sd < 1e-6);
    stats(net, dlg_net_param(net, "msra", 0), &mean, &sd, &mx);
    assert_true(fabs(sd - sqrt(2 / fan)) < 0.05 * sqrt(2 / fan));
    stats(net, dlg_net_param(net, "gauss", 0), &mean, &sd, &mx);
    assert_true(fabs(sd - 0.01) < 0.0005 && fabs(mean) < 0.001);

    /* same seed, same weights; another seed, others */
    float a[2304], b[2304];
    dlg_net *n2 = mk(), *n3 = mk();
    dlg_net *nets[2] = {n2, n3};
    for (int i = 0; i < 2; i++) {
        int xi = dlg_input(nets[i], "x", 1, 16, 4, 4);
        dlg_net_set_fillers(nets[i], (dlg_filler){DLG_FILL_XAVIER, 0},
                            (dlg_filler){DLG_FILL_CONSTANT, 0});
        dlg_conv(nets[i], "xav", xi, 16, 3, 1, 1, 1);
        dlg_plan_opts o = {.backend = "ref", .seed = i == 0 ? 3 : 4};
        assert_int_equal(dlg_net_plan(nets[i], &o), 0);
    }
    assert_int_equal(dlg_net_read(net, dlg_net_param(net, "xav", 0), DLG_DATA, a, 2304), 0);
    assert_int_equal(dlg_net_read(n2, dlg_net_param(n2, "xav", 0), DLG_DATA, b, 2304), 0);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(dlg_net_read(n3, dlg_net_param(n3, "xav", 0), DLG_DATA, b, 2304), 0);
    assert_memory_not_equal(a, b, sizeof a);
    dlg_net_destroy(net);
    dlg_net_destroy(n2);
    dlg_net_destroy(n3);
}

/* Caffe SGD by hand: y = w.x + b, dy = 1, two steps with momentum. */
static void test_sgd(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 1, 2, 1, 1);
    int y = dlg_fc(net, "fc", x, 1);
    plan(net, true);
    int w = dlg_net_param(net, "fc", 0), b = dlg_net_param(net, "fc", 1);
    float xv[2] = {1, 2}, wv[2] = {0.5f, -1}, bv = 0.25f, one = 1;
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, xv, 2), 0);
    assert_int_equal(dlg_net_write(net, w, DLG_DATA, wv, 2), 0);
    assert_int_equal(dlg_net_write(net, b, DLG_DATA, &bv, 1), 0);
    dlg_sgd s = {0.1f, 0.9f, 0.01f};
    double hw[2] = {0, 0}, hb = 0, W[2] = {0.5, -1}, Bb = 0.25;
    for (int step = 0; step < 2; step++) {
        assert_int_equal(dlg_net_forward(net), 0);
        assert_int_equal(dlg_net_write(net, y, DLG_DIFF, &one, 1), 0);
        assert_int_equal(dlg_net_backward(net), 0);
        assert_int_equal(dlg_net_sgd_step(net, &s), 0);
        for (int i = 0; i < 2; i++) { /* weights: lr_mult 1, decay_mult 1 */
            hw[i] = 0.9 * hw[i] + 0.1 * (xv[i] + 0.01 * W[i]);
            W[i] -= hw[i];
        }
        hb = 0.9 * hb + 0.2 * 1.0; /* bias: lr_mult 2, decay_mult 0 */
        Bb -= hb;
    }
    assert_int_equal(dlg_net_read(net, w, DLG_DATA, wv, 2), 0);
    assert_int_equal(dlg_net_read(net, b, DLG_DATA, &bv, 1), 0);
    assert_float_equal(wv[0], W[0], 1e-6);
    assert_float_equal(wv[1], W[1], 1e-6);
    assert_float_equal(bv, Bb, 1e-6);
    dlg_net_destroy(net);
}

static void test_dropout(void **st)
{
    enum { N = 4000 };
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 1, N, 1, 1);
    int y = dlg_dropout(net, "drop", x, 0.25f);
    dlg_plan_opts o = {.backend = "ref", .train = true, .seed = 5, .input_grads = true};
    assert_int_equal(dlg_net_plan(net, &o), 0);
    static float xv[N], yv[N], g[N], dx[N];
    for (int i = 0; i < N; i++)
        xv[i] = 1.0f + (float)i / N, g[i] = 2.0f;
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, xv, N), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, y, DLG_DATA, yv, N), 0);
    assert_int_equal(dlg_net_write(net, y, DLG_DIFF, g, N), 0);
    assert_int_equal(dlg_net_backward(net), 0);
    assert_int_equal(dlg_net_read(net, x, DLG_DIFF, dx, N), 0);
    int kept = 0;
    for (int i = 0; i < N; i++) {
        if (yv[i] != 0) {
            kept++;
            assert_float_equal(yv[i], xv[i] / 0.75f, 1e-5);
            assert_float_equal(dx[i], 2.0f / 0.75f, 1e-5);
        } else {
            assert_float_equal(dx[i], 0, 0);
        }
    }
    assert_true(abs(kept - 3000) < 150);
    assert_int_equal(dlg_net_set_train(net, false), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, y, DLG_DATA, yv, N), 0);
    assert_memory_equal(xv, yv, sizeof xv);
    dlg_net_destroy(net);
}

/* Running statistics after one training forward: 0.1 of the batch's. */
static void test_bn_running(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 2, 1, 1, 2);
    int y = dlg_batchnorm(net, "bn", x, 1e-5f);
    plan(net, true);
    float xv[4] = {1, 2, 3, 6}, yv[4], m, v;
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, xv, 4), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, y, DLG_DATA, yv, 4), 0);
    assert_float_equal(yv[0] + yv[1] + yv[2] + yv[3], 0, 1e-5);
    assert_int_equal(dlg_net_read(net, dlg_net_param(net, "bn", 2), DLG_DATA, &m, 1), 0);
    assert_int_equal(dlg_net_read(net, dlg_net_param(net, "bn", 3), DLG_DATA, &v, 1), 0);
    assert_float_equal(m, 0.1 * 3.0, 1e-6);
    assert_float_equal(v, 0.9 + 0.1 * (14.0 / 3.0), 1e-5); /* unbiased: 14/3 */
    dlg_net_destroy(net);
}

/* dlg_plan_opts.profile: per-layer call counts and times, reset, and the
 * errors for a net that was not planned to profile or a bad index. */
static void test_layer_profile(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "data", 2, 3, 32, 32), lab = dlg_labels(net, "label", 2);
    int c = dlg_conv(net, "conv", x, 64, 3, 1, 1, 1);
    int r = dlg_relu(net, "relu", c);
    /* pooled first, so that the conv outweighs every other layer by far
     * (a preempted thread on a loaded machine must not reorder them) */
    dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", dlg_global_avg_pool(net, "pool", r), 10), lab);
    dlg_plan_opts o = {.backend = "ref", .train = true, .seed = 3, .profile = true};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    uint64_t f, b, calls;
    assert_int_equal(dlg_net_layer_time(net, 0, &f, &b, &calls), 0);
    assert_true(f == 0 && b == 0 && calls == 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dlg_net_forward(net), 0);
        assert_int_equal(dlg_net_backward(net), 0);
    }
    uint64_t rf, rb, rcalls;
    /* the ReLU is folded into the conv (a training plan too): it runs nothing */
    assert_int_equal(dlg_net_layer_time(net, 1, &rf, &rb, &rcalls), 0);
    assert_true(rf == 0 && rb == 0 && rcalls == 0);
    assert_int_equal(dlg_net_layer_time(net, 0, &f, &b, &calls), 0);
    assert_int_equal(dlg_net_layer_time(net, 2, &rf, &rb, &rcalls), 0);
    assert_int_equal(calls, 3);
    assert_int_equal(rcalls, 3);
    /* the reference conv does 2 x 64 x 27 x 1024 multiply-adds, the pool
     * 128 Ki adds: the conv's time must show as the larger */
    assert_true(f > rf && b > rb && rf > 0);
    int order[8];
    assert_int_equal(dlg_net_layers_by_time(net, order, 2), 2);
    assert_int_equal(order[0], 0); /* the conv, the slowest */
    assert_int_equal(dlg_net_layers_by_time(net, order, 8), dlg_net_layer_count(net));
    dlg_net_layer_time_reset(net);
    assert_int_equal(dlg_net_layer_time(net, 0, &f, &b, &calls), 0);
    assert_true(f == 0 && b == 0 && calls == 0);
    assert_int_equal(dlg_net_layer_time(net, 9, &f, &b, &calls), -DLG_EINVAL);
    dlg_net_destroy(net);

    net = mk();
    x = dlg_input(net, "data", 1, 1, 2, 2);
    dlg_relu(net, "relu", x);
    plan(net, false);
    assert_int_equal(dlg_net_layer_time(net, 0, &f, &b, &calls), -DLG_ENOTSUP);
    assert_int_equal(dlg_net_layers_by_time(net, order, 8), -DLG_ENOTSUP);
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes_and_counts),
        cmocka_unit_test(test_pool_rounding),
        cmocka_unit_test(test_sticky_errors),
        cmocka_unit_test(test_bad_label),
        cmocka_unit_test(test_fillers),
        cmocka_unit_test(test_sgd),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_bn_running),
        cmocka_unit_test(test_layer_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
