/* CUDA backend checks and benchmark, one program (run by ctest, which
 * skips it with 77 on a machine without a GPU, and by scripts/gpu-check.sh).
 *
 *   cuda_check layers [backend ...]   every layer forward/backward on the
 *        backend (default cuda:0, cuda-tf32:0, cuda-bf16:0, cuda-fp16:0,
 *        cuda-bf16:0/nchw: the layer cases with half activations in NCHW
 *        order, dlg_plan_opts.half_nchw; bf16/fp16 are channels-last else)
 *        against "ref" (rel err < 1e-4, 5e-3, 2e-2, 2e-2), on random
 *        inputs drawn fresh each run, outputs poisoned (NaN) first; fp16
 *        also runs the loss-scaling case (cuda_check_scale.c).
 *        Also the CUDA-graph case (cuda_check_graphs.c) and the input-path
 *        case (cuda_check_input.c: async writes = sync writes, bitwise).
 *        --deterministic first: only deterministic convolution algorithms.
 *   cuda_check bench MODEL train|infer BACKEND BATCH [WARMUP ITERS [graphs=off]
 *        [algo_cache=PATH] [layout=nchw]]: steps timed by CUDA events, prints
 *        "bench model mode backend batch img/s ms/step ... graphs=on|off
 *        replays=N timing=.. layout=nhwc|nchw" (half backends: NHWC unless
 *        layout=nchw)
 *   cuda_check bench MODEL train|infer BACKEND BATCH WARMUP ITERS profile=on: the
 *        same, profiled (dlg_plan_opts.profile: events between the layers,
 *        steps eager), then "profile-kind SHARE% fwd=MS bwd=MS layers=N TYPE
 *        IMPL" for the 12 heaviest layer kinds and "profile-layer SHARE%
 *        fwd=MS bwd=MS NAME TYPE IMPL" for the 12 slowest layers, per step
 *   cuda_check bench MODEL train|infer BACKEND BATCH WARMUP ITERS [graphs=off]
 *        input=async: inputs fed as the caffe workload feeds a loader's
 *        batches (pinned, dlg_net_write_async after each step's launch);
 *        the line ends "input=async data_wait_ms=W" (cuda_check_input.c)
 *   cuda_check bench lstm-ptb train|infer BACKEND BATCH [WARMUP ITERS]:
 *        tokens/s of the lstm-ptb workload's step, BATCH streams of bptt
 *        35 (cuda_check_seq.c; prints the bench line with unit=tok)
 *   cuda_check nodevice   exit 0 iff auto falls back and cuda:0 fails cleanly
 * Exit: 0 pass, 1 fail, 77 no CUDA device. */
#include "cuda/cuda_half_cvt.h"
#include "cuda_check_seq.h"
#include "cuda_check_scale.h"
#include "cuda_check_graphs.h"
#include "cuda_check_input.h"
#include "cuda_check_net.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_module.h"
#include "gpu_nvml.h"

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state;

static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* ---- the layer cases ------------------------------------------------------ */
static void b_conv(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 3, 6, 11, 9);
    dlg_conv_spec s = {8, 3, 3, 2, 1, 1, 2, 2, 1, 2, false};
    io->out = dlg_conv_ex(n, "conv", io->in[0], &s);
}
static void b_conv1x1(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 4, 16, 7, 7);
    io->out = dlg_conv(n, "conv", io->in[0], 8, 1, 1, 0, 1);
}
static void b_conv_big(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 2, 3, 31, 31);
    io->out = dlg_conv(n, "conv", io->in[0], 16, 11, 4, 2, 1);
}
static void b_maxpool(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 3, 4, 8, 9);
    io->out = dlg_max_pool(n, "pool", io->in[0], 3, 2, 1);
}
static void b_maxpool_ceil(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 2, 3, 13, 13);
    io->out = dlg_max_pool(n, "pool", io->in[0], 3, 2, 0);
}
/* floor mode (torchvision's): 8 x 9 -> 3 x 4, ceil 4 x 4 */
static void b_maxpool_floor(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 2, 3, 8, 9);
    dlg_net_set_pool_rounding(n, DLG_POOL_FLOOR);
    io->out = dlg_max_pool(n, "pool", io->in[0], 3, 2, 0);
}
static void b_avgpool_floor(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 2, 3, 11, 11);
    dlg_net_set_pool_rounding(n, DLG_POOL_FLOOR);
    io->out = dlg_avg_pool(n, "pool", io->in[0], 5, 3, 1); /* 11 -> 3, ceil 4 */
}
static void b_avgpool(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 3, 4, 8, 9);
    io->out = dlg_avg_pool(n, "pool", io->in[0], 3, 2, 1);
}
static void b_gap(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 3, 5, 7, 7);
    io->out = dlg_global_avg_pool(n, "pool", io->in[0]);
}
static void b_lrn(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 2, 9, 5, 4);
    io->out = dlg_lrn(n, "lrn", io->in[0], 5, 0.5f, 0.75f, 2.0f);
}
static void b_relu(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 3, 4, 5, 6);
    io->out = dlg_relu(n, "relu", io->in[0]);
}
static void b_bn(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 4, 6, 5, 5);
    io->out = dlg_batchnorm(n, "bn", io->in[0], 1e-5f);
}
static void b_fc(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 5, 3, 4, 4);
    io->out = dlg_fc(n, "fc", io->in[0], 10);
}
static void b_concat(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "a", 2, 3, 4, 5);
    io->in[io->nin++] = dlg_input(n, "b", 2, 5, 4, 5);
    io->out = dlg_concat(n, "cat", 2, io->in);
}
static void b_add_split(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "a", 2, 3, 4, 5);
    int r = dlg_relu(n, "r1", io->in[0]);
    int s = dlg_conv(n, "c1", io->in[0], 3, 3, 1, 1, 1);
    io->out = dlg_add(n, "add", r, s);
}
static void b_softmax(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 4, 7, 2, 3);
    io->out = dlg_softmax(n, "sm", io->in[0]);
}
static void b_loss(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 6, 10, 1, 1);
    io->label = dlg_labels(n, "y", 6);
    int f = dlg_fc(n, "fc", io->in[0], 12);
    io->out = dlg_softmax_loss(n, "loss", f, io->label);
    io->loss = true;
}
/* two heads on one input, the second a weighted loss as Inception-v3's
 * auxiliary classifier (0.4): the input's gradient sums both */
