/* dlg_plan_opts.stop: a plan asks it before each layer's kernel setup and
 * each million parameter values, and ends at once with -DLG_ESTOP when it
 * says so (a workload's Ctrl-C during VGG16's seconds of setup); the
 * values drawn chunk by chunk are those of one draw per blob. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rng.h"

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <stdlib.h>
#include <string.h>

/* The asks so far, and the one (1-based) that answers true; 0: none. */
typedef struct asker {
    int asks, stop_at;
} asker;

static bool ask(void *ctx)
{
    asker *a = ctx;
    return ++a->asks == a->stop_at;
}

/* data (2500) -> fc1 (1000: 2.5 million weights, three chunks) -> relu ->
 * fc2 (10), planned on ref (seed 7) with a asked; returns the plan's code. */
static int plan_mlp(dlg_net **net, asker *a)
{
    assert_int_equal(dlg_net_create(net, "stop"), 0);
    int x = dlg_input(*net, "data", 1, 2500, 1, 1);
    int h = dlg_fc(*net, "fc1", x, 1000);
    dlg_fc(*net, "fc2", dlg_relu(*net, "relu", h), 10);
    assert_int_equal(dlg_net_status(*net), 0);
    dlg_plan_opts o = {.backend = "ref", .seed = 7, .stop = ask, .stop_ctx = a};
    return dlg_net_plan(*net, &o);
}

/* Never stopped: asked before each of the 3 layers and each chunk of the
 * 4 parameters (3 + 1 + 1 + 1), and fc1's weights are 0.01f x N(0, 1),
 * value i the half of pair i / 2 of the blob's stream (rng.h), across the
 * chunks' seams. */
static void test_asked_values_unchanged(void **st)
{
    (void)st;
    dlg_net *net;
    asker a = {0, 0};
    assert_int_equal(plan_mlp(&net, &a), 0);
    assert_int_equal(a.asks, 3 + 6);
    int w = dlg_net_param(net, "fc1", 0);
    assert_true(w >= 0);
    size_t n = 2500 * 1000;
    float *got = malloc(n * sizeof *got);
    assert_non_null(got);
    assert_int_equal(dlg_net_read(net, w, DLG_DATA, got, n), 0);
    uint64_t s = 7 + 0x632be59bd9b4e019ull * (uint64_t)(w + 1);
    size_t off = 0;
    for (size_t i = 0; i < n; i += 2) {
        double z0, z1;
        dlg_rng_gauss_pair_at(s, i / 2, &z0, &z1);
        if (got[i] != (float)((double)0.01f * z0) && !off)
            off = i + 1;
        if (got[i + 1] != (float)((double)0.01f * z1) && !off)
            off = i + 2;
    }
    assert_int_equal(off, 0); /* 1-based index of the first value that differs */
    /* and they are N(0, 0.01^2): mean, spread, and the pairs' halves
     * uncorrelated (within 5 standard errors over 2.5 million) */
    double sum = 0, sq = 0, cross = 0;
    for (size_t i = 0; i < n; i += 2) {
        sum += (double)got[i] + got[i + 1];
        sq += (double)got[i] * got[i] + (double)got[i + 1] * got[i + 1];
        cross += (double)got[i] * got[i + 1];
    }
    double mean = sum / (double)n, var = sq / (double)n - mean * mean, se = 1 / sqrt((double)n);
    assert_true(fabs(mean) < 5 * 0.01 * se);
    assert_true(fabs(var / 1e-4 - 1) < 5 * sqrt(2.0) * se);
    assert_true(fabs(cross / (double)(n / 2) / 1e-4) < 5 * sqrt(2.0) * se);
    free(got);
    dlg_net_destroy(net);
}

/* Stopped at the 5th ask, in fc1's weights (after the 3 layers' setups):
 * -DLG_ESTOP at once, sticky with its line, and not asked again. */
static void test_stop_in_params(void **st)
{
    (void)st;
    dlg_net *net;
    asker a = {0, 5};
    assert_int_equal(plan_mlp(&net, &a), -DLG_ESTOP);
    assert_int_equal(a.asks, 5);
    assert_int_equal(dlg_net_status(net), -DLG_ESTOP);
    assert_string_equal(dlg_net_error(net), "nn: planning 'stop' stopped, as asked");
    dlg_net_destroy(net); /* what was set up and allocated goes (ASan: no leak) */
}

/* Stopped at the first ask: before any layer's kernel is set up. */
static void test_stop_first(void **st)
{
    (void)st;
    dlg_net *net;
    asker a = {0, 1};
    assert_int_equal(plan_mlp(&net, &a), -DLG_ESTOP);
    assert_int_equal(a.asks, 1);
    assert_int_equal(dlg_net_memory_bytes(net), 0); /* nothing allocated for blobs yet */
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_asked_values_unchanged),
        cmocka_unit_test(test_stop_in_params),
        cmocka_unit_test(test_stop_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
