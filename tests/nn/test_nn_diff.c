/* Seeded differential test: random small layers and nets at odd shapes
 * (batch 1-3, channels 1, 3, 5, 17..., sizes 1-13, kernels 1-11, strides
 * 1-4, pads 0-3, dilation, groups, ceil- and floor-mode pooling, LRN, batch norm,
 * concat, add, fc, softmax, loss, LSTM, 64-80 channel layers for the
 * Winograd and im2col kernels), some parameters frozen, planned for
 * training with every blob kept, for training with sharing and fusion, or
 * for inference (fused epilogues), on the cpu backend against the
 * reference: forward, backward (every gradient), SGD updates (two steps,
 * momentum) and a test-phase forward after them agree within TOL
 * (max |cpu - ref| / max(max |ref|, floor) per tensor; see FLOOR_DATA).
 * A mismatch that the same net with other values does not repeat is a
 * ReLU or max-pool kink, not a defect (check()).
 *
 * NN_DIFF_CASES=N runs N cases (default: a CI-sized number) from
 * NN_DIFF_SEED (default 1); NN_DIFF_VERBOSE=1 prints every case,
 * NN_DIFF_DEBUG=1 every tensor's error; NN_DIFF_THREADS (default 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 2e-4
/* max |ref| below which a tensor's error is taken against this instead:
 * activations are O(0.1-1); a gradient that batch norms cancel to ~0 is
 * rounding noise, so gradients (and SGD updates, lr times them) are taken
 * against at least GRAD_FLOOR of the net's largest gradient */
#define FLOOR_DATA 1e-3
#define GRAD_FLOOR 1e-2
#define LR 0.1f
#define CI_CASES 100

/* ---- drawing --------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r) { return dlg_splitmix_next(&r->s); }

/* uniform in [lo, hi] */
static int rint_in(rng *r, int lo, int hi) { return lo + (int)(rnext(r) % (uint64_t)(hi - lo + 1)); }
static bool chance(rng *r, int percent) { return rint_in(r, 0, 99) < percent; }
static int pick(rng *r, const int *v, int n) { return v[rint_in(r, 0, n - 1)]; }
static float runif(rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(rnext(r) >> 11) / 9007199254740992.0);
}

static const int odd_channels[] = {1, 2, 3, 5, 7, 9, 16, 17, 32};
#define NODD ((int)(sizeof odd_channels / sizeof odd_channels[0]))

/* ---- a case: a net drawn from a seed, built alike on both backends --- */

typedef enum plan_mode { KEEP_ALL, SHARED, INFER } plan_mode;

typedef struct dcase dcase;
/* A hand-written case (a regression): builds the net, sets outs/loss. */
typedef void (*fixed_fn)(dlg_net *net, dcase *dc);

struct dcase {
    uint64_t seed;
    fixed_fn fixed; /* NULL: drawn from seed */
    uint64_t salt;  /* other input values and weights for the same net */
    plan_mode mode;
    bool input_grads; /* gradients of the inputs too (prop_down of the first layers) */
    int nlayers;
    bool loss;
    /* a per-channel affine map (a bias, a batch norm's scale and shift)
     * reached this point through linear layers only: a batch norm here
     * would cancel it, its gradient would be rounding noise around 0 */
    bool pend;
    /* a convolution's every output along an axis is padding: its channels
     * are constant, a batch norm after it divides rounding noise by eps */
    bool flat;
    /* the last layer was a ReLU (through pooling): a batch norm over few
     * values then meets channels of one non-zero, variance ~0 */
    bool zeros;
    int outs[4], nouts; /* the blobs backward starts from (no loss) */
    char desc[1024];
};

typedef struct shape4 {
    int n, c, h, w;
} shape4;

static void note(dcase *dc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(dcase *dc, const char *fmt, ...)
{
    size_t len = strlen(dc->desc);
    if (len + 2 >= sizeof dc->desc)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dc->desc + len, sizeof dc->desc - len, fmt, ap);
    va_end(ap);
}

static const char *lname(dcase *dc, char *buf)
{
    snprintf(buf, 16, "L%d", dc->nlayers++);
    return buf;
}

static void get_shape(dlg_net *net, int b, shape4 *s)
{
    dlg_shape sh = {0};
    dlg_net_shape(net, b, &sh);
    *s = (shape4){(int)sh.d[0], (int)sh.d[1], (int)sh.d[2], (int)sh.d[3]};
}

/* One kernel size along an axis of `in` pixels: a kernel from 1/3/5/7/11
 * with stride, pad and dilation that fit (the padded input holds it). */
static void conv_axis(rng *r, int in, int *k, int *s, int *p, int *d)
{
    static const int ks[] = {1, 3, 5, 7, 11};
    for (int tries = 0; tries < 20; tries++) {
        *k = pick(r, ks, 5);
        *s = chance(r, 50) ? 1 : rint_in(r, 2, 4);
        *p = chance(r, 30) ? 0 : rint_in(r, 0, 3);
        *d = *k > 1 && chance(r, 20) ? rint_in(r, 2, 3) : 1;
        if (in + 2 * *p >= *d * (*k - 1) + 1)
            return;
    }
    *k = *s = *d = 1;
    *p = 0;
}

