/* The oneDNN cpu backend against the reference: every layer's forward and
 * backward (inputs and parameters) must agree within 1e-4 relative error
 * (max |cpu - ref| / max(max |ref|, 1e-4) per tensor), single layers and
 * small nets whose activations stay in oneDNN's blocked layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dnnl_isa.h"
#include "nn_testutil.h"
#include "tune_testutil.h"
#include "cpu/cpu_winograd.h"

#include <oneapi/dnnl/dnnl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*build_fn)(dlg_net *net);

static dlg_net *make_seeded(build_fn build, const char *backend, bool train, bool keep_all,
                            uint64_t seed)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, backend), 0);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f},
                        (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f});
    build(net);
    dlg_plan_opts o = {
        .backend = backend, .threads = 2, .train = train, .seed = seed, .input_grads = true,
        .keep_all = keep_all};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s: %s", backend, dlg_net_error(net));
    int y = dlg_net_blob(net, "y");
    if (y >= 0) {
        float lab[64];
        for (int64_t i = 0; i < tu_count(net, y); i++)
            lab[i] = (float)((i * 7) % 10);
        assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, (size_t)tu_count(net, y)), 0);
    }
    const char *in[2] = {"x", "x2"};
    for (int i = 0; i < 2; i++)
        if (dlg_net_blob(net, in[i]) >= 0)
            assert_int_equal(
                tu_fill_blob(net, dlg_net_blob(net, in[i]), FILL_DISTINCT, 21 + (uint64_t)i), 0);
    return net;
}

/* the nets' seed; compare_plan may go on from it (relu_at_kink) */
enum { SEED = 9 };

static dlg_net *make_opts(build_fn build, const char *backend, bool train, bool keep_all)
{
    return make_seeded(build, backend, train, keep_all, SEED);
}

/* every layer's data and gradient is compared: nothing shared or fused */
static dlg_net *make(build_fn build, const char *backend, bool train)
{
    return make_opts(build, backend, train, true);
}

static double rel_err(dlg_net *a, dlg_net *b, int blob, dlg_which w)
{
    int64_t n = tu_count(a, blob);
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    int ra = dlg_net_read(a, blob, w, x, (size_t)n), rb = dlg_net_read(b, blob, w, y, (size_t)n);
    assert_int_equal(ra, rb); /* both have the gradient, or neither */
    if (ra < 0) {
        free(x);
        free(y);
        return 0;
    }
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)x[i] - y[i]));
        m = fmax(m, fabs((double)y[i]));
    }
    free(x);
    free(y);
    if (getenv("NN_DEBUG"))
        printf("      max|diff| %.3e max|ref| %.3e\n", d, m);
    /* a floor: gradients that cancel to ~0 (conv bias before batch-norm)
     * have no meaningful relative error */
    return d / fmax(m, 1e-4);
}

/* Whether a ReLU of ref (after its forward) has an input within rounding
 * of 0 (1e-5 of the largest; the backends' sums differ by ~4e-6 of it):
 * there the two backends may take the ReLU's two sides, and a gradient
 * passed by one and stopped by the other says nothing of either.  A
 * ReLU's input is the output of the layer before it, as every net here
 * builds it. */
static bool relu_at_kink(dlg_net *ref)
{
    for (int i = 1; i < dlg_net_layer_count(ref); i++) {
        dlg_layer_info li, prev;
        assert_int_equal(dlg_net_layer_info(ref, i, &li), 0);
        assert_int_equal(dlg_net_layer_info(ref, i - 1, &prev), 0);
        int b = dlg_net_blob(ref, prev.name);
        if (strcmp(li.type, "relu") != 0 || b < 0)
            continue;
        int64_t n = tu_count(ref, b);
        float *v = malloc((size_t)n * sizeof(float));
        assert_non_null(v);
        assert_int_equal(dlg_net_read(ref, b, DLG_DATA, v, (size_t)n), 0);
        double m = 0;
        for (int64_t k = 0; k < n; k++)
            m = fmax(m, fabs((double)v[k]));
        int64_t near = 0;
        for (int64_t k = 0; k < n; k++)
            near += v[k] != 0 && fabs((double)v[k]) < 1e-5 * m; /* an exact 0 is 0 on both */
        free(v);
        if (near)
            return true;
    }
    return false;
}

/* Runs forward + backward on both backends; compares the output, the
 * gradients of "x"/"x2" and of every parameter of layer "L". */
/* fused: the cpu net planned as a run plans it (layers folded, blobs
 * shared), against the reference with nothing fused; only the gradients
 * of the input and of every parameter are compared then. */
/* One seed of compare_plan: the worst relative error; *kink tells whether
 * ref's forward had a ReLU input at a kink (relu_at_kink). */
