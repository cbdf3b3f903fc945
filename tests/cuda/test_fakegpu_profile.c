/* profile = true on the CUDA backend (core/nn/profile.c, cuda_prof.c),
 * through the engine on the CPU stand-in GPU (fakegpu's cuda.so): each
 * layer's forward and backward time comes from marks on the device
 * timeline, read after the step (its timer's end, or the step itself when
 * no timer runs):
 *  - every layer that runs is timed, each call counted; the heavy
 *    convolution gets more time than the ReLU after it (a mark off by one
 *    would hand the convolution's time to the ReLU);
 *  - the layers' time fits inside the steps' timed windows;
 *  - the steps run eagerly even with graphs on (marks between launches);
 *  - a reset drops what was marked; an inference plan times forward only;
 *  - events the device cannot make fail the plan in one line, none left. */
#define _GNU_SOURCE
#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

enum { N = 2, C = 8, HW = 16, K = 64, CLASSES = 10, STEPS = 4 };

typedef struct prof_net {
    dlg_net *net;
    int data, label;
} prof_net;

/* a test hook of the stand-in's runtime, from the cuda.so the engine loads
 * (opened here first and kept, so both see one copy) */
static void *fake_hook(const char *name)
{
    static void *dl;
    if (!dl)
        dl = dlopen(FAKEGPU_CUDA_SO, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(dl);
    void *fn = dlsym(dl, name);
    assert_non_null(fn);
    return fn;
}

static int plan(prof_net *p, bool train)
{
    assert_int_equal(dlg_net_create(&p->net, "prof"), 0);
    dlg_net *n = p->net;
    p->data = dlg_input(n, "data", N, C, HW, HW);
    p->label = dlg_labels(n, "label", N);
    int x = dlg_conv(n, "heavy", p->data, K, 5, 1, 2, 1); /* 6.6 M multiply-adds an image */
    x = dlg_relu(n, "cheap", x);                         /* 16 K values an image */
    x = dlg_max_pool(n, "pool", x, 2, 2, 0);
    x = dlg_fc(n, "head", x, CLASSES);
    dlg_softmax_loss(n, "loss", x, p->label);
    dlg_plan_opts o = {.backend = "cuda:0", .train = train, .seed = 3, .profile = true,
                       .graphs = DLG_GRAPHS_ON};
    int rc = dlg_net_plan(n, &o);
    if (rc < 0)
        return rc;
    float in[N * C * HW * HW], lab[N] = {1, 7};
    for (int i = 0; i < N * C * HW * HW; i++)
        in[i] = (float)((i * 37) % 19) / 19.f - 0.5f;
    assert_int_equal(dlg_net_write(n, p->data, DLG_DATA, in, N * C * HW * HW), 0);
    assert_int_equal(dlg_net_write(n, p->label, DLG_DATA, lab, N), 0);
    return 0;
}

static int layer(const prof_net *p, const char *name)
{
    for (int i = 0; i < dlg_net_layer_count(p->net); i++) {
        dlg_layer_info li;
        assert_int_equal(dlg_net_layer_info(p->net, i, &li), 0);
        if (strcmp(li.name, name) == 0)
            return i;
    }
    fail_msg("no layer '%s'", name);
    return -1;
}

typedef struct times {
    uint64_t fwd, bwd, calls;
} times;

static times time_of(const prof_net *p, const char *name)
{
    times t;
    assert_int_equal(dlg_net_layer_time(p->net, layer(p, name), &t.fwd, &t.bwd, &t.calls), 0);
    return t;
}

static const char *const kLayers[] = {"heavy", "cheap", "pool", "head", "loss"};

/* The heavy convolution gets more than 3 times the time of the ReLU after
 * it, forward and backward, in the steps timed so far or, failing that, in
 * one of 2 more rounds of STEPS steps: on a loaded machine one time slice
 * lost inside the ReLU's window (48 ms of conv against 19 ms of ReLU
 * backward, with 2 busy loops on the 2 CPUs) can tip one round, while a
 * mark off by one, handing the conv's time to the ReLU, tips every round. */
static void heavy_outweighs_relu(prof_net *p, const dlg_sgd *sgd)
{
    times heavy, cheap;
    for (int round = 0; round < 3; round++) {
        if (round > 0) {
            dlg_net_layer_time_reset(p->net);
            for (int s = 0; s < STEPS; s++)
                assert_int_equal(dlg_net_train_step(p->net, sgd), 0);
        }
        heavy = time_of(p, "heavy");
        cheap = time_of(p, "cheap");
        if (heavy.fwd > 3 * cheap.fwd && heavy.bwd > 3 * cheap.bwd)
            return;
    }
    fail_msg("heavy conv %llu+%llu ns, the relu after it %llu+%llu ns (3 rounds)",
             (unsigned long long)heavy.fwd, (unsigned long long)heavy.bwd,
             (unsigned long long)cheap.fwd, (unsigned long long)cheap.bwd);
}

static void test_train_timed(void **st)
{
    (void)st;
    prof_net p;
    if (plan(&p, true) < 0)
        fail_msg("%s", dlg_net_error(p.net));
    dlg_sgd sgd = {0.01f, 0.9f, 0};
    uint64_t window = 0;
    for (int s = 0; s < STEPS; s++) {
        uint64_t ns = 0;
        assert_int_equal(dlg_net_timer_begin(p.net), 0);
        if (dlg_net_train_step(p.net, &sgd) < 0)
            fail_msg("step %d: %s", s, dlg_net_error(p.net));
        assert_int_equal(dlg_net_timer_end(p.net, &ns), 0);
        window += ns;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < sizeof kLayers / sizeof *kLayers; i++) {
        times t = time_of(&p, kLayers[i]);
        assert_int_equal(t.calls, STEPS);
        assert_true(t.fwd > 0);
        assert_true(t.bwd > 0);
        sum += t.fwd + t.bwd;
    }
    /* marks inside the windows: the gaps sum to less (1 us of rounding each) */
    int marks = 2 * (int)(sizeof kLayers / sizeof *kLayers) + 2;
    assert_true(sum <= window + (uint64_t)STEPS * marks * 1000);
    dlg_step_stats ss;
    assert_int_equal(dlg_net_step_stats(p.net, &ss), 0);
    assert_int_equal(ss.eager, STEPS); /* graphs on, but marked steps run eagerly */
    assert_int_equal(ss.captured + ss.replayed, 0);

    heavy_outweighs_relu(&p, &sgd);

    /* a reset drops the times; untimed steps are read at their end */
    dlg_net_layer_time_reset(p.net);
    assert_int_equal(time_of(&p, "heavy").fwd, 0);
    assert_int_equal(dlg_net_train_step(p.net, &sgd), 0);
    times one = time_of(&p, "heavy");
    assert_int_equal(one.calls, 1);
    assert_true(one.fwd > 0 && one.bwd > 0);
    /* forward and backward alone, many times over: more marks than made
     * (two passes' worth), read as they run out */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(dlg_net_forward(p.net), 0);
        assert_int_equal(dlg_net_backward(p.net), 0);
    }
    times more = time_of(&p, "heavy");
    assert_int_equal(more.calls, 6);
    assert_true(more.fwd > one.fwd && more.bwd > one.bwd);
    /* a reset while a timer runs drops the marks not read yet */
    assert_int_equal(dlg_net_timer_begin(p.net), 0);
    assert_int_equal(dlg_net_train_step(p.net, &sgd), 0);
    dlg_net_layer_time_reset(p.net);
    uint64_t ns;
    assert_int_equal(dlg_net_timer_end(p.net, &ns), 0);
    assert_int_equal(time_of(&p, "heavy").fwd, 0);
    dlg_net_destroy(p.net);
}

