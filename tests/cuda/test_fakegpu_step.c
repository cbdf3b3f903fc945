/* The lstm-ptb training step through the engine on the CPU stand-in GPU
 * (fakegpu's cuda.so, found through DLGAUGE_NN_MODULE_DIR): a two-layer
 * tied LSTM language model trained as lm.c trains it -- state carried on
 * the device (dlg_net_copy_blob, dlg_net_zero_blob), inputs written
 * asynchronously, forward + backward + clipping + SGD in one
 * dlg_net_train_step_clip, the loss read asynchronously -- on cuda:0 with
 * graphs on and off and on ref:
 *  - the captured whole step is replayed (2 eager, 1 captured, the rest
 *    replayed), and the clip threshold is part of the graph: a new one
 *    re-captures instead of replaying the old;
 *  - losses and params: graphs on = graphs off bitwise, both = ref within
 *    fp32 tolerance (known answer);
 *  - no host wait in a replayed step (fakegpu_host_waits);
 *  - a bad label surfaces at dlg_net_read_wait.
 * Before, the step ran forward as a graph and backward, clip and SGD
 * eagerly, with the state and the loss read back through the host. */
#define _GNU_SOURCE
#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakegpu_waits.h"

enum { V = 13, H = 8, L = 2, T = 4, B = 3, STEPS = 6, ROWS = T * B };
#define LR 0.5f
#define CLIP 0.25
#define CLIP2 0.125 /* from step NEW_CLIP on */
#define NEW_CLIP 4

typedef struct lm_net {
    dlg_net *net;
    int ids, target, loss, h0[L], c0[L], hT[L], cT[L];
    float *in;   /* STEPS x (ids, targets), pinned: each step's own */
    float *loss_out; /* STEPS x 3, pinned */
    uint64_t ticket[STEPS];
    dlg_clip_stats clip;
} lm_net;

static void build(lm_net *m, const char *backend, dlg_graphs graphs)
{
    assert_int_equal(dlg_net_create(&m->net, "lm"), 0);
    dlg_net *n = m->net;
    m->ids = dlg_labels(n, "ids", ROWS);
    m->target = dlg_labels(n, "target", ROWS);
    int x = dlg_embedding(n, "encoder", m->ids, V, H);
    for (int l = 0; l < L; l++) {
        char n0[16], n1[16], nl[16];
        snprintf(n0, sizeof n0, "h0_%d", l);
        snprintf(n1, sizeof n1, "c0_%d", l);
        snprintf(nl, sizeof nl, "lstm%d", l);
        m->h0[l] = dlg_input(n, n0, B, H, 1, 1);
        m->c0[l] = dlg_input(n, n1, B, H, 1, 1);
        x = dlg_lstm(n, nl, x, m->h0[l], m->c0[l], H, T, &m->hT[l], &m->cT[l]);
    }
    int logits = dlg_fc(n, "decoder", x, V);
    dlg_net_tie(n, "decoder", "encoder");
    m->loss = dlg_softmax_loss(n, "loss", logits, m->target);
    dlg_plan_opts o = {.backend = backend, .train = true, .seed = 5, .deterministic = true,
                       .graphs = graphs};
    if (dlg_net_plan(n, &o) < 0)
        fail_msg("%s: %s", backend, dlg_net_error(n));
    m->in = dlg_net_host_alloc(n, STEPS * 2 * ROWS * sizeof(float));
    m->loss_out = dlg_net_host_alloc(n, STEPS * 3 * sizeof(float));
    assert_non_null(m->in);
    assert_non_null(m->loss_out);
    uint64_t s = 3;
    for (int i = 0; i < STEPS * 2 * ROWS; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        m->in[i] = (float)((s >> 33) % V);
    }
}

static void destroy(lm_net *m)
{
    dlg_net_host_free(m->net, m->in);
    dlg_net_host_free(m->net, m->loss_out);
    dlg_net_destroy(m->net);
}

