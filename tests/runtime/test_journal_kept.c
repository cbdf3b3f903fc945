/* The journal's record of a row that did not reach every sink (journal.h):
 * `sent` names each sink that has it, `kept` holds the row itself, and
 * both read back on --resume until the cell's `done`; the kept row
 * decodes to the point that was kept, every field and tag; a `kept` or
 * `sent` that cannot be read is an error at its file:line.  A cell whose
 * row missed a sink used to be recorded done like any other. */
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
#include "journal_row.h"

typedef struct tmp_journal {
    char dir[64], path[128];
} tmp_journal;

static void tmp_open(tmp_journal *t, dlg_journal *j)
{
    char err[512];
    snprintf(t->dir, sizeof t->dir, "/tmp/dlg-jkept-XXXXXX");
    assert_non_null(mkdtemp(t->dir));
    snprintf(t->path, sizeof t->path, "%s/run.journal", t->dir);
    if (dlg_journal_create(j, t->path, "run1", "abc", err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void tmp_done(tmp_journal *t)
{
    unlink(t->path);
    rmdir(t->dir);
}

static void reopen(tmp_journal *t, dlg_journal *j)
{
    char err[512];
    dlg_journal_close(j);
    if (dlg_journal_resume(j, t->path, "abc", err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void row_point(dlg_wire_point *wp)
{
    assert_int_equal(dlg_wire_point_init(wp, "dlgauge_result", 1764670000123456789ll), 0);
    dlg_wire_set_tag(wp, "job", "b");
    dlg_wire_set_tag(wp, "status", "ok");
    dlg_field f[] = {{.key = "throughput", .type = DLG_FIELD_DOUBLE, .v.d = 2170767.0043415339},
                     {.key = "steps", .type = DLG_FIELD_UINT, .v.u = 6},
                     {.key = "ranks", .type = DLG_FIELD_INT, .v.i = -1},
                     {.key = "memory_enforced", .type = DLG_FIELD_BOOL, .v.b = true},
                     {.key = "error", .type = DLG_FIELD_STRING, .v.s = "a b,c=\"d\"\n"}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        dlg_wire_add_field(wp, &f[i]);
}

static void assert_same_point(const dlg_point *a, const dlg_point *b)
{
    assert_string_equal(a->measurement, b->measurement);
    assert_true(a->time_ns == b->time_ns);
    assert_int_equal(a->ntags, b->ntags);
    assert_int_equal(a->nfields, b->nfields);
    for (size_t i = 0; i < a->ntags; i++) {
        assert_string_equal(a->tags[i].key, b->tags[i].key);
        assert_string_equal(a->tags[i].value, b->tags[i].value);
    }
    for (size_t i = 0; i < a->nfields; i++) {
        assert_string_equal(a->fields[i].key, b->fields[i].key);
        assert_int_equal(a->fields[i].type, b->fields[i].type);
        if (a->fields[i].type == DLG_FIELD_STRING)
            assert_string_equal(a->fields[i].v.s, b->fields[i].v.s);
        else
            assert_memory_equal(&a->fields[i].v, &b->fields[i].v, 8);
    }
}

/* Sink csv took the row of cell b/0, sink f refused it: both read back,
 * with the row; the cell is not done until its `done`, which clears it. */
static void test_kept_row_read_back(void **unused)
{
    (void)unused;
    tmp_journal t;
    dlg_journal j;
    char err[512];
    tmp_open(&t, &j);
    dlg_wire_point row, back;
    row_point(&row);
    char *hex = dlg_journal_row_encode(&row.point);
    assert_non_null(hex);
    assert_true(dlg_journal_row_is_hex(hex));
    assert_int_equal(dlg_journal_record(&j, "a", 0, "ok", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record_sent(&j, "b", 0, "csv", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record_kept(&j, "b", 0, "ok", hex, err, sizeof err), 0);
    reopen(&t, &j);

    assert_true(dlg_journal_is_done(&j, "a", 0));
    assert_false(dlg_journal_is_done(&j, "b", 0));
    assert_int_equal(j.ndone, 1);
    assert_int_equal(dlg_journal_nkept(&j), 1);
    assert_null(dlg_journal_pending_of(&j, "a", 0));
    const dlg_journal_pending *p = dlg_journal_pending_of(&j, "b", 0);
    assert_non_null(p);
    assert_true(dlg_journal_sent_to(p, "csv"));
    assert_false(dlg_journal_sent_to(p, "f"));
    assert_false(dlg_journal_sent_to(p, "cs")); /* a name, not a prefix */
    assert_string_equal(p->status, "ok");
    assert_int_equal(dlg_journal_row_decode(p->row, &back), 0);
    assert_same_point(&row.point, &back.point);
    dlg_wire_point_free(&back);

    /* --resume sent it to f: done, and nothing pending any more */
    assert_int_equal(dlg_journal_record(&j, "b", 0, "ok", err, sizeof err), 0);
    assert_null(dlg_journal_pending_of(&j, "b", 0));
    reopen(&t, &j);
    assert_true(dlg_journal_is_done(&j, "b", 0));
    assert_int_equal(dlg_journal_nkept(&j), 0);
    assert_int_equal(j.npending, 0);
    dlg_journal_close(&j);
    dlg_wire_point_free(&row);
    free(hex);
    tmp_done(&t);
}

/* A sink that killed dlgauge: the sinks before it have the row (`sent`),
 * no row is kept; what --resume reads names them alone. */
static void test_sent_without_row(void **unused)
{
    (void)unused;
    tmp_journal t;
    dlg_journal j;
    char err[512];
    tmp_open(&t, &j);
    assert_int_equal(dlg_journal_record_sent(&j, "b", 3, "csv", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record_sent(&j, "b", 3, "json", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record_sent(&j, "c", 0, "csv", err, sizeof err), 0);
    reopen(&t, &j);
    const dlg_journal_pending *p = dlg_journal_pending_of(&j, "b", 3);
    assert_non_null(p);
    assert_true(dlg_journal_sent_to(p, "csv") && dlg_journal_sent_to(p, "json"));
    assert_false(dlg_journal_sent_to(p, "influx"));
    assert_null(p->row);
    assert_null(dlg_journal_pending_of(&j, "b", 0));
    assert_int_equal(dlg_journal_nkept(&j), 0);
    assert_int_equal(j.ndone, 0);
    dlg_journal_close(&j);
    tmp_done(&t);
}

static void test_malformed_kept_or_sent(void **unused)
{
    (void)unused;
    static const struct {
        const char *line, *why;
    } bad[] = {
        {"kept b 0 ok\n", "malformed journal line (kept JOB CELL STATUS ROW)"},
        {"kept b 0 ok 4c4\n", "malformed journal line (kept JOB CELL STATUS ROW)"}, /* half a byte */
        {"kept b 0 ok 4C47\n", "malformed journal line (kept JOB CELL STATUS ROW)"},
        {"kept b x ok 4c47\n", "malformed journal line (kept JOB CELL STATUS ROW)"},
        {"sent b 0\n", "malformed journal line (sent JOB CELL SINK)"},
        {"sent b 0 a,b\n", "malformed journal line (sent JOB CELL SINK)"},
        {"sent b -1 csv\n", "malformed journal line (sent JOB CELL SINK)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tmp_journal t;
        dlg_journal j;
        char err[512] = "", want[256];
        tmp_open(&t, &j);
        dlg_journal_close(&j);
        FILE *f = fopen(t.path, "a");
        assert_non_null(f);
        fputs(bad[i].line, f);
        fclose(f);
        snprintf(want, sizeof want, "%s:2: %s", t.path, bad[i].why);
        if (dlg_journal_resume(&j, t.path, "abc", err, sizeof err) == 0 || strcmp(err, want) != 0)
            fail_msg("'%s' gave '%s', expected '%s'", bad[i].line, err, want);
        dlg_journal_close(&j);
        tmp_done(&t);
    }
}

/* A kept row that is hex of no frame does not decode (the cell is then
 * measured again), and says so rather than giving a point. */
static void test_row_that_does_not_decode(void **unused)
{
    (void)unused;
    dlg_wire_point wp;
    assert_int_equal(dlg_journal_row_decode("444c4750ffffffff", &wp), -1);
    assert_int_equal(dlg_journal_row_decode("00", &wp), -1);
    assert_int_equal(dlg_journal_row_decode("", &wp), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_row_read_back),
        cmocka_unit_test(test_sent_without_row),
        cmocka_unit_test(test_malformed_kept_or_sent),
        cmocka_unit_test(test_row_that_does_not_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