static void test_infer(void **st)
{
    (void)st;
    prof_net p;
    if (plan(&p, false) < 0)
        fail_msg("%s", dlg_net_error(p.net));
    for (int s = 0; s < 3; s++)
        assert_int_equal(dlg_net_infer_step(p.net), 0);
    for (size_t i = 0; i < sizeof kLayers / sizeof *kLayers; i++) {
        times t = time_of(&p, kLayers[i]);
        assert_int_equal(t.calls, 3);
        assert_true(t.fwd > 0);
        assert_int_equal(t.bwd, 0);
    }
    dlg_net_destroy(p.net);
}

static void test_no_events(void **st)
{
    (void)st;
    void (*fail_event)(int) = (void (*)(int))fake_hook("fakegpu_fail_event_create");
    size_t (*live)(void) = (size_t (*)(void))fake_hook("fakegpu_live_events");
    size_t before = live();
    fail_event(3);
    prof_net p;
    assert_true(plan(&p, true) < 0);
    const char *err = dlg_net_error(p.net);
    if (!strstr(err, "profile = true: cudaEventCreate (mark ") || !strstr(err, "MemoryAllocation"))
        fail_msg("%s", err);
    dlg_net_destroy(p.net);
    assert_int_equal(live(), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train_timed),
        cmocka_unit_test(test_infer),
        cmocka_unit_test(test_no_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
