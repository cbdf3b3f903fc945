/* cuda_check's sequence layers: the layer cases run by run_case beside
 * the others (against ref, fresh random inputs, NaN-poisoned outputs), the
 * bad-id check, and the lstm-ptb benchmark.  The benchmark's step is the
 * lstm-ptb workload's (plugins/workloads/mxnet/lm.c): the LSTM state
 * carried on the device (dlg_net_copy_blob), ids and targets written
 * asynchronously from pinned memory, forward, backward, clipping and SGD as
 * one step (dlg_net_train_step_clip: one graph replay), the loss copied
 * back asynchronously; no step waits for the device (the loss of the last
 * step is waited for after the timed loop, as PyTorch's peer synchronises
 * once). */
#include "cuda_check_seq.h"
#include "gpu_nvml.h"

#include <dlgauge/plugin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- layer cases ---------------------------------------------------------- */
#define CT 4 /* time steps */
#define CB 3 /* streams */

void seq_case_embed(dlg_net *n, netio *io)
{
    io->vocab = 7; /* 24 ids over 7 rows: repeats exercise the scatter-add */
    io->ids = dlg_labels(n, "ids", 24);
    io->out = dlg_embedding(n, "embed", io->ids, io->vocab, 5);
}

/* An LSTM layer reading x with its own h0/c0 inputs; hT, cT become extra
 * outputs.  Returns y. */
static int lstm_on(dlg_net *n, netio *io, const char *name, int x, int hidden)
{
    char h[32], c[32];
    snprintf(h, sizeof h, "%s_h0", name);
    snprintf(c, sizeof c, "%s_c0", name);
    int h0 = dlg_input(n, h, CB, hidden, 1, 1), c0 = dlg_input(n, c, CB, hidden, 1, 1);
    io->in[io->nin++] = h0;
    io->in[io->nin++] = c0;
    int hT = -1, cT = -1;
    int y = dlg_lstm(n, name, x, h0, c0, hidden, CT, &hT, &cT);
    io->extra[io->nextra++] = hT;
    io->extra[io->nextra++] = cT;
    return y;
}

void seq_case_lstm(dlg_net *n, netio *io)
{
    int x = dlg_input(n, "x", CT * CB, 5, 1, 1);
    io->in[io->nin++] = x;
    io->out = lstm_on(n, io, "lstm", x, 6);
}

/* x of 2 channels of 2 x 2 (I = 8 in NCHW order, as the weights read it)
 * and states of 2 x 3 x 1 (H = 6): an NHWC half context must not hand the
 * LSTM channels-last rows */
void seq_case_lstm_4d(dlg_net *n, netio *io)
{
    int x = dlg_input(n, "x", CT * CB, 2, 2, 2);
    int h0 = dlg_input(n, "h0", CB, 2, 3, 1), c0 = dlg_input(n, "c0", CB, 2, 3, 1);
    io->in[io->nin++] = x;
    io->in[io->nin++] = h0;
    io->in[io->nin++] = c0;
    int hT = -1, cT = -1;
    io->out = dlg_lstm(n, "lstm", x, h0, c0, 6, CT, &hT, &cT);
    io->extra[io->nextra++] = hT;
    io->extra[io->nextra++] = cT;
}

void seq_case_lstm2(dlg_net *n, netio *io)
{
    int x = dlg_input(n, "x", CT * CB, 5, 1, 1);
    io->in[io->nin++] = x;
    int y = lstm_on(n, io, "lstm0", x, 6);
    io->out = lstm_on(n, io, "lstm1", y, 4);
}

/* lstm-ptb in miniature, without dropout (its masks differ by backend):
 * the tied decoder makes the embedding accumulate into the table's
 * gradient after the decoder wrote it.  Labels are 0..11 (run_case). */
void seq_case_lstm_lm(dlg_net *n, netio *io)
{
    const int vocab = 13, hidden = 8;
    io->vocab = vocab;
    io->ids = dlg_labels(n, "ids", CT * CB);
    io->label = dlg_labels(n, "target", CT * CB);
    int x = dlg_embedding(n, "encoder", io->ids, vocab, hidden);
    x = lstm_on(n, io, "lstm0", x, hidden);
    x = lstm_on(n, io, "lstm1", x, hidden);
    int logits = dlg_fc(n, "decoder", x, vocab);
    dlg_net_tie(n, "decoder", "encoder");
    io->out = dlg_softmax_loss(n, "loss", logits, io->label);
    io->loss = true;
}

