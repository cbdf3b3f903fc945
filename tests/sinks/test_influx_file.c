/* influx.so writing line protocol to a file: read back, known answers,
 * progress filtering, option errors, the file deleted or moved mid-run. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sink_test_util.h"

static void write_points(const dlg_sink_ops *ops, void *st)
{
    dlg_tag tags[] = {{"run_id", "r 1"}, {"job", "resnet50"}, {"cell", ""}}; /* unsorted, one empty */
    dlg_field fields[] = {
        {"throughput", DLG_FIELD_DOUBLE, {.d = 1234.5}},
        {"nan", DLG_FIELD_DOUBLE, {.d = NAN}},
        {"items", DLG_FIELD_INT, {.i = 640}},
        {"bytes", DLG_FIELD_UINT, {.u = 5}},
        {"unit", DLG_FIELD_STRING, {.s = "images/s \"x\""}},
        {"ok", DLG_FIELD_BOOL, {.b = true}},
    };
    dlg_field pf[] = {{"step_rate", DLG_FIELD_DOUBLE, {.d = 2.25}}};
    dlg_field bad[] = {{"nan", DLG_FIELD_DOUBLE, {.d = INFINITY}}};
    dlg_point pts[] = {
        {"dlgauge_result", tags, 3, fields, 6, 1700000000000000000},
        {"dlgauge_progress", tags, 2, pf, 1, 1700000001000000000},
        {"dlgauge_result", tags, 1, bad, 1, 3}, /* no field left: dropped */
    };
    assert_int_equal(ops->write(st, pts, 3), 0);
}

static void *open_influx(mock_host *m, const char *const *ov, const dlg_sink_ops **ops)
{
    void *st = NULL;
    assert_int_equal(st_open_sink(m, "influx.so", "influx", ov, ops, &st), 0);
    return st;
}

/* influx.so writing to the file at path, *m made anew; extra: one more
 * option, or NULL. */
static void *open_file(mock_host *m, const char *path, const char *extra, const dlg_sink_ops **ops)
{
    char opt[4200];
    snprintf(opt, sizeof opt, "path=%s", path);
    const char *ov[] = {opt, extra, NULL};
    mock_host_init(m);
    return open_influx(m, ov, ops);
}

static void test_file_read_back(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "lp/out.lp");
    mock_host m;
    const dlg_sink_ops *ops;
    void *st = open_file(&m, path, NULL, &ops);
    write_points(ops, st);
    /* written through at write(), before flush */
    char *text = st_slurp(path, NULL);
    const char *want =
        "dlgauge_result,job=resnet50,run_id=r\\ 1 throughput=1234.5,items=640i,bytes=5i,"
        "unit=\"images/s \\\"x\\\"\",ok=true 1700000000000000000\n"
        "dlgauge_progress,job=resnet50,run_id=r\\ 1 step_rate=2.25 1700000001000000000\n";
    assert_string_equal(text, want);
    free(text);
    assert_int_equal(ops->flush(st, 0), 0);
    ops->close(st);

    /* progress = false: only the result point is appended */
    assert_int_equal(m.errors, 0);
    st = open_file(&m, path, "progress=false", &ops);
    write_points(ops, st);
    ops->close(st);
    text = st_slurp(path, NULL);
    assert_int_equal(st_count_lines(text), 3);
    assert_true(strncmp(text + strlen(want), "dlgauge_result,", 15) == 0);
    free(text);
    assert_int_equal(m.errors, 0);
    st_rmtree(dir);
    free(path);
    free(dir);
}

static void test_option_errors(void **unused)
{
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", NULL, &ops, &st), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "set exactly one of path (a file), url (HTTP) or udp"));

    const char *two[] = {"path=/tmp/x.lp", "udp=127.0.0.1:9", NULL};
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", two, &ops, &st), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "more than one"));

    const char *nodb[] = {"url=http://127.0.0.1:9/write", NULL};
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", nodb, &ops, &st), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "no db= parameter"));

    const char *prec[] = {"url=http://127.0.0.1:9/write?db=x&precision=s", NULL};
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", prec, &ops, &st), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "nanosecond"));

    const char *scheme[] = {"url=ftp://127.0.0.1/write?db=x", NULL};
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", scheme, &ops, &st), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "not an http:// or https:// URL"));

    const char *v2[] = {"url=http://127.0.0.1:9", "org=o", "bucket=b", NULL};
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", v2, &ops, &st), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "missing token"));

    const char *udp[] = {"udp=localhost", NULL};
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", udp, &ops, &st), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "expected HOST:PORT"));
    assert_null(st);
}

/* A point cut short by a crash ("throughput=12" of 1234.5 still parses,
 * with a wrong value): the next run moves it to PATH.cut (one warning), so
 * neither it nor a point glued onto it is ever read as data. */
