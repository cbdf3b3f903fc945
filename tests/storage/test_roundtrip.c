/* Round trips through every storage backend: write a file of known random
 * bytes with the backend's write(), read it back through the mock host with
 * random ranges (unaligned offsets and lengths, EOF-crossing reads that must
 * come back short, reads past EOF that must return 0), via read, fetch and
 * submit/reap, and compare every byte. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage_util.h"

#define FILE_BYTES ((size_t)(3u << 20) + 4099u) /* odd size: EOF is never aligned */
#define DEPTH 32

typedef struct ctx {
    mock_host m;
    st_backend b;
    char dir[512];
    char path[600];
    uint8_t *data;
    size_t size;
    dlg_file *f;
    uint8_t *buf; /* 4096-aligned, 2 MiB + slack */
    uint64_t rng;
} ctx;

static const dlg_host *H(ctx *c) { return &c->m.host; }

/* A random range, biased to the cases that break backends. */
static void pick_range(ctx *c, uint32_t align, uint64_t *off, size_t *len)
{
    uint64_t r = dlg_splitmix_next(&c->rng);
    switch (r % 8) {
    case 0: /* crosses EOF */
        *off = c->size - 1 - dlg_splitmix_next(&c->rng) % 5000;
        break;
    case 1: /* past EOF */
        *off = c->size + dlg_splitmix_next(&c->rng) % 9000;
        break;
    case 2: /* RecordIO-like: 4-byte aligned */
        *off = (dlg_splitmix_next(&c->rng) % c->size) & ~(uint64_t)3;
        break;
    default:
        *off = dlg_splitmix_next(&c->rng) % c->size;
    }
    *len = (r >> 8) % 16 == 0 ? (size_t)(dlg_splitmix_next(&c->rng) % (1u << 20)) : (size_t)(dlg_splitmix_next(&c->rng) % 70000);
    if (align > 1) {
        *off &= ~(uint64_t)(align - 1);
        *len = (*len + align - 1) & ~(size_t)(align - 1);
    }
}

static size_t expected(ctx *c, uint64_t off, size_t len)
{
    if (off >= c->size)
        return 0;
    return len < c->size - off ? len : (size_t)(c->size - off);
}

static void check_bytes(ctx *c, const void *got, uint64_t off, size_t n)
{
    if (n && memcmp(got, c->data + off, n) != 0)
        fail_msg("byte mismatch in [%llu, %llu)", (unsigned long long)off, (unsigned long long)(off + n));
}

/* Returns 0, or 1 when the backend cannot open files here (skip). */
static int setup_backend(ctx *c, const char *name, const char *const *overrides)
{
    memset(c, 0, sizeof *c);
    mock_host_init(&c->m);
    assert_int_equal(st_backend_create(&c->b, &c->m, name, overrides), 0);
    st_tmpdir(c->dir, name);
    assert_true(c->dir[0] != 0);
    snprintf(c->path, sizeof c->path, "%s/data.bin", c->dir);
    c->size = FILE_BYTES;
    c->rng = 0x1234 ^ (uint64_t)strlen(name);
    c->data = st_write_file(&c->b, &c->m, c->path, c->size, 42);
    assert_non_null(c->data);
    assert_int_equal(mock_add_storage(&c->m, name, c->b.ops, c->b.inst), 0);
    int rc = H(c)->file_open(H(c), name, c->path, &c->f);
    if (rc == -DLG_ENOTSUP) { /* e.g. a filesystem that refuses O_DIRECT */
        assert_non_null(strstr(c->m.last_error, c->path));
        assert_non_null(strstr(c->m.last_error, "posix"));
        print_message("skipping %s: %s\n", name, c->m.last_error);
        return 1;
    }
    assert_int_equal(rc, 0);
    uint64_t sz = 0;
    assert_int_equal(H(c)->file_size(H(c), c->f, &sz), 0);
    assert_int_equal(sz, c->size);
    assert_int_equal(posix_memalign((void **)&c->buf, 4096, (2u << 20) + 8192), 0);
    return 0;
}

static void teardown_backend(ctx *c)
{
    if (c->f)
        H(c)->file_close(H(c), c->f);
    st_backend_destroy(&c->b);
    mock_host_fini(&c->m);
    unlink(c->path);
    rmdir(c->dir);
    free(c->data);
    free(c->buf);
}