static void b_loss_aux(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 6, 10, 1, 1);
    io->label = dlg_labels(n, "y", 6);
    io->out = dlg_softmax_loss(n, "loss", dlg_fc(n, "fc", io->in[0], 12), io->label);
    dlg_softmax_loss_weighted(n, "aux_loss", dlg_fc(n, "aux_fc", io->in[0], 12), io->label, 0.4f);
    io->loss = true;
}
/* channels-last specifics: fc after a 6x6 map in a half (NHWC) blob, a
 * concat of half blobs (a conv and a ceil-mode pooling), batch norm with
 * C a multiple of 8 (cuDNN's persistent NHWC kernels), with a ReLU that
 * the planner folds into it (the case plans without keep_all) */
static void b_fc6x6(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 4, 8, 6, 6);
    int c = dlg_conv(n, "conv", io->in[0], 16, 3, 1, 1, 1);
    io->out = dlg_fc(n, "fc", c, 10);
}
static void b_concat_half(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 2, 6, 13, 13);
    int cv = dlg_conv(n, "conv", io->in[0], 5, 3, 2, 0, 1);
    int pl = dlg_max_pool(n, "pool", io->in[0], 3, 2, 0);
    int parts[2] = {cv, pl};
    io->out = dlg_concat(n, "cat", 2, parts);
}
static void b_bn16(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 4, 16, 6, 5);
    io->out = dlg_batchnorm(n, "bn", io->in[0], 1e-5f);
}
static void b_bn_relu(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 4, 16, 6, 5);
    int b = dlg_batchnorm(n, "bn", io->in[0], 1e-5f);
    io->out = dlg_relu(n, "relu", b);
}
/* as ResNet's: no conv bias before the batch norm (its gradient would be
 * zero up to rounding, which no relative error can compare) */
static void b_conv_bn_relu(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 4, 3, 9, 9);
    dlg_conv_spec cs = {16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true};
    int c = dlg_conv_ex(n, "conv", io->in[0], &cs);
    int b = dlg_batchnorm(n, "bn", c, 1e-5f);
    io->out = dlg_relu(n, "relu", b);
}
/* Every backend draws rng.h's dropout stream by memory position, so the
 * same elements drop wherever the layouts agree: here, as after the fully
 * connected and pooling layers of every model, 1x1 spatially (a
 * channels-last tensor with extent draws the same odds, elsewhere). */
static void b_dropout(dlg_net *n, netio *io)
{
    io->in[io->nin++] = dlg_input(n, "x", 4, 30, 1, 1);
    io->out = dlg_dropout(n, "drop", io->in[0], 0.5f);
}

typedef struct lcase {
    const char *name;
    build_fn build;
    bool test_mode; /* compare in inference mode (dropout, batch norm) */
    /* plan the device net without keep_all, so the planner folds a ReLU
     * into the batch norm before it; random params (running statistics) */
    bool fused, rand_params;
    /* tf32/bf16/fp16 tolerance where the backend's default is too tight
     * (0: the default) */
    double reduced_tol;
} lcase;

static const lcase cases[] = {
    {"conv_g2_d2_s2", b_conv, false, false, false, 0},
    {"conv_1x1", b_conv1x1, false, false, false, 0},
    {"conv_11x11_s4", b_conv_big, false, false, false, 0},
    {"maxpool_p1", b_maxpool, false, false, false, 0},
    {"maxpool_ceil", b_maxpool_ceil, false, false, false, 0},
    {"maxpool_floor", b_maxpool_floor, false, false, false, 0},
    {"avgpool_floor", b_avgpool_floor, false, false, false, 0},
    {"avgpool_p1", b_avgpool, false, false, false, 0},
    {"global_avgpool", b_gap, false, false, false, 0},
    {"lrn", b_lrn, false, false, false, 0},
    {"relu", b_relu, false, false, false, 0},
    {"batchnorm", b_bn, false, false, false, 0},
    {"fc", b_fc, false, false, false, 0},
    {"concat", b_concat, false, false, false, 0},
    {"add_split", b_add_split, false, false, false, 0},
    {"softmax", b_softmax, false, false, false, 0},
    {"softmax_loss", b_loss, false, false, false, 0},
    {"loss_aux_0.4", b_loss_aux, false, false, false, 0},
    {"dropout", b_dropout, false, false, false, 0},
    {"dropout_infer", b_dropout, true, false, false, 0},
    {"fc_after_6x6", b_fc6x6, false, false, false, 0},
    {"concat_half", b_concat_half, false, false, false, 0},
    {"bn_c16", b_bn16, false, false, true, 0},
    {"bn_relu_fused", b_bn_relu, false, true, true, 0},
    /* tf32/half: the conv output is rounded, so a batch-norm output near 0
     * can change sign and move the ReLU's mask (rounding, not a bug: a
     * wrong buffer or layout errs by O(1)) */
    {"conv_bn_relu", b_conv_bn_relu, false, true, true, 0.25},
    {"bn_infer", b_bn16, true, false, true, 0},
    {"bn_relu_infer", b_bn_relu, true, true, true, 0},
    {"embed", seq_case_embed, false, false, false, 0},
    {"lstm", seq_case_lstm, false, false, false, 0},
    {"lstm_4d", seq_case_lstm_4d, false, false, false, 0},
    {"lstm2", seq_case_lstm2, false, false, false, 0},
    /* lstm0's gradients lie two LSTM layers under a half decoder and
     * embedding: 3e-3..1e-2 over 30 seeds in bf16, but 2.6e-2 at seed
     * 2824845307 (a 32-float bias gradient, max-norm error) */
    {"lstm_lm", seq_case_lstm_lm, false, false, false, 5e-2},
};

