/* Lifetime-based memory sharing (inference activations; training
 * gradients and the activations no backward reads) and batch-norm + ReLU
 * fusion: a net planned with both computes the same loss, outputs and
 * gradients as the same net planned with keep_all (no sharing, no fusion),
 * in less memory, on the reference and the cpu backend; blobs whose memory
 * was reused or never stored are unreadable (an error, not stale numbers)
 * unless marked with dlg_net_keep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <dlgauge/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A new net: Xavier weights, biases 0.1. */
static dlg_net *created(const char *name)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, name), 0);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0},
                        (dlg_filler){DLG_FILL_CONSTANT, 0.1f});
    return net;
}

/* Plans net (failing the test with the net's error) and writes the labels
 * of its 4-image blob "y". */
static dlg_net *planned(dlg_net *net, const dlg_plan_opts *o, const float labels[4])
{
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, o) < 0)
        fail_msg("%s", dlg_net_error(net));
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "y"), DLG_DATA, labels, 4), 0);
    return net;
}

/* Branches (split), concat, eltwise add, pooling and a loss. */
static void build(dlg_net *net)
{
    int x = dlg_input(net, "x", 4, 3, 16, 16);
    int y = dlg_labels(net, "y", 4);
    int a = dlg_relu(net, "a/relu", dlg_conv(net, "a", x, 8, 3, 1, 1, 1));
    int b1 = dlg_conv(net, "b1", a, 8, 1, 1, 0, 1);
    int b2 = dlg_relu(net, "b2/relu", dlg_conv(net, "b2", a, 8, 3, 1, 1, 1));
    int cat = dlg_concat(net, "cat", 2, (int[]){b1, b2});
    int c = dlg_conv(net, "c", cat, 8, 3, 1, 1, 1);
    c = dlg_relu(net, "c/relu", dlg_batchnorm(net, "c/bn", c, 1e-5f));
    int s = dlg_add(net, "sum", c, a);
    int p = dlg_max_pool(net, "pool", s, 2, 2, 0);
    int f = dlg_fc(net, "fc", p, 10);
    dlg_softmax_loss(net, "loss", f, y);
}

static dlg_net *make(const char *backend, bool train, bool keep_all, bool keep_fc)
{
    dlg_net *net = created("share");
    build(net);
    if (keep_fc)
        assert_int_equal(dlg_net_keep(net, dlg_net_blob(net, "fc")), 0);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .train = train, .seed = 11,
                       .input_grads = train, .keep_all = keep_all};
    return planned(net, &o, (const float[4]){1, 7, 3, 9});
}

static void set_input(dlg_net *net, uint64_t seed)
{
    assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, "x"), FILL_GAUSS, seed), 0);
}

/* Max relative difference of a blob between two nets (both must read). */
static double diff(dlg_net *a, dlg_net *b, int blob, dlg_which w)
{
    double d = tu_blob_err(a, b, blob, w);
    assert_true(d >= 0);
    return d;
}

/* Two forwards of both nets on the same new inputs: the same loss, and
 * output "fc" (kept in sh) within fc_tol. */
static void forwards_agree(dlg_net *all, dlg_net *sh, uint64_t seed, double fc_tol)
{
    for (uint64_t step = 0; step < 2; step++) {
        set_input(all, seed + step);
        set_input(sh, seed + step);
        assert_int_equal(dlg_net_forward(all), 0);
        assert_int_equal(dlg_net_forward(sh), 0);
        assert_true(diff(all, sh, dlg_net_blob(all, "loss"), DLG_DATA) < 1e-6);
        assert_true(diff(all, sh, dlg_net_blob(all, "fc"), DLG_DATA) < fc_tol);
    }
}

/* Batch norm "c/bn" away from identity (gamma, beta, running mean,
 * running variance > 0), so that folding it into conv "c" is tested. */
