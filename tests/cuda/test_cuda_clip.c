/* The CUDA backend's device-side gradient clipping (cuda_clip.c,
 * dlg_cuda_clip: the grad_clip hook behind dlg_net_clip_grads) against the
 * CPU stand-in runtime (fakegpu): known answers for the scaled gradients,
 * no host wait in the call, and the call captured into a graph and
 * replayed.  Before, clipping read the norm back every step
 * (dlg_cuda_sumsq: a stream sync, then a host decision and dlg_cuda_scale),
 * so a clipped step waited for the device and could not be captured. */
#include "cuda/cuda_seq.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* fakegpu/fake_runtime.cc's test hook */
uint64_t fakegpu_host_waits(void);

enum { N1 = 1000, N2 = 37 };

typedef struct rig {
    dlg_cuda_ctx *c;
    float *g[2], want[N1 + N2];
    int64_t n[2];
    double norm; /* of the values fill() writes */
} rig;

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    assert_int_equal(cudaMalloc(&p, bytes), cudaSuccess);
    return p;
}

/* device memory is host memory under fakegpu: written and read directly */
static void fill(rig *r, float loss_scale)
{
    double s = 0;
    for (int a = 0, k = 0; a < 2; a++)
        for (int64_t i = 0; i < r->n[a]; i++, k++) {
            float v = (float)((k % 17) - 8) * 0.125f;
            r->g[a][i] = v * loss_scale;
            s += (double)v * v;
        }
    r->norm = sqrt(s);
}

/* want = what fill() wrote times f (the loss scale included) */
static void expect(rig *r, float loss_scale, float f)
{
    for (int a = 0, k = 0; a < 2; a++)
        for (int64_t i = 0; i < r->n[a]; i++, k++)
            r->want[k] = (float)((k % 17) - 8) * 0.125f * loss_scale * f;
}

static void check(rig *r, const char *what)
{
    assert_int_equal(cudaStreamSynchronize(r->c->stream), cudaSuccess);
    for (int a = 0, k = 0; a < 2; a++)
        for (int64_t i = 0; i < r->n[a]; i++, k++)
            if (!(fabsf(r->g[a][i] - r->want[k]) <= 1e-6f * fabsf(r->want[k])))
                fail_msg("%s: gradient %d[%lld] = %.9g, want %.9g", what, a, (long long)i,
                         (double)r->g[a][i], (double)r->want[k]);
}

static int setup(void **state)
{
    rig *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->c = calloc(1, sizeof *r->c);
    assert_non_null(r->c);
    assert_int_equal(cudaStreamCreateWithFlags(&r->c->stream, cudaStreamNonBlocking), cudaSuccess);
    r->c->flag_dev = dev_alloc(sizeof(int));
    *r->c->flag_dev = 0;
    char err[200];
    assert_int_equal(dlg_cuda_clip_open(r->c, err, sizeof err), 0);
    r->n[0] = N1, r->n[1] = N2;
    r->g[0] = dev_alloc(N1 * sizeof(float));
    r->g[1] = dev_alloc(N2 * sizeof(float));
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    rig *r = *state;
    dlg_cuda_clip_close(r->c);
    cudaFree(r->g[0]), cudaFree(r->g[1]), cudaFree(r->c->flag_dev);
    if (r->c->scaler)
        cudaFree(r->c->scaler);
    cudaStreamDestroy(r->c->stream);
    free(r->c), free(r);
    return 0;
}

static int clip(rig *r, double max_norm)
{
    return dlg_cuda_clip(r->c, r->g, r->n, 2, max_norm);
}

/* the last norm (rel. tol: the values fill() writes sum exactly; scaled
 * ones carry float rounding) and the count of scaled calls */
static void stats(rig *r, double norm, double tol, int64_t clipped)
{
    double got = -1;
    int64_t n = -1;
    assert_int_equal(dlg_cuda_clip_stats(r->c, &got, &n), 0);
    assert_true(fabs(got - norm) <= tol * norm);
    assert_int_equal(n, clipped);
}

static void test_clip_eager_no_wait(void **state)
{
    rig *r = *state;
    fill(r, 1.f);
    const double max = r->norm / 3;
    const float f = (float)(max / (r->norm + 1e-6));
    uint64_t w0 = fakegpu_host_waits();
    assert_int_equal(clip(r, max), 0);
    assert_true(fakegpu_host_waits() == w0); /* enqueued only */
    expect(r, 1.f, f);
    check(r, "clipped");
    stats(r, r->norm, 1e-12, 1);
    /* now below max_norm: not scaled, not counted */
    assert_int_equal(clip(r, max), 0);
    check(r, "kept");
    stats(r, r->norm * f, 1e-6, 1);
}

static void test_clip_captured(void **state)
{
    rig *r = *state;
    fill(r, 1.f);
    const double max = r->norm / 2;
    const float f = (float)(max / (r->norm + 1e-6));
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    uint64_t w0 = fakegpu_host_waits();
    assert_int_equal(cudaStreamBeginCapture(r->c->stream, cudaStreamCaptureModeThreadLocal),
                     cudaSuccess);
    int rc = clip(r, max);
    assert_int_equal(cudaStreamEndCapture(r->c->stream, &g), cudaSuccess);
    assert_int_equal(rc, 0);
    assert_non_null(g);
    assert_true(fakegpu_host_waits() == w0);
    assert_int_equal(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
    expect(r, 1.f, 1.f);
    check(r, "captured, not run");
    /* each replay decides on the device: scaled, then kept */
    assert_int_equal(cudaGraphLaunch(exec, r->c->stream), cudaSuccess);
    expect(r, 1.f, f);
    check(r, "replay 1");
    stats(r, r->norm, 1e-12, 1);
    assert_int_equal(cudaGraphLaunch(exec, r->c->stream), cudaSuccess);
    check(r, "replay 2");
    stats(r, r->norm * f, 1e-6, 1);
    fill(r, 1.f); /* new gradients: the same graph clips them */
    assert_int_equal(cudaGraphLaunch(exec, r->c->stream), cudaSuccess);
    check(r, "replay 3");
    stats(r, r->norm, 1e-12, 2);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
}

/* fp16's stored gradients carry the loss scale: the norm is the true
 * gradient's, and the factor applies to the scaled values alike. */
static void test_clip_loss_scale(void **state)
{
    rig *r = *state;
    r->c->scaler = dev_alloc(sizeof *r->c->scaler);
    memset(r->c->scaler, 0, sizeof *r->c->scaler);
    r->c->scaler->scale = 4096.f;
    fill(r, 4096.f);
    const double max = r->norm / 4;
    assert_int_equal(clip(r, max), 0);
    expect(r, 4096.f, (float)(max / (r->norm + 1e-6)));
    check(r, "loss-scaled");
    stats(r, r->norm, 1e-12, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clip_eager_no_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clip_captured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clip_loss_scale, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
