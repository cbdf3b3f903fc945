/* Embedding and LSTM layers: the reference LSTM against central finite
 * differences (every input, state and parameter, through y, hT and cT),
 * a tied embedding/decoder language model through its loss, oneDNN's LSTM
 * against the reference (forward and backward, two stacked layers), both
 * against PyTorch's known answers (LSTM forward/backward, a tiny language
 * model's loss), and the global gradient norm used for clipping. */
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
    dlg_net *net = tu_lstm_lm(backend, T, B, V, D, tied);
    assert_non_null(net);
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

/* ---- known answers from PyTorch 1.13 (torch.nn.LSTM, float64) ---------------
 * Generated by this script's weights (W[k] = a sin/cos(b k + c), below),
 * PyTorch's weight_ih = Wx^T, weight_hh = Wh^T, bias_ih = b, bias_hh = 0;
 * the gradients are of L = sum(y wy) + sum(hT wh) + sum(cT wc).  A gate
 * order or layout other than i, f, g, o (ldigo) fails them. */
static const double want_y[24] = {
    -0.0354719051, 0.0305351789, 0.13924917, 0.179708233, 0.0151270014, 0.0200311116,
    0.0290084157, -0.0294128132, -0.0470909694, -0.0893186918, -0.0217585411, 0.0341317015,
    -0.105295931, 0.0289779327, 0.140666838, 0.127039666, 0.0212116145, -0.0689679682,
    -0.0707775928, -0.0623517867, -0.204487016, -0.105045259, 0.132316717, 0.192290463};
static const double want_hT[8] = {
    0.0212116145, -0.0689679682, -0.0707775928, -0.0623517867, -0.204487016, -0.105045259,
    0.132316717, 0.192290463};
static const double want_cT[8] = {
    0.0559895072, -0.172881438, -0.137078955, -0.0955493582, -0.343462333, -0.196713272,
    0.279551831, 0.438289056};
static const double want_dx[18] = {
    -0.06505185, -0.0653458503, 0.0385207991, -0.0732667617, 0.0232083602, 0.0826895817,
    -0.0546511631, 0.0754689754, 0.0852923012, 0.054406259, 0.142785516, 0.00356604968,
    0.0559245187, -0.216844902, -0.143965658, 0.0238203609, -0.0635601615, -0.0496264047};
static const double want_dh0[8] = {
    -0.0579105522, 0.0726249503, 0.0367766868, -0.0833269686, -0.0269104027, -0.0432401366,
    0.0394932854, 0.0317475879};
static const double want_dc0[8] = {
    0.278744774, 0.218001812, 0.0873954893, -0.00204265771, -0.0110793025, -0.047737602,
    -0.0503410203, -0.0666137289};
static const double want_dwx[48] = {
    -0.0114163941, -0.0209523336, -0.02434787, 0.0489788675, 0.0124042304, 0.02287884,
    0.0420307495, 0.0644321821, -0.418229958, -0.225266568, 0.107430631, 0.252285295,
    -0.118321188, -0.0716941457, 0.0973868208, 0.117777467, -0.0622550623, -0.0318722029,
    0.0290487946, 0.0846466733, 0.0297484347, 0.0409959552, 0.0245058726, 0.00964995682,
    -0.0548211254, 0.0627082584, 0.133484051, 0.125524136, -0.137536002, -0.0422779648,
    0.155307344, 0.14062823, -0.0659803406, -0.0186718245, 0.0604619106, 0.0562555643,
    0.0245796167, 0.0280881488, -0.0115645601, -0.0524351634, 0.350075242, 0.303226725,
    0.0585194024, -0.0962311869, -0.0526663113, 0.0191333371, 0.0956943651, 0.0570543522};
static const double want_dwh[64] = {
    -0.0263453274, -0.0175141137, 0.000898561674, -0.000491889492, 0.0144105989, 0.0176121543,
    0.00232688326, -0.011352838, 0.0766300255, 0.0888506464, 0.0503071907, 0.0141135885,
    0.0069192607, 0.0147173211, 0.0199501269, 0.0200933428, -0.0202148175, -0.0115625644,
    0.00510242583, 0.00939980866, 0.0105996434, 0.0132271967, 0.00280168208, -0.00660118648,
    0.0345964173, 0.0525567787, 0.0352739277, 0.0123035986, -0.00913034841, 0.00497830003,
    0.0261828669, 0.0239152123, 0.000762010933, 0.00187473866, 0.008815108, 0.0155910937,
    -0.000410509435, -0.000191649631, -0.000143801921, -0.000870902762, -0.0191718916,
    -0.0126853479, -0.00619635654, -0.00643873092, -0.0169667921, -0.0074839894, 0.0132041714,
    0.00954036665, 0.0189191844, 0.0154140281, 0.0085278359, 0.0109208515, -0.0104673507,
    -0.0130464544, -0.00417637108, 0.00308012085, -0.0581347557, -0.0684734011, -0.05234093,
    -0.0369100386, -0.0100705325, -0.0100985331, -0.00801324066, -0.0121891694};
static const double want_db[16] = {
    0.0136414049, -0.0522685613, 0.0301194178, 0.0874148713, 0.00492224642, 0.0226300229,
    0.0226552499, 0.007603227, 0.182224001, 0.0441752732, 0.0603953303, 0.0320229361,
    -0.102170691, -0.0889738231, 0.0577724552, 0.0776092849};
static const double want_lm_loss = 1.62190710114;