static double compare_seed(const char *what, build_fn build, bool train, bool fused, uint64_t seed,
                           bool *kink)
{
    dlg_net *ref = make_seeded(build, "ref", true, true, seed);
    dlg_net *cpu = make_seeded(build, "cpu", true, !fused, seed);
    if (!train) {
        assert_int_equal(dlg_net_set_train(ref, false), 0);
        assert_int_equal(dlg_net_set_train(cpu, false), 0);
    }
    int out = dlg_net_blob(ref, "L");
    assert_int_equal(dlg_net_forward(ref), 0);
    if (dlg_net_forward(cpu) < 0)
        fail_msg("%s", dlg_net_error(cpu));
    double worst = fused ? 0 : rel_err(cpu, ref, out, DLG_DATA);
    *kink = train && relu_at_kink(ref);
    if (train) {
        /* the gradient enters at the net's output: the last layer's blob
         * (layers after L, e.g. a ReLU, would overwrite one given to L) */
        dlg_layer_info last;
        assert_int_equal(dlg_net_layer_info(ref, dlg_net_layer_count(ref) - 1, &last), 0);
        int top = dlg_net_blob(ref, last.name) >= 0 ? dlg_net_blob(ref, last.name) : out;
        int64_t n = tu_count(ref, top);
        float *g = malloc((size_t)n * sizeof(float));
        tu_fill(g, n, FILL_GAUSS, 5);
        bool loss = dlg_net_blob(ref, "y") >= 0;
        if (!loss) {
            assert_int_equal(dlg_net_write(ref, top, DLG_DIFF, g, (size_t)n), 0);
            assert_int_equal(dlg_net_write(cpu, top, DLG_DIFF, g, (size_t)n), 0);
        }
        free(g);
        assert_int_equal(dlg_net_backward(ref), 0);
        if (dlg_net_backward(cpu) < 0)
            fail_msg("%s", dlg_net_error(cpu));
        const char *in[2] = {"x", "x2"};
        for (int i = 0; i < 2; i++)
            if (dlg_net_blob(ref, in[i]) >= 0) {
                double e = rel_err(cpu, ref, dlg_net_blob(ref, in[i]), DLG_DIFF);
                if (e > 1e-4)
                    printf("    input %s: diff %.2e\n", in[i], e);
                worst = fmax(worst, e);
            }
        for (int p = 0; p < 2 && dlg_net_param(ref, "L", p) >= 0; p++)
            worst = fmax(worst, rel_err(cpu, ref, dlg_net_param(ref, "L", p), DLG_DIFF));
        for (int p = 2; p < 4 && dlg_net_param(ref, "L", p) >= 0; p++) /* bn running stats */
            worst = fmax(worst, rel_err(cpu, ref, dlg_net_param(ref, "L", p), DLG_DATA));
        /* every layer's output and gradient (read back from blocked
         * layouts), and every parameter's gradient */
        for (int i = 0; i < dlg_net_layer_count(ref); i++) {
            dlg_layer_info li;
            assert_int_equal(dlg_net_layer_info(ref, i, &li), 0);
            int b = dlg_net_blob(ref, li.name);
            if (b >= 0 && !fused) {
                double ed = rel_err(cpu, ref, b, DLG_DATA), eg = rel_err(cpu, ref, b, DLG_DIFF);
                if (ed > 1e-4 || eg > 1e-4)
                    printf("    layer %s: data %.2e diff %.2e\n", li.name, ed, eg);
                worst = fmax(worst, fmax(ed, eg));
            }
            for (int p = 0; p < 2 && dlg_net_param(ref, li.name, p) >= 0; p++) {
                double e = rel_err(cpu, ref, dlg_net_param(ref, li.name, p), DLG_DIFF);
                if (e > 1e-4)
                    printf("    layer %s param %d: diff %.2e\n", li.name, p, e);
                worst = fmax(worst, e);
            }
        }
        assert_int_equal(dlg_net_status(cpu), 0);
    }
    printf("  %-28s %s max relative error %.2e\n", what, fused ? "fused  " : train ? "fwd+bwd" : "fwd    ",
           worst);
    dlg_net_destroy(ref);
    dlg_net_destroy(cpu);
    return worst;
}

/* A comparison that fails where ref has a ReLU input at a kink is made
 * again from the next seed (one seed in three or four has one in some
 * net here); one that fails without a kink fails, and so do 8 seeds in a
 * row (a real error fails at every seed). */
static void compare_plan(const char *what, build_fn build, bool train, bool fused)
{
    for (uint64_t seed = SEED; seed < SEED + 8; seed++) {
        bool kink;
        double worst = compare_seed(what, build, train, fused, seed, &kink);
        if (worst < 1e-4)
            return;
        if (!kink)
            fail_msg("%s: max relative error %.2e at seed %llu", what, worst, (unsigned long long)seed);
        printf("  %-28s seed %llu: a ReLU input within rounding of 0; the next seed\n", what,
               (unsigned long long)seed);
    }
    fail_msg("%s: 8 seeds in a row over 1e-4, each with a ReLU input at a kink", what);
}

static void compare(const char *what, build_fn build, bool train) { compare_plan(what, build, train, false); }

/* A training plan as run: e.g. each ReLU folded into its convolution,
 * whose backward then masks dy itself. */
static void compare_fused(const char *what, build_fn build) { compare_plan(what, build, true, true); }

#define X(n, c, h, w) dlg_input(net, "x", n, c, h, w)

