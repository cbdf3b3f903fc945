/* The shipped Google Cloud disk profiles (conf/disks/gcp-*.ini) resolve,
 * through the throttle, to the read and write limits Google publishes: pd-*
 * as min(baseline + per_gib x capacity, per-instance max), each direction
 * with its own limits; Hyperdisk Balanced as its included 3,000 IOPS / 140
 * MiB/s for reads and writes together; at the assumed 500 GiB and where
 * the per-instance cap bites; Standard PD's reads and writes draw on one
 * budget (write_budget = shared), the others' do not. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage_util.h"

#define MIB 1048576.0

typedef struct known {
    const char *file, *capacity; /* capacity NULL: the profile's own */
    double iops, mib_s;          /* Google's formula, worked by hand */
    double w_iops, w_mib_s;      /* the same for writes; -1: writes share the read limits */
} known;

/* Resolves one profile; the throttle logs "...: B/s (burst B), IOPS ...;
 * writes B/s, IOPS" (or "shared" for each). */
static void resolve(const char *file, const char *capacity, double *bw, double *iops, double *wbw, double *wiops)
{
    mock_host m;
    mock_host_init(&m);
    const char *src = getenv("DLG_SOURCE_DIR") ? getenv("DLG_SOURCE_DIR") : ".";
    char prof[4200], cap[64];
    snprintf(prof, sizeof prof, "profile=%s/conf/disks/%s", src, file);
    snprintf(cap, sizeof cap, "capacity=%s", capacity ? capacity : "");
    const char *const o[] = {prof, capacity ? cap : NULL, NULL};
    st_backend b;
    if (st_backend_create(&b, &m, "throttle", o) != 0)
        fail_msg("%s: %s", file, m.last_error);
    const char *p = strstr(m.last_log, ": ");
    assert_non_null(p);
    assert_int_equal(sscanf(p, ": %lf B/s (burst %*f B), %lf IOPS", bw, iops), 2);
    const char *w = strstr(p, "; writes ");
    assert_non_null(w);
    *wbw = *wiops = -1;
    if (strncmp(w, "; writes shared B/s, shared IOPS", 32) != 0)
        assert_int_equal(sscanf(w, "; writes %lf B/s, %lf IOPS", wbw, wiops), 2);
    st_backend_destroy(&b);
    mock_host_fini(&m);
}

static void check(const known *k)
{
    double bw, iops, wbw, wiops;
    resolve(k->file, k->capacity, &bw, &iops, &wbw, &wiops);
    double wmib = wbw < 0 ? -1 : wbw / MIB;
    print_message("%-28s %-9s %9.0f IOPS %8.1f MiB/s; writes %9.0f IOPS %8.1f MiB/s\n", k->file,
                  k->capacity ? k->capacity : "500GiB", iops, bw / MIB, wiops, wmib);
    if (fabs(iops - k->iops) > 0.5 || fabs(bw / MIB - k->mib_s) > 0.01)
        fail_msg("%s: %.0f IOPS %.3f MiB/s, expected %.0f IOPS %.2f MiB/s", k->file, iops, bw / MIB,
                 k->iops, k->mib_s);
    if (fabs(wiops - k->w_iops) > 0.5 || fabs(wmib - k->w_mib_s) > 0.01)
        fail_msg("%s: writes %.0f IOPS %.3f MiB/s, expected %.0f IOPS %.2f MiB/s (-1: shared)", k->file,
                 wiops, wmib, k->w_iops, k->w_mib_s);
}

static void test_at_assumed_capacity(void **state)
{
    (void)state;
    static const known k[] = {
        {"gcp-pd-balanced.ini", NULL, 3000 + 6 * 500, 140 + 0.28 * 500, 3000 + 6 * 500, 140 + 0.28 * 500},
        {"gcp-pd-ssd.ini", NULL, 6000 + 30 * 500, 240 + 0.48 * 500, 6000 + 30 * 500, 240 + 0.48 * 500},
        {"gcp-pd-standard.ini", NULL, 0.75 * 500, 0.12 * 500, 1.5 * 500, 0.12 * 500}, /* writes 750 IOPS */
        {"gcp-hyperdisk-balanced.ini", NULL, 3000, 140, -1, -1}, /* included baseline, combined */
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        check(&k[i]);
}

/* Large disks stop at the per-instance read and write maxima (standard
 * PD: 400 MiB/s write throughput against 1,200 read). */
static void test_instance_caps(void **state)
{
    (void)state;
    static const known k[] = {
        {"gcp-pd-balanced.ini", "20000GiB", 80000, 1200, 80000, 1200},
        {"gcp-pd-ssd.ini", "20000GiB", 100000, 1200, 100000, 1200},
        {"gcp-pd-standard.ini", "20000GiB", 7500, 1200, 15000, 400},
        {"gcp-pd-standard.ini", "2000GiB", 1500, 240, 3000, 240}, /* below the caps: still linear */
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        check(&k[i]);
}

/* Whether a profile's throttle logs its writes as one budget with reads. */
static bool budget_shared(const char *file)
{
    mock_host m;
    mock_host_init(&m);
    const char *src = getenv("DLG_SOURCE_DIR") ? getenv("DLG_SOURCE_DIR") : ".";
    char prof[4200];
    snprintf(prof, sizeof prof, "profile=%s/conf/disks/%s", src, file);
    const char *const o[] = {prof, NULL};
    st_backend b;
    if (st_backend_create(&b, &m, "throttle", o) != 0)
        fail_msg("%s: %s", file, m.last_error);
    bool shared = strstr(m.last_log, "one budget with reads") != NULL;
    print_message("%-28s writes: %s\n", file, shared ? "one budget with reads" : "own limits or combined");
    st_backend_destroy(&b);
    mock_host_fini(&m);
    return shared;
}

/* "For standard persistent disks, simultaneous reads and writes share the
 * same resources"; nothing of the kind is modelled for the others. */
static void test_standard_shares_budget(void **state)
{
    (void)state;
    assert_true(budget_shared("gcp-pd-standard.ini"));
    assert_false(budget_shared("gcp-pd-balanced.ini"));
    assert_false(budget_shared("gcp-pd-ssd.ini"));
    assert_false(budget_shared("gcp-hyperdisk-balanced.ini"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_at_assumed_capacity),
        cmocka_unit_test(test_instance_caps),
        cmocka_unit_test(test_standard_shares_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
