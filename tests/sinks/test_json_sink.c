/* JSON sink through json.so: the output is parsed back with json-c (an
 * independent parser) and compared value by value; escaping known answers. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <float.h>
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

static const char NASTY[] = "q\"b\\s/\x01\x1f\t\n\r\b\f caf\xc3\xa9";

static void *open_json(mock_host *m, const char *path, const char *progress, const dlg_sink_ops **ops)
{
    char opt[4200];
    snprintf(opt, sizeof opt, "path=%s", path);
    const char *ov[] = {opt, progress, NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(m, "json.so", "json", ov, ops, &st), 0);
    return st;
}

static void write_points(const dlg_sink_ops *ops, void *st)
{
    dlg_tag tags[] = {{"host", "h\"1"}, {"job", NASTY}};
    dlg_field fields[] = {
        {"throughput", DLG_FIELD_DOUBLE, {.d = 0.1}},
        {"nan", DLG_FIELD_DOUBLE, {.d = NAN}},
        {"inf", DLG_FIELD_DOUBLE, {.d = -INFINITY}},
        {"items", DLG_FIELD_INT, {.i = INT64_MIN}},
        {"bytes", DLG_FIELD_UINT, {.u = UINT64_MAX}},
        {"unit", DLG_FIELD_STRING, {.s = NASTY}},
        {"ok", DLG_FIELD_BOOL, {.b = false}},
        {"negzero", DLG_FIELD_DOUBLE, {.d = -0.0}},
        {"whole", DLG_FIELD_DOUBLE, {.d = 1234.0}},
        {"huge", DLG_FIELD_DOUBLE, {.d = -DBL_MAX}},
        {"tiny", DLG_FIELD_DOUBLE, {.d = 4.9406564584124654e-324}},
    };
    dlg_field pf[] = {{"step_rate", DLG_FIELD_DOUBLE, {.d = 2}}};
    dlg_point pts[] = {
        {"dlgauge_result", tags, 2, fields, 11, 1700000000000000001},
        {"dlgauge_progress", tags, 1, pf, 1, 5},
    };
    assert_int_equal(ops->write(st, pts, 2), 0);
}

static void test_read_back(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "a/b/out.jsonl");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_json(&m, path, NULL, &ops); /* progress defaults to false */
    write_points(ops, st);
    assert_int_equal(ops->flush(st, 0), 0);
    ops->close(st);

    char *text = st_slurp(path, NULL);
    assert_non_null(text);
    assert_int_equal(st_count_lines(text), 1);
    /* known answer for the escaper: control characters as \u00XX, '/' and
     * UTF-8 left alone */
    assert_non_null(strstr(text, "\"unit\":\"q\\\"b\\\\s/\\u0001\\u001f\\t\\n\\r\\b\\f caf\xc3\xa9\""));
    assert_non_null(strstr(text, "\"nan\":null,\"inf\":null,"));
    assert_non_null(strstr(text, "\"time\":\"2023-11-14T22:13:20.000000001Z\",\"time_ns\":1700000000000000001,"));

    json_object *o = json_tokener_parse(text), *v, *tags, *fields;
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "measurement", &v));
    assert_string_equal(json_object_get_string(v), "dlgauge_result");
    assert_true(json_object_object_get_ex(o, "time_ns", &v));
    assert_true(json_object_get_int64(v) == 1700000000000000001);
    assert_true(json_object_object_get_ex(o, "tags", &tags));
    assert_true(json_object_object_get_ex(tags, "host", &v));
    assert_string_equal(json_object_get_string(v), "h\"1");
    assert_true(json_object_object_get_ex(tags, "job", &v));
    assert_string_equal(json_object_get_string(v), NASTY);
    assert_true(json_object_object_get_ex(o, "fields", &fields));
    assert_true(json_object_object_get_ex(fields, "throughput", &v));
    assert_true(json_object_get_double(v) == 0.1);
    assert_true(json_object_object_get_ex(fields, "nan", &v));
    assert_null(v);
    assert_true(json_object_object_get_ex(fields, "items", &v));
    assert_true(json_object_get_int64(v) == INT64_MIN);
    assert_true(json_object_object_get_ex(fields, "bytes", &v));
    assert_true(json_object_get_uint64(v) == UINT64_MAX);
    assert_true(json_object_object_get_ex(fields, "unit", &v));
    assert_string_equal(json_object_get_string(v), NASTY);
    assert_true(json_object_object_get_ex(fields, "ok", &v));
    assert_true(json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v));
    assert_true(json_object_object_get_ex(fields, "negzero", &v)); /* keeps its sign */
    assert_true(json_object_is_type(v, json_type_double) && signbit(json_object_get_double(v)));
    /* a float field reads back as a float, also where its value is whole */
    assert_true(json_object_object_get_ex(fields, "whole", &v));
    assert_true(json_object_is_type(v, json_type_double) && json_object_get_double(v) == 1234.0);
    assert_true(json_object_object_get_ex(fields, "huge", &v));
    assert_true(json_object_is_type(v, json_type_double) && json_object_get_double(v) == -DBL_MAX);
    assert_true(json_object_object_get_ex(fields, "tiny", &v));
    assert_true(json_object_is_type(v, json_type_double) && json_object_get_double(v) == 4.9406564584124654e-324);
    json_object_put(o);
    free(text);

    /* progress = true: both points, appended after the first run's line */
    st = open_json(&m, path, "progress=true", &ops);
    write_points(ops, st);
    ops->close(st);
    text = st_slurp(path, NULL);
    assert_int_equal(st_count_lines(text), 3);
    assert_non_null(strstr(text, "{\"measurement\":\"dlgauge_progress\",\"time\":\"1970-01-01T00:00:00.000000005Z\","
                                 "\"time_ns\":5,\"tags\":{\"host\":\"h\\\"1\"},\"fields\":{\"step_rate\":2.0}}\n"));
    free(text);
    assert_int_equal(m.errors, 0);
    st_rmtree(dir);
    free(path);
    free(dir);
}

