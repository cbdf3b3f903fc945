/* include/dlgauge/iobuf.h: buffers of DLG_IOBUF_HUGE_MIN and more are
 * 2 MiB-aligned mappings advised for transparent huge pages (outside
 * AddressSanitizer), smaller ones aligned heap blocks; every byte of each
 * is usable, and an O_DIRECT read lands in them. */
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

#include "storage_util.h"

static void test_sizes_and_alignment(void **st)
{
    const size_t sizes[] = {1, 4096, DLG_IOBUF_HUGE_MIN - 1, DLG_IOBUF_HUGE_MIN,
                            DLG_IOBUF_HUGE + 4096, (size_t)5 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint8_t *p = dlg_iobuf_alloc(n, 4096), *want = malloc(n);
        assert_non_null(p);
        assert_non_null(want);
        assert_int_equal((uintptr_t)p % 4096, 0);
        if (dlg_iobuf_is_mapped(n))
            assert_int_equal((uintptr_t)p % DLG_IOBUF_HUGE, 0);
        st_fill(want, n, k); /* the whole buffer, first byte to last */
        memcpy(p, want, n);
        assert_memory_equal(p, want, n);
        dlg_iobuf_free(p, n);
        free(want);
    }
    dlg_iobuf_free(NULL, DLG_IOBUF_HUGE_MIN); /* like free(NULL) */
#if DLG_IOBUF_MAPS
    assert_true(dlg_iobuf_is_mapped(DLG_IOBUF_HUGE_MIN));
#endif
    assert_false(dlg_iobuf_is_mapped(DLG_IOBUF_HUGE_MIN - 1));
}

/* Sizes whose rounding up wraps around get NULL, not a pointer to a few
 * bytes (or to nothing) that the caller then writes gigabytes into. */
static void test_size_overflow(void **st)
{
    const size_t huge[] = {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX - DLG_IOBUF_HUGE};
    for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
        void *p = dlg_iobuf_alloc(huge[k], 4096);
        if (p)
            fail_msg("dlg_iobuf_alloc(SIZE_MAX - %zu) = %p, want NULL", SIZE_MAX - huge[k], p);
    }
}

/* A 1 MiB O_DIRECT read of a written file into a mapped buffer. */
static void test_direct_read(void **st)
{
    char dir[512], path[600];
    st_tmpdir(dir, "iobuf");
    assert_true(dir[0] != 0);
    snprintf(path, sizeof path, "%s/data", dir);
    const size_t n = (size_t)1 << 20;
    uint8_t *w = malloc(n), *r = dlg_iobuf_alloc(n, 4096);
    assert_non_null(w);
    assert_non_null(r);
    st_fill(w, n, 7);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, w, n, 0), (ssize_t)n);
    assert_int_equal(fsync(fd), 0);
    close(fd);
    fd = open(path, O_RDONLY | O_DIRECT);
    if (fd < 0) { /* a file system without O_DIRECT: a buffered read, said so */
        fd = open(path, O_RDONLY);
        printf("  no O_DIRECT here; buffered read\n");
    }
    assert_true(fd >= 0);
    memset(r, 0, n);
    assert_int_equal(pread(fd, r, n, 0), (ssize_t)n);
    assert_memory_equal(r, w, n);
    close(fd);
    unlink(path);
    rmdir(dir);
    free(w);
    dlg_iobuf_free(r, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_and_alignment),
        cmocka_unit_test(test_direct_read),
        cmocka_unit_test(test_size_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
