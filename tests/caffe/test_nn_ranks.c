/* Data-parallel training in the nn workloads (plugins/workloads/caffe/
 * nn_ranks.c) without MPI: two mock hosts in two threads play two ranks,
 * their comm_allreduce a barrier and a sum.  alexnet (caffe.so) and
 * lstm-ptb (mxnet.so) train on both: the gradients go through the
 * allreduce every step, each rank sees its own data (its losses differ),
 * and the weight check at the report passes; ranks given different
 * learning rates are caught by it, ranks that start apart at the first step; one rank with the ranks ABI gives the
 * losses of a host without it; inference reduces nothing. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"
#include "workload_run.h"

#define MAX_BYTES ((size_t)1 << 24) /* an engine bucket: 4 Mi floats */

typedef struct shared {
    int size;
    pthread_barrier_t bar;
    void *posted[2];
} shared;

/* One rank: its mock host first, so the host pointer is the rank's. */
typedef struct rank_host {
    mock_host m;
    shared *sh;
    int rank;
    void *tmp;
    int f32_calls, i64_calls, f64_calls;
    double f64_sent[8]; /* the start of what this rank sent in its last F64 allreduce: its own figures */
    /* the run */
    const char *so, *name;
    const char *const *over;
    int steps;
    wr_result r;
    int report_rc;
} rank_host;

static void r_info(const dlg_host *h, dlg_rank_info *out)
{
    const rank_host *rh = (const rank_host *)h;
    out->rank = rh->rank;
    out->size = rh->sh->size;
    out->engine = "test";
    out->library = "";
}

static int r_allreduce(const dlg_host *h, const void *send, void *recv, size_t count,
                       dlg_comm_type t)
{
    rank_host *rh = (rank_host *)h;
    size_t es = t == DLG_COMM_F32 ? 4 : 8, bytes = count * es;
    if (bytes > MAX_BYTES)
        return h->error(h, DLG_EINVAL, "test allreduce: %zu bytes of type %d", bytes, (int)t);
    if (send != recv)
        memmove(recv, send, bytes);
    if (rh->sh->size == 1)
        return 0;
    rh->f32_calls += t == DLG_COMM_F32;
    rh->i64_calls += t == DLG_COMM_I64;
    rh->f64_calls += t == DLG_COMM_F64;
    if (t == DLG_COMM_F64)
        memcpy(rh->f64_sent, recv, (count < 8 ? count : 8) * sizeof(double));
    rh->sh->posted[rh->rank] = recv;
    pthread_barrier_wait(&rh->sh->bar);
    const void *a = rh->sh->posted[0], *b = rh->sh->posted[1];
    for (size_t i = 0; i < count; i++)
        if (t == DLG_COMM_F32)
            ((float *)rh->tmp)[i] = ((const float *)a)[i] + ((const float *)b)[i];
        else if (t == DLG_COMM_F64)
            ((double *)rh->tmp)[i] = ((const double *)a)[i] + ((const double *)b)[i];
        else
            ((int64_t *)rh->tmp)[i] = ((const int64_t *)a)[i] + ((const int64_t *)b)[i];
    pthread_barrier_wait(&rh->sh->bar);
    memcpy(recv, rh->tmp, bytes);
    return 0;
}

/* root's bytes to every rank: the root posts, the others copy. */
static int r_bcast(const dlg_host *h, void *buf, size_t bytes, int root)
{
    rank_host *rh = (rank_host *)h;
    if (rh->sh->size == 1)
        return 0;
    rh->sh->posted[rh->rank] = buf;
    pthread_barrier_wait(&rh->sh->bar);
    if (rh->rank != root)
        memcpy(buf, rh->sh->posted[root], bytes);
    pthread_barrier_wait(&rh->sh->bar);
    return 0;
}

static int r_barrier(const dlg_host *h)
{
    const rank_host *rh = (const rank_host *)h;
    if (rh->sh->size > 1)
        pthread_barrier_wait(&rh->sh->bar);
    return 0;
}

