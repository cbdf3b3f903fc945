/* io refuses a read shorter than its block where the block lies wholly
 * inside the file: the host continues a backend's short read and uring
 * resubmits its own, so such a result is a file that shrank or a broken
 * backend, and counting it as whole inflated io_bytes and iops.  A storage
 * backend of the test's own returns half of the read at SHORT_OFF, sync
 * and queued; a sequential pass's last block, where the file ends inside
 * it, stays a whole read.  Before, every case ran without an error.
 * The same backend, queued, also shows a step take step_ios reads, not
 * as many as the queue holds. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "workload_run.h"

#define BLOCK 4096
#define BLOCKS 8
#define SHORT_OFF (2 * BLOCK) /* the third block */
#define QUEUE 8

typedef struct short_store {
    uint64_t size;
    bool whole; /* no short read at SHORT_OFF */
    bool overlong; /* queued: the read at SHORT_OFF says it got more than asked */
    bool stray;    /* queued: its completion names a read never submitted */
    dlg_io queued[QUEUE];
    size_t nqueued;
} short_store;

static int ss_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst, (void)h, (void)path, (void)flags, (void)f;
    return 0;
}

static int ss_close(dlg_file *f)
{
    (void)f;
    return 0;
}

static int ss_size(dlg_file *f, uint64_t *out)
{
    *out = ((short_store *)f->inst)->size;
    return 0;
}

/* What the backend says a read of n at off got: half at SHORT_OFF, else up
 * to the end of the file. */
static int64_t got(const short_store *s, size_t n, uint64_t off)
{
    if (off >= s->size)
        return 0;
    uint64_t left = s->size - off;
    size_t r = left < n ? (size_t)left : n;
    return (int64_t)(off == SHORT_OFF && !s->whole ? r / 2 : r);
}

static int64_t ss_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    memset(buf, 0, n);
    return got(f->inst, n, off);
}

static int ss_submit(dlg_file *f, const dlg_io *ios, size_t n)
{
    short_store *s = f->inst;
    if (s->nqueued + n > QUEUE)
        return -DLG_EAGAIN;
    memcpy(s->queued + s->nqueued, ios, n * sizeof *ios);
    s->nqueued += n;
    return (int)n;
}

static int ss_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    (void)min_done;
    short_store *s = f->inst;
    size_t k = 0;
    for (; k < s->nqueued && k < max; k++) {
        memset(s->queued[k].buf, 0, s->queued[k].len);
        done[k] = (dlg_io_done){s->queued[k].user, got(s, s->queued[k].len, s->queued[k].off)};
        if (s->queued[k].off == SHORT_OFF && s->overlong)
            done[k].result = (int64_t)s->queued[k].len + 100;
        if (s->queued[k].off == SHORT_OFF && s->stray)
            done[k].user = UINT64_C(1) << 40;
    }
    memmove(s->queued, s->queued + k, (s->nqueued - k) * sizeof *s->queued);
    s->nqueued -= k;
    return (int)k;
}

static uint32_t ss_depth(dlg_file *f)
{
    (void)f;
    return QUEUE;
}

static const dlg_storage_ops sync_ops = {
    .version = 1,
    .file_size = sizeof(dlg_file),
    .open = ss_open,
    .close = ss_close,
    .size = ss_size,
    .read = ss_read,
};

static const dlg_storage_ops async_ops = {
    .version = 2,
    .caps = DLG_CAP_ASYNC,
    .file_size = sizeof(dlg_file),
    .open = ss_open,
    .close = ss_close,
    .size = ss_size,
    .read = ss_read,
    .submit = ss_submit,
    .reap = ss_reap,
    .depth = ss_depth,
};

typedef struct hook_arg {
    short_store *s;
    const dlg_storage_ops *ops;
} hook_arg;

static void add_store(mock_host *m, void *arg)
{
    hook_arg *a = arg;
    assert_int_equal(mock_add_storage(m, "short", a->ops, a->s), 0);
}

