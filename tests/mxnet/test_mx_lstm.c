/* Embedding and LSTM layers: the reference LSTM against central finite
 * differences (every input, state and parameter, through y, hT and cT),
 * a tied embedding/decoder language model through its loss, oneDNN's LSTM
 * against the reference (forward and backward, two stacked layers), and
 * the global gradient norm used for clipping. */
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

enum { T = 3, B = 2, I = 3, H = 4 };

typedef struct lstm_net {
    dlg_net *net;
    int x, h0, c0, y, hT, cT;
} lstm_net;

/* x (T*B x in) -> `layers` stacked LSTMs of `hid`; h0/c0 per layer. */
static lstm_net build(int steps, int batch, int in, int hid, int layers)
{
    lstm_net m = {0};
    assert_int_equal(dlg_net_create(&m.net, "lstm"), 0);
    m.x = dlg_input(m.net, "x", steps * batch, in, 1, 1);
    int x = m.x;
    for (int k = 0; k < layers; k++) {
        char h[16], c[16], l[16];
        snprintf(h, sizeof h, "h0_%d", k);
        snprintf(c, sizeof c, "c0_%d", k);
        snprintf(l, sizeof l, "lstm%d", k);
        m.h0 = dlg_input(m.net, h, batch, hid, 1, 1);
        m.c0 = dlg_input(m.net, c, batch, hid, 1, 1);
        x = dlg_lstm(m.net, l, x, m.h0, m.c0, hid, steps, &m.hT, &m.cT);
    }
    m.y = x;
    if (dlg_net_status(m.net) < 0)
        fail_msg("build: %s", dlg_net_error(m.net));
    return m;
}

static void plan(dlg_net *net, const char *backend, bool input_grads)
{
    dlg_plan_opts o = {.backend = backend, .train = true, .seed = 5, .input_grads = input_grads};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("plan on %s: %s", backend, dlg_net_error(net));
}

static void fill_inputs(dlg_net *net, uint64_t seed)
{
    const char *names[] = {"x", "h0_0", "c0_0", "h0_1", "c0_1"};
    for (int k = 0; k < 5; k++) {
        int b = dlg_net_blob(net, names[k]);
        if (b >= 0)
            assert_int_equal(tu_fill_blob(net, b, FILL_GAUSS, seed + (uint64_t)k), 0);
    }
}

static void gradcheck_output(int which)
{
    lstm_net m = build(T, B, I, H, 1);
    plan(m.net, "ref", true);
    fill_inputs(m.net, 21);
    int out = which == 0 ? m.y : which == 1 ? m.hT : m.cT;
    int ids[6] = {m.x, m.h0, m.c0, dlg_net_param(m.net, "lstm0", 0),
                  dlg_net_param(m.net, "lstm0", 1), dlg_net_param(m.net, "lstm0", 2)};
    for (int i = 0; i < 6; i++)
        assert_true(ids[i] >= 0);
    double worst = tu_gradcheck(m.net, out, false, ids, 6, 1e-2, 200);
    printf("  lstm through %s: worst relative error %.2e\n",
           which == 0 ? "y" : which == 1 ? "hT" : "cT", worst);
    assert_true(worst < 2e-3);
    dlg_net_destroy(m.net);
}

static void test_gradcheck_y(void **st) { gradcheck_output(0); }
static void test_gradcheck_hT(void **st) { gradcheck_output(1); }
static void test_gradcheck_cT(void **st) { gradcheck_output(2); }

/* ids -> embedding -> LSTM -> decoder (tied or not) -> loss per token */
static dlg_net *lm(bool tied, const char *backend, int V, int D)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "lm"), 0);
    int ids = dlg_labels(net, "ids", T * B), y = dlg_labels(net, "y", T * B);
    int h0 = dlg_input(net, "h0", B, D, 1, 1), c0 = dlg_input(net, "c0", B, D, 1, 1);
    int e = dlg_embedding(net, "emb", ids, V, D);
    int o = dlg_lstm(net, "lstm", e, h0, c0, D, T, NULL, NULL);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f},
                        (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f});
    int logits = dlg_fc(net, "dec", o, V);
    if (tied)
        dlg_net_tie(net, "dec", "emb");
    dlg_softmax_loss(net, "loss", logits, y);
    if (dlg_net_status(net) < 0)
        fail_msg("build: %s", dlg_net_error(net));
    plan(net, backend, false);
    float idv[T * B], yv[T * B];
    for (int i = 0; i < T * B; i++) {
        idv[i] = (float)((i * 5 + 1) % V);
        yv[i] = (float)((i * 3 + 2) % V);
    }
    assert_int_equal(dlg_net_write(net, ids, DLG_DATA, idv, T * B), 0);
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, yv, T * B), 0);
    assert_int_equal(tu_fill_blob(net, h0, FILL_GAUSS, 3), 0);
    assert_int_equal(tu_fill_blob(net, c0, FILL_GAUSS, 4), 0);
    return net;
}