static void check_reads(ctx *c, int count, bool aligned_too)
{
    uint32_t align = 1;
    H(c)->file_caps(H(c), c->f, &align);
    for (int i = 0; i < count; i++) {
        bool al = aligned_too && align > 1 && i % 3 == 0;
        uint64_t off;
        size_t len;
        pick_range(c, al ? align : 1, &off, &len);
        uint8_t *dst = al ? c->buf : c->buf + 1 + dlg_splitmix_next(&c->rng) % 63;
        int64_t got = H(c)->file_read(H(c), c->f, dst, len, off);
        if (got != (int64_t)expected(c, off, len))
            fail_msg("read(%zu at %llu) = %lld, want %zu (%s)", len, (unsigned long long)off,
                     (long long)got, expected(c, off, len), c->m.last_error);
        check_bytes(c, dst, off, (size_t)got);
    }
}

static void check_fetch(ctx *c, int count)
{
    for (int i = 0; i < count; i++) {
        uint64_t off = dlg_splitmix_next(&c->rng) % c->size;
        size_t len = (size_t)(dlg_splitmix_next(&c->rng) % 100000);
        if (len > c->size - off)
            len = (size_t)(c->size - off);
        const void *p = NULL;
        assert_int_equal(H(c)->file_fetch(H(c), c->f, off, len, &p), 0);
        check_bytes(c, p, off, len);
        H(c)->file_unfetch(H(c), c->f, p, len);
    }
}

typedef struct inflight {
    uint64_t off;
    size_t len;
    uint8_t *dst;
} inflight;

/* Keeps DEPTH reads in flight, reaping a random number at a time.  With
 * `reg`, the first half of the slots is registered with the backend (fixed
 * buffers), the other half not: both kinds of read in one queue. */
static void check_async_reg(ctx *c, int total, bool reg)
{
    uint32_t align = 1;
    assert_true(H(c)->file_caps(H(c), c->f, &align) & DLG_CAP_ASYNC);
    uint8_t *pool = NULL;
    const size_t slot_bytes = 80 * 1024;
    assert_int_equal(posix_memalign((void **)&pool, 4096, DEPTH * slot_bytes), 0);
    if (reg)
        assert_int_equal(H(c)->file_register(H(c), c->f, pool, DEPTH / 2 * slot_bytes), 0);
    inflight io[DEPTH];
    dlg_io batch[DEPTH];
    size_t nb = 0;
    for (uint64_t s = 0; s < DEPTH; s++) {
        uint64_t off;
        size_t len;
        pick_range(c, align, &off, &len);
        if (len > slot_bytes - 4096)
            len = slot_bytes - 4096;
        size_t mis = align > 1 ? 0 : (size_t)(dlg_splitmix_next(&c->rng) % 16);
        io[s] = (inflight){off, len, pool + s * slot_bytes + mis};
        batch[nb++] = (dlg_io){io[s].dst, len, off, s};
    }
    assert_int_equal(H(c)->file_submit(H(c), c->f, batch, nb), DEPTH);
    int submitted = DEPTH, reaped = 0;
    while (reaped < total) {
        dlg_io_done done[DEPTH];
        size_t min = 1 + dlg_splitmix_next(&c->rng) % 8;
        int k = H(c)->file_reap(H(c), c->f, done, DEPTH, min);
        if (k < (int)min && submitted - reaped >= (int)min)
            fail_msg("reap returned %d < min_done %zu (%s)", k, min, c->m.last_error);
        nb = 0;
        for (int i = 0; i < k; i++) {
            inflight *x = &io[done[i].user];
            if (done[i].result != (int64_t)expected(c, x->off, x->len))
                fail_msg("async read(%zu at %llu) = %lld", x->len, (unsigned long long)x->off,
                         (long long)done[i].result);
            check_bytes(c, x->dst, x->off, (size_t)done[i].result);
            reaped++;
            if (submitted < total) {
                pick_range(c, align, &x->off, &x->len);
                if (x->len > slot_bytes - 4096)
                    x->len = slot_bytes - 4096;
                batch[nb++] = (dlg_io){x->dst, x->len, x->off, done[i].user};
                submitted++;
            }
        }
        if (nb)
            assert_int_equal(H(c)->file_submit(H(c), c->f, batch, nb), (int)nb);
    }
    free(pool);
}

