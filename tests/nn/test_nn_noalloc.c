/* Steps allocate nothing: after planning, forward/backward/SGD of a net
 * with every layer type make no malloc/calloc/realloc/posix_memalign call
 * from the engine (linked statically, its calls are wrapped here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlgauge/nn.h>

#include <stdbool.h>
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
    /* the wrappers do see the engine's allocations */
    counting = true;
    dlg_net_destroy(net);
    assert_int_equal(dlg_net_create(&net, "probe"), 0);
    counting = false;
    assert_true(calls > 0);
    dlg_net_destroy(net);
}

static void test_ref(void **st) { steps_on("ref"); }

#ifdef DLG_NN_HAVE_DNNL
static void test_cpu(void **st) { steps_on("cpu"); }
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ref),
#ifdef DLG_NN_HAVE_DNNL
        cmocka_unit_test(test_cpu),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
