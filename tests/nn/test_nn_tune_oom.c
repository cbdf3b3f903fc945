/* Storing an entry in the tuning record (core/nn/tune.h) when memory runs
 * out: each allocation of dlg_tune_put fails in turn (rt_oom.h) on a
 * record of 600 entries (past the 8 KiB a memory stream starts with, so
 * the new text must grow).  Afterwards the record must read back with
 * every old entry and value, and with the new one exactly when the put
 * said it stored it.  Memory running out while this CPU's identity was
 * read made the record "another CPU's": it was rewritten with the new
 * entry alone, its 600 wiped.  And the new text was composed in an
 * open_memstream, which drops a character it cannot grow for without an
 * error: a short record could replace a whole one. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_text.h"
#include "rt_oom.h"
#include "rt_util.h"
#include "tune.h"
#include "tune_testutil.h"

enum { ENTRIES = 600 };

static void entry(int i, char key[32], char val[64])
{
    snprintf(key, 32, "conv%05d:fwd", i);
    snprintf(val, 64, "winograd_%05d", i * 7);
}

/* Whether every old entry reads back as stored (and the new one as want:
 * present or not); says which does not. */
static void check_record(const char *path, long n, int stored)
{
    char key[32], want[64], val[DLG_TUNE_VAL_MAX];
    for (int i = 0; i < ENTRIES; i++) {
        entry(i, key, want);
        if (!dlg_tune_get(path, key, val, sizeof val) || strcmp(val, want) != 0)
            fail_msg("allocation %ld failed (put %s): entry %s reads back %s", n, stored ? "stored" : "refused", key,
                     dlg_tune_get(path, key, val, sizeof val) ? val : "nothing");
    }
    bool has = dlg_tune_get(path, "conv_new:bwd", val, sizeof val);
    if (has != stored || (has && strcmp(val, "direct") != 0))
        fail_msg("allocation %ld failed: put %s, yet the new entry %s", n, stored ? "stored" : "refused",
                 has ? "is there" : "is not");
}

static void every_allocation_fails_once(void **st)
{
    if (!rt_oom_possible())
        skip();
    const char *dir = ((const rt_dir *)*st)->path;
    char base[300], path[300], key[32], val[64];
    snprintf(base, sizeof base, "%s/base.txt", dir);
    for (int i = 0; i < ENTRIES; i++) {
        entry(i, key, val);
        assert_int_equal(dlg_tune_put(base, key, val), 0);
    }
    size_t len = 0;
    char *text = file_text_len(base, &len);
    assert_non_null(text);
    assert_true(len > 12000);
    int failures = 0;
    long n = 1;
    for (; n < 100000; n++) {
        snprintf(path, sizeof path, "%s/r%ld.txt", dir, n); /* a file of its own: "said once" is per file */
        tt_write(path, text, len);
        tt_stderr cap;
        tt_capture(&cap); /* a record not written says so on stderr */
        rt_oom_arm(n);
        int rc = dlg_tune_put(path, "conv_new:bwd", "direct");
        long made = rt_oom_disarm();
        free(tt_captured(&cap));
        failures += rc != 0;
        /* read back under another name: one this process failed to read
         * is not read again (a line once, not one per look-up) */
        char copy[300];
        snprintf(copy, sizeof copy, "%s/c%ld.txt", dir, n);
        assert_int_equal(rename(path, copy), 0);
        check_record(copy, n, rc == 0);
        unlink(copy);
        if (made < n)
            break; /* nothing failed: every allocation was seen */
    }
    fprintf(stderr, "tune: %ld allocations, %d puts refused\n", n, failures);
    assert_true(n < 100000);
    assert_true(failures > 0);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_allocation_fails_once, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
