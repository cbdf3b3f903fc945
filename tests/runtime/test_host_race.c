/* Two threads of a cell (loader workers) whose backend calls fail at the
 * same moment: each backend says why on its own line, naming its file,
 * and the host adds no line of its own for either.  The host used to ask
 * the shared error slot whether the backend had said why; holding the
 * other thread's later line, it answered no for the first thread, which
 * then raised its generic "read of N bytes at offset X failed" over the
 * backend's reason.  Here both backends raise their line, then wait for
 * each other (a barrier) before failing, so that the slot always holds
 * the other thread's line when the first one's failure is judged. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_fixture.h"

#define NTHREADS 2
static const char *const paths[NTHREADS] = {"/data/train/shard-0001.bin", "/data/train/shard-0002.bin"};

typedef enum { OP_READ, OP_WRITE, OP_SIZE } op_kind;

/* host_fixture's host and backend, whose failing calls wait at both_said. */
typedef struct fixture {
    hfx_fixture *hfx;
    pthread_barrier_t both_said;
} fixture;

/* One worker: its own file, one failing call of the kind under test. */
typedef struct worker {
    fixture *fx;
    op_kind op;
    const char *path;
    dlg_file *f;
    int64_t rc;
} worker;

/* The backend says why its reads, writes and sizes fail, then waits for
 * the other thread to have said so too before failing. */
static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    void *hfx;
    assert_int_equal(hfx_setup(&hfx), 0);
    fx->hfx = hfx;
    assert_int_equal(pthread_barrier_init(&fx->both_said, NULL, NTHREADS), 0);
    hfx_backend *be = &fx->hfx->inst;
    be->says_why = be->size_fails = be->write_fails = true;
    be->said_wait = &fx->both_said;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    void *hfx = fx->hfx;
    hfx_teardown(&hfx);
    pthread_barrier_destroy(&fx->both_said);
    free(fx);
    return 0;
}

static void *work(void *arg)
{
    worker *w = arg;
    const dlg_host *h = w->fx->hfx->h;
    char buf[16] = "";
    uint64_t size;
    switch (w->op) {
    case OP_READ:
        w->rc = h->file_read(h, w->f, buf, sizeof buf, 200); /* the fixture's failing offset */
        break;
    case OP_WRITE:
        w->rc = dlg_host_file_write(h, w->f, buf, sizeof buf, 4096);
        break;
    case OP_SIZE:
        w->rc = h->file_size(h, w->f, &size);
        break;
    }
    return NULL;
}

/* Both threads fail at once: two errors raised, both the backends'. */
static void both_fail(fixture *fx, op_kind op)
{
    dlg_services *svc = &fx->hfx->svc;
    const dlg_host *h = fx->hfx->h;
    worker w[NTHREADS];
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (worker){.fx = fx, .op = op, .path = paths[i]};
        int rc = op == OP_WRITE ? dlg_host_file_create(h, NULL, paths[i], &w[i].f)
                                : h->file_open(h, NULL, paths[i], &w[i].f);
        assert_int_equal(rc, 0);
    }
    uint64_t before = dlg_services_mark(svc);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < NTHREADS; i++) {
        assert_int_equal(w[i].rc, -DLG_EIO);
        h->file_close(h, w[i].f);
    }
    char err[2048], want[2][256];
    int code = dlg_services_error_copy(svc, err, sizeof err);
    const char *what = op == OP_READ ? "pread" : op == OP_WRITE ? "pwrite" : "fstat";
    for (int i = 0; i < NTHREADS; i++)
        snprintf(want[i], sizeof want[i], "st.ini:8: [job checksum] [storage fake] fake: %s: %s: Input/output error",
                 paths[i], what);
    if (dlg_services_mark(svc) - before != NTHREADS || code != DLG_EIO ||
        (strcmp(err, want[0]) != 0 && strcmp(err, want[1]) != 0))
        fail_msg("%llu errors raised, the last (code %d): \"%s\"; expected the 2 backends' lines only",
                 (unsigned long long)(dlg_services_mark(svc) - before), code, err);
}

static void reads_fail_at_once(void **state) { both_fail(*state, OP_READ); }
static void writes_fail_at_once(void **state) { both_fail(*state, OP_WRITE); }
static void sizes_fail_at_once(void **state) { both_fail(*state, OP_SIZE); }

/* The copy-out of the slot: truncated to the buffer, "" and 0 when clear. */
static void error_copy_is_bounded(void **state)
{
    dlg_services *svc = &((fixture *)*state)->hfx->svc;
    char small[8], buf[64];
    assert_int_equal(dlg_services_error_copy(svc, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(dlg_services_fail(svc, DLG_ENOMEM, "%s: out of memory", paths[0]), -DLG_ENOMEM);
    assert_int_equal(dlg_services_error_copy(svc, small, sizeof small), DLG_ENOMEM);
    assert_string_equal(small, "/data/t");
    dlg_services_clear_error(svc);
    assert_int_equal(dlg_services_error_copy(svc, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reads_fail_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(writes_fail_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(sizes_fail_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(error_copy_is_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
