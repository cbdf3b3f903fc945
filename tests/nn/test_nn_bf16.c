/* cpu-bf16 (bf16 activations and weights on oneDNN's AVX-512 kernels,
 * fp32 master weights) against the fp32 reference: the output of small
 * nets planned for inference (batch norm folded, residual added in place,
 * concat, LRN, groups, pooling, inner product) within 2e-2 relative error,
 * as the GPU's bf16 checks; in training, every parameter's and the
 * input's gradient within 2e-2 too, and an SGD step that moves the fp32
 * masters by less than bf16 could hold; the bf16 weight copies follow new
 * weights and a new batch-norm statistic; activations take half the
 * memory.  Below AVX-512 (ctest runs it again at AVX2) the backend must
 * refuse with a line that says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"
#include "tune_testutil.h"

#include "dnnl_isa.h"
#include "net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BF16_TOL 2e-2

typedef int (*build_fn)(dlg_net *net);

/* A plan of build on backend (inference: nothing kept but inputs, params
 * and outputs; training: every blob kept unless `fused`, the input's
 * gradient too), its input "x" filled; NULL with the error in err. */
static dlg_net *make_as(build_fn build, const char *backend, bool train, bool fused, char *err, size_t errlen)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, backend), 0);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f}, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f});
    build(net);
    /* keep_all also keeps the planner from fusing layers */
    dlg_plan_opts o = {.backend = backend, .threads = 2, .train = train, .seed = 9, .input_grads = train,
                       .keep_all = train && !fused};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0) {
        snprintf(err, errlen, "%s", dlg_net_error(net));
        dlg_net_destroy(net);
        return NULL;
    }
    assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, "x"), FILL_DISTINCT, 21), 0);
    return net;
}

static dlg_net *make(build_fn build, const char *backend, bool train, char *err, size_t errlen)
{
    return make_as(build, backend, train, false, err, errlen);
}

static dlg_net *make_mode(build_fn build, const char *backend, bool train)
{
    char err[512];
    dlg_net *net = make(build, backend, train, err, sizeof err);
    if (!net)
        fail_msg("%s: %s", backend, err);
    return net;
}

static dlg_net *make_ok(build_fn build, const char *backend)
{
    return make_mode(build, backend, false);
}

/* tu_blob_err, which must have read both */
static double blob_err(dlg_net *a, dlg_net *b, int blob, dlg_which w)
{
    double e = tu_blob_err(a, b, blob, w);
    assert_true(e >= 0);
    return e;
}

/* blob_err of blob "L" after a forward of each */
static double out_err(dlg_net *a, dlg_net *b)
{
    if (dlg_net_forward(a) < 0)
        fail_msg("%s", dlg_net_error(a));
    assert_int_equal(dlg_net_forward(b), 0);
    return blob_err(a, b, dlg_net_blob(b, "L"), DLG_DATA);
}

/* Writes the same fresh values into param p of layer name in both nets. */
static void rewrite(dlg_net *a, dlg_net *b, const char *name, int p, uint64_t seed, bool positive)
{
    assert_int_equal(tu_write_same(a, b, dlg_net_param(a, name, p), dlg_net_param(b, name, p), seed, positive), 0);
}

#define X(n, c, h, w) dlg_input(net, "x", n, c, h, w)

/* AlexNet-like: a large first filter, groups, LRN, ceil pooling, dropout,
 * inner products (the output before a softmax, which would saturate) */
static int alex_like(dlg_net *net)
{
    int x = dlg_relu(net, "r1", dlg_conv(net, "c1", X(2, 3, 35, 35), 32, 7, 2, 0, 1));
    x = dlg_max_pool(net, "p1", dlg_lrn(net, "n1", x, 5, 1e-3f, 0.75f, 1.0f), 3, 2, 0);
    x = dlg_relu(net, "r2", dlg_conv(net, "c2", x, 32, 5, 1, 2, 2));
    x = dlg_avg_pool(net, "p2", x, 3, 2, 0);
    x = dlg_dropout(net, "d6", dlg_relu(net, "r6", dlg_fc(net, "fc6", x, 64)), 0.5f);
    return dlg_fc(net, "L", x, 10);
}

