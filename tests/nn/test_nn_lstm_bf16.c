/* The LSTM on cpu-bf16 (training: the GEMM path of cpu_lstm_gemm.c;
 * inference: oneDNN's bf16 LSTM; bf16 x, h and weights, fp32 cell state,
 * bias and gradients; fp32 master weights) against the fp32 reference:
 * two stacked layers' outputs and every gradient (input, initial states,
 * Wx, Wh, bias) within 2e-2 relative error, with bf16 rounding visible
 * (more than 4x the fp32 cpu backend's error), also for one step, one
 * stream, a hidden width no multiple of 16, several BPTT windows with the
 * state carried, and (against fp32) gate loops wide enough to go
 * parallel; inference stays on oneDNN's LSTM, within the tolerance too;
 * the bf16 weight copies follow new weights; an SGD
 * step lands on the fp32 masters; a language model (embedding, LSTM, tied
 * bf16 decoder, fp32 loss) agrees in its loss and gradients.  Below
 * AVX-512 the backend must refuse with a line that says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include "dnnl_isa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BF16_TOL 2e-2

/* time steps, streams, input and hidden width of the stacked LSTM */
enum { T = 5, B = 4, I = 24, H = 32, NB = 3 };

typedef struct lstm_shape {
    int T, B, I, H;
} lstm_shape;

static const lstm_shape base = {T, B, I, H};

static const char *backends[NB] = {"ref", "cpu-bf16", "cpu"};

static const char *const inputs[5] = {"x", "h0_0", "c0_0", "h0_1", "c0_1"};

/* x (T*B x I) -> lstm0 -> lstm1 (H), states h0_k, c0_k; the last layer's
 * y ("L"), hT and cT; planned to train (or for inference); NULL with the
 * error in err. */
static dlg_net *stacked_as(const char *backend, lstm_shape s, bool train, char *err, size_t errlen)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, backend), 0);
    int x = dlg_input(net, "x", s.T * s.B, s.I, 1, 1);
    for (int k = 0; k < 2; k++) {
        char h[8], c[8], l[8];
        snprintf(h, sizeof h, "h0_%d", k);
        snprintf(c, sizeof c, "c0_%d", k);
        snprintf(l, sizeof l, k ? "L" : "lstm0");
        x = dlg_lstm(net, l, x, dlg_input(net, h, s.B, s.H, 1, 1), dlg_input(net, c, s.B, s.H, 1, 1),
                     s.H, s.T, NULL, NULL);
    }
    dlg_plan_opts o = {.backend = backend, .threads = 2, .train = train, .seed = 9, .input_grads = train,
                       .keep_all = true};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0) {
        snprintf(err, errlen, "%s", dlg_net_error(net));
        dlg_net_destroy(net);
        return NULL;
    }
    for (int i = 0; i < 5; i++)
        assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, inputs[i]), FILL_GAUSS, 21 + (uint64_t)i), 0);
    return net;
}

static dlg_net *stacked(const char *backend, char *err, size_t errlen)
{
    return stacked_as(backend, base, true, err, errlen);
}

static dlg_net *shaped_ok(const char *backend, lstm_shape s, bool train)
{
    char err[512];
    dlg_net *net = stacked_as(backend, s, train, err, sizeof err);
    if (!net)
        fail_msg("%s: %s", backend, err);
    return net;
}

static dlg_net *stacked_ok(const char *backend) { return shaped_ok(backend, base, true); }

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

/* The same output gradients (drawn from seed) into y, hT and cT of each
 * net, then backward. */
static void backward_seeded(dlg_net **nets, int n, uint64_t seed)
{
    int out[3];
    outputs(nets[0], out);
    for (int i = 0; i < 3; i++) {
        int64_t c = tu_count(nets[0], out[i]);
        float *g = malloc((size_t)c * sizeof(float));
        assert_non_null(g);
        tu_fill(g, c, FILL_GAUSS, seed + (uint64_t)i);
        for (int k = 0; k < n; k++)
            assert_int_equal(dlg_net_write(nets[k], out[i], DLG_DIFF, g, (size_t)c), 0);
        free(g);
    }
    for (int k = 0; k < n; k++)
        if (dlg_net_backward(nets[k]) < 0)
            fail_msg("%s", dlg_net_error(nets[k]));
}

static void backward_all(dlg_net **nets, int n) { backward_seeded(nets, n, 77); }

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
    const char *at = "";
    double worst = 0;
    for (int i = 0; i < 5 + 6; i++) {
        int b = i < 5 ? dlg_net_blob(ref, inputs[i]) : dlg_net_param(ref, i < 8 ? "lstm0" : "L", (i - 5) % 3);
        assert_true(b >= 0);
        double e = blob_err(net, ref, b, DLG_DIFF);
        if (e > worst) {
            worst = e;
            at = i < 5 ? inputs[i] : i < 8 ? "lstm0 param" : "L param";
        }
    }
    printf("  %-4s training: worst gradient error %.2e (%s)\n", as, worst, at);
    assert_true(worst < BF16_TOL);
    return worst;
}

/* The implementation the layer named got. */
static const char *impl_of(dlg_net *net, const char *layer)
{
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        if (dlg_net_layer_info(net, i, &li) == 0 && !strcmp(li.name, layer))
            return dlg_net_layer_impl(net, i);
    }
    return "";
}