int seq_check_bad_id(const char *backend)
{
    dlg_net *net;
    dlg_net_create(&net, "bad_id");
    int ids = dlg_labels(net, "ids", 4);
    int e = dlg_embedding(net, "embed", ids, 5, 3);
    dlg_plan_opts o = {.backend = backend, .seed = 1};
    int fails = dlg_net_plan(net, &o) < 0;
    float v[4] = {0, 4, 5, 1}, out[12]; /* 5 is one past the last id */
    if (!fails)
        fails = dlg_net_write(net, ids, DLG_DATA, v, 4) < 0;
    if (!fails) {
        int rc = dlg_net_forward(net);
        if (rc >= 0)
            rc = dlg_net_read(net, e, DLG_DATA, out, 12);
        fails = rc != -DLG_EINVAL;
        printf("  %-16s %s  %s\n", "bad_id", fails ? "FAIL" : "ok  ",
               rc < 0 ? dlg_net_error(net) : "no error");
    } else
        printf("  %-16s FAIL setup: %s\n", "bad_id", dlg_net_error(net));
    dlg_net_destroy(net);
    return fails;
}

/* ---- lstm-ptb benchmark ------------------------------------------------------- */
#define LM_V 10000
#define LM_H 650
#define LM_L 2
#define LM_T 35

typedef struct lm_bench {
    dlg_net *net;
    int B;
    bool train;
    int ids, target, loss, h0[LM_L], c0[LM_L], hT[LM_L], cT[LM_L];
    float *tok, *tgt, *loss_out; /* pinned (dlg_net_host_alloc) */
    uint64_t ticket;              /* the last step's loss read */
    dlg_clip_stats clip;
} lm_bench;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* lm.c's build() with its defaults (dropout 0.2, untied). */
static int lm_build(lm_bench *b)
{
    dlg_net *net = b->net;
    int rows = LM_T * b->B;
    b->ids = dlg_labels(net, "ids", rows);
    b->target = dlg_labels(net, "target", rows);
    int x = dlg_embedding(net, "encoder", b->ids, LM_V, LM_H);
    x = dlg_dropout(net, "drop_in", x, 0.2f);
    for (int l = 0; l < LM_L; l++) {
        char n0[32], n1[32], nl[32], nd[32];
        snprintf(n0, sizeof n0, "h0_%d", l);
        snprintf(n1, sizeof n1, "c0_%d", l);
        snprintf(nl, sizeof nl, "lstm%d", l);
        snprintf(nd, sizeof nd, "drop%d", l);
        b->h0[l] = dlg_input(net, n0, b->B, LM_H, 1, 1);
        b->c0[l] = dlg_input(net, n1, b->B, LM_H, 1, 1);
        x = dlg_lstm(net, nl, x, b->h0[l], b->c0[l], LM_H, LM_T, &b->hT[l], &b->cT[l]);
        x = dlg_dropout(net, nd, x, 0.2f);
    }
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.0577f},
                        (dlg_filler){DLG_FILL_CONSTANT, 0});
    int logits = dlg_fc(net, "decoder", x, LM_V);
    dlg_net_set_param_mult(net, dlg_net_param(net, "decoder", 1), 1, 0);
    b->loss = dlg_softmax_loss(net, "loss", logits, b->target);
    return dlg_net_status(net);
}

/* hT -> h0 on the device, as lm.c carries the state (zeros first). */
static int lm_carry(lm_bench *b, bool first)
{
    int rc = 0;
    for (int l = 0; l < LM_L && !rc; l++)
        for (int k = 0; k < 2 && !rc; k++) {
            int from = k ? b->cT[l] : b->hT[l], to = k ? b->c0[l] : b->h0[l];
            rc = first ? dlg_net_zero_blob(b->net, to) : dlg_net_copy_blob(b->net, from, to);
        }
    return rc;
}

/* One step, enqueued: its loss is read back asynchronously (lm_loss). */
static int lm_step(lm_bench *b, bool first)
{
    size_t rows = (size_t)LM_T * b->B;
    int rc = lm_carry(b, first);
    /* the same ids every step: the sources never change, so no write waits */
    if (!rc)
        rc = dlg_net_write_async(b->net, b->ids, b->tok, rows);
    if (!rc)
        rc = dlg_net_write_async(b->net, b->target, b->tgt, rows);
    /* clip 0.25 (decided and applied on the device), lr 20 */
    dlg_sgd sgd = {20.f, 0, 0};
    if (!rc)
        rc = b->train ? dlg_net_train_step_clip(b->net, &sgd, 0.25, &b->clip)
                      : dlg_net_infer_step(b->net);
    if (!rc)
        rc = dlg_net_read_async(b->net, b->loss, b->loss_out, 3, &b->ticket);
    return rc;
}

