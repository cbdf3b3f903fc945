/* Value syntaxes (sizes, durations, bools, ints), option parsing against a
 * table with bounds and enums, table validation and "did you mean". */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"
#include "units.h"

static int64_t size_of(const char *s)
{
    int64_t v = -1;
    char why[256];
    if (dlg_parse_size(s, &v, why, sizeof why) != 0)
        fail_msg("size '%s' rejected: %s", s, why);
    return v;
}

static int64_t ns_of(const char *s)
{
    int64_t v = -1;
    char why[256];
    if (dlg_parse_duration(s, &v, why, sizeof why) != 0)
        fail_msg("duration '%s' rejected: %s", s, why);
    return v;
}

static void sizes(void **state)
{
    (void)state;
    assert_int_equal(size_of("4KiB"), 4096);
    assert_int_equal(size_of("4K"), 4096);
    assert_int_equal(size_of("4k"), 4096);
    assert_int_equal(size_of("30G"), 30ll << 30);
    assert_int_equal(size_of("30GiB"), 30ll << 30);
    assert_int_equal(size_of("1.5MB"), 1500000);
    assert_int_equal(size_of("2kB"), 2000);
    assert_int_equal(size_of("1TB"), 1000000000000ll);
    assert_int_equal(size_of("1.5G"), 3ll << 29);
    assert_int_equal(size_of("512"), 512);
    assert_int_equal(size_of("512B"), 512);
    assert_int_equal(size_of(" 8 MiB "), 8 << 20);
    assert_int_equal(size_of("0"), 0);
    char why[256];
    int64_t v = 77;
    static const char *const bad[] = {"4Q", "KiB", "", "-1K", "4 KiBs", "1e30G", "nan", "4KiB4"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        why[0] = '\0';
        if (dlg_parse_size(bad[i], &v, why, sizeof why) == 0)
            fail_msg("size '%s' accepted as %lld", bad[i], (long long)v);
        assert_true(why[0] != '\0');
    }
    assert_int_equal(v, 77); /* untouched on error */
    dlg_parse_size("4Q", &v, why, sizeof why);
    assert_non_null(strstr(why, "unknown size unit 'Q'"));
    char buf[32];
    dlg_format_size(30ll << 30, buf, sizeof buf);
    assert_string_equal(buf, "30GiB");
    dlg_format_size(1000, buf, sizeof buf);
    assert_string_equal(buf, "1000B");
}

