/* lstm-ptb setup, step and report.  Setup (untimed) reads the corpus,
 * builds and plans the model and batchifies the split in use; a step is
 * one truncated-BPTT segment of bptt x batch tokens: forward (infer:
 * held-out perplexity) or forward + backward + clipped SGD (train), with
 * the LSTM state carried from the previous segment and reset each epoch. */
#define _GNU_SOURCE
#include "lm.h"

#include <dlgauge/nn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cnn.h"
#include "cnn_mem.h"
#include "cuda/cuda_device.h"
#include "lm_vocab.h"
#include "lm_corpus.h"
#include "nn_opts.h"
#include "nn_profile.h"
#include "nn_ranks.h"
#include "peak.h"

#define MAX_LAYERS 16

typedef struct lm {
    const dlg_host *h;
    dlg_net *net;
    lm_corpus corpus;
    bool train;
    int T, B, L, H, V;
    double dropout;
    const char *backend;
    bool profile; /* the net times its layers (dlg_plan_opts.profile) */
    /* batchified split: stream b is tokens[b*per_stream ...] */
    const int32_t *tokens;
    int64_t per_stream, segments, seg;
    int tail; /* time steps of the last segment (infer: may be < T) */
    uint64_t epochs;
    int ids_blob, target_blob, loss_blob, logits_blob;
    int h0[MAX_LAYERS], c0[MAX_LAYERS], hT[MAX_LAYERS], cT[MAX_LAYERS];
    /* host staging from dlg_net_host_alloc (pinned on cuda: the writes and
     * the loss read are asynchronous), allocated in setup */
    float *ids, *target, *loss_out;
    float *logits; /* infer with a short last segment: its scores */
    float lr, momentum;
    double clip;
    double flops_per_item;
    uint64_t plan_bytes;
    dlg_peak peak;
    /* since setup, but timed_*: the steps in gflops and the profile (from
     * begin_timed; never the first step after setup) */
    uint64_t steps, timed_steps, timed_items, timed_ns;
    double loss_sum, last_loss; /* loss_sum: over loss_tokens tokens */
    dlg_clip_stats clipst;      /* the last gradient norm, clipped steps */
    uint64_t loss_tokens;
    nn_ranks ranks; /* data-parallel training across the run's ranks */
} lm;

/* Zaremba et al. (2014) small / medium / large: hidden units, unrolled
 * steps, dropout on the non-recurrent connections (PyTorch's
 * word_language_model README runs medium and large with these too) */
static const int size_hidden[3] = {200, 650, 1500};
static const int size_bptt[3] = {20, 35, 35};
static const double size_dropout[3] = {0, 0.5, 0.65};

