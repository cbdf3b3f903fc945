/* Gradient checks: every reference layer's backward against central finite
 * differences of its forward (objective in double). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <math.h>
#include <stdio.h>

static dlg_net *mk(void)
{
    dlg_net *net = NULL;
    assert_int_equal(dlg_net_create(&net, "grad"), 0);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.5f},
                        (dlg_filler){DLG_FILL_GAUSSIAN, 0.5f});
    return net;
}

/* Plans on the reference backend, fills inputs, checks the inputs "x",
 * "x2" and the first nparams params of `layer`. */
static void check(dlg_net *net, int out, bool loss, const char *layer, int nparams, fill_mode mode)
{
    if (dlg_net_status(net) < 0)
        fail_msg("build: %s", dlg_net_error(net));
    dlg_plan_opts o = {.backend = "ref", .train = true, .seed = 7, .input_grads = true};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("plan: %s", dlg_net_error(net));
    int ids[8], n = 0;
    const char *inputs[] = {"x", "x2"};
    for (int i = 0; i < 2; i++) {
        int b = dlg_net_blob(net, inputs[i]);
        if (b >= 0) {
            assert_int_equal(tu_fill_blob(net, b, mode, 11 + (uint64_t)i), 0);
            ids[n++] = b;
        }
    }
    int y = dlg_net_blob(net, "y");
    if (y >= 0) {
        float lab[16];
        int64_t cnt = tu_count(net, y);
        for (int64_t i = 0; i < cnt; i++)
            lab[i] = (float)((i * 3) % 5);
        assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, (size_t)cnt), 0);
    }
    for (int i = 0; i < nparams; i++) {
        ids[n] = dlg_net_param(net, layer, i);
        assert_true(ids[n] >= 0);
        n++;
    }
    double worst = tu_gradcheck(net, out, loss, ids, n, 1e-2, 150);
    printf("  %-10s worst relative error %.2e\n", layer, worst);
    assert_true(worst < 2e-3);
    dlg_net_destroy(net);
}

static void conv_case(int c, int h, int w, const dlg_conv_spec *s)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 2, c, h, w);
    int out = dlg_conv_ex(net, "L", x, s);
    check(net, out, false, "L", s->no_bias ? 1 : 2, FILL_GAUSS);
}

static void test_conv(void **st)
{
    conv_case(3, 6, 6, &(dlg_conv_spec){4, 3, 3, 1, 1, 1, 1, 1, 1, 1, false});
    conv_case(4, 7, 7, &(dlg_conv_spec){6, 3, 3, 2, 2, 1, 1, 1, 1, 2, false}); /* groups, stride */
    conv_case(2, 7, 8, &(dlg_conv_spec){4, 3, 3, 1, 1, 2, 2, 2, 2, 1, false}); /* dilation */
    conv_case(4, 6, 5, &(dlg_conv_spec){4, 3, 2, 2, 1, 0, 1, 1, 2, 4, true}); /* depthwise, mixed */
    conv_case(3, 5, 5, &(dlg_conv_spec){2, 1, 1, 1, 1, 0, 0, 1, 1, 1, true}); /* 1x1, no bias */
}

static void pool_case_r(dlg_pool_rounding r, bool avg, int h, int k, int s, int p,
                        int expect_out)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 2, 2, h, h);
    dlg_net_set_pool_rounding(net, r);
    int out = avg ? dlg_avg_pool(net, "L", x, k, s, p) : dlg_max_pool(net, "L", x, k, s, p);
    dlg_shape sh;
    assert_int_equal(dlg_net_shape(net, out, &sh), 0);
    assert_int_equal(sh.d[2], expect_out);
    check(net, out, false, "L", 0, FILL_DISTINCT);
}

static void pool_case(bool avg, int h, int k, int s, int p, int expect_out)
{
    pool_case_r(DLG_POOL_CEIL, avg, h, k, s, p, expect_out);
}

/* PyTorch's max_pool2d / avg_pool2d (count_include_pad) in floor mode,
 * written out: output (oh, ow) of an h x h plane. */
static double torch_pool(const float *x, int h, bool avg, int k, int s, int p, int oh, int ow)
{
    double acc = avg ? 0 : -INFINITY;
    for (int i = oh * s - p; i < oh * s - p + k; i++)
        for (int j = ow * s - p; j < ow * s - p + k; j++) {
            if (i < 0 || j < 0 || i >= h || j >= h)
                continue; /* padding: 0 in the sum, never the max */
            acc = avg ? acc + x[i * h + j] : fmax(acc, x[i * h + j]);
        }
    return avg ? acc / (k * k) : acc;
}

/* The reference backend's floor-mode forward is PyTorch's, at sizes where
 * ceil mode has one more output per axis (8 -> 3 or 4; 11 -> 3, k5 s3). */