/* Forward and backward of shape s on ref, cpu-bf16 and cpu: bf16 within
 * the tolerance, and not fp32 under another name. */
static void vs_ref(lstm_shape s)
{
    dlg_net *nets[NB];
    for (int k = 0; k < NB; k++)
        nets[k] = shaped_ok(backends[k], s, true);
    assert_string_equal(impl_of(nets[1], "L"), "matmul");
    forward_all(nets, NB);
    double e = fwd_err(nets[1], nets[0]), e32 = fwd_err(nets[2], nets[0]);
    printf("  T %d B %d I %d H %d forward (y, hT, cT): bf16 %.2e, fp32 %.2e\n", s.T, s.B, s.I, s.H, e,
           e32);
    assert_true(e < BF16_TOL);
    assert_true(e > 4 * e32);
    backward_all(nets, NB);
    double g = grad_err(nets[1], nets[0], "bf16"), g32 = grad_err(nets[2], nets[0], "fp32");
    assert_true(g > 4 * g32);
    for (int k = 0; k < NB; k++)
        dlg_net_destroy(nets[k]);
}

static void test_lstm_vs_ref(void **st) { vs_ref(base); }

/* The GEMMs' and gate loops' edges: one step, one stream, a hidden width
 * no multiple of 16 with an odd input width. */
static void test_edge_shapes(void **st)
{
    const lstm_shape s[3] = {{1, 4, 24, 32}, {5, 1, 24, 32}, {3, 3, 7, 20}};
    for (int i = 0; i < 3; i++)
        vs_ref(s[i]);
}

/* 128 streams of 512 units: the gate loops' parallel branch (from 2^16
 * values a step), checked against the fp32 cpu backend (the reference
 * would take seconds). */
static void test_parallel_gates(void **st)
{
    const lstm_shape s = {2, 128, 16, 512};
    dlg_net *f32 = shaped_ok("cpu", s, true), *bf = shaped_ok("cpu-bf16", s, true);
    dlg_net *nets[2] = {f32, bf};
    forward_all(nets, 2);
    double e = fwd_err(bf, f32);
    printf("  T %d B %d I %d H %d forward against fp32: %.2e\n", s.T, s.B, s.I, s.H, e);
    assert_true(e < BF16_TOL);
    backward_all(nets, 2);
    grad_err(bf, f32, "bf16");
    dlg_net_destroy(bf);
    dlg_net_destroy(f32);
}

/* Each layer's final state into its initial one (lstm-ptb's carry). */
static void carry(dlg_net *net)
{
    const char *from[4] = {"lstm0/hT", "lstm0/cT", "L/hT", "L/cT"};
    for (int i = 0; i < 4; i++) {
        float *v = tu_read_copy(net, dlg_net_blob(net, from[i]));
        assert_non_null(v);
        int to = dlg_net_blob(net, inputs[1 + i]);
        assert_int_equal(dlg_net_write(net, to, DLG_DATA, v, (size_t)tu_count(net, to)), 0);
        free(v);
    }
}

/* Truncated BPTT as lstm-ptb trains: three windows in a row, each with
 * new x and output gradients and each net's own final state carried into
 * the next; every window within the tolerance. */
static void test_bptt_windows(void **st)
{
    dlg_net *ref = stacked_ok("ref"), *bf = stacked_ok("cpu-bf16"), *nets[2] = {ref, bf};
    int x = dlg_net_blob(ref, "x");
    for (int w = 0; w < 3; w++) {
        if (w) {
            carry(ref);
            carry(bf);
            assert_int_equal(tu_write_same(ref, bf, x, x, 50 + (uint64_t)w, false), 0);
        }
        forward_all(nets, 2);
        double e = fwd_err(bf, ref);
        printf("  window %d: forward %.2e\n", w, e);
        assert_true(e < BF16_TOL);
        backward_seeded(nets, 2, 90 + 10 * (uint64_t)w);
        grad_err(bf, ref, "bf16");
    }
    dlg_net_destroy(bf);
    dlg_net_destroy(ref);
}

/* Inference keeps oneDNN's bf16 LSTM (as fast as the GEMMs' forward, one
 * primitive): within the tolerance, bf16 rounding visible. */
static void test_inference_vs_ref(void **st)
{
    dlg_net *ref = shaped_ok("ref", base, false), *bf = shaped_ok("cpu-bf16", base, false);
    dlg_net *nets[2] = {ref, bf};
    const char *impl = impl_of(bf, "L");
    printf("  inference LSTM: %s\n", impl);
    assert_string_not_equal(impl, "matmul");
    forward_all(nets, 2);
    double e = fwd_err(bf, ref);
    printf("  forward (y, hT, cT): bf16 %.2e\n", e);
    assert_true(e < BF16_TOL);
    assert_true(e > 1e-5);
    dlg_net_destroy(bf);
    dlg_net_destroy(ref);
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
    dlg_net *net = tu_lstm_lm(backend, T, B, V, H, true);
    assert_non_null(net);
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
                                       cmocka_unit_test(test_edge_shapes),
                                       cmocka_unit_test(test_parallel_gates),
                                       cmocka_unit_test(test_bptt_windows),
                                       cmocka_unit_test(test_inference_vs_ref),
                                       cmocka_unit_test(test_weights_follow),
                                       cmocka_unit_test(test_sgd_master),
                                       cmocka_unit_test(test_lm_vs_ref)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
