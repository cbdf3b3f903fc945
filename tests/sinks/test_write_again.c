/* write_again (plugin.h, sink ops version 4) of the file sinks: a result
 * row the file holds already is skipped, any other goes in once, as
 * write would put it.  --resume sends through it the row a killed run was
 * delivering, which the sink may have stored just before. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink_test_util.h"

typedef struct fixture {
    char *dir;
    mock_host m;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = st_tempdir();
    assert_non_null(f->dir);
    mock_host_init(&f->m);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    st_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* The result of job at time t with throughput x. */
typedef struct row {
    dlg_tag tags[1];
    dlg_field fields[1];
    dlg_point p;
} row;

static const dlg_point *result(row *r, const char *job, int64_t t, double x)
{
    r->tags[0] = (dlg_tag){"job", job};
    r->fields[0] = (dlg_field){"throughput", DLG_FIELD_DOUBLE, {.d = x}};
    r->p = (dlg_point){"dlgauge_result", r->tags, 1, r->fields, 1, t};
    return &r->p;
}

static size_t lines(const fixture *f, const char *name)
{
    char *path = st_join(f->dir, name), *text = st_slurp(path, NULL);
    size_t n = st_count_lines(text);
    free(text);
    free(path);
    return n;
}

/* Three rows written; again: the middle one (skipped), a new one, the
 * middle one with another value and with another time (each a new row). */
static void check_sink(fixture *f, const char *so, const char *type, const char *name, size_t header)
{
    char opt[4096];
    snprintf(opt, sizeof opt, "path=%s/%s", f->dir, name);
    const char *ov[] = {opt, NULL};
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&f->m, so, type, ov, &ops, &st), 0);
    assert_true(ops->version >= 4);
    assert_non_null(ops->write_again);
    row r;
    assert_int_equal(ops->write(st, result(&r, "a", 1000, 1.5), 1), 0);
    assert_int_equal(ops->write(st, result(&r, "b", 2000, 2.5), 1), 0);
    assert_int_equal(ops->write(st, result(&r, "c", 3000, 3.5), 1), 0);
    assert_int_equal(lines(f, name), header + 3);
    assert_int_equal(ops->write_again(st, result(&r, "b", 2000, 2.5), 1), 0);
    assert_int_equal(ops->write_again(st, result(&r, "c", 3000, 3.5), 1), 0); /* the last line */
    assert_int_equal(lines(f, name), header + 3);
    assert_int_equal(ops->write_again(st, result(&r, "d", 4000, 4.5), 1), 0);
    assert_int_equal(lines(f, name), header + 4);
    assert_int_equal(ops->write_again(st, result(&r, "b", 2000, 2.75), 1), 0);
    assert_int_equal(ops->write_again(st, result(&r, "b", 2001, 2.5), 1), 0);
    assert_int_equal(lines(f, name), header + 6);
    ops->close(st);
    /* a later process (--resume) finds the rows of the earlier one */
    assert_int_equal(st_open_sink(&f->m, so, type, ov, &ops, &st), 0);
    assert_int_equal(ops->write_again(st, result(&r, "a", 1000, 1.5), 1), 0);
    ops->close(st);
    assert_int_equal(lines(f, name), header + 6);
    assert_int_equal(f->m.errors, 0);
}

static void test_csv(void **state) { check_sink(*state, "csv.so", "csv", "r.csv", 1); }

static void test_json(void **state) { check_sink(*state, "json.so", "json", "r.jsonl", 0); }

static void test_influx_file(void **state) { check_sink(*state, "influx.so", "influx", "r.lp", 0); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_influx_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