static int conv_plain(dlg_net *net) { return dlg_conv(net, "L", X(2, 5, 9, 9), 8, 3, 1, 1, 1); }
static int conv_group(dlg_net *net) { return dlg_conv(net, "L", X(2, 8, 11, 11), 12, 5, 2, 2, 4); }
static int conv_dil(dlg_net *net)
{
    return dlg_conv_dilated(net, "L", X(2, 4, 10, 9), 6, 3, 1, 2, 2, 2);
}
static int conv_big(dlg_net *net) { return dlg_conv(net, "L", X(2, 3, 27, 27), 16, 11, 4, 0, 1); }
static int conv_nobias(dlg_net *net)
{
    dlg_conv_spec s = {16, 1, 1, 2, 2, 0, 0, 1, 1, 1, true};
    return dlg_conv_ex(net, "L", X(2, 32, 7, 7), &s);
}
static int pool_max(dlg_net *net) { return dlg_max_pool(net, "L", X(2, 3, 13, 13), 3, 2, 0); }
static int pool_max_pad(dlg_net *net) { return dlg_max_pool(net, "L", X(2, 3, 6, 6), 3, 2, 1); }
static int pool_avg(dlg_net *net) { return dlg_avg_pool(net, "L", X(2, 3, 8, 8), 3, 2, 0); }
static int pool_avg_pad(dlg_net *net) { return dlg_avg_pool(net, "L", X(2, 3, 7, 7), 3, 1, 1); }
static int pool_avg_fallback(dlg_net *net)
{
    return dlg_avg_pool(net, "L", X(2, 3, 6, 6), 3, 2, 1);
}
static int pool_global(dlg_net *net) { return dlg_global_avg_pool(net, "L", X(2, 16, 7, 7)); }
/* Floor mode (PyTorch's) at sizes where ceil mode gives one more output:
 * 8 -> 3 (ceil 4) with oneDNN's right pad -1 clamped to 0, the last
 * input row outside every window; pad 1: 8 -> 4 (ceil 5), 6 -> 3 (ceil 4:
 * past the pad there, a ref fallback), 11 -> 3 (k5 s3, ceil 4: right pad
 * -1 again, with a left pad). */
static int floor_pool(dlg_net *net, bool avg, int h, int k, int s, int p)
{
    dlg_net_set_pool_rounding(net, DLG_POOL_FLOOR);
    return avg ? dlg_avg_pool(net, "L", X(2, 3, h, h), k, s, p)
               : dlg_max_pool(net, "L", X(2, 3, h, h), k, s, p);
}
static int pool_max_floor(dlg_net *net) { return floor_pool(net, false, 8, 3, 2, 0); }
static int pool_max_floor_pad(dlg_net *net) { return floor_pool(net, false, 8, 3, 2, 1); }
static int pool_max_floor_neg(dlg_net *net) { return floor_pool(net, false, 11, 5, 3, 1); }
static int pool_avg_floor(dlg_net *net) { return floor_pool(net, true, 8, 3, 2, 0); }
static int pool_avg_floor_pad(dlg_net *net) { return floor_pool(net, true, 6, 3, 2, 1); }
static int pool_avg_floor_neg(dlg_net *net) { return floor_pool(net, true, 11, 5, 3, 1); }
static int lrn(dlg_net *net) { return dlg_lrn(net, "L", X(2, 12, 5, 5), 5, 1e-2f, 0.75f, 1.0f); }
static int relu(dlg_net *net) { return dlg_relu(net, "L", X(2, 6, 5, 5)); }
static int bn(dlg_net *net) { return dlg_batchnorm(net, "L", X(4, 6, 5, 5), 1e-5f); }
static int fc(dlg_net *net) { return dlg_fc(net, "L", X(4, 8, 3, 3), 10); }
static int softmax(dlg_net *net) { return dlg_softmax(net, "L", X(3, 10, 2, 2)); }
static int loss_net(dlg_net *net)
{
    int x = X(4, 3, 9, 9), y = dlg_labels(net, "y", 4);
    dlg_conv_spec cs = {8, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}; /* no bias before BN */
    int h = dlg_conv_ex(net, "conv", x, &cs);
    h = dlg_batchnorm(net, "bn", h, 1e-5f);
    int a = dlg_relu(net, "relu", h);
    int b = dlg_conv(net, "side", x, 8, 1, 1, 0, 1);
    h = dlg_add(net, "add", a, b);
    h = dlg_max_pool(net, "pool", h, 3, 2, 0);
    h = dlg_fc(net, "L", h, 10);
    return dlg_softmax_loss(net, "loss", h, y);
}

/* AlexNet-like: groups, LRN, ceil pooling, dropout; blocked in between */
static int alex_mini(dlg_net *net)
{
    int x = X(2, 3, 35, 35), y = dlg_labels(net, "y", 2);
    x = dlg_relu(net, "r1", dlg_conv(net, "c1", x, 16, 7, 2, 0, 1));
    x = dlg_max_pool(net, "p1", dlg_lrn(net, "n1", x, 5, 1e-3f, 0.75f, 1.0f), 3, 2, 0);
    x = dlg_relu(net, "r2", dlg_conv(net, "c2", x, 32, 5, 1, 2, 2));
    x = dlg_max_pool(net, "p2", dlg_lrn(net, "n2", x, 5, 1e-3f, 0.75f, 1.0f), 3, 2, 0);
    x = dlg_relu(net, "r3", dlg_conv(net, "c3", x, 16, 3, 1, 1, 2));
    x = dlg_dropout(net, "d6", dlg_relu(net, "r6", dlg_fc(net, "fc6", x, 32)), 0.5f);
    return dlg_softmax_loss(net, "loss", dlg_fc(net, "L", x, 10), y);
}

/* GoogLeNet-like: one inception module (split into four, concat); with
 * channel counts of 8 the concat runs on the reference kernel, with 16s on
 * oneDNN in blocked layouts. */
