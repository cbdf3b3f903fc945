/* Regression the results-reader fuzzer found (core/report/read_csv.c): a
 * CSV row's "FILE:LINE" was its record number, wrong after a blank line or
 * a quoted cell holding a newline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fuzz_file.h"
#include "rows.h"

#define HEAD "time,status,workload,throughput,throughput_ci95,repeats,version\n"

/* Reads text as a results file; validates it; returns the message. */
static void read_text(const char *text, rep_rows *rs, char *err, size_t errlen)
{
    char path[512];
    assert_int_equal(fuzz_write_file(path, sizeof path, "results.csv", (const uint8_t *)text, strlen(text)), 0);
    *rs = (rep_rows){0};
    err[0] = '\0';
    assert_int_equal(rep_read_file(rs, path, err, errlen), 0);
    fuzz_remove_file(path);
    assert_int_not_equal(rep_rows_validate(rs, err, errlen), 0);
}

/* The bad row is on line 5, after two blank lines (it used to say 3). */
static void blank_lines_count(void **state)
{
    (void)state;
    rep_rows rs;
    char err[1024];
    read_text(HEAD "\n\n1,ok,a,1,0.1,3,1.0\n2,ok,b,x,0.1,3,1.0\n", &rs, err, sizeof err);
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.v[0].line, 4);
    assert_int_equal(rs.v[1].line, 5);
    rep_rows_free(&rs);
    assert_non_null(strstr(err, "results.csv:5: missing or non-numeric column 'throughput'"));
}

/* A row starts on the line after a quoted cell spanning two lines, with
 * CRLF line ends (it used to say 3, then 4 with LF only). */
static void quoted_newline_counts(void **state)
{
    (void)state;
    rep_rows rs;
    char err[1024];
    /* its line end kept: a last record without one was cut short, skipped */
    read_text(HEAD "1,ok,\"a\r\nb\",1,0.1,3,1.0\r\n2,ok,b,x,0.1,3,1.0\r\n", &rs, err, sizeof err);
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.v[0].line, 2);
    assert_int_equal(rs.v[1].line, 4);
    rep_rows_free(&rs);
    assert_non_null(strstr(err, "results.csv:4: missing or non-numeric column 'throughput'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blank_lines_count),
        cmocka_unit_test(quoted_newline_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