/* Whether some output's window along an axis meets the input. */
static bool touches(int in, int k, int s, int p, int d)
{
    int out = (in + 2 * p - d * (k - 1) - 1) / s + 1;
    for (int o = 0; o < out; o++)
        for (int j = 0; j < k; j++)
            if (o * s - p + j * d >= 0 && o * s - p + j * d < in)
                return true;
    return false;
}

static int draw_conv(dlg_net *net, rng *r, dcase *dc, int x, bool allow_bias)
{
    shape4 s;
    get_shape(net, x, &s);
    dlg_conv_spec cs = {0};
    conv_axis(r, s.h, &cs.kh, &cs.sh, &cs.ph, &cs.dh);
    if (chance(r, 60)) { /* square, as most nets */
        cs.kw = cs.kh, cs.sw = cs.sh, cs.pw = cs.ph, cs.dw = cs.dh;
        if (s.w + 2 * cs.pw < cs.dw * (cs.kw - 1) + 1)
            conv_axis(r, s.w, &cs.kw, &cs.sw, &cs.pw, &cs.dw);
    } else {
        conv_axis(r, s.w, &cs.kw, &cs.sw, &cs.pw, &cs.dw);
    }
    int g = 1;
    if (chance(r, 30)) { /* grouped, often depthwise */
        g = chance(r, 50) ? s.c : 1;
        for (int t = 0; t < 5 && g == 1; t++) {
            int cand = rint_in(r, 2, s.c > 2 ? s.c : 2);
            g = s.c % cand ? 1 : cand;
        }
    }
    cs.groups = g;
    dc->flat |= !touches(s.h, cs.kh, cs.sh, cs.ph, cs.dh) || !touches(s.w, cs.kw, cs.sw, cs.pw, cs.dw);
    cs.out_c = g > 1 ? g * rint_in(r, 1, 3) : pick(r, odd_channels, NODD);
    cs.no_bias = !allow_bias || chance(r, 25);
    dc->pend |= !cs.no_bias;
    dc->zeros = false;
    char nm[16];
    note(dc, " conv(%dx%dx%dx%d k%dx%d s%dx%d p%dx%d d%dx%d g%d o%d%s)", s.n, s.c, s.h, s.w,
         cs.kh, cs.kw, cs.sh, cs.sw, cs.ph, cs.pw, cs.dh, cs.dw, g, cs.out_c,
         cs.no_bias ? " nobias" : "");
    return dlg_conv_ex(net, lname(dc, nm), x, &cs);
}

static int draw_pool(dlg_net *net, rng *r, dcase *dc, int x)
{
    shape4 s;
    get_shape(net, x, &s);
    char nm[16];
    int lim = s.h < s.w ? s.h : s.w;
    if (chance(r, 10) || lim < 1) {
        note(dc, " gap(%dx%dx%dx%d)", s.n, s.c, s.h, s.w);
        return dlg_global_avg_pool(net, lname(dc, nm), x);
    }
    int k = rint_in(r, 1, 5), st = rint_in(r, 1, 4), p = k > 1 ? rint_in(r, 0, k - 1) : 0;
    p = p > 3 ? 3 : p;
    while (k > 1 && lim + 2 * p < k) {
        k--;
        p = p >= k ? k - 1 : p;
    }
    bool avg = chance(r, 50), floor_mode = chance(r, 30);
    note(dc, " %spool(%dx%dx%dx%d k%d s%d p%d%s)", avg ? "avg" : "max", s.n, s.c, s.h, s.w, k, st,
         p, floor_mode ? " floor" : "");
    dlg_net_set_pool_rounding(net, floor_mode ? DLG_POOL_FLOOR : DLG_POOL_CEIL);
    return avg ? dlg_avg_pool(net, lname(dc, nm), x, k, st, p)
               : dlg_max_pool(net, lname(dc, nm), x, k, st, p);
}

static int draw_lrn(dlg_net *net, rng *r, dcase *dc, int x)
{
    static const int sizes[] = {1, 3, 5, 7};
    int size = pick(r, sizes, 4);
    float alpha = runif(r, 1e-4f, 0.5f), beta = runif(r, 0.5f, 1.0f),
          k = chance(r, 50) ? 1.0f : runif(r, 0.5f, 2.0f);
    dc->pend = false;
    note(dc, " lrn(size %d alpha %g beta %g k %g)", size, alpha, beta, k);
    char nm[16];
    return dlg_lrn(net, lname(dc, nm), x, size, alpha, beta, k);
}

static int relu(dlg_net *net, dcase *dc, int x);

static int draw_bn(dlg_net *net, rng *r, dcase *dc, int x)
{
    shape4 s;
    get_shape(net, x, &s);
    /* a channel of 2-3 equal values: float's mean differs from them by an
     * ulp, which the normalisation magnifies up to 1/sqrt(eps) */
    int m = s.n * s.h * s.w;
    if (dc->flat || (m < 4 && m > 1))
        return relu(net, dc, x);
    if (dc->pend)
        x = relu(net, dc, x);
    if (dc->zeros && m < 32)
        return x;
    dc->pend = true;
    dc->zeros = false;
    float eps = chance(r, 50) ? 1e-5f : 1e-3f;
    note(dc, " bn(eps %g)", eps);
    char nm[16];
    return dlg_batchnorm(net, lname(dc, nm), x, eps);
}