const dlg_option lm_options[] = {
    [L_MODE] = {"mode", DLG_OPT_ENUM, "train", NULL, NULL, "train|infer",
                "train: forward + backward + SGD per segment; infer: forward only, the held-out "
                "perplexity of the weights as initialised (none are loaded: its loss stays near "
                "ln(vocab), a speed figure, not the example's trained perplexity)", 0},
    [L_DATA] = {"data", DLG_OPT_STRING, "synthetic", NULL, NULL, NULL,
                "text:FILE (PTB format; held-out: FILE with train->valid, else last 10%) | "
                "synthetic[:WORDS]", DLG_OPT_NOSWEEP | DLG_OPT_PATH_IN},
    [L_SIZE] = {"size", DLG_OPT_ENUM, "medium", NULL, NULL, "small|medium|large",
                "Zaremba et al. presets: hidden (= embedding) 200, 650, 1500; bptt 20, 35, 35; "
                "dropout 0, 0.5, 0.65 (each unless given)", 0},
    [L_HIDDEN] = {"hidden", DLG_OPT_INT, "0", "0", "65536", NULL,
                  "LSTM units and embedding size (0: from size)", 0},
    [L_LAYERS] = {"layers", DLG_OPT_INT, "2", "1", "16", NULL, "stacked LSTM layers", 0},
    [L_BPTT] = {"bptt", DLG_OPT_INT, NULL, "1", "100000", NULL,
                "truncated BPTT length (time steps per segment; unset: from size)", 0},
    [L_BATCH] = {"batch", DLG_OPT_INT, "20", "1", "65536", NULL,
                 "parallel streams (tokens per step = batch x bptt; per rank: ranks x batch in all)", 0},
    [L_VOCAB] = {"vocab", DLG_OPT_INT, "10000", "2", "10000000", NULL,
                 "vocabulary cap: rarer words map to <unk> (logged)", 0},
    [L_DROPOUT] = {"dropout", DLG_OPT_DOUBLE, NULL, "0", "0.99", NULL,
                   "after the embedding and every LSTM layer, training only (unset: from size; "
                   "PyTorch example's own default: 0.2)", 0},
    [L_TIED] = {"tied", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
                "decoder weight = embedding table (Press & Wolf)", 0},
    [L_LR] = {"lr", DLG_OPT_DOUBLE, "20", "0", "1000", NULL,
              "SGD learning rate (PyTorch example: 20; loss is the mean per token)", 0},
    [L_CLIP] = {"clip", DLG_OPT_DOUBLE, "0.25", "0", "1000", NULL,
                "gradient clipping: global L2 norm (PyTorch example: 0.25; 0 = off)", 0},
    [L_MOMENTUM] = {"momentum", DLG_OPT_DOUBLE, "0", "0", "1", NULL, "SGD momentum", 0},
    [L_BACKEND] = {"backend", DLG_OPT_ENUM, "cpu", NULL, NULL, "cpu|ref",
                   "cpu: oneDNN; ref: plain-C reference kernels (slow, for checking)", 0},
    [L_DEVICE] = {"device", DLG_OPT_STRING, "auto", NULL, NULL, NULL,
                  "auto | cpu | cuda | cuda:N (auto: a CUDA device if there is one, else the CPU; "
                  "auto and cuda take GPU (local rank mod the GPUs): one GPU per rank of the node)", 0},
    [L_PRECISION] = {"precision", DLG_OPT_ENUM, "fp32", NULL, NULL, "fp32|bf16|tf32|fp16",
                     "bf16 (cpu, AVX-512): the LSTM and decoder on oneDNN's bf16 kernels with fp32 "
                     "master weights, weight gradients, cell state and loss (autocast's recipe); "
                     "tf32 (cuda): fp32 data, TF32 tensor-core math; fp16 (cuda): cuDNN's LSTM "
                     "and the decoder on fp16 data with fp32 math, fp32 master weights and "
                     "dynamic loss scaling (torch.autocast + GradScaler)", 0},
    CNN_CUDA_OPTION(L_ALGO_CACHE, L_WORKSPACE, L_DETERMINISTIC, L_GRAPHS),
    CNN_PROFILE_OPTION(L_PROFILE),
    [L_COUNT] = {0}};

