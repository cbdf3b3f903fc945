/* Data-parallel training on a device (dlg_net_set_device_reduce,
 * core/nn/dev_reduce.c) on the CPU stand-in GPU: two nets on cuda:0 as two
 * ranks in two threads, their gradients summed by the fake NCCL
 * (DLGAUGE_NCCL_LIB) on the stream, the communicator id passed by a
 * test-local bcast (a shared buffer and a barrier), against one net with
 * batch 2b on all the samples:
 *  - fp32 conv net, momentum and weight decay: weights within 1e-5 of the
 *    single net's, the ranks' bit for bit (dlg_net_param_hash on cuda), the
 *    later steps replayed from a CUDA graph holding the allreduces; without
 *    the reduce neither;
 *  - lstm-ptb's model with the device clip on every step: the ranks clip
 *    on the reduced norm (the norm read back is the mean gradient's);
 *  - fp16 (loss scaling): the ranks agree bit for bit and stay near the
 *    single net; an overflow on rank 1 alone is skipped by both ranks
 *    (without the reduce by rank 1 only, and they part);
 *  - removing the reduce after a captured step: the next step is not the
 *    graph's replay and no longer sums (the ranks part);
 *  - misuse: host backends, inference plans, ranks out of range, the host
 *    reduce on cuda, NCCL missing: one line each, not sticky. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_testutil.h"
#include "nn_testutil.h"

#define B 2      /* each rank's batch; the single net's is 2B */
#define STEPS 4  /* 2 eager, 1 captured, 1 replayed */
#define TOL 1e-5 /* max |w_dp - w_single| / max |w_single| */
#define TOL16 1e-3 /* fp16: measured 1e-4 */
#define IMG 6
#define T 4  /* LSTM steps */
#define V 11 /* vocabulary */
#define H 6  /* LSTM width */

/* ---- the two ranks' id bcast: a shared buffer and a barrier ----------- */
typedef struct ranks2 {
    pthread_barrier_t bar;
    unsigned char id[256];
    int bcasts;
} ranks2;

/* ctx: the rank's dp_rank, its shared the ranks2 */
static int bcast2(void *ctx, void *buf, size_t bytes)
{
    dp_rank *a = ctx;
    ranks2 *r = a->shared;
    if (bytes > sizeof r->id)
        return -DLG_EINVAL;
    if (a->rank == 0)
        memcpy(r->id, buf, bytes);
    pthread_barrier_wait(&r->bar);
    if (a->rank != 0)
        memcpy(buf, r->id, bytes);
    pthread_barrier_wait(&r->bar);
    if (a->rank == 0)
        r->bcasts++;
    return 0;
}

/* ---- nets -------------------------------------------------------------- */
typedef enum kind { CONV = 0, LSTM = 1 } kind;

static dlg_net *build(kind k, const char *backend, int n)
{
    dlg_net *net;
    if (dlg_net_create(&net, "dp") < 0)
        return NULL;
    if (k == LSTM)
        tu_lstm_lm_layers(net, T, n, V, H, false);
    else
        dp_conv_layers(net, n, IMG, 8, false);
    dlg_plan_opts po = {.backend = backend, .train = true, .seed = 7, .deterministic = true};
    return dp_plan(net, &po);
}

/* Step s's data for all 2B samples; rank r takes samples [r*B, (r+1)*B).
 * bad >= 0: that sample's first pixel is 1e30 at step 1 (an inf in fp16). */
static int feed(kind k, dlg_net *net, int s, int first, int n, int bad)
{
    if (k == LSTM)
        return dp_feed_lm(net, s, first, n, 2 * B, T, V, H);
    return dp_feed_images(net, s, first, n, 2 * B, 3 * IMG * IMG, 0, bad);
}

typedef struct run_cfg {
    kind k;
    const char *backend;
    dlg_sgd sgd;
    double max_norm; /* > 0: dlg_net_train_step_clip */
    int bad;         /* >= 0: the sample that overflows fp16 at step 1 */
    int remove_at;   /* > 0: the ranks remove the reduce before this step */
} run_cfg;

static int step(dlg_net *net, const run_cfg *c, dlg_clip_stats *st)
{
    int rc = c->max_norm > 0 ? dlg_net_train_step_clip(net, &c->sgd, c->max_norm, st)
                             : dlg_net_train_step(net, &c->sgd);
    return rc < 0 || c->max_norm <= 0 ? rc : dlg_net_clip_read(net, st);
}

static int rank_step(dp_rank *r, int s)
{
    const run_cfg *c = r->cfg;
    int rc = 0;
    if (s == c->remove_at && s > 0)
        rc = dlg_net_set_device_reduce(r->net, 0, 0, NULL, NULL);
    if (!rc)
        rc = feed(c->k, r->net, s, r->rank * B, B, c->bad);
    return rc ? rc : step(r->net, c, &r->st);
}

typedef struct pair_out {
    double off;            /* the ranks' weights' distance from the single net's */
    bool same;             /* the ranks' weight hashes are equal */
    dlg_clip_stats st[3];  /* single, rank 0, rank 1 */
    dlg_step_stats steps[2];
    float scale[3];
    int64_t skipped[3];
    int bcasts;
} pair_out;

