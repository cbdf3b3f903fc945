/* The gradient-clipping hooks a GPU backend gives clip.c (grad_sumsq,
 * grad_scale; cuda_clip.c on the cuda backend), tested without a GPU: a
 * net planned on ref gets a copy of ref's vtable with host-memory stand-ins
 * for the hooks, so what clip.c hands them (every param gradient, once,
 * with its size; the factor) and what it makes of their answers is checked
 * against ref's own path.  ref's context is NULL and unused, so while the
 * stand-ins are installed the net's context points at what they record.
 * 160 inner products make 320 params, a list the net keeps from its plan
 * (more than 256: what once was allocated per call). */
#include "net.h"

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LAYERS 160

typedef struct calls {
    const dlg_net *net;
    int sumsq, scale, arrays, clip, stats;
    bool bad_input;
    int64_t floats;
    float factor;
    double max_norm;
} calls;

/* Is p the gradient of a param of the net, with c floats? */
static bool is_param_grad(const dlg_net *net, const float *p, int64_t c)
{
    for (int b = 0; b < net->nblobs; b++)
        if (net->blobs[b].is_param && net->blobs[b].t.diff == p)
            return dlg_tensor_elems(&net->blobs[b].t) == c;
    return false;
}

static int fake_sumsq(void *ctx, const float *const *p, const int64_t *c, int n, double *out)
{
    calls *seen = ctx;
    double s = 0;
    seen->sumsq++;
    seen->arrays = n;
    seen->floats = 0;
    for (int i = 0; i < n; i++) {
        assert_true(is_param_grad(seen->net, p[i], c[i]));
        for (int j = 0; j < i; j++)
            assert_ptr_not_equal(p[i], p[j]);
        seen->floats += c[i];
        for (int64_t k = 0; k < c[i]; k++)
            s += (double)p[i][k] * p[i][k];
    }
    *out = s;
    return 0;
}

static int fake_scale(void *ctx, float *const *p, const int64_t *c, int n, float f)
{
    calls *seen = ctx;
    seen->scale++;
    seen->arrays = n;
    seen->factor = f;
    for (int i = 0; i < n; i++) {
        assert_true(is_param_grad(seen->net, p[i], c[i]));
        for (int64_t k = 0; k < c[i]; k++)
            p[i][k] *= f;
    }
    return 0;
}

/* grad_clip's stand-in: records what clip.c hands it, scales nothing */
static int fake_clip(void *ctx, float *const *p, const int64_t *c, int n, double max_norm)
{
    calls *seen = ctx;
    seen->clip++;
    seen->arrays = n;
    seen->max_norm = max_norm;
    for (int i = 0; i < n; i++)
        assert_true(is_param_grad(seen->net, p[i], c[i]));
    return 0;
}

static int fake_stats(void *ctx, double *last_norm, int64_t *clipped)
{
    calls *seen = ctx;
    if (seen->bad_input) /* the device's sticky flag: a label out of range */
        return -DLG_EINVAL;
    seen->stats++;
    *last_norm = 2.5;
    *clipped = 7;
    return 0;
}

static int fail_sumsq(void *ctx, const float *const *p, const int64_t *c, int n, double *out)
{
    return -DLG_EINTERNAL;
}

static dlg_net *trained_net(void)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "clip"), 0);
    int in = dlg_input(net, "x", 2, 3, 1, 1), y = dlg_labels(net, "y", 2), x = in;
    for (int i = 0; i < LAYERS; i++) {
        char name[16];
        snprintf(name, sizeof name, "fc%d", i);
        x = dlg_fc(net, name, x, 3);
    }
    int loss = dlg_softmax_loss(net, "loss", x, y);
    dlg_plan_opts o = {.backend = "ref", .train = true, .seed = 5};
    assert_true(loss >= 0);
    assert_int_equal(dlg_net_plan(net, &o), 0);
    float xv[6] = {1, -2, 0.5f, 3, 0.25f, -1}, yv[2] = {0, 2};
    assert_int_equal(dlg_net_write(net, in, DLG_DATA, xv, 6), 0);
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, yv, 2), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_backward(net), 0);
    return net;
}

static void test_hooks_see_every_gradient(void **st)
{
    dlg_net *net = trained_net();
    double want = 0, got = 0, half = 0;
    assert_int_equal(dlg_net_grad_norm(net, &want), 0); /* ref's own path */
    assert_true(want > 0 && isfinite(want));

    calls c = {.net = net};
    const dlg_backend *ref = net->bk;
    dlg_backend fake = *ref;
    fake.grad_sumsq = fake_sumsq;
    fake.grad_scale = fake_scale;
    assert_null(net->ctx);
    net->bk = &fake;
    net->ctx = &c;
    assert_int_equal(dlg_net_grad_norm(net, &got), 0);
    assert_int_equal(c.sumsq, 1);
    assert_int_equal(c.arrays, 2 * LAYERS); /* weights and biases */
    assert_int_equal(c.floats, LAYERS * (9 + 3));
    assert_true(fabs(got - want) <= 1e-12 * want);

    assert_int_equal(dlg_net_scale_grads(net, 0.5f), 0);
    assert_int_equal(c.scale, 1);
    assert_int_equal(c.arrays, 2 * LAYERS);
    assert_true(c.factor == 0.5f);
    assert_int_equal(dlg_net_grad_norm(net, &half), 0);
    assert_true(fabs(half - 0.5 * want) <= 1e-12 * want);

    /* a failing hook is one error naming the backend, not a norm */
    fake.grad_sumsq = fail_sumsq;
    assert_int_equal(dlg_net_grad_norm(net, &got), -DLG_EINTERNAL);
    assert_non_null(strstr(dlg_net_error(net), "gradient norm failed"));
    net->bk = ref;
    net->ctx = NULL;
    dlg_net_destroy(net);
}

