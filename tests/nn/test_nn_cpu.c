/* The oneDNN cpu backend against the reference: every layer's forward and
 * backward (inputs and parameters) must agree within 1e-4 relative error
 * (max |cpu - ref| / max |ref| per tensor). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*build_fn)(dlg_net *net);

static dlg_net *make(build_fn build, const char *backend, bool train)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, backend), 0);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f},
                        (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f});
    build(net);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .train = train, .seed = 9,
                       .input_grads = true};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s: %s", backend, dlg_net_error(net));
    int y = dlg_net_blob(net, "y");
    if (y >= 0) {
        float lab[64];
        for (int64_t i = 0; i < tu_count(net, y); i++)
            lab[i] = (float)((i * 7) % 10);
        assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, (size_t)tu_count(net, y)), 0);
    }
    const char *in[2] = {"x", "x2"};
    for (int i = 0; i < 2; i++)
        if (dlg_net_blob(net, in[i]) >= 0)
            assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, in[i]), FILL_DISTINCT, 21 + (uint64_t)i), 0);
    return net;
}

static double rel_err(dlg_net *a, dlg_net *b, int blob, dlg_which w)
{
    int64_t n = tu_count(a, blob);
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    assert_int_equal(dlg_net_read(a, blob, w, x, (size_t)n), 0);
    assert_int_equal(dlg_net_read(b, blob, w, y, (size_t)n), 0);
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)x[i] - y[i]));
        m = fmax(m, fabs((double)y[i]));
    }
    free(x);
    free(y);
    return m > 0 ? d / m : d;
}

/* Runs forward + backward on both backends; compares the output, the
 * gradients of "x"/"x2" and of every parameter of layer "L". */
static void compare(const char *what, build_fn build, bool train)
{
    dlg_net *ref = make(build, "ref", true), *cpu = make(build, "cpu", true);
    if (!train) {
        assert_int_equal(dlg_net_set_train(ref, false), 0);
        assert_int_equal(dlg_net_set_train(cpu, false), 0);
    }
    int out = dlg_net_blob(ref, "L");
    assert_int_equal(dlg_net_forward(ref), 0);
    if (dlg_net_forward(cpu) < 0)
        fail_msg("%s", dlg_net_error(cpu));
    double worst = rel_err(cpu, ref, out, DLG_DATA);
    if (train) {
        int64_t n = tu_count(ref, out);
        float *g = malloc((size_t)n * sizeof(float));
        tu_fill(g, n, FILL_GAUSS, 5);
        bool loss = dlg_net_blob(ref, "y") >= 0;
        if (!loss) {
            assert_int_equal(dlg_net_write(ref, out, DLG_DIFF, g, (size_t)n), 0);
            assert_int_equal(dlg_net_write(cpu, out, DLG_DIFF, g, (size_t)n), 0);
        }
        free(g);
        assert_int_equal(dlg_net_backward(ref), 0);
        if (dlg_net_backward(cpu) < 0)
            fail_msg("%s", dlg_net_error(cpu));
        const char *in[2] = {"x", "x2"};
        for (int i = 0; i < 2; i++)
            if (dlg_net_blob(ref, in[i]) >= 0)
                worst = fmax(worst, rel_err(cpu, ref, dlg_net_blob(ref, in[i]), DLG_DIFF));
        for (int p = 0; p < 2 && dlg_net_param(ref, "L", p) >= 0; p++)
            worst = fmax(worst, rel_err(cpu, ref, dlg_net_param(ref, "L", p), DLG_DIFF));
        for (int p = 2; p < 4 && dlg_net_param(ref, "L", p) >= 0; p++) /* bn running stats */
            worst = fmax(worst, rel_err(cpu, ref, dlg_net_param(ref, "L", p), DLG_DATA));
    }
    printf("  %-28s %s max relative error %.2e\n", what, train ? "fwd+bwd" : "fwd    ", worst);
    assert_true(worst < 1e-4);
    dlg_net_destroy(ref);
    dlg_net_destroy(cpu);
}

#define X(n, c, h, w) dlg_input(net, "x", n, c, h, w)