static int relu(dlg_net *net, dcase *dc, int x)
{
    char nm[16];
    dc->pend = false;
    dc->zeros = true;
    note(dc, " relu");
    return dlg_relu(net, lname(dc, nm), x);
}

/* conv (no bias) -> bn -> relu?: the pattern inference plans fold */
static int conv_bn(dlg_net *net, rng *r, dcase *dc, int x, int out_c, int k, bool with_relu)
{
    dlg_conv_spec cs = {out_c, k, k, 1, 1, k / 2, k / 2, 1, 1, 1, true};
    char nm[16];
    if (dc->pend)
        x = relu(net, dc, x);
    note(dc, " conv(k%d o%d)", k, out_c);
    dc->zeros = false;
    x = dlg_conv_ex(net, lname(dc, nm), x, &cs);
    x = draw_bn(net, r, dc, x);
    return with_relu ? relu(net, dc, x) : x;
}

/* Two branches of the same shape from x, joined by add (+ relu) or by
 * concat. */
static int draw_branch(dlg_net *net, rng *r, dcase *dc, int x)
{
    shape4 s;
    char nm[16];
    if (dc->pend)
        x = relu(net, dc, x);
    get_shape(net, x, &s);
    if (chance(r, 50)) { /* residual: conv-bn(-relu-conv-bn) + shortcut, relu */
        int a = conv_bn(net, r, dc, x, s.c, chance(r, 50) ? 3 : 1, chance(r, 50));
        if (chance(r, 40))
            a = conv_bn(net, r, dc, a, s.c, 1, false);
        int b = x;
        if (chance(r, 30)) {
            dc->pend = false; /* x is no batch norm's output */
            b = conv_bn(net, r, dc, x, s.c, 1, false); /* projection */
        }
        dc->pend = true;
        note(dc, " add");
        int y = dlg_add(net, lname(dc, nm), a, b);
        return chance(r, 75) ? relu(net, dc, y) : y;
    }
    /* inception-like concat of 2-4 branches, odd or 16-multiple widths */
    int nb = rint_in(r, 2, 4), br[4];
    bool wide = chance(r, 40);
    note(dc, " concat[");
    for (int i = 0; i < nb; i++) {
        int oc = wide ? 16 * rint_in(r, 1, 2) : pick(r, odd_channels, NODD);
        int k = pick(r, (const int[]){1, 3, 5}, 3);
        if (i == nb - 1 && chance(r, 50)) {
            note(dc, " maxpool3s1p1");
            br[i] = dlg_max_pool(net, lname(dc, nm), x, 3, 1, 1);
            if (wide && s.c % 16)
                br[i] = dlg_conv(net, lname(dc, nm), br[i], oc, 1, 1, 0, 1);
            continue;
        }
        dlg_conv_spec cs = {oc, k, k, 1, 1, k / 2, k / 2, 1, 1, 1, false};
        note(dc, " conv(k%d o%d)", k, oc);
        br[i] = dlg_conv_ex(net, lname(dc, nm), x, &cs);
        if (chance(r, 60))
            br[i] = relu(net, dc, br[i]);
    }
    note(dc, " ]");
    dc->pend = true;
    return dlg_concat(net, lname(dc, nm), nb, br);
}

static int input(dlg_net *net, rng *r, dcase *dc, const char *name, shape4 *s)
{
    s->n = rint_in(r, 1, 3);
    s->c = pick(r, odd_channels, NODD);
    s->h = rint_in(r, 1, 13);
    s->w = chance(r, 60) ? s->h : rint_in(r, 1, 13);
    note(dc, " %s(%dx%dx%dx%d)", name, s->n, s->c, s->h, s->w);
    return dlg_input(net, name, s->n, s->c, s->h, s->w);
}

/* The end: fc + softmax loss, or a softmax, or the blob itself, whose
 * gradient the test writes. */
static void head(dlg_net *net, rng *r, dcase *dc, int x)
{
    char nm[16];
    int h = rint_in(r, 0, 9);
    if (h < 5) {
        shape4 s;
        get_shape(net, x, &s);
        int k = rint_in(r, 1, 13);
        note(dc, " fc(%d) loss", k);
        int y = dlg_labels(net, "y", s.n);
        x = dlg_fc(net, lname(dc, nm), x, k);
        dlg_softmax_loss(net, "loss", x, y);
        dc->loss = true;
        return;
    }
    if (h < 7) {
        note(dc, " softmax");
        dc->pend = false;
        x = dlg_softmax(net, lname(dc, nm), x);
    }
    dc->outs[dc->nouts++] = x;
}

/* A chain of 1-5 random layers with an occasional branch. */
static void build_chain(dlg_net *net, rng *r, dcase *dc)
{
    shape4 s;
    int x = input(net, r, dc, "x", &s);
    int n = rint_in(r, 1, 5);
    for (int i = 0; i < n && dlg_net_status(net) == 0; i++) {
        switch (rint_in(r, 0, 9)) {
        case 0:
        case 1:
        case 2:
            x = draw_conv(net, r, dc, x, true);
            break;
        case 3:
            x = draw_pool(net, r, dc, x);
            break;
        case 4:
            x = draw_lrn(net, r, dc, x);
            break;
        case 5:
            x = draw_bn(net, r, dc, x);
            break;
        case 6:
            x = relu(net, dc, x);
            break;
        case 7:
            x = draw_branch(net, r, dc, x);
            break;
        case 8: {
            char nm[16];
            note(dc, " dropout");
            x = dlg_dropout(net, lname(dc, nm), x, 0.3f);
            break;
        }
        default: {
            char nm[16];
            int k = rint_in(r, 1, 17);
            note(dc, " fc(%d)", k);
            dc->pend = true;
            dc->zeros = false;
            x = dlg_fc(net, lname(dc, nm), x, k);
        }
        }
    }
    head(net, r, dc, x);
}