/* lm.c's step: carry (or zero) the state, write the inputs, train, read the loss */
static int step(lm_net *m, int k)
{
    dlg_net *n = m->net;
    int rc = 0;
    for (int l = 0; l < L && !rc; l++)
        for (int c = 0; c < 2 && !rc; c++) {
            int from = c ? m->cT[l] : m->hT[l], to = c ? m->c0[l] : m->h0[l];
            rc = k == 0 ? dlg_net_zero_blob(n, to) : dlg_net_copy_blob(n, from, to);
        }
    const float *in = m->in + (size_t)k * 2 * ROWS;
    if (!rc)
        rc = dlg_net_write_async(n, m->ids, in, ROWS);
    if (!rc)
        rc = dlg_net_write_async(n, m->target, in + ROWS, ROWS);
    dlg_sgd sgd = {LR, 0, 0};
    if (!rc)
        rc = dlg_net_train_step_clip(n, &sgd, k < NEW_CLIP ? CLIP : CLIP2, &m->clip);
    if (!rc)
        rc = dlg_net_read_async(n, m->loss, m->loss_out + 3 * k, 3, &m->ticket[k]);
    return rc;
}

static void train(lm_net *m, uint64_t *steady_waits)
{
    uint64_t w0 = 0;
    for (int k = 0; k < STEPS; k++) {
        if (k == 3) /* 2 eager warm-up steps, 1 captured: replays from here */
            w0 = fakegpu_waits_now();
        if (step(m, k) != 0)
            fail_msg("step %d: %s", k, dlg_net_error(m->net));
        if (k == NEW_CLIP - 1 && steady_waits)
            *steady_waits = fakegpu_waits_now() - w0;
    }
    assert_int_equal(dlg_net_read_wait(m->net, m->ticket[STEPS - 1]), 0);
    for (int k = 0; k < STEPS; k++) /* landed: no wait, no error */
        assert_int_equal(dlg_net_read_wait(m->net, m->ticket[k]), 0);
}

/* every param of the net, in layer order, into out (returns the floats) */
static size_t params(lm_net *m, float *out, size_t cap)
{
    static const char *const layers[] = {"encoder", "lstm0", "lstm1", "decoder"};
    size_t used = 0;
    for (int i = 0; i < 4; i++)
        for (int p = 0;; p++) {
            int blob = dlg_net_param(m->net, layers[i], p);
            dlg_shape s;
            if (blob < 0 || dlg_net_shape(m->net, blob, &s) < 0)
                break;
            size_t c = 1;
            for (int d = 0; d < s.ndim; d++)
                c *= (size_t)s.d[d];
            assert_true(used + c <= cap);
            assert_int_equal(dlg_net_read(m->net, blob, DLG_DATA, out + used, c), 0);
            used += c;
        }
    return used;
}

static bool near(float a, float b) { return fabsf(a - b) <= 2e-5f + 1e-4f * fabsf(b); }