const dlg_metric lm_metrics[] = {
    {"loss", DLG_FIELD_DOUBLE, "nats/token",
     "mean cross-entropy per predicted token: train, over the steps run; infer, over the "
     "held-out tokens evaluated, each once (once epochs >= 1: every token of each stream but "
     "its first, as PyTorch's word_language_model evaluates); under several ranks, over every "
     "rank's tokens"},
    {"perplexity", DLG_FIELD_DOUBLE, "", "exp(loss): e to the mean cross-entropy per token, of each repetition (a row of several holds their mean, as of every workload field: near, not equal to, exp of the row's loss)"},
    {"loss_tokens", DLG_FIELD_INT, "", "predicted tokens that loss averages over (every rank's)"},
    {"last_loss", DLG_FIELD_DOUBLE, "nats/token",
     "cross-entropy of the last segment; under several ranks, the mean of the ranks' last segments"},
    {"unigram_perplexity", DLG_FIELD_DOUBLE, "", "the training split's unigram perplexity"},
    {"flops_per_item", DLG_FIELD_DOUBLE, "FLOP/token",
     "2 x the multiply-adds of a step per token (LSTM gates + decoder): the forward's; train: "
     "forward, weight gradient and data gradient of each (3x the forward)"},
    {"gflops", DLG_FIELD_DOUBLE, "GFLOP/s",
     "achieved over the repetition's timed steps (never the first step after setup); under "
     "several ranks, the job's: every rank's tokens over the slowest rank's time"},
    {"pct_peak", DLG_FIELD_DOUBLE, "%", "gflops as a percentage of peak_gflops"},
    {"peak_gflops", DLG_FIELD_DOUBLE, "GFLOP/s",
     "peak of the device that ran: the job's cores' FP32 peak (precision = bf16: their bf16 "
     "rate), or on a GPU its dense peak for the precision (FP32, TF32, FP16 tensor core); under "
     "several ranks, the ranks' peaks summed (ranks that share cores count them once each), "
     "absent where a rank's is unknown"},
    {"peak_source", DLG_FIELD_STRING, "", "how the peak was derived"},
    {"params", DLG_FIELD_INT, "",
     "parameters of the model; one bias per LSTM gate (PyTorch, cuDNN and MXNet keep two, "
     "b_ih + b_hh: their count is 4 x hidden x layers higher, 5200 at PTB medium)"},
    {"hidden", DLG_FIELD_INT, "", "LSTM units (= embedding size)"},
    {"bptt", DLG_FIELD_INT, "", "time steps per segment (tokens per step = batch x bptt)"},
    {"dropout", DLG_FIELD_DOUBLE, "", "dropout ratio (applied in training only)"},
    {"vocab_size", DLG_FIELD_INT, "", "ids in the vocabulary (incl. <eos>, <unk>)"},
    {"unk_words", DLG_FIELD_INT, "", "distinct words mapped to <unk> by the vocab cap"},
    {"unk_tokens", DLG_FIELD_INT, "", "tokens of those words"},
    {"split_tokens", DLG_FIELD_INT, "", "tokens of the split in use (train or held-out)"},
    {"segments", DLG_FIELD_INT, "",
     "bptt segments per epoch (infer: the last may be shorter; train drops a short one)"},
    {"epochs", DLG_FIELD_INT, "", "completed passes over the split"},
    {"grad_norm", DLG_FIELD_DOUBLE, "", "global gradient norm of the last step, before clipping"},
    {"clipped_pct", DLG_FIELD_DOUBLE, "%", "steps whose gradient was clipped"},
    {"plan_bytes", DLG_FIELD_INT, "bytes",
     "memory the planned net holds: params, kept and shared activations, gradients, workspace"},
    {"backend", DLG_FIELD_STRING, "",
     "engine backend that ran: cpu (oneDNN), ref; cuda:N, cuda-tf32:N, cuda-bf16:N, cuda-fp16:N"},
    NN_LOSS_SCALE_FIELDS,
    NN_PROFILE_FIELDS,
    {NULL, 0, NULL, NULL}};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The option rules that need nothing but the values (bptt, batch,
 * layers), for setup and check alike; T and B as the size defaults give
 * them. */
static int check_shape(const dlg_host *h, const dlg_value *o, int T, int B)
{
    if (T < 1)
        return h->error(h, DLG_EINVAL, "bptt = %d: must be at least 1 time step", T);
    if (B < 1)
        return h->error(h, DLG_EINVAL, "batch = %s: must be at least 1 stream", o[L_BATCH].text);
    if (o[L_LAYERS].i < 1 || o[L_LAYERS].i > MAX_LAYERS)
        return h->error(h, DLG_EINVAL, "layers = %s: must be 1..%d", o[L_LAYERS].text, MAX_LAYERS);
    if ((int64_t)T * B > (1 << 24))
        return h->error(h, DLG_EINVAL, "bptt x batch = %lld tokens per step: at most %d", (long long)T * B,
                        1 << 24);
    return 0;
}

/* What the chosen backend ("cuda-fp16:0", "cpu") cannot do for lstm-ptb. */
static int check_backend(const dlg_host *h, const dlg_value *o, const char *backend)
{
    /* cuDNN documents no bf16 RNN: on CUDA the LSTM's mixed precision is fp16 */
    if (o[L_PRECISION].i == 1 && strncmp(backend, "cuda", 4) == 0)
        return h->error(h, DLG_ENOTSUP,
                        "precision = bf16: lstm-ptb runs bf16 on the cpu only (cpu-bf16); on "
                        "CUDA its mixed precision is fp16 (cuDNN's fp16 LSTM, as autocast): set "
                        "precision = fp16, or device = cpu");
    return 0;
}