static void test_disk_full(void **unused)
{
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_json(&m, "/dev/full", NULL, &ops);
    dlg_field f[] = {{"v", DLG_FIELD_INT, {.i = 1}}};
    dlg_point p = {"dlgauge_result", NULL, 0, f, 1, 0};
    assert_int_equal(ops->write(st, &p, 1), -DLG_EIO);
    ops->close(st);
    assert_non_null(strstr(m.last_error, "/dev/full: disk full (ENOSPC)"));
}

/* Every line parses with json-c in strict mode, UTF-8 checked (as Python's
 * json and jq read it); returns the number of lines. */
static size_t parse_strict(const char *text)
{
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    size_t n = 0;
    for (const char *line = text, *end; *line; line = end + 1, n++) {
        end = strchr(line, '\n');
        assert_non_null(end);
        json_tokener_reset(tok);
        json_object *o = json_tokener_parse_ex(tok, line, (int)(end - line));
        if (!o)
            fail_msg("line %zu: %s: %.*s", n + 1, json_tokener_error_desc(json_tokener_get_error(tok)),
                     (int)(end - line), line);
        json_object_put(o);
    }
    json_tokener_free(tok);
    return n;
}

/* A last line cut short by a crash: the next run moves it to PATH.cut (one
 * warning), so that every line of the file stays a JSON object -- a cut
 * one in the middle is an error for `dlgauge report` and any JSON reader. */