static void test_gradcheck_lm(void **st)
{
    for (int tied = 0; tied < 2; tied++) {
        dlg_net *net = lm(tied, "ref", 7, 4);
        int loss = dlg_net_blob(net, "loss");
        int ids[6], n = 0;
        ids[n++] = dlg_net_param(net, "emb", 0);
        for (int i = 0; i < 3; i++)
            ids[n++] = dlg_net_param(net, "lstm", i);
        ids[n++] = dlg_net_param(net, "dec", 0); /* the table itself when tied */
        ids[n++] = dlg_net_param(net, "dec", 1);
        double worst = tu_gradcheck(net, loss, true, ids, n, 1e-2, 100);
        printf("  %s language model: worst relative error %.2e\n", tied ? "tied" : "untied",
               worst);
        assert_true(worst < 2e-3);
        if (tied) { /* one parameter: the decoder's weight is the table */
            assert_int_equal(dlg_net_param(net, "dec", 0), dlg_net_param(net, "emb", 0));
            assert_int_equal(dlg_net_param_total(net), 7 * 4 + 2 * 16 * 4 + 16 + 7);
        }
        dlg_net_destroy(net);
    }
}

static void test_tie_mismatch(void **st)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "bad"), 0);
    int ids = dlg_labels(net, "ids", 4);
    int e = dlg_embedding(net, "emb", ids, 10, 6);
    dlg_fc(net, "dec", e, 9); /* 9 outputs for a 10-word table */
    assert_int_equal(dlg_net_tie(net, "dec", "emb"), -DLG_EINVAL);
    printf("  %s\n", dlg_net_error(net));
    dlg_net_destroy(net);
    assert_int_equal(dlg_net_create(&net, "bad2"), 0);
    int x = dlg_input(net, "x", 7, 3, 1, 1), h = dlg_input(net, "h", 2, 4, 1, 1);
    assert_true(dlg_lstm(net, "l", x, h, h, 4, 2, NULL, NULL) < 0); /* 7 rows, 2 steps */
    dlg_net_destroy(net);
}

#ifdef DLG_NN_HAVE_DNNL
static void compare(dlg_net *a, dlg_net *b, int blob, dlg_which w, const char *what)
{
    int64_t n = tu_count(a, blob);
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(dlg_net_read(a, blob, w, x, (size_t)n), 0);
    assert_int_equal(dlg_net_read(b, blob, w, y, (size_t)n), 0);
    double worst = 0, mag = 0;
    for (int64_t i = 0; i < n; i++) {
        worst = fmax(worst, fabs((double)x[i] - y[i]) / fmax(1.0, fabs((double)y[i])));
        mag = fmax(mag, fabs((double)y[i]));
    }
    printf("  %-14s %s: worst %.2e (max |value| %.3g)\n", what, w == DLG_DATA ? "data" : "diff",
           worst, mag);
    assert_true(mag > 0); /* something was computed */
    assert_true(worst < 1e-4);
    free(x);
    free(y);
}

