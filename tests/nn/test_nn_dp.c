/* Data-parallel training (dlg_net_set_grad_reduce): two nets as two ranks
 * in two threads, each on its half of 2b samples with batch b, their
 * gradients summed by a test-local callback (barrier + sum), against one
 * net with batch 2b on all of them.  After a few SGD steps (momentum and
 * weight decay on, no dropout) the weights must agree within a float
 * tolerance, and the two ranks' bit for bit; without the reduce they must
 * not.  A batch-norm-free conv net, a conv net with batch norm (its scale
 * and shift reduced, its running statistics per rank), and an LSTM language
 * model with gradient clipping, which must clip on the reduced norm (with
 * weight decay the gradients are scaled, without it the lr). */
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

#define B 4      /* each rank's batch; the single net's is 2B */
#define STEPS 4
#define TOL 1e-5 /* max |w_dp - w_single| / max |w_single| (measured <= 1.1e-7) */

/* ---- the test's two ranks: a barrier and a sum ------------------------- */
typedef struct ranks2 {
    pthread_barrier_t bar;
    float *buf[2];
    float *tmp[2]; /* each rank's sum, written back after both have read */
    size_t cap;
    int calls;
} ranks2;

/* ctx: the rank's dp_rank, its shared the ranks2 */
static int sum2(void *ctx, float *buf, size_t n)
{
    dp_rank *a = ctx;
    ranks2 *r = a->shared;
    if (n > r->cap)
        return -DLG_EINVAL;
    r->buf[a->rank] = buf;
    pthread_barrier_wait(&r->bar);
    for (size_t i = 0; i < n; i++)
        r->tmp[a->rank][i] = r->buf[0][i] + r->buf[1][i];
    pthread_barrier_wait(&r->bar);
    memcpy(buf, r->tmp[a->rank], n * sizeof(float));
    if (a->rank == 0)
        r->calls++;
    return 0;
}

/* ---- nets -------------------------------------------------------------- */
/* WIDE: an fc of more than DLG_NN_REDUCE_BUCKET params, reduced in place in
 * two calls, its bias packed in a third; MANY: nine fcs of 0.5 M params
 * each, packed into two buckets */
typedef enum kind { CONV = 0, CONV_BN = 1, LSTM = 2, WIDE = 3, MANY = 4 } kind;
#define MANY_IN 1000
#define WIDE_IN 2048
#define WIDE_OUT 2100

#define T 5      /* LSTM steps */
#define V 23     /* vocabulary */
#define H 12     /* LSTM width */
#define IMG 8

static dlg_net *build(kind k, const char *backend, int n)
{
    dlg_net *net;
    if (dlg_net_create(&net, "dp") < 0)
        return NULL;
    if (k == LSTM) {
        tu_lstm_lm_layers(net, T, n, V, H, false);
    } else if (k == MANY) {
        int x = dlg_input(net, "data", n, MANY_IN, 1, 1), y = dlg_labels(net, "label", n);
        for (int i = 0; i < 9; i++) {
            char name[16];
            snprintf(name, sizeof name, "f%d", i);
            x = dlg_fc(net, name, x, i % 2 ? MANY_IN : MANY_IN / 2);
        }
        dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", x, 10), y);
    } else if (k == WIDE) {
        int x = dlg_input(net, "data", n, WIDE_IN, 1, 1), y = dlg_labels(net, "label", n);
        dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", x, WIDE_OUT), y);
    } else {
        dp_conv_layers(net, n, IMG, 16, k == CONV_BN);
    }
    dlg_plan_opts po = {.backend = backend, .threads = 1, .train = true, .seed = 7};
    return dp_plan(net, &po);
}

/* Step s's data for all 2B samples (the single net's batch); rank r takes
 * samples [r*B, (r+1)*B): images by sample, sequences by stream. */