static int bptt_of(const dlg_value *o) { return o[L_BPTT].set ? (int)o[L_BPTT].i : size_bptt[o[L_SIZE].i % 3]; }

static const char *cpu_backend(const dlg_value *o) { return o[L_BACKEND].i == 1 ? "ref" : "cpu"; }

int lm_check(const dlg_host *h, const dlg_value *o, const dlg_job_info *job)
{
    (void)job;
    char backend[32];
    int rc = check_shape(h, o, bptt_of(o), (int)o[L_BATCH].i);
    if (!rc)
        rc = nn_check_device(h, o[L_DEVICE].text, o[L_PRECISION].text, cpu_backend(o), backend, sizeof backend);
    if (!rc && backend[0]) /* device = auto: only the machine decides */
        rc = check_backend(h, o, backend);
    return rc ? rc : lm_corpus_check(h, o[L_DATA].text, (int)o[L_VOCAB].i);
}

static int options(lm *s, const dlg_value *o)
{
    const dlg_host *h = s->h;
    s->train = o[L_MODE].i == 0;
    int size = (int)(o[L_SIZE].i % 3);
    s->H = o[L_HIDDEN].i > 0 ? (int)o[L_HIDDEN].i : size_hidden[size];
    s->L = (int)o[L_LAYERS].i;
    s->T = bptt_of(o);
    s->dropout = o[L_DROPOUT].set ? o[L_DROPOUT].d : size_dropout[size];
    s->B = (int)o[L_BATCH].i;
    s->lr = (float)o[L_LR].d;
    s->momentum = (float)o[L_MOMENTUM].d;
    s->clip = o[L_CLIP].d;
    int rc = check_shape(h, o, s->T, s->B);
    if (rc < 0)
        return rc;
    /* auto or cuda: GPU (local rank mod the GPUs) when there is one, auto
     * else the CPU, with a note either way */
    char note[160], err[768];
    rc = dlg_device_backend(o[L_DEVICE].text, o[L_PRECISION].text, dlg_host_local_rank(h), cpu_backend(o), &s->backend,
                            note, sizeof note, err, sizeof err);
    if (rc < 0)
        return h->error(h, -rc, "%s", err);
    if ((rc = check_backend(h, o, s->backend)) < 0)
        return rc;
    if (note[0])
        h->log(h, DLG_LOG_INFO, "%s", note);
    s->profile = o[L_PROFILE].i != 0;
    return 0;
}

/* Streams as the reference examples batchify: the split is cut into
 * `batch` contiguous columns; the remainder (< batch tokens) is dropped.
 * Infer predicts every token of a stream but its first, as PyTorch's
 * evaluate() does, so the last segment is short when bptt does not divide
 * that count (it runs padded; its loss comes from its real rows alone).
 * Training drops a short last segment: padded rows would add gradient. */
static int batchify(lm *s)
{
    const lm_corpus *c = &s->corpus;
    s->tokens = s->train ? c->train : c->valid;
    int64_t n = s->train ? c->ntrain : c->nvalid;
    /* across ranks each takes its own contiguous slice first (equal ones,
     * so every rank has the same segments and epochs: the remainder is
     * dropped), then cuts it into streams as above */
    n /= s->ranks.size;
    s->tokens += n * s->ranks.rank;
    s->per_stream = n / s->B;
    int64_t predicted = s->per_stream > 0 ? s->per_stream - 1 : 0;
    int64_t rest = s->train ? 0 : predicted % s->T;
    s->segments = predicted / s->T + (rest > 0);
    s->tail = rest > 0 ? (int)rest : s->T;
    if (s->segments < 1)
        return s->h->error(s->h, DLG_EINVAL,
                           "data: the %s split (%s) has %lld tokens%s, %lld per stream at batch "
                           "= %d; bptt = %d needs at least %d per stream",
                           s->train ? "training" : "held-out",
                           s->train ? c->train_name : c->valid_name, (long long)n,
                           s->ranks.size > 1 ? " per rank" : "", (long long)s->per_stream, s->B,
                           s->T, s->train ? s->T + 1 : 2);
    return 0;
}

