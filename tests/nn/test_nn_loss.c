/* Weighted and multiple softmax losses (an auxiliary classifier): backward
 * trains on the weighted sum, each loss blob holds its own unweighted
 * value, and a bad weight is one clear error.  Ref and cpu backends.  The
 * cpu backend's own loss kernel against the reference at a language
 * model's vocabulary width, ties in the ranking and bad labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    for (int b = 0; b < tu_nbackends; b++)
        weighted(tu_backends[b]);
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

#ifdef DLG_NN_HAVE_DNNL
/* rows; classes (not multiples of 8): a vocabulary's width, and one whose
 * log-probabilities the kernel takes in two chunks (20 rows, then 3) */
enum { WN = 23, WK = 10003, WK_CHUNKED = 400003 };

/* x (WN x wk) -> loss; the label's score is the row's maximum in some
 * rows, third or tied with others in some, anywhere in the rest. */
static dlg_net *wide(const char *backend, const float *lab, int64_t wk)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "wide"), 0);
    int x = dlg_input(net, "x", WN, wk, 1, 1), y = dlg_labels(net, "y", WN);
    dlg_softmax_loss(net, "loss", x, y);
    dlg_plan_opts o = {
        .backend = backend, .threads = 2, .train = true, .seed = 5, .input_grads = true};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    float *v = malloc(sizeof(float) * WN * wk);
    assert_non_null(v);
    tu_fill(v, WN * wk, FILL_GAUSS, 31);
    for (int i = 0; i < WN; i++) {
        float *row = v + (size_t)i * wk, *c = row + (int64_t)lab[i];
        if (i % 4 == 0)
            *c = 9.0f; /* above every N(0,1) draw: top-1 */
        else if (i % 4 == 1) {
            *c = 8.0f; /* third: top-5, not top-1 */
            row[(i * 13) % wk] = row[(i * 13) % wk] == *c ? 9.0f : 9.5f;
            row[(i * 29 + 1) % wk] = 9.25f;
        } else if (i % 4 == 2)
            row[(i * 17) % wk] = *c; /* a tie counts as not above */
    }
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, v, (size_t)WN * wk), 0);
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, WN), 0);
    free(v);
    return net;
}

static void compare_wide(int64_t wk)
{
    float lab[WN];
    for (int i = 0; i < WN; i++)
        lab[i] = (float)((i * 4099) % wk);
    lab[1] = 0; /* the first and the last class */
    lab[2] = wk - 1;
    dlg_net *ref = wide("ref", lab, wk), *cpu = wide("cpu", lab, wk);
    /* the cpu backend's kernel, not the reference fallback */
    assert_string_equal(dlg_net_layer_impl(cpu, dlg_net_layer_count(cpu) - 1), "cpu");
    float lr[3], lc[3];
    for (int pass = 0; pass < 2; pass++) { /* twice: nothing kept between steps */
        assert_int_equal(dlg_net_forward(ref), 0);
        assert_int_equal(dlg_net_forward(cpu), 0);
        assert_int_equal(dlg_net_backward(ref), 0);
        assert_int_equal(dlg_net_backward(cpu), 0);
    }
    int lb = dlg_net_blob(ref, "loss"), xb = dlg_net_blob(ref, "x");
    assert_int_equal(dlg_net_read(ref, lb, DLG_DATA, lr, 3), 0);
    assert_int_equal(dlg_net_read(cpu, lb, DLG_DATA, lc, 3), 0);
    assert_true(fabsf(lc[0] - lr[0]) < 1e-5f * lr[0]);
    assert_true(lr[1] > 0.2f && lr[1] < 0.4f && lr[2] > lr[1]); /* the cases above */
    assert_true(lc[1] == lr[1] && lc[2] == lr[2]);
    float *gr = malloc(sizeof(float) * WN * wk), *gc = malloc(sizeof(float) * WN * wk);
    assert_non_null(gr);
    assert_non_null(gc);
    assert_int_equal(dlg_net_read(ref, xb, DLG_DIFF, gr, (size_t)WN * wk), 0);
    assert_int_equal(dlg_net_read(cpu, xb, DLG_DIFF, gc, (size_t)WN * wk), 0);
    double m = max_abs(gr, (size_t)WN * wk), d = 0, rowsum = 0;
    for (size_t i = 0; i < (size_t)WN * wk; i++)
        d = fmax(d, fabs((double)gc[i] - gr[i]));
    for (int64_t k = 0; k < wk; k++) /* softmax - onehot sums to 0 per row */
        rowsum += gc[(size_t)5 * wk + k];
    assert_true(m > 1e-3 && d < 1e-5 * m);
    assert_true(fabs(rowsum) < 1e-6);
    free(gr);
    free(gc);
    dlg_net_destroy(ref);
    dlg_net_destroy(cpu);
}

static void test_cpu_loss_wide(void **st)
{
    compare_wide(WK);
    compare_wide(WK_CHUNKED);
}

