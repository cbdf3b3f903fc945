/* The run's dlgauge_host point goes to each sink once.  With sinks j (a
 * JSON Lines file) and f (failsink, tests/runtime/failsink.c) the point
 * reaches j and is refused by f; --resume sends it to f alone, and once
 * both have it, to none.  A resumed run used to write it to every sink
 * again whenever one had refused it: j's file held two host points. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inventory.h"
#include "journal.h"
#include "rt_plan.h"
#include "sinkset.h"

/* Lines of file path holding "dlgauge_host" (0 when it is missing). */
static int host_points(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, "\"measurement\":\"dlgauge_host\"") != NULL;
    if (f)
        fclose(f);
    return n;
}

/* Opens sinks j and f (f's writes: `fail`, see failsink.c), sends the
 * inventory point of time t through jn, closes them: how many sinks
 * failed. */
static int send_at(void **state, const char *fail, dlg_journal *jn, const char *jsonl, int64_t t)
{
    char ini[2048], err[4096];
    snprintf(ini, sizeof ini,
             "[sink j]\ntype = json\npath = %s\n[sink f]\nplugin = %s/failsink.so\ntype = failing\n%s\n", jsonl,
             DLG_TEST_RT_PLUGIN_DIR, fail);
    rt_plan p;
    rt_plan_load(*state, "sinks.ini", ini, &p);
    if (dlg_plan_build_sinks(&p.plan, &p.cfg, &p.reg, err, sizeof err) != 0)
        fail_msg("sinks did not plan: %s", err);
    dlg_sinkset ss;
    if (dlg_sinkset_open(&ss, &p.plan, false, 0, err, sizeof err) != 0)
        fail_msg("sinks did not open: %s", err);
    dlg_wire_point inv;
    assert_int_equal(dlg_inventory_point(&inv, "r1", "h1", t), 0);
    char id[24];
    dlg_inventory_id(&inv, id, sizeof id);
    int failed = dlg_inventory_send(&ss, jn, &inv, id);
    dlg_wire_point_free(&inv);
    dlg_sinkset_close(&ss, 0);
    rt_plan_done(&p);
    return failed;
}

static int send_once(void **state, const char *fail, dlg_journal *jn, const char *jsonl)
{
    return send_at(state, fail, jn, jsonl, 1000);
}

/* A new journal in the test's folder (its path into jpath), and the json
 * sink's path into jsonl (512 bytes each). */
static void create_journal(void **state, dlg_journal *jn, char *jpath, char *jsonl)
{
    const rt_dir *d = *state;
    char err[1024];
    snprintf(jpath, 512, "%s/run.journal", d->path);
    snprintf(jsonl, 512, "%s/r.jsonl", d->path);
    assert_int_equal(dlg_journal_create(jn, jpath, "r1", "abc", err, sizeof err), 0);
}

static void test_resume_sends_host_point_to_sinks_lacking_it(void **state)
{
    char jpath[512], jsonl[512], err[1024];
    dlg_journal jn;
    create_journal(state, &jn, jpath, jsonl);
    assert_int_equal(send_once(state, "fail = said", &jn, jsonl), 1); /* f refuses every point */
    dlg_journal_close(&jn);
    assert_int_equal(host_points(jsonl), 1);

    /* --resume: f takes points now (it refuses only its 5th result row) */
    assert_int_equal(dlg_journal_resume(&jn, jpath, "abc", err, sizeof err), 0);
    assert_int_equal(send_once(state, "at = 5", &jn, jsonl), 0);
    dlg_journal_close(&jn);
    assert_int_equal(host_points(jsonl), 1); /* j had it: not written again */

    /* every sink has it: a further resume sends it to none */
    assert_int_equal(dlg_journal_resume(&jn, jpath, "abc", err, sizeof err), 0);
    dlg_wire_point inv;
    assert_int_equal(dlg_inventory_point(&inv, "r1", "h1", 1000), 0);
    char id[24];
    dlg_inventory_id(&inv, id, sizeof id);
    dlg_wire_point_free(&inv);
    assert_true(dlg_journal_has_inventory(&jn, id));
    assert_int_equal(send_once(state, "fail = said", &jn, jsonl), 0); /* f would refuse: not asked */
    dlg_journal_close(&jn);
    assert_int_equal(host_points(jsonl), 1);
}