/* Two inputs of the same shape added, or concatenated. */
static void build_join(dlg_net *net, rng *r, dcase *dc)
{
    shape4 s;
    int a = input(net, r, dc, "x", &s);
    char nm[16];
    if (chance(r, 15)) { /* one blob read twice: a split into one layer */
        note(dc, " add(x, x)");
        head(net, r, dc, dlg_add(net, lname(dc, nm), a, a));
        return;
    }
    if (chance(r, 50)) {
        int b = dlg_input(net, "x2", s.n, s.c, s.h, s.w);
        note(dc, " add");
        int y = dlg_add(net, lname(dc, nm), a, b);
        head(net, r, dc, chance(r, 50) ? relu(net, dc, y) : y);
        return;
    }
    int c2 = pick(r, odd_channels, NODD);
    int b = dlg_input(net, "x2", s.n, c2, s.h, s.w);
    int xs[3] = {a, b, a};
    int nb = chance(r, 30) ? 3 : 2;
    note(dc, " concat of %d (x2: %d channels)", nb, c2);
    head(net, r, dc, dlg_concat(net, lname(dc, nm), nb, xs));
}

/* One LSTM layer, odd hidden size and sequence length. */
static void build_lstm(dlg_net *net, rng *r, dcase *dc)
{
    int T = rint_in(r, 1, 6), B = rint_in(r, 1, 3), I = rint_in(r, 1, 9), H = rint_in(r, 1, 13);
    note(dc, " lstm(T %d B %d I %d H %d)", T, B, I, H);
    int x = dlg_input(net, "x", T * B, I, 1, 1);
    int h0 = dlg_input(net, "h0", B, H, 1, 1), c0 = dlg_input(net, "c0", B, H, 1, 1);
    int hT, cT;
    char nm[16];
    int y = dlg_lstm(net, lname(dc, nm), x, h0, c0, H, T, &hT, &cT);
    if (chance(r, 40)) {
        note(dc, " dropout");
        y = dlg_dropout(net, lname(dc, nm), y, 0.25f);
    }
    dc->outs[dc->nouts++] = hT;
    dc->outs[dc->nouts++] = cT;
    if (chance(r, 50)) {
        int k = rint_in(r, 1, 11);
        note(dc, " fc(%d) loss", k);
        int lab = dlg_labels(net, "y", T * B);
        dlg_softmax_loss(net, "loss", dlg_fc(net, lname(dc, nm), y, k), lab);
        dc->loss = true;
        dc->nouts = 0; /* backward from the loss alone */
    } else {
        dc->outs[dc->nouts++] = y;
    }
}

/* 64-80 channels between blocked layers: at most AVX2 the cpu backend's
 * own Winograd 3x3, 1-d F(3,7)/F(4,3) and im2col stride-2 kernels take. */
static void build_wide(dlg_net *net, rng *r, dcase *dc)
{
    static const int wide[] = {64, 72, 80};
    int n = rint_in(r, 1, 3), h = rint_in(r, 5, 13), w = rint_in(r, 5, 13);
    int c = pick(r, wide, 2), k = pick(r, wide, 3);
    char nm[16];
    note(dc, " x(%dx8x%dx%d) conv(k1 o%d) relu", n, h, w, c);
    int x = dlg_input(net, "x", n, 8, h, w);
    x = dlg_relu(net, lname(dc, nm), dlg_conv(net, lname(dc, nm), x, c, 1, 1, 0, 1));
    dlg_conv_spec cs = {.out_c = k, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                        .groups = 1, .no_bias = chance(r, 40)};
    int kind = rint_in(r, 0, 3), rr = chance(r, 50) ? 7 : 3;
    if (kind == 0) { /* 3x3 stride 1 */
        cs.ph = cs.pw = rint_in(r, 0, 2);
    } else if (kind == 1) { /* 1 x r */
        cs.kh = 1, cs.kw = rr, cs.pw = rint_in(r, 0, rr / 2);
    } else if (kind == 2) { /* r x 1 */
        cs.kw = 1, cs.kh = rr, cs.ph = rint_in(r, 0, rr / 2);
    } else { /* 3x3 stride 2 */
        cs.sh = cs.sw = 2, cs.ph = cs.pw = rint_in(r, 0, 1);
    }
    if ((cs.kh > h + 2 * cs.ph) || (cs.kw > w + 2 * cs.pw))
        cs.kh = cs.kw = 1, cs.ph = cs.pw = 0;
    note(dc, " conv(k%dx%d s%d p%dx%d o%d%s)", cs.kh, cs.kw, cs.sh, cs.ph, cs.pw, k,
         cs.no_bias ? " nobias" : "");
    x = dlg_conv_ex(net, lname(dc, nm), x, &cs);
    if (cs.no_bias && chance(r, 60))
        x = draw_bn(net, r, dc, x);
    x = relu(net, dc, x);
    if (chance(r, 40)) /* a blocked reader after it */
        x = dlg_conv(net, lname(dc, nm), x, 16, 1, 1, 0, 1);
    head(net, r, dc, x);
}