/* ---- comparing ------------------------------------------------------------ */
/* max |a-b| / max |b|, NaN-aware (any NaN in a = infinite error) */
static double rel_err(const float *a, const float *b, size_t n)
{
    double d = 0, m = 1e-12;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]))
            return INFINITY;
        d = fmax(d, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return d / m;
}

static void fill_rand(float *v, size_t n, double scale)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(scale * (2 * urand() - 1));
}

/* For a bf16 or fp16 backend, inputs and output gradients are drawn on
 * that grid, so both nets see the same values: otherwise rounding alone can
 * move a max-pooling argmax, and the gradient lands elsewhere. */
typedef enum grid { GRID_F32, GRID_BF16, GRID_FP16 } grid;
static void to_grid(float *v, size_t n, grid g)
{
    for (size_t i = 0; g == GRID_BF16 && i < n; i++)
        v[i] = dlg_bf16_to_f32(dlg_bf16_from_f32(v[i]));
    for (size_t i = 0; g == GRID_FP16 && i < n; i++)
        v[i] = dlg_fp16_to_f32(dlg_fp16_from_f32(v[i]));
}

typedef struct pair {
    dlg_net *ref, *dev;
    float diff_div; /* the dev net's gradients carry this (fp16 loss scale) */
} pair;

static int compare_blob(pair *p, int blob, dlg_which w, const char *what, double tol,
                        double *worst)
{
    size_t n = cc_count(p->ref, blob);
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    int rc = 0, rd = 0;
    if (!a || !b)
        rc = -1;
    else if (dlg_net_read(p->ref, blob, w, b, n) < 0)
        rc = 1; /* no such data in this plan: nothing to compare */
    else if ((rd = dlg_net_read(p->dev, blob, w, a, n)) < 0) {
        /* -DLG_EINVAL: the device plan keeps no such data; anything else
         * (a device error surfacing at this read) fails, not skips */
        rc = rd == -DLG_EINVAL ? 1 : -1;
        if (rc < 0)
            printf("    %s: read failed: %s\n", what, dlg_net_error(p->dev));
    } else {
        for (size_t i = 0; w == DLG_DIFF && p->diff_div != 1.f && i < n; i++)
            a[i] /= p->diff_div;
        double e = rel_err(a, b, n);
        *worst = fmax(*worst, e);
        if (!(e <= tol)) {
            printf("    %s: rel err %.3g > %.3g\n", what, e, tol);
            rc = -1;
        }
    }
    free(a);
    free(b);
    return rc;
}

/* A loss blob is [loss, top-1, top-5] over n rows.  The loss is compared
 * at tol; the accuracies may differ by one row (1/n): rounding in a lower
 * precision can move a logit past the label's, which is no error. */
static int compare_loss(pair *p, int blob, size_t n, double tol, double *worst)
{
    float a[3], b[3];
    if (dlg_net_read(p->ref, blob, DLG_DATA, b, 3) < 0 ||
        dlg_net_read(p->dev, blob, DLG_DATA, a, 3) < 0) {
        printf("    loss: read failed: %s %s\n", dlg_net_error(p->ref), dlg_net_error(p->dev));
        return -1;
    }
    double e = rel_err(a, b, 1), slack = 1.0 / (double)n + 1e-6;
    *worst = fmax(*worst, e);
    if (!(e <= tol)) {
        printf("    loss: rel err %.3g > %.3g\n", e, tol);
        return -1;
    }
    for (int k = 1; k < 3; k++)
        if (!(fabs((double)a[k] - b[k]) <= slack)) {
            printf("    top-%d: %g vs %g, more than one row apart\n", k == 1 ? 1 : 5, a[k], b[k]);
            return -1;
        }
    return 0;
}

static int poison(dlg_net *n, int blob, dlg_which w)
{
    size_t c = cc_count(n, blob);
    float *v = malloc(c * sizeof(float));
    if (!v)
        return -1;
    for (size_t i = 0; i < c; i++)
        v[i] = NAN;
    int rc = dlg_net_write(n, blob, w, v, c);
    free(v);
    return rc;
}

static int write_same(pair *p, int blob, dlg_which w, const float *v, size_t c)
{
    return dlg_net_write(p->ref, blob, w, v, c) < 0 || dlg_net_write(p->dev, blob, w, v, c) < 0
               ? -1
               : 0;
}