/* wr_run_with's sequence on this rank's host: setup, steps, report. */
static void *rank_main(void *arg)
{
    rank_host *rh = arg;
    wr_result *r = &rh->r;
    memset(r, 0, sizeof *r);
    r->setup_rc = -DLG_EINTERNAL;
    const dlg_plugin_desc *d = mock_load_plugin(rh->so, DLG_KIND_WORKLOAD, rh->name);
    dlg_value vals[64];
    memset(vals, 0, sizeof vals);
    if (!d || mock_options(d->options, vals, rh->over) != 0)
        return NULL;
    const dlg_workload_ops *ops = d->ops;
    dlg_job_info job = {.struct_size = sizeof job, .job = "t", .cpus = 2, .seed = 7};
    void *state = NULL;
    r->setup_rc = ops->setup(&rh->m.host, vals, &job, &state);
    if (r->setup_rc == 0) {
        for (int i = 0; i < rh->steps && r->step_rc == 0; i++) {
            dlg_step s = {0};
            if ((r->step_rc = ops->step(state, &s)) == 0) {
                r->steps_done++;
                r->items += s.items;
            }
        }
        if (r->step_rc == 0)
            rh->report_rc = ops->report(state, &wr_api, (dlg_fields *)r);
        ops->teardown(state);
    }
    snprintf(r->error, sizeof r->error, "%s", rh->m.last_error);
    snprintf(r->log, sizeof r->log, "%s", rh->m.last_log);
    return NULL;
}

/* Runs `size` ranks (1 or 2) of a workload, rank i with overrides over[i]. */
static void run_ranks(rank_host *rh, int size, const char *so, const char *name,
                      const char *const *over[2], int steps)
{
    shared sh = {.size = size};
    pthread_barrier_init(&sh.bar, NULL, (unsigned)size);
    pthread_t tid[2];
    for (int i = 0; i < size; i++) {
        rank_host *x = &rh[i];
        memset(x, 0, sizeof *x);
        mock_host_init(&x->m);
        x->m.host.comm_info = r_info;
        x->m.host.comm_allreduce = r_allreduce;
        x->m.host.comm_barrier = r_barrier;
        x->m.host.comm_bcast = r_bcast;
        x->sh = &sh;
        x->rank = i;
        x->tmp = malloc(MAX_BYTES);
        assert_non_null(x->tmp);
        x->so = so;
        x->name = name;
        x->over = over[i];
        x->steps = steps;
        assert_int_equal(pthread_create(&tid[i], NULL, rank_main, x), 0);
    }
    for (int i = 0; i < size; i++) {
        pthread_join(tid[i], NULL);
        free(rh[i].tmp);
        mock_host_fini(&rh[i].m);
    }
    pthread_barrier_destroy(&sh.bar);
}

static void ok(const rank_host *rh, int size)
{
    for (int i = 0; i < size; i++)
        if (rh[i].r.setup_rc || rh[i].r.step_rc || rh[i].report_rc)
            fail_msg("rank %d: setup %d, step %d, report %d: %s", i, rh[i].r.setup_rc,
                     rh[i].r.step_rc, rh[i].report_rc, rh[i].r.error);
}

static const char *const cnn_train[] = {"mode=train", "batch=2", "crop=67", "classes=10",
                                        "lr=0.01", NULL};

/* Two ranks train alexnet: one allreduce of the gradients per step (its
 * ~24 M params are 6 buckets), the weight check once, each rank on its own
 * synthetic batch (different losses), each rank's own items.  The report
 * is the job's on both: the mean of the ranks' losses, gflops over both
 * ranks' images, the peak summed (one F64 allreduce). */