/* Sometimes freezes some parameters (lr_mult 0): layers then run backward
 * without the weights' gradient, or without any. */
static void freeze(dlg_net *net, rng *r, dcase *dc)
{
    if (!chance(r, 25))
        return;
    note(dc, " frozen:");
    for (int i = 0; i < dc->nlayers; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "L%d", i);
        for (int p = 0; p < 2; p++) {
            int b = dlg_net_param(net, nm, p);
            if (b >= 0 && chance(r, 40)) {
                note(dc, " %s/%d", nm, p);
                dlg_net_set_param_mult(net, b, 0, 0);
            }
        }
    }
}

/* What case `seed` builds; the same calls for both backends. */
static void build_case(dlg_net *net, dcase *dc)
{
    rng r = {dc->seed};
    dc->nlayers = dc->nouts = 0;
    dc->loss = dc->pend = dc->flat = dc->zeros = false;
    dc->desc[0] = 0;
    dlg_filler wf = {DLG_FILL_XAVIER, 0}, bf = {DLG_FILL_GAUSSIAN, 0.2f};
    dlg_net_set_fillers(net, wf, bf);
    if (dc->fixed) { /* mode and input_grads set by the caller */
        dc->fixed(net, dc);
        return;
    }
    int m = rint_in(&r, 0, 9);
    dc->mode = m < 6 ? KEEP_ALL : m < 8 ? SHARED : INFER;
    dc->input_grads = chance(&r, 70);
    int kind = rint_in(&r, 0, 19);
    if (kind < 13)
        build_chain(net, &r, dc);
    else if (kind < 15)
        build_join(net, &r, dc);
    else if (kind < 17)
        build_lstm(net, &r, dc);
    else
        build_wide(net, &r, dc);
    freeze(net, &r, dc);
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtoull(s, NULL, 10) : dflt;
}

/* ---- running and comparing ---------------------------------------------- */

/* Which cpu kernels the cases ran ("conv jit:avx2", ...), and how often. */
typedef struct coverage {
    char name[48][72];
    int count[48], n;
} coverage;

static void cover(coverage *cv, dlg_net *net)
{
    for (int i = 0; cv && i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        const char *impl = dlg_net_layer_impl(net, i);
        if (dlg_net_layer_info(net, i, &li) < 0 || !impl)
            continue;
        char key[72];
        snprintf(key, sizeof key, "%s: %s", li.type, impl);
        int j = 0;
        while (j < cv->n && strcmp(cv->name[j], key))
            j++;
        if (j == cv->n && cv->n < 48)
            snprintf(cv->name[cv->n++], sizeof cv->name[0], "%s", key);
        if (j < cv->n)
            cv->count[j]++;
    }
}

static const char *mode_name(plan_mode m)
{
    return m == KEEP_ALL ? "train keep_all" : m == SHARED ? "train shared" : "inference";
}

static dlg_net *make_net(dcase *dc, const char *backend, char *why, size_t whylen,
                         coverage *cv)
{
    dlg_net *net;
    if (dlg_net_create(&net, backend) < 0)
        return NULL;
    build_case(net, dc);
    dlg_plan_opts o = {.backend = backend,
                       .threads = (int)env_u64("NN_DIFF_THREADS", 2),
                       .train = dc->mode != INFER,
                       .seed = (dc->seed ^ 0x5eed) + dc->salt,
                       .input_grads = dc->mode != INFER && dc->input_grads,
                       .keep_all = dc->mode == KEEP_ALL};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0) {
        snprintf(why, whylen, "%s: %s", backend, dlg_net_error(net));
        dlg_net_destroy(net);
        return NULL;
    }
    cover(cv, net);
    static const char *const inputs[] = {"x", "x2", "h0", "c0"};
    for (int i = 0; i < 4; i++) {
        int b = dlg_net_blob(net, inputs[i]);
        if (b >= 0 &&
            tu_fill_blob(net, b, FILL_GAUSS, dc->seed * 31 + dc->salt * 7919 + (uint64_t)i) < 0)
            snprintf(why, whylen, "%s: fill %s", backend, inputs[i]);
    }
    int y = dlg_net_blob(net, "y"), loss = dlg_net_blob(net, "loss");
    if (y >= 0 && loss >= 0) {
        dlg_shape ls;
        int lb = -1;
        /* classes: the loss layer's logits are its input, the last fc */
        for (int i = dlg_net_layer_count(net) - 1; i >= 0 && lb < 0; i--) {
            dlg_layer_info li;
            dlg_net_layer_info(net, i, &li);
            if (!strcmp(li.type, "fc"))
                lb = dlg_net_blob(net, li.name);
        }
        dlg_net_shape(net, lb, &ls);
        int64_t n = tu_count(net, y), k = ls.d[1];
        float *lab = malloc((size_t)n * sizeof(float));
        for (int64_t i = 0; i < n; i++)
            lab[i] = (float)((uint64_t)(i * 7 + (int64_t)dc->seed) % (uint64_t)k);
        dlg_net_write(net, y, DLG_DATA, lab, (size_t)n);
        free(lab);
    }
    return net;
}

