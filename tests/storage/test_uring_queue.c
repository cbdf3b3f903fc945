/* uring's read queue when io_uring_submit does not take everything: the
 * kernel taking fewer SQEs than queued (short of memory), or failing a
 * batch outright.  Every read submitted must come back from reap exactly
 * once -- with its data, or failed with one error naming the file -- and
 * reap must never wait for a completion of a read the kernel never took
 * (it would wait forever). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock_host.h"
#include "storage_util.h"
#include "uring_queue.h"

#define NREADS 4
#define BLOCK 4096

typedef struct fixture {
    uring_queue q;
    int calls;    /* submits so far */
    int fail_at;  /* the submit (1-based) from which fail_rc is returned */
    int fail_rc;
    mock_host m;
    char dir[512], path[600];
    int fd;
    uint8_t data[NREADS * BLOCK];
    uint8_t buf[NREADS][BLOCK];
} fixture;

static fixture *of_ring(struct io_uring *r)
{
    return (fixture *)((char *)r - offsetof(fixture, q.ring));
}

/* What io_uring_submit does, except that the kernel takes one SQE per
 * call, as it may when short of memory for requests. */
static int take_one(struct io_uring *r)
{
    of_ring(r)->calls++;
    io_uring_smp_store_release(r->sq.ktail, r->sq.sqe_tail);
    r->sq.sqe_head = r->sq.sqe_tail;
    return io_uring_enter((unsigned)r->ring_fd, 1, 0, 0, NULL);
}

/* io_uring_submit until call fail_at, then fail_rc without taking any. */
static int fail_later(struct io_uring *r)
{
    fixture *fx = of_ring(r);
    if (fx->calls < fx->fail_at) /* saturates: a spinning caller never gets through */
        fx->calls++;
    return fx->calls >= fx->fail_at ? fx->fail_rc : io_uring_submit(r);
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    mock_host_init(&fx->m);
    st_tmpdir(fx->dir, "uring-queue");
    snprintf(fx->path, sizeof fx->path, "%s/q.bin", fx->dir);
    st_fill(fx->data, sizeof fx->data, 5);
    int w = open(fx->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(w >= 0);
    assert_int_equal(write(w, fx->data, sizeof fx->data), (ssize_t)sizeof fx->data);
    close(w);
    fx->fd = open(fx->path, O_RDONLY);
    assert_true(fx->fd >= 0);
    /* depth 8, two reads per io_uring_enter */
    int rc = uq_init(&fx->q, &fx->m.host, fx->path, fx->fd, 8, 2, true);
    if (rc == -DLG_ENOTSUP) {
        print_message("skipping: %s\n", fx->m.last_error);
        skip();
    }
    assert_int_equal(rc, 0);
    /* A hang is the failure this guards against: end it as one. */
    alarm(10);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    uq_fini(&fx->q); /* must not wait for reads the kernel never took */
    alarm(0);
    close(fx->fd);
    unlink(fx->path);
    rmdir(fx->dir);
    mock_host_fini(&fx->m);
    free(fx);
    return 0;
}

static void submit_all(fixture *fx)
{
    dlg_io io[NREADS];
    for (int i = 0; i < NREADS; i++)
        io[i] = (dlg_io){fx->buf[i], BLOCK, (uint64_t)i * BLOCK, (uint64_t)i};
    assert_int_equal(uq_submit(&fx->q, io, NREADS), NREADS);
}

/* Reaps every read; returns how many came back with their data (the others
 * must have failed with -DLG_EIO). */
static int reap_all(fixture *fx)
{
    dlg_io_done d[NREADS];
    int seen[NREADS] = {0}, good = 0;
    int n = uq_reap(&fx->q, d, NREADS, NREADS);
    assert_int_equal(n, NREADS);
    for (int i = 0; i < n; i++) {
        assert_true(d[i].user < NREADS);
        seen[d[i].user]++;
        if (d[i].result == BLOCK) {
            assert_memory_equal(fx->buf[d[i].user], fx->data + d[i].user * BLOCK, BLOCK);
            good++;
        } else {
            assert_int_equal(d[i].result, -DLG_EIO);
        }
    }
    for (int i = 0; i < NREADS; i++)
        assert_int_equal(seen[i], 1); /* each exactly once */
    assert_int_equal(fx->q.inflight, 0);
    return good;
}

static void test_partial_submit_sends_the_rest(void **state)
{
    fixture *fx = *state;
    fx->q.submit = take_one;
    submit_all(fx);
    assert_int_equal(reap_all(fx), NREADS);
    assert_int_equal(fx->calls, NREADS);
    assert_int_equal(fx->m.errors, 0);
}

static void test_failed_batch_fails_its_reads(void **state)
{
    fixture *fx = *state;
    fx->q.submit = fail_later;
    fx->fail_at = 2; /* the first batch reaches the kernel, the second never */
    fx->fail_rc = -ENOMEM;
    submit_all(fx);
    assert_int_equal(reap_all(fx), 2);
    assert_int_equal(fx->m.errors, 1);
    assert_non_null(strstr(fx->m.last_error, fx->path));
    assert_non_null(strstr(fx->m.last_error, "io_uring_submit"));
    /* the queue takes no more reads: their SQEs would follow the stale ones */
    dlg_io io = {fx->buf[0], BLOCK, 0, 0};
    assert_true(uq_submit(&fx->q, &io, 1) < 0);
}

static void test_busy_kernel_retried_after_a_completion(void **state)
{
    fixture *fx = *state;
    fx->q.submit = fail_later;
    fx->fail_at = 2;
    fx->fail_rc = -EAGAIN;
    submit_all(fx);
    fx->fail_at = INT_MAX; /* the kernel has room again */
    assert_int_equal(reap_all(fx), NREADS);
    assert_int_equal(fx->m.errors, 0);
}

static void test_busy_kernel_holding_nothing_fails(void **state)
{
    fixture *fx = *state;
    fx->q.submit = fail_later;
    fx->fail_at = 1; /* always busy: retrying would spin for ever */
    fx->fail_rc = -EAGAIN;
    submit_all(fx);
    assert_int_equal(reap_all(fx), 0);
    assert_int_equal(fx->m.errors, 1);
    assert_non_null(strstr(fx->m.last_error, fx->path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_partial_submit_sends_the_rest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_batch_fails_its_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_kernel_retried_after_a_completion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_kernel_holding_nothing_fails, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
