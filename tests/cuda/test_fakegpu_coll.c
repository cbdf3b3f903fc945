/* The cuda backend's collectives (cuda_coll.c: NCCL, dlopened) through
 * dlg_dev_* (dev_coll.c) on the CPU stand-in GPU, with the fake NCCL
 * (fakegpu/fake_nccl.cc, named in DLGAUGE_NCCL_LIB):
 *  - 2 and 3 ranks as threads of this process (the id's broadcast a shared
 *    buffer and a barrier): allreduce out of place and in place of f32,
 *    f64 and i64 over counts that are not a multiple of the fake's 1 MiB
 *    chunk, and a sendrecv ring; every element against the known sum or
 *    the sender's data;
 *  - 2 ranks as forked processes (the fake's shared memory between them);
 *  - one rank (NCCL's copy; also a host backend's plain copy), and a host
 *    backend refusing more ranks;
 *  - ranks that disagree on a collective fail at sync with a line, none
 *    hangs; a missing NCCL is one line naming what was looked for. */
#define _GNU_SOURCE
#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define CHUNK ((size_t)1 << 20) /* the fake's bytes per step (fake_nccl.cc) */
#define MAXR 3

/* What the ranks share: the id's broadcast (thread or process barrier). */
typedef struct shared {
    pthread_barrier_t bar;
    unsigned char id[256]; /* backend.h: DLG_COLL_ID_BYTES (128) */
} shared;

typedef struct rank_arg {
    shared *sh;
    int ranks, rank;
    int mismatch; /* rank 1 reduces one element fewer */
    int bad;      /* elements or calls that were wrong */
    char msg[400];
} rank_arg;

static int bcast(void *ctx, void *buf, size_t bytes)
{
    rank_arg *a = ctx;
    if (bytes > sizeof a->sh->id)
        return -DLG_EINVAL;
    if (a->rank == 0)
        memcpy(a->sh->id, buf, bytes);
    pthread_barrier_wait(&a->sh->bar);
    if (a->rank != 0)
        memcpy(buf, a->sh->id, bytes);
    pthread_barrier_wait(&a->sh->bar);
    return 0;
}