/* Every param of every layer: data after forward, diff after backward. */
static int compare_params(pair *p, dlg_which w, double tol, double *worst)
{
    int fails = 0;
    for (int i = 0; i < dlg_net_layer_count(p->ref); i++) {
        dlg_layer_info li;
        dlg_net_layer_info(p->ref, i, &li);
        for (int k = 0;; k++) {
            int b = dlg_net_param(p->ref, li.name, k);
            if (b < 0)
                break;
            char what[160];
            snprintf(what, sizeof what, "%s param%d %s", li.name, k, w == DLG_DIFF ? "diff" : "data");
            if (w == DLG_DIFF)
                poison(p->dev, b, DLG_DIFF); /* gone again if backward forgets it */
            fails += compare_blob(p, b, w, what, tol, worst) < 0;
        }
    }
    return fails;
}

/* Every param diff of both nets, after the operation `after` names. */
static int compare_param_diffs(pair *p, const char *after, double tol, double *worst)
{
    int fails = 0;
    for (int i = 0; i < dlg_net_layer_count(p->ref); i++) {
        dlg_layer_info li;
        dlg_net_layer_info(p->ref, i, &li);
        for (int k = 0, bl; (bl = dlg_net_param(p->ref, li.name, k)) >= 0; k++) {
            char what[160];
            snprintf(what, sizeof what, "%s param%d diff %s", li.name, k, after);
            fails += compare_blob(p, bl, DLG_DIFF, what, tol, worst) < 0;
        }
    }
    return fails;
}

/* dlg_net_grad_norm on both nets (the backend's clipping hook), then
 * dlg_net_scale_grads(0.5) on both and every param diff compared again.
 * fp16: the norm is divided by the loss scale, which only a loss net's
 * gradients carry (diff_div), so a net without one is scaled back. */
static int compare_norms(pair *p, double tol, double *worst)
{
    double a = 0, b = 0;
    float scale = 1.f;
    int64_t skipped = 0;
    if (dlg_net_grad_norm(p->ref, &b) < 0 || dlg_net_grad_norm(p->dev, &a) < 0 ||
        dlg_net_loss_scale(p->dev, &scale, &skipped) < 0) {
        printf("    grad norm: %s %s\n", dlg_net_error(p->ref), dlg_net_error(p->dev));
        return 1;
    }
    a *= (double)scale / p->diff_div;
    double e = fabs(a - b) / fmax(fabs(b), 1e-12);
    *worst = fmax(*worst, e);
    int fails = !(e <= tol);
    if (fails)
        printf("    grad norm %.6g vs %.6g: rel err %.3g > %.3g\n", a, b, e, tol);
    if (dlg_net_scale_grads(p->ref, 0.5f) < 0 || dlg_net_scale_grads(p->dev, 0.5f) < 0) {
        printf("    scale grads: %s %s\n", dlg_net_error(p->ref), dlg_net_error(p->dev));
        return fails + 1;
    }
    return fails + compare_param_diffs(p, "x 0.5", tol, worst);
}

/* dlg_net_clip_grads on both nets to half the current norm: the device
 * decides and scales without the host (cuda's grad_clip), ref on the
 * host; the norms it keeps and every param diff compared.  Skipped for a
 * net without gradients and for an fp16 net without a loss (its gradients
 * carry no loss scale, which the device divides out). */
static int compare_clip(pair *p, double tol, double *worst)
{
    double norm = 0;
    float s = 1.f;
    int64_t skipped = 0;
    dlg_clip_stats a = {0}, b = {0};
    if (dlg_net_loss_scale(p->dev, &s, &skipped) < 0) {
        printf("    loss scale: %s\n", dlg_net_error(p->dev));
        return 1;
    }
    if (s != p->diff_div)
        return 0;
    if (dlg_net_grad_norm(p->ref, &norm) < 0) {
        printf("    grad norm: %s\n", dlg_net_error(p->ref));
        return 1;
    }
    if (!(norm > 0)) /* no params, or no gradient to clip */
        return 0;
    if (dlg_net_clip_grads(p->ref, norm / 2, &b, NULL) < 0 ||
        dlg_net_clip_grads(p->dev, norm / 2, &a, NULL) < 0 || dlg_net_clip_read(p->dev, &a) < 0) {
        printf("    clip: %s %s\n", dlg_net_error(p->ref), dlg_net_error(p->dev));
        return 1;
    }
    double e = fabs(a.norm - b.norm) / fmax(fabs(b.norm), 1e-12);
    *worst = fmax(*worst, e);
    int fails = !(e <= tol) || a.clipped != 1 || b.clipped != 1;
    if (fails)
        printf("    clip: norm %.6g vs %.6g, clipped %lld vs %lld\n", a.norm, b.norm,
               (long long)a.clipped, (long long)b.clipped);
    return fails + compare_param_diffs(p, "clipped", tol, worst);
}

/* "NAME/nchw": backend NAME with half activations in NCHW order */
static bool split_layout(const char *arg, char *name, size_t len)
{
    const char *sl = strchr(arg, '/');
    size_t n = sl ? (size_t)(sl - arg) : strlen(arg);
    snprintf(name, len, "%.*s", (int)n, arg);
    return sl && strcmp(sl, "/nchw") == 0;
}

/* the same random values in [0.5, 1.5) into every param of both nets
 * (positive: batch norm's running variance is one of them) */