static void set_bn(dlg_net *net)
{
    float v[4][8];
    for (int c = 0; c < 8; c++) {
        v[0][c] = 0.5f + 0.25f * (float)c;       /* gamma */
        v[1][c] = 0.3f - 0.1f * (float)c;        /* beta */
        v[2][c] = 0.2f * (float)(c % 3) - 0.2f;  /* mean */
        v[3][c] = 0.5f + 0.4f * (float)(c % 4);  /* variance */
    }
    for (int k = 0; k < 4; k++)
        assert_int_equal(dlg_net_write(net, dlg_net_param(net, "c/bn", k), DLG_DATA, v[k], 8), 0);
}

static void inference(const char *backend)
{
    dlg_net *all = make(backend, false, true, false), *sh = make(backend, false, false, true);
    set_bn(all);
    set_bn(sh);
    assert_true(dlg_net_memory_bytes(sh) > 0);
    assert_true(dlg_net_memory_bytes(sh) < dlg_net_memory_bytes(all));
    forwards_agree(all, sh, 100, 1e-6);
    float v[4 * 8 * 16 * 16];
    assert_int_equal(dlg_net_read(all, dlg_net_blob(all, "a/relu"), DLG_DATA, v, 8192), 0);
    assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "a/relu"), DLG_DATA, v, 8192),
                     -DLG_EINVAL);
    assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "c/bn"), DLG_DATA, v, 8192), -DLG_EINVAL);
    /* inference: the batch norm (with its ReLU) runs in conv c's epilogue,
     * so c's own output is never stored */
    assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "c"), DLG_DATA, v, 8192), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(sh), "folded"));
    assert_int_equal(dlg_net_status(sh), 0); /* not sticky */
    assert_int_equal(dlg_net_keep(sh, 0), -DLG_EINVAL); /* after planning */
    dlg_net_destroy(all);
    dlg_net_destroy(sh);
}

/* Two ResNet blocks (a projection built after its branch, as ResNet-50
 * builds it, then an identity), for folding batch norm + add + ReLU into
 * convolutions: every batch norm gets non-identity params. */
static dlg_net *make_blocks(const char *backend, bool keep_all, bool train)
{
    dlg_net *net = created("blocks");
    int x = dlg_input(net, "x", 4, 8, 8, 8), y = dlg_labels(net, "y", 4);
    dlg_conv_spec k3 = {8, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, k1 = {16, 1, 1, 1, 1, 0, 0, 1, 1, 1, true};
    int a = dlg_relu(net, "a/relu", dlg_batchnorm(net, "a/bn", dlg_conv_ex(net, "a", x, &k3), 1e-5f));
    int c = dlg_batchnorm(net, "c/bn", dlg_conv_ex(net, "c", a, &k1), 1e-5f);
    int p = dlg_batchnorm(net, "p/bn", dlg_conv_ex(net, "p", x, &k1), 1e-5f);
    int out = dlg_relu(net, "out", dlg_add(net, "sum", c, p));
    k3.out_c = 16;
    int d = dlg_batchnorm(net, "d/bn", dlg_conv_ex(net, "d", out, &k3), 1e-5f);
    int out2 = dlg_relu(net, "out2", dlg_add(net, "sum2", d, out));
    int f = dlg_fc(net, "fc", dlg_max_pool(net, "pool", out2, 2, 2, 0), 10);
    dlg_softmax_loss(net, "loss", f, y);
    if (!keep_all)
        assert_int_equal(dlg_net_keep(net, f), 0);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .seed = 13, .keep_all = keep_all,
                       .train = train, .input_grads = train};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    const char *bns[] = {"a/bn", "c/bn", "p/bn", "d/bn"};
    for (int b = 0; b < 4; b++) {
        int64_t n = b == 0 ? 8 : 16;
        float v[4][16];
        for (int64_t i = 0; i < n; i++) {
            v[0][i] = 0.5f + 0.1f * (float)((i + b) % 5);
            v[1][i] = 0.2f - 0.05f * (float)((i * 3 + b) % 7);
            v[2][i] = 0.1f * (float)((i + 2 * b) % 4) - 0.15f;
            v[3][i] = 0.4f + 0.3f * (float)((i + b) % 3);
        }
        for (int k = 0; k < 4; k++)
            assert_int_equal(
                dlg_net_write(net, dlg_net_param(net, bns[b], k), DLG_DATA, v[k], (size_t)n), 0);
    }
    float lab[4] = {2, 5, 0, 9};
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "y"), DLG_DATA, lab, 4), 0);
    return net;
}