static void test_cut_last_line(void **unused)
{
    static const char CUT[] = "{\"measurement\":\"dlgauge_result\",\"tags\":{\"job\":\"a\"},\"fields\":{\"thr";
    char *dir = st_tempdir(), *path = st_join(dir, "cut.jsonl"), *cutfile = st_join(dir, "cut.jsonl.cut");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"measurement\":\"m\",\"tags\":{},\"fields\":{}}\n", f);
    fputs(CUT, f);
    assert_int_equal(fclose(f), 0);
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_json(&m, path, NULL, &ops);
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, "cut short by an earlier crash"));
    assert_non_null(strstr(m.last_log, cutfile));
    write_points(ops, st);
    ops->close(st);
    char *text = st_slurp(path, NULL);
    assert_int_equal(parse_strict(text), 2);
    free(text);
    text = st_slurp(cutfile, NULL);
    assert_non_null(text);
    assert_int_equal(strncmp(text, CUT, sizeof CUT - 1), 0);
    assert_string_equal(text + sizeof CUT - 1, "\n");
    free(text);
    /* a whole file: nothing to move, no warning */
    st = open_json(&m, path, NULL, &ops);
    ops->close(st);
    assert_int_equal(m.warnings, 1);
    assert_int_equal(m.errors, 0);
    st_rmtree(dir);
    free(cutfile);
    free(path);
    free(dir);
}

/* Bytes that are not UTF-8 become U+FFFD, each; well-formed UTF-8 (2 to 4
 * bytes) passes through.  Overlong forms and surrogates are not UTF-8. */
static void test_invalid_utf8(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "u.jsonl");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_json(&m, path, NULL, &ops);
    static const char BAD[] = "caf\xe9|\xc3|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    dlg_tag tags[] = {{"job", BAD}};
    dlg_field fields[] = {{"error", DLG_FIELD_STRING, {.s = BAD}}};
    dlg_point p = {"dlgauge_result", tags, 1, fields, 1, 0};
    assert_int_equal(ops->write(st, &p, 1), 0);
    ops->close(st);
    char *text = st_slurp(path, NULL);
    assert_int_equal(parse_strict(text), 1);
#define R "\xef\xbf\xbd"
    assert_non_null(strstr(text, "\"error\":\"caf" R "|" R "|" R R "|" R R R "|" R R R R
                                 "|\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""));
#undef R
    free(text);
    st_rmtree(dir);
    free(path);
    free(dir);
}

/* A batch that does not fit on the disk is not left torn (see the csv
 * test): the file keeps the lines before it and stays parseable. */
static void test_failed_write_leaves_no_torn_line(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "full.jsonl");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_json(&m, path, NULL, &ops);
    write_points(ops, st);
    char *before = st_slurp(path, NULL);
    st_fsize_limit((long long)strlen(before) + 30);
    dlg_field f[] = {{"v", DLG_FIELD_INT, {.i = 1}}};
    dlg_point p = {"dlgauge_result", NULL, 0, f, 1, 0};
    int rc = ops->write(st, &p, 1);
    st_fsize_unlimit();
    assert_int_equal(rc, -DLG_EIO);
    char *after = st_slurp(path, NULL);
    assert_string_equal(after, before);
    free(after);
    assert_int_equal(ops->write(st, &p, 1), 0);
    ops->close(st);
    after = st_slurp(path, NULL);
    assert_int_equal(parse_strict(after), 2);
    free(after);
    free(before);
    st_rmtree(dir);
    free(path);
    free(dir);
}

/* The file deleted during the run is made again with what it held; later
 * points follow (they went to the deleted inode, lost). */
static void test_file_deleted(void **unused)
{
    char *dir = st_tempdir(), *path = st_join(dir, "out.jsonl");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_json(&m, path, NULL, &ops);
    write_points(ops, st);
    assert_int_equal(unlink(path), 0);
    write_points(ops, st);
    ops->close(st);
    char *text = st_slurp(path, NULL);
    assert_non_null(text);
    assert_int_equal(st_count_lines(text), 2);
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, "was deleted during the run: made again"));
    assert_int_equal(m.errors, 0);
    free(text);
    st_rmtree(dir);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_back),
        cmocka_unit_test(test_disk_full),
        cmocka_unit_test(test_cut_last_line),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_failed_write_leaves_no_torn_line),
        cmocka_unit_test(test_file_deleted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