static int feed(kind k, dlg_net *net, int s, int first, int n)
{
    if (k == LSTM)
        return dp_feed_lm(net, s, first, n, 2 * B, T, V, H);
    const size_t per = k == WIDE ? WIDE_IN : k == MANY ? MANY_IN : 3 * IMG * IMG;
    return dp_feed_images(net, s, first, n, 2 * B, per, k == WIDE ? 2000 : 0, -1);
}

typedef struct run_cfg {
    kind k;
    dlg_sgd sgd;
    double max_norm; /* > 0: dlg_net_train_step_clip */
} run_cfg;

static int step(dlg_net *net, const run_cfg *c, dlg_clip_stats *st)
{
    return c->max_norm > 0 ? dlg_net_train_step_clip(net, &c->sgd, c->max_norm, st)
                           : dlg_net_train_step(net, &c->sgd);
}

static int rank_step(dp_rank *r, int s)
{
    const run_cfg *c = r->cfg;
    int rc = feed(c->k, r->net, s, r->rank * B, B);
    return rc ? rc : step(r->net, c, &r->st);
}

/* Trains the single net and the two ranks (reduced or not); returns the
 * ranks' weights' distance from the single net's; *same: the two ranks'
 * weights hash alike. */
static double train_pair(const char *backend, const run_cfg *c, bool reduce, bool *same,
                         dlg_clip_stats *single_st, dlg_clip_stats *rank_st, double *mean_off)
{
    dlg_net *one = build(c->k, backend, 2 * B), *r[2] = {build(c->k, backend, B), build(c->k, backend, B)};
    assert_non_null(one);
    assert_non_null(r[0]);
    assert_non_null(r[1]);
    *single_st = (dlg_clip_stats){0};
    for (int s = 0; s < STEPS; s++) {
        assert_int_equal(feed(c->k, one, s, 0, 2 * B), 0);
        assert_int_equal(step(one, c, single_st), 0);
    }
    ranks2 rr = {.cap = DLG_NN_REDUCE_BUCKET};
    pthread_barrier_init(&rr.bar, NULL, 2);
    dp_rank j[2];
    for (int i = 0; i < 2; i++) {
        j[i] = (dp_rank){.net = r[i], .rank = i, .shared = &rr, .cfg = c};
        rr.tmp[i] = calloc(rr.cap, sizeof(float));
        assert_non_null(rr.tmp[i]);
        if (reduce)
            assert_int_equal(dlg_net_set_grad_reduce(r[i], sum2, &j[i], 2), 0);
    }
    dp_run_ranks(j, STEPS, rank_step); /* each rank's weights hashed */
    if (reduce) /* one call per bucket, packed or in place */
        assert_int_equal(rr.calls, (c->k == WIDE ? 3 : c->k == MANY ? 2 : 1) * STEPS);
    *same = j[0].hash == j[1].hash;
    *rank_st = j[0].st;
    /* not the batch norm's running statistics: they stay per rank */
    double off = fmax(dp_weight_off(r[0], one, false), dp_weight_off(r[1], one, false));
    if (c->k == CONV_BN) { /* the ranks' running means (bn1's param 2) */
        int m = dlg_net_param(r[0], "bn1", 2);
        float *m0 = tu_read_copy(r[0], m), *m1 = tu_read_copy(r[1], m);
        assert_non_null(m0);
        assert_non_null(m1);
        for (int64_t e = 0; e < tu_count(r[0], m); e++)
            *mean_off = fmax(*mean_off, fabs((double)m0[e] - m1[e]));
        free(m0);
        free(m1);
    }
    for (int i = 0; i < 2; i++) {
        free(rr.tmp[i]);
        dlg_net_destroy(r[i]);
    }
    pthread_barrier_destroy(&rr.bar);
    dlg_net_destroy(one);
    return off;
}