static void test_inference_folds_residual_blocks(void **st)
{
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *all = make_blocks(tu_backends[b], true, false);
        dlg_net *sh = make_blocks(tu_backends[b], false, false);
        forwards_agree(all, sh, 300, 1e-5);
        /* params written after a forward reach the folded weights */
        float gamma[16], w[16 * 16 * 3 * 3];
        for (int i = 0; i < 16; i++)
            gamma[i] = 1.5f - 0.1f * (float)i;
        for (int i = 0; i < 16 * 16 * 9; i++)
            w[i] = 0.01f * (float)((i * 7) % 13) - 0.06f;
        dlg_net *nets[2] = {all, sh};
        for (int k = 0; k < 2; k++) {
            assert_int_equal(
                dlg_net_write(nets[k], dlg_net_param(nets[k], "d/bn", 0), DLG_DATA, gamma, 16), 0);
            assert_int_equal(
                dlg_net_write(nets[k], dlg_net_param(nets[k], "d", 0), DLG_DATA, w, 16 * 16 * 9), 0);
            assert_int_equal(dlg_net_forward(nets[k]), 0);
        }
        assert_true(diff(all, sh, dlg_net_blob(all, "loss"), DLG_DATA) < 1e-6);
        assert_true(diff(all, sh, dlg_net_blob(all, "fc"), DLG_DATA) < 1e-5);
        /* conv p took c/bn's output as its residual, conv d took "out":
         * both adds' outputs are never stored */
        float v[4 * 16 * 8 * 8];
        const char *gone[] = {"sum", "sum2", "p/bn", "d/bn"};
        for (int g = 0; g < 4; g++) {
            assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, gone[g]), DLG_DATA, v, 4096),
                             -DLG_EINVAL);
            assert_non_null(strstr(dlg_net_error(sh), "folded"));
        }
        dlg_net_destroy(all);
        dlg_net_destroy(sh);
    }
}

/* In training each add takes over the ReLU after it (forward max(0, a+b),
 * backward dy masked by the output into both inputs), or, where the batch
 * norm kernels fold a residual (ref's), the batch norm before it takes
 * over both (p/bn the add "sum", whose other operand c/bn comes first;
 * d/bn "sum2"): the same loss and gradients as the unfused net, over SGD
 * steps. */
static void test_training_folds_add_relu(void **st)
{
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *all = make_blocks(tu_backends[b], true, true);
        dlg_net *sh = make_blocks(tu_backends[b], false, true);
        dlg_net *nets[2] = {all, sh};
        dlg_sgd sgd = {0.05f, 0.9f, 1e-4f};
        const char *layers[] = {"a", "c", "p", "d", "fc"};
        for (uint64_t step = 0; step < 3; step++) {
            for (int k = 0; k < 2; k++) {
                set_input(nets[k], 400 + step);
                assert_int_equal(dlg_net_forward(nets[k]), 0);
                assert_int_equal(dlg_net_backward(nets[k]), 0);
            }
            assert_true(diff(all, sh, dlg_net_blob(all, "loss"), DLG_DATA) < 1e-5);
            assert_true(diff(all, sh, dlg_net_blob(all, "x"), DLG_DIFF) < 1e-5);
            for (int l = 0; l < 5; l++)
                assert_true(diff(all, sh, dlg_net_param(all, layers[l], 0), DLG_DIFF) < 1e-5);
            /* the ReLUs' outputs are the adds' now; the sums are not stored */
            assert_true(diff(all, sh, dlg_net_blob(all, "out2"), DLG_DATA) < 1e-5);
            float v[4 * 16 * 8 * 8];
            assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "sum2"), DLG_DATA, v, 4096),
                             -DLG_EINVAL);
            assert_non_null(strstr(dlg_net_error(sh), "folded"));
            /* "out" feeds d and sum2 through a split whose backward the
             * add "sum" (or p/bn, that took it over) took over: out's
             * gradient is never stored */
            assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "out"), DLG_DIFF, v, 4096),
                             -DLG_EINVAL);
            bool ref = strcmp(tu_backends[b], "ref") == 0;
            assert_non_null(strstr(dlg_net_error(sh), ref ? "summed inside layer 'p/bn'" : "summed inside layer 'sum'"));
            for (int k = 0; k < 2; k++)
                assert_int_equal(dlg_net_sgd_step(nets[k], &sgd), 0);
        }
        dlg_net_destroy(all);
        dlg_net_destroy(sh);
    }
}

