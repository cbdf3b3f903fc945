/* The run's journal when memory runs out: each allocation of a run's
 * records (a cell done, a row sent to one sink and kept for another, a
 * row kept, a resumed journal read back) fails in turn (rt_oom.h).  A
 * record that returned 0 must read back on --resume, every one; one that
 * failed must say why; and the journal must always read back: a journal
 * --resume refuses loses the results it holds. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal.h"
#include "journal_row.h"
#include "rt_oom.h"
#include "rt_util.h"

enum { DONE_A, SENT_B, KEPT_B, KEPT_C, DONE_D, STEPS };

/* The records of one run, the n-th allocation failing; rc[] each one's. */
static void records(dlg_journal *j, const char *hex, long n, int rc[STEPS], char why[STEPS][512])
{
    rt_oom_arm(n);
    rc[DONE_A] = dlg_journal_record(j, "a", 0, "ok", why[DONE_A], sizeof why[DONE_A]);
    rc[SENT_B] = dlg_journal_record_sent(j, "b", 1, "csv", why[SENT_B], sizeof why[SENT_B]);
    rc[KEPT_B] = dlg_journal_record_kept(j, "b", 1, "ok", hex, why[KEPT_B], sizeof why[KEPT_B]);
    rc[KEPT_C] = dlg_journal_record_kept(j, "c", 2, "failed", hex, why[KEPT_C], sizeof why[KEPT_C]);
    rc[DONE_D] = dlg_journal_record(j, "d", 3, "ok", why[DONE_D], sizeof why[DONE_D]);
}

/* What resume reads holds every record that returned 0. */
static void check_resumed(const dlg_journal *j, const char *hex, const int rc[STEPS], long n)
{
    if (rc[DONE_A] == 0 && !dlg_journal_is_done(j, "a", 0))
        fail_msg("allocation %ld failed: cell a/0 was recorded done, and is not on --resume", n);
    if (rc[DONE_D] == 0 && !dlg_journal_is_done(j, "d", 3))
        fail_msg("allocation %ld failed: cell d/3 was recorded done, and is not on --resume", n);
    const dlg_journal_pending *b = dlg_journal_pending_of(j, "b", 1), *c = dlg_journal_pending_of(j, "c", 2);
    if (rc[SENT_B] == 0 && (!b || !dlg_journal_sent_to(b, "csv")))
        fail_msg("allocation %ld failed: b/1's row reached csv, and --resume does not know", n);
    if (rc[KEPT_B] == 0 && (!b || !b->row || strcmp(b->row, hex) != 0 || strcmp(b->status, "ok") != 0))
        fail_msg("allocation %ld failed: b/1's row was kept, and --resume has %s", n,
                 !b ? "no record" : !b->row ? "no row" : "another row");
    if (rc[KEPT_C] == 0 && (!c || !c->row || strcmp(c->row, hex) != 0 || strcmp(c->status, "failed") != 0))
        fail_msg("allocation %ld failed: c/2's row was kept, and --resume has %s", n,
                 !c ? "no record" : !c->row ? "no row" : "another row");
}

static void every_allocation_fails_once(void **state)
{
    if (!rt_oom_possible())
        skip();
    const rt_dir *dir = *state;
    char path[600], err[512];
    dlg_wire_point row;
    assert_int_equal(dlg_wire_point_init(&row, "dlgauge_result", 1764670000123456789ll), 0);
    dlg_wire_set_tag(&row, "job", "b");
    dlg_field f = {.key = "throughput", .type = DLG_FIELD_DOUBLE, .v.d = 2170767.0043415339};
    dlg_wire_add_field(&row, &f);
    char *hex = dlg_journal_row_encode(&row.point);
    assert_non_null(hex);
    int failures = 0;
    long n = 1;
    for (; n < 100000; n++) {
        snprintf(path, sizeof path, "%s/run%ld.journal", dir->path, n);
        dlg_journal j;
        if (dlg_journal_create(&j, path, "run1", "abc", err, sizeof err) != 0)
            fail_msg("%s", err);
        int rc[STEPS];
        char why[STEPS][512] = {{0}};
        records(&j, hex, n, rc, why);
        long made = rt_oom_disarm();
        dlg_journal_close(&j);
        for (int s = 0; s < STEPS; s++) {
            failures += rc[s] != 0;
            if (rc[s] != 0 && !strstr(why[s], "out of memory") && !strstr(why[s], "Cannot allocate memory"))
                fail_msg("allocation %ld failed: record %d returned %d saying '%s'", n, s, rc[s], why[s]);
        }
        /* read back, then resumed under the same shortage */
        for (int armed = 0; armed < 2; armed++) {
            if (armed)
                rt_oom_arm(n);
            int rrc = dlg_journal_resume(&j, path, "abc", err, sizeof err);
            if (armed)
                rt_oom_disarm();
            if (rrc != 0 && (!armed || (!strstr(err, "out of memory") && !strstr(err, "Cannot allocate memory"))))
                fail_msg("allocation %ld failed: --resume%s refused the journal: %s", n,
                         armed ? " (its own allocation failing)" : "", err);
            if (rrc == 0) {
                check_resumed(&j, hex, rc, n);
                dlg_journal_close(&j);
            }
        }
        unlink(path);
        if (made < n)
            break; /* nothing failed: every allocation was seen */
    }
    fprintf(stderr, "journal: %ld allocations, %d records refused\n", n, failures);
    assert_true(n < 100000);
    assert_true(failures > 3);
    free(hex);
    dlg_wire_point_free(&row);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_allocation_fails_once, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
