/* CSV sink through csv.so: header once, RFC 4180 quoting, append with the
 * same header, a new file for a different one, unwritable path, full disk. */
#define _GNU_SOURCE
#include <csv.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* One run of schema sc writing one row into path. */
static void run_once(fixture *f, const char *path, const dlg_schema *sc, double tp)
{
    const dlg_sink_ops *ops;
    void *st = open_csv(f, path, &ops);
    assert_int_equal(ops->begin(st, sc), 0);
    write_result(ops, st, "x", tp, 1);
    ops->close(st);
}

/* A run with a column the file lacks (a sweep that gained a metric) is
 * not refused: its rows go to run.2.csv, said in one warning naming both
 * files and the column; the next such run appends there too, and a run
 * of the old columns still appends to run.csv. */
static void test_new_column_rotates(void **state)
{
    fixture *f = *state;
    run_once(f, f->path, &SCHEMA, 1);
    static const dlg_metric other[] = {
        {"throughput", DLG_FIELD_DOUBLE, "", ""},
        {"latency_p50_us", DLG_FIELD_DOUBLE, "", ""},
        {NULL, 0, NULL, NULL},
    };
    dlg_schema s2 = {TAGS, 3, other, 2};
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &s2), 0);
    assert_int_equal(f->m.errors, 0);
    assert_int_equal(f->m.warnings, 1);
    char *alt = st_join(f->dir, "sub/dir/run.2.csv");
    assert_non_null(strstr(f->m.last_log, f->path));
    assert_non_null(strstr(f->m.last_log, "without this run's column \"latency_p50_us\""));
    assert_non_null(strstr(f->m.last_log, "column 6"));
    assert_non_null(strstr(f->m.last_log, "\"unit\""));
    assert_non_null(strstr(f->m.last_log, alt));
    write_result(ops, st, "x", 2, 1);
    ops->close(st);
    run_once(f, f->path, &s2, 3);
    run_once(f, f->path, &SCHEMA, 4);
    assert_int_equal(f->m.errors, 0);
    char *text = st_slurp(f->path, NULL);
    assert_string_equal(text, "time,host,job,note,throughput,unit,items,ok\n"
                              "1970-01-01T00:00:00.000000001Z,h1,resnet50,x,1,images/s,640,true\n"
                              "1970-01-01T00:00:00.000000001Z,h1,resnet50,x,4,images/s,640,true\n");
    free(text);
    text = st_slurp(alt, NULL);
    assert_string_equal(text, "time,host,job,note,throughput,latency_p50_us\n"
                              "1970-01-01T00:00:00.000000001Z,h1,resnet50,x,2,\n"
                              "1970-01-01T00:00:00.000000001Z,h1,resnet50,x,3,\n");
    free(text);
    free(alt);
    char *run3 = st_join(f->dir, "sub/dir/run.3.csv");
    assert_int_equal(access(run3, F_OK), -1);
    free(run3);

    /* a path without an extension gets the number at its end */
    char *bare = st_join(f->dir, "bare"), *bare2 = st_join(f->dir, "bare.2");
    run_once(f, bare, &SCHEMA, 5);
    run_once(f, bare, &s2, 6);
    text = st_slurp(bare2, NULL);
    assert_non_null(text);
    assert_int_equal(st_count_lines(text), 2);
    free(text);
    free(bare);
    free(bare2);
}

static void leave_file(const char *path, const char *text);

/* A file whose header has this run's columns in another order, among
 * others (an earlier run's swept key, a metric this run lacks): each value
 * goes under its own name, the other columns are left empty. */
static void test_append_other_order(void **state)
{
    fixture *f = *state;
    leave_file(f->path, "time,job,batch,host,note,items,throughput,gpu_util,ok,unit\n"
                        "1970-01-01T00:00:00.000000000Z,resnet50,32,h0,old,1,2,0.5,false,img\n");
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &SCHEMA), 0);
    write_result(ops, st, "new", 1234.5, 0);
    ops->close(st);
    assert_int_equal(f->m.errors, 0);
    char *text = st_slurp(f->path, NULL);
    assert_string_equal(strchr(strchr(text, '\n') + 1, '\n') + 1,
                        "1970-01-01T00:00:00.000000000Z,resnet50,,h1,new,640,1234.5,,true,images/s\n");
    free(text);

    /* fewer columns than the file: the same */
    dlg_schema fewer = {TAGS, 3, FIELDS, 3};
    st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &fewer), 0);
    ops->close(st);
    /* a tag of this run after a field of it in the file: a new file */
    static const char *const late[] = {"host", "job", "gpu_util"};
    dlg_schema s2 = {late, 3, FIELDS, 4};
    st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &s2), 0);
    ops->close(st);
    assert_int_equal(f->m.errors, 0);
    assert_int_equal(f->m.warnings, 1);
    char *alt = st_join(f->dir, "sub/dir/run.2.csv");
    text = st_slurp(alt, NULL);
    assert_string_equal(text, "time,host,job,gpu_util,throughput,unit,items,ok\n");
    free(text);
    free(alt);
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