static int build(lm *s, bool tied)
{
    dlg_net *net = s->net;
    double dropout = s->dropout;
    int rows = s->T * s->B;
    s->ids_blob = dlg_labels(net, "ids", rows);
    s->target_blob = dlg_labels(net, "target", rows);
    int x = dlg_embedding(net, "encoder", s->ids_blob, s->V, s->H);
    if (dropout > 0)
        x = dlg_dropout(net, "drop_in", x, (float)dropout);
    for (int l = 0; l < s->L; l++) {
        char n0[32], n1[32], nl[32], nd[32];
        snprintf(n0, sizeof n0, "h0_%d", l);
        snprintf(n1, sizeof n1, "c0_%d", l);
        snprintf(nl, sizeof nl, "lstm%d", l);
        snprintf(nd, sizeof nd, "drop%d", l);
        s->h0[l] = dlg_input(net, n0, s->B, s->H, 1, 1);
        s->c0[l] = dlg_input(net, n1, s->B, s->H, 1, 1);
        x = dlg_lstm(net, nl, x, s->h0[l], s->c0[l], s->H, s->T, &s->hT[l], &s->cT[l]);
        if (dropout > 0)
            x = dlg_dropout(net, nd, x, (float)dropout);
    }
    /* PyTorch's example: decoder U(-0.1, 0.1) (same variance), bias 0 */
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.0577f},
                        (dlg_filler){DLG_FILL_CONSTANT, 0});
    int logits = dlg_fc(net, "decoder", x, s->V);
    s->logits_blob = logits;
    if (s->tail < s->T) /* the short segment's loss is read from its scores */
        dlg_net_keep(net, logits);
    if (tied)
        dlg_net_tie(net, "decoder", "encoder");
    /* plain SGD for the bias, not Caffe's lr_mult 2 */
    dlg_net_set_param_mult(net, dlg_net_param(net, "decoder", 1), 1, 0);
    s->loss_blob = dlg_softmax_loss(net, "loss", logits, s->target_blob);
    if (dlg_net_status(net) < 0)
        return s->h->error(s->h, -dlg_net_status(net), "%s", dlg_net_error(net));
    return 0;
}

/* need: the floor before planning (at_least), the plan's own bytes after. */
static int check_memory(lm *s, uint64_t need, bool at_least)
{
    char what[160];
    snprintf(what, sizeof what, "lstm-ptb (hidden %d, vocab %d, batch %d, bptt %d)", s->H, s->V,
             s->B, s->T);
    return cnn_mem_check(s->h, need, at_least, what, "");
}

static int plan(lm *s, const dlg_value *o, const dlg_job_info *job)
{
    int rc = check_memory(s, cnn_mem_floor_bytes(s->net, s->train), true);
    if (rc < 0)
        return rc;
    dlg_plan_opts po = {.backend = s->backend,
                        .threads = job && job->cpus > 0 ? job->cpus : 0,
                        .train = s->train,
                        .seed = job ? job->seed : 1};
    nn_opts_apply(&po, o, L_ALGO_CACHE, L_WORKSPACE, L_DETERMINISTIC, L_GRAPHS);
    po.profile = s->profile;
    nn_opts_host(&po, s->h);
    if (dlg_net_plan(s->net, &po) < 0)
        return nn_plan_failed(s->h, s->net);
    s->flops_per_item = 2.0 * (double)dlg_net_step_macs(s->net);
    /* planned but untouched: the exact figure, before any page is used */
    s->plan_bytes = dlg_net_memory_bytes(s->net);
    if ((rc = check_memory(s, s->plan_bytes, false)) < 0)
        return rc;
    /* the device's own peak: a GPU's for the precision, else the cores' */
    dlg_peak_for_backend(&s->peak, s->backend, po.threads > 0 ? po.threads : 1);
    return 0;
}