typedef struct verdict {
    double floor_diff; /* GRAD_FLOOR of the largest gradient, at least 1e-2 */
    double worst;
    char where[256];
    int compared, failed;
} verdict;

/* max |a - b| / max(max |b|, FLOOR) of count floats */
static double rel(const float *a, const float *b, int64_t n, double floor)
{
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        d = isnan(e) ? INFINITY : fmax(d, e);
        m = fmax(m, fabs((double)b[i]));
    }
    if (getenv("NN_DIFF_DEBUG")) {
        int64_t off = 0; /* elements off by more than TOL of the largest */
        for (int64_t i = 0; i < n; i++)
            off += fabs((double)a[i] - b[i]) > TOL * fmax(m, floor);
        printf("      max|diff| %.3e max|ref| %.3e, %lld of %lld elements off\n", d, m,
               (long long)off, (long long)n);
    }
    return d / fmax(m, floor);
}

static void record(verdict *v, double e, const char *what, int blob, const char *bname)
{
    v->compared++;
    if (e > v->worst || isnan(e)) {
        v->worst = isnan(e) ? INFINITY : e;
        snprintf(v->where, sizeof v->where, "%s of blob %d (%s)", what, blob, bname);
    }
}

/* Reads blob `b` (data or diff) of both nets; when both can, compares.
 * strict: both must be readable alike. */
static void cmp_blob(dlg_net *cpu, dlg_net *ref, int b, dlg_which w, const char *what,
                     bool strict, verdict *v)
{
    int64_t n = tu_count(ref, b);
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    int ra = dlg_net_read(cpu, b, w, x, (size_t)n), rb = dlg_net_read(ref, b, w, y, (size_t)n);
    char name[64] = "?";
    for (int i = 0; i < dlg_net_layer_count(ref); i++) {
        dlg_layer_info li;
        if (dlg_net_layer_info(ref, i, &li) == 0 && dlg_net_blob(ref, li.name) == b)
            snprintf(name, sizeof name, "%s %s", li.type, li.name);
    }
    /* after an update, parameters hold lr times their gradients' noise */
    double fd = fmax(FLOOR_DATA, LR * v->floor_diff);
    if (ra == 0 && rb == 0)
        record(v, rel(x, y, n, w == DLG_DIFF ? v->floor_diff : fd), what, b, name);
    else if (strict && (ra == 0) != (rb == 0))
        record(v, INFINITY, ra ? "cpu refuses to read" : "ref refuses to read", b, name);
    free(x);
    free(y);
}

static int nblobs(dlg_net *net)
{
    dlg_shape s;
    int n = 0;
    while (dlg_net_shape(net, n, &s) == 0)
        n++;
    return n;
}

static void cmp_all(dlg_net *cpu, dlg_net *ref, dlg_which w, const char *what, verdict *v)
{
    for (int b = 0; b < nblobs(ref); b++)
        cmp_blob(cpu, ref, b, w, what, true, v);
}

/* The parameters of every layer: their ids. */
static int params(dlg_net *net, int *ids, int max)
{
    int n = 0;
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        dlg_net_layer_info(net, i, &li);
        for (int p = 0; p < 4 && n < max; p++) {
            int id = dlg_net_param(net, li.name, p);
            if (id >= 0)
                ids[n++] = id;
        }
    }
    return n;
}

static float *read_all(dlg_net *net, int b, dlg_which w)
{
    int64_t n = tu_count(net, b);
    float *x = malloc((size_t)n * sizeof(float));
    if (x && dlg_net_read(net, b, w, x, (size_t)n) < 0) {
        free(x);
        return NULL;
    }
    return x;
}

/* One SGD step on both: the change of every parameter must agree. */
static void cmp_sgd(dlg_net *cpu, dlg_net *ref, verdict *v)
{
    int ids[256], n = params(ref, ids, 256);
    float *before[2][256];
    for (int i = 0; i < n; i++) {
        before[0][i] = read_all(cpu, ids[i], DLG_DATA);
        before[1][i] = read_all(ref, ids[i], DLG_DATA);
    }
    dlg_sgd sgd = {.lr = LR, .momentum = 0.9f, .weight_decay = 1e-3f};
    if (dlg_net_sgd_step(cpu, &sgd) < 0 || dlg_net_sgd_step(ref, &sgd) < 0) {
        record(v, INFINITY, "sgd step", -1, dlg_net_error(cpu));
        n = 0;
    }
    for (int i = 0; i < n; i++) {
        float *a = read_all(cpu, ids[i], DLG_DATA), *b = read_all(ref, ids[i], DLG_DATA);
        int64_t cnt = tu_count(ref, ids[i]);
        if (a && b && before[0][i] && before[1][i]) {
            for (int64_t j = 0; j < cnt; j++) {
                a[j] -= before[0][i][j];
                b[j] -= before[1][i][j];
            }
            record(v, rel(a, b, cnt, LR * v->floor_diff), "sgd update", ids[i], "param");
        }
        free(a);
        free(b);
    }
    for (int i = 0; i < n; i++) {
        free(before[0][i]);
        free(before[1][i]);
    }
}