static int rand_params(pair *p)
{
    int fails = 0;
    for (int i = 0; i < dlg_net_layer_count(p->ref); i++) {
        dlg_layer_info li;
        dlg_net_layer_info(p->ref, i, &li);
        for (int k = 0, b; (b = dlg_net_param(p->ref, li.name, k)) >= 0; k++) {
            size_t n = cc_count(p->ref, b);
            float *v = malloc(n * sizeof(float));
            for (size_t j = 0; v && j < n; j++)
                v[j] = (float)(0.5 + urand());
            fails += !v || write_same(p, b, DLG_DATA, v, n) < 0;
            free(v);
        }
    }
    return fails;
}

static int run_case(const lcase *c, const char *backend_arg, double tol, uint64_t seed, bool det)
{
    char backend[64];
    bool nchw = split_layout(backend_arg, backend, sizeof backend);
    pair p = {NULL, NULL, 1.f};
    netio io_r = {.label = -1}, io_d = {.label = -1};
    dlg_net_create(&p.ref, c->name);
    dlg_net_create(&p.dev, c->name);
    c->build(p.ref, &io_r);
    c->build(p.dev, &io_d);
    dlg_plan_opts o = {.backend = "ref", .train = true, .seed = seed, .input_grads = true,
                       .keep_all = true}; /* every blob is compared */
    int fails = 0;
    grid g = strstr(backend, "bf16")   ? GRID_BF16
             : strstr(backend, "fp16") ? GRID_FP16
                                       : GRID_F32;
    double worst = 0;
    if (dlg_net_plan(p.ref, &o) < 0) {
        printf("  %-16s FAIL plan ref: %s\n", c->name, dlg_net_error(p.ref));
        fails++;
        goto out;
    }
    o.backend = backend;
    o.deterministic = det;
    o.half_nchw = nchw;
    o.keep_all = !c->fused;
    if (dlg_net_plan(p.dev, &o) < 0) {
        printf("  %-16s FAIL plan %s: %s\n", c->name, backend, dlg_net_error(p.dev));
        fails++;
        goto out;
    }
    if (c->test_mode) {
        dlg_net_set_train(p.ref, false);
        dlg_net_set_train(p.dev, false);
    }
    if (c->rand_params)
        fails += rand_params(&p);
    for (int i = 0; i < io_r.nin; i++) {
        size_t n = cc_count(p.ref, io_r.in[i]);
        float *v = malloc(n * sizeof(float));
        fill_rand(v, n, 2.0);
        to_grid(v, n, g);
        fails += write_same(&p, io_r.in[i], DLG_DATA, v, n) < 0;
        free(v);
    }
    if (io_r.label >= 0) {
        size_t n = cc_count(p.ref, io_r.label);
        float v[64];
        for (size_t i = 0; i < n; i++)
            v[i] = (float)(int)(urand() * 12);
        fails += write_same(&p, io_r.label, DLG_DATA, v, n) < 0;
    }
    if (io_r.vocab > 0) { /* token ids, with repeats */
        size_t n = cc_count(p.ref, io_r.ids);
        float *v = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++)
            v[i] = (float)(int)(urand() * io_r.vocab);
        fails += write_same(&p, io_r.ids, DLG_DATA, v, n) < 0;
        free(v);
    }
    for (int i = 0; i < io_d.nextra; i++)
        fails += poison(p.dev, io_d.extra[i], DLG_DATA) < 0;
    fails += poison(p.dev, io_d.out, DLG_DATA) < 0;
    if (dlg_net_forward(p.ref) < 0 || dlg_net_forward(p.dev) < 0) {
        printf("  %-16s FAIL forward: %s %s\n", c->name, dlg_net_error(p.ref), dlg_net_error(p.dev));
        fails++;
        goto out;
    }
    if (io_r.loss)
        fails += compare_loss(&p, io_r.out, cc_count(p.ref, io_r.label), tol, &worst) < 0;
    else
        fails += compare_blob(&p, io_r.out, DLG_DATA, "output", tol, &worst) < 0;
    for (int i = 0; i < io_r.nextra; i++)
        fails += compare_blob(&p, io_r.extra[i], DLG_DATA, "extra output", tol, &worst) < 0;
    fails += compare_params(&p, DLG_DATA, tol, &worst);
    if (!c->test_mode) {
        if (!io_r.loss) {
            size_t n = cc_count(p.ref, io_r.out);
            float *v = malloc(n * sizeof(float));
            fill_rand(v, n, 1.0);
            to_grid(v, n, g);
            fails += write_same(&p, io_r.out, DLG_DIFF, v, n) < 0;
            free(v);
        }
        /* fp32 on every backend; a loss net keeps them zero (fp16 would
         * scale the loss's share of the gradient, not these) */
        for (int i = 0; i < io_r.nextra && !io_r.loss; i++) {
            size_t n = cc_count(p.ref, io_r.extra[i]);
            float *v = malloc(n * sizeof(float));
            fill_rand(v, n, 1.0);
            fails += write_same(&p, io_r.extra[i], DLG_DIFF, v, n) < 0;
            free(v);
        }
        for (int i = 0; i < io_d.nin; i++)
            poison(p.dev, io_d.in[i], DLG_DIFF);
        compare_params(&p, DLG_DIFF, INFINITY, &(double){0}); /* poisons param diffs */
        if (dlg_net_backward(p.ref) < 0 || dlg_net_backward(p.dev) < 0) {
            printf("  %-16s FAIL backward: %s %s\n", c->name, dlg_net_error(p.ref),
                   dlg_net_error(p.dev));
            fails++;
            goto out;
        }
        int64_t skipped;
        if (io_r.loss && dlg_net_loss_scale(p.dev, &p.diff_div, &skipped) < 0)
            fails++; /* the loss gradient was multiplied by the loss scale */
        for (int i = 0; i < io_r.nin; i++)
            fails += compare_blob(&p, io_r.in[i], DLG_DIFF, "input diff", tol, &worst) < 0;
        for (int i = 0; i < dlg_net_layer_count(p.ref); i++) {
            dlg_layer_info li;
            dlg_net_layer_info(p.ref, i, &li);
            for (int k = 0;; k++) {
                int b = dlg_net_param(p.ref, li.name, k);
                if (b < 0)
                    break;
                char what[160];
                snprintf(what, sizeof what, "%s param%d diff", li.name, k);
                fails += compare_blob(&p, b, DLG_DIFF, what, tol, &worst) < 0;
            }
        }
        fails += compare_norms(&p, tol, &worst);
        fails += compare_clip(&p, tol, &worst);
    }
    printf("  %-16s %s  max rel err %.2e (tol %.0e)\n", c->name, fails ? "FAIL" : "ok  ", worst, tol);