/* The last step's loss: waits for it. */
static int lm_loss(lm_bench *b, float *loss)
{
    int rc = dlg_net_read_wait(b->net, b->ticket);
    *loss = rc ? NAN : b->loss_out[0];
    return rc;
}

static int lm_open(lm_bench *b, const char *backend)
{
    size_t rows = (size_t)LM_T * b->B;
    dlg_plan_opts o = {.backend = backend, .train = b->train, .seed = 1};
    if (dlg_net_create(&b->net, "lstm-ptb") < 0 || lm_build(b) < 0 || dlg_net_plan(b->net, &o) < 0)
        return -1;
    b->tok = dlg_net_host_alloc(b->net, rows * sizeof(float));
    b->tgt = dlg_net_host_alloc(b->net, rows * sizeof(float));
    b->loss_out = dlg_net_host_alloc(b->net, 3 * sizeof(float));
    if (!b->tok || !b->tgt || !b->loss_out)
        return -1;
    uint64_t s = 7; /* synthetic ids, the same every step (as the PyTorch peer) */
    for (size_t i = 0; i < rows; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b->tok[i] = (float)((s >> 33) % LM_V);
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b->tgt[i] = (float)((s >> 33) % LM_V);
    }
    return 0;
}

int seq_bench_lm(int argc, char **argv)
{
    const char *mode = argv[1], *backend = argv[2];
    lm_bench b = {.B = atoi(argv[3]), .train = strcmp(argv[1], "train") == 0};
    int warm = argc > 4 ? atoi(argv[4]) : 5, iters = argc > 5 ? atoi(argv[5]) : 20;
    if (b.B < 1 || iters < 1) {
        fprintf(stderr, "cuda_check bench lstm-ptb: BATCH and ITERS must be positive\n");
        return 2;
    }
    double t0 = now_s(), plan_s = 0, dt = 0;
    float loss = NAN;
    int rc = lm_open(&b, backend);
    plan_s = now_s() - t0;
    for (int i = 0; i < warm && !rc; i++)
        rc = lm_step(&b, i == 0);
    if (!rc && warm > 0) /* the warm-up done before the clock starts */
        rc = lm_loss(&b, &loss);
    dlg_nvml *nv = NULL;
    char why[200];
    uint64_t e0 = 0, e1 = 0;
    bool energy = !rc && dlg_nvml_open(&nv, NULL, why, sizeof why) == 0 &&
                  dlg_nvml_energy_mj(nv, 0, &e0) == 0;
    t0 = now_s();
    for (int i = 0; i < iters && !rc; i++)
        rc = lm_step(&b, warm == 0 && i == 0);
    if (!rc) /* the steps' end: the last loss read waits for them */
        rc = lm_loss(&b, &loss);
    dt = now_s() - t0;
    energy = energy && dlg_nvml_energy_mj(nv, 0, &e1) == 0;
    dlg_nvml_close(nv);
    double tokens = (double)LM_T * b.B * iters;
    if (rc < 0 || !isfinite(loss))
        printf("bench lstm-ptb %s %s %d FAIL %s (loss %g)\n", mode, backend, b.B,
               b.net ? dlg_net_error(b.net) : "out of memory", loss);
    else {
        printf("bench lstm-ptb %s %s %d %.1f %.3f macs=%lld step_macs=%lld plan_s=%.1f loss=%.3f "
               "unit=tok\n",
               mode, backend, b.B, tokens / dt, 1e3 * dt / iters,
               (long long)dlg_net_macs_total(b.net), (long long)dlg_net_step_macs(b.net), plan_s,
               loss);
        if (energy)
            printf("energy lstm-ptb %s %s %d %.6f\n", mode, backend, b.B,
                   (double)(e1 - e0) / 1e3 / tokens);
    }
    if (b.net) {
        dlg_net_host_free(b.net, b.tok);
        dlg_net_host_free(b.net, b.tgt);
        dlg_net_host_free(b.net, b.loss_out);
    }
    dlg_net_destroy(b.net);
    return rc < 0 || !isfinite(loss) ? 1 : 0;
}