static void floor_values(bool avg, int h, int k, int s, int p)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 1, 1, h, h);
    dlg_net_set_pool_rounding(net, DLG_POOL_FLOOR);
    int y = avg ? dlg_avg_pool(net, "L", x, k, s, p) : dlg_max_pool(net, "L", x, k, s, p);
    dlg_plan_opts o = {.backend = "ref", .seed = 1};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    float in[121], out[16];
    tu_fill(in, (int64_t)h * h, FILL_GAUSS, 3);
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, in, (size_t)h * h), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    int o_n = (h + 2 * p - k) / s + 1;
    assert_int_equal(tu_count(net, y), o_n * o_n);
    assert_int_equal(dlg_net_read(net, y, DLG_DATA, out, (size_t)(o_n * o_n)), 0);
    for (int i = 0; i < o_n; i++)
        for (int j = 0; j < o_n; j++)
            assert_float_equal(out[i * o_n + j], torch_pool(in, h, avg, k, s, p, i, j), 1e-6);
    dlg_net_destroy(net);
}

/* Floor mode: the forward as PyTorch's, the backward as its finite
 * differences (input rows past the last window get no gradient) */
static void test_pool_floor(void **st)
{
    for (int m = 0; m < 2; m++) {
        bool avg = m;
        floor_values(avg, 8, 3, 2, 0);
        floor_values(avg, 8, 3, 2, 1);
        floor_values(avg, 11, 5, 3, 1);
        pool_case_r(DLG_POOL_FLOOR, avg, 6, 3, 2, 0, 2); /* ceil: 3 */
        pool_case_r(DLG_POOL_FLOOR, avg, 6, 3, 2, 1, 3); /* ceil: 4 */
        pool_case_r(DLG_POOL_FLOOR, avg, 11, 5, 3, 1, 3);
    }
}

static void test_pool(void **st)
{
    for (int m = 0; m < 2; m++) {
        bool mode = m;
        pool_case(mode, 6, 3, 2, 0, 3); /* ceil: last window overhangs */
        pool_case(mode, 6, 3, 2, 1, 4); /* overhang past the pad */
        pool_case(mode, 5, 2, 2, 1, 3); /* last window would start in the pad */
        pool_case(mode, 7, 3, 1, 1, 7);
    }
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 2, 3, 4, 5);
    check(net, dlg_global_avg_pool(net, "L", x), false, "L", 0, FILL_GAUSS);
}

static void test_lrn(void **st)
{
    int sizes[] = {5, 3};
    for (int i = 0; i < 2; i++) {
        dlg_net *net = mk();
        int x = dlg_input(net, "x", 2, 7, 3, 3);
        check(net, dlg_lrn(net, "L", x, sizes[i], 0.5f, 0.75f, 2.0f), false, "L", 0, FILL_GAUSS);
    }
}

static void test_relu_fc_softmax(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 2, 3, 4, 4);
    check(net, dlg_relu(net, "L", x), false, "L", 0, FILL_DISTINCT);
    net = mk();
    x = dlg_input(net, "x", 3, 4, 2, 3);
    check(net, dlg_fc(net, "L", x, 5), false, "L", 2, FILL_GAUSS);
    net = mk();
    x = dlg_input(net, "x", 2, 6, 2, 2);
    check(net, dlg_softmax(net, "L", x), false, "L", 0, FILL_GAUSS);
}

static void test_batchnorm(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 3, 3, 3, 4);
    check(net, dlg_batchnorm(net, "L", x, 1e-5f), false, "L", 2, FILL_GAUSS);
}

static void test_concat_add_loss(void **st)
{
    dlg_net *net = mk();
    int xs[2] = {dlg_input(net, "x", 2, 2, 3, 3), dlg_input(net, "x2", 2, 3, 3, 3)};
    check(net, dlg_concat(net, "L", 2, xs), false, "L", 0, FILL_GAUSS);
    net = mk();
    int a = dlg_input(net, "x", 2, 3, 2, 2), b = dlg_input(net, "x2", 2, 3, 2, 2);
    check(net, dlg_add(net, "L", a, b), false, "L", 0, FILL_GAUSS);
    net = mk();
    int x = dlg_input(net, "x", 4, 5, 1, 1), y = dlg_labels(net, "y", 4);
    check(net, dlg_softmax_loss(net, "L", x, y), true, "L", 0, FILL_GAUSS);
}

/* A small DAG: x feeds two branches (split), joined by add and concat,
 * then fc and loss: checks split gradients summing and composition. */
static void test_dag(void **st)
{
    dlg_net *net = mk();
    int x = dlg_input(net, "x", 2, 3, 5, 5), y = dlg_labels(net, "y", 2);
    int a = dlg_conv(net, "a", x, 4, 3, 1, 1, 1);
    int b = dlg_conv(net, "b", x, 4, 1, 1, 0, 1);
    int s = dlg_add(net, "s", a, b);
    int cat[2] = {s, x};
    int c = dlg_concat(net, "c", 2, cat);
    int p = dlg_max_pool(net, "p", c, 3, 2, 0);
    int f = dlg_fc(net, "L", p, 5);
    check(net, dlg_softmax_loss(net, "loss", f, y), true, "L", 2, FILL_DISTINCT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv),      cmocka_unit_test(test_pool),
        cmocka_unit_test(test_pool_floor),
        cmocka_unit_test(test_lrn),       cmocka_unit_test(test_relu_fc_softmax),
        cmocka_unit_test(test_batchnorm), cmocka_unit_test(test_concat_add_loss),
        cmocka_unit_test(test_dag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