__attribute__((format(printf, 2, 3))) static void note(rank_arg *a, const char *fmt, ...)
{
    a->bad++;
    if (a->msg[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->msg, sizeof a->msg, fmt, ap);
    va_end(ap);
}

/* Rank r's element i, exact in its type, so sums are exact. */
static void fill(void *p, dlg_dev_type t, size_t n, int r)
{
    for (size_t i = 0; i < n; i++) {
        if (t == DLG_DEV_F32)
            ((float *)p)[i] = (float)(i % 1009) * (float)(r + 1) + (float)r;
        else if (t == DLG_DEV_F64)
            ((double *)p)[i] = (double)i * 0.5 + (double)r * 1e9;
        else
            ((int64_t *)p)[i] = (int64_t)i * 1000003 + ((int64_t)r << 40);
    }
}

/* Element i summed over ranks, or rank r's own (sum = false). */
static int differs(const void *got, dlg_dev_type t, size_t i, int ranks, int r, bool sum)
{
    double want = 0;
    int64_t wi = 0;
    for (int q = sum ? 0 : r; q < (sum ? ranks : r + 1); q++) {
        if (t == DLG_DEV_F32)
            want += (double)((float)(i % 1009) * (float)(q + 1) + (float)q);
        else if (t == DLG_DEV_F64)
            want += (double)i * 0.5 + (double)q * 1e9;
        else
            wi += (int64_t)i * 1000003 + ((int64_t)q << 40);
    }
    if (t == DLG_DEV_F32)
        return ((const float *)got)[i] != (float)want;
    if (t == DLG_DEV_F64)
        return ((const double *)got)[i] != want;
    return ((const int64_t *)got)[i] != wi;
}

static size_t esize(dlg_dev_type t) { return t == DLG_DEV_F32 ? 4 : 8; }

/* Allreduce out of place and in place, n elements of t, checked. */
static void allreduce_case(rank_arg *a, dlg_dev *d, dlg_dev_type t, size_t n, void *host)
{
    size_t bytes = n * esize(t);
    void *src = dlg_dev_alloc(d, bytes), *dst = dlg_dev_alloc(d, bytes);
    if (!src || !dst)
        return note(a, "alloc: %s", dlg_dev_error(d));
    fill(host, t, n, a->rank);
    int rc = dlg_dev_upload(d, src, host, bytes);
    rc = rc ? rc : dlg_dev_allreduce(d, src, dst, n, t);
    rc = rc ? rc : dlg_dev_allreduce(d, src, src, n, t); /* in place */
    rc = rc ? rc : dlg_dev_sync(d);
    if (rc)
        return note(a, "type %d: %s", (int)t, dlg_dev_error(d));
    for (int pass = 0; pass < 2; pass++) {
        memset(host, 0, bytes);
        if (dlg_dev_download(d, host, pass ? src : dst, bytes))
            return note(a, "download: %s", dlg_dev_error(d));
        for (size_t i = 0; i < n; i++)
            if (differs(host, t, i, a->ranks, a->rank, true)) {
                note(a, "rank %d type %d %s: element %zu of %zu is wrong", a->rank, (int)t,
                     pass ? "in place" : "out of place", i, n);
                break;
            }
    }
}

/* Every rank sends its data to the next and receives the previous one's. */
static void ring_case(rank_arg *a, dlg_dev *d, dlg_dev_type t, size_t n, void *host)
{
    size_t bytes = n * esize(t);
    int to = (a->rank + 1) % a->ranks, from = (a->rank + a->ranks - 1) % a->ranks;
    void *src = dlg_dev_alloc(d, bytes), *dst = dlg_dev_alloc(d, bytes);
    if (!src || !dst)
        return note(a, "alloc: %s", dlg_dev_error(d));
    fill(host, t, n, a->rank);
    int rc = dlg_dev_upload(d, src, host, bytes);
    rc = rc ? rc : dlg_dev_sendrecv(d, src, to, dst, from, n, t);
    rc = rc ? rc : dlg_dev_sync(d);
    if (rc)
        return note(a, "sendrecv: %s", dlg_dev_error(d));
    memset(host, 0, bytes);
    if (dlg_dev_download(d, host, dst, bytes))
        return note(a, "download: %s", dlg_dev_error(d));
    for (size_t i = 0; i < n; i++)
        if (differs(host, t, i, a->ranks, from, false)) {
            note(a, "rank %d: sendrecv element %zu of %zu is not rank %d's", a->rank, i, n, from);
            break;
        }
}

static void *rank_main(void *arg)
{
    rank_arg *a = arg;
    dlg_dev *d = NULL;
    char err[256] = "";
    if (dlg_dev_open("cuda:0", &d, err, sizeof err)) {
        note(a, "open: %s", err);
        pthread_barrier_wait(&a->sh->bar); /* the others wait in bcast */
        pthread_barrier_wait(&a->sh->bar);
        return NULL;
    }
    if (dlg_dev_coll_open(d, a->ranks, a->rank, bcast, a)) {
        note(a, "coll_open: %s", dlg_dev_error(d));
        dlg_dev_close(d);
        return NULL;
    }
    size_t n32 = 2 * CHUNK / 4 + 77, n64 = 2 * CHUNK / 8 + 77; /* 3 chunks, the last short */
    void *host = malloc(n64 * 8 > n32 * 4 ? n64 * 8 : n32 * 4);
    if (!host) {
        note(a, "out of memory");
    } else if (a->mismatch) {
        size_t n = a->rank == 1 ? 999 : 1000;
        void *p = dlg_dev_alloc(d, 1000 * 4);
        int rc = p ? dlg_dev_allreduce(d, p, p, n, DLG_DEV_F32) : -1;
        rc = rc ? rc : dlg_dev_sync(d);
        if (rc != -DLG_EINVAL || !strstr(dlg_dev_error(d), "invalid usage"))
            note(a, "mismatch: rc %d, '%s'", rc, dlg_dev_error(d));
    } else {
        allreduce_case(a, d, DLG_DEV_F32, n32, host);
        allreduce_case(a, d, DLG_DEV_F64, n64, host);
        allreduce_case(a, d, DLG_DEV_I64, n64, host);
        ring_case(a, d, DLG_DEV_F32, n32, host);
        ring_case(a, d, DLG_DEV_I64, 5, host);
    }
    free(host);
    dlg_dev_close(d);
    return NULL;
}

/* ranks threads of this process; 0 when every rank checked out. */
static void run_threads(int ranks, int mismatch)
{
    shared sh;
    rank_arg a[MAXR];
    pthread_t t[MAXR];
    pthread_barrier_init(&sh.bar, NULL, (unsigned)ranks);
    for (int r = 0; r < ranks; r++) {
        a[r] = (rank_arg){.sh = &sh, .ranks = ranks, .rank = r, .mismatch = mismatch};
        assert_int_equal(pthread_create(&t[r], NULL, rank_main, &a[r]), 0);
    }
    for (int r = 0; r < ranks; r++)
        pthread_join(t[r], NULL);
    pthread_barrier_destroy(&sh.bar);
    for (int r = 0; r < ranks; r++) {
        if (a[r].bad)
            fprintf(stderr, "rank %d of %d: %d wrong: %s\n", r, ranks, a[r].bad, a[r].msg);
        assert_int_equal(a[r].bad, 0);
    }
}

static void test_two_thread_ranks(void **state)
{
    (void)state;
    run_threads(2, 0);
}

static void test_three_thread_ranks(void **state)
{
    (void)state;
    run_threads(3, 0);
}

/* Rank 1 reduces 999 elements, rank 0 1000: both fail at sync (invalid
 * usage, the fake's line on stderr), neither hangs, close aborts. */
static void test_mismatch_fails(void **state)
{
    (void)state;
    run_threads(2, 1);
}

/* Two processes: the fake's segment between them, its name gone after. */
static void test_two_process_ranks(void **state)
{
    (void)state;
    shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(sh != MAP_FAILED);
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->bar, &ba, 2);
    pthread_barrierattr_destroy(&ba);
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        pid[r] = fork();
        assert_true(pid[r] >= 0);
        if (pid[r] == 0) {
            rank_arg a = {.sh = sh, .ranks = 2, .rank = r};
            rank_main(&a);
            if (a.bad)
                fprintf(stderr, "process rank %d: %d wrong: %s\n", r, a.bad, a.msg);
            _exit(a.bad ? 1 : 0);
        }
    }
    for (int r = 0; r < 2; r++) {
        int st = 0;
        assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    pthread_barrier_destroy(&sh->bar);
    munmap(sh, sizeof *sh);
}

