/* Known answers for the line-protocol formatter: every escaping rule of
 * shared/FORMATS.md, every field type, dropping and sorting. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lineproto.h"

#define NT(a) (sizeof(a) / sizeof((a)[0]))

static dlg_field fd(const char *k, double d) { return (dlg_field){k, DLG_FIELD_DOUBLE, {.d = d}}; }
static dlg_field fi(const char *k, int64_t i) { return (dlg_field){k, DLG_FIELD_INT, {.i = i}}; }
static dlg_field fu(const char *k, uint64_t u) { return (dlg_field){k, DLG_FIELD_UINT, {.u = u}}; }
static dlg_field fs(const char *k, const char *s) { return (dlg_field){k, DLG_FIELD_STRING, {.s = s}}; }
static dlg_field fb(const char *k, bool b) { return (dlg_field){k, DLG_FIELD_BOOL, {.b = b}}; }

/* Formats p alone and compares with want (NULL: the point is dropped);
 * returns what the formatter counted. */
static lp_stats check(const dlg_point *p, unsigned flags, const char *want)
{
    dlg_sbuf b = {0};
    lp_stats st = {0};
    int rc = lp_format_point(&b, p, flags, &st);
    if (want) {
        assert_int_equal(rc, 1);
        assert_string_equal(b.p, want);
    } else {
        assert_int_equal(rc, 0);
        assert_int_equal(b.len, 0);
        assert_int_equal(st.dropped_points, 1);
    }
    sbuf_free(&b);
    return st;
}

static void test_measurement_escapes(void **unused)
{
    dlg_field f[] = {fi("v", 1)};
    dlg_point p = {"my meas,ure=ment\"\\x", NULL, 0, f, 1, 123};
    /* comma and space only; '=', '"' and '\' are left alone */
    check(&p, 0, "my\\ meas\\,ure=ment\"\\x v=1i 123\n");
}

static void test_tag_escapes(void **unused)
{
    dlg_tag t[] = {{"tag key,=", "v,a=l ue\"\\x"}};
    dlg_field f[] = {fi("v", 1)};
    dlg_point p = {"m", t, 1, f, 1, 5};
    check(&p, 0, "m,tag\\ key\\,\\==v\\,a\\=l\\ ue\"\\x v=1i 5\n");
}

static void test_field_key_and_string_escapes(void **unused)
{
    dlg_field f[] = {fs("f k=,", "say \"hi\" \\ bye, a=b")};
    dlg_point p = {"m", NULL, 0, f, 1, 7};
    /* in a string value only '"' and '\' are escaped */
    check(&p, 0, "m f\\ k\\=\\,=\"say \\\"hi\\\" \\\\ bye, a=b\" 7\n");
}

/* A trailing backslash would escape the delimiter after it and InfluxDB
 * refuses the line ("invalid tag format"): it is cut.  Inner backslashes,
 * even before an escaped character, read back exactly as they are. */
static void test_trailing_backslash_cut(void **unused)
{
    dlg_tag t[] = {{"dir", "C:\\data\\"}, {"k\\", "a\\,b"}, {"only", "\\\\"}};
    dlg_field f[] = {fi("f\\\\", 1), fi("\\", 2)};
    dlg_point p = {"m\\", t, 3, f, 2, 9};
    lp_stats st = check(&p, 0, "m,dir=C:\\data,k=a\\\\,b f=1i 9\n");
    assert_int_equal(st.trimmed, 4);
    assert_int_equal(st.dropped_fields, 1);
}

/* Keys that differ only by a trailing backslash are one key once it is
 * cut: the second tag is dropped (InfluxDB refused the line with 'a' twice),
 * and so is the field (InfluxDB kept the last value, v=2), whatever their
 * order in the point. */
static void test_cut_keys_not_twice(void **unused)
{
    dlg_tag t[] = {{"a\\", "y"}, {"a,", "z"}, {"a", "x"}};
    dlg_field f[] = {fi("v", 1), fi("v\\", 2), fi("w\\", 3), fi("w", 4)};
    dlg_point p = {"m", t, 3, f, 4, 1};
    lp_stats st = check(&p, 0, "m,a=x,a\\,=z v=1i,w=4i 1\n");
    assert_int_equal(st.dropped_tags, 1);
    assert_int_equal(st.dropped_fields, 2);
}

