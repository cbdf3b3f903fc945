/* Inception-v3's size against the published figures (shared/FORMATS.md:
 * 5.71 GMACs, 27.2 M parameters) within 1%, and its shapes.
 *
 * The 27.2 M figure is torchvision's inception_v3 parameter count
 * (27,161,264), which includes the auxiliary classifier (3,326,696); the
 * main network alone has 23,834,568.  5.71 G multiply-adds is the main
 * network's forward at 299x299 (the aux head adds ~5.7 M, under 0.1%). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static dlg_net *build(bool aux, int n)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "inception-v3"), 0);
    if (dlg_model_inception_v3(net, n, 1000, 0, aux) < 0)
        fail_msg("build: %s", dlg_net_error(net));
    return net;
}

static void check(bool aux, double gmacs, double params)
{
    dlg_net *net = build(aux, 1);
    double m = (double)dlg_net_macs_total(net) / 1e9, p = (double)dlg_net_param_total(net);
    printf("  aux %-3s %.4f GMACs (published %.2f), %.0f params (torchvision %.0f)\n",
           aux ? "on" : "off", m, gmacs, p, params);
    assert_true(fabs(m / gmacs - 1) < 0.01);
    assert_true(fabs(p / params - 1) < 0.01);
    dlg_net_destroy(net);
}

static void test_sizes_with_aux(void **st)
{
    check(true, 5.71, 27161264);
    assert_true(fabs(27161264 / 27.2e6 - 1) < 0.01); /* FORMATS.md's rounded figure */
}

static void test_sizes_without_aux(void **st) { check(false, 5.71, 23834568); }

static int64_t channels(dlg_net *net, const char *blob, int64_t *hw)
{
    dlg_shape s;
    int b = dlg_net_blob(net, blob);
    assert_true(b >= 0);
    assert_int_equal(dlg_net_shape(net, b, &s), 0);
    *hw = s.d[2];
    return s.d[1];
}

/* The grid sizes and widths of torchvision's model at each stage. */
static void test_shapes(void **st)
{
    dlg_net *net = build(true, 2);
    static const struct {
        const char *blob;
        int64_t c, hw;
    } want[] = {{"maxpool1", 64, 73},           {"maxpool2", 192, 35},
                {"Mixed_5b.concat", 256, 35},   {"Mixed_5d.concat", 288, 35},
                {"Mixed_6a.concat", 768, 17},   {"Mixed_6e.concat", 768, 17},
                {"Mixed_7a.concat", 1280, 8},   {"Mixed_7c.concat", 2048, 8},
                {"avgpool", 2048, 1},           {"aux/logits", 1000, 1},
                {"AuxLogits.avg", 768, 5}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int64_t hw, c = channels(net, want[i].blob, &hw);
        if (c != want[i].c || hw != want[i].hw)
            fail_msg("%s: %lld x %lld, want %lld x %lld", want[i].blob, (long long)c,
                     (long long)hw, (long long)want[i].c, (long long)want[i].hw);
    }
    dlg_net_destroy(net);
}

#ifdef DLG_NN_HAVE_DNNL
/* One inference pass on the cpu backend: a finite loss near ln(1000) for
 * random inputs (the classifier starts near uniform). */
static void test_forward_cpu(void **st)
{
    dlg_net *net = build(false, 1);
    dlg_plan_opts o = {.backend = "cpu", .train = false, .seed = 1};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("plan: %s", dlg_net_error(net));
    size_t n = 3 * 299 * 299;
    float *x = malloc(n * sizeof(float)), label = 7, out[3];
    uint64_t s = 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((s >> 40) & 0xffff) / 65536.0f - 0.5f;
    }
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "data"), DLG_DATA, x, n), 0);
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "label"), DLG_DATA, &label, 1), 0);
    if (dlg_net_forward(net) < 0)
        fail_msg("forward: %s", dlg_net_error(net));
    assert_int_equal(dlg_net_read(net, dlg_net_blob(net, "loss"), DLG_DATA, out, 3), 0);
    printf("  cpu forward: loss %.3f (ln 1000 = %.3f)\n", out[0], log(1000.0));
    assert_true(isfinite(out[0]) && fabs(out[0] - log(1000.0)) < 1.5);
    free(x);
    dlg_net_destroy(net);
}

/* With the aux head, training updates it: its classifier has a gradient
 * (its loss is weighted 0.4 into backward) and one SGD step moves it. */
static void test_aux_head_trains_cpu(void **st)
{
    dlg_net *net;
    /* torchvision's smallest crop with the head (its 5x5 convolution needs
     * a 5x5 grid from the floor-mode 5/3 pool): one pixel less does not
     * build */
    const int crop = 299;
    assert_int_equal(dlg_net_create(&net, "too-small"), 0);
    assert_true(dlg_model_inception_v3(net, 1, 10, crop - 1, true) < 0);
    dlg_net_destroy(net);
    assert_int_equal(dlg_net_create(&net, "inception-v3-aux"), 0);
    if (dlg_model_inception_v3(net, 2, 10, crop, true) < 0)
        fail_msg("build: %s", dlg_net_error(net));
    dlg_plan_opts o = {.backend = "cpu", .train = true, .seed = 2, .threads = 2};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("plan: %s", dlg_net_error(net));
    size_t n = 2 * 3 * (size_t)crop * (size_t)crop;
    float *x = malloc(n * sizeof(float)), labels[2] = {3, 8};
    uint64_t s = 5;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((s >> 40) & 0xffff) / 65536.0f - 0.5f;
    }
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "data"), DLG_DATA, x, n), 0);
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "label"), DLG_DATA, labels, 2), 0);
    int w = dlg_net_param(net, "aux/logits", 0);
    size_t nw = 10 * 768;
    float *before = malloc(nw * sizeof(float)), *after = malloc(nw * sizeof(float));
    float *grad = malloc(nw * sizeof(float));
    assert_int_equal(dlg_net_read(net, w, DLG_DATA, before, nw), 0);
    dlg_sgd sgd = {0.1f, 0.9f, 0.0f};
    if (dlg_net_forward(net) < 0 || dlg_net_backward(net) < 0)
        fail_msg("step: %s", dlg_net_error(net));
    assert_int_equal(dlg_net_read(net, w, DLG_DIFF, grad, nw), 0);
    assert_int_equal(dlg_net_sgd_step(net, &sgd), 0);
    assert_int_equal(dlg_net_read(net, w, DLG_DATA, after, nw), 0);
    double g = 0, moved = 0;
    for (size_t i = 0; i < nw; i++) {
        g = fmax(g, fabs(grad[i]));
        moved = fmax(moved, fabs((double)after[i] - before[i]));
    }
    printf("  aux classifier: max |grad| %.3g, max step %.3g\n", g, moved);
    assert_true(g > 1e-6 && moved > 1e-7);
    free(x);
    free(before);
    free(after);
    free(grad);
    dlg_net_destroy(net);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_with_aux),
        cmocka_unit_test(test_sizes_without_aux),
        cmocka_unit_test(test_shapes),
#ifdef DLG_NN_HAVE_DNNL
        cmocka_unit_test(test_forward_cpu),
        cmocka_unit_test(test_aux_head_trains_cpu),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