/* Every param gradient of the net, concatenated (ref: host memory). */
static int64_t grads(const dlg_net *net, float *out)
{
    int64_t k = 0;
    for (int b = 0; b < net->nblobs; b++) {
        const dlg_blob *bl = &net->blobs[b];
        for (int64_t i = 0; dlg_blob_trained(bl) && i < dlg_tensor_elems(&bl->t); i++)
            out[k++] = ((const float *)bl->t.diff)[i];
    }
    return k;
}

/* dlg_net_clip_grads where the backend has no grad_clip (ref): the norm
 * and the decision on the host, clip_grad_norm_'s factor; known answers. */
static void test_clip_grads_host(void **st)
{
    dlg_net *net = trained_net();
    enum { N = LAYERS * 12 };
    static float before[N], after[N];
    double norm = 0, again = 0;
    assert_int_equal(dlg_net_grad_norm(net, &norm), 0);
    assert_int_equal(grads(net, before), N);
    dlg_clip_stats cs = {0};
    assert_int_equal(dlg_net_clip_grads(net, norm / 4, &cs, NULL), 0);
    assert_true(cs.norm == norm && cs.clipped == 1);
    grads(net, after);
    float f = (float)(norm / 4 / (norm + 1e-6));
    for (int i = 0; i < N; i++)
        assert_true(after[i] == before[i] * f);
    /* now below max_norm: kept; max_norm 0 measures only */
    assert_int_equal(dlg_net_clip_grads(net, norm, &cs, NULL), 0);
    assert_int_equal(dlg_net_grad_norm(net, &again), 0);
    assert_true(cs.norm == again && cs.clipped == 1);
    assert_int_equal(dlg_net_clip_grads(net, 0, &cs, NULL), 0);
    assert_true(cs.clipped == 1);
    grads(net, before);
    assert_memory_equal(before, after, sizeof after);
    assert_int_equal(dlg_net_clip_read(net, &cs), 0); /* host stats: unchanged */
    assert_true(cs.norm == again && cs.clipped == 1);
    /* with lr_factor: the factor for the SGD step, the gradients kept */
    float lf = 0;
    assert_int_equal(dlg_net_clip_grads(net, again / 2, &cs, &lf), 0);
    assert_true(cs.clipped == 2 && lf == (float)(again / 2 / (again + 1e-6)));
    grads(net, before);
    assert_memory_equal(before, after, sizeof after);
    assert_int_equal(dlg_net_clip_grads(net, again * 2, &cs, &lf), 0);
    assert_true(cs.clipped == 2 && lf == 1);
    dlg_net_destroy(net);
}

/* With grad_clip: one call with every gradient and max_norm, and no
 * grad_sumsq (which waits for the device); the stats come from
 * clip_stats only when read. */
static void test_clip_grads_hook(void **st)
{
    dlg_net *net = trained_net();
    calls c = {.net = net};
    const dlg_backend *ref = net->bk;
    dlg_backend fake = *ref;
    fake.grad_sumsq = fake_sumsq;
    fake.grad_scale = fake_scale;
    fake.grad_clip = fake_clip;
    fake.clip_stats = fake_stats;
    net->bk = &fake;
    net->ctx = &c;
    dlg_clip_stats cs = {0};
    float lf = 0;
    assert_int_equal(dlg_net_clip_grads(net, 0.25, &cs, &lf), 0);
    assert_true(lf == 1); /* scaled on the device */
    assert_int_equal(c.clip, 1);
    assert_int_equal(c.arrays, 2 * LAYERS);
    assert_true(c.max_norm == 0.25);
    assert_int_equal(c.sumsq + c.scale + c.stats, 0);
    assert_true(cs.norm == 0 && cs.clipped == 0);
    assert_int_equal(dlg_net_clip_read(net, &cs), 0);
    assert_int_equal(c.stats, 1);
    assert_true(cs.norm == 2.5 && cs.clipped == 7);
    /* a step that saw a bad label: said so, not "reading the norm failed" */
    c.bad_input = true;
    assert_int_equal(dlg_net_clip_read(net, &cs), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "a step saw a bad input"));
    net->bk = ref;
    net->ctx = NULL;
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hooks_see_every_gradient),
        cmocka_unit_test(test_clip_grads_host),
        cmocka_unit_test(test_clip_grads_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
