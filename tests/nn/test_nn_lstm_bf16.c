/* The LSTM on cpu-bf16 (oneDNN's bf16 LSTM: bf16 x, h, y and weights,
 * fp32 cell state, bias and gradients; fp32 master weights) against the
 * fp32 reference: two stacked layers' outputs and every gradient (input,
 * initial states, Wx, Wh, bias) within 2e-2 relative error, with bf16
 * rounding visible (more than 4x the fp32 cpu backend's error); the bf16
 * weight copies follow new weights; an SGD step lands on the fp32
 * masters; a language model (embedding, LSTM, tied bf16 decoder, fp32
 * loss) agrees in its loss and gradients.  Below AVX-512 the backend
 * must refuse with a line that says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <oneapi/dnnl/dnnl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BF16_TOL 2e-2

/* time steps, streams, input and hidden width of the stacked LSTM */
enum { T = 5, B = 4, I = 24, H = 32, NB = 3 };

static const char *backends[NB] = {"ref", "cpu-bf16", "cpu"};

static bool has_avx512(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

/* x (T*B x I) -> lstm0 -> lstm1 (H), states h0_k, c0_k; the last layer's
 * y ("L"), hT and cT; NULL with the error in err. */
static dlg_net *stacked(const char *backend, char *err, size_t errlen)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, backend), 0);
    int x = dlg_input(net, "x", T * B, I, 1, 1);
    for (int k = 0; k < 2; k++) {
        char h[8], c[8], l[8];
        snprintf(h, sizeof h, "h0_%d", k);
        snprintf(c, sizeof c, "c0_%d", k);
        snprintf(l, sizeof l, k ? "L" : "lstm0");
        x = dlg_lstm(net, l, x, dlg_input(net, h, B, H, 1, 1), dlg_input(net, c, B, H, 1, 1), H, T, NULL,
                     NULL);
    }
    dlg_plan_opts o = {.backend = backend, .threads = 2, .train = true, .seed = 9, .input_grads = true,
                       .keep_all = true};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0) {
        snprintf(err, errlen, "%s", dlg_net_error(net));
        dlg_net_destroy(net);
        return NULL;
    }
    const char *in[5] = {"x", "h0_0", "c0_0", "h0_1", "c0_1"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, in[i]), FILL_GAUSS, 21 + (uint64_t)i), 0);
    return net;
}

static dlg_net *stacked_ok(const char *backend)
{
    char err[512];
    dlg_net *net = stacked(backend, err, sizeof err);
    if (!net)
        fail_msg("%s: %s", backend, err);
    return net;
}

/* The last layer's outputs: y, hT, cT. */
static void outputs(dlg_net *net, int out[3])
{
    const char *names[3] = {"L", "L/hT", "L/cT"};
    for (int i = 0; i < 3; i++) {
        out[i] = dlg_net_blob(net, names[i]);
        assert_true(out[i] >= 0);
    }
}

/* tu_blob_err, which must have read both */
static double blob_err(dlg_net *a, dlg_net *b, int blob, dlg_which w)
{
    double e = tu_blob_err(a, b, blob, w);
    assert_true(e >= 0);
    return e;
}

/* The same output gradients into y, hT and cT of each net, then backward. */
static void backward_all(dlg_net **nets, int n)
{
    int out[3];
    outputs(nets[0], out);
    for (int i = 0; i < 3; i++) {
        int64_t c = tu_count(nets[0], out[i]);
        float *g = malloc((size_t)c * sizeof(float));
        assert_non_null(g);
        tu_fill(g, c, FILL_GAUSS, 77 + (uint64_t)i);
        for (int k = 0; k < n; k++)
            assert_int_equal(dlg_net_write(nets[k], out[i], DLG_DIFF, g, (size_t)c), 0);
        free(g);
    }
    for (int k = 0; k < n; k++)
        if (dlg_net_backward(nets[k]) < 0)
            fail_msg("%s", dlg_net_error(nets[k]));
}

static void forward_all(dlg_net **nets, int n)
{
    for (int k = 0; k < n; k++)
        if (dlg_net_forward(nets[k]) < 0)
            fail_msg("%s", dlg_net_error(nets[k]));
}

/* The worst error of net against ref over the outputs' data. */
static double fwd_err(dlg_net *net, dlg_net *ref)
{
    int out[3];
    outputs(ref, out);
    double worst = 0;
    for (int i = 0; i < 3; i++)
        worst = fmax(worst, blob_err(net, ref, out[i], DLG_DATA));
    return worst;
}