static void durations(void **state)
{
    (void)state;
    assert_int_equal(ns_of("500ms"), 500000000);
    assert_int_equal(ns_of("60s"), 60000000000ll);
    assert_int_equal(ns_of("2m"), 120000000000ll);
    assert_int_equal(ns_of("90"), 90000000000ll); /* bare number: seconds */
    assert_int_equal(ns_of("1.5"), 1500000000);
    assert_int_equal(ns_of("250us"), 250000);
    assert_int_equal(ns_of("7ns"), 7);
    assert_int_equal(ns_of("1h"), 3600000000000ll);
    assert_int_equal(ns_of("30d"), 30ll * 86400 * 1000000000ll);
    char why[256];
    int64_t v;
    static const char *const bad[] = {"5 parsecs", "ms", "-1s", "1y", "2M"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (dlg_parse_duration(bad[i], &v, why, sizeof why) == 0)
            fail_msg("duration '%s' accepted as %lld", bad[i], (long long)v);
    dlg_parse_duration("5 parsecs", &v, why, sizeof why);
    assert_non_null(strstr(why, "unknown duration unit 'parsecs'"));
    /* a bare number is accepted, so the message must not ask for a unit */
    assert_int_not_equal(dlg_parse_duration("abc", &v, why, sizeof why), 0);
    assert_string_equal(why, "'abc' is not a duration (a number with an optional unit ns us ms s m h d, "
                             "or units combined like 1h30m (bare: seconds))");
    char buf[32];
    dlg_format_duration(60000000000ll, buf, sizeof buf);
    assert_string_equal(buf, "60s");
    dlg_format_duration(2500000, buf, sizeof buf);
    assert_string_equal(buf, "2500us");
    static const struct {
        double us;
        const char *text;
    } lat[] = {{0.03, "30 ns"}, {150, "150 us"}, {999.94, "999.9 us"}, {999.96, "1 ms"}, {18020, "18.02 ms"},
               {315600, "315.6 ms"}, {1215000, "1.215 s"}, {-1, "-"}, {NAN, "-"}};
    for (size_t i = 0; i < sizeof lat / sizeof *lat; i++) {
        dlg_format_latency_us(lat[i].us, buf, sizeof buf);
        assert_string_equal(buf, lat[i].text);
    }
    static const struct {
        double v;
        const char *unit, *text;
    } rate[] = {{811.8, "images", "811.8 images/s"}, {9999, "images", "9999 images/s"},
                {12810, "tokens", "12.81 k tokens/s"}, {999960, "tokens", "1 M tokens/s"},
                {1.667e11, "flops", "166.7 G flops/s"}, {2.5e12, "flops", "2.5 T flops/s"},
                {41.9e6, "bytes", "41.9 MB/s"}, {2.1e9, "bytes", "2.1 GB/s"}, {3, NULL, "3 items/s"},
                {NAN, "images", "-"}};
    char wide[64];
    for (size_t i = 0; i < sizeof rate / sizeof *rate; i++) {
        dlg_format_rate(rate[i].v, rate[i].unit, wide, sizeof wide);
        assert_string_equal(wide, rate[i].text);
    }
}

static void bools_and_ints(void **state)
{
    (void)state;
    static const char *const yes[] = {"true", "yes", "on", "1", "TRUE", "Yes"};
    static const char *const no[] = {"false", "no", "off", "0", "Off"};
    bool b;
    char why[256];
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        b = false;
        assert_int_equal(dlg_parse_bool(yes[i], &b, why, sizeof why), 0);
        assert_true(b);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        b = true;
        assert_int_equal(dlg_parse_bool(no[i], &b, why, sizeof why), 0);
        assert_false(b);
    }
    assert_int_not_equal(dlg_parse_bool("maybe", &b, why, sizeof why), 0);
    assert_non_null(strstr(why, "'maybe' is not a boolean"));
    assert_int_not_equal(dlg_parse_bool("2", &b, why, sizeof why), 0);

    int64_t v;
    assert_int_equal(dlg_parse_int("-42", &v, why, sizeof why), 0);
    assert_int_equal(v, -42);
    assert_int_equal(dlg_parse_int("9223372036854775807", &v, why, sizeof why), 0);
    assert_int_equal(v, INT64_MAX);
    assert_int_not_equal(dlg_parse_int("9223372036854775808", &v, why, sizeof why), 0);
    assert_non_null(strstr(why, "64-bit range"));
    assert_int_not_equal(dlg_parse_int("12abc", &v, why, sizeof why), 0);
    assert_int_not_equal(dlg_parse_int("1.5", &v, why, sizeof why), 0);
    assert_int_not_equal(dlg_parse_int("", &v, why, sizeof why), 0);
    double d;
    assert_int_equal(dlg_parse_double("2.5e-3", &d, why, sizeof why), 0);
    assert_true(d == 2.5e-3);
    assert_int_not_equal(dlg_parse_double("inf", &d, why, sizeof why), 0);
    assert_int_not_equal(dlg_parse_double("nan", &d, why, sizeof why), 0);
}

