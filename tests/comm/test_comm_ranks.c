/* allreduce and p2p over n ranks without MPI: one thread per rank, each
 * with its own mock host whose comm_* calls meet the others' at a
 * barrier.  Known answers (every element, every type), nccl-tests'
 * factors, items on rank 0 only, and a wrong element on one rank failing
 * every rank with the one line that names it.  Each rank's clock is its
 * own and moves only in its data ops (rank k's take (k + 1) us each), so
 * the op times are known answers. */
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

#include "comm_drive.h"

#define MAX_RANKS 64
#define STEPS 4

/* The ranks' meeting point. */
typedef struct world {
    int n;
    pthread_barrier_t bar;
    const void *send[MAX_RANKS];
    int to[MAX_RANKS];
    size_t bytes[MAX_RANKS];
    /* adds 1 to element `elem` of rank `rank`'s recv after its data op
     * number `op` (1: begin_timed's; 0: never) */
    int bad_rank, bad_op;
    size_t bad_elem;
    dlg_comm_type bad_type; /* the workload's element type */
} world;

typedef struct rank_host {
    mock_host m; /* first: the mock's ctx is its address */
    world *w;
    int rank, data_ops;
    uint64_t clock_ns; /* now_ns: (rank + 1) us per data op */
    const char *name;
    const char *const *overrides;
    cd_result r;
    bool loaded;
} rank_host;

static rank_host *rh(const dlg_host *h) { return (rank_host *)h->ctx; }

static size_t tsize(dlg_comm_type t) { return t == DLG_COMM_F32 ? 4 : 8; }

static void c_info(const dlg_host *h, dlg_rank_info *out)
{
    *out = (dlg_rank_info){sizeof *out, rh(h)->rank, rh(h)->w->n, "threads", "test_comm_ranks",
                           rh(h)->rank, rh(h)->w->n, (uint64_t)getpid()};
}

static void add_one(void *buf, size_t i, dlg_comm_type t)
{
    if (t == DLG_COMM_F32)
        ((float *)buf)[i] += 1;
    else if (t == DLG_COMM_F64)
        ((double *)buf)[i] += 1;
    else
        ((int64_t *)buf)[i] += 1;
}

static uint64_t c_now(const dlg_host *h) { return rh(h)->clock_ns; }

/* Out-of-place calls are the workload's ops; in place, its agreements. */
static void data_op(rank_host *r, bool data, void *recv)
{
    if (!data)
        return;
    r->clock_ns += 1000 * (uint64_t)(r->rank + 1);
    if (++r->data_ops == r->w->bad_op && r->rank == r->w->bad_rank)
        add_one(recv, r->w->bad_elem, r->w->bad_type);
}

static int c_allreduce(const dlg_host *h, const void *send, void *recv, size_t count, dlg_comm_type t)
{
    rank_host *r = rh(h);
    world *w = r->w;
    void *sum = calloc(count ? count : 1, 8);
    w->send[r->rank] = send;
    w->bytes[r->rank] = count * tsize(t);
    pthread_barrier_wait(&w->bar);
    for (int k = 0; k < w->n; k++)
        for (size_t i = 0; i < count; i++) {
            if (t == DLG_COMM_F32)
                ((float *)sum)[i] += ((const float *)w->send[k])[i];
            else if (t == DLG_COMM_F64)
                ((double *)sum)[i] += ((const double *)w->send[k])[i];
            else
                ((int64_t *)sum)[i] += ((const int64_t *)w->send[k])[i];
        }
    pthread_barrier_wait(&w->bar); /* all have read every send */
    memcpy(recv, sum, count * tsize(t));
    free(sum);
    data_op(r, send != recv, recv);
    return 0;
}

static int c_sendrecv(const dlg_host *h, const void *sbuf, int to, void *rbuf, int from, size_t bytes)
{
    rank_host *r = rh(h);
    world *w = r->w;
    w->send[r->rank] = sbuf;
    w->to[r->rank] = to;
    w->bytes[r->rank] = bytes;
    pthread_barrier_wait(&w->bar);
    int rc = 0;
    if (from < 0 || from >= w->n || w->to[from] != r->rank || w->bytes[from] != bytes)
        rc = h->error(h, DLG_EINTERNAL, "rank %d: sendrecv from %d, which sends to %d", r->rank, from,
                      from >= 0 && from < w->n ? w->to[from] : -1);
    else
        memcpy(rbuf, w->send[from], bytes);
    pthread_barrier_wait(&w->bar);
    data_op(r, true, rbuf);
    return rc;
}

static int c_bcast(const dlg_host *h, void *buf, size_t bytes, int root)
{
    return h->error(h, DLG_EINTERNAL, "bcast(%p, %zu, %d): not used by comm.so", buf, bytes, root);
}