/* The kernel that runs layer `name`. */
static const char *impl_of(const dlg_net *net, const char *name)
{
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        assert_int_equal(dlg_net_layer_info(net, i, &li), 0);
        if (!strcmp(li.name, name))
            return dlg_net_layer_impl(net, i);
    }
    return NULL;
}

/* An add of a convolution's output and the net's input (the cpu backend
 * keeps the one blocked, the other plain) whose output a split feeds to
 * two layers: the add still takes over the split's backward, summing
 * through oneDNN into the input's layout rather than in one pass. */
static dlg_net *make_mixed(const char *backend, bool keep_all)
{
    dlg_net *net = created("mixed");
    int x = dlg_input(net, "x", 4, 8, 8, 8), y = dlg_labels(net, "y", 4);
    int a = dlg_conv(net, "a", x, 8, 3, 1, 1, 1);
    int s = dlg_relu(net, "s", dlg_add(net, "sum", a, x));
    int d = dlg_conv(net, "d", s, 8, 1, 1, 0, 1);
    int s2 = dlg_relu(net, "s2", dlg_add(net, "sum2", d, s));
    int f = dlg_fc(net, "fc", dlg_max_pool(net, "pool", s2, 2, 2, 0), 10);
    dlg_softmax_loss(net, "loss", f, y);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .seed = 19, .keep_all = keep_all,
                       .train = true, .input_grads = true};
    return planned(net, &o, (const float[4]){2, 5, 9, 1});
}

static void test_training_folds_split_into_add(void **st)
{
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *all = make_mixed(tu_backends[b], true), *sh = make_mixed(tu_backends[b], false);
        dlg_net *nets[2] = {all, sh};
        for (uint64_t step = 0; step < 2; step++) {
            for (int k = 0; k < 2; k++) {
                set_input(nets[k], 600 + step);
                assert_int_equal(dlg_net_forward(nets[k]), 0);
                assert_int_equal(dlg_net_backward(nets[k]), 0);
            }
            assert_true(diff(all, sh, dlg_net_blob(all, "x"), DLG_DIFF) < 1e-5);
            const char *layers[] = {"a", "d", "fc"};
            for (int l = 0; l < 3; l++)
                for (int p = 0; p < 2; p++)
                    assert_true(diff(all, sh, dlg_net_param(all, layers[l], p), DLG_DIFF) < 1e-5);
        }
        if (!strcmp(tu_backends[b], "cpu")) {
            printf("  cpu add 'sum': %s\n", impl_of(sh, "sum"));
            assert_non_null(strstr(impl_of(sh, "sum"), "by oneDNN"));
            dlg_net *blocks = make_blocks("cpu", false, true);
            printf("  cpu add 'sum' of the blocks net: %s\n", impl_of(blocks, "sum"));
            assert_non_null(strstr(impl_of(blocks, "sum"), "one pass"));
            dlg_net_destroy(blocks);
        }
        dlg_net_destroy(all);
        dlg_net_destroy(sh);
    }
}

/* A fused add+ReLU whose output only plain adds read later: nothing but
 * the fused add's own backward needs that output, so the planner must keep
 * it (cpu: bwd_reads_top) or a later blob overwrites it and the gradients
 * go wrong. */