static int inception(dlg_net *net, int k)
{
    int x = X(2, 8, 9, 9), y = dlg_labels(net, "y", 2);
    x = dlg_relu(net, "stem", dlg_conv(net, "c0", x, 2 * k, 3, 1, 1, 1));
    int br[4];
    br[0] = dlg_relu(net, "b1r", dlg_conv(net, "b1", x, k, 1, 1, 0, 1));
    br[1] = dlg_relu(net, "b3rr", dlg_conv(net, "b3red", x, k, 1, 1, 0, 1));
    br[1] = dlg_relu(net, "b3r", dlg_conv(net, "b3", br[1], 2 * k, 3, 1, 1, 1));
    br[2] = dlg_relu(net, "b5rr", dlg_conv(net, "b5red", x, k / 2, 1, 1, 0, 1));
    br[2] = dlg_relu(net, "b5r", dlg_conv(net, "b5", br[2], k, 5, 1, 2, 1));
    br[3] = dlg_max_pool(net, "pool", x, 3, 1, 1);
    br[3] = dlg_relu(net, "bpr", dlg_conv(net, "bp", br[3], k, 1, 1, 0, 1));
    x = dlg_concat(net, "cat", 4, br);
    x = dlg_max_pool(net, "p2", x, 3, 2, 0);
    return dlg_softmax_loss(net, "loss", dlg_fc(net, "L", x, 10), y);
}

static int inception8(dlg_net *net) { return inception(net, 8); }
static int inception16(dlg_net *net) { return inception(net, 16); }

static int concat_inputs(dlg_net *net)
{
    int xs[3] = {X(2, 16, 3, 3), dlg_input(net, "x2", 2, 32, 3, 3), 0};
    xs[2] = dlg_relu(net, "r", dlg_conv(net, "c", xs[0], 16, 3, 1, 1, 1));
    return dlg_concat(net, "L", 3, xs);
}

/* ResNet-like: conv-bn-relu, a bottleneck with projection, a plain one;
 * 36 tiles after the stride, so cb and cc run by Winograd. */
static int resnet_mini(dlg_net *net)
{
    int x = X(4, 3, 24, 24), y = dlg_labels(net, "y", 4);
    /* 64 channels: enough for the 3x3 stride-1 layers to run by Winograd */
    dlg_conv_spec s1 = {64, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},
                  s2 = {64, 1, 1, 2, 2, 0, 0, 1, 1, 1, true},
                  s3 = {64, 3, 3, 2, 2, 1, 1, 1, 1, 1, true},
                  s4 = {64, 3, 3, 1, 1, 1, 1, 1, 1, 1, true};
    x = dlg_relu(net, "r0", dlg_batchnorm(net, "bn0", dlg_conv_ex(net, "c0", x, &s1), 1e-5f));
    int a = dlg_relu(net, "ra", dlg_batchnorm(net, "bna", dlg_conv_ex(net, "ca", x, &s3), 1e-5f));
    a = dlg_batchnorm(net, "bnb", dlg_conv_ex(net, "cb", a, &s4), 1e-5f);
    int p = dlg_batchnorm(net, "bnp", dlg_conv_ex(net, "cp", x, &s2), 1e-5f);
    x = dlg_relu(net, "r1", dlg_add(net, "add1", a, p));
    a = dlg_batchnorm(net, "bnc", dlg_conv_ex(net, "cc", x, &s4), 1e-5f);
    x = dlg_relu(net, "r2", dlg_add(net, "add2", a, x));
    x = dlg_global_avg_pool(net, "gap", x);
    return dlg_softmax_loss(net, "loss", dlg_fc(net, "L", x, 10), y);
}

/* ResNet's bottleneck end: a 1x1 convolution, its batch norm, the
 * residual add and the ReLU fused into one layer in inference (on AVX-512
 * the add runs as a primitive of its own after the convolution). */
static int bottleneck_mini(dlg_net *net)
{
    int x = X(2, 16, 14, 14);
    dlg_conv_spec s1 = {64, 1, 1, 1, 1, 0, 0, 1, 1, 1, true};
    x = dlg_relu(net, "r0", dlg_batchnorm(net, "bn0", dlg_conv_ex(net, "c0", x, &s1), 1e-5f));
    int a = dlg_batchnorm(net, "bna", dlg_conv_ex(net, "ca", x, &s1), 1e-5f);
    /* the net's output: kept in an inference plan, so it can be compared */
    return dlg_relu(net, "L", dlg_add(net, "add1", a, x));
}

/* Two blocks (a 16-channel 1x1 then a 64-channel one, the residual added
 * to the second) in a row and a convolution reading the second: each
 * block's residual is read by nothing after it, so an inference plan may
 * add the convolution into the residual's memory (one buffer carries the
 * stream through both blocks). */
static int bottleneck_chain(dlg_net *net)
{
    int x = X(2, 16, 14, 14);
    dlg_conv_spec s1 = {64, 1, 1, 1, 1, 0, 0, 1, 1, 1, true};
    x = dlg_relu(net, "r0", dlg_batchnorm(net, "bn0", dlg_conv_ex(net, "c0", x, &s1), 1e-5f));
    dlg_conv_spec s2 = {16, 1, 1, 1, 1, 0, 0, 1, 1, 1, true};
    int a = dlg_relu(net, "ra0", dlg_batchnorm(net, "bna0", dlg_conv_ex(net, "ca0", x, &s2), 1e-5f));
    a = dlg_batchnorm(net, "bna", dlg_conv_ex(net, "ca", a, &s1), 1e-5f);
    x = dlg_relu(net, "ra", dlg_add(net, "adda", a, x));
    int b = dlg_relu(net, "rb0", dlg_batchnorm(net, "bnb0", dlg_conv_ex(net, "cb0", x, &s2), 1e-5f));
    b = dlg_batchnorm(net, "bnb", dlg_conv_ex(net, "cb", b, &s1), 1e-5f);
    x = dlg_relu(net, "rb", dlg_add(net, "addb", b, x));
    return dlg_conv(net, "L", x, 8, 1, 1, 0, 1);
}

