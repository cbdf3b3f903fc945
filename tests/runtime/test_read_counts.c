/* storage_ios and storage_read_bytes count the reads that returned bytes,
 * through the real backends: a workload that also reads at EOF and fetches
 * 0 bytes (readwl) gets per timed step 1 block-sized I/O from posix and 2
 * from mmap (zero-copy) and uring (async): a fetch of nothing or a reaped
 * read at EOF is no I/O. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rt_cell.h"
#include "rt_util.h"

#define BLOCK 4096
#define STEPS 5

/* Runs readwl over an 8-block file through storage; its row's counts. */
static void run_counts(const rt_dir *d, const char *storage, uint64_t ios_per_step)
{
    char data[512], ini[512], text[2048];
    static char block[2 * BLOCK];
    memset(block, 'r', sizeof block);
    snprintf(data, sizeof data, "%s/data.bin", d->path);
    FILE *fp = fopen(data, "wb");
    assert_non_null(fp);
    for (int i = 0; i < 4; i++)
        assert_int_equal(fwrite(block, 1, sizeof block, fp), sizeof block);
    assert_int_equal(fclose(fp), 0);
    snprintf(text, sizeof text,
             "[job r]\nplugin = %s/readwl.so\nworkload = read_ways\npath = %s\nblock = %d\nstorage = %s\n"
             "warmup = 1\niterations = %d\n",
             DLG_TEST_RT_PLUGIN_DIR, data, BLOCK, storage, STEPS);
    rt_write(d, "reads.ini", text, ini, sizeof ini);
    rt_cell c;
    rt_cell_run(&c, ini);
    if (strcmp(storage, "uring") == 0 && strcmp(c.res.status, "ok") != 0 && strstr(c.res.error, "io_uring")) {
        print_message("skipping uring: %s\n", c.res.error); /* a kernel or sandbox without it */
        rt_cell_done(&c);
        return;
    }
    if (strcmp(c.res.status, "ok") != 0)
        fail_msg("%s: %s", storage, c.res.error);
    assert_int_equal(rt_cell_uint(&c, "storage_ios"), STEPS * ios_per_step);
    assert_int_equal(rt_cell_uint(&c, "storage_read_bytes"), STEPS * ios_per_step * BLOCK);
    rt_cell_done(&c);
}

static void sync_reads(void **state) { run_counts(*state, "posix", 1); }
static void zero_copy_fetches(void **state) { run_counts(*state, "mmap", 2); }
static void async_reads(void **state) { run_counts(*state, "uring", 2); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sync_reads, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(zero_copy_fetches, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(async_reads, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