static dlg_net *make_tail(const char *backend, bool keep_all)
{
    dlg_net *net = created("tail");
    int x = dlg_input(net, "x", 4, 8, 8, 8), y = dlg_labels(net, "y", 4);
    int a = dlg_conv(net, "a", x, 8, 3, 1, 1, 1);
    int r = dlg_relu(net, "r", dlg_add(net, "sum", a, x));
    int b = dlg_conv(net, "b", x, 8, 1, 1, 0, 1);
    /* no backward reads t or t2 (adds read no data): t2 may take the
     * memory of any blob no backward needs once t's add has read it */
    int t = dlg_add(net, "tail", r, b);
    int t2 = dlg_add(net, "tail2", t, b);
    int t3 = dlg_add(net, "tail3", t2, b);
    int f = dlg_fc(net, "fc", dlg_max_pool(net, "pool", t3, 2, 2, 0), 10);
    dlg_softmax_loss(net, "loss", f, y);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .seed = 17, .keep_all = keep_all,
                       .train = true, .input_grads = true};
    return planned(net, &o, (const float[4]){1, 7, 3, 0});
}

static void test_training_keeps_fused_add_output(void **st)
{
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *all = make_tail(tu_backends[b], true), *sh = make_tail(tu_backends[b], false);
        set_input(all, 500);
        set_input(sh, 500);
        dlg_net *nets[2] = {all, sh};
        for (int k = 0; k < 2; k++) {
            assert_int_equal(dlg_net_forward(nets[k]), 0);
            assert_int_equal(dlg_net_backward(nets[k]), 0);
        }
        assert_true(diff(all, sh, dlg_net_blob(all, "x"), DLG_DIFF) < 1e-5);
        assert_true(diff(all, sh, dlg_net_param(all, "a", 0), DLG_DIFF) < 1e-5);
        dlg_net_destroy(all);
        dlg_net_destroy(sh);
    }
}

static void test_inference_shares_activations(void **st)
{
    for (int b = 0; b < tu_nbackends; b++)
        inference(tu_backends[b]);
}

static void training(const char *backend)
{
    dlg_net *all = make(backend, true, true, false), *sh = make(backend, true, false, false);
    assert_true(dlg_net_memory_bytes(sh) < dlg_net_memory_bytes(all));
    dlg_sgd sgd = {0.05f, 0.9f, 1e-4f};
    const char *layers[] = {"a", "b1", "b2", "c", "c/bn", "fc"};
    for (uint64_t step = 0; step < 3; step++) {
        set_input(all, 200 + step);
        set_input(sh, 200 + step);
        dlg_net *nets[2] = {all, sh};
        for (int k = 0; k < 2; k++) {
            assert_int_equal(dlg_net_forward(nets[k]), 0);
            assert_int_equal(dlg_net_backward(nets[k]), 0);
        }
        assert_true(diff(all, sh, dlg_net_blob(all, "loss"), DLG_DATA) < 1e-5);
        assert_true(diff(all, sh, dlg_net_blob(all, "x"), DLG_DIFF) < 1e-5);
        for (int l = 0; l < 6; l++)
            for (int p = 0; p < 2; p++)
                assert_true(diff(all, sh, dlg_net_param(all, layers[l], p), DLG_DIFF) < 1e-5);
        /* activations stay readable (backward needs them), gradients not */
        assert_true(diff(all, sh, dlg_net_blob(all, "sum"), DLG_DATA) < 1e-5);
        bool cpu = strcmp(backend, "cpu") == 0;
        float g[4 * 8 * 16 * 16];
        /* the cpu batch norm's backward reads its input and a fused ReLU's
         * mask, not its output, and the add after it reads no data: reused */
        if (cpu)
            assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "c/relu"), DLG_DATA, g, 8192),
                             -DLG_EINVAL);
        else
            assert_true(diff(all, sh, dlg_net_blob(all, "c/relu"), DLG_DATA) < 1e-5);
        assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "sum"), DLG_DIFF, g, 8192),
                         -DLG_EINVAL);
        /* conv "a" took over its ReLU (fuses_relu, training too): its own
         * output is never stored, on either backend */
        assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "a"), DLG_DATA, g, 8192), -DLG_EINVAL);
        for (int k = 0; k < 2; k++)
            assert_int_equal(dlg_net_sgd_step(nets[k], &sgd), 0);
    }
    float bn_out[4 * 8 * 16 * 16];
    assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "c/bn"), DLG_DATA, bn_out, 8192),
                     -DLG_EINVAL); /* folded into the ReLU */
    dlg_net_destroy(all);
    dlg_net_destroy(sh);
}

