/* uring's file lifecycle: a file closed with reads still in flight must not
 * return while the kernel may still write into their buffers: the caller
 * frees them next (a ring's teardown in the kernel is asynchronous). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlgauge/iobuf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage_util.h"

#define NREADS 32
#define READ_BYTES ((size_t)1 << 20)

static void test_close_waits_for_reads(void **state)
{
    mock_host m;
    mock_host_init(&m);
    st_backend b;
    /* O_DIRECT: the reads go to the device, so they are still in flight
     * when close comes right after submit */
    const char *const o[] = {"direct=true", "depth=32", "submit_batch=32", NULL};
    assert_int_equal(st_backend_create(&b, &m, "uring", o), 0);
    char dir[512], path[600];
    st_tmpdir(dir, "uring-close");
    assert_true(dir[0] != 0);
    snprintf(path, sizeof path, "%s/d.bin", dir);
    const size_t total = NREADS * READ_BYTES;
    uint8_t *data = st_write_file(&b, &m, path, total, 11);
    assert_non_null(data);
    dlg_file *f = NULL;
    int rc = st_open(&b, &m, path, DLG_OPEN_READ, &f);
    if (rc == -DLG_ENOTSUP) { /* a filesystem without O_DIRECT */
        print_message("skipping: %s\n", m.last_error);
    } else {
        assert_int_equal(rc, 0);
        uint8_t *buf = dlg_iobuf_alloc(total, 4096); /* a mapping: safe even if a read lands late */
        assert_non_null(buf);
        memset(buf, 0xAA, total);
        dlg_io io[NREADS];
        for (int i = 0; i < NREADS; i++)
            io[i] = (dlg_io){buf + (size_t)i * READ_BYTES, READ_BYTES, (uint64_t)i * READ_BYTES, (uint64_t)i};
        assert_int_equal(b.ops->submit(f, io, NREADS), NREADS);
        dlg_io_done d;
        assert_int_equal(b.ops->reap(f, &d, 1, 1), 1); /* the reads are under way */
        st_close(f);
        /* 8 bytes of each page: quick enough that a read landing just
         * after close is not missed */
        static uint64_t seen[NREADS * READ_BYTES / 4096];
        for (size_t p = 0; p < total / 4096; p++)
            memcpy(&seen[p], buf + p * 4096, 8);
        usleep(200 * 1000);
        for (size_t p = 0; p < total / 4096; p++)
            if (memcmp(&seen[p], buf + p * 4096, 8) != 0)
                fail_msg("read %zu wrote into its buffer after close returned", p * 4096 / READ_BYTES);
        dlg_iobuf_free(buf, total);
    }
    unlink(path);
    rmdir(dir);
    free(data);
    st_backend_destroy(&b);
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_waits_for_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