/* A 3x3 stride-1 convolution between blocked layers, 40 tiles, 64
 * channels: the cpu backend runs it by Winograd (forward with bias, both
 * backward passes). */
static int wino_net(dlg_net *net)
{
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(2, 8, 20, 15), 64, 1, 1, 0, 1));
    /* pooled (here and below): a training plan folds the last ReLU into
     * L, whose output must stay read (a net's output is plain, which the
     * Winograd kernels do not take) */
    return dlg_max_pool(net, "p", dlg_relu(net, "r1", dlg_conv(net, "L", x, 64, 3, 1, 1, 1)), 2, 2, 0);
}

/* AlexNet's grouped layers in small: a k x k layer (padded to keep the
 * size) in 2 groups of 64 channels over 20x15, pooled as above. */
static int grouped_pooled(dlg_net *net, int k)
{
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(2, 8, 20, 15), 128, 1, 1, 0, 1));
    return dlg_max_pool(net, "p", dlg_relu(net, "r1", dlg_conv(net, "L", x, 128, k, 1, (k - 1) / 2, 2)), 2, 2, 0);
}

/* The same, one hw x hw image, as "c" before a 1x1 layer: few enough
 * tiles that an inference plan keeps both groups' transformed filters. */
static int grouped_kept(dlg_net *net, int hw, int k)
{
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(1, 8, hw, hw), 128, 1, 1, 0, 1));
    x = dlg_relu(net, "r1", dlg_conv(net, "c", x, 128, k, 1, (k - 1) / 2, 2));
    return dlg_conv(net, "L", x, 16, 1, 1, 0, 1);
}

/* conv4, conv5: 3x3, 40 4x4 tiles; kept at 16 tiles */
static int wino_group_net(dlg_net *net) { return grouped_pooled(net, 3); }
static int small_tiles_groups(dlg_net *net) { return grouped_kept(net, 16, 3); }
/* conv2: 5x5 pad 2, 160 2x2 tiles by F(2x2,5x5); kept at 36 tiles */
static int wino5_net(dlg_net *net) { return grouped_pooled(net, 5); }
static int small_tiles_5x5(dlg_net *net) { return grouped_kept(net, 12, 5); }

/* The same without padding (Inception's stem): 2 x 6 x 5 = 60 output
 * tiles of the 24x19 output; backward data pads dy by 2. */
static int wino_valid_net(dlg_net *net)
{
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(2, 8, 26, 21), 64, 1, 1, 0, 1));
    return dlg_max_pool(net, "p", dlg_relu(net, "r1", dlg_conv(net, "L", x, 72, 3, 1, 0, 1)), 2, 2, 0);
}

/* Inception's factorised filters: a 1x7 then a 7x1 layer (pad 3 along the
 * filter only) by the one-dimensional kernels, 108 and 102 strips. */
static int wino_1d_net(dlg_net *net)
{
    dlg_conv_spec r17 = {64, 1, 7, 1, 1, 0, 3, 1, 1, 1, true},
                  r71 = {64, 7, 1, 1, 1, 3, 0, 1, 1, 1, true};
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(2, 8, 9, 17), 64, 1, 1, 0, 1));
    x = dlg_relu(net, "r1", dlg_conv_ex(net, "c17", x, &r17));
    return dlg_max_pool(net, "p", dlg_relu(net, "r2", dlg_conv_ex(net, "L", x, &r71)), 2, 2, 0);
}

static int small_tiles(dlg_net *net)
{
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(1, 8, 16, 16), 64, 1, 1, 0, 1));
    return dlg_conv(net, "L", x, 64, 3, 1, 1, 1);
}

/* 96 tiles but 32 channels in and out: the transforms would cost more
 * than the multiplications save */
static int few_channels(dlg_net *net)
{
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(1, 8, 48, 32), 32, 1, 1, 0, 1));
    return dlg_conv(net, "L", x, 32, 3, 1, 1, 1);
}

/* A 3x3 layer "c" of 16 tiles and 64 channels between blocked layers (a
 * 1x1 layer after it: the net's output is plain), plain or followed by a
 * batch norm: in an inference plan "c" runs by Winograd with its filter
 * transformed once (the batch norm folded into it). */
static int small_tiles_mid(dlg_net *net)
{
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(1, 8, 16, 16), 64, 1, 1, 0, 1));
    x = dlg_relu(net, "r1", dlg_conv(net, "c", x, 64, 3, 1, 1, 1));
    return dlg_conv(net, "L", x, 16, 1, 1, 0, 1);
}

static int small_tiles_bn(dlg_net *net)
{
    dlg_conv_spec s = {64, 3, 3, 1, 1, 1, 1, 1, 1, 1, true};
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", X(1, 8, 16, 16), 64, 1, 1, 0, 1));
    x = dlg_batchnorm(net, "bn", dlg_conv_ex(net, "c", x, &s), 1e-5f);
    return dlg_conv(net, "L", dlg_relu(net, "r1", x), 16, 1, 1, 0, 1);
}