/* One rank: NCCL's allreduce is a copy, a sendrecv goes to oneself. */
static void test_one_rank(void **state)
{
    (void)state;
    shared sh;
    pthread_barrier_init(&sh.bar, NULL, 1);
    rank_arg a = {.sh = &sh, .ranks = 1, .rank = 0};
    rank_main(&a);
    pthread_barrier_destroy(&sh.bar);
    if (a.bad)
        fprintf(stderr, "one rank: %s\n", a.msg);
    assert_int_equal(a.bad, 0);
}

/* ref keeps its memory on the host: one rank copies, more are refused
 * (not sticky), and it has no device timer. */
static void test_host_backend(void **state)
{
    (void)state;
    dlg_dev *d = NULL;
    char err[256] = "";
    assert_int_equal(dlg_dev_open("ref", &d, err, sizeof err), 0);
    assert_int_equal(dlg_dev_coll_open(d, 2, 0, bcast, NULL), -DLG_ENOTSUP);
    assert_non_null(strstr(dlg_dev_error(d), "use the host's MPI collectives"));
    assert_int_equal(dlg_dev_timer_begin(d), -DLG_ENOTSUP);
    assert_int_equal(dlg_dev_coll_open(d, 1, 0, NULL, NULL), 0);
    int64_t in[5] = {1, -2, 3, 1ll << 40, 5}, out[5];
    int64_t *src = dlg_dev_alloc(d, sizeof in), *dst = dlg_dev_alloc(d, sizeof in);
    assert_non_null(src);
    assert_non_null(dst);
    assert_int_equal(dlg_dev_upload(d, src, in, sizeof in), 0);
    assert_int_equal(dlg_dev_allreduce(d, src, dst, 5, DLG_DEV_I64), 0);
    assert_int_equal(dlg_dev_sync(d), 0);
    assert_int_equal(dlg_dev_download(d, out, dst, sizeof out), 0);
    assert_memory_equal(out, in, sizeof in);
    memset(dst, 0, sizeof in);
    assert_int_equal(dlg_dev_sendrecv(d, src, 0, dst, 0, 5, DLG_DEV_I64), 0);
    assert_memory_equal(dst, in, sizeof in);
    /* a bad peer is sticky */
    assert_int_equal(dlg_dev_sendrecv(d, src, 1, dst, 0, 5, DLG_DEV_I64), -DLG_EINVAL);
    assert_int_equal(dlg_dev_sync(d), -DLG_EINVAL);
    dlg_dev_close(d);
}

/* No NCCL where DLGAUGE_NCCL_LIB points: one line naming it; a device
 * timer works meanwhile (the stream's events). */
static void test_missing_nccl(void **state)
{
    (void)state;
    const char *keep = getenv("DLGAUGE_NCCL_LIB");
    char *saved = keep ? strdup(keep) : NULL;
    setenv("DLGAUGE_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
    dlg_dev *d = NULL;
    char err[256] = "";
    assert_int_equal(dlg_dev_open("cuda:0", &d, err, sizeof err), 0);
    uint64_t ns = 0;
    assert_int_equal(dlg_dev_timer_begin(d), 0);
    assert_int_equal(dlg_dev_timer_end(d, &ns), 0);
    assert_int_equal(dlg_dev_coll_open(d, 1, 0, NULL, NULL), -DLG_ENOTSUP);
    const char *line = dlg_dev_error(d);
    fprintf(stderr, "(expected) %s\n", line);
    assert_non_null(
        strstr(line, "collectives on cuda:0 need NCCL: dlopen /nonexistent/libnccl.so.2: "));
    assert_null(strchr(line, '\n'));
    dlg_dev_close(d);
    if (saved)
        setenv("DLGAUGE_NCCL_LIB", saved, 1);
    else
        unsetenv("DLGAUGE_NCCL_LIB");
    free(saved);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_process_ranks), /* first: nothing loaded to fork with */
        cmocka_unit_test(test_two_thread_ranks),
        cmocka_unit_test(test_three_thread_ranks),
        cmocka_unit_test(test_one_rank),
        cmocka_unit_test(test_mismatch_fails),
        cmocka_unit_test(test_host_backend),
        cmocka_unit_test(test_missing_nccl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