static void test_cnn_two_ranks(void **st)
{
    (void)st;
    rank_host rh[2];
    const char *const *over[2] = {cnn_train, cnn_train};
    run_ranks(rh, 2, "caffe.so", "alexnet", over, 3);
    ok(rh, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rh[i].r.items, 3 * 2);
        assert_true(rh[i].f32_calls >= 3 && rh[i].f32_calls % 3 == 0);
        assert_int_equal(rh[i].i64_calls, 2); /* before the first step and at the report */
        assert_int_equal(rh[i].f64_calls, 1);     /* the report's figures */
    }
    double l0 = rh[0].f64_sent[0], l1 = rh[1].f64_sent[0]; /* each rank's own last loss */
    printf("  alexnet, 2 ranks: losses %.6f and %.6f, %d gradient allreduces\n", l0, l1,
           rh[0].f32_calls);
    assert_true(l0 != l1);
    for (int i = 0; i < 2; i++) {
        assert_true(wr_double(&rh[i].r, "loss") == (l0 + l1) / 2);
        assert_true(wr_double(&rh[i].r, "top1") == (rh[0].f64_sent[1] + rh[1].f64_sent[1]) / 2);
        /* both ranks' peaks (each known: its own cores), and its source says so */
        double p0 = rh[0].f64_sent[4], p1 = rh[1].f64_sent[4];
        assert_true(p0 > 0 && p1 > 0);
        assert_true(fabs(wr_double(&rh[i].r, "peak_gflops") - (p0 + p1) / 1e9) < 1e-6);
        assert_non_null(strstr(wr_field(&rh[i].r, "peak_source"), "the 2 ranks' peaks summed"));
    }
    /* gflops: both ranks' 2 timed steps x 2 images over the slower rank's time */
    assert_true(rh[0].f64_sent[3] == 4 && rh[1].f64_sent[3] == 4);
    assert_true(wr_double(&rh[0].r, "gflops") == wr_double(&rh[1].r, "gflops"));
}

/* Ranks that update differently (lr) end with different weights: the
 * check says so on both, after the last step. */
static void test_cnn_divergence_caught(void **st)
{
    (void)st;
    static const char *const other_lr[] = {"mode=train", "batch=2", "crop=67", "classes=10",
                                           "lr=0.02", NULL};
    rank_host rh[2];
    const char *const *over[2] = {cnn_train, other_lr};
    run_ranks(rh, 2, "caffe.so", "alexnet", over, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rh[i].r.step_rc, 0);
        assert_int_equal(rh[i].report_rc, -DLG_EINVAL);
        assert_non_null(strstr(rh[i].r.error, "ranks' weights diverged after step 2"));
    }
}

/* Ranks that would start from different nets (here another classifier
 * size) are stopped at the top of the first step, before a gradient is
 * summed: not in setup, where one rank's failure before the check's
 * collective would leave the other waiting in it (the runner agrees on
 * setup only after setup). */
static void test_cnn_start_differs(void **st)
{
    (void)st;
    static const char *const nine[] = {"mode=train", "batch=2", "crop=67", "classes=9",
                                       "lr=0.01", NULL};
    rank_host rh[2];
    const char *const *over[2] = {cnn_train, nine};
    run_ranks(rh, 2, "caffe.so", "alexnet", over, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rh[i].r.setup_rc, 0);
        assert_int_equal(rh[i].r.step_rc, -DLG_EINVAL);
        assert_int_equal(rh[i].r.steps_done, 0);
        assert_non_null(strstr(rh[i].r.error, "ranks' weights diverged before the first step"));
        assert_int_equal(rh[i].f32_calls, 0);
    }
}

/* One rank with the ranks ABI trains as a host without it: same losses. */
static void test_cnn_one_rank_unchanged(void **st)
{
    (void)st;
    rank_host rh[1];
    const char *const *over[2] = {cnn_train, NULL};
    run_ranks(rh, 1, "caffe.so", "alexnet", over, 2);
    ok(rh, 1);
    wr_result plain;
    wr_run("caffe.so", "alexnet", cnn_train, 2, &plain);
    assert_int_equal(plain.step_rc, 0);
    assert_string_equal(wr_field(&rh[0].r, "loss"), wr_field(&plain, "loss"));
    assert_int_equal(rh[0].f32_calls, 0);
}

/* Inference: each rank infers its own data, nothing is reduced. */
static void test_cnn_infer(void **st)
{
    (void)st;
    static const char *const inf[] = {"mode=infer", "batch=2", "crop=67", "classes=10", NULL};
    rank_host rh[2];
    const char *const *over[2] = {inf, inf};
    run_ranks(rh, 2, "caffe.so", "alexnet", over, 2);
    ok(rh, 2);
    assert_int_equal(rh[0].f32_calls + rh[1].f32_calls + rh[0].i64_calls, 0);
    assert_true(rh[0].f64_sent[0] != rh[1].f64_sent[0]); /* each rank its own data */
    assert_true(wr_double(&rh[0].r, "loss") == (rh[0].f64_sent[0] + rh[1].f64_sent[0]) / 2);
}

/* lstm-ptb: each rank its own contiguous slice of the corpus, clipped SGD
 * on the averaged gradients, identical weights at the end. */