/* Writes the same fresh values into blob b of both nets (bumps its
 * version), seed picks them. */
static void rewrite(dlg_net *a, dlg_net *b, int blob_a, int blob_b, uint64_t seed, bool positive)
{
    assert_int_equal(tu_write_same(a, b, blob_a, blob_b, seed, positive), 0);
}

/* Inference output of the last layer, cpu against ref. */
static double infer_err(dlg_net *cpu, dlg_net *ref)
{
    assert_int_equal(dlg_net_forward(ref), 0);
    if (dlg_net_forward(cpu) < 0)
        fail_msg("%s", dlg_net_error(cpu));
    return rel_err(cpu, ref, dlg_net_blob(ref, "L"), DLG_DATA);
}

/* A filter transformed once must follow the params it derives from: new
 * weights, and (folded) a new batch-norm statistic, are seen by the next
 * forward. */
static void check_cached_filter(const char *what, build_fn build, const char *conv)
{
    dlg_net *ref = make_opts(build, "ref", false, false), *cpu = make_opts(build, "cpu", false, false);
    double e[3] = {infer_err(cpu, ref), 0, 0};
    rewrite(cpu, ref, dlg_net_param(cpu, conv, 0), dlg_net_param(ref, conv, 0), 31, false);
    e[1] = infer_err(cpu, ref);
    e[2] = e[1];
    if (dlg_net_param(ref, "bn", 3) >= 0) { /* running variance */
        rewrite(cpu, ref, dlg_net_param(cpu, "bn", 3), dlg_net_param(ref, "bn", 3), 32, true);
        e[2] = infer_err(cpu, ref);
    }
    printf("  %-28s fwd     max relative error %.2e, new weights %.2e, new variance %.2e\n",
           what, e[0], e[1], e[2]);
    for (int i = 0; i < 3; i++)
        assert_true(e[i] < 1e-4);
    dlg_net_destroy(ref);
    dlg_net_destroy(cpu);
}

/* A net planned for inference (batch norm folded, residual and ReLU fused
 * into the convolution) against the reference's output. */
static void check_infer_plan(const char *what, build_fn build)
{
    dlg_net *ref = make_opts(build, "ref", false, false), *cpu = make_opts(build, "cpu", false, false);
    double e = infer_err(cpu, ref);
    printf("  %-28s fwd     max relative error %.2e\n", what, e);
    assert_true(e < 1e-4);
    dlg_net_destroy(ref);
    dlg_net_destroy(cpu);
}

/* The kernel that runs layer `name` of a cpu net planned like make()'s,
 * for training or inference (a copy: free it). */
static char *layer_impl(build_fn build, const char *name, bool direct, bool train)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "cpu"), 0);
    build(net);
    dlg_plan_opts o = {.backend = "cpu", .threads = 2, .train = train, .direct_conv = direct};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    const char *impl = NULL;
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        assert_int_equal(dlg_net_layer_info(net, i, &li), 0);
        if (!strcmp(li.name, name))
            impl = dlg_net_layer_impl(net, i);
    }
    assert_non_null(impl);
    assert_null(dlg_net_layer_impl(net, dlg_net_layer_count(net)));
    char *copy = strdup(impl);
    dlg_net_destroy(net);
    printf("  layer %s%s%s: %s\n", name, direct ? " (direct_conv)" : "", train ? "" : " (infer)",
           copy);
    return copy;
}

/* The training kernel of `name` contains `want` (NULL: is not Winograd). */
static void expect_impl(build_fn build, const char *name, bool direct, const char *want)
{
    char *impl = layer_impl(build, name, direct, true);
    if (want)
        assert_non_null(strstr(impl, want));
    else
        assert_null(strstr(impl, "winograd"));
    free(impl);
}

/* oneDNN lays activations out in 8-channel blocks up to AVX2; with
 * AVX-512 it picks 16 and the Winograd kernels (nChw8c) never take. */
static bool blocks_of_8(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core) != dnnl_cpu_isa_avx512_core;
}