static void check_async(ctx *c, int total) { check_async_reg(c, total, false); }

static void test_posix(void **state)
{
    ctx c;
    const char *const o[] = {"advice=random", NULL};
    if (setup_backend(&c, "posix", o) == 0) {
        check_reads(&c, 1500, false);
        check_fetch(&c, 200); /* host copies: posix has no zero copy */
    }
    teardown_backend(&c);
}

static void test_direct(void **state)
{
    ctx c;
    if (setup_backend(&c, "direct", NULL) == 0) {
        uint32_t align = 0;
        assert_true(H(&c)->file_caps(H(&c), c.f, &align) & DLG_CAP_DIRECT);
        assert_true(align >= 512 && (align & (align - 1)) == 0);
        check_reads(&c, 1500, true);
    }
    teardown_backend(&c);
}

static void test_direct_small_bounce(void **state)
{
    ctx c; /* reads bigger than the bounce buffer go in chunks */
    const char *const o[] = {"bounce_max=64K", NULL};
    if (setup_backend(&c, "direct", o) == 0)
        check_reads(&c, 400, false);
    teardown_backend(&c);
}

static void test_mmap(void **state)
{
    ctx c;
    const char *const o[] = {"advice=willneed", "populate=true", NULL};
    if (setup_backend(&c, "mmap", o) == 0) {
        check_reads(&c, 1500, false);
        check_fetch(&c, 500);
        /* zero copy: two fetches of one range are the same memory */
        const void *p1, *p2;
        assert_int_equal(H(&c)->file_fetch(H(&c), c.f, 100, 10, &p1), 0);
        assert_int_equal(H(&c)->file_fetch(H(&c), c.f, 100, 10, &p2), 0);
        assert_ptr_equal(p1, p2);
        /* past EOF is an error naming the file, not a crash */
        assert_true(H(&c)->file_fetch(H(&c), c.f, c.size - 5, 10, &p1) < 0);
        assert_non_null(strstr(c.m.last_error, c.path));
    }
    teardown_backend(&c);
}

static void test_uring(void **state)
{
    ctx c; /* 3 does not divide the batches: the last enter takes the rest */
    const char *const o[] = {"submit_batch=3", NULL};
    if (setup_backend(&c, "uring", o) == 0) {
        check_reads(&c, 800, false);
        check_async(&c, 3000);
        check_reads(&c, 100, false); /* sync reads still work after async */
        check_async_reg(&c, 3000, true); /* half the buffers registered */
    }
    teardown_backend(&c);
}

static void test_uring_direct(void **state)
{
    ctx c;
    const char *const o[] = {"direct=true", "depth=32", "fixed_files=false", "submit_batch=1", NULL};
    if (setup_backend(&c, "uring", o) == 0) {
        uint32_t align = 0;
        H(&c)->file_caps(H(&c), c.f, &align);
        assert_true(align >= 512);
        check_reads(&c, 500, true); /* unaligned: bounce; aligned: straight */
        check_async(&c, 2000);      /* aligned ranges only */
        check_async_reg(&c, 2000, true);
    }
    teardown_backend(&c);
}

static void test_throttle_passthrough(void **state)
{
    /* unlimited throttle over each kind of inner: zero copy, async, and the
     * emulated fetch/async over posix must all return the same bytes */
    const char *inners[] = {"inner=posix", "inner=mmap", "inner=uring"};
    for (int i = 0; i < 3; i++) {
        ctx c;
        const char *const o[] = {inners[i], NULL};
        if (setup_backend(&c, "throttle", o) == 0) {
            check_reads(&c, 400, false);
            check_fetch(&c, 200);
            check_async(&c, 1000);
            if (i == 2) /* the buffer reaches uring through the throttle */
                check_async_reg(&c, 1000, true);
        }
        teardown_backend(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_posix),
        cmocka_unit_test(test_direct),
        cmocka_unit_test(test_direct_small_bounce),
        cmocka_unit_test(test_mmap),
        cmocka_unit_test(test_uring),
        cmocka_unit_test(test_uring_direct),
        cmocka_unit_test(test_throttle_passthrough),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