static void test_file_cut_last_line(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "cut.lp"), *cut = st_join(dir, "cut.lp.cut");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("dlgauge_result,job=a throughput=1234.5 1\ndlgauge_result,job=a throughput=12", f);
    assert_int_equal(fclose(f), 0);
    mock_host m;
    const dlg_sink_ops *ops;
    void *st = open_file(&m, path, NULL, &ops);
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, cut));
    write_points(ops, st);
    ops->close(st);
    char *text = st_slurp(path, NULL);
    assert_true(strncmp(text, "dlgauge_result,job=a throughput=1234.5 1\ndlgauge_result,job=resnet50,run_id=r\\ 1 ",
                        80) == 0);
    assert_null(strstr(text, "throughput=12\n"));
    char *aside = st_slurp(cut, NULL);
    assert_string_equal(aside, "dlgauge_result,job=a throughput=12\n");
    assert_int_equal(m.errors, 0);
    free(aside);
    free(text);
    st_rmtree(dir);
    free(cut);
    free(path);
    free(dir);
}

/* A full disk in the middle of a write: the error names the file, and no
 * cut line is left behind for later points to follow. */
static void test_file_full_disk_leaves_no_cut_line(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "full.lp");
    mock_host m;
    const dlg_sink_ops *ops;
    void *st = open_file(&m, path, "progress=false", &ops);
    dlg_field fields[] = {{"throughput", DLG_FIELD_DOUBLE, {.d = 1234.5}}};
    dlg_point p = {"dlgauge_result", NULL, 0, fields, 1, 1};
    assert_int_equal(ops->write(st, &p, 1), 0);
    st_fsize_limit(60); /* room for part of the next line */
    int rc = ops->write(st, &p, 1);
    st_fsize_unlimit();
    assert_int_equal(rc, -DLG_EIO);
    assert_non_null(strstr(m.last_error, path));
    ops->close(st);
    char *text = st_slurp(path, NULL);
    assert_string_equal(text, "dlgauge_result throughput=1234.5 1\n");
    free(text);
    st_rmtree(dir);
    free(path);
    free(dir);
}

/* One result point with throughput v at time t. */
static void write_one(const dlg_sink_ops *ops, void *st, double v, int64_t t)
{
    dlg_field fields[] = {{"throughput", DLG_FIELD_DOUBLE, {.d = v}}};
    dlg_point p = {"dlgauge_result", NULL, 0, fields, 1, t};
    assert_int_equal(ops->write(st, &p, 1), 0);
}

/* The file deleted during the run is made again from the copy still open,
 * with one warning; later points follow (they went to the deleted inode,
 * lost to anyone reading the path). */
static void test_file_deleted(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "out.lp");
    mock_host m;
    const dlg_sink_ops *ops;
    void *st = open_file(&m, path, NULL, &ops);
    write_one(ops, st, 1, 1);
    assert_int_equal(unlink(path), 0);
    write_one(ops, st, 2, 2);
    write_one(ops, st, 3, 3);
    assert_int_equal(ops->flush(st, 0), 0);
    ops->close(st);
    char *text = st_slurp(path, NULL);
    assert_non_null(text);
    assert_string_equal(text, "dlgauge_result throughput=1 1\ndlgauge_result throughput=2 2\n"
                              "dlgauge_result throughput=3 3\n");
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, "was deleted during the run: made again"));
    assert_non_null(strstr(m.last_log, "1 point this run wrote"));
    assert_int_equal(m.errors, 0);
    free(text);
    st_rmtree(dir);
    free(path);
    free(dir);
}

/* Moved away: what it held stays in the moved file, later points go to a
 * new file at the path. */
static void test_file_moved(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "out.lp"), *moved = st_join(dir, "old.lp");
    mock_host m;
    const dlg_sink_ops *ops;
    void *st = open_file(&m, path, NULL, &ops);
    write_one(ops, st, 1, 1);
    write_one(ops, st, 2, 2);
    assert_int_equal(rename(path, moved), 0);
    write_one(ops, st, 3, 3);
    ops->close(st);
    char *now = st_slurp(path, NULL), *old = st_slurp(moved, NULL);
    assert_non_null(now);
    assert_non_null(old);
    assert_string_equal(old, "dlgauge_result throughput=1 1\ndlgauge_result throughput=2 2\n");
    assert_string_equal(now, "dlgauge_result throughput=3 3\n");
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, "2 points this run wrote before stay in the moved file"));
    assert_int_equal(m.errors, 0);
    free(now);
    free(old);
    st_rmtree(dir);
    free(moved);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_read_back),
        cmocka_unit_test(test_file_cut_last_line),
        cmocka_unit_test(test_file_full_disk_leaves_no_cut_line),
        cmocka_unit_test(test_option_errors),
        cmocka_unit_test(test_file_deleted),
        cmocka_unit_test(test_file_moved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