/* One sequential step over the whole file (size bytes) at `depth`. */
static void one_pass(const dlg_storage_ops *ops, uint64_t size, const char *depth, wr_result *r)
{
    short_store s = {.size = size};
    hook_arg a = {&s, ops};
    const char *const over[] = {"data=raw:short.bin", "block=4KiB", "cache=none", "step_ios=8", depth, NULL};
    wr_run_with("tools.so", "io", over, 1, r, add_store, &a);
    assert_int_equal(r->setup_rc, 0);
}

/* The short read inside the file fails the step with path, offset, bytes
 * asked and got. */
static void refused(const dlg_storage_ops *ops, const char *depth)
{
    wr_result r;
    one_pass(ops, BLOCKS * BLOCK, depth, &r);
    assert_true(r.step_rc < 0);
    assert_non_null(strstr(r.error, "short.bin: read at offset 8192 asked for 4096 bytes and got 2048"));
}

static void sync_short_read_refused(void **st)
{
    (void)st;
    refused(&sync_ops, "depth=1");
}

static void queued_short_read_refused(void **st)
{
    (void)st;
    refused(&async_ops, "depth=4");
}

/* A queued read said to get more than its block, or a completion naming
 * a read never submitted: the step fails naming the file and offset (or
 * the stray value) and the broken backend.  Before, the checksum read 100
 * bytes past the block and the bytes were counted, and a stray completion
 * indexed the buffer table with 2^40. */
static void broken_completion_refused(void **st)
{
    (void)st;
    for (int stray = 0; stray < 2; stray++) {
        short_store s = {.size = BLOCKS * BLOCK, .whole = true, .overlong = !stray, .stray = stray};
        hook_arg a = {&s, &async_ops};
        const char *const over[] = {"data=raw:short.bin", "block=4KiB", "cache=none", "step_ios=8", "depth=4",
                                    "checksum=true", NULL};
        wr_result r;
        wr_run_with("tools.so", "io", over, 1, &r, add_store, &a);
        assert_int_equal(r.setup_rc, 0);
        assert_true(r.step_rc < 0);
        const char *want = stray ? "short.bin: a completed read names read 1099511627776, never submitted (a broken "
                                   "storage backend)"
                                 : "short.bin: read at offset 8192 asked for 4096 bytes and got 4196 (more than "
                                   "asked: a broken storage backend)";
        if (!strstr(r.error, want))
            fail_msg("said \"%s\", not \"%s\"", r.error, want);
    }
}

/* A file of 1.5 blocks: the second read ends at the file's end, whole
 * (the short third block lies past it: the pass wraps to offset 0). */
static void last_block_at_end_is_whole(void **st)
{
    (void)st;
    const dlg_storage_ops *ops[] = {&sync_ops, &async_ops};
    const char *depth[] = {"depth=1", "depth=4"};
    for (int i = 0; i < 2; i++) {
        wr_result r;
        one_pass(ops[i], BLOCK + BLOCK / 2, depth[i], &r);
        assert_int_equal(r.step_rc, 0);
        assert_int_equal(wr_int(&r, "ios"), 8);
        assert_int_equal(r.bytes_read, 4 * BLOCK + 4 * (BLOCK / 2));
    }
}

/* A step is step_ios reads whatever the depth: with 8 reads in flight and
 * each done at once, a step took all 8 (steps and their latency then meant
 * another thing on uring than on posix in one sweep). */
static void queued_step_takes_step_ios(void **st)
{
    (void)st;
    short_store s = {.size = 64 * BLOCK, .whole = true};
    hook_arg a = {&s, &async_ops};
    const char *const over[] = {"data=raw:short.bin", "block=4KiB", "cache=none", "step_ios=2", "depth=8", NULL};
    wr_result r;
    wr_run_with("tools.so", "io", over, 3, &r, add_store, &a);
    assert_int_equal(r.setup_rc, 0);
    assert_int_equal(r.step_rc, 0);
    assert_int_equal(r.steps_done, 3);
    assert_int_equal(r.items, 3 * 2 * BLOCK);
    assert_int_equal(wr_int(&r, "ios"), 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sync_short_read_refused),
        cmocka_unit_test(queued_short_read_refused),
        cmocka_unit_test(broken_completion_refused),
        cmocka_unit_test(last_block_at_end_is_whole),
        cmocka_unit_test(queued_step_takes_step_ios),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