/* A line starting with '#' is a comment InfluxDB skips without an error. */
static void test_bad_measurement_dropped(void **unused)
{
    dlg_field f[] = {fi("v", 1)};
    dlg_point p = {"#m", NULL, 0, f, 1, 1};
    check(&p, 0, NULL);
    p.measurement = "";
    check(&p, 0, NULL);
    p.measurement = "\\";
    check(&p, 0, NULL);
    p.measurement = NULL;
    check(&p, 0, NULL);
    p.measurement = "m#";
    check(&p, 0, "m# v=1i 1\n");
}

static void test_field_types(void **unused)
{
    dlg_field f[] = {fd("d", 1.5),   fd("whole", 3.0), fd("tenth", 0.1), fd("big", 1e300),
                     fd("neg", -2.5e-7), fi("i", -42), fi("imax", INT64_MAX), fu("u", 7),
                     fs("s", ""),   fb("t", true), fb("f", false)};
    dlg_point p = {"m", NULL, 0, f, NT(f), 1700000000123456789};
    check(&p, 0,
          "m d=1.5,whole=3,tenth=0.1,big=1e+300,neg=-2.5e-07,i=-42i,imax=9223372036854775807i,u=7i,"
          "s=\"\",t=true,f=false 1700000000123456789\n");
}

static void test_unsigned(void **unused)
{
    dlg_field f[] = {fu("u", UINT64_MAX), fu("small", 3)};
    dlg_point p = {"m", NULL, 0, f, 2, 1};
    check(&p, LP_UNSIGNED, "m u=18446744073709551615u,small=3u 1\n");
    /* 1.x has no unsigned type: integers while they fit, else a float */
    check(&p, 0, "m u=1.8446744073709552e+19,small=3i 1\n");
}

static void test_nonfinite_dropped(void **unused)
{
    dlg_field f[] = {fd("nan", NAN), fd("ok", 2), fd("inf", INFINITY), fd("ninf", -INFINITY)};
    dlg_point p = {"m", NULL, 0, f, NT(f), 9};
    lp_stats st = check(&p, 0, "m ok=2 9\n");
    assert_int_equal(st.dropped_fields, 3);

    dlg_field g[] = {fd("nan", NAN), fd("inf", INFINITY)};
    dlg_point q = {"m", NULL, 0, g, 2, 9};
    check(&q, 0, NULL); /* no field left: no line at all */
}

static void test_empty_tag_omitted(void **unused)
{
    dlg_tag t[] = {{"a", "1"}, {"b", ""}, {"c", "3"}};
    dlg_field f[] = {fb("x", true)};
    dlg_point p = {"m", t, 3, f, 1, 0};
    check(&p, 0, "m,a=1,c=3 x=true 0\n");
}

static void test_tags_sorted(void **unused)
{
    /* byte order: upper case sorts before lower case */
    dlg_tag t[] = {{"zeta", "z"}, {"alpha", "a"}, {"Mid", "m"}, {"job", "j"}};
    dlg_field f[] = {fi("v", 1)};
    dlg_point p = {"m", t, 4, f, 1, 0};
    check(&p, 0, "m,Mid=m,alpha=a,job=j,zeta=z v=1i 0\n");
    /* the caller's array is not reordered */
    assert_string_equal(t[0].key, "zeta");
}

static void test_many_tags_sorted(void **unused)
{
    enum { N = 100 };
    dlg_tag t[N];
    char keys[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%03d", N - 1 - i);
        t[i] = (dlg_tag){keys[i], "v"};
    }
    dlg_field f[] = {fi("v", 1)};
    dlg_point p = {"m", t, N, f, 1, 0};
    dlg_sbuf b = {0};
    assert_int_equal(lp_format_point(&b, &p, 0, NULL), 1);
    assert_true(strncmp(b.p, "m,k000=v,k001=v,", 16) == 0);
    assert_non_null(strstr(b.p, ",k099=v v=1i 0\n"));
    sbuf_free(&b);
}