static void test_winograd(void **st)
{
    wino_shape probe = {.n = 1, .c = 8, .k = 8, .h = 4, .w = 4, .pad = 1};
    if (!wino_supported(&probe))
        skip();
    if (!blocks_of_8()) {
        printf("  oneDNN blocks by 16 on this CPU: the Winograd kernels do not take\n");
        expect_impl(wino_net, "L", false, NULL);
        expect_impl(resnet_mini, "cb", false, NULL);
        char *d = layer_impl(wino_1d_net, "c17", false, true);
        assert_null(strstr(d, "F(3,7)"));
        free(d);
        compare("3x3 layers, AVX-512", wino_net, true);
        compare_fused("3x3 layers, AVX-512", wino_net);
        compare("1x7, 7x1 layers, AVX-512", wino_1d_net, true);
        return;
    }
    expect_impl(wino_net, "L", false, "winograd");
    expect_impl(wino_net, "L", true, NULL);
    expect_impl(wino_net, "c0", false, "jit");
    expect_impl(resnet_mini, "cb", false, "winograd");
    expect_impl(resnet_mini, "ca", false, "im2col"); /* stride 2 */
    /* inference has no weights' gradient: no im2col scratch either */
    char *ca = layer_impl(resnet_mini, "ca", false, false);
    assert_null(strstr(ca, "im2col"));
    free(ca);
    expect_impl(small_tiles, "L", false, "jit");  /* 16 tiles do not pay */
    expect_impl(few_channels, "L", false, "jit"); /* nor do 32 channels */
    /* inference with too few tiles to transform the filter per call */
    char *once = layer_impl(small_tiles_mid, "c", false, false);
    assert_non_null(strstr(once, "transformed once"));
    free(once);
    once = layer_impl(small_tiles_bn, "c", false, false);
    assert_non_null(strstr(once, "transformed once"));
    free(once);
    check_cached_filter("winograd filter kept", small_tiles_mid, "c");
    check_cached_filter("winograd filter kept, bn", small_tiles_bn, "c");
    compare("winograd 3x3 in blocked layouts", wino_net, true);
    compare_fused("winograd 3x3, ReLU folded", wino_net);
    compare("winograd inference", wino_net, false);
    expect_impl(wino_group_net, "L", false, "winograd");
    compare("winograd 3x3, 2 groups", wino_group_net, true);
    compare_fused("winograd 3x3, 2 groups, folded", wino_group_net);
    compare("winograd 3x3, 2 groups, inference", wino_group_net, false);
    once = layer_impl(small_tiles_groups, "c", false, false);
    assert_non_null(strstr(once, "transformed once"));
    free(once);
    check_cached_filter("winograd filter kept, groups", small_tiles_groups, "c");
    expect_impl(wino5_net, "L", false, "F(2x2,5x5)");
    compare("winograd 5x5, 2 groups", wino5_net, true);
    compare_fused("winograd 5x5, 2 groups, folded", wino5_net);
    compare("winograd 5x5, 2 groups, inference", wino5_net, false);
    once = layer_impl(small_tiles_5x5, "c", false, false);
    assert_non_null(strstr(once, "F(2x2,5x5) avx2, filter transformed once"));
    free(once);
    check_cached_filter("winograd 5x5 filter kept", small_tiles_5x5, "c");
    expect_impl(wino_valid_net, "L", false, "winograd");
    compare("winograd 3x3 pad 0", wino_valid_net, true);
    compare_fused("winograd 3x3 pad 0, folded", wino_valid_net);
    compare("winograd 3x3 pad 0 inference", wino_valid_net, false);
    expect_impl(wino_1d_net, "c17", false, "F(3,7) along w");
    expect_impl(wino_1d_net, "L", false, "F(3,7) along h");
    compare("winograd 1x7, 7x1", wino_1d_net, true);
    compare_fused("winograd 1x7, 7x1, folded", wino_1d_net);
    compare("winograd 1x7, 7x1 inference", wino_1d_net, false);
}

/* ResNet's basic block, twice: 3x3 convolutions, the residual added to
 * the second, then a 1x1 reading it. */
static int basic_chain(dlg_net *net)
{
    dlg_conv_spec s3 = {64, 3, 3, 1, 1, 1, 1, 1, 1, 1, true};
    int x = dlg_relu(net, "r0", dlg_batchnorm(net, "bn0", dlg_conv(net, "c0", X(2, 16, 12, 12), 64, 1, 1, 0, 1), 1e-5f));
    for (int b = 0; b < 2; b++) {
        char n[7][8];
        const char *fmt[7] = {"c%da", "bn%da", "r%da", "c%db", "bn%db", "add%d", "r%db"};
        for (int k = 0; k < 7; k++)
            snprintf(n[k], sizeof n[k], fmt[k], b);
        int a = dlg_relu(net, n[2], dlg_batchnorm(net, n[1], dlg_conv_ex(net, n[0], x, &s3), 1e-5f));
        a = dlg_batchnorm(net, n[4], dlg_conv_ex(net, n[3], a, &s3), 1e-5f);
        x = dlg_relu(net, n[6], dlg_add(net, n[5], a, x));
    }
    return dlg_conv(net, "L", x, 8, 1, 1, 0, 1);
}

/* oneDNN's own Winograd (AVX-512 only in oneDNN 2.6), forced where the
 * plan would time it against direct: every pass, the folded batch norm,
 * and blocks whose residual (nhwc, from brgconv) meets its blocked
 * output, against ref. */
static void test_onednn_winograd(void **st)
{
    setenv("DLG_NN_CONV_ALGO", "winograd", 1);
    char *impl = layer_impl(wino_net, "L", false, true);
    bool has = strstr(impl, "wino_4x3") != NULL;
    free(impl);
    if (!has) {
        unsetenv("DLG_NN_CONV_ALGO");
        printf("  oneDNN has no Winograd kernel on this CPU (AVX2: cpu_winograd.c's)\n");
        skip();
    }
    expect_impl(wino_net, "c0", false, "jit");   /* 1x1: never */
    impl = layer_impl(wino_net, "L", true, true); /* direct_conv: never */
    assert_null(strstr(impl, "wino"));
    free(impl);
    compare("oneDNN winograd, training", wino_net, true);
    compare("oneDNN winograd, inference", wino_net, false);
    compare("oneDNN winograd, pad 0", wino_valid_net, true);
    check_cached_filter("oneDNN winograd, bn folded", small_tiles_bn, "c");
    check_infer_plan("basic blocks, winograd", basic_chain);
    impl = layer_impl(basic_chain, "c1a", false, false);
    assert_non_null(strstr(impl, "wino_4x3"));
    free(impl);
    setenv("DLG_NN_CONV_ALGO", "direct", 1);
    impl = layer_impl(wino_net, "L", false, true);
    assert_null(strstr(impl, "wino"));
    free(impl);
    unsetenv("DLG_NN_CONV_ALGO");
}