out:
    dlg_net_destroy(p.ref);
    dlg_net_destroy(p.dev);
    return fails ? 1 : 0;
}

/* A label outside 0..K-1 must surface as an error (asynchronously: at the
 * latest when the loss is read back), never as a silent loss. */
static int check_bad_label(const char *backend)
{
    dlg_net *net;
    netio io = {.label = -1};
    dlg_net_create(&net, "bad_label");
    b_loss(net, &io);
    dlg_plan_opts o = {.backend = backend, .train = true, .seed = 1};
    int fails = dlg_net_plan(net, &o) < 0;
    float x[60], y[6] = {0, 1, 2, 99, 4, 5}, out[3];
    fill_rand(x, 60, 1.0);
    if (!fails)
        fails = dlg_net_write(net, io.in[0], DLG_DATA, x, 60) < 0 ||
                dlg_net_write(net, io.label, DLG_DATA, y, 6) < 0;
    if (!fails) {
        int rc = dlg_net_forward(net);
        if (rc >= 0)
            rc = dlg_net_read(net, io.out, DLG_DATA, out, 3);
        fails = rc != -DLG_EINVAL;
        printf("  %-16s %s  %s\n", "bad_label", fails ? "FAIL" : "ok  ",
               rc < 0 ? dlg_net_error(net) : "no error");
    } else
        printf("  %-16s FAIL setup: %s\n", "bad_label", dlg_net_error(net));
    dlg_net_destroy(net);
    return fails;
}

/* A tensor past cuDNN's 2^31 - 1 element descriptors: planning fails with
 * one line naming the layer and the size (nothing is allocated: layers are
 * set up before any blob).  cuDNN itself would answer a bare status. */
static int check_huge_tensor(const char *backend)
{
    int fails = 0;
    for (int k = 0; k < 2; k++) {
        const char *layer = k ? "lrn" : "conv";
        dlg_net *net;
        dlg_net_create(&net, "huge");
        int x = dlg_input(net, "x", 8, 256, 1024, 1024); /* 2^31 elements */
        if (k)
            dlg_lrn(net, layer, x, 5, 1e-4f, 0.75f, 1.f);
        else
            dlg_conv(net, layer, x, 1, 1, 1, 0, 1);
        dlg_plan_opts o = {.backend = backend, .train = true, .seed = 1};
        int rc = dlg_net_plan(net, &o);
        const char *e = dlg_net_error(net);
        char want[64];
        snprintf(want, sizeof want, "layer '%s'", layer);
        bool ok = rc < 0 && strstr(e, want) && strstr(e, "8x256x1024x1024 tensor has 2147483648");
        printf("  %-16s %s  %s\n", k ? "huge_lrn" : "huge_conv", ok ? "ok  " : "FAIL",
               rc < 0 ? e : "planned");
        fails += !ok;
        dlg_net_destroy(net);
    }
    return fails;
}

static int cmd_layers(int argc, char **argv)
{
    bool det = argc > 0 && strcmp(argv[0], "--deterministic") == 0; /* only such conv algorithms */
    argc -= det;
    argv += det;
    const char *defaults[] = {"cuda:0", "cuda-tf32:0", "cuda-bf16:0", "cuda-fp16:0",
                              "cuda-bf16:0/nchw"};
    const char **bks = argc > 0 ? (const char **)argv : defaults;
    int nb = argc > 0 ? argc : 5, fails = 0;
    /* a new seed each run, printed; CUDA_CHECK_SEED=N runs one again */
    const char *seed = getenv("CUDA_CHECK_SEED");
    rng_state = seed && *seed ? strtoull(seed, NULL, 10)
                              : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    printf("layers: seed %llu (CUDA_CHECK_SEED)\n", (unsigned long long)rng_state);
    for (int b = 0; b < nb; b++) {
        double tol = strstr(bks[b], "bf16") || strstr(bks[b], "fp16") ? 2e-2
                     : strstr(bks[b], "tf32")                         ? 5e-3
                                                                      : 1e-4;
        printf("backend %s (tolerance %.0e)\n", bks[b], tol);
        bool reduced = tol > 1e-4;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            fails += run_case(&cases[i], bks[b],
                              reduced && cases[i].reduced_tol ? cases[i].reduced_tol : tol,
                              rng_state + i, det);
        if (strchr(bks[b], '/')) /* a layout variant: the layer cases only */
            continue;
        fails += check_bad_label(bks[b]);
        fails += check_huge_tensor(bks[b]);
        fails += seq_check_bad_id(bks[b]);
        fails += check_graphs(bks[b]);
        fails += check_input_async(bks[b]);
        if (strstr(bks[b], "fp16"))
            fails += check_loss_scale(bks[b]);
    }
    printf("layers: %d failed\n", fails);
    return fails ? 1 : 0;
}