static int setup_all(lm *s, const dlg_value *o, const dlg_job_info *job)
{
    const dlg_host *h = s->h;
    int rc = options(s, o);
    if (rc < 0)
        return rc;
    if ((rc = lm_corpus_load(&s->corpus, h, o[L_DATA].text, (int)o[L_VOCAB].i,
                             job ? job->seed : 1)) < 0)
        return rc;
    s->V = s->corpus.vocab;
    if ((rc = batchify(s)) < 0)
        return rc;
    size_t rows = (size_t)s->T * (size_t)s->B;
    if (s->tail < s->T)
        s->logits = malloc(rows * (size_t)s->V * sizeof(float));
    if ((s->tail < s->T && !s->logits) || dlg_net_create(&s->net, "lstm-ptb") < 0)
        return h->error(h, DLG_ENOMEM, "out of memory");
    if ((rc = build(s, o[L_TIED].i != 0)) < 0 || (rc = plan(s, o, job)) < 0)
        return rc;
    if (s->train && (rc = nn_ranks_attach(&s->ranks, s->net)) < 0)
        return rc;
    s->ids = dlg_net_host_alloc(s->net, rows * sizeof(float));
    s->target = dlg_net_host_alloc(s->net, rows * sizeof(float));
    s->loss_out = dlg_net_host_alloc(s->net, 3 * sizeof(float));
    if (!s->ids || !s->target || !s->loss_out)
        return h->error(h, DLG_ENOMEM,
                        "out of memory for %zu bytes of host staging (pinned on cuda)",
                        (2 * rows + 3) * sizeof(float));
    return 0;
}

int lm_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state)
{
    *state = NULL;
    lm *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    nn_ranks_init(&s->ranks, h);
    int rc = setup_all(s, opts, job);
    if (rc < 0) {
        lm_teardown(s);
        return rc;
    }
    *state = s;
    return 0;
}

/* hT -> h0 (carry), or zeros at an epoch start: on the device, without a
 * wait (dlg_net_copy_blob, dlg_net_zero_blob). */
static int carry_state(lm *s, bool reset)
{
    int rc = 0;
    for (int l = 0; l < s->L && !rc; l++)
        for (int k = 0; k < 2 && !rc; k++) {
            int from = k ? s->cT[l] : s->hT[l], to = k ? s->c0[l] : s->h0[l];
            rc = reset ? dlg_net_zero_blob(s->net, to) : dlg_net_copy_blob(s->net, from, to);
        }
    return rc;
}

/* Time steps of the current segment. */
static int seg_steps(const lm *s) { return s->seg == s->segments - 1 ? s->tail : s->T; }

/* The segment's ids and next-token targets; a short segment's rows past
 * its end get id 0 (the LSTM is causal: they do not change earlier rows).
 * Written asynchronously: the previous step's copies have been read once
 * its dlg_net_timer_end returned (synced), or dlg_net_write_wait says so. */
static int feed(lm *s, bool timed)
{
    int rc = timed ? 0 : dlg_net_write_wait(s->net);
    if (rc)
        return rc;
    int64_t base = s->seg * s->T;
    int steps = seg_steps(s);
    for (int t = 0; t < s->T; t++)
        for (int b = 0; b < s->B; b++) {
            const int32_t *col = s->tokens + (int64_t)b * s->per_stream + base + t;
            s->ids[t * s->B + b] = t < steps ? (float)col[0] : 0;
            s->target[t * s->B + b] = t < steps ? (float)col[1] : 0;
        }
    size_t rows = (size_t)s->T * (size_t)s->B;
    rc = dlg_net_write_async(s->net, s->ids_blob, s->ids, rows);
    return rc ? rc : dlg_net_write_async(s->net, s->target_blob, s->target, rows);
}

/* One whole step: forward (infer), or forward, backward, clipping as
 * torch.nn.utils.clip_grad_norm_ and SGD (train), which a backend may
 * capture and replay as one graph.  On cuda the clip is decided and applied
 * on the device (the norm and the count of clipped steps are read when
 * reported); on the host it scales the step's lr instead, the same with no
 * weight decay, without a pass over the gradients. */