/* The file parsed as `dlgauge report` parses it (libcsv, strict). */
typedef struct parsed {
    char cells[16][12][128]; /* [record][column] */
    size_t ncols[16];
    size_t nrec, col;
} parsed;

static void on_cell(void *p, size_t len, void *data)
{
    parsed *r = data;
    if (r->nrec < 16 && r->col < 12)
        snprintf(r->cells[r->nrec][r->col], 128, "%.*s", (int)len, p ? (const char *)p : "");
    r->col++;
}

static void on_record(int term, void *data)
{
    parsed *r = data;
    if (r->nrec < 16)
        r->ncols[r->nrec] = r->col;
    r->nrec++;
    r->col = 0;
}

static void parse_csv(const char *path, parsed *r)
{
    size_t len;
    char *text = st_slurp(path, &len);
    assert_non_null(text);
    memset(r, 0, sizeof *r);
    struct csv_parser p;
    assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
    assert_int_equal(csv_parse(&p, text, len, on_cell, on_record, r), len);
    assert_int_equal(csv_fini(&p, on_cell, on_record, r), 0);
    csv_free(&p);
    free(text);
}

/* Every value reads back as written: blanks at either end (which readers
 * trim from unquoted fields), quotes, separators, control characters and
 * bytes that are not UTF-8; numbers at their extremes, exactly. */
static void test_values_read_back(void **state)
{
    fixture *f = *state;
    static const char *const tags[] = {"a", "b", "c"};
    static const dlg_metric fields[] = {
        {"d", DLG_FIELD_DOUBLE, "", ""}, {"e", DLG_FIELD_DOUBLE, "", ""}, {"i", DLG_FIELD_INT, "", ""},
        {"u", DLG_FIELD_UINT, "", ""},   {"s", DLG_FIELD_STRING, "", ""}, {NULL, 0, NULL, NULL},
    };
    dlg_schema schema = {tags, 3, fields, 5};
    const char *strs[][4] = {
        {" lead", "trail ", "\ttab\t", "a, \"b\"\r\n c"},
        {"\x01\x1f\x7f", "caf\xe9 \xff", "=1+2", " "},
    };
    const double dbl[][2] = {{-0.0, 1e300}, {5e-324, 0.1 + 0.2}};
    const int64_t ints[] = {INT64_MIN, INT64_MAX};
    const uint64_t uints[] = {UINT64_MAX, (1ull << 53) + 1};
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &schema), 0);
    for (int r = 0; r < 2; r++) {
        dlg_tag t[] = {{"a", strs[r][0]}, {"b", strs[r][1]}, {"c", strs[r][2]}};
        dlg_field v[] = {
            {"d", DLG_FIELD_DOUBLE, {.d = dbl[r][0]}}, {"e", DLG_FIELD_DOUBLE, {.d = dbl[r][1]}},
            {"i", DLG_FIELD_INT, {.i = ints[r]}},      {"u", DLG_FIELD_UINT, {.u = uints[r]}},
            {"s", DLG_FIELD_STRING, {.s = strs[r][3]}},
        };
        dlg_point p = {"dlgauge_result", t, 3, v, 5, 0};
        assert_int_equal(ops->write(st, &p, 1), 0);
    }
    ops->close(st);

    parsed got;
    parse_csv(f->path, &got);
    assert_int_equal(got.nrec, 3);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(got.ncols[r + 1], 9);
        for (int c = 0; c < 3; c++)
            assert_string_equal(got.cells[r + 1][1 + c], strs[r][c]);
        assert_string_equal(got.cells[r + 1][8], strs[r][3]);
        for (int c = 0; c < 2; c++) {
            double d = strtod(got.cells[r + 1][4 + c], NULL);
            assert_memory_equal(&d, &dbl[r][c], sizeof d); /* -0 keeps its sign */
        }
        assert_true(strtoll(got.cells[r + 1][6], NULL, 10) == ints[r]);
        assert_true(strtoull(got.cells[r + 1][7], NULL, 10) == uints[r]);
    }
}