/* ---- benchmark ------------------------------------------------------------- */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* one whole step, which the backend may replay as a CUDA graph */
static int step(dlg_net *net, bool train)
{
    static const dlg_sgd sgd = {0.01f, 0.9f, 5e-4f};
    return (train ? dlg_net_train_step(net, &sgd) : dlg_net_infer_step(net)) < 0 ? -1 : 0;
}

/* profile=on: the layer kinds and the layers, heaviest first, per step
 * (what the timed steps spent) */
static void print_profile(dlg_net *net, int steps, double step_ms)
{
    enum { TOP = 12 };
    double per = 1e-6 / (steps > 0 ? steps : 1), total = 0;
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        uint64_t f = 0, b = 0, calls;
        dlg_net_layer_time(net, i, &f, &b, &calls);
        total += (double)(f + b) * per;
    }
    printf("profile layers_ms=%.3f step_ms=%.3f (per step, %d steps, eager)\n", total, step_ms,
           steps);
    dlg_layer_kind k[TOP];
    int nk = dlg_net_layer_kinds(net, k, TOP);
    for (int i = 0; i < nk && i < TOP; i++)
        printf("profile-kind %5.1f%% fwd=%.3f bwd=%.3f layers=%d %s %s\n",
               total > 0 ? 100 * (double)(k[i].fwd_ns + k[i].bwd_ns) * per / total : 0,
               (double)k[i].fwd_ns * per, (double)k[i].bwd_ns * per, k[i].layers, k[i].type,
               k[i].impl);
    int idx[TOP];
    int nl = dlg_net_layers_by_time(net, idx, TOP);
    for (int i = 0; i < nl; i++) {
        uint64_t f = 0, b = 0, calls;
        dlg_layer_info li;
        dlg_net_layer_time(net, idx[i], &f, &b, &calls);
        dlg_net_layer_info(net, idx[i], &li);
        const char *impl = dlg_net_layer_impl(net, idx[i]);
        printf("profile-layer %5.1f%% fwd=%.3f bwd=%.3f %s %s %s\n",
               total > 0 ? 100 * (double)(f + b) * per / total : 0, (double)f * per,
               (double)b * per, li.name, li.type, impl ? impl : "-");
    }
}