static void test_training_shares_gradients(void **st)
{
    for (int b = 0; b < tu_nbackends; b++)
        training(tu_backends[b]);
}

/* Resident set size in bytes, from /proc/self/statm. */
static uint64_t rss_bytes(void)
{
    unsigned long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu %lu", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Planning maps activations and gradients without touching them, so a
 * workload can compare dlg_net_memory_bytes with the memory it may use
 * before any page is resident.  Only the parameters (initialised from the
 * seed) and small blocks are touched. */
static void test_plan_touches_no_activations(void **st)
{
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* every block comes from malloc there, zeroed by hand */
#endif
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "big"), 0);
    int x = dlg_input(net, "x", 32, 3, 64, 64), y = dlg_labels(net, "y", 32);
    x = dlg_relu(net, "r1", dlg_conv(net, "c1", x, 64, 3, 1, 1, 1));
    x = dlg_relu(net, "r2", dlg_conv(net, "c2", x, 64, 3, 1, 1, 1));
    x = dlg_global_avg_pool(net, "gap", x);
    dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", x, 10), y);
    dlg_plan_opts o = {.backend = "ref", .train = true, .seed = 3};
    uint64_t before = rss_bytes();
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    uint64_t grew = rss_bytes() - before, planned = dlg_net_memory_bytes(net);
    printf("  planned %.1f MB, resident growth %.1f MB\n", planned / 1e6, grew / 1e6);
    assert_true(planned > 100 * 1000 * 1000); /* 32x64x64x64 floats are 33.5 MB a blob */
    assert_true(grew < planned / 10);
    /* and the untouched memory reads as zeros, like calloc's */
    size_t n = 32 * 3 * 64 * 64;
    float *g = malloc(n * sizeof *g);
    assert_non_null(g);
    assert_int_equal(dlg_net_read(net, dlg_net_blob(net, "x"), DLG_DATA, g, n), 0);
    for (size_t i = 0; i < n; i++)
        assert_true(g[i] == 0.0f);
    free(g);
    dlg_net_destroy(net);
}

/* Dropouts after a conv + ReLU (folded into the conv in inference), after
 * a plain FC + ReLU, and one whose input a second layer also reads. */
static dlg_net *make_dropouts(const char *backend, bool keep_all)
{
    dlg_net *net = created("dropouts");
    int x = dlg_input(net, "x", 4, 3, 16, 16), y = dlg_labels(net, "y", 4);
    int a = dlg_relu(net, "a/relu", dlg_conv(net, "a", x, 8, 3, 1, 1, 1));
    a = dlg_dropout(net, "a/drop", a, 0.5f);
    int p = dlg_max_pool(net, "pool", a, 2, 2, 0);
    int f = dlg_relu(net, "f/relu", dlg_fc(net, "f", p, 32));
    int d = dlg_dropout(net, "f/drop", f, 0.5f);
    int both = dlg_add(net, "both", d, f); /* f/relu has two readers */
    dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", both, 10), y);
    assert_int_equal(dlg_net_keep(net, dlg_net_blob(net, "fc")), 0);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .seed = 5, .keep_all = keep_all};
    return planned(net, &o, (const float[4]){3, 1, 4, 1});
}

/* In inference a dropout is the identity: the layer before it writes its
 * output (the dropout runs nothing, the blob in between is never stored)
 * when the dropout alone reads that blob; the same outputs as keep_all. */