static int c_barrier(const dlg_host *h)
{
    pthread_barrier_wait(&rh(h)->w->bar);
    return 0;
}

static void *run_rank(void *arg)
{
    rank_host *r = arg;
    r->loaded = cd_run(&r->m.host, r->name, r->overrides, STEPS, &r->r);
    return NULL;
}

/* Runs workload `name` on n threaded ranks; ranks[] keeps each one's
 * result and last error line (ranks[k].m.last_error). */
static void run_world(world *w, rank_host *ranks, int n, const char *name, const char *const *ov)
{
    w->n = n;
    assert_int_equal(pthread_barrier_init(&w->bar, NULL, (unsigned)n), 0);
    pthread_t th[MAX_RANKS];
    for (int k = 0; k < n; k++) {
        rank_host *r = &ranks[k];
        memset(r, 0, sizeof *r);
        mock_host_init(&r->m);
        r->m.host.comm_info = c_info;
        r->m.host.comm_allreduce = c_allreduce;
        r->m.host.comm_bcast = c_bcast;
        r->m.host.comm_sendrecv = c_sendrecv;
        r->m.host.comm_barrier = c_barrier;
        r->m.host.now_ns = c_now;
        r->w = w;
        r->rank = k;
        r->name = name;
        r->overrides = ov;
        assert_int_equal(pthread_create(&th[k], NULL, run_rank, r), 0);
    }
    for (int k = 0; k < n; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&w->bar);
    for (int k = 0; k < n; k++) {
        assert_true(ranks[k].loaded);
        mock_host_fini(&ranks[k].m);
    }
}

/* n ranks of name on bytes of type (and one more option, or NULL), every
 * call of every rank passed; the caller frees the ranks. */
static rank_host *run_passed(const char *name, int n, const char *type, long long bytes, const char *more)
{
    char b[64], t[64];
    snprintf(b, sizeof b, "bytes=%lld", bytes);
    snprintf(t, sizeof t, "type=%s", type);
    const char *ov[] = {b, t, more, NULL};
    world w = {0};
    rank_host *ranks = calloc(MAX_RANKS, sizeof *ranks);
    assert_non_null(ranks);
    run_world(&w, ranks, n, name, ov);
    for (int k = 0; k < n; k++) {
        const cd_result *r = &ranks[k].r;
        if (r->setup_rc || r->begin_rc || r->step_rc || r->report_rc)
            fail_msg("%s %s, rank %d of %d: %d %d %d %d: %s", name, type, k, n, r->setup_rc, r->begin_rc,
                     r->step_rc, r->report_rc, ranks[k].m.last_error);
    }
    return ranks;
}

/* Every rank checked every element and agreed; the fields as nccl-tests. */
static void all_ok(const char *name, int n, const char *type, long long bytes, double factor)
{
    rank_host *ranks = run_passed(name, n, type, bytes, NULL);
    for (int k = 0; k < n; k++) {
        cd_result *r = &ranks[k].r;
        assert_int_equal(r->items, k == 0 ? (uint64_t)bytes * STEPS : 0);
        assert_true(wr_double(&r->fields, "busbw_factor") == factor);
        double alg = wr_double(&r->fields, "algbw_bytes_per_s");
        assert_true(alg > 0);
        assert_true(wr_double(&r->fields, "busbw_bytes_per_s") == alg * factor);
        /* the time is every rank's mean, averaged: the same on all */
        assert_true(wr_double(&r->fields, "op_time_us") == wr_double(&ranks[0].r.fields, "op_time_us"));
    }
    free(ranks);
}

/* ops_per_step = 4: each step (and begin_timed's checked one) runs 4 ops
 * on the same buffers, every element still right after them; rank 0
 * counts 4 messages a step; a step's time / 4 is an op's, (k + 1) us on
 * rank k, averaged over the n ranks: (n + 1) / 2 us. */
static void ops_per_step(const char *name, int n, const char *type, long long bytes)
{
    rank_host *ranks = run_passed(name, n, type, bytes, "ops_per_step=4");
    for (int k = 0; k < n; k++) {
        cd_result *r = &ranks[k].r;
        assert_int_equal(ranks[k].data_ops, 4 * (STEPS + 1));
        assert_int_equal(r->items, k == 0 ? 4 * (uint64_t)bytes * STEPS : 0);
        double want = (n + 1) / 2.0;
        double us = wr_double(&r->fields, "op_time_us"), p50 = wr_double(&r->fields, "op_median_us");
        if (fabs(us - want) > 1e-9 || fabs(p50 - want) > 1e-9)
            fail_msg("%s, rank %d of %d: op_time_us %.12g, op_median_us %.12g, want %g", name, k, n, us, p50, want);
        assert_true(fabs(wr_double(&r->fields, "algbw_bytes_per_s") - (double)bytes / (want / 1e6)) <=
                    1e-9 * (double)bytes / (want / 1e6));
    }
    free(ranks);
}