static const dlg_option table[] = {
    {"batch", DLG_OPT_INT, "64", "1", "4096", NULL, "images per step", 0},
    {"memory", DLG_OPT_SIZE, "8G", "1MiB", "1TiB", NULL, "memory limit", 0},
    {"duration", DLG_OPT_DURATION, "60s", "1ms", "1h", NULL, "how long", 0},
    {"lr", DLG_OPT_DOUBLE, "0.1", "0", "10", NULL, "learning rate", 0},
    {"pin", DLG_OPT_BOOL, "yes", NULL, NULL, NULL, "pin memory", 0},
    {"mode", DLG_OPT_ENUM, "train", NULL, NULL, "train|infer", "what to run", 0},
    {"data", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "dataset", DLG_OPT_REQUIRED},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

static void parse_options(void **state)
{
    (void)state;
    char why[256];
    dlg_value v;
    assert_int_equal(dlg_opt_count(table), 7);
    size_t idx = 99;
    assert_ptr_equal(dlg_opt_find(table, "mode", &idx), &table[5]);
    assert_int_equal(idx, 5);
    assert_null(dlg_opt_find(table, "mod", NULL));

    assert_int_equal(dlg_opt_parse(&table[0], "4096", &v, why, sizeof why), 0);
    assert_int_equal(v.i, 4096);
    assert_true(v.set);
    assert_string_equal(v.text, "4096");
    assert_int_not_equal(dlg_opt_parse(&table[0], "4097", &v, why, sizeof why), 0);
    assert_string_equal(why, "4097 is above the maximum 4096");
    assert_int_not_equal(dlg_opt_parse(&table[0], "0", &v, why, sizeof why), 0);
    assert_string_equal(why, "0 is below the minimum 1");
    assert_int_not_equal(dlg_opt_parse(&table[0], "many", &v, why, sizeof why), 0);

    assert_int_equal(dlg_opt_parse(&table[1], "30G", &v, why, sizeof why), 0);
    assert_int_equal(v.i, 30ll << 30);
    assert_int_not_equal(dlg_opt_parse(&table[1], "512KiB", &v, why, sizeof why), 0);
    assert_non_null(strstr(why, "below the minimum 1MiB"));
    assert_int_not_equal(dlg_opt_parse(&table[1], "2TiB", &v, why, sizeof why), 0);

    assert_int_equal(dlg_opt_parse(&table[2], "2m", &v, why, sizeof why), 0);
    assert_int_equal(v.i, 120000000000ll);
    assert_true(v.d == 120.0);
    assert_int_not_equal(dlg_opt_parse(&table[2], "2h", &v, why, sizeof why), 0);
    assert_int_not_equal(dlg_opt_parse(&table[2], "500us", &v, why, sizeof why), 0);

    assert_int_equal(dlg_opt_parse(&table[3], "0.25", &v, why, sizeof why), 0);
    assert_true(v.d == 0.25);
    assert_int_not_equal(dlg_opt_parse(&table[3], "10.5", &v, why, sizeof why), 0);

    assert_int_equal(dlg_opt_parse(&table[4], "off", &v, why, sizeof why), 0);
    assert_int_equal(v.i, 0);

    assert_int_equal(dlg_opt_parse(&table[5], "infer", &v, why, sizeof why), 0);
    assert_int_equal(v.i, 1);
    assert_int_not_equal(dlg_opt_parse(&table[5], "inference", &v, why, sizeof why), 0);
    assert_non_null(strstr(why, "'inference' is not one of train|infer"));
    assert_int_not_equal(dlg_opt_parse(&table[5], "trian", &v, why, sizeof why), 0);
    assert_non_null(strstr(why, "(did you mean 'train'?)"));
    assert_int_not_equal(dlg_opt_parse(&table[5], "Train", &v, why, sizeof why), 0); /* exact */
    assert_int_not_equal(dlg_opt_parse(&table[5], "INFER", &v, why, sizeof why), 0);
    assert_non_null(strstr(why, "(did you mean 'infer'?)"));

    assert_int_equal(dlg_opt_parse(&table[6], "a, b", &v, why, sizeof why), 0);
    assert_string_equal(v.text, "a, b");

    dlg_value vals[8];
    assert_int_equal(dlg_opt_defaults(table, vals, why, sizeof why), 0);
    assert_int_equal(vals[0].i, 64);
    assert_int_equal(vals[1].i, 8ll << 30);
    assert_int_equal(vals[2].i, 60000000000ll);
    assert_true(vals[3].d == 0.1);
    assert_int_equal(vals[4].i, 1);
    assert_int_equal(vals[5].i, 0);
    assert_false(vals[6].set);
    assert_true(vals[5].set);
}

/* Each malformed table is refused with a reason naming the option. */
static void table_checks(void **state)
{
    (void)state;
    char why[256];
    assert_int_equal(dlg_opt_table_check(table, why, sizeof why), 0);
    assert_int_equal(dlg_opt_table_check(NULL, why, sizeof why), 0);
#define T(...) {__VA_ARGS__, {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}}
    static const struct {
        dlg_option t[3];
        const char *msg;
    } bad[] = {
        {T({"a", DLG_OPT_INT, NULL, NULL, NULL, NULL, "", 0}, {"a", DLG_OPT_INT, NULL, NULL, NULL, NULL, "", 0}),
         "option 'a' is declared twice"},
        {T({"", DLG_OPT_INT, NULL, NULL, NULL, NULL, "", 0}), "option #0 has an empty name"},
        {T({"x", (dlg_opt_type)99, NULL, NULL, NULL, NULL, "", 0}), "option 'x' has unknown type 99"},
        {T({"m", DLG_OPT_ENUM, NULL, NULL, NULL, NULL, "", 0}), "enum option 'm' has no choices"},
        {T({"m", DLG_OPT_ENUM, NULL, NULL, NULL, "", "", 0}), "enum option 'm' has no choices"},
        {T({"b", DLG_OPT_BOOL, NULL, "0", NULL, NULL, "", 0}), "option 'b' of type bool cannot have bounds"},
        {T({"s", DLG_OPT_SIZE, NULL, "1Q", NULL, NULL, "", 0}), "option 's' has a bad bound"},
        {T({"i", DLG_OPT_INT, NULL, "10", "5", NULL, "", 0}), "option 'i' has min 10 above max 5"},
        {T({"i", DLG_OPT_INT, "ten", NULL, NULL, NULL, "", 0}), "option 'i' has a bad default"},
        {T({"i", DLG_OPT_INT, "50", "1", "10", NULL, "", 0}), "option 'i' has a bad default: 50 is above the maximum 10"},
        {T({"m", DLG_OPT_ENUM, "fast", NULL, NULL, "slow|medium", "", 0}), "option 'm' has a bad default"},
        {T({"d", DLG_OPT_DURATION, "1x", NULL, NULL, NULL, "", 0}), "option 'd' has a bad default"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        why[0] = '\0';
        if (dlg_opt_table_check(bad[i].t, why, sizeof why) == 0)
            fail_msg("malformed table %zu accepted", i);
        if (!strstr(why, bad[i].msg))
            fail_msg("table %zu: '%s' lacks '%s'", i, why, bad[i].msg);
    }
}

static void did_you_mean(void **state)
{
    (void)state;
    static const char *const keys[] = {"iterations", "duration", "warmup", "workload", "cpus", "seed"};
    assert_string_equal(dlg_suggest("iteratons", keys, 6), "iterations");
    assert_string_equal(dlg_suggest("durtaion", keys, 6), "duration");
    assert_string_equal(dlg_suggest("cpu", keys, 6), "cpus");
    assert_string_equal(dlg_suggest("warmpu", keys, 6), "warmup");
    assert_null(dlg_suggest("batch", keys, 6));
    assert_null(dlg_suggest("x", keys, 0));
    /* a case slip is always suggested, however long the word */
    static const char *const modes[] = {"process", "none"};
    assert_string_equal(dlg_suggest("PROCESS", modes, 2), "process");
    assert_string_equal(dlg_suggest("NONE", modes, 2), "none");
    assert_string_equal(dlg_opt_suggest(table, "memroy"), "memory");
    assert_null(dlg_opt_suggest(table, "zzzzzz"));
    char buf[64] = "unknown key 'memroy'";
    dlg_append_suggestion(buf, sizeof buf, "memory");
    assert_string_equal(buf, "unknown key 'memroy' (did you mean 'memory'?)");
    dlg_append_suggestion(buf, sizeof buf, NULL);
    assert_string_equal(buf, "unknown key 'memroy' (did you mean 'memory'?)");
    char small[24] = "unknown key 'memroy'";
    dlg_append_suggestion(small, sizeof small, "memory"); /* truncates, never overflows */
    assert_int_equal(strlen(small), sizeof small - 1);
}

/* "1h30m" as Go and systemd write it; the micro sign as "us"; the order and
 * every part's unit are checked, so a typo is an error rather than a guess. */
static void compound_durations(void **state)
{
    (void)state;
    assert_int_equal(ns_of("1h30m"), 5400ll * 1000000000ll);
    assert_int_equal(ns_of("2m 30.5s"), 150500000000ll);
    assert_int_equal(ns_of("1d12h"), 36ll * 3600 * 1000000000ll);
    assert_int_equal(ns_of("1s500ms"), 1500000000);
    assert_int_equal(ns_of("1m1s1ms1us1ns"), 61001001001ll);
    assert_int_equal(ns_of("250\xc2\xb5s"), 250000);
    assert_int_equal(ns_of("250\xce\xbcs"), 250000);
    assert_int_equal(ns_of(" 1.5s "), 1500000000);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"30m1h", "combine duration units from the biggest down"},
        {"1s1s", "combine duration units from the biggest down"},
        {"1h30", "'30' in '1h30' needs a unit"},
        {"1h-30m", "only the whole duration may have a sign"},
        {"1sec", "unknown duration unit 'sec'"},
        {"1h 30x", "unknown duration unit 'x'"},
        {"1h abc", "'abc' after '1h ' in '1h abc' is not a number with a unit"},
        {"", "'' is not a duration"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char why[512] = "";
        int64_t v = 0;
        if (dlg_parse_duration(bad[i].text, &v, why, sizeof why) == 0)
            fail_msg("duration '%s' accepted as %lld", bad[i].text, (long long)v);
        if (!strstr(why, bad[i].msg))
            fail_msg("duration '%s': '%s' lacks '%s'", bad[i].text, why, bad[i].msg);
    }
}

/* strtod reads hex, inf and nan and underflows to 0: none of that may pass
 * for a number in a config file (an int already refuses 0x10). */
static void plain_decimal_numbers(void **state)
{
    (void)state;
    static const char *const bad[] = {"0x10", "0X1p4", "-0x10", "infinity", "nan(1)", " 0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char why[512];
        int64_t n;
        double d;
        if (dlg_parse_double(bad[i], &d, why, sizeof why) == 0)
            fail_msg("double '%s' accepted as %g", bad[i], d);
        if (dlg_parse_size(bad[i], &n, why, sizeof why) == 0)
            fail_msg("size '%s' accepted as %lld", bad[i], (long long)n);
        if (dlg_parse_duration(bad[i], &n, why, sizeof why) == 0)
            fail_msg("duration '%s' accepted as %lld", bad[i], (long long)n);
    }
    char why[512];
    double d = 7;
    assert_int_not_equal(dlg_parse_double("1e-400", &d, why, sizeof why), 0);
    assert_string_equal(why, "'1e-400' is out of the range of a double");
    assert_int_equal(dlg_parse_double(".5", &d, why, sizeof why), 0);
    assert_true(d == 0.5);
    assert_int_equal(dlg_parse_double("-1e3", &d, why, sizeof why), 0);
    assert_true(d == -1000);
    assert_int_equal(size_of("1e3"), 1000);
    assert_int_equal(size_of("+.5K"), 512);
}

/* An unbounded double option far outside int64's range: its integer view
 * saturates (the plain conversion was undefined behaviour, INT64_MIN for
 * 1e300 on x86), and the double keeps its value. */
static void huge_double_option(void **state)
{
    (void)state;
    static const dlg_option o = {"scale", DLG_OPT_DOUBLE, NULL, NULL, NULL, NULL, "a factor", 0};
    static const struct {
        const char *text;
        int64_t i;
    } cases[] = {{"1e300", INT64_MAX}, {"-1e300", INT64_MIN}, {"9223372036854775808", INT64_MAX},
                 {"-9223372036854775808", INT64_MIN}, {"1e18", 1000000000000000000}, {"-2.5", -2}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char why[256];
        dlg_value v;
        assert_int_equal(dlg_opt_parse(&o, cases[k].text, &v, why, sizeof why), 0);
        if (v.i != cases[k].i)
            fail_msg("'%s' gave %lld, not %lld", cases[k].text, (long long)v.i, (long long)cases[k].i);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes),          cmocka_unit_test(durations), cmocka_unit_test(bools_and_ints),
        cmocka_unit_test(parse_options),  cmocka_unit_test(table_checks), cmocka_unit_test(did_you_mean),
        cmocka_unit_test(compound_durations), cmocka_unit_test(plain_decimal_numbers),
        cmocka_unit_test(huge_double_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