/* Keeps the lines of file path that do not start with any of drop. */
static void drop_lines(const char *path, const char *const *drop)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192], kept[1 << 16] = "";
    size_t at = 0;
    while (fgets(line, sizeof line, f)) {
        bool keep = true;
        for (const char *const *d = drop; *d; d++)
            keep = keep && strncmp(line, *d, strlen(*d)) != 0;
        if (keep && at + strlen(line) < sizeof kept)
            at += (size_t)snprintf(kept + at, sizeof kept - at, "%s", line);
    }
    fclose(f);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(kept, f);
    fclose(f);
}

/* Killed after both sinks took the point and before the journal said so
 * (its records after `inventory_time` cut): --resume, a new point of a
 * later time, gives j no second one (json's write_again finds the first,
 * as the point goes at the journaled time).  It used to write the new
 * point: two host points in j. */
static void test_killed_before_host_point_recorded(void **state)
{
    char jpath[512], jsonl[512], err[1024];
    dlg_journal jn;
    create_journal(state, &jn, jpath, jsonl);
    assert_int_equal(send_at(state, "at = 5", &jn, jsonl, 1000), 0);
    dlg_journal_close(&jn);
    drop_lines(jpath, (const char *const[]){"inventory_sent ", "inventory ", NULL});
    assert_int_equal(dlg_journal_resume(&jn, jpath, "abc", err, sizeof err), 0);
    assert_int_equal(send_at(state, "at = 5", &jn, jsonl, 2000), 0);
    dlg_journal_close(&jn);
    assert_int_equal(host_points(jsonl), 1);
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(jsonl, "r");
    assert_non_null(f);
    assert_true(getdelim(&text, &len, '\0', f) > 0);
    fclose(f);
    assert_non_null(strstr(text, "\"time_ns\":1000,"));
    free(text);
}

/* The journal's inventory_sent and inventory_time records read back on
 * resume: the sinks and time for the point's id, none for another id
 * (another machine). */
static void test_inventory_sent_read_back(void **state)
{
    const rt_dir *d = *state;
    char jpath[512], err[1024];
    snprintf(jpath, sizeof jpath, "%s/run.journal", d->path);
    dlg_journal jn;
    assert_int_equal(dlg_journal_create(&jn, jpath, "r1", "abc", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record_inventory_sent(&jn, "00000000000000aa", "json", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record_inventory_sent(&jn, "00000000000000aa", "csv", err, sizeof err), 0);
    dlg_journal_close(&jn);
    assert_int_equal(dlg_journal_resume(&jn, jpath, "abc", err, sizeof err), 0);
    assert_true(dlg_journal_inventory_sent_to(&jn, "00000000000000aa", "json"));
    assert_true(dlg_journal_inventory_sent_to(&jn, "00000000000000aa", "csv"));
    assert_false(dlg_journal_inventory_sent_to(&jn, "00000000000000aa", "cs"));
    assert_false(dlg_journal_inventory_sent_to(&jn, "00000000000000aa", "influx"));
    assert_false(dlg_journal_inventory_sent_to(&jn, "00000000000000bb", "json"));
    assert_false(dlg_journal_has_inventory(&jn, "00000000000000aa"));
    assert_int_equal(jn.nunknown, 0); /* a record this version knows */
    int64_t t = 0;
    assert_false(dlg_journal_inventory_time(&jn, "00000000000000aa", &t));
    assert_int_equal(dlg_journal_record_inventory_time(&jn, "00000000000000aa", 1796396407069769754, err, sizeof err),
                     0);
    dlg_journal_close(&jn);
    assert_int_equal(dlg_journal_resume(&jn, jpath, "abc", err, sizeof err), 0);
    assert_true(dlg_journal_inventory_time(&jn, "00000000000000aa", &t));
    assert_true(t == 1796396407069769754);
    assert_false(dlg_journal_inventory_time(&jn, "00000000000000bb", &t));
    assert_int_equal(jn.nunknown, 0);
    dlg_journal_close(&jn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resume_sends_host_point_to_sinks_lacking_it, rt_dir_setup,
                                        rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_inventory_sent_read_back, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_killed_before_host_point_recorded, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