/* The worst gradient error: the input's, the initial states', and every
 * layer's Wx, Wh and bias; each within the bf16 tolerance. */
static double grad_err(dlg_net *net, dlg_net *ref, const char *as)
{
    const char *in[5] = {"x", "h0_0", "c0_0", "h0_1", "c0_1"}, *at = "";
    double worst = 0;
    for (int i = 0; i < 5 + 6; i++) {
        int b = i < 5 ? dlg_net_blob(ref, in[i]) : dlg_net_param(ref, i < 8 ? "lstm0" : "L", (i - 5) % 3);
        assert_true(b >= 0);
        double e = blob_err(net, ref, b, DLG_DIFF);
        assert_true(e < BF16_TOL);
        if (e > worst) {
            worst = e;
            at = i < 5 ? in[i] : i < 8 ? "lstm0 param" : "L param";
        }
    }
    printf("  %-4s training: worst gradient error %.2e (%s)\n", as, worst, at);
    return worst;
}

/* Forward and backward on ref, cpu-bf16 and cpu: bf16 within the
 * tolerance, and not fp32 under another name. */
static void test_lstm_vs_ref(void **st)
{
    dlg_net *nets[NB];
    for (int k = 0; k < NB; k++)
        nets[k] = stacked_ok(backends[k]);
    forward_all(nets, NB);
    double e = fwd_err(nets[1], nets[0]), e32 = fwd_err(nets[2], nets[0]);
    printf("  forward (y, hT, cT): bf16 %.2e, fp32 %.2e\n", e, e32);
    assert_true(e < BF16_TOL);
    assert_true(e > 4 * e32);
    backward_all(nets, NB);
    double g = grad_err(nets[1], nets[0], "bf16"), g32 = grad_err(nets[2], nets[0], "fp32");
    assert_true(g > 4 * g32);
    for (int k = 0; k < NB; k++)
        dlg_net_destroy(nets[k]);
}

/* The same fresh N(0, 0.3^2) values (the fillers' scale: N(0, 1) weights
 * saturate the gates) into param p of layer name in both nets. */
static void rewrite(dlg_net *a, dlg_net *b, const char *name, int p, uint64_t seed)
{
    int w = dlg_net_param(a, name, p);
    int64_t n = tu_count(a, w);
    float *v = malloc((size_t)n * sizeof(float));
    assert_non_null(v);
    tu_fill(v, n, FILL_GAUSS, seed);
    for (int64_t i = 0; i < n; i++)
        v[i] *= 0.3f;
    assert_int_equal(dlg_net_write(a, w, DLG_DATA, v, (size_t)n), 0);
    assert_int_equal(dlg_net_write(b, dlg_net_param(b, name, p), DLG_DATA, v, (size_t)n), 0);
    free(v);
}

/* The bf16 copies follow the fp32 masters: new Wx of the first layer and
 * new Wh of the second, written after a first forward and backward, show
 * in the next of each (a stale copy is off by O(1)). */
static void test_weights_follow(void **st)
{
    dlg_net *ref = stacked_ok("ref"), *bf = stacked_ok("cpu-bf16"), *nets[2] = {ref, bf};
    forward_all(nets, 2);
    backward_all(nets, 2);
    double e0 = fwd_err(bf, ref);
    rewrite(bf, ref, "lstm0", 0, 31);
    rewrite(bf, ref, "L", 1, 32);
    forward_all(nets, 2);
    double e1 = fwd_err(bf, ref);
    backward_all(nets, 2);
    printf("  forward: %.2e, after new lstm0 Wx and L Wh %.2e\n", e0, e1);
    assert_true(e0 < BF16_TOL);
    assert_true(e1 < BF16_TOL);
    grad_err(bf, ref, "bf16");
    dlg_net_destroy(bf);
    dlg_net_destroy(ref);
}

/* SGD updates the fp32 masters with the fp32 weight gradients: a step of
 * lr 1e-5 moves a weight far less than bf16 could hold (2^-9 of it), so
 * bf16 masters would lose it; the step must land within a tenth of the
 * update of the reference's, for Wx, Wh and the bias of both layers. */
