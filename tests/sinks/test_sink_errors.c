/* What a user reads when a sink refuses its configuration: through the
 * core's sink set (as `dlgauge run`, `--dry-run` and `flush` call it),
 * against the build's csv, json and influx plugins.  A message about one
 * key names that key's file:line (not the [sink] line), the sink's name
 * once, and an open that fails keeps its code for `dlgauge flush`. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rt_plan.h"
#include "sinkset.h"

typedef struct fixture {
    rt_plan p;
    char check[4096]; /* what the check op (--dry-run) said */
    char open[4096];  /* what opening said */
    int open_error;
} fixture;

/* Writes text as plan.ini in the test's folder and plans its sinks. */
static void plan(void **state, fixture *f, const char *text)
{
    memset(f, 0, sizeof *f);
    char err[4096];
    rt_plan_load(*state, "plan.ini", text, &f->p);
    if (dlg_plan_build_sinks(&f->p.plan, &f->p.cfg, &f->p.reg, err, sizeof err) != 0)
        fail_msg("sinks did not plan: %s", err);
}

/* Checks and opens the sinks of text, both expected to fail. */
static void refuse(void **state, fixture *f, const char *text)
{
    plan(state, f, text);
    assert_int_equal(dlg_sinkset_check(&f->p.plan, 0, f->check, sizeof f->check), -1);
    dlg_sinkset ss;
    assert_int_equal(dlg_sinkset_open(&ss, &f->p.plan, false, 0, f->open, sizeof f->open), -1);
    f->open_error = ss.open_error;
    dlg_sinkset_close(&ss, 0);
}

/* err is exactly "PATH:LINE: [sink NAME]: TEXT". */
static void assert_says(const fixture *f, const char *err, int line, const char *name, const char *text)
{
    char want[2048];
    snprintf(want, sizeof want, "%s:%d: [sink %s]: %s", f->p.path, line, name, text);
    assert_string_equal(err, want);
}

static void test_url_names_its_line(void **state)
{
    fixture f;
    refuse(state, &f, "[sink influx]\n; the database\nurl = ftp://127.0.0.1/x\n");
    const char *text = "url = ftp://127.0.0.1/x: not an http:// or https:// URL";
    assert_says(&f, f.check, 3, "influx", text);
    assert_says(&f, f.open, 3, "influx", text);
    assert_int_equal(f.open_error, DLG_EINVAL);
    rt_plan_done(&f.p);
}

/* Two ways to send: the later key of path, url, udp, with the other named,
 * and the sink's name once (it was "[sink both]: sink both: ..."). */
static void test_conflict_names_one_key_and_the_sink_once(void **state)
{
    fixture f;
    char text[1024];
    refuse(state, &f, "[sink both]\ntype = influx\npath = x.lp\nudp = 127.0.0.1:8089\nretries = 0\n");
    snprintf(text, sizeof text, "udp = 127.0.0.1:8089: set exactly one of path (a file), url (HTTP) or udp "
             "(HOST:PORT); more than one is set (path too)");
    assert_says(&f, f.check, 4, "both", text);
    assert_says(&f, f.open, 4, "both", text);
    rt_plan_done(&f.p);
    /* none given: about the section, so its line */
    refuse(state, &f, "[sink none]\ntype = influx\nretries = 0\n");
    assert_says(&f, f.open, 1, "none", "set exactly one of path (a file), url (HTTP) or udp (HOST:PORT); none is set");
    rt_plan_done(&f.p);
}

/* InfluxDB 2.x keys: the first one given, its value never a token. */
static void test_v2_keys_name_the_first_given(void **state)
{
    fixture f;
    refuse(state, &f, "[sink lp]\ntype = influx\npath = x.lp\n\nbucket = b\n");
    assert_says(&f, f.open, 5, "lp", "bucket = b: org, bucket and token need url = http://HOST:8086");
    rt_plan_done(&f.p);
    refuse(state, &f, "[sink lp]\ntype = influx\npath = x.lp\ntoken = s3cret\n");
    assert_says(&f, f.check, 4, "lp", "token = (hidden): org, bucket and token need url = http://HOST:8086");
    rt_plan_done(&f.p);
    refuse(state, &f, "[sink v2]\ntype = influx\nurl = http://127.0.0.1:9\norg = o\ntoken = s3cret\n");
    assert_says(&f, f.check, 4, "v2", "org = o: InfluxDB 2.x needs all of org, bucket and token (missing bucket)");
    assert_null(strstr(f.check, "s3cret"));
    rt_plan_done(&f.p);
}

