/* cpu-bf16 (inference with bf16 activations and weights on oneDNN's
 * AVX-512 kernels) against the fp32 reference: the output of small nets
 * planned for inference (batch norm folded, residual added in place,
 * concat, LRN, groups, pooling, inner product) within 2e-2 relative error,
 * as the GPU's bf16 checks; the bf16 weight copies follow new weights and
 * a new batch-norm statistic; activations take half the memory; training
 * is refused.  Below AVX-512 (ctest runs it again at AVX2) the backend
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

typedef int (*build_fn)(dlg_net *net);

static bool has_avx512(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

/* An inference plan (nothing kept but inputs, params and outputs) of build
 * on backend, its input "x" filled; NULL with the error in err. */
static dlg_net *make(build_fn build, const char *backend, bool train, char *err, size_t errlen)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, backend), 0);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f}, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f});
    build(net);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .train = train, .seed = 9};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0) {
        snprintf(err, errlen, "%s", dlg_net_error(net));
        dlg_net_destroy(net);
        return NULL;
    }
    assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, "x"), FILL_DISTINCT, 21), 0);
    return net;
}

static dlg_net *make_ok(build_fn build, const char *backend)
{
    char err[512];
    dlg_net *net = make(build, backend, false, err, sizeof err);
    if (!net)
        fail_msg("%s: %s", backend, err);
    return net;
}

/* max |a - b| / max |b| over blob "L" after a forward of each */
static double out_err(dlg_net *a, dlg_net *b)
{
    if (dlg_net_forward(a) < 0)
        fail_msg("%s", dlg_net_error(a));
    assert_int_equal(dlg_net_forward(b), 0);
    int blob = dlg_net_blob(b, "L");
    int64_t n = tu_count(b, blob);
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(dlg_net_read(a, blob, DLG_DATA, x, (size_t)n), 0);
    assert_int_equal(dlg_net_read(b, blob, DLG_DATA, y, (size_t)n), 0);
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)x[i] - y[i]));
        m = fmax(m, fabs((double)y[i]));
    }
    free(x);
    free(y);
    return d / fmax(m, 1e-6);
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
    int x = dlg_relu(net, "r0", dlg_batchnorm(net, "bn0", dlg_conv_ex(net, "c0", X(2, 16, 14, 14), &s1), 1e-5f));
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

/* bf16 activations take half the bytes of fp32 ones */
static void test_memory(void **st)
{
    dlg_net *f32 = make_ok(inception_like, "cpu"), *bf = make_ok(inception_like, "cpu-bf16");
    uint64_t a = dlg_net_memory_bytes(f32), b = dlg_net_memory_bytes(bf);
    printf("  inception-like plan: fp32 %llu bytes, bf16 %llu bytes\n", (unsigned long long)a,
           (unsigned long long)b);
    assert_true(b < a);
    dlg_net_destroy(bf);
    dlg_net_destroy(f32);
}

static void test_train_refused(void **st)
{
    char err[512] = "";
    dlg_net *net = make(alex_like, "cpu-bf16", true, err, sizeof err);
    assert_null(net);
    printf("  training: %s\n", err);
    assert_non_null(strstr(err, "inference only"));
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
                                       cmocka_unit_test(test_memory), cmocka_unit_test(test_train_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