static void test_sgd_master(void **st)
{
    dlg_net *ref = stacked_ok("ref"), *bf = stacked_ok("cpu-bf16"), *nets[2] = {ref, bf};
    float *before[6];
    for (int k = 0; k < 6; k++)
        assert_non_null(before[k] = tu_read_copy(ref, dlg_net_param(ref, k < 3 ? "lstm0" : "L", k % 3)));
    forward_all(nets, 2);
    backward_all(nets, 2);
    dlg_sgd sgd = {1e-5f, 0.9f, 0};
    assert_int_equal(dlg_net_sgd_step(ref, &sgd), 0);
    assert_int_equal(dlg_net_sgd_step(bf, &sgd), 0);
    for (int k = 0; k < 6; k++) {
        double step, off;
        int w = dlg_net_param(ref, k < 3 ? "lstm0" : "L", k % 3);
        assert_int_equal(tu_step_off(ref, bf, w, before[k], &step, &off), 0);
        printf("  %s param %d: largest step %.2e, bf16 master off by %.2e\n", k < 3 ? "lstm0" : "L", k % 3,
               step, off);
        assert_true(step > 0);
        assert_true(off < 0.1 * step);
        free(before[k]);
    }
    dlg_net_destroy(bf);
    dlg_net_destroy(ref);
}

enum { V = 50 };

/* lstm-ptb's shape: ids -> embedding -> LSTM -> decoder tied to the
 * table -> softmax loss per token */
static dlg_net *lm(const char *backend)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, backend), 0);
    int ids = dlg_labels(net, "ids", T * B), y = dlg_labels(net, "y", T * B);
    int h0 = dlg_input(net, "h0", B, H, 1, 1), c0 = dlg_input(net, "c0", B, H, 1, 1);
    int e = dlg_embedding(net, "emb", ids, V, H);
    int o = dlg_lstm(net, "lstm", e, h0, c0, H, T, NULL, NULL);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f}, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f});
    int logits = dlg_fc(net, "dec", o, V);
    dlg_net_tie(net, "dec", "emb");
    dlg_softmax_loss(net, "loss", logits, y);
    dlg_plan_opts po = {.backend = backend, .threads = 2, .train = true, .seed = 5};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &po) < 0)
        fail_msg("%s: %s", backend, dlg_net_error(net));
    float idv[T * B], yv[T * B];
    for (int i = 0; i < T * B; i++) {
        idv[i] = (float)((i * 7 + 1) % V);
        yv[i] = (float)((i * 3 + 2) % V);
    }
    assert_int_equal(dlg_net_write(net, ids, DLG_DATA, idv, T * B), 0);
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, yv, T * B), 0);
    assert_int_equal(tu_fill_blob(net, h0, FILL_GAUSS, 3), 0);
    assert_int_equal(tu_fill_blob(net, c0, FILL_GAUSS, 4), 0);
    return net;
}

/* The whole model: the loss and the gradients of the tied table (the
 * embedding's and the bf16 decoder's, summed), the LSTM's and the
 * decoder bias's. */
static void test_lm_vs_ref(void **st)
{
    dlg_net *nets[NB];
    for (int k = 0; k < NB; k++) {
        nets[k] = lm(backends[k]);
        if (dlg_net_forward(nets[k]) < 0 || dlg_net_backward(nets[k]) < 0)
            fail_msg("%s", dlg_net_error(nets[k]));
    }
    int blobs[6] = {dlg_net_blob(nets[0], "loss"),      dlg_net_param(nets[0], "emb", 0),
                    dlg_net_param(nets[0], "lstm", 0), dlg_net_param(nets[0], "lstm", 1),
                    dlg_net_param(nets[0], "lstm", 2), dlg_net_param(nets[0], "dec", 1)};
    double worst = 0, worst32 = 0;
    for (int i = 0; i < 6; i++) {
        dlg_which w = i ? DLG_DIFF : DLG_DATA;
        double e = blob_err(nets[1], nets[0], blobs[i], w), e32 = blob_err(nets[2], nets[0], blobs[i], w);
        printf("  %-10s bf16 %.2e, fp32 %.2e\n", i ? "gradient" : "loss", e, e32);
        assert_true(e < BF16_TOL);
        worst = fmax(worst, e);
        worst32 = fmax(worst32, e32);
    }
    assert_true(worst > 4 * worst32);
    for (int k = 0; k < NB; k++)
        dlg_net_destroy(nets[k]);
}

/* below AVX-512 the backend refuses, saying why */
static void test_refused_without_avx512(void **st)
{
    char err[512] = "";
    assert_null(stacked("cpu-bf16", err, sizeof err));
    printf("  %s\n", err);
    assert_non_null(strstr(err, "needs AVX-512"));
}

int main(void)
{
    if (!has_avx512()) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_refused_without_avx512)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lstm_vs_ref),
                                       cmocka_unit_test(test_weights_follow),
                                       cmocka_unit_test(test_sgd_master),
                                       cmocka_unit_test(test_lm_vs_ref)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