static int run_step(lm *s)
{
    if (!s->train)
        return dlg_net_infer_step(s->net);
    dlg_sgd sgd = {s->lr, s->momentum, 0};
    return dlg_net_train_step_clip(s->net, &sgd, s->clip, &s->clipst);
}

/* Mean cross-entropy of the first `rows` rows of the kept decoder scores
 * (log-sum-exp in double, as the loss layer's mean over all rows). */
static int rows_loss(lm *s, int64_t rows, double *loss)
{
    size_t n = (size_t)s->T * (size_t)s->B * (size_t)s->V;
    int rc = dlg_net_read(s->net, s->logits_blob, DLG_DATA, s->logits, n);
    if (rc)
        return rc;
    double sum = 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *z = s->logits + r * s->V;
        double m = z[0], e = 0;
        for (int v = 1; v < s->V; v++)
            m = z[v] > m ? z[v] : m;
        for (int v = 0; v < s->V; v++)
            e += exp((double)z[v] - m);
        sum += m + log(e) - z[(int64_t)s->target[r]];
    }
    *loss = sum / (double)rows;
    return 0;
}

/* A non-finite loss: divergence when training; at inference (fixed
 * weights, nothing learnt) a fault of the model or the device instead. */
static int nonfinite(const lm *s, double loss)
{
    unsigned long long step = (unsigned long long)s->steps + 1;
    if (s->train)
        return s->h->error(s->h, DLG_EINVAL,
                           "training diverged: loss is %g at step %llu (lower lr or clip)", loss,
                           step);
    return s->h->error(s->h, DLG_EINVAL,
                       "infer: held-out loss is %g at step %llu (segment %lld of %lld): the "
                       "forward pass produced a non-finite value (backend %s)",
                       loss, step, (long long)s->seg + 1, (long long)s->segments, s->backend);
}

int lm_step(void *state, dlg_step *out)
{
    lm *s = state;
    /* the first step: untimed by default (warmup); the same words first,
     * as a file per rank numbers them its own way */
    int src = s->train && !s->ranks.started ? lm_vocab_agree(s->h, s->ranks.rank, s->ranks.size, s->ranks.hashes,
                                                             s->corpus.words, s->corpus.words_len,
                                                             s->corpus.train_name)
                                            : 0;
    if (src == 0 && s->train)
        src = nn_ranks_start(&s->ranks, s->net);
    if (src < 0)
        return src;
    uint64_t t0 = now_ns();
    /* device timing from here, state carry and input included (ENOTSUP on
     * the cpu: the runner's host clock times the step) */
    int trc = dlg_net_timer_begin(s->net);
    if (trc < 0 && trc != -DLG_ENOTSUP)
        return s->h->error(s->h, -trc, "%s", dlg_net_error(s->net));
    bool reset = s->steps == 0 || s->seg == s->segments;
    if (s->seg == s->segments)
        s->seg = 0;
    uint64_t ticket = 0;
    int rc = carry_state(s, reset);
    if (!rc)
        rc = feed(s, trc == 0);
    if (!rc)
        rc = run_step(s);
    /* the loss copied to pinned memory behind the step; the timer's end
     * waits for the step (the one host wait per step: the runner's step
     * time), so the read has landed by then and costs no second wait */
    if (!rc)
        rc = dlg_net_read_async(s->net, s->loss_blob, s->loss_out, 3, &ticket);
    if (!rc && trc == 0)
        rc = dlg_net_timer_end(s->net, &out->elapsed_ns);
    if (!rc)
        rc = dlg_net_read_wait(s->net, ticket);
    int steps = seg_steps(s);
    uint64_t items = (uint64_t)steps * (uint64_t)s->B;
    double loss = rc ? NAN : s->loss_out[0];
    if (!rc && steps < s->T)
        rc = rows_loss(s, (int64_t)items, &loss);
    if (rc < 0)
        return s->h->error(s->h, -rc, "%s", dlg_net_error(s->net));
    if (!isfinite(loss))
        return nonfinite(s, loss);
    /* infer: fixed weights and a zero state at each pass's start, so later
     * passes repeat the first; held-out loss counts each token once */
    if (s->train || s->epochs == 0) {
        s->loss_sum += loss * (double)items;
        s->loss_tokens += items;
    }
    /* a pass counts once its last segment has run, not when the next starts */
    if (++s->seg == s->segments)
        s->epochs++;
    s->last_loss = loss;
    if (s->steps++ > 0) { /* the first step warms caches and the OpenMP team */
        s->timed_ns += out->elapsed_ns ? out->elapsed_ns : now_ns() - t0;
        s->timed_items += items;
        s->timed_steps++;
    } else if (s->profile)
        dlg_net_layer_time_reset(s->net);
    out->items = items;
    return 0;
}