static void test_nets(void **st)
{
    compare("alexnet-like", alex_mini, true);
    compare("alexnet-like inference", alex_mini, false);
    /* inference: its LRNs on conv outputs in nChw8c (AVX2) by cpu_lrn_avx2,
     * as checked just above; training keeps oneDNN's */
    if (!has_avx512() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        char *lrn = layer_impl(alex_mini, "n1", false, false);
        assert_string_equal(lrn, "cpu_lrn_avx2 (fp32 nChw8c)");
        free(lrn);
        lrn = layer_impl(alex_mini, "n1", false, true);
        assert_null(strstr(lrn, "cpu_lrn_avx2"));
        free(lrn);
    }
    compare("inception, reference concat", inception8, true);
    compare("inception, oneDNN concat", inception16, true);
    compare_fused("inception, ReLUs folded", inception16);
    /* its branch's max pool on the stem's nChw16c (AVX-512) or nChw8c
     * (AVX2) output by cpu_maxpool, gradients as the reference's above */
    const char *want = has_avx512()                    ? "cpu_maxpool (fp32 nChw16c)"
                       : __builtin_cpu_supports("avx2") ? "cpu_maxpool (fp32 nChw8c, avx2)"
                                                        : NULL;
    char *pool = layer_impl(inception16, "pool", false, true);
    if (want)
        assert_string_equal(pool, want);
    free(pool);
    compare("concat of inputs and conv", concat_inputs, true);
    compare("resnet-like", resnet_mini, true);
    compare("resnet-like inference", resnet_mini, false);
    check_infer_plan("1x1 bottleneck end, fused", bottleneck_mini);
    check_infer_plan("two blocks, residual in place", bottleneck_chain);
    for (int i = 0; i < 2; i++) { /* each block's convolution adds into its residual */
        char *impl = layer_impl(bottleneck_chain, i ? "cb" : "ca", false, false);
        assert_non_null(strstr(impl, "added in place"));
        free(impl);
    }
}

static void test_conv(void **st)
{
    compare("conv 3x3 pad 1", conv_plain, true);
    compare("conv 5x5 groups 4 stride 2", conv_group, true);
    compare("conv dilation 2 groups 2", conv_dil, true);
    compare("conv 11x11 stride 4", conv_big, true);
    compare("conv 1x1 stride 2 no bias", conv_nobias, true);
    compare("conv inference", conv_group, false);
}

static void test_pool(void **st)
{
    compare("max pool ceil", pool_max, true);
    compare("max pool pad", pool_max_pad, true);
    compare("avg pool ceil", pool_avg, true);
    compare("avg pool pad", pool_avg_pad, true);
    compare("avg pool (ref fallback)", pool_avg_fallback, true);
    compare("global avg pool", pool_global, true);
}

/* The layer "L" of build's net runs on oneDNN (not the ref fallback) and
 * has output size h. */
static void expect_onednn(build_fn build, int h)
{
    dlg_net *cpu = make(build, "cpu", true);
    dlg_shape s;
    assert_int_equal(dlg_net_shape(cpu, dlg_net_blob(cpu, "L"), &s), 0);
    assert_int_equal(s.d[2], h);
    assert_int_equal(s.d[3], h);
    dlg_net_destroy(cpu);
    char *impl = layer_impl(build, "L", false, true);
    assert_string_not_equal(impl, "ref");
    free(impl);
}

static void test_pool_floor(void **st)
{
    static const struct {
        const char *what;
        build_fn build;
        int out;
    } cases[] = {{"max pool floor", pool_max_floor, 3},
                 {"max pool floor pad", pool_max_floor_pad, 4},
                 {"max pool floor k5 s3 pad", pool_max_floor_neg, 3},
                 {"avg pool floor", pool_avg_floor, 3},
                 {"avg pool floor pad", pool_avg_floor_pad, 3},
                 {"avg pool floor k5 s3 pad", pool_avg_floor_neg, 3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_onednn(cases[i].build, cases[i].out);
        compare(cases[i].what, cases[i].build, true);
    }
    compare("avg pool floor inference", pool_avg_floor_neg, false);
}

static void test_others(void **st)
{
    compare("lrn", lrn, true);
    compare("relu", relu, true);
    compare("batchnorm train", bn, true);
    compare("batchnorm inference", bn, false);
    compare("fc", fc, true);
    compare("softmax", softmax, true);
    compare("small net with loss", loss_net, true);
    /* the inner products' weight gradients by cpu_fc_wgrad's outer
     * products (AVX-512), timed faster whatever this machine's speeds (its
     * hook; no record, which would keep a choice another test timed) */
    char *tune = tt_tune_off();
    setenv("DLG_NN_FC_WGRAD_TIMES", "2e-3,1e-3", 1);
    compare("fc, outer products", fc, true);
    compare("net with loss, outer products", loss_net, true);
    unsetenv("DLG_NN_FC_WGRAD_TIMES");
    tt_tune_restore(tune);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_conv), cmocka_unit_test(test_pool),
                                       cmocka_unit_test(test_pool_floor),
                                       cmocka_unit_test(test_others), cmocka_unit_test(test_nets),
                                       cmocka_unit_test(test_winograd),
                                       cmocka_unit_test(test_onednn_winograd)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