/* A path that cannot be created: the path key's line, for csv, json and
 * influx alike (the same helper opens all three). */
static void test_path_names_its_line(void **state)
{
    const rt_dir *d = *state;
    char afile[512], ini[2048], text[2048];
    rt_write(d, "afile", "not a directory\n", afile, sizeof afile);
    static const char *const types[] = {"csv", "json", "influx"};
    for (size_t i = 0; i < 3; i++) {
        fixture f;
        snprintf(ini, sizeof ini, "[sink out]\ntype = %s\n\npath = %s/x/out\n", types[i], afile);
        refuse(state, &f, ini);
        snprintf(text, sizeof text, "path = %s/x/out: cannot create its directory: %s is not a directory", afile,
                 afile);
        assert_says(&f, f.check, 4, "out", text);
        snprintf(text, sizeof text, "path = %s/x/out: cannot create its directory: Not a directory", afile);
        assert_says(&f, f.open, 4, "out", text);
        assert_int_equal(f.open_error, DLG_EIO);
        rt_plan_done(&f.p);
    }
}

/* A spool that cannot be written: refused by --dry-run and before the first
 * cell, at its key's line (it used to pass both, and the points the run
 * could not deliver were lost at its end); no connection is tried. */
static void test_spool_dir_names_its_line(void **state)
{
    const rt_dir *d = *state;
    char afile[512], ini[2048], text[2048];
    rt_write(d, "afile", "not a directory\n", afile, sizeof afile);
    fixture f;
    snprintf(ini, sizeof ini, "[sink db]\ntype = influx\nurl = http://127.0.0.1:9\nspool_dir = %s/spool\n", afile);
    refuse(state, &f, ini);
    snprintf(text, sizeof text, "spool_dir = %s/spool: cannot create it: %s is not a directory", afile, afile);
    assert_says(&f, f.check, 4, "db", text);
    assert_says(&f, f.open, 4, "db", text);
    assert_int_equal(f.open_error, DLG_EIO);
    rt_plan_done(&f.p);
    snprintf(ini, sizeof ini, "[sink db]\ntype = influx\nurl = http://127.0.0.1:9\nspool_dir = %s\n", afile);
    refuse(state, &f, ini);
    snprintf(text, sizeof text, "spool_dir = %s: not a directory", afile);
    assert_says(&f, f.check, 4, "db", text);
    rt_plan_done(&f.p);
}

/* A sink that fails without host->error(): its return code is kept (flush
 * tells DLG_EIO, worth a retry, from the rest), the line is the section's. */
static void test_silent_open_keeps_its_code(void **state)
{
    fixture f;
    char ini[1024], want[1200];
    snprintf(ini, sizeof ini, "[sink s]\nplugin = %s/silent_sink.so\ntype = silent\n", DLG_TEST_PLUGIN_DIR);
    plan(state, &f, ini);
    dlg_sinkset ss;
    assert_int_equal(dlg_sinkset_open(&ss, &f.p.plan, false, 0, f.open, sizeof f.open), -1);
    assert_int_equal(ss.open_error, DLG_EIO);
    dlg_sinkset_close(&ss, 0);
    snprintf(want, sizeof want, "%s:1: [sink s]: open failed (DLG_EIO) without saying why", f.p.path);
    assert_string_equal(f.open, want);
    rt_plan_done(&f.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_url_names_its_line, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_conflict_names_one_key_and_the_sink_once, rt_dir_setup,
                                        rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_v2_keys_name_the_first_given, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_path_names_its_line, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_spool_dir_names_its_line, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_silent_open_keeps_its_code, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
