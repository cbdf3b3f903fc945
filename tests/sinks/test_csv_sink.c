/* CSV sink through csv.so: header once, RFC 4180 quoting, append with the
 * same header, refusal of a different one, unwritable path, full disk. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sink_test_util.h"

static const char *const TAGS[] = {"host", "job", "note"};
static const dlg_metric FIELDS[] = {
    {"throughput", DLG_FIELD_DOUBLE, "images/s", ""},
    {"unit", DLG_FIELD_STRING, "", ""},
    {"items", DLG_FIELD_INT, "", ""},
    {"ok", DLG_FIELD_BOOL, "", ""},
    {NULL, 0, NULL, NULL},
};
static const dlg_schema SCHEMA = {TAGS, 3, FIELDS, 4};

typedef struct fixture {
    char *dir, *path;
    mock_host m;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = st_tempdir();
    f->path = st_join(f->dir, "sub/dir/run.csv"); /* parents must be created */
    mock_host_init(&f->m);
    *state = f;
    return f->dir ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    st_rmtree(f->dir);
    free(f->dir);
    free(f->path);
    free(f);
    return 0;
}

static void *open_csv(fixture *f, const char *path, const dlg_sink_ops **ops)
{
    char opt[4200];
    snprintf(opt, sizeof opt, "path=%s", path);
    const char *ov[] = {opt, NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(&f->m, "csv.so", "csv", ov, ops, &st), 0);
    return st;
}

/* One result point: note and unit carry text that needs quoting. */
static void write_result(const dlg_sink_ops *ops, void *st, const char *note, double tp, int64_t ns)
{
    dlg_tag tags[] = {{"host", "h1"}, {"job", "resnet50"}, {"note", note}};
    dlg_field fields[] = {
        {"items", DLG_FIELD_INT, {.i = 640}},
        {"throughput", DLG_FIELD_DOUBLE, {.d = tp}},
        {"unit", DLG_FIELD_STRING, {.s = "images/s"}},
        {"ok", DLG_FIELD_BOOL, {.b = true}},
    };
    dlg_point p = {"dlgauge_result", tags, 3, fields, 4, ns};
    assert_int_equal(ops->write(st, &p, 1), 0);
}

static void write_progress(const dlg_sink_ops *ops, void *st)
{
    dlg_tag tags[] = {{"job", "resnet50"}};
    dlg_field fields[] = {{"step_rate", DLG_FIELD_DOUBLE, {.d = 3.5}}};
    dlg_point p = {"dlgauge_progress", tags, 1, fields, 1, 1};
    assert_int_equal(ops->write(st, &p, 1), 0);
}

static void test_rows_and_quoting(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &SCHEMA), 0);
    write_result(ops, st, "plain", 1234.5, 1700000000123456789);
    write_progress(ops, st); /* not a row */
    write_result(ops, st, "a,b \"q\"\nnext\rline", 0.1, 1);
    assert_int_equal(ops->flush(st, 1000000000), 0);
    ops->close(st);

    char *text = st_slurp(f->path, NULL);
    assert_non_null(text);
    assert_string_equal(text,
                        "time,host,job,note,throughput,unit,items,ok\n"
                        "2023-11-14T22:13:20.123456789Z,h1,resnet50,plain,1234.5,images/s,640,true\n"
                        "1970-01-01T00:00:00.000000001Z,h1,resnet50,\"a,b \"\"q\"\"\nnext\rline\",0.1,"
                        "images/s,640,true\n");
    free(text);
}

static void test_append_same_header(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    for (int run = 0; run < 2; run++) {
        void *st = open_csv(f, f->path, &ops);
        assert_int_equal(ops->begin(st, &SCHEMA), 0);
        write_result(ops, st, "x", run, 1000000000);
        ops->close(st);
    }
    char *text = st_slurp(f->path, NULL);
    assert_string_equal(text, "time,host,job,note,throughput,unit,items,ok\n"
                              "1970-01-01T00:00:01.000000000Z,h1,resnet50,x,0,images/s,640,true\n"
                              "1970-01-01T00:00:01.000000000Z,h1,resnet50,x,1,images/s,640,true\n");
    free(text);
    assert_int_equal(f->m.errors, 0);
}

static void test_refuse_different_header(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &SCHEMA), 0);
    write_result(ops, st, "x", 1, 1);
    ops->close(st);

    static const dlg_metric other[] = {
        {"throughput", DLG_FIELD_DOUBLE, "", ""},
        {"latency_p50_us", DLG_FIELD_DOUBLE, "", ""},
        {NULL, 0, NULL, NULL},
    };
    dlg_schema s2 = {TAGS, 3, other, 2};
    st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &s2), -DLG_EINVAL);
    ops->close(st);
    assert_int_equal(f->m.errors, 1);
    assert_non_null(strstr(f->m.last_error, f->path));
    assert_non_null(strstr(f->m.last_error, "column 6"));
    assert_non_null(strstr(f->m.last_error, "\"unit\""));
    assert_non_null(strstr(f->m.last_error, "\"latency_p50_us\""));
    /* the old file is untouched */
    char *text = st_slurp(f->path, NULL);
    assert_int_equal(st_count_lines(text), 2);
    free(text);

    /* fewer columns: names the first one the file lacks */
    dlg_schema s3 = {TAGS, 3, FIELDS, 3};
    st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &s3), -DLG_EINVAL);
    ops->close(st);
    assert_non_null(strstr(f->m.last_error, "column 8: the file has \"ok\", this run writes no such column"));
}

static void test_header_from_first_point_without_begin(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    write_result(ops, st, "n", 2, 0);
    ops->close(st);
    char *text = st_slurp(f->path, NULL);
    assert_string_equal(text, "time,host,job,note,items,throughput,unit,ok\n"
                              "1970-01-01T00:00:00.000000000Z,h1,resnet50,n,640,2,images/s,true\n");
    free(text);
}

static void test_unwritable_path(void **state)
{
    fixture *f = *state;
    /* a directory cannot be created under a regular file (even by root) */
    char *file = st_join(f->dir, "plainfile");
    FILE *fp = fopen(file, "w");
    fclose(fp);
    char *bad = st_join(file, "x/run.csv");
    char opt[4200];
    snprintf(opt, sizeof opt, "path=%s", bad);
    const char *ov[] = {opt, NULL};
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&f->m, "csv.so", "csv", ov, &ops, &st), -DLG_EIO);
    assert_null(st);
    assert_non_null(strstr(f->m.last_error, bad));
    assert_non_null(strstr(f->m.last_error, "Not a directory"));
    free(bad);
    free(file);
}

static void test_disk_full(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    void *st = open_csv(f, "/dev/full", &ops);
    assert_int_equal(ops->begin(st, &SCHEMA), -DLG_EIO);
    ops->close(st);
    assert_non_null(strstr(f->m.last_error, "/dev/full"));
    assert_non_null(strstr(f->m.last_error, "ENOSPC"));
}

static void test_path_required(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&f->m, "csv.so", "csv", NULL, &ops, &st), -DLG_EINVAL);
    assert_non_null(strstr(f->m.last_error, "path is required"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rows_and_quoting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_same_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_different_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_from_first_point_without_begin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_required, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