static void test_invalid_keys_dropped(void **unused)
{
    dlg_tag t[] = {{"_internal", "x"}, {"host", "h"}, {"time", "t"}};
    dlg_field f[] = {fi("time", 1), fi("_x", 2), fi("", 3), fi("ok", 4)};
    dlg_point p = {"m", t, 3, f, 4, 0};
    lp_stats st = check(&p, 0, "m,host=h ok=4i 0\n");
    assert_int_equal(st.dropped_tags, 2);
    assert_int_equal(st.dropped_fields, 3);
}

static void test_newlines_cannot_split_a_line(void **unused)
{
    dlg_tag t[] = {{"k", "a\nb"}};
    dlg_field f[] = {fs("s", "x\r\ny")};
    dlg_point p = {"m", t, 1, f, 1, 0};
    check(&p, 0, "m,k=a\\ b s=\"x  y\" 0\n");
}

/* Line protocol is UTF-8: a byte that starts no well-formed sequence
 * (a Latin-1 path in an error message) becomes U+FFFD, as the json sink
 * writes it; well-formed multi-byte characters stay (InfluxDB 1.x has
 * failed to open shards holding such bytes). */
static void test_invalid_utf8_replaced(void **unused)
{
    dlg_tag t[] = {{"job", "caf\xe9"}};
    dlg_field f[] = {fs("error", "key '\xff\x01' in caf\xc3\xa9 \xed\xa0\x80")};
    dlg_point p = {"m", t, 1, f, 1, 0};
    check(&p, 0, "m,job=caf\xef\xbf\xbd error=\"key '\xef\xbf\xbd\x01' in caf\xc3\xa9 "
                 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\" 0\n");
}

static void test_long_string_truncated(void **unused)
{
    size_t n = 70000;
    char *s = malloc(n + 1);
    memset(s, 'x', n);
    s[n] = '\0';
    /* a 2-byte UTF-8 character straddling the limit is not cut in half */
    s[LP_MAX_STRING - 1] = (char)0xC3;
    s[LP_MAX_STRING] = (char)0xA9;
    dlg_field f[] = {fs("s", s)};
    dlg_point p = {"m", NULL, 0, f, 1, 0};
    dlg_sbuf b = {0};
    lp_stats st = {0};
    assert_int_equal(lp_format_point(&b, &p, 0, &st), 1);
    assert_int_equal(st.truncated, 1);
    assert_int_equal(b.len, strlen("m s=\"\" 0\n") + LP_MAX_STRING - 1);
    sbuf_free(&b);
    free(s);
}

static void test_appends_to_buffer(void **unused)
{
    dlg_field f[] = {fi("v", 1)};
    dlg_point p = {"a", NULL, 0, f, 1, 1};
    dlg_sbuf b = {0};
    assert_int_equal(lp_format_point(&b, &p, 0, NULL), 1);
    p.measurement = "b";
    assert_int_equal(lp_format_point(&b, &p, 0, NULL), 1);
    assert_string_equal(b.p, "a v=1i 1\nb v=1i 1\n");
    sbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measurement_escapes),
        cmocka_unit_test(test_tag_escapes),
        cmocka_unit_test(test_field_key_and_string_escapes),
        cmocka_unit_test(test_trailing_backslash_cut),
        cmocka_unit_test(test_cut_keys_not_twice),
        cmocka_unit_test(test_bad_measurement_dropped),
        cmocka_unit_test(test_field_types),
        cmocka_unit_test(test_unsigned),
        cmocka_unit_test(test_nonfinite_dropped),
        cmocka_unit_test(test_empty_tag_omitted),
        cmocka_unit_test(test_tags_sorted),
        cmocka_unit_test(test_many_tags_sorted),
        cmocka_unit_test(test_invalid_keys_dropped),
        cmocka_unit_test(test_newlines_cannot_split_a_line),
        cmocka_unit_test(test_invalid_utf8_replaced),
        cmocka_unit_test(test_long_string_truncated),
        cmocka_unit_test(test_appends_to_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