/* Random gradients into the outputs (no loss): the same on both. */
static void seed_grads(dlg_net *cpu, dlg_net *ref, const dcase *dc)
{
    for (int i = 0; i < dc->nouts; i++) {
        int64_t n = tu_count(ref, dc->outs[i]);
        float *g = malloc((size_t)n * sizeof(float));
        tu_fill(g, n, FILL_GAUSS, dc->seed + 77 + (uint64_t)i);
        dlg_net_write(cpu, dc->outs[i], DLG_DIFF, g, (size_t)n);
        dlg_net_write(ref, dc->outs[i], DLG_DIFF, g, (size_t)n);
        free(g);
    }
}

static bool step(dlg_net *net, int rc, verdict *v, const char *what)
{
    if (rc == 0)
        return true;
    record(v, INFINITY, what, -1, dlg_net_error(net));
    return false;
}

/* Sets v's gradient floor from the reference's gradients. */
static void grad_floor(dlg_net *ref, verdict *v)
{
    double m = 0;
    for (int b = 0; b < nblobs(ref); b++) {
        float *g = read_all(ref, b, DLG_DIFF);
        for (int64_t i = 0; g && i < tu_count(ref, b); i++)
            m = fmax(m, fabs((double)g[i]));
        free(g);
    }
    v->floor_diff = fmax(1e-2, GRAD_FLOOR * m);
}

/* The net's results: its outputs (and loss), or every blob. */
static void cmp_results(dlg_net *cpu, dlg_net *ref, const dcase *dc, dlg_which w,
                        const char *what, verdict *v)
{
    if (dc->mode == KEEP_ALL) {
        cmp_all(cpu, ref, w, what, v);
        return;
    }
    /* shared or fused: whatever both can read (inputs, params, outputs) */
    for (int b = 0; b < nblobs(ref); b++)
        cmp_blob(cpu, ref, b, w, what, false, v);
}

/* Backward after a forward, then one SGD step, compared. */
static void train_step(dlg_net *cpu, dlg_net *ref, const dcase *dc, verdict *v)
{
    seed_grads(cpu, ref, dc);
    if (step(ref, dlg_net_backward(ref), v, "ref backward") &&
        step(cpu, dlg_net_backward(cpu), v, "cpu backward")) {
        grad_floor(ref, v);
        cmp_results(cpu, ref, dc, DLG_DIFF, "backward", v);
        cmp_sgd(cpu, ref, v);
    }
}

/* Runs case dc on both backends; returns its verdict. */
static verdict run_case(dcase *dc, coverage *cv)
{
    verdict v = {0};
    char why[600] = "";
    dlg_net *ref = make_net(dc, "ref", why, sizeof why, NULL);
    if (getenv("NN_DIFF_VERBOSE"))
        printf("   %s%s:%s\n", mode_name(dc->mode),
               dc->mode != INFER && !dc->input_grads ? " (no input gradients)" : "", dc->desc);
    dlg_net *cpu = ref ? make_net(dc, "cpu", why, sizeof why, cv) : NULL;
    if (!ref || !cpu) {
        /* a shape the builder refuses is fine, if both refuse it alike */
        v.worst = ref ? INFINITY : 0;
        snprintf(v.where, sizeof v.where, "%s", why);
        v.compared = -1;
        dlg_net_destroy(ref);
        return v;
    }
    if (step(ref, dlg_net_forward(ref), &v, "ref forward") &&
        step(cpu, dlg_net_forward(cpu), &v, "cpu forward"))
        cmp_results(cpu, ref, dc, DLG_DATA, "forward", &v);
    if (dc->mode != INFER && v.worst < INFINITY) {
        train_step(cpu, ref, dc, &v);
        /* a second step, from the updated weights, with momentum */
        if (v.worst < INFINITY && step(ref, dlg_net_forward(ref), &v, "ref forward") &&
            step(cpu, dlg_net_forward(cpu), &v, "cpu forward")) {
            cmp_results(cpu, ref, dc, DLG_DATA, "forward after sgd", &v);
            train_step(cpu, ref, dc, &v);
        }
        /* inference behaviour after the updates (bn running statistics) */
        if (v.worst < INFINITY && step(ref, dlg_net_set_train(ref, false), &v, "ref set_train") &&
            step(cpu, dlg_net_set_train(cpu, false), &v, "cpu set_train") &&
            step(ref, dlg_net_forward(ref), &v, "ref forward (test phase)") &&
            step(cpu, dlg_net_forward(cpu), &v, "cpu forward (test phase)"))
            cmp_results(cpu, ref, dc, DLG_DATA, "forward after sgd, test phase", &v);
    }
    dlg_net_destroy(cpu);
    dlg_net_destroy(ref);
    return v;
}

static bool verbose(void) { return getenv("NN_DIFF_VERBOSE") != NULL; }

/* Runs one case; prints it when it fails (or verbose). */
/* Runs case dc; prints it when it fails (or verbose).  A mismatch that
 * other values for the same net do not repeat is a value that float and
 * double rounding put on different sides of a ReLU's or max pool's kink
 * (one element's gradient, then all upstream of it): counted in *kinks. */
