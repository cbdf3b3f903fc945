/* io ends a step early when the host says stop (Ctrl-C): the step returns
 * the reads it completed, not the whole step_ios.  A storage backend of the
 * test's own takes SLOW_NS per read, longer than io's stop poll, and raises
 * the mock host's stop flag in its STOP_AT-th read; sync and queued reads.
 * Before, a step of 20 such reads ran to its end. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "workload_run.h"

#define BLOCK 4096
#define SLOW_NS 30000000L /* above io's 20 ms poll: it asks after every read */
#define STOP_AT 3         /* the read (1-based) during which Ctrl-C comes */
#define QUEUE 8

typedef struct stop_store {
    mock_host *m;
    uint64_t reads;
    dlg_io queued[QUEUE]; /* async: submitted, not yet reaped */
    size_t nqueued;
} stop_store;

static int st_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst, (void)h, (void)path, (void)flags, (void)f;
    return 0;
}

static int st_close(dlg_file *f)
{
    (void)f;
    return 0;
}

static int st_size(dlg_file *f, uint64_t *out)
{
    (void)f;
    *out = 64 * BLOCK;
    return 0;
}

/* One slow read; the STOP_AT-th raises the stop flag. */
static void slow_read(stop_store *s, void *buf, size_t n)
{
    struct timespec ts = {0, SLOW_NS};
    while (nanosleep(&ts, &ts) != 0)
        ;
    memset(buf, 0, n);
    if (++s->reads == STOP_AT)
        s->m->stop = true;
}

static int64_t st_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)off;
    slow_read(f->inst, buf, n);
    return (int64_t)n;
}

static int st_submit(dlg_file *f, const dlg_io *ios, size_t n)
{
    stop_store *s = f->inst;
    if (s->nqueued + n > QUEUE)
        return -DLG_EAGAIN;
    memcpy(s->queued + s->nqueued, ios, n * sizeof *ios);
    s->nqueued += n;
    return (int)n;
}

/* Completes the oldest queued read, one per call. */
static int st_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    (void)min_done;
    stop_store *s = f->inst;
    if (s->nqueued == 0 || max == 0)
        return 0;
    dlg_io io = s->queued[0];
    memmove(s->queued, s->queued + 1, --s->nqueued * sizeof *s->queued);
    slow_read(s, io.buf, io.len);
    done[0] = (dlg_io_done){io.user, (int64_t)io.len};
    return 1;
}

static uint32_t st_depth(dlg_file *f)
{
    (void)f;
    return QUEUE;
}

static const dlg_storage_ops sync_ops = {
    .version = 1,
    .file_size = sizeof(dlg_file),
    .open = st_open,
    .close = st_close,
    .size = st_size,
    .read = st_read,
};

static const dlg_storage_ops async_ops = {
    .version = 2,
    .caps = DLG_CAP_ASYNC,
    .file_size = sizeof(dlg_file),
    .open = st_open,
    .close = st_close,
    .size = st_size,
    .read = st_read,
    .submit = st_submit,
    .reap = st_reap,
    .depth = st_depth,
};

typedef struct hook_arg {
    stop_store *s;
    const dlg_storage_ops *ops;
} hook_arg;

static void add_store(mock_host *m, void *arg)
{
    hook_arg *a = arg;
    a->s->m = m;
    assert_int_equal(mock_add_storage(m, "stop", a->ops, a->s), 0);
}

/* One step of 20 reads at `depth`, stopped during read STOP_AT. */
static void step_ends_at_stop(const dlg_storage_ops *ops, const char *depth)
{
    stop_store s = {0};
    hook_arg a = {&s, ops};
    const char *const over[] = {"data=raw:stop.bin", "block=4KiB", "cache=none", "step_ios=20", depth, NULL};
    wr_result r;
    wr_run_with("tools.so", "io", over, 1, &r, add_store, &a);
    assert_int_equal(r.setup_rc, 0);
    assert_int_equal(r.step_rc, 0);
    /* the reads done before the stop was seen, and no more */
    assert_int_equal(r.items, STOP_AT * BLOCK);
    assert_int_equal(r.bytes_read, STOP_AT * BLOCK);
    assert_int_equal(wr_int(&r, "ios"), STOP_AT);
}

static void sync_step_stops(void **st)
{
    (void)st;
    step_ends_at_stop(&sync_ops, "depth=1");
}

static void queued_step_stops(void **st)
{
    (void)st;
    step_ends_at_stop(&async_ops, "depth=4");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sync_step_stops),
        cmocka_unit_test(queued_step_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