static int cmd_bench(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: cuda_check bench MODEL train|infer BACKEND BATCH [WARMUP ITERS "
                        "[graphs=off] [algo_cache=PATH] [profile=on]]\n");
        return 2;
    }
    bool graphs = true, nchw = false, profile = false;
    const char *cache = NULL;
    for (int i = 6; i < argc; i++) {
        if (strcmp(argv[i], "graphs=off") == 0)
            graphs = false;
        else if (strcmp(argv[i], "profile=on") == 0)
            profile = true;
        else if (strcmp(argv[i], "layout=nchw") == 0)
            nchw = true;
        else if (strncmp(argv[i], "algo_cache=", 11) == 0)
            cache = argv[i] + 11;
        else {
            fprintf(stderr, "cuda_check bench: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (strcmp(argv[1], "train") != 0 && strcmp(argv[1], "infer") != 0) {
        fprintf(stderr, "cuda_check bench: mode '%s' is neither train nor infer\n", argv[1]);
        return 2;
    }
    if (strcmp(argv[0], "lstm-ptb") == 0) {
        if (!graphs || nchw || cache || profile) {
            fprintf(stderr, "cuda_check bench: lstm-ptb takes none of graphs=, layout=, "
                            "algo_cache=, profile=\n");
            return 2;
        }
        return seq_bench_lm(argc, argv);
    }
    const char *model = argv[0], *backend = argv[2];
    bool train = strcmp(argv[1], "train") == 0;
    int batch = atoi(argv[3]), warm = argc > 4 ? atoi(argv[4]) : 5, iters = argc > 5 ? atoi(argv[5]) : 20;
    dlg_net *net;
    dlg_net_create(&net, model);
    int loss = dlg_model_build(net, model, batch, 1000);
    dlg_plan_opts o = {.backend = backend, .train = train, .seed = 1, .algo_cache = cache,
                       .graphs = graphs ? DLG_GRAPHS_AUTO : DLG_GRAPHS_OFF, .half_nchw = nchw,
                       .profile = profile};
    /* the order of 4-d activations: channels-last on the half backends */
    bool half = strstr(backend, "bf16") || strstr(backend, "fp16");
    const char *layout = half && !nchw ? "nhwc" : "nchw";
    double t0 = now_s();
    if (loss < 0 || dlg_net_plan(net, &o) < 0) {
        printf("bench %s %s %s %d FAIL %s\n", model, argv[1], backend, batch, dlg_net_error(net));
        dlg_net_destroy(net);
        return 1;
    }
    double plan_s = now_s() - t0;
    int x = dlg_net_blob(net, "data"), y = dlg_net_blob(net, "label");
    size_t nx = cc_count(net, x);
    float *v = malloc(nx * sizeof(float));
    rng_state = 7;
    fill_rand(v, nx, 1.0);
    dlg_net_write(net, x, DLG_DATA, v, nx);
    for (int i = 0; i < batch; i++)
        v[i] = (float)(i * 37 % 1000);
    dlg_net_write(net, y, DLG_DATA, v, (size_t)batch);
    free(v);
    float out[3];
    int rc = 0;
    for (int i = 0; i < warm && !rc; i++)
        rc = step(net, train);
    dlg_net_read(net, loss, DLG_DATA, out, 3); /* synchronises */
    if (profile) /* the timed steps' alone */
        dlg_net_layer_time_reset(net);
    dlg_nvml *nv = NULL;
    char why[200];
    uint64_t e0 = 0, e1 = 0;
    bool energy = dlg_nvml_open(&nv, NULL, why, sizeof why) == 0 && dlg_nvml_energy_mj(nv, 0, &e0) == 0;
    /* CUDA events around the timed steps (as the PyTorch side times them),
     * the host clock only if the backend has no device timer */
    uint64_t dev_ns = 0;
    bool events = dlg_net_timer_begin(net) == 0;
    t0 = now_s();
    for (int i = 0; i < iters && !rc; i++)
        rc = step(net, train);
    if (!rc && events)
        rc = dlg_net_timer_end(net, &dev_ns);
    rc |= dlg_net_read(net, loss, DLG_DATA, out, 3);
    double dt = events && dev_ns ? (double)dev_ns / 1e9 : now_s() - t0;
    dlg_step_stats st = {0};
    dlg_net_step_stats(net, &st);
    energy = energy && dlg_nvml_energy_mj(nv, 0, &e1) == 0;
    dlg_nvml_close(nv);
    if (rc < 0 || !isfinite(out[0])) {
        printf("bench %s %s %s %d FAIL %s (loss %g)\n", model, argv[1], backend, batch,
               dlg_net_error(net), out[0]);
        dlg_net_destroy(net);
        return 1;
    }
    double ips = (double)batch * iters / dt;
    float scale = 1.f;
    int64_t skipped = 0;
    char ls[64] = ""; /* fp16 training: where dynamic loss scaling ended up */
    if (dlg_net_loss_scale(net, &scale, &skipped) > 0)
        snprintf(ls, sizeof ls, " loss_scale=%g skipped=%lld", scale, (long long)skipped);
    printf("bench %s %s %s %d %.1f %.3f macs=%lld step_macs=%lld plan_s=%.1f loss=%.3f%s graphs=%s "
           "replays=%llu timing=%s layout=%s\n",
           model, argv[1], backend, batch, ips, 1e3 * dt / iters,
           (long long)dlg_net_macs_total(net), (long long)dlg_net_step_macs(net), plan_s, out[0],
           ls, graphs && !profile ? "on" : "off",
           (unsigned long long)st.replayed, events && dev_ns ? "events" : "host", layout);
    if (profile)
        print_profile(net, iters, 1e3 * dt / iters);
    if (energy)
        printf("energy %s %s %s %d %.4f\n", model, argv[1], backend, batch,
               (double)(e1 - e0) / 1e3 / ((double)batch * iters));
    dlg_net_destroy(net);
    return 0;
}

/* ---- no-device paths ---------------------------------------------------------- */
static int cmd_nodevice(void)
{
    int n = 0, fails = 0;
    char why[200], err[200];
    dlg_cuda_device_count(&n, why, sizeof why);
    if (n > 0) {
        printf("nodevice: %d CUDA devices present, nothing to check\n", n);
        return 77;
    }
    dlg_device_choice ch;
    if (dlg_device_select("auto", "fp32", n, 0, "cpu", &ch, err, sizeof err) != 0 || ch.cuda ||
        !ch.note[0]) {
        printf("auto did not fall back to the CPU\n");
        fails++;
    }
    if (dlg_device_select("cuda:0", "fp32", n, 0, "cpu", &ch, err, sizeof err) >= 0) {
        printf("cuda:0 was accepted without a device\n");
        fails++;
    }
    /* planning on the backend directly fails with an error, not a crash */
    dlg_net *net;
    dlg_net_create(&net, "nodev");
    int x = dlg_input(net, "x", 1, 1, 2, 2);
    dlg_relu(net, "r", x);
    dlg_plan_opts o = {.backend = "cuda:0"};
    if (dlg_net_plan(net, &o) >= 0 || !strstr(dlg_net_error(net), "no CUDA device")) {
        printf("plan on cuda:0 without a device: '%s'\n", dlg_net_error(net));
        fails++;
    } else
        printf("cuda:0 without a device: %s\n", dlg_net_error(net));
    dlg_net_destroy(net);
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cuda_check layers|bench|nodevice ...\n");
        return 2;
    }
    if (strcmp(argv[1], "nodevice") == 0)
        return cmd_nodevice();
    int n = 0;
    char why[200];
    dlg_cuda_device_count(&n, why, sizeof why);
    if (n == 0) {
        printf("SKIP: no CUDA device (%s)\n", why);
        return 77;
    }
    char versions[256], vwhy[512];
    if (dlg_cuda_versions(versions, sizeof versions, vwhy, sizeof vwhy) == 0)
        printf("libraries: %s\n", versions); /* what the results below ran on */
    if (strcmp(argv[1], "layers") == 0)
        return cmd_layers(argc - 2, argv + 2);
    if (strcmp(argv[1], "bench") == 0 && argc > 2 && strcmp(argv[argc - 1], "input=async") == 0)
        return bench_input_async(argc - 3, argv + 2); /* cuda_check_input.c */
    if (strcmp(argv[1], "bench") == 0)
        return cmd_bench(argc - 2, argv + 2);
    fprintf(stderr, "cuda_check: unknown command '%s'\n", argv[1]);
    return 2;
}
