/* Steps allocate nothing: after planning, forward/backward/SGD of a net
 * with every layer type make no malloc/calloc/realloc/posix_memalign call
 * from the engine (linked statically, its calls are wrapped here); nor
 * does gradient clipping through a backend's clip hooks, on a net with
 * more params than fit a small fixed list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "net.h"

#include <dlgauge/nn.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);

/* test-only counters (the wrappers have no other place to put them) */
static bool counting;
static int calls;

void *__wrap_malloc(size_t n)
{
    calls += counting;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t a, size_t b)
{
    calls += counting;
    return __real_calloc(a, b);
}

void *__wrap_realloc(void *p, size_t n)
{
    calls += counting;
    return __real_realloc(p, n);
}

int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    calls += counting;
    return __real_posix_memalign(p, a, n);
}

/* A reduce over one rank: the sum is the buffer itself; counts calls. */
static int count_reduce(void *ctx, float *buf, size_t n)
{
    (void)buf, (void)n;
    ++*(int *)ctx;
    return 0;
}

static void steps_on(const char *backend)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "noalloc"), 0);
    int x = dlg_input(net, "x", 2, 3, 12, 12), y = dlg_labels(net, "y", 2);
    int h = dlg_relu(net, "r0",
                     dlg_batchnorm(net, "bn0", dlg_conv(net, "c0", x, 8, 3, 1, 1, 1), 1e-5f));
    int a = dlg_conv(net, "ca", h, 8, 3, 1, 1, 2), b = dlg_conv(net, "cb", h, 8, 1, 1, 0, 1);
    h = dlg_add(net, "add", a, b);
    int cat[2] = {h, a};
    h = dlg_concat(net, "cat", 2, cat);
    h = dlg_lrn(net, "lrn", dlg_max_pool(net, "pool", h, 3, 2, 0), 5, 1e-3f, 0.75f, 1.0f);
    h = dlg_avg_pool(net, "avg", h, 2, 1, 0);
    h = dlg_dropout(net, "drop", dlg_fc(net, "fc", h, 10), 0.5f);
    h = dlg_softmax(net, "sm", h);
    dlg_softmax_loss(net, "loss", h, y);
    dlg_plan_opts o = {.backend = backend, .threads = 1, .train = true, .seed = 1};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    float lab[2] = {1, 7};
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, 2), 0);
    dlg_sgd sgd = {0.01f, 0.9f, 1e-4f};
    calls = 0;
    counting = true;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dlg_net_forward(net), 0);
        assert_int_equal(dlg_net_backward(net), 0);
        assert_int_equal(dlg_net_sgd_step(net, &sgd), 0);
    }
    counting = false;
    assert_int_equal(calls, 0);
    /* whole steps with a gradient reduce across "ranks" (one here) and a
     * clip: the bucket was allocated when the reduce was set */
    int reduced = 0;
    assert_int_equal(dlg_net_set_grad_reduce(net, count_reduce, &reduced, 1), 0);
    dlg_clip_stats cs = {0};
    counting = true;
    for (int i = 0; i < 3; i++)
        assert_int_equal(dlg_net_train_step_clip(net, &sgd, 0.5, &cs), 0);
    counting = false;
    assert_int_equal(calls, 0);
    assert_int_equal(reduced, 3);
    /* the wrappers do see the engine's allocations */
    counting = true;
    dlg_net_destroy(net);
    assert_int_equal(dlg_net_create(&net, "probe"), 0);
    counting = false;
    assert_true(calls > 0);
    dlg_net_destroy(net);
}

static void test_ref(void **st) { steps_on("ref"); }

/* Stand-ins for a GPU backend's clip hooks on ref's host memory (ref's
 * context is NULL and unused): they count the arrays they are handed. */
static int hook_sumsq(void *ctx, const float *const *p, const int64_t *c, int n, double *out)
{
    *out = 0;
    for (int i = 0; i < n; i++)
        for (int64_t k = 0; k < c[i]; k++)
            *out += (double)p[i][k] * p[i][k];
    *(int *)ctx = n;
    return 0;
}

static int hook_scale(void *ctx, float *const *p, const int64_t *c, int n, float f)
{
    for (int i = 0; i < n; i++)
        for (int64_t k = 0; k < c[i]; k++)
            p[i][k] *= f;
    *(int *)ctx = n;
    return 0;
}

static int hook_clip(void *ctx, float *const *p, const int64_t *c, int n, double max_norm)
{
    *(int *)ctx = n;
    return 0;
}

static int hook_stats(void *ctx, double *last_norm, int64_t *clipped)
{
    *last_norm = 1;
    *clipped = 0;
    return 0;
}

/* 200 inner products: 400 params, more than clip.c once kept on the stack
 * (256): clipping, the norm and the scaling through the hooks allocate
 * nothing step after step. */
static void test_hook_clip_many_params(void **st)
{
    enum { LAYERS = 200 };
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "clip"), 0);
    int x = dlg_input(net, "x", 2, 3, 1, 1), y = dlg_labels(net, "y", 2);
    for (int i = 0; i < LAYERS; i++) {
        char name[16];
        snprintf(name, sizeof name, "fc%d", i);
        x = dlg_fc(net, name, x, 3);
    }
    assert_true(dlg_softmax_loss(net, "loss", x, y) >= 0);
    dlg_plan_opts o = {.backend = "ref", .threads = 1, .train = true, .seed = 1};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    float lab[2] = {0, 2};
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, 2), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_backward(net), 0);

    const dlg_backend *ref = net->bk;
    dlg_backend fake = *ref;
    fake.grad_sumsq = hook_sumsq;
    fake.grad_scale = hook_scale;
    int arrays = 0;
    assert_null(net->ctx);
    net->bk = &fake;
    net->ctx = &arrays;
    dlg_clip_stats cs = {0};
    double norm = 0;
    calls = 0;
    counting = true;
    for (int i = 0; i < 3; i++) { /* host decision: norm, then scale */
        assert_int_equal(dlg_net_clip_grads(net, 1e-9, &cs, NULL), 0);
        assert_int_equal(dlg_net_grad_norm(net, &norm), 0);
    }
    counting = false;
    assert_int_equal(calls, 0);
    assert_int_equal(arrays, 2 * LAYERS);
    assert_true(cs.clipped >= 1); /* scaled down to max_norm, then kept */
    assert_true(norm < 1e-8);

    fake.grad_clip = hook_clip; /* the device decides: one enqueued call */
    fake.clip_stats = hook_stats;
    arrays = 0;
    counting = true;
    for (int i = 0; i < 3; i++)
        assert_int_equal(dlg_net_clip_grads(net, 1.0, &cs, NULL), 0);
    counting = false;
    assert_int_equal(calls, 0);
    assert_int_equal(arrays, 2 * LAYERS);
    net->bk = ref;
    net->ctx = NULL;
    dlg_net_destroy(net);
}

#ifdef DLG_NN_HAVE_DNNL
static void test_cpu(void **st) { steps_on("cpu"); }
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ref),
        cmocka_unit_test(test_hook_clip_many_params),
#ifdef DLG_NN_HAVE_DNNL
        cmocka_unit_test(test_cpu),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
