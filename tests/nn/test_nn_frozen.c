/* Frozen parameters (lr_mult 0) beside trained ones in the same layer: a
 * conv's bias, a batch norm's scale, an fc's weight.  The layer's backward
 * still runs (it used to write the frozen one's missing gradient through
 * NULL); the frozen values never change, the trained ones get the same
 * gradients as in an unfrozen twin, and the gradient norm counts only the
 * trained ones.  Batch-norm statistics are state: no multiplier for them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <dlgauge/plugin.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 4, CLASSES = 5 };

typedef struct frozen_param {
    const char *layer;
    int index;
} frozen_param;

/* conv(+bias) -> bn -> relu -> fc -> softmax loss */
static const frozen_param frozen[] = {{"conv1", 1}, {"bn1", 0}, {"fc", 0}};
static const frozen_param trained[] = {{"conv1", 0}, {"bn1", 1}, {"fc", 1}};
#define NFROZEN (sizeof frozen / sizeof *frozen)
#define NTRAINED (sizeof trained / sizeof *trained)

static dlg_net *build(const char *backend, bool freeze)
{
    dlg_net *net = NULL;
    assert_int_equal(dlg_net_create(&net, "frozen"), 0);
    int x = dlg_input(net, "data", N, 3, 6, 6), y = dlg_labels(net, "label", N);
    x = dlg_conv(net, "conv1", x, 4, 3, 1, 1, 1);
    x = dlg_relu(net, "relu1", dlg_batchnorm(net, "bn1", x, 1e-5f));
    x = dlg_fc(net, "fc", x, CLASSES);
    dlg_softmax_loss(net, "loss", x, y);
    for (size_t i = 0; freeze && i < NFROZEN; i++)
        assert_int_equal(dlg_net_set_param_mult(net, dlg_net_param(net, frozen[i].layer, frozen[i].index), 0, 0), 0);
    dlg_plan_opts o = {.backend = backend, .threads = 1, .train = true, .seed = 7};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s: %s", backend, dlg_net_error(net));
    float labels[N];
    for (int i = 0; i < N; i++)
        labels[i] = (float)(i % CLASSES);
    assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, "data"), FILL_GAUSS, 11), 0);
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "label"), DLG_DATA, labels, N), 0);
    return net;
}

static float *read_param(dlg_net *net, const frozen_param *p, dlg_which which, int64_t *count)
{
    int b = dlg_net_param(net, p->layer, p->index);
    *count = tu_count(net, b);
    float *v = malloc((size_t)*count * sizeof *v);
    assert_non_null(v);
    assert_int_equal(dlg_net_read(net, b, which, v, (size_t)*count), 0);
    return v;
}

static void check_backend(const char *backend)
{
    dlg_net *twin = build(backend, false), *net = build(backend, true);
    /* one backward: the trained params' gradients are the twin's */
    assert_int_equal(dlg_net_forward(twin), 0);
    assert_int_equal(dlg_net_backward(twin), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_backward(net), 0);
    double sumsq = 0, norm = 0;
    for (size_t i = 0; i < NTRAINED; i++) {
        int64_t n;
        float *a = read_param(twin, &trained[i], DLG_DIFF, &n), *b = read_param(net, &trained[i], DLG_DIFF, &n);
        for (int64_t k = 0; k < n; k++) {
            assert_float_equal(b[k], a[k], 1e-6 * (1 + fabsf(a[k])));
            sumsq += (double)b[k] * b[k];
        }
        free(a);
        free(b);
    }
    assert_true(sumsq > 0);
    assert_int_equal(dlg_net_grad_norm(net, &norm), 0);
    assert_float_equal(norm, sqrt(sumsq), 1e-5 * sqrt(sumsq));
    /* training steps with momentum and decay: frozen values stay put */
    float *before[NFROZEN], *tbefore[NTRAINED];
    int64_t cnt[NFROZEN], tcnt[NTRAINED];
    for (size_t i = 0; i < NFROZEN; i++)
        before[i] = read_param(net, &frozen[i], DLG_DATA, &cnt[i]);
    for (size_t i = 0; i < NTRAINED; i++)
        tbefore[i] = read_param(net, &trained[i], DLG_DATA, &tcnt[i]);
    dlg_sgd sgd = {0.05f, 0.9f, 0.01f};
    for (int s = 0; s < 3; s++)
        if (dlg_net_train_step(net, &sgd) < 0)
            fail_msg("%s: %s", backend, dlg_net_error(net));
    for (size_t i = 0; i < NFROZEN; i++) {
        int64_t n;
        float *after = read_param(net, &frozen[i], DLG_DATA, &n);
        assert_memory_equal(after, before[i], (size_t)cnt[i] * sizeof *after);
        free(after);
        free(before[i]);
    }
    for (size_t i = 0; i < NTRAINED; i++) {
        int64_t n;
        float *after = read_param(net, &trained[i], DLG_DATA, &n);
        assert_memory_not_equal(after, tbefore[i], (size_t)tcnt[i] * sizeof *after);
        free(after);
        free(tbefore[i]);
    }
    dlg_net_destroy(twin);
    dlg_net_destroy(net);
}

static void test_frozen_ref(void **st)
{
    (void)st;
    check_backend("ref");
}

static void test_frozen_cpu(void **st)
{
    (void)st;
    tu_on_cpu(check_backend);
}

static void test_state_has_no_multiplier(void **st)
{
    (void)st;
    dlg_net *net = NULL;
    assert_int_equal(dlg_net_create(&net, "bn"), 0);
    int x = dlg_input(net, "data", 2, 3, 4, 4);
    dlg_batchnorm(net, "bn1", x, 1e-5f);
    assert_true(dlg_net_set_param_mult(net, dlg_net_param(net, "bn1", 2), 1, 0) < 0); /* running mean */
    assert_non_null(strstr(dlg_net_error(net), "batch-norm statistics"));
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frozen_ref),
        cmocka_unit_test(test_frozen_cpu),
        cmocka_unit_test(test_state_has_no_multiplier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