typedef double (*wave)(int k);
static double w_x(int k) { return 0.4 * sin(0.7 * k + 0.3); }
static double w_h(int k) { return 0.3 * cos(0.5 * k + 0.1); }
static double w_b(int k) { return 0.2 * sin(1.3 * k); }
static double in_x(int k) { return sin(0.9 * k + 0.2); }
static double in_h0(int k) { return 0.5 * cos(0.8 * k); }
static double in_c0(int k) { return 0.5 * sin(0.6 * k + 0.4); }
static double d_y(int k) { return cos(0.3 * k); }
static double d_h(int k) { return sin(0.45 * k); }
static double d_c(int k) { return cos(0.55 * k + 1); }
static double emb(int k) { return 0.5 * sin(1.1 * k + 0.5); }
static double dec_w(int k) { return 0.6 * cos(0.9 * k + 0.2); }
static double dec_b(int k) { return 0.1 * k - 0.2; }

static void put(dlg_net *net, int blob, dlg_which w, wave fn)
{
    int64_t n = tu_count(net, blob);
    float *v = malloc((size_t)n * sizeof(float));
    assert_non_null(v);
    for (int64_t k = 0; k < n; k++)
        v[k] = (float)fn((int)k);
    assert_int_equal(dlg_net_write(net, blob, w, v, (size_t)n), 0);
    free(v);
}

static void expect(dlg_net *net, int blob, dlg_which w, const double *want, int64_t n,
                   const char *what)
{
    assert_int_equal(tu_count(net, blob), n);
    float v[64];
    assert_true(n <= 64);
    assert_int_equal(dlg_net_read(net, blob, w, v, (size_t)n), 0);
    double worst = 0;
    for (int64_t k = 0; k < n; k++)
        worst = fmax(worst, fabs(v[k] - want[k]));
    printf("  %-4s vs PyTorch: worst abs error %.1e\n", what, worst);
    assert_true(worst < 2e-6);
}

static void known_answer_lstm(const char *backend)
{
    lstm_net m = build(T, B, I, H, 1);
    plan(m.net, backend, true);
    int wx = dlg_net_param(m.net, "lstm0", 0), wh = dlg_net_param(m.net, "lstm0", 1),
        b = dlg_net_param(m.net, "lstm0", 2);
    put(m.net, wx, DLG_DATA, w_x);
    put(m.net, wh, DLG_DATA, w_h);
    put(m.net, b, DLG_DATA, w_b);
    put(m.net, m.x, DLG_DATA, in_x);
    put(m.net, m.h0, DLG_DATA, in_h0);
    put(m.net, m.c0, DLG_DATA, in_c0);
    assert_int_equal(dlg_net_forward(m.net), 0);
    put(m.net, m.y, DLG_DIFF, d_y);
    put(m.net, m.hT, DLG_DIFF, d_h);
    put(m.net, m.cT, DLG_DIFF, d_c);
    assert_int_equal(dlg_net_backward(m.net), 0);
    printf("  %s:\n", backend);
    expect(m.net, m.y, DLG_DATA, want_y, T * B * H, "y");
    expect(m.net, m.hT, DLG_DATA, want_hT, B * H, "hT");
    expect(m.net, m.cT, DLG_DATA, want_cT, B * H, "cT");
    expect(m.net, m.x, DLG_DIFF, want_dx, T * B * I, "dx");
    expect(m.net, m.h0, DLG_DIFF, want_dh0, B * H, "dh0");
    expect(m.net, m.c0, DLG_DIFF, want_dc0, B * H, "dc0");
    expect(m.net, wx, DLG_DIFF, want_dwx, I * 4 * H, "dWx");
    expect(m.net, wh, DLG_DIFF, want_dwh, H * 4 * H, "dWh");
    expect(m.net, b, DLG_DIFF, want_db, 4 * H, "db");
    dlg_net_destroy(m.net);
}

/* The language model's loss (embedding, LSTM, decoder, mean cross-entropy
 * per token, so perplexity = exp(loss)) on PyTorch's number. */
static void known_answer_lm(const char *backend)
{
    dlg_net *net = lm(false, backend, 5, 4);
    put(net, dlg_net_param(net, "emb", 0), DLG_DATA, emb);
    put(net, dlg_net_param(net, "lstm", 0), DLG_DATA, w_x);
    put(net, dlg_net_param(net, "lstm", 1), DLG_DATA, w_h);
    put(net, dlg_net_param(net, "lstm", 2), DLG_DATA, w_b);
    put(net, dlg_net_param(net, "dec", 0), DLG_DATA, dec_w);
    put(net, dlg_net_param(net, "dec", 1), DLG_DATA, dec_b);
    put(net, dlg_net_blob(net, "h0"), DLG_DATA, in_h0);
    put(net, dlg_net_blob(net, "c0"), DLG_DATA, in_c0);
    assert_int_equal(dlg_net_forward(net), 0);
    float res[3];
    assert_int_equal(dlg_net_read(net, dlg_net_blob(net, "loss"), DLG_DATA, res, 3), 0);
    printf("  %s: language-model loss %.7f, PyTorch %.7f\n", backend, res[0], want_lm_loss);
    assert_true(fabs(res[0] - want_lm_loss) < 2e-6);
    dlg_net_destroy(net);
}

static void test_known_answer_ref(void **st)
{
    known_answer_lstm("ref");
    known_answer_lm("ref");
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

static void test_known_answer_cpu(void **st)
{
    known_answer_lstm("cpu");
    known_answer_lm("cpu");
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
        cmocka_unit_test(test_known_answer_ref),
#ifdef DLG_NN_HAVE_DNNL
        cmocka_unit_test(test_cpu_vs_ref),   cmocka_unit_test(test_cpu_vs_ref_lm),
        cmocka_unit_test(test_known_answer_cpu),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