/* Trains the single net and the two ranks (reduced or not). */
static void train_pair(const run_cfg *c, bool reduce, pair_out *o)
{
    dlg_net *one = build(c->k, c->backend, 2 * B);
    dlg_net *r[2] = {build(c->k, c->backend, B), build(c->k, c->backend, B)};
    assert_non_null(one);
    assert_non_null(r[0]);
    assert_non_null(r[1]);
    *o = (pair_out){0};
    for (int s = 0; s < STEPS; s++) {
        assert_int_equal(feed(c->k, one, s, 0, 2 * B, c->bad), 0);
        assert_int_equal(step(one, c, &o->st[0]), 0);
    }
    ranks2 rr = {0};
    pthread_barrier_init(&rr.bar, NULL, 2);
    dp_rank j[2];
    for (int i = 0; i < 2; i++) {
        j[i] = (dp_rank){.net = r[i], .rank = i, .shared = &rr, .cfg = c};
        if (reduce && dlg_net_set_device_reduce(r[i], 2, i, bcast2, &j[i]) != 0)
            fail_msg("rank %d: %s", i, dlg_net_error(r[i]));
    }
    dp_run_ranks(j, STEPS, rank_step); /* each rank waits for its device */
    o->same = j[0].hash == j[1].hash;
    o->bcasts = rr.bcasts;
    dlg_net *all[3] = {one, r[0], r[1]};
    for (int i = 0; i < 3; i++)
        assert_true(dlg_net_loss_scale(all[i], &o->scale[i], &o->skipped[i]) >= 0);
    for (int i = 0; i < 2; i++) {
        o->st[1 + i] = j[i].st;
        assert_int_equal(dlg_net_step_stats(r[i], &o->steps[i]), 0);
    }
    o->off = fmax(dp_weight_off(r[0], one, true), dp_weight_off(r[1], one, true));
    for (int i = 0; i < 2; i++)
        dlg_net_destroy(r[i]);
    pthread_barrier_destroy(&rr.bar);
    dlg_net_destroy(one);
}

static const dlg_sgd SGD = {0.05f, 0.9f, 5e-3f};

static void test_conv_fp32(void **st)
{
    (void)st;
    run_cfg c = {CONV, "cuda:0", SGD, 0, -1, 0};
    pair_out o;
    train_pair(&c, true, &o);
    printf("  cuda:0 conv: reduced, relative weight distance %.3g; rank 0 steps %llu eager, "
           "%llu captured, %llu replayed\n",
           o.off, (unsigned long long)o.steps[0].eager, (unsigned long long)o.steps[0].captured,
           (unsigned long long)o.steps[0].replayed);
    assert_true(o.same);
    assert_true(o.off < TOL);
    assert_int_equal(o.bcasts, 1); /* the id, once, at the first step */
    for (int i = 0; i < 2; i++) /* the allreduces inside the captured graph */
        assert_true(o.steps[i].captured + o.steps[i].replayed >= 1);
    train_pair(&c, false, &o);
    printf("  cuda:0 conv: without the reduce, relative weight distance %.3g\n", o.off);
    assert_false(o.same);
    assert_true(o.off > 50 * TOL);
}

/* lstm-ptb's path: the clip on the device, below the norm at every step */
static void test_lstm_clip(void **st)
{
    (void)st;
    run_cfg c = {LSTM, "cuda:0", {0.5f, 0.9f, 0}, 0.05, -1, 0};
    pair_out o;
    train_pair(&c, true, &o);
    printf("  cuda:0 lstm clip: relative weight distance %.3g, norms %.6g single, %.6g and "
           "%.6g ranks\n",
           o.off, o.st[0].norm, o.st[1].norm, o.st[2].norm);
    assert_true(o.same);
    assert_true(o.off < TOL);
    assert_int_equal(o.st[0].clipped, STEPS);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(o.st[i].clipped, o.st[0].clipped);
        assert_true(fabs(o.st[i].norm - o.st[0].norm) <= 1e-4 * o.st[0].norm);
    }
    train_pair(&c, false, &o);
    assert_false(o.same);
    assert_true(o.off > 50 * TOL);
}

/* fp16: fp32 gradients summed; an overflow on rank 1 alone is every
 * rank's (the loss scale's check sees the sum): both skip that step and
 * halve their scale, as the single net does */
