/* The O_DIRECT bounce buffer (plugins/storage/common/dio.c) over an
 * in-memory "device" that insists on aligned requests: unaligned ranges come
 * back byte-exact, short only at EOF, and the buffer, once grown, is reused
 * by every later read, whatever bounce_max the user wrote. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dio.h"
#include "storage_util.h"

#define ALIGN 4096u
#define DEV_BYTES ((size_t)(1u << 20) + 123u) /* EOF inside a block */

typedef struct dev {
    uint8_t *data;
    int calls;
} dev;

static int64_t dev_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    dev *d = ctx;
    d->calls++;
    if (!stg_aligned(buf, n, off, ALIGN))
        fail_msg("unaligned device read: %zu bytes at %llu into %p", n, (unsigned long long)off, buf);
    if (off >= DEV_BYTES)
        return 0;
    size_t take = n < DEV_BYTES - off ? n : (size_t)(DEV_BYTES - off);
    memcpy(buf, d->data + off, take);
    return (int64_t)take;
}

static void read_and_check(stg_bounce *b, dev *d, uint8_t *out, size_t n, uint64_t off)
{
    size_t want = off >= DEV_BYTES ? 0 : (n < DEV_BYTES - off ? n : (size_t)(DEV_BYTES - off));
    int64_t got = stg_bounce_read(b, dev_read, d, out, n, off);
    if (got != (int64_t)want)
        fail_msg("read of %zu at %llu = %lld, want %zu", n, (unsigned long long)off, (long long)got, want);
    if (want && memcmp(out, d->data + off, want) != 0)
        fail_msg("byte mismatch in a read of %zu at %llu", n, (unsigned long long)off);
}

/* bounce_max = 100kB (SI: not a multiple of the alignment) and records
 * larger than it: the buffer used to be reallocated (mmap + munmap + fresh
 * page faults) for every such read. */
static void test_unaligned_max_reuses_buffer(void **state)
{
    dev d = {malloc(DEV_BYTES), 0};
    assert_non_null(d.data);
    st_fill(d.data, DEV_BYTES, 5);
    uint8_t *out = malloc(300000);
    assert_non_null(out);
    stg_bounce b;
    stg_bounce_init(&b, ALIGN, 100000);
    read_and_check(&b, &d, out, 150000, 12345);
    void *first = b.buf;
    size_t cap = b.cap;
    assert_true(cap <= 100000 && cap % ALIGN == 0);
    uint64_t rng = 9;
    for (int i = 0; i < 50; i++) {
        uint64_t off = dlg_splitmix_next(&rng) % (DEV_BYTES + 5000);
        size_t n = (size_t)(dlg_splitmix_next(&rng) % 300000);
        read_and_check(&b, &d, out, n, off);
        if (b.buf != first || b.cap != cap)
            fail_msg("read %d (%zu bytes at %llu) reallocated the bounce buffer (%zu -> %zu bytes)", i, n,
                     (unsigned long long)off, cap, b.cap);
    }
    stg_bounce_free(&b);
    free(out);
    free(d.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unaligned_max_reuses_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
