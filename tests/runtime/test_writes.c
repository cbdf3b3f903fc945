/* Writes through the host's storage path are counted per cell as reads
 * are: a workload appending 3 blocks of 1000 bytes per step through posix
 * yields a result row with storage_write_bytes and storage_write_ios of
 * exactly its timed steps (warm-up excluded), summed over repetitions. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "rt_cell.h"
#include "rt_util.h"

/* 2 repetitions x 5 timed steps x 3 writes of 1000 bytes; the 2 warm-up
 * steps per repetition write too but are not counted. */
static void timed_writes_counted(void **state)
{
    const rt_dir *d = *state;
    char out[512], ini[512], text[2048];
    snprintf(out, sizeof out, "%s/out.bin", d->path);
    snprintf(text, sizeof text,
             "[job w]\nplugin = %s/writewl.so\nworkload = write_blocks\npath = %s\nwarmup = 2\n"
             "iterations = 5\nrepeat = 2\n",
             DLG_TEST_WRITEWL_DIR, out);
    rt_write(d, "writes.ini", text, ini, sizeof ini);
    rt_cell c;
    rt_cell_run(&c, ini);
    assert_string_equal(c.res.status, "ok");
    assert_int_equal(rt_cell_uint(&c, "storage_write_bytes"), 30000);
    assert_int_equal(rt_cell_uint(&c, "storage_write_ios"), 30);
    assert_int_equal(rt_cell_uint(&c, "storage_read_bytes"), 0);
    assert_int_equal(rt_cell_uint(&c, "storage_ios"), 0);
    /* the bytes reached the file: each repetition recreates it, then
     * writes (2 + 5) steps x 3000 bytes */
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_size, 21000);
    rt_cell_done(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(timed_writes_counted, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