static void test_fp16(void **st)
{
    (void)st;
    run_cfg c = {CONV, "cuda-fp16:0", SGD, 0, -1, 0};
    pair_out o;
    train_pair(&c, true, &o);
    printf("  cuda-fp16:0 conv: relative weight distance %.3g\n", o.off);
    assert_true(o.same);
    assert_true(o.off < TOL16);
    train_pair(&c, false, &o);
    printf("  cuda-fp16:0 conv: without the reduce, relative weight distance %.3g\n", o.off);
    assert_false(o.same);
    assert_true(o.off > 50 * TOL16);
    run_cfg bad = {CONV, "cuda-fp16:0", SGD, 0, B + 1, 0}; /* rank 1's second sample */
    train_pair(&bad, true, &o);
    printf("  cuda-fp16:0 overflow on rank 1: skipped %lld single, %lld and %lld ranks, "
           "scales %g %g %g, distance %.3g\n",
           (long long)o.skipped[0], (long long)o.skipped[1], (long long)o.skipped[2],
           (double)o.scale[0], (double)o.scale[1], (double)o.scale[2], o.off);
    assert_int_equal(o.skipped[0], 1);
    assert_int_equal(o.skipped[1], 1);
    assert_int_equal(o.skipped[2], 1);
    assert_true(o.scale[1] == o.scale[0] && o.scale[2] == o.scale[0]);
    assert_true(o.same);
    assert_true(o.off < TOL16);
    train_pair(&bad, false, &o);
    assert_int_equal(o.skipped[1], 0);
    assert_int_equal(o.skipped[2], 1);
    assert_false(o.same);
}

/* Removed after two steps (the third would replay a graph with the
 * allreduces): the ranks then train apart, eagerly. */
static void test_remove(void **st)
{
    (void)st;
    run_cfg c = {CONV, "cuda:0", SGD, 0, -1, 3};
    pair_out o;
    train_pair(&c, true, &o);
    printf("  cuda:0 reduce removed before step 4: %llu eager, %llu captured, %llu replayed\n",
           (unsigned long long)o.steps[0].eager, (unsigned long long)o.steps[0].captured,
           (unsigned long long)o.steps[0].replayed);
    assert_false(o.same);
    assert_int_equal(o.steps[0].replayed, 0); /* the 4th step: not the graph of the 3rd */
}

/* a host reduce's callback, which cuda refuses before calling */
static int host_sum(void *ctx, float *buf, size_t n)
{
    (void)ctx;
    (void)buf;
    (void)n;
    return -DLG_EINTERNAL;
}

static void expect_line(int rc, int code, dlg_net *net, const char *text)
{
    assert_int_equal(rc, -code);
    if (!strstr(dlg_net_error(net), text))
        fail_msg("'%s' not in: %s", text, dlg_net_error(net));
    assert_int_equal(dlg_net_status(net), 0); /* not sticky */
}

static void test_misuse(void **st)
{
    (void)st;
    ranks2 rr = {0};
    dp_rank a = {.rank = 0, .shared = &rr};
    dlg_net *ref = build(CONV, "ref", B);
    assert_non_null(ref);
    assert_true(dlg_net_host_memory(ref));
    expect_line(dlg_net_set_device_reduce(ref, 2, 0, bcast2, &a), DLG_ENOTSUP, ref,
                "dlg_net_set_grad_reduce");
    dlg_net_destroy(ref);

    dlg_net *cu = build(CONV, "cuda:0", B);
    assert_non_null(cu);
    assert_false(dlg_net_host_memory(cu));
    expect_line(dlg_net_set_grad_reduce(cu, host_sum, &a, 2), DLG_ENOTSUP, cu,
                "dlg_net_set_device_reduce");
    expect_line(dlg_net_set_device_reduce(cu, 2, 2, bcast2, &a), DLG_EINVAL, cu, "rank 2 of 2");
    expect_line(dlg_net_set_device_reduce(cu, -1, 0, bcast2, &a), DLG_EINVAL, cu, "rank 0 of -1");
    assert_int_equal(dlg_net_set_device_reduce(cu, 0, 0, NULL, NULL), 0);
    /* no NCCL where the module looks: refused here, in setup */
    const char *was = getenv("DLGAUGE_NCCL_LIB");
    char *keep = was ? strdup(was) : NULL;
    setenv("DLGAUGE_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
    dlg_net *nonccl = build(CONV, "cuda:0", B);
    assert_non_null(nonccl);
    int rc = dlg_net_set_device_reduce(nonccl, 2, 1, bcast2, &a);
    printf("  without NCCL: %s\n", dlg_net_error(nonccl));
    expect_line(rc, DLG_ENOTSUP, nonccl, "NCCL");
    dlg_net_destroy(nonccl);
    if (keep)
        setenv("DLGAUGE_NCCL_LIB", keep, 1);
    else
        unsetenv("DLGAUGE_NCCL_LIB");
    free(keep);
    /* one rank alone: a communicator of one, the plain SGD step */
    pthread_barrier_init(&rr.bar, NULL, 1);
    assert_int_equal(dlg_net_set_device_reduce(cu, 1, 0, bcast2, &a), 0);
    assert_int_equal(feed(CONV, cu, 0, 0, B, -1), 0);
    assert_int_equal(dlg_net_train_step(cu, &SGD), 0);
    uint64_t hh;
    assert_int_equal(dlg_net_param_hash(cu, &hh), 0);
    pthread_barrier_destroy(&rr.bar);
    dlg_net_destroy(cu);

    dlg_net *inf = dp_inference_net("cuda:0", IMG);
    expect_line(dlg_net_set_device_reduce(inf, 2, 0, bcast2, &a), DLG_EINVAL, inf,
                "planned for training");
    dlg_net_destroy(inf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_fp32), cmocka_unit_test(test_lstm_clip),
        cmocka_unit_test(test_fp16),      cmocka_unit_test(test_remove),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