/* Two stacked layers (input 6 -> 8 -> 8) over 5 steps of 3 streams. */
static void test_cpu_vs_ref(void **st)
{
    lstm_net r = build(5, 3, 6, 8, 2), c = build(5, 3, 6, 8, 2);
    plan(r.net, "ref", true);
    plan(c.net, "cpu", true);
    fill_inputs(r.net, 31);
    fill_inputs(c.net, 31);
    assert_int_equal(dlg_net_forward(r.net), 0);
    assert_int_equal(dlg_net_forward(c.net), 0);
    int64_t n = tu_count(r.net, r.y), nh = tu_count(r.net, r.hT);
    float *dy = malloc((size_t)n * sizeof(float)), *dh = malloc((size_t)nh * sizeof(float));
    tu_fill(dy, n, FILL_GAUSS, 77);
    tu_fill(dh, nh, FILL_GAUSS, 78);
    lstm_net *nets[2] = {&r, &c};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(dlg_net_write(nets[k]->net, nets[k]->y, DLG_DIFF, dy, (size_t)n), 0);
        assert_int_equal(dlg_net_write(nets[k]->net, nets[k]->hT, DLG_DIFF, dh, (size_t)nh), 0);
        assert_int_equal(dlg_net_write(nets[k]->net, nets[k]->cT, DLG_DIFF, dh, (size_t)nh), 0);
        assert_int_equal(dlg_net_backward(nets[k]->net), 0);
    }
    compare(c.net, r.net, r.y, DLG_DATA, "y");
    compare(c.net, r.net, r.hT, DLG_DATA, "hT");
    compare(c.net, r.net, r.cT, DLG_DATA, "cT");
    const char *ins[] = {"x", "h0_0", "c0_0", "h0_1", "c0_1"};
    for (int i = 0; i < 5; i++)
        compare(c.net, r.net, dlg_net_blob(r.net, ins[i]), DLG_DIFF, ins[i]);
    for (int l = 0; l < 2; l++)
        for (int p = 0; p < 3; p++) {
            char name[16], what[32];
            snprintf(name, sizeof name, "lstm%d", l);
            snprintf(what, sizeof what, "lstm%d param%d", l, p);
            compare(c.net, r.net, dlg_net_param(r.net, name, p), DLG_DIFF, what);
        }
    free(dy);
    free(dh);
    dlg_net_destroy(r.net);
    dlg_net_destroy(c.net);
}

/* The whole tied model agrees too (embedding and loss run on ref kernels
 * inside the cpu backend, decoder on oneDNN). */
static void test_cpu_vs_ref_lm(void **st)
{
    dlg_net *r = lm(true, "ref", 11, 8), *c = lm(true, "cpu", 11, 8);
    for (int k = 0; k < 2; k++) {
        dlg_net *n = k ? c : r;
        assert_int_equal(dlg_net_forward(n), 0);
        assert_int_equal(dlg_net_backward(n), 0);
    }
    compare(c, r, dlg_net_blob(r, "loss"), DLG_DATA, "loss");
    compare(c, r, dlg_net_param(r, "emb", 0), DLG_DIFF, "tied table");
    dlg_net_destroy(r);
    dlg_net_destroy(c);
}
#endif

/* dlg_net_grad_norm is the L2 norm of every parameter gradient;
 * scaling by f scales it by f. */
static void test_grad_norm(void **st)
{
    dlg_net *net = lm(false, "ref", 7, 4);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_backward(net), 0);
    double ss = 0, norm = 0;
    const char *layers[] = {"emb", "lstm", "dec"};
    int counts[] = {1, 3, 2};
    for (int l = 0; l < 3; l++)
        for (int p = 0; p < counts[l]; p++) {
            int b = dlg_net_param(net, layers[l], p);
            int64_t n = tu_count(net, b);
            float *g = malloc((size_t)n * sizeof(float));
            assert_int_equal(dlg_net_read(net, b, DLG_DIFF, g, (size_t)n), 0);
            for (int64_t i = 0; i < n; i++)
                ss += (double)g[i] * g[i];
            free(g);
        }
    assert_int_equal(dlg_net_grad_norm(net, &norm), 0);
    assert_true(norm > 0);
    assert_true(fabs(norm - sqrt(ss)) <= 1e-6 * norm);
    assert_int_equal(dlg_net_scale_grads(net, 0.25f), 0);
    double after = 0;
    assert_int_equal(dlg_net_grad_norm(net, &after), 0);
    assert_true(fabs(after - 0.25 * norm) <= 1e-6 * norm);
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradcheck_y),  cmocka_unit_test(test_gradcheck_hT),
        cmocka_unit_test(test_gradcheck_cT), cmocka_unit_test(test_gradcheck_lm),
        cmocka_unit_test(test_tie_mismatch), cmocka_unit_test(test_grad_norm),
#ifdef DLG_NN_HAVE_DNNL
        cmocka_unit_test(test_cpu_vs_ref),   cmocka_unit_test(test_cpu_vs_ref_lm),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
