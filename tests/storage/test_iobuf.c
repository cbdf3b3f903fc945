/* include/dlgauge/iobuf.h: buffers of 1 MiB and more are 2 MiB-aligned
 * mappings advised for transparent huge pages (outside AddressSanitizer),
 * smaller ones aligned heap blocks; all are writable end to end, keep what
 * is written, and an O_DIRECT read lands in them. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlgauge/iobuf.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void fill_check(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed);
    for (size_t i = 0; i < n; i += 4093)
        assert_int_equal(p[i], (unsigned char)(i * 31 + seed));
    assert_int_equal(p[n - 1], (unsigned char)((n - 1) * 31 + seed));
}

static void test_sizes_and_alignment(void **st)
{
    const size_t sizes[] = {1, 4096, 300 * 1024, DLG_IOBUF_HUGE_MIN - 1, DLG_IOBUF_HUGE_MIN,
                            DLG_IOBUF_HUGE + 4096, (size_t)5 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        unsigned char *p = dlg_iobuf_alloc(n, 4096);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 4096, 0);
        if (dlg_iobuf_is_mapped(n))
            assert_int_equal((uintptr_t)p % DLG_IOBUF_HUGE, 0);
        fill_check(p, n, (unsigned)k);
        dlg_iobuf_free(p, n);
    }
    dlg_iobuf_free(NULL, DLG_IOBUF_HUGE_MIN); /* like free(NULL) */
#if DLG_IOBUF_MAPS
    assert_true(dlg_iobuf_is_mapped(DLG_IOBUF_HUGE_MIN));
#endif
    assert_false(dlg_iobuf_is_mapped(DLG_IOBUF_HUGE_MIN - 1));
}

/* A 1 MiB O_DIRECT read of a written file into a mapped buffer. */
static void test_direct_read(void **st)
{
    char path[] = STORAGE_TEST_DIR "/iobuf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const size_t n = DLG_IOBUF_HUGE_MIN;
    unsigned char *w = dlg_iobuf_alloc(n, 4096), *r = dlg_iobuf_alloc(n, 4096);
    assert_non_null(w);
    assert_non_null(r);
    fill_check(w, n, 7);
    assert_int_equal(pwrite(fd, w, n, 0), (ssize_t)n);
    assert_int_equal(fsync(fd), 0);
    close(fd);
    fd = open(path, O_RDONLY | O_DIRECT);
    if (fd < 0) { /* a file system without O_DIRECT: a buffered read says as much */
        fd = open(path, O_RDONLY);
        printf("  no O_DIRECT here; buffered read\n");
    }
    assert_true(fd >= 0);
    memset(r, 0, n);
    assert_int_equal(pread(fd, r, n, 0), (ssize_t)n);
    assert_memory_equal(r, w, n);
    close(fd);
    unlink(path);
    dlg_iobuf_free(w, n);
    dlg_iobuf_free(r, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_and_alignment),
        cmocka_unit_test(test_direct_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