static int conv_plain(dlg_net *net) { return dlg_conv(net, "L", X(2, 5, 9, 9), 8, 3, 1, 1, 1); }
static int conv_group(dlg_net *net) { return dlg_conv(net, "L", X(2, 8, 11, 11), 12, 5, 2, 2, 4); }
static int conv_dil(dlg_net *net) { return dlg_conv_dilated(net, "L", X(2, 4, 10, 9), 6, 3, 1, 2, 2, 2); }
static int conv_big(dlg_net *net) { return dlg_conv(net, "L", X(2, 3, 27, 27), 16, 11, 4, 0, 1); }
static int conv_nobias(dlg_net *net)
{
    dlg_conv_spec s = {16, 1, 1, 2, 2, 0, 0, 1, 1, 1, true};
    return dlg_conv_ex(net, "L", X(2, 32, 7, 7), &s);
}
static int pool_max(dlg_net *net) { return dlg_max_pool(net, "L", X(2, 3, 13, 13), 3, 2, 0); }
static int pool_max_pad(dlg_net *net) { return dlg_max_pool(net, "L", X(2, 3, 6, 6), 3, 2, 1); }
static int pool_avg(dlg_net *net) { return dlg_avg_pool(net, "L", X(2, 3, 8, 8), 3, 2, 0); }
static int pool_avg_pad(dlg_net *net) { return dlg_avg_pool(net, "L", X(2, 3, 7, 7), 3, 1, 1); }
static int pool_avg_fallback(dlg_net *net) { return dlg_avg_pool(net, "L", X(2, 3, 6, 6), 3, 2, 1); }
static int pool_global(dlg_net *net) { return dlg_global_avg_pool(net, "L", X(2, 16, 7, 7)); }
static int lrn(dlg_net *net) { return dlg_lrn(net, "L", X(2, 12, 5, 5), 5, 1e-2f, 0.75f, 1.0f); }
static int relu(dlg_net *net) { return dlg_relu(net, "L", X(2, 6, 5, 5)); }
static int bn(dlg_net *net) { return dlg_batchnorm(net, "L", X(4, 6, 5, 5), 1e-5f); }
static int fc(dlg_net *net) { return dlg_fc(net, "L", X(4, 8, 3, 3), 10); }
static int softmax(dlg_net *net) { return dlg_softmax(net, "L", X(3, 10, 2, 2)); }
static int loss_net(dlg_net *net)
{
    int x = X(4, 3, 9, 9), y = dlg_labels(net, "y", 4);
    int h = dlg_conv(net, "conv", x, 8, 3, 1, 1, 1);
    h = dlg_batchnorm(net, "bn", h, 1e-5f);
    int a = dlg_relu(net, "relu", h);
    int b = dlg_conv(net, "side", x, 8, 1, 1, 0, 1);
    h = dlg_add(net, "add", a, b);
    h = dlg_max_pool(net, "pool", h, 3, 2, 0);
    h = dlg_fc(net, "L", h, 10);
    return dlg_softmax_loss(net, "loss", h, y);
}

static void test_conv(void **st)
{
    compare("conv 3x3 pad 1", conv_plain, true);
    compare("conv 5x5 groups 4 stride 2", conv_group, true);
    compare("conv dilation 2 groups 2", conv_dil, true);
    compare("conv 11x11 stride 4", conv_big, true);
    compare("conv 1x1 stride 2 no bias", conv_nobias, true);
    compare("conv inference", conv_group, false);
}

static void test_pool(void **st)
{
    compare("max pool ceil", pool_max, true);
    compare("max pool pad", pool_max_pad, true);
    compare("avg pool ceil", pool_avg, true);
    compare("avg pool pad", pool_avg_pad, true);
    compare("avg pool (ref fallback)", pool_avg_fallback, true);
    compare("global avg pool", pool_global, true);
}

static void test_others(void **st)
{
    compare("lrn", lrn, true);
    compare("relu", relu, true);
    compare("batchnorm train", bn, true);
    compare("batchnorm inference", bn, false);
    compare("fc", fc, true);
    compare("softmax", softmax, true);
    compare("small net with loss", loss_net, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_conv), cmocka_unit_test(test_pool),
                                       cmocka_unit_test(test_others)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
