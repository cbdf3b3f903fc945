/* Text from results that is not UTF-8 (a Latin-1 host name, an error
 * message with a path's raw bytes) reaches no output raw: each ill-formed
 * sequence is U+FFFD, the terminal, Markdown and HTML outputs and
 * compare's are valid UTF-8, and HTML stays escaped. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "model_csv.h"
#include "render.h"
#include "report.h"
#include "utf8_out.h"

#define FFFD "\xef\xbf\xbd"

static char *written(const char *in, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rep_utf8_write(f, in, n);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* Unicode's "maximal subpart" rule: one U+FFFD per cut character, the
 * byte after it kept; overlong forms, surrogates and bytes past U+10FFFF
 * one per byte; valid text (a 4-byte emoji, a micro sign) untouched. */
static void test_replacements(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"caf\xe9", "caf" FFFD},
        {"a\xe2\x82" "b", "a" FFFD "b"},
        {"\xc0\xaf", FFFD FFFD},
        {"\xed\xa0\x80", FFFD FFFD FFFD},
        {"\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD},
        {"\xf0\x9f\x98\x80 1.5\xc2\xb5s", "\xf0\x9f\x98\x80 1.5\xc2\xb5s"},
        {"end\xf0\x9f\x98", "end" FFFD},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = written(cases[i].in, strlen(cases[i].in));
        assert_string_equal(out, cases[i].out);
        assert_true(rep_utf8_valid(out, strlen(out)));
        assert_int_equal(rep_utf8_valid(cases[i].in, strlen(cases[i].in)), strcmp(cases[i].in, cases[i].out) == 0);
        free(out);
    }
}

/* host "caf\xe9" (Latin-1), a job "j\xff", an error text with raw bytes
 * and markup */
static const char bad_csv[] =
    "time,cpus,host,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,error,"
    "version\n"
    "2026-12-02T10:00:01Z,2,caf\xe9,j\xff,r1,ok,sim,100,0,0,images,1,,0.1.0\n"
    "2026-12-02T10:00:02Z,4,caf\xe9,j\xff,r1,error,sim,,,,,,open /data/\xe9t\xe9 <b>failed</b>,0.1.0\n";

static void check_output(char *out, const char *what)
{
    if (!rep_utf8_valid(out, strlen(out)))
        fail_msg("%s output is not valid UTF-8", what);
    assert_non_null(strstr(out, "j" FFFD));
    free(out);
}

static int text_out(FILE *f, const rep_report *r) { return rep_out_text(f, r, true); }

static void test_outputs_valid(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv(bad_csv, &r.rows, &r.model);
    char *html = render_report(&r, rep_out_html);
    assert_non_null(strstr(html, "/data/" FFFD "t" FFFD " &lt;b&gt;failed&lt;/b&gt;"));
    assert_null(strstr(html, "<b>"));
    check_output(html, "HTML");
    char *md = render_report(&r, rep_out_markdown);
    assert_non_null(strstr(md, "/data/" FFFD "t" FFFD));
    check_output(md, "Markdown");
    check_output(render_report(&r, text_out), "terminal");

    rep_compare c;
    memset(&c, 0, sizeof c);
    c.alpha = 0.05;
    model_from_csv(bad_csv, &c.base.rows, &c.base.model);
    model_from_csv(bad_csv, &c.new.rows, &c.new.model);
    char err[256];
    assert_int_equal(rep_compare_build(&c, err, sizeof err), 0);
    for (int md_form = 0; md_form < 2; md_form++) {
        char *buf = render_compare(&c, md_form);
        check_output(buf, md_form ? "compare's Markdown" : "compare's terminal");
    }
    rep_compare_free(&c);
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
}

/* The terminal table pads by characters: a column after an accented
 * name starts where it does after a plain one (it was 2 columns left of
 * it: each é is 2 bytes). */
static void test_table_columns(void **state)
{
    (void)state;
    rep_table t;
    assert_int_equal(rep_table_init(&t, 3, 2), 0);
    assert_int_equal(rep_table_put(&t, 0, 0, 0, "job"), 0);
    assert_int_equal(rep_table_put(&t, 0, 1, 0, "rate"), 0);
    assert_int_equal(rep_table_put(&t, 1, 0, 0, "r\xc3\xa9sum\xc3\xa9"), 0);
    assert_int_equal(rep_table_put(&t, 1, 1, 0, "1"), 0);
    assert_int_equal(rep_table_put(&t, 2, 0, 0, "resume"), 0);
    assert_int_equal(rep_table_put(&t, 2, 1, 0, "2"), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rep_table_print(f, &t, false, "");
    assert_int_equal(fclose(f), 0);
    print_message("%s", buf);
    assert_string_equal(buf, "job     rate\nr\xc3\xa9sum\xc3\xa9  1\nresume  2\n");
    assert_int_equal(rep_utf8_columns("\xf0\x9f\x99\x82x"), 2); /* an emoji and a letter */
    free(buf);
    rep_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replacements),
        cmocka_unit_test(test_outputs_valid),
        cmocka_unit_test(test_table_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