static bool check(dcase *dc, int *skipped, int *kinks, coverage *cv)
{
    if (verbose())
        printf("  seed %llu ...\n", (unsigned long long)dc->seed);
    verdict v = run_case(dc, cv);
    bool ok = v.worst <= TOL;
    if (!ok && v.compared >= 0) {
        dc->salt++;
        verdict again = run_case(dc, NULL);
        dc->salt--;
        if (again.worst <= TOL) {
            (*kinks)++;
            if (verbose())
                printf("    (a kink: %.3g at %s, other values pass)\n", v.worst, v.where);
            ok = true;
        }
    }
    if (v.compared < 0 && ok)
        (*skipped)++;
    if (!ok || verbose())
        printf("  seed %llu %s%s:%s\n    %s: %s worst %.3g (%d tensors)%s%s\n",
               (unsigned long long)dc->seed, mode_name(dc->mode),
               dc->mode != INFER && !dc->input_grads ? " (no input gradients)" : "", dc->desc,
               ok ? "ok" : "FAIL", v.compared < 0 ? "refused" : "compared", v.worst, v.compared,
               v.where[0] ? " at " : "", v.where);
    return ok;
}

static bool check_case(uint64_t seed, int *skipped, int *kinks, coverage *cv)
{
    dcase dc = {.seed = seed};
    return check(&dc, skipped, kinks, cv);
}

/* A regression case, in the given plan mode. */
static void check_fixed(fixed_fn f, plan_mode mode, bool input_grads)
{
    dcase dc = {.seed = 1, .fixed = f, .mode = mode, .input_grads = input_grads};
    int skipped = 0, kinks = 0;
    assert_true(check(&dc, &skipped, &kinks, NULL));
    assert_int_equal(skipped + kinks, 0);
}

/* ---- regressions: cases the random ones found ------------------------------ */

/* A batch norm whose scale and shift are both frozen, with a trained
 * layer before it: the cpu backward wrote their gradients through NULL
 * (a crash). */
static void bn_frozen(dlg_net *net, dcase *dc)
{
    note(dc, " x(2x3x5x5) conv(k3 o5) bn(frozen) relu fc(4) loss");
    int x = dlg_input(net, "x", 2, 3, 5, 5), y = dlg_labels(net, "y", 2);
    x = dlg_conv(net, "L0", x, 5, 3, 1, 1, 1);
    x = dlg_relu(net, "L2", dlg_batchnorm(net, "L1", x, 1e-5f));
    dlg_softmax_loss(net, "loss", dlg_fc(net, "L3", x, 4), y);
    dlg_net_set_param_mult(net, dlg_net_param(net, "L1", 0), 0, 0);
    dlg_net_set_param_mult(net, dlg_net_param(net, "L1", 1), 0, 0);
    dc->loss = true;
}

/* Fine-tuning a head on a frozen backbone: nothing before the batch norm
 * trains, so it runs no backward, but a training net's forward still
 * normalises by the batch.  The cpu backend made its batch-statistics
 * primitive only for layers with a backward: forward failed. */
static void bn_frozen_backbone(dlg_net *net, dcase *dc)
{
    note(dc, " x(3x5x4x4) conv(k1 o7 nobias, frozen) bn(frozen) relu fc(3) loss");
    dlg_conv_spec cs = {7, 1, 1, 1, 1, 0, 0, 1, 1, 1, true};
    int x = dlg_input(net, "x", 3, 5, 4, 4), y = dlg_labels(net, "y", 3);
    x = dlg_conv_ex(net, "L0", x, &cs);
    x = dlg_relu(net, "L2", dlg_batchnorm(net, "L1", x, 1e-5f));
    dlg_softmax_loss(net, "loss", dlg_fc(net, "L3", x, 3), y);
    dlg_net_set_param_mult(net, dlg_net_param(net, "L0", 0), 0, 0);
    dlg_net_set_param_mult(net, dlg_net_param(net, "L1", 0), 0, 0);
    dlg_net_set_param_mult(net, dlg_net_param(net, "L1", 1), 0, 0);
    dc->loss = true;
}

static void test_bn_frozen(void **st)
{
    (void)st;
    check_fixed(bn_frozen, KEEP_ALL, false);
    check_fixed(bn_frozen, SHARED, true); /* the ReLU folded into it */
    check_fixed(bn_frozen_backbone, KEEP_ALL, false);
    check_fixed(bn_frozen_backbone, SHARED, false);
}


static void test_random_cases(void **st)
{
    (void)st;
    uint64_t first = env_u64("NN_DIFF_SEED", 1), n = env_u64("NN_DIFF_CASES", CI_CASES);
    int failed = 0, skipped = 0, kinks = 0;
    coverage *cv = calloc(1, sizeof *cv);
    for (uint64_t i = 0; i < n; i++)
        failed += !check_case(first + i, &skipped, &kinks, cv);
    printf("  cpu kernels run (layers):\n");
    for (int i = 0; i < cv->n; i++)
        printf("    %5d  %s\n", cv->count[i], cv->name[i]);
    free(cv);
    printf("  %llu random cases from seed %llu: %d failed, %d refused by the builder, %d passed "
           "with other values (a kink)\n",
           (unsigned long long)n, (unsigned long long)first, failed, skipped, kinks);
    assert_int_equal(failed, 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a crash keeps the cases before it */
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bn_frozen),
                                       cmocka_unit_test(test_random_cases)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
