/* The run journal: records read back, a torn last line (a power cut
 * mid-write) forgotten and cut off, so the records appended after it on
 * resume stay whole lines, and a journal of another configuration refused. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal.h"

static void journal_path(char *dir, size_t dlen, char *path, size_t plen)
{
    snprintf(dir, dlen, "/tmp/dlg-journal-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, plen, "%s/run.journal", dir);
}

static void append_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_torn_last_line(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512];
    journal_path(dir, sizeof dir, path, sizeof path);
    dlg_journal j;
    assert_int_equal(dlg_journal_create(&j, path, "r1", "abc", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 0, "ok", err, sizeof err), 0);
    dlg_journal_close(&j);
    append_text(path, "done a 5 o"); /* cell 5's record, cut mid-write */

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_true(dlg_journal_is_done(&j, "a", 0));
    assert_false(dlg_journal_is_done(&j, "a", 5)); /* not recorded: measured again */
    assert_int_equal(dlg_journal_record(&j, "a", 1, "ok", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 2, "ok", err, sizeof err), 0);
    dlg_journal_close(&j);

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    for (size_t c = 0; c < 3; c++)
        assert_true(dlg_journal_is_done(&j, "a", c));
    assert_false(dlg_journal_is_done(&j, "a", 5)); /* glued to the next record, it read as done */
    assert_int_equal(j.ndone, 3);
    assert_string_equal(j.run_id, "r1");
    dlg_journal_close(&j);

    assert_int_not_equal(dlg_journal_resume(&j, path, "other", err, sizeof err), 0);
    assert_non_null(strstr(err, "the configuration changed"));
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torn_last_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