/* Writes `text` as an earlier run (killed part way) left it. */
static void leave_file(const char *path, const char *text)
{
    char *dir = strdup(path);
    *strrchr(dir, '/') = '\0';
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

#define HEADER "time,host,job,note,throughput,unit,items,ok\n"
#define ROW1 "1970-01-01T00:00:01.000000000Z,h1,resnet50,x,1,images/s,640,true\n"

/* A record cut short by a crash is moved to PATH.cut: cut in a quoted
 * field it would swallow the rows after it; cut in its last column it
 * would read back whole, with a wrong value. */
static void test_cut_record_set_aside(void **state)
{
    fixture *f = *state;
    const char *cuts[] = {
        "1970-01-01T00:00:02.000000000Z,h1,resnet50,\"a, b\nc", /* in a quoted field, after a line end */
        "1970-01-01T00:00:02.000000000Z,h1,resnet50,x,2,images/s,640,tr", /* in the last column */
    };
    char *cutfile = NULL;
    assert_true(asprintf(&cutfile, "%s.cut", f->path) > 0);
    for (int i = 0; i < 2; i++) {
        char text[512];
        snprintf(text, sizeof text, HEADER ROW1 "%s", cuts[i]);
        leave_file(f->path, text);
        unlink(cutfile);
        const dlg_sink_ops *ops;
        void *st = open_csv(f, f->path, &ops);
        assert_int_equal(ops->begin(st, &SCHEMA), 0);
        assert_non_null(strstr(f->m.last_log, "cut short by an earlier crash"));
        assert_non_null(strstr(f->m.last_log, cutfile));
        write_result(ops, st, "new", 3, 3000000000);
        ops->close(st);

        parsed got;
        parse_csv(f->path, &got);
        assert_int_equal(got.nrec, 3);
        assert_int_equal(got.ncols[2], 8);
        assert_string_equal(got.cells[2][3], "new");
        assert_string_equal(got.cells[2][4], "3");
        char *aside = st_slurp(cutfile, NULL);
        assert_non_null(aside);
        snprintf(text, sizeof text, "%s\n", cuts[i]);
        assert_string_equal(aside, text);
        free(aside);
    }
    assert_int_equal(f->m.errors, 0);
    free(cutfile);
}

/* A row that does not fit on the disk is not left torn: the file keeps
 * the rows before it, and the next row after space was freed starts a
 * line of its own. */
static void test_failed_write_leaves_no_torn_row(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &SCHEMA), 0);
    st_fsize_limit((long long)strlen(HEADER) + 20); /* room for part of a row */
    dlg_tag tags[] = {{"host", "h1"}, {"job", "resnet50"}, {"note", "x"}};
    dlg_field fields[] = {{"throughput", DLG_FIELD_DOUBLE, {.d = 1}}};
    dlg_point p = {"dlgauge_result", tags, 3, fields, 1, 0};
    int rc = ops->write(st, &p, 1);
    st_fsize_unlimit();
    assert_int_equal(rc, -DLG_EIO);
    assert_non_null(strstr(f->m.last_error, f->path));
    char *text = st_slurp(f->path, NULL);
    assert_string_equal(text, HEADER);
    free(text);
    write_result(ops, st, "x", 1, 1000000000);
    ops->close(st);
    text = st_slurp(f->path, NULL);
    assert_string_equal(text, HEADER ROW1);
    free(text);
}

/* Two runs appending to one file: the header check and write happen under
 * a lock, so a second run cannot write a second header (or a row) between
 * the first one's check and write. */
static void test_header_under_lock(void **state)
{
    fixture *f = *state;
    leave_file(f->path, "");
    int other = open(f->path, O_RDONLY);
    assert_true(other >= 0);
    assert_int_equal(flock(other, LOCK_EX), 0); /* another run holds it */
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int rc = ops->begin(st, &SCHEMA);
        ops->close(st);
        _exit(rc == 0 ? 0 : 1);
    }
    usleep(200000);
    char *text = st_slurp(f->path, NULL);
    assert_string_equal(text, ""); /* waited for the lock */
    free(text);
    flock(other, LOCK_UN);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(other);
    ops->close(st);
    text = st_slurp(f->path, NULL);
    assert_string_equal(text, HEADER);
    free(text);
}

/* The file deleted during the run: later rows went to its deleted inode,
 * lost.  It is made again with what it held, later rows after them; one
 * moved away keeps its rows, and later ones go to a new file at the path. */
static void test_file_deleted_or_moved(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    void *st = open_csv(f, f->path, &ops);
    assert_int_equal(ops->begin(st, &SCHEMA), 0);
    write_result(ops, st, "a", 1, 1000000000);
    assert_int_equal(unlink(f->path), 0);
    write_result(ops, st, "b", 2, 1000000000);
    assert_int_equal(f->m.warnings, 1);
    assert_non_null(strstr(f->m.last_log, "was deleted during the run: made again"));
    char *text = st_slurp(f->path, NULL);
    assert_non_null(text);
    assert_string_equal(text, "time,host,job,note,throughput,unit,items,ok\n"
                              "1970-01-01T00:00:01.000000000Z,h1,resnet50,a,1,images/s,640,true\n"
                              "1970-01-01T00:00:01.000000000Z,h1,resnet50,b,2,images/s,640,true\n");
    free(text);

    char *moved = st_join(f->dir, "moved.csv");
    assert_int_equal(rename(f->path, moved), 0);
    write_result(ops, st, "c", 3, 1000000000);
    assert_int_equal(f->m.warnings, 2);
    assert_non_null(strstr(f->m.last_log, "stay in the moved file"));
    ops->close(st);
    text = st_slurp(f->path, NULL);
    assert_string_equal(text, "time,host,job,note,throughput,unit,items,ok\n"
                              "1970-01-01T00:00:01.000000000Z,h1,resnet50,c,3,images/s,640,true\n");
    free(text);
    text = st_slurp(moved, NULL);
    assert_int_equal(st_count_lines(text), 3);
    free(text);
    free(moved);
    assert_int_equal(f->m.errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rows_and_quoting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_same_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_column_rotates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_other_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_from_first_point_without_begin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_required, setup, teardown),
        cmocka_unit_test_setup_teardown(test_values_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_record_set_aside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_leaves_no_torn_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_under_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_deleted_or_moved, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