static void test_lm_two_ranks(void **st)
{
    (void)st;
    char dir[] = "/tmp/dlg_ranks_XXXXXX", path[300], spec[400], cmd[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c", dir);
    dlg_data_err err = {0};
    if (dlg_synth_text_files(path, 3000, 40, 3, 1, &err) < 0)
        fail_msg("corpus: %s", err.msg);
    snprintf(spec, sizeof spec, "data=text:%s.train.txt", path);
    const char *const o[] = {spec, "hidden=16", "layers=1", "bptt=8", "batch=2", "dropout=0",
                             "clip=0.1", NULL};
    rank_host rh[2];
    const char *const *over[2] = {o, o};
    run_ranks(rh, 2, "mxnet.so", "lstm-ptb", over, 4);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    ok(rh, 2);
    assert_int_equal(rh[0].f32_calls, 4);
    assert_int_equal(rh[0].i64_calls, 3); /* the vocabularies, the weights at the start and at the end */
    /* each rank's own loss sum and tokens; the report pools them */
    double s0 = rh[0].f64_sent[0], s1 = rh[1].f64_sent[0], t0 = rh[0].f64_sent[1], t1 = rh[1].f64_sent[1];
    double l0 = s0 / t0, l1 = s1 / t1;
    printf("  lstm-ptb, 2 ranks: mean losses %.6f and %.6f\n", l0, l1);
    assert_true(l0 != l1);
    for (int i = 0; i < 2; i++) {
        assert_true(wr_double(&rh[i].r, "loss") == (s0 + s1) / (t0 + t1));
        assert_int_equal((int64_t)wr_double(&rh[i].r, "loss_tokens"), (int64_t)(t0 + t1));
    }
    assert_int_equal(rh[0].r.items, 4 * 8 * 2);
}

/* lstm-ptb, a text file per rank: each rank numbers its own words, so
 * the first step fails on both, naming both files and the first word id
 * that differs.  Both used to train, summing gradients of unrelated words. */
static void test_lm_vocab_differs(void **st)
{
    (void)st;
    char dir[] = "/tmp/dlg_ranks_XXXXXX", path[2][300], spec[2][400], cmd[300];
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 2; i++) {
        char base[300];
        snprintf(base, sizeof base, "%s/c%d", dir, i);
        dlg_data_err err = {0};
        if (dlg_synth_text_files(base, 3000, 40, (uint64_t)i + 1, 1, &err) < 0)
            fail_msg("corpus: %s", err.msg);
        snprintf(path[i], sizeof path[i], "%s.train.txt", base);
        snprintf(spec[i], sizeof spec[i], "data=text:%s", path[i]);
    }
    const char *const o0[] = {spec[0], "hidden=8", "layers=1", "bptt=4", "batch=2", NULL};
    const char *const o1[] = {spec[1], "hidden=8", "layers=1", "bptt=4", "batch=2", NULL};
    rank_host rh[2];
    const char *const *over[2] = {o0, o1};
    run_ranks(rh, 2, "mxnet.so", "lstm-ptb", over, 2);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    char want[1000];
    snprintf(want, sizeof want, "rank 1's vocabulary (from %s) numbers words unlike rank 0's (from %s): word id ",
             path[1], path[0]);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rh[i].r.setup_rc, 0);
        assert_int_equal(rh[i].r.step_rc, -DLG_EINVAL);
        assert_int_equal(rh[i].r.steps_done, 0);
        if (!strstr(rh[i].r.error, want))
            fail_msg("rank %d: '%s' lacks '%s'", i, rh[i].r.error, want);
    }
    assert_string_equal(rh[0].r.error, rh[1].r.error);
}

int main(void)
{
    /* no plan-time timing picks the convolution kernels: two runs of one
     * rank give the same losses bit for bit */
    setenv("DLG_NN_CONV_ALGO", "direct", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lm_vocab_differs),
        cmocka_unit_test(test_cnn_two_ranks),
        cmocka_unit_test(test_cnn_divergence_caught),
        cmocka_unit_test(test_cnn_start_differs),
        cmocka_unit_test(test_cnn_one_rank_unchanged),
        cmocka_unit_test(test_cnn_infer),
        cmocka_unit_test(test_lm_two_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
