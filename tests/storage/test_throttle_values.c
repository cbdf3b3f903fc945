/* A disk profile reads a value as a [storage] section reads the same key:
 * the throttle's profile reader (compiled in) against the core's option
 * parser (libdlgauge), text by text.  They used to differ: a profile read
 * iops = 010 as octal 8 and took hex (0x10, 0x10MB) and `min`, and refused
 * the compound durations (1s500ms, 1m30s) a section takes. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "throttle_profile.h"

static int option_index(const char *key)
{
    for (int i = 0; i < THR_OPT_COUNT; i++)
        if (strcmp(thr_options[i].name, key) == 0)
            return i;
    fail_msg("no throttle option %s", key);
    return -1;
}

static const struct {
    const char *key, *text;
} same[] = {
    {"iops", "010"},          {"iops", "0x10"},          {"iops", "1e3"},
    {"iops", " 42 "},         {"bandwidth", "0x10MB"},   {"bandwidth", "150MB"},
    {"bandwidth", "1.5G"},    {"bandwidth", "010"},      {"iops_per_gib", "0x10"},
    {"iops_per_gib", "0.5"},  {"latency", "1s500ms"},    {"latency", "2min"},
    {"latency", "1.25ms"},    {"latency", "0x10ms"},     {"latency", "2m"},
    {"latency_jitter", "1h"}, {"seed", "007"},           {"latency", "1m30s"},           {"seed", "0x7"},
    {"capacity", "500GiB"},   {"latency_dist", "normal"}, {"latency_dist", "gauss"},
    {"burst", "inf"},         {"iops", "-5"},
};

/* Accepted by both with the same value, or refused by both. */
static void test_profile_reads_as_section(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof same / sizeof *same; k++) {
        int i = option_index(same[k].key);
        thr_profile *p = calloc(1, sizeof *p);
        assert_non_null(p);
        char pwhy[256] = "", swhy[256] = "";
        int prc = thr_profile_key(p, "", same[k].key, same[k].text, pwhy, sizeof pwhy);
        dlg_value sv;
        int src = dlg_opt_parse(&thr_options[i], same[k].text, &sv, swhy, sizeof swhy);
        print_message("%-15s %-8s profile %s%s | section %s%s\n", same[k].key, same[k].text,
                      prc ? "refused: " : "ok", pwhy, src ? "refused: " : "ok", swhy);
        if ((prc == 0) != (src == 0))
            fail_msg("%s = %s: profile %s, section %s", same[k].key, same[k].text, prc ? "refuses" : "accepts",
                     src ? "refuses" : "accepts");
        if (prc == 0 && (p->v[i].i != sv.i || p->v[i].d != sv.d))
            fail_msg("%s = %s: profile reads %lld (%g), section %lld (%g)", same[k].key, same[k].text,
                     (long long)p->v[i].i, p->v[i].d, (long long)sv.i, sv.d);
        free(p);
    }
}

static int collect_error(const dlg_host *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->ctx, 512, fmt, ap);
    va_end(ap);
    return -code;
}

/* Known answers from a whole profile file: decimal 10, 1.5 s, and hex
 * refused at its line naming the key. */
static void test_profile_known_values(void **state)
{
    (void)state;
    char path[] = "/tmp/dlg-thr-values-XXXXXX", why[512] = "";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("iops = 010\nlatency = 1s500ms\n[disk]\nbandwidth = 2M\n", f);
    fclose(f);
    dlg_host h = {.struct_size = sizeof h, .ctx = why, .error = collect_error};
    thr_profile *p = calloc(1, sizeof *p);
    assert_non_null(p);
    assert_int_equal(thr_profile_load(&h, path, p), 0);
    assert_int_equal(p->v[THR_IOPS].i, 10);
    assert_int_equal(p->v[THR_LATENCY].i, 1500000000);
    assert_int_equal(p->v[THR_BANDWIDTH].i, 2 * 1048576); /* M is MiB */
    f = fopen(path, "w");
    fputs("; hex\niops = 0x10\n", f);
    fclose(f);
    assert_int_not_equal(thr_profile_load(&h, path, p), 0);
    char want[600];
    snprintf(want, sizeof want, "profile %s:2: iops: '0x10' is not an integer", path);
    assert_string_equal(why, want);
    free(p);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_reads_as_section),
        cmocka_unit_test(test_profile_known_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