static void test_train_step_graph_vs_eager_vs_ref(void **st)
{
    (void)st;
    enum { CAP = 4096 };
    static float pr[CAP], pe[CAP], pg[CAP];
    lm_net ref = {0}, eager = {0}, graph = {0};
    build(&ref, "ref", DLG_GRAPHS_AUTO);
    build(&eager, "cuda:0", DLG_GRAPHS_OFF);
    build(&graph, "cuda:0", DLG_GRAPHS_ON);
    uint64_t waits = 99;
    train(&ref, NULL);
    train(&eager, NULL);
    train(&graph, &waits);
    dlg_step_stats ss;
    assert_int_equal(dlg_net_step_stats(graph.net, &ss), 0);
    printf("  graphs on: %llu eager, %llu captured, %llu replayed; host waits in one replayed "
           "step: %llu\n",
           (unsigned long long)ss.eager, (unsigned long long)ss.captured,
           (unsigned long long)ss.replayed, (unsigned long long)waits);
    /* the new threshold re-captures once; the old graph is never replayed with it */
    assert_int_equal(ss.eager, 2);
    assert_int_equal(ss.captured, 2);
    assert_int_equal(ss.replayed, STEPS - 4);
    assert_int_equal(waits, 0);
    assert_int_equal(dlg_net_step_stats(eager.net, &ss), 0);
    assert_int_equal(ss.eager, STEPS);
    for (int k = 0; k < STEPS; k++) {
        float r = ref.loss_out[3 * k], e = eager.loss_out[3 * k], g = graph.loss_out[3 * k];
        printf("  step %d loss: ref %.7f eager %.7f graph %.7f\n", k, r, e, g);
        assert_memory_equal(&e, &g, sizeof e);
        if (!near(e, r))
            fail_msg("step %d: loss %.9g on cuda:0, %.9g on ref", k, e, r);
    }
    /* clipping took part: every step clipped (the norms of a fresh model) */
    dlg_clip_stats cg = {0, 0};
    assert_int_equal(dlg_net_clip_read(graph.net, &cg), 0);
    assert_int_equal(cg.clipped, ref.clip.clipped);
    assert_true(ref.clip.clipped > 0);
    assert_true(fabs(cg.norm - ref.clip.norm) <= 1e-4 * ref.clip.norm);
    size_t n = params(&ref, pr, CAP);
    assert_int_equal(params(&eager, pe, CAP), n);
    assert_int_equal(params(&graph, pg, CAP), n);
    assert_memory_equal(pe, pg, n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        if (!near(pe[i], pr[i]))
            fail_msg("param float %zu: %.9g on cuda:0, %.9g on ref", i, pe[i], pr[i]);
    destroy(&ref);
    destroy(&eager);
    destroy(&graph);
}

/* the state carry: hT -> h0 on the device equals a host round trip */
static void test_copy_and_zero_blob(void **st)
{
    (void)st;
    lm_net m = {0};
    build(&m, "cuda:0", DLG_GRAPHS_ON);
    assert_int_equal(step(&m, 0), 0);
    float hT[B * H], h0[B * H], z[B * H];
    assert_int_equal(dlg_net_read(m.net, m.hT[1], DLG_DATA, hT, B * H), 0);
    uint64_t w0 = fakegpu_waits_now();
    assert_int_equal(dlg_net_copy_blob(m.net, m.hT[1], m.h0[1]), 0);
    assert_int_equal(dlg_net_zero_blob(m.net, m.c0[0]), 0);
    assert_true(fakegpu_waits_now() == w0); /* enqueued only */
    assert_int_equal(dlg_net_read(m.net, m.h0[1], DLG_DATA, h0, B * H), 0);
    assert_memory_equal(hT, h0, sizeof hT);
    assert_int_equal(dlg_net_read(m.net, m.c0[0], DLG_DATA, z, B * H), 0);
    for (int i = 0; i < B * H; i++)
        assert_true(z[i] == 0.f);
    /* sizes differ: one clear error, not sticky */
    assert_int_equal(dlg_net_copy_blob(m.net, m.ids, m.h0[0]), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(m.net), "sizes differ"));
    assert_int_equal(dlg_net_status(m.net), 0);
    assert_int_equal(dlg_net_read_wait(m.net, 1000), -DLG_EINVAL);
    assert_int_equal(dlg_net_status(m.net), 0);
    destroy(&m);
}

/* a label outside 0..V-1: the asynchronous read says so */
static void test_read_wait_bad_label(void **st)
{
    (void)st;
    lm_net m = {0};
    build(&m, "cuda:0", DLG_GRAPHS_OFF);
    m.in[ROWS] = (float)V; /* step 0's first target */
    int rc = step(&m, 0);
    if (!rc)
        rc = dlg_net_read_wait(m.net, m.ticket[0]);
    assert_int_equal(rc, -DLG_EINVAL);
    destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train_step_graph_vs_eager_vs_ref),
        cmocka_unit_test(test_copy_and_zero_blob),
        cmocka_unit_test(test_read_wait_bad_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