int lm_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    lm *s = state;
    int rrc = s->train ? nn_ranks_check(&s->ranks, s->net, s->steps) : 0; /* untimed */
    if (rrc < 0)
        return rrc;
    /* the job's: every rank's tokens pooled, their items over the slowest one's time */
    double sum[] = {s->loss_sum, (double)s->loss_tokens, s->last_loss, (double)s->timed_items,
                    s->peak.flops, s->peak.flops > 0};
    double slowest = (double)s->timed_ns;
    if ((rrc = nn_ranks_job(&s->ranks, sum, sizeof sum / sizeof *sum, &slowest)) < 0)
        return rrc;
    double mean = sum[1] > 0 ? sum[0] / sum[1] : 0;
    api->add_double(f, "loss", mean);
    api->add_double(f, "perplexity", exp(mean));
    api->add_int(f, "loss_tokens", (int64_t)(sum[1] + 0.5));
    api->add_double(f, "last_loss", sum[2] / s->ranks.size);
    api->add_double(f, "unigram_perplexity", s->corpus.unigram_ppl);
    nn_ranks_peak_report(&s->ranks, &s->peak, s->flops_per_item, sum[3], sum[4], sum[5], slowest, api, f);
    api->add_int(f, "params", dlg_net_param_total(s->net));
    api->add_int(f, "hidden", s->H);
    api->add_int(f, "bptt", s->T);
    api->add_double(f, "dropout", s->dropout);
    api->add_int(f, "vocab_size", s->V);
    api->add_int(f, "unk_words", s->corpus.unk_words);
    api->add_int(f, "unk_tokens", s->corpus.unk_tokens);
    api->add_int(f, "split_tokens", s->train ? s->corpus.ntrain : s->corpus.nvalid);
    api->add_int(f, "segments", s->segments);
    api->add_int(f, "epochs", (int64_t)s->epochs);
    if (s->train) {
        int rc = dlg_net_clip_read(s->net, &s->clipst); /* waits: once per report */
        if (rc < 0)
            return s->h->error(s->h, -rc, "%s", dlg_net_error(s->net));
        api->add_double(f, "grad_norm", s->clipst.norm);
        api->add_double(f, "clipped_pct",
                        s->steps ? 100.0 * (double)s->clipst.clipped / (double)s->steps : 0);
    }
    api->add_int(f, "plan_bytes", (int64_t)s->plan_bytes);
    api->add_string(f, "backend", s->backend);
    if (s->profile)
        nn_profile_report(s->net, s->timed_steps, s->h, api, f);
    nn_loss_scale_report(s->net, api, f);
    return 0;
}

int lm_begin_timed(void *state)
{
    lm *s = state;
    if (s->steps == 0) /* no warm-up: the first timed step stays out, as ever */
        return 0;
    s->timed_steps = s->timed_items = s->timed_ns = 0;
    if (s->profile)
        dlg_net_layer_time_reset(s->net);
    return 0;
}

void lm_teardown(void *state)
{
    lm *s = state;
    if (!s)
        return;
    dlg_net_host_free(s->net, s->ids);
    dlg_net_host_free(s->net, s->target);
    dlg_net_host_free(s->net, s->loss_out);
    dlg_net_destroy(s->net);
    lm_corpus_free(&s->corpus);
    nn_ranks_free(&s->ranks);
    free(s->logits);
    free(s);
}