static void test_inference_folds_dropouts(void **st)
{
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *all = make_dropouts(tu_backends[b], true), *sh = make_dropouts(tu_backends[b], false);
        forwards_agree(all, sh, 500, 1e-6);
        assert_string_equal(impl_of(sh, "a/drop"), "fused");
        assert_string_not_equal(impl_of(sh, "f/drop"), "fused");
        assert_string_not_equal(impl_of(all, "a/drop"), "fused");
        float v[4 * 8 * 16 * 16];
        assert_int_equal(dlg_net_read(sh, dlg_net_blob(sh, "a/relu"), DLG_DATA, v, 8192),
                         -DLG_EINVAL);
        assert_non_null(strstr(dlg_net_error(sh), "folded"));
        dlg_net_destroy(all);
        dlg_net_destroy(sh);
    }
}

/* The language model's dropouts: after the embedding and after an LSTM,
 * whose first output (y) the dropout takes; its final states stay. */
static dlg_net *make_lm(const char *backend, bool keep_all)
{
    enum { T = 5, B = 3, V = 17, H = 8 };
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "lm-dropouts"), 0);
    int ids = dlg_labels(net, "ids", T * B), y = dlg_labels(net, "y", T * B);
    int x = dlg_dropout(net, "drop_in", dlg_embedding(net, "enc", ids, V, H), 0.3f);
    int h0 = dlg_input(net, "h0", B, H, 1, 1), c0 = dlg_input(net, "c0", B, H, 1, 1), hT, cT;
    x = dlg_dropout(net, "drop0", dlg_lstm(net, "lstm0", x, h0, c0, H, T, &hT, &cT), 0.3f);
    dlg_softmax_loss(net, "loss", dlg_fc(net, "dec", x, V), y);
    dlg_plan_opts o = {.backend = backend, .threads = 2, .seed = 9, .keep_all = keep_all};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    float v[T * B];
    for (int i = 0; i < T * B; i++)
        v[i] = (float)((i * 7 + 3) % V);
    assert_int_equal(dlg_net_write(net, ids, DLG_DATA, v, T * B), 0);
    for (int i = 0; i < T * B; i++)
        v[i] = (float)((i * 5 + 1) % V);
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, v, T * B), 0);
    assert_int_equal(tu_fill_blob(net, h0, FILL_GAUSS, 1), 0);
    assert_int_equal(tu_fill_blob(net, c0, FILL_GAUSS, 2), 0);
    return net;
}

static void test_inference_folds_lm_dropouts(void **st)
{
    for (int b = 0; b < tu_nbackends; b++) {
        dlg_net *all = make_lm(tu_backends[b], true), *sh = make_lm(tu_backends[b], false);
        assert_int_equal(dlg_net_forward(all), 0);
        assert_int_equal(dlg_net_forward(sh), 0);
        assert_string_equal(impl_of(sh, "drop_in"), "fused");
        assert_string_equal(impl_of(sh, "drop0"), "fused");
        assert_true(diff(all, sh, dlg_net_blob(all, "loss"), DLG_DATA) < 1e-6);
        assert_true(diff(all, sh, dlg_net_blob(all, "lstm0/hT"), DLG_DATA) < 1e-6);
        assert_true(diff(all, sh, dlg_net_blob(all, "lstm0/cT"), DLG_DATA) < 1e-6);
        dlg_net_destroy(all);
        dlg_net_destroy(sh);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inference_shares_activations),
        cmocka_unit_test(test_inference_folds_residual_blocks),
        cmocka_unit_test(test_inference_folds_dropouts),
        cmocka_unit_test(test_inference_folds_lm_dropouts),
        cmocka_unit_test(test_training_folds_add_relu),
        cmocka_unit_test(test_training_keeps_fused_add_output),
        cmocka_unit_test(test_training_folds_split_into_add),
        cmocka_unit_test(test_training_shares_gradients),
        cmocka_unit_test(test_plan_touches_no_activations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