/* GoogLeNet-like: four branches concatenated in blocked layouts */
static int inception_like(dlg_net *net)
{
    int x = dlg_relu(net, "stem", dlg_conv(net, "c0", X(2, 8, 9, 9), 32, 3, 1, 1, 1));
    int br[4];
    br[0] = dlg_relu(net, "b1r", dlg_conv(net, "b1", x, 16, 1, 1, 0, 1));
    br[1] = dlg_relu(net, "b3r", dlg_conv(net, "b3", x, 32, 3, 1, 1, 1));
    br[2] = dlg_relu(net, "b5r", dlg_conv(net, "b5", x, 16, 5, 1, 2, 1));
    br[3] = dlg_relu(net, "bpr", dlg_conv(net, "bp", dlg_max_pool(net, "pool", x, 3, 1, 1), 16, 1, 1, 0, 1));
    x = dlg_global_avg_pool(net, "gap", dlg_concat(net, "cat", 4, br));
    return dlg_fc(net, "L", x, 10);
}

/* ResNet-like bottlenecks: batch norms folded, each residual added in
 * place, a strided projection */
static int resnet_like(dlg_net *net)
{
    dlg_conv_spec s1 = {64, 1, 1, 1, 1, 0, 0, 1, 1, 1, true}, s2 = {16, 1, 1, 1, 1, 0, 0, 1, 1, 1, true},
                  s3 = {16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, sp = {64, 1, 1, 2, 2, 0, 0, 1, 1, 1, true};
    int x = dlg_relu(net, "r0", dlg_batchnorm(net, "bn0", dlg_conv_ex(net, "c0", X(2, 16, 15, 15), &s1), 1e-5f));
    int a = dlg_relu(net, "ra0", dlg_batchnorm(net, "bna0", dlg_conv_ex(net, "ca0", x, &s2), 1e-5f));
    a = dlg_relu(net, "ra1", dlg_batchnorm(net, "bna1", dlg_conv_ex(net, "ca1", a, &s3), 1e-5f));
    a = dlg_batchnorm(net, "bna", dlg_conv_ex(net, "ca", a, &s1), 1e-5f);
    x = dlg_relu(net, "ra", dlg_add(net, "adda", a, x));
    int p = dlg_batchnorm(net, "bnp", dlg_conv_ex(net, "cp", x, &sp), 1e-5f);
    sp.kh = sp.kw = 3;
    sp.ph = sp.pw = 1;
    int b = dlg_batchnorm(net, "bnb", dlg_conv_ex(net, "cb", x, &sp), 1e-5f);
    x = dlg_relu(net, "rb", dlg_add(net, "addb", b, p));
    return dlg_conv(net, "L", x, 8, 1, 1, 0, 1);
}

static void check(const char *what, build_fn build)
{
    dlg_net *ref = make_ok(build, "ref"), *bf = make_ok(build, "cpu-bf16");
    double e = out_err(bf, ref);
    printf("  %-24s bf16 inference: max relative error %.2e\n", what, e);
    assert_true(e < BF16_TOL);
    /* and not merely fp32 under another name: bf16 rounding shows */
    dlg_net *f32 = make_ok(build, "cpu");
    double e32 = out_err(f32, ref);
    printf("  %-24s fp32 inference: max relative error %.2e\n", what, e32);
    assert_true(e > 4 * e32);
    dlg_net_destroy(f32);
    dlg_net_destroy(bf);
    dlg_net_destroy(ref);
}

static void test_nets(void **st)
{
    check("alexnet-like", alex_like);
    check("inception-like", inception_like);
    check("resnet-like", resnet_like);
}

/* the bf16 copies of the weights follow the fp32 masters: new weights of
 * a plain convolution and an inner product, new batch-norm statistics of
 * a folded one */
static void test_weights_follow(void **st)
{
    dlg_net *ref = make_ok(resnet_like, "ref"), *bf = make_ok(resnet_like, "cpu-bf16");
    double e[4] = {out_err(bf, ref)};
    rewrite(bf, ref, "L", 0, 31, false);
    e[1] = out_err(bf, ref);
    rewrite(bf, ref, "bnb", 3, 32, true); /* running variance */
    e[2] = out_err(bf, ref);
    rewrite(bf, ref, "cb", 0, 33, false);
    e[3] = out_err(bf, ref);
    printf("  resnet-like: %.2e, new L weights %.2e, new bnb variance %.2e, new cb weights %.2e\n", e[0], e[1],
           e[2], e[3]);
    for (int i = 0; i < 4; i++)
        assert_true(e[i] < BF16_TOL);
    dlg_net_destroy(bf);
    dlg_net_destroy(ref);
    ref = make_ok(alex_like, "ref");
    bf = make_ok(alex_like, "cpu-bf16");
    rewrite(bf, ref, "fc6", 0, 34, false);
    double ef = out_err(bf, ref);
    printf("  alexnet-like: new fc6 weights %.2e\n", ef);
    assert_true(ef < BF16_TOL);
    dlg_net_destroy(bf);
    dlg_net_destroy(ref);
}

/* bf16 activations take half the bytes of fp32 ones: the arenas, not the
 * whole plan, whose largest workspace is the kernels' choice (oneDNN's
 * AMX bf16 convolutions take more scratchpad than its fp32 ones) */
static void test_memory(void **st)
{
    dlg_net *f32 = make_ok(inception_like, "cpu"), *bf = make_ok(inception_like, "cpu-bf16");
    uint64_t a = f32->arena_bytes[0] + f32->arena_bytes[1], b = bf->arena_bytes[0] + bf->arena_bytes[1];
    printf("  inception-like plan: activations fp32 %llu bytes, bf16 %llu bytes; whole plan fp32 %llu, bf16 %llu\n",
           (unsigned long long)a, (unsigned long long)b, (unsigned long long)dlg_net_memory_bytes(f32),
           (unsigned long long)dlg_net_memory_bytes(bf));
    assert_true(b > 0 && b * 10 <= a * 6);
    dlg_net_destroy(bf);
    dlg_net_destroy(f32);
}

/* Smooth nets for training: no ReLU, max pooling or dropout, whose
 * gradients jump where bf16's rounding moves an input across a kink, so
 * every gradient must stay within the tolerance.  AlexNet's layers:
 * groups, LRN, average pooling, inner products */
static int alex_smooth(dlg_net *net)
{
    int x = dlg_conv(net, "c1", X(2, 3, 35, 35), 32, 7, 2, 0, 1);
    x = dlg_avg_pool(net, "p1", dlg_lrn(net, "n1", x, 5, 1e-3f, 0.75f, 1.0f), 3, 2, 0);
    x = dlg_avg_pool(net, "p2", dlg_conv(net, "c2", x, 32, 5, 1, 2, 2), 3, 2, 0);
    return dlg_fc(net, "L", dlg_fc(net, "fc6", x, 64), 10);
}

/* GoogLeNet's biased 1x1 layers whose output channels oneDNN's AMX
 * kernels block by 48 (96 and 144 here): the bf16 copy of their weights
 * in that layout reorders slowly, so w^T for their input gradient comes
 * from the fp32 master; a 3x3 layer of 48 outputs */
static int pointwise48(dlg_net *net)
{
    int x = dlg_conv(net, "c96", X(2, 192, 7, 7), 96, 1, 1, 0, 1);
    x = dlg_conv(net, "c144", x, 144, 1, 1, 0, 1);
    x = dlg_conv(net, "c48", x, 48, 3, 1, 1, 1);
    return dlg_fc(net, "L", x, 10);
}

/* GoogLeNet's: branches of one input (a split) concatenated */
static int inception_smooth(dlg_net *net)
{
    int x = dlg_conv(net, "c0", X(2, 8, 9, 9), 32, 3, 1, 1, 1);
    int br[4] = {dlg_conv(net, "b1", x, 16, 1, 1, 0, 1), dlg_conv(net, "b3", x, 32, 3, 1, 1, 1),
                 dlg_conv(net, "b5", x, 16, 5, 1, 2, 1),
                 dlg_conv(net, "bp", dlg_avg_pool(net, "pool", x, 3, 1, 1), 16, 1, 1, 0, 1)};
    x = dlg_global_avg_pool(net, "gap", dlg_concat(net, "cat", 4, br));
    return dlg_fc(net, "L", x, 10);
}

/* ResNet's: batch norms with batch statistics, residual adds, 1x1 and
 * strided convolutions (over an odd size: stride 2 takes 8 of 15).  Each
 * batch norm reaches L through no other (a
 * later one would cancel its scale and shift: gradients of zero) */
static int resnet_smooth(dlg_net *net)
{
    dlg_conv_spec s1 = {64, 1, 1, 1, 1, 0, 0, 1, 1, 1, true}, s2 = {16, 1, 1, 1, 1, 0, 0, 1, 1, 1, true},
                  s3 = {16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, sp = {64, 1, 1, 2, 2, 0, 0, 1, 1, 1, true};
    int x = dlg_batchnorm(net, "bn0", dlg_conv_ex(net, "c0", X(2, 16, 15, 15), &s1), 1e-5f);
    int a = dlg_conv_ex(net, "ca1", dlg_conv_ex(net, "ca0", x, &s2), &s3);
    x = dlg_add(net, "adda", dlg_batchnorm(net, "bna", dlg_conv_ex(net, "ca", a, &s1), 1e-5f), x);
    int p = dlg_batchnorm(net, "bnp", dlg_conv_ex(net, "cp", x, &sp), 1e-5f);
    return dlg_conv(net, "L", dlg_add(net, "addb", dlg_conv_ex(net, "cb", x, &sp), p), 8, 1, 1, 0, 1);
}

/* Inception-v3's factorized layers: 1x3 padded along w only, then 3x1
 * padded along h and strided along h only (9 -> 5 rows, 9 columns) */
static int factorized(dlg_net *net)
{
    dlg_conv_spec s13 = {32, 1, 3, 1, 1, 0, 1, 1, 1, 1, true}, s31 = {32, 3, 1, 2, 1, 1, 0, 1, 1, 1, false};
    int x = dlg_conv(net, "c0", X(2, 8, 9, 9), 32, 3, 1, 1, 1);
    x = dlg_conv_ex(net, "f31", dlg_conv_ex(net, "f13", x, &s13), &s31);
    return dlg_fc(net, "L", dlg_global_avg_pool(net, "gap", x), 10);
}

/* The kinks: ReLU and max pooling (with its own batch of ties), whose
 * input is made exact in bf16 (gated_exact) so that both nets take the
 * same branches */
static int gated(dlg_net *net)
{
    int x = dlg_relu(net, "r1", dlg_conv(net, "c1", X(2, 3, 12, 12), 32, 1, 1, 0, 1));
    return dlg_conv(net, "L", dlg_max_pool(net, "p1", x, 3, 2, 0), 8, 3, 1, 1, 1);
}

/* Small integers into blob name.p (-1: the input) of every net */
static void write_ints(dlg_net **nets, int n, const char *name, int p, int span, uint64_t seed)
{
    int b = p < 0 ? dlg_net_blob(nets[0], name) : dlg_net_param(nets[0], name, p);
    int64_t count = tu_count(nets[0], b);
    float *v = malloc((size_t)count * sizeof(float));
    assert_non_null(v);
    for (int64_t i = 0; i < count; i++)
        v[i] = (float)((int)(dlg_splitmix_next(&seed) % (uint64_t)(2 * span + 1)) - span);
    for (int k = 0; k < n; k++)
        assert_int_equal(dlg_net_write(nets[k], b, DLG_DATA, v, (size_t)count), 0);
    free(v);
}

/* c1's output: sums of three products of integers in [-3, 3] and a bias,
 * exact in bf16 as in fp32 */
static void gated_exact(dlg_net **nets, int n)
{
    write_ints(nets, n, "x", -1, 3, 41);
    write_ints(nets, n, "c1", 0, 3, 42);
    write_ints(nets, n, "c1", 1, 3, 43);
}

/* Forward and backward of a training plan, the same gradient given at
 * "L" in each. */
static void fwd_bwd(dlg_net *net)
{
    int out = dlg_net_blob(net, "L");
    int64_t n = tu_count(net, out);
    float *g = malloc((size_t)n * sizeof(float));
    assert_non_null(g);
    tu_fill(g, n, FILL_GAUSS, 5);
    if (dlg_net_forward(net) < 0 || dlg_net_write(net, out, DLG_DIFF, g, (size_t)n) < 0 ||
        dlg_net_backward(net) < 0)
        fail_msg("%s", dlg_net_error(net));
    free(g);
}

/* The worst gradient error of net against ref: every trained parameter's
 * (weights and biases, batch-norm scale and shift) and the input's. */
static double grad_err(dlg_net *net, dlg_net *ref, const char *what, const char *as)
{
    double worst = blob_err(net, ref, dlg_net_blob(ref, "x"), DLG_DIFF);
    const char *at = "input x";
    for (int i = 0; i < dlg_net_layer_count(ref); i++) {
        dlg_layer_info li;
        assert_int_equal(dlg_net_layer_info(ref, i, &li), 0);
        for (int p = 0; p < 2 && dlg_net_param(ref, li.name, p) >= 0; p++) {
            double e = blob_err(net, ref, dlg_net_param(ref, li.name, p), DLG_DIFF);
            if (e > worst) {
                worst = e;
                at = li.name;
            }
        }
    }
    printf("  %-24s %s training: worst gradient error %.2e (%s)\n", what, as, worst, at);
    return worst;
}

typedef void (*prep_fn)(dlg_net **nets, int n);

/* The layers of net whose kernel contains `what`, each printed. */
static int layers_by(const dlg_net *net, const char *what)
{
    int n = 0;
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        const char *impl = dlg_net_layer_impl(net, i);
        dlg_layer_info li;
        if (impl && strstr(impl, what) && dlg_net_layer_info(net, i, &li) == 0) {
            printf("  %s: %s\n", li.name, impl);
            n++;
        }
    }
    return n;
}

/* Training: the gradients within the bf16 tolerance of the reference's,
 * and bf16 rounding visible (not fp32 under another name): nets ref,
 * cpu-bf16 and cpu (destroyed here).  Returns how many layers of the bf16
 * net ran each of the kernels in `kinds` (NULL or n of them) in `counts`. */
static void check_nets(const char *what, dlg_net **nets, prep_fn prep, const char *const *kinds, int *counts,
                       int n)
{
    if (prep)
        prep(nets, 3);
    for (int k = 0; k < 3; k++)
        fwd_bwd(nets[k]);
    double e = grad_err(nets[1], nets[0], what, "bf16"), e32 = grad_err(nets[2], nets[0], what, "fp32");
    assert_true(e < BF16_TOL);
    assert_true(e > 4 * e32);
    for (int k = 0; k < n; k++)
        counts[k] = layers_by(nets[1], kinds[k]);
    for (int k = 0; k < 3; k++)
        dlg_net_destroy(nets[k]);
}

static void check_train(const char *what, build_fn build, prep_fn prep, const char *const *kinds, int *counts,
                        int n)
{
    dlg_net *nets[3] = {make_mode(build, "ref", true), make_mode(build, "cpu-bf16", true),
                        make_mode(build, "cpu", true)};
    check_nets(what, nets, prep, kinds, counts, n);
}

/* check_train with the bf16 and fp32 nets planned as runs plan them:
 * layers fused, the blobs in between not kept */
static void check_train_fused(const char *what, build_fn build, prep_fn prep, const char *const *kinds, int *counts,
                              int n)
{
    char err[512] = "";
    dlg_net *nets[3] = {make_mode(build, "ref", true), make_as(build, "cpu-bf16", true, true, err, sizeof err),
                        make_as(build, "cpu", true, true, err, sizeof err)};
    if (!nets[1] || !nets[2])
        fail_msg("%s", err);
    check_nets(what, nets, prep, kinds, counts, n);
}

/* The weight-gradient kernels' timings injected (cpu_wgrad_pick.h's hook)
 * with no tuning record: the record's setting, to give back to
 * unforce_wgrad_times. */
static char *force_wgrad_times(const char *times)
{
    setenv("DLG_NN_WGRAD_TIMES", times, 1);
    return tt_tune_off();
}

static void unforce_wgrad_times(char *tune)
{
    unsetenv("DLG_NN_WGRAD_TIMES");
    tt_tune_restore(tune);
}

static void test_train(void **st)
{
    /* n1 by cpu_lrn_bf16 on the NHWC tensor c1's AMX kernel writes; c1's
     * weight gradient (3 input channels, from the fp32 input) by
     * cpu_wgrad_amx, timed faster here whatever this machine's speeds */
    const char *alex_kinds[3] = {"cpu_lrn_bf16", "cpu_wgrad_amx", "cpu_fc_wgrad"};
    int alex_counts[3];
    char *tune = force_wgrad_times("2e-3,1e-3");
    setenv("DLG_NN_FC_WGRAD_TIMES", "2e-3,1e-3", 1); /* fc6's and L's by outer products */
    check_train("alexnet-smooth", alex_smooth, NULL, alex_kinds, alex_counts, 3);
    unsetenv("DLG_NN_FC_WGRAD_TIMES");
    unforce_wgrad_times(tune);
    assert_int_equal(alex_counts[2], 2);
    if (has_amx()) {
        assert_int_equal(alex_counts[0], 1);
        assert_int_equal(alex_counts[1], 1);
    }
    /* the weight gradients by an im2col and a matmul, timed fastest: b3
     * and b5 (biased, the bias's from dy's sums; b5's 16 outputs are too
     * few for cpu_wgrad_amx); c0 reads the fp32 input, which the im2col
     * does not take: cpu_wgrad_amx; ca1 (no bias) */
    const char *wg_kinds[2] = {"im2col + matmul", "cpu_wgrad_amx"};
    int wg_counts[2];
    tune = force_wgrad_times("3e-3,2e-3,1e-3");
    check_train("inception-smooth, im2col", inception_smooth, NULL, wg_kinds, wg_counts, 2);
    if (has_amx()) {
        assert_int_equal(wg_counts[0], 2);
        assert_int_equal(wg_counts[1], 1);
    }
    check_train("resnet-smooth, im2col", resnet_smooth, NULL, wg_kinds, wg_counts, 1);
    if (has_amx())
        assert_int_equal(wg_counts[0], 1);
    /* its 1x1 layers' matmuls batched over the images and summed, timed
     * faster (cp and cb on their subsampled copies) */
    const char *batched[1] = {"per image, summed"};
    setenv("DLG_NN_WGRAD1X1_TIMES", "2e-3,1e-3", 1);
    check_train("resnet-smooth, batched 1x1", resnet_smooth, NULL, batched, wg_counts, 1);
    unsetenv("DLG_NN_WGRAD1X1_TIMES");
    if (has_amx())
        assert_int_equal(wg_counts[0], 4);
    /* f13 and f31, whose strides and paddings differ between the axes
     * (cpu_wgrad_amx takes neither) */
    check_train("factorized, im2col", factorized, NULL, wg_kinds, wg_counts, 2);
    unforce_wgrad_times(tune);
    if (has_amx()) {
        assert_int_equal(wg_counts[0], 2);
        assert_int_equal(wg_counts[1], 1);
    }
    check_train("inception-smooth", inception_smooth, NULL, NULL, NULL, 0);
    /* its bias-free 1x1 layers (ca0 and ca; cp and cb, stride 2, on a
     * subsampled copy) take their weight gradient by matmul where their
     * tensors are NHWC, as oneDNN's AMX kernels choose; their input
     * gradient by a transposed forward there too, cp's and cb's scattered
     * over every other pixel of 15 x 15; its three batch norms train by
     * cpu_bn_bf16 on those NHWC tensors */
    const char *kinds[6] = {"weight gradient by matmul", "backward data by a transposed forward", "cpu_bn_bf16",
                            "scattered to the strided input", "sums the split's gradients in one pass",
                            "residual add folded in"};
    int counts[6];
    check_train("resnet-smooth", resnet_smooth, NULL, kinds, counts, 4);
    if (has_amx()) {
        assert_int_equal(counts[0], 4);
        assert_int_equal(counts[1], 4);
        assert_int_equal(counts[2], 3);
        assert_int_equal(counts[3], 2);
    }
    /* planned for a run: bna takes over adda (its other operand bn0's
     * output comes first) and the split of its output (read by cp and
     * cb): it adds bn0's output before writing its own, and its backward
     * sums their bf16 gradients in the pass that masks them, into bn0's
     * output's gradient; bnp's add (addb) comes after cb, and stays */
    check_train_fused("resnet-smooth, fused", resnet_smooth, NULL, kinds, counts, 6);
    if (has_amx()) {
        assert_int_equal(counts[0], 4);
        assert_int_equal(counts[1], 4);
        assert_int_equal(counts[2], 3);
        assert_int_equal(counts[3], 2);
    }
    assert_int_equal(counts[4], 0);
    assert_int_equal(counts[5], 1);
    /* p1 (ties included) by cpu_maxpool on the NHWC tensor the AMX
     * convolution writes: the gradient each maximum gets, as the reference's */
    const char *pool_kind[1] = {"cpu_maxpool"};
    check_train("relu, max pool", gated, gated_exact, pool_kind, counts, 1);
    if (has_amx())
        assert_int_equal(counts[0], 1);
    /* as a run plans it: r1 folded into c1, whose backward masks dy */
    check_train_fused("relu folded, max pool", gated, gated_exact, pool_kind, counts, 1);
    if (has_amx())
        assert_int_equal(counts[0], 1);
    /* and c144's weight gradient by matmul, its bias's summed from dy
     * (c96 reads the net's input, which stays NCHW: no matmul) */
    const char *master_kind[2] = {"fp32 master", "bias gradient by sums of dy"};
    check_train("pointwise 192-96-144", pointwise48, NULL, master_kind, counts, 2);
    if (has_amx()) {
        assert_int_equal(counts[0], 2);
        assert_int_equal(counts[1], 1);
    }
}

/* SGD updates the fp32 master weights: a step of lr 1e-5 moves a weight
 * by far less than bf16's resolution there (2^-9 of it at 0.3, ~6e-4),
 * so bf16 masters would lose it; the step must land within a tenth of
 * the update of where the reference's lands. */
static void test_sgd_master(void **st)
{
    dlg_net *ref = make_mode(resnet_smooth, "ref", true), *bf = make_mode(resnet_smooth, "cpu-bf16", true);
    const char *names[3] = {"c0", "cb", "L"};
    float *before[3];
    for (int k = 0; k < 3; k++)
        assert_non_null(before[k] = tu_read_copy(ref, dlg_net_param(ref, names[k], 0)));
    dlg_sgd sgd = {1e-5f, 0.9f, 0};
    fwd_bwd(ref);
    fwd_bwd(bf);
    assert_int_equal(dlg_net_sgd_step(ref, &sgd), 0);
    assert_int_equal(dlg_net_sgd_step(bf, &sgd), 0);
    for (int k = 0; k < 3; k++) {
        double step, off;
        assert_int_equal(tu_step_off(ref, bf, dlg_net_param(ref, names[k], 0), before[k], &step, &off), 0);
        printf("  %s: largest step %.2e, bf16 master off by %.2e\n", names[k], step, off);
        assert_true(step > 0);
        assert_true(off < 0.1 * step);
        free(before[k]);
    }
    dlg_net_destroy(bf);
    dlg_net_destroy(ref);
}

/* below AVX-512 the backend refuses, saying why */
static void test_refused_without_avx512(void **st)
{
    char err[512] = "";
    dlg_net *net = make(alex_like, "cpu-bf16", false, err, sizeof err);
    assert_null(net);
    printf("  %s\n", err);
    assert_non_null(strstr(err, "needs AVX-512"));
}

int main(void)
{
    if (!has_avx512()) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_refused_without_avx512)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_nets), cmocka_unit_test(test_weights_follow),
                                       cmocka_unit_test(test_memory), cmocka_unit_test(test_train),
                                       cmocka_unit_test(test_sgd_master)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
