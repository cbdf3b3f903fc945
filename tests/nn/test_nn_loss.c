/* Weighted and multiple softmax losses (an auxiliary classifier): backward
 * trains on the weighted sum, each loss blob holds its own unweighted
 * value, and a bad weight is one clear error.  Ref and cpu backends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef DLG_NN_HAVE_DNNL
static const char *const backends[] = {"ref", "cpu"};
#else
static const char *const backends[] = {"ref"};
#endif
#define NBACKENDS (int)(sizeof backends / sizeof backends[0])

/* x -> conv "trunk" -> fc "main" -> loss "main/loss" (weight 1)
 *               \\-> fc "aux" -> loss "aux/loss" (weight w) */
static dlg_net *make(const char *backend, float w)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "two-heads"), 0);
    int x = dlg_input(net, "x", 4, 3, 8, 8), y = dlg_labels(net, "y", 4);
    int t = dlg_relu(net, "trunk/relu", dlg_conv(net, "trunk", x, 6, 3, 1, 1, 1));
    dlg_softmax_loss(net, "main/loss", dlg_fc(net, "main", t, 5), y);
    dlg_softmax_loss_weighted(net, "aux/loss", dlg_fc(net, "aux", t, 5), y, w);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .train = true, .seed = 5};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    float lab[4] = {0, 3, 1, 4};
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "y"), DLG_DATA, lab, 4), 0);
    assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, "x"), FILL_GAUSS, 17), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_backward(net), 0);
    return net;
}

static void read_param_grad(dlg_net *net, const char *layer, float *g, size_t n)
{
    assert_int_equal(dlg_net_read(net, dlg_net_param(net, layer, 0), DLG_DIFF, g, n), 0);
}

static double max_abs(const float *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)v[i]));
    return m;
}

static void weighted(const char *backend)
{
    dlg_net *one = make(backend, 1.0f), *w = make(backend, 0.4f);
    float l1[3], lw[3];
    assert_int_equal(dlg_net_read(one, dlg_net_blob(one, "aux/loss"), DLG_DATA, l1, 3), 0);
    assert_int_equal(dlg_net_read(w, dlg_net_blob(w, "aux/loss"), DLG_DATA, lw, 3), 0);
    assert_true(fabsf(l1[0] - lw[0]) < 1e-6f); /* the blob is unweighted */
    /* the aux head's gradient scales with its weight alone */
    enum { NA = 5 * 6 * 8 * 8, NT = 6 * 3 * 3 * 3 };
    float ga1[NA], gaw[NA], gm1[NA], gmw[NA], gt1[NT], gtw[NT], tm[NT], ta[NT];
    read_param_grad(one, "aux", ga1, NA);
    read_param_grad(w, "aux", gaw, NA);
    read_param_grad(one, "main", gm1, NA);
    read_param_grad(w, "main", gmw, NA);
    double err = 0, m = max_abs(ga1, NA);
    assert_true(m > 1e-4);
    for (int i = 0; i < NA; i++) {
        err = fmax(err, fabs(gaw[i] - 0.4 * ga1[i]) / m);
        assert_true(fabsf(gmw[i] - gm1[i]) <= 1e-6f * (float)max_abs(gm1, NA));
    }
    assert_true(err < 1e-5);
    /* the shared trunk receives main + w * aux: with M and A from the nets
     * at w = 1 and 0.4, a third net at 0.7 must get M + 0.7 A */
    dlg_net *w7 = make(backend, 0.7f);
    float g7[NT];
    read_param_grad(one, "trunk", gt1, NT);
    read_param_grad(w, "trunk", gtw, NT);
    read_param_grad(w7, "trunk", g7, NT);
    for (int i = 0; i < NT; i++) {
        ta[i] = (gt1[i] - gtw[i]) / 0.6f;
        tm[i] = gt1[i] - ta[i];
    }
    double mt = max_abs(gt1, NT);
    assert_true(max_abs(ta, NT) > 1e-3 * mt && max_abs(tm, NT) > 1e-3 * mt);
    for (int i = 0; i < NT; i++)
        assert_true(fabs(g7[i] - (tm[i] + 0.7 * ta[i])) < 1e-4 * mt);
    dlg_net_destroy(w7);
    dlg_net_destroy(one);
    dlg_net_destroy(w);
}

static void test_weighted_losses(void **st)
{
    for (int b = 0; b < NBACKENDS; b++)
        weighted(backends[b]);
}

static void test_bad_weight(void **st)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "bad"), 0);
    int x = dlg_input(net, "x", 2, 4, 1, 1), y = dlg_labels(net, "y", 2);
    assert_true(dlg_softmax_loss_weighted(net, "l", x, y, -1.0f) < 0);
    assert_non_null(strstr(dlg_net_error(net), "weight"));
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weighted_losses),
        cmocka_unit_test(test_bad_weight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