static void check_equivalence(const char *backend, const run_cfg *c)
{
    bool same;
    dlg_clip_stats s1, s2;
    double mo = 0;
    double off = train_pair(backend, c, true, &same, &s1, &s2, &mo);
    printf("  %s kind %d wd %g clip %g: reduced, relative weight distance %.3g\n", backend,
           (int)c->k, (double)c->sgd.weight_decay, c->max_norm, off);
    assert_true(same);
    assert_true(off < TOL);
    if (c->max_norm > 0) { /* the ranks clipped as the whole batch did: on the reduced norm */
        assert_true(s1.clipped == STEPS);
        assert_int_equal(s2.clipped, s1.clipped);
        assert_true(fabs(s2.norm - s1.norm) <= 1e-4 * s1.norm);
    }
    off = train_pair(backend, c, false, &same, &s1, &s2, &mo);
    printf("  %s kind %d: without the reduce, relative weight distance %.3g\n", backend,
           (int)c->k, off);
    assert_false(same);
    assert_true(off > 50 * TOL);
}

static const dlg_sgd SGD = {0.05f, 0.9f, 5e-3f};

static void test_conv(void **st)
{
    (void)st;
    run_cfg c = {CONV, SGD, 0};
    for (int i = 0; i < tu_nbackends; i++)
        check_equivalence(tu_backends[i], &c);
}

/* Gradients past one bucket: a large one reduced in place in two calls,
 * many small ones packed into two buckets. */
static void test_buckets(void **st)
{
    (void)st;
    assert_true((size_t)WIDE_IN * WIDE_OUT > DLG_NN_REDUCE_BUCKET);
    assert_true((size_t)9 * MANY_IN * MANY_IN / 2 > DLG_NN_REDUCE_BUCKET);
    run_cfg wide = {WIDE, SGD, 0}, many = {MANY, SGD, 0};
    check_equivalence("ref", &wide);
    check_equivalence("ref", &many);
}

/* With batch norm the halves' batch statistics are not the whole batch's
 * (no SyncBatchNorm), so there is no single-net answer: the ranks' trained
 * weights (gamma and beta too) must still agree bit for bit, and their
 * running means, which stay local, must not. */
static void test_conv_bn(void **st)
{
    (void)st;
    run_cfg c = {CONV_BN, SGD, 0};
    for (int i = 0; i < tu_nbackends; i++) {
        bool same;
        dlg_clip_stats s1, s2;
        double mean_off = 0;
        train_pair(tu_backends[i], &c, true, &same, &s1, &s2, &mean_off);
        printf("  %s batch norm: ranks' running means differ by %.3g\n", tu_backends[i], mean_off);
        assert_true(same);
        assert_true(mean_off > 1e-3);
        train_pair(tu_backends[i], &c, false, &same, &s1, &s2, &mean_off);
        assert_false(same);
    }
}

/* max_norm well under the norm, so every step clips: on the ranks' own
 * norms the factor would differ from the whole batch's */
static void test_lstm_clip(void **st)
{
    (void)st;
    run_cfg with_wd = {LSTM, {0.5f, 0.9f, 5e-3f}, 0.05};
    run_cfg lr_path = {LSTM, {0.5f, 0.9f, 0}, 0.05}; /* the clip scales the lr */
    for (int i = 0; i < tu_nbackends; i++) {
        check_equivalence(tu_backends[i], &with_wd);
        check_equivalence(tu_backends[i], &lr_path);
    }
}

/* Misuse: an inference plan, zero ranks; NULL removes the callback. */
static void test_misuse(void **st)
{
    (void)st;
    dlg_net *net = dp_inference_net("ref", IMG);
    dp_rank a = {0};
    assert_int_equal(dlg_net_set_grad_reduce(net, sum2, &a, 2), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "planned for training"));
    assert_int_equal(dlg_net_status(net), 0); /* not sticky */
    dlg_net_destroy(net);
    dlg_net *tr = build(CONV, "ref", B);
    assert_non_null(tr);
    assert_int_equal(dlg_net_set_grad_reduce(tr, sum2, &a, 0), -DLG_EINVAL);
    assert_int_equal(dlg_net_set_grad_reduce(tr, NULL, NULL, 0), 0);
    dlg_net_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_conv_bn),
        cmocka_unit_test(test_lstm_clip),
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