/* A label outside [0, classes) or not an integer: the step fails with the
 * layer named, forward and backward, and nothing is read out of bounds. */
static void test_cpu_loss_bad_label(void **st)
{
    const float bad[3] = {WK, -1, 2.5f};
    for (int b = 0; b < 3; b++) {
        float lab[WN] = {0};
        dlg_net *net = wide("cpu", lab, WK);
        assert_int_equal(dlg_net_forward(net), 0);
        lab[WN - 1] = bad[b];
        assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "y"), DLG_DATA, lab, WN), 0);
        assert_true(dlg_net_backward(net) < 0);
        assert_non_null(strstr(dlg_net_error(net), "loss"));
        assert_true(dlg_net_forward(net) < 0);
        dlg_net_destroy(net);
    }
}
#endif

/* A certain class (its logit far above the rest): the loss is 0 or a hair
 * above, never below (oneDNN's vector log rounds such a log-probability
 * up to a tiny positive value; a mean of those went negative). */
static void test_certain_class_loss_not_negative(void **st)
{
    enum { CN = 64, CK = 10 };
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *net;
        assert_int_equal(dlg_net_create(&net, "certain"), 0);
        int x = dlg_input(net, "x", CN, CK, 1, 1), y = dlg_labels(net, "y", CN);
        int loss = dlg_softmax_loss(net, "loss", x, y);
        dlg_plan_opts o = {.backend = tu_backends[b], .threads = 2, .train = false, .seed = 5};
        if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
            fail_msg("%s", dlg_net_error(net));
        float logits[CN * CK], lab[CN], out[3];
        tu_fill(logits, CN * CK, FILL_GAUSS, 23);
        for (int i = 0; i < CN; i++) {
            lab[i] = (float)(i % CK);
            logits[i * CK + i % CK] = 30.0f + (float)(i % 7); /* certain, at several offsets */
        }
        assert_int_equal(dlg_net_write(net, x, DLG_DATA, logits, CN * CK), 0);
        assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, CN), 0);
        assert_int_equal(dlg_net_forward(net), 0);
        assert_int_equal(dlg_net_read(net, loss, DLG_DATA, out, 3), 0);
        if (!(out[0] >= 0 && out[0] < 1e-6f))
            fail_msg("%s: loss %g, expected in [0, 1e-6)", tu_backends[b], (double)out[0]);
        assert_float_equal(out[1], 1.0f, 0);
        dlg_net_destroy(net);
    }
}

/* Diverged scores: a NaN in a row makes the loss NaN on every backend (the
 * cpu kernel's clamp of a rounded-up log-probability turned it into 0),
 * and a row whose label score is NaN, or with a NaN anywhere (it ranks
 * first, as argmax does), is no top-1 or top-5 hit. */
static void test_nan_scores(void **st)
{
    enum { NN = 3, NK = 10 }; /* 10 classes: the cpu ranking's vector and tail loops */
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *net;
        assert_int_equal(dlg_net_create(&net, "nan"), 0);
        int x = dlg_input(net, "x", NN, NK, 1, 1), y = dlg_labels(net, "y", NN);
        int loss = dlg_softmax_loss(net, "loss", x, y);
        dlg_plan_opts o = {.backend = tu_backends[b], .threads = 2, .train = false, .seed = 5};
        if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
            fail_msg("%s", dlg_net_error(net));
        float logits[NN * NK] = {0}, lab[NN] = {1, 2, 3}, out[3];
        for (int i = 0; i < NN; i++)
            logits[i * NK + i + 1] = 5; /* every row certain of its label ... */
        logits[0 * NK + 1] = NAN;       /* ... but row 0's label score */
        logits[1 * NK + 0] = NAN;       /* and a vector-loop entry of row 1 */
        logits[2 * NK + 9] = NAN;       /* and a tail entry of row 2 */
        assert_int_equal(dlg_net_write(net, x, DLG_DATA, logits, NN * NK), 0);
        assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, NN), 0);
        assert_int_equal(dlg_net_forward(net), 0);
        assert_int_equal(dlg_net_read(net, loss, DLG_DATA, out, 3), 0);
        if (!isnan(out[0]) || out[1] != 0 || fabsf(out[2] - 2.0f / 3) > 1e-6f)
            fail_msg("%s: loss %g top-1 %g top-5 %g, expected nan 0 0.667", tu_backends[b],
                     (double)out[0], (double)out[1], (double)out[2]);
        dlg_net_destroy(net);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weighted_losses),
        cmocka_unit_test(test_bad_weight),
        cmocka_unit_test(test_certain_class_loss_not_negative),
        cmocka_unit_test(test_nan_scores),
#ifdef DLG_NN_HAVE_DNNL
        cmocka_unit_test(test_cpu_loss_wide),
        cmocka_unit_test(test_cpu_loss_bad_label),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