static void test_ops_allreduce_3_f64(void **s) { (void)s, ops_per_step("allreduce", 3, "float64", 8 * 777); }
static void test_ops_p2p_2_i64(void **s) { (void)s, ops_per_step("p2p", 2, "int64", 8 * 64); }

static void test_allreduce_3_f32(void **s) { (void)s, all_ok("allreduce", 3, "float32", 4 * 1000, 4.0 / 3); }
static void test_allreduce_3_f64(void **s) { (void)s, all_ok("allreduce", 3, "float64", 8 * 777, 4.0 / 3); }
static void test_allreduce_2_i64(void **s) { (void)s, all_ok("allreduce", 2, "int64", 8 * 200, 1.0); }
/* More ranks than the pattern's period (61): its full cycles and the rest. */
static void test_allreduce_63_f32(void **s) { (void)s, all_ok("allreduce", 63, "float32", 4 * 130, 2.0 * 62 / 63); }
static void test_p2p_3_f32(void **s) { (void)s, all_ok("p2p", 3, "float32", 4 * 1000, 1.0); }
static void test_p2p_2_i64(void **s) { (void)s, all_ok("p2p", 2, "int64", 8 * 64, 1.0); }

/* One wrong element on one rank: every rank fails at the same call, each
 * with the line naming that rank, element, got and want. */
static void one_wrong(const char *name, int n, int bad_rank, int bad_op, size_t elem, const char *type,
                      const char *want_line, bool at_report)
{
    char t[64];
    snprintf(t, sizeof t, "type=%s", type);
    const char *ov[] = {"bytes=4000", t, NULL};
    world w = {.bad_rank = bad_rank, .bad_op = bad_op, .bad_elem = elem,
               .bad_type = !strcmp(type, "float32") ? DLG_COMM_F32 : !strcmp(type, "float64") ? DLG_COMM_F64
                                                                                                : DLG_COMM_I64};
    rank_host *ranks = calloc(MAX_RANKS, sizeof *ranks);
    assert_non_null(ranks);
    run_world(&w, ranks, n, name, ov);
    for (int k = 0; k < n; k++) {
        cd_result *r = &ranks[k].r;
        assert_int_equal(r->setup_rc, 0);
        assert_int_equal(at_report ? r->report_rc : r->begin_rc, -DLG_EINTERNAL);
        if (!strstr(ranks[k].m.last_error, want_line))
            fail_msg("rank %d: '%s' lacks '%s'", k, ranks[k].m.last_error, want_line);
        assert_int_equal(ranks[k].m.errors, 1); /* one line, no more */
    }
    free(ranks);
}

/* element 5 sums (5+0) + (5+1) + (5+2) = 18 over 3 ranks */
static void test_allreduce_wrong_before(void **s)
{
    (void)s;
    one_wrong("allreduce", 3, 1, 1, 5, "float32",
              "allreduce: wrong result after the warm-up on rank 1, element 5: got 19, want 18 (float32, 3 ranks)",
              false);
}

/* the last timed step's sum is the one report checks: element 60 of 2
 * ranks sums 60 + (60 + 1) % 61 = 60 (the pattern wraps at 61) */
static void test_allreduce_wrong_after(void **s)
{
    (void)s;
    one_wrong("allreduce", 2, 0, 1 + STEPS, 60, "float64",
              "allreduce: wrong result after the timed steps on rank 0, element 60: got 61, want 60 (float64, 2 ranks)",
              true);
}

/* rank 2 receives rank 1's element 7: (7 + 1) % 61 = 8; one rank
 * receives its own */
static void test_p2p_wrong(void **s)
{
    (void)s;
    one_wrong("p2p", 3, 2, 1, 7, "int64",
              "p2p: wrong result after the warm-up on rank 2, element 7: got 9, want 8 (int64, 3 ranks)", false);
    one_wrong("p2p", 1, 0, 1 + STEPS, 3, "float32",
              "p2p: wrong result after the timed steps on rank 0, element 3: got 4, want 3 (float32, 1 rank)", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce_3_f32),    cmocka_unit_test(test_allreduce_3_f64),
        cmocka_unit_test(test_allreduce_2_i64),    cmocka_unit_test(test_allreduce_63_f32),
        cmocka_unit_test(test_p2p_3_f32),          cmocka_unit_test(test_p2p_2_i64),
        cmocka_unit_test(test_allreduce_wrong_before), cmocka_unit_test(test_allreduce_wrong_after),
        cmocka_unit_test(test_p2p_wrong),          cmocka_unit_test(test_ops_allreduce_3_f64),
        cmocka_unit_test(test_ops_p2p_2_i64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
