/* The report reads disk profiles by the throttle's rules: a profile the
 * throttle refuses (a value past its option table's bounds, a formula the
 * throttle will not run, an unknown key) is refused by the report with one
 * line naming the file, the line and the key; a profile it accepts gives
 * the report the limits the throttle runs with (every shipped one). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>

#include "model.h"
#include "temp_file.h"
#include "throttle_profile.h"

/* The throttle's reading: the profile alone, as `profile = PATH` with no
 * other [storage] key.  0, or -1 with the throttle's message in why. */
static int throttle_error(const dlg_host *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->ctx, 512, fmt, ap);
    va_end(ap);
    return -code;
}

static int throttle_read(const char *path, thr_limits *lim, char why[512])
{
    dlg_host h = {.struct_size = sizeof h, .ctx = why, .error = throttle_error};
    thr_profile *p = malloc(sizeof *p);
    assert_non_null(p);
    why[0] = '\0';
    memset(lim, 0, sizeof *lim);
    int rc = thr_profile_load(&h, path, p);
    if (rc == 0)
        rc = thr_resolve(&h, p->v, "", lim);
    free(p);
    return rc == 0 ? 0 : -1;
}

/* Profiles the throttle refuses, the line the report names (0: none, a
 * combination of keys) and the key it names. */
static const struct {
    const char *text;
    int line;
    const char *key;
} refused[] = {
    {"name = x\niops = 200000000\n", 2, "iops"},
    {"name = x\ncapacity = 500GiB\niops_per_gib = 2000000\n", 3, "iops_per_gib"},
    {"name = x\nwrite_iops_base = 100000001\n", 2, "write_iops_base"},
    /* per-GiB x capacity overflowed to an infinite IOPS limit */
    {"name = x\ncapacity = 8000000TiB\niops_per_gib = 1e300\n", 3, "iops_per_gib"},
    {"name = x\ncapacity = 1MiB\niops = 100\n", 2, "capacity"},
    {"name = x\niops_limit = 100\n", 2, "iops_limit"},
    {"[storage]\niops = 100\n", 2, "[storage]"},
    {"name = x\niops = 1e3\n", 2, "iops"},
    {"name = x\niops_per_gib = 30\n", 0, "iops_per_gib needs capacity"},
    {"name = x\niops_base = 0\n", 0, "iops formula gives 0"},
    {"name = x\niops = 100\niops_merge = 32KiB\n", 0, "iops_merge needs iops_unit"},
    /* read as a [storage] section reads it: no hex (0x10 was 16 here) */
    {"name = x\niops = 0x10\n", 2, "iops: '0x10' is not an integer"},
    {"name = x\nbandwidth = 0x10MB\n", 2, "bandwidth: '0x10MB' is not a size"},
    /* the clamp to [0, 2 x latency] would cut this stddev to ~1 ms */
    {"name = x\nlatency = 1ms\nlatency_dist = normal\nlatency_jitter = 10ms\n", 0,
     "latency_jitter = 10ms is over what latency_dist = normal honours"},
    /* the last value used to win without a word, as a job INI's does not */
    {"name = x\niops = 3000\nlatency = 1ms\niops = 4000\n", 4, "key 'iops' is set twice in this profile (was '3000')"},
};

static void test_refused_by_both(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char path[64], err[512] = "", why[512], want[160];
        temp_file(path, refused[i].text);
        thr_limits lim;
        assert_int_equal(throttle_read(path, &lim, why), -1);
        rep_disks d = {0};
        int rc = rep_disks_load(&d, path, NULL, err, sizeof err);
        print_message("%s\n  throttle: %s\n", err, why);
        assert_int_not_equal(rc, 0);
        assert_int_equal(d.n, 0);
        assert_null(strchr(err, '\n'));
        if (refused[i].line)
            snprintf(want, sizeof want, "%s:%d: ", path, refused[i].line);
        else
            snprintf(want, sizeof want, "%s: ", path);
        assert_int_equal(strncmp(err, want, strlen(want)), 0);
        assert_non_null(strstr(err, refused[i].key));
        unlink(path);
        rep_disks_free(&d);
    }
}

/* The shipped profiles: accepted by both, the same limits to the bit. */
static void test_shipped_same_limits(void **state)
{
    (void)state;
    const char *src = getenv("DLG_SOURCE_DIR") ? getenv("DLG_SOURCE_DIR") : ".";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/conf/disks", src);
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    int n = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        char path[8300], err[512], why[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        thr_limits t;
        if (throttle_read(path, &t, why) != 0)
            fail_msg("%s", why);
        rep_disks d = {0};
        if (rep_disks_load(&d, path, NULL, err, sizeof err) != 0)
            fail_msg("%s", err);
        const rep_disk *r = &d.v[0];
        print_message("%-32s %12.0f B/s %8.0f IOPS, writes %12.0f B/s %8.0f IOPS\n", e->d_name, r->bandwidth,
                      r->iops, r->write_bandwidth, r->write_iops);
        assert_true(r->bandwidth == t.bandwidth && r->iops == t.iops);
        assert_true(r->write_bandwidth == t.write_bandwidth && r->write_iops == t.write_iops);
        assert_true(r->write_own_bw == t.write_own_bw && r->write_own_iops == t.write_own_iops);
        assert_true(r->write_shared == t.write_shared);
        assert_true(r->iops_unit == t.iops_unit && r->iops_merge == t.iops_merge);
        assert_true(r->latency == (double)t.latency * 1e-9);
        assert_true(isfinite(r->bandwidth) && isfinite(r->iops));
        rep_disks_free(&d);
        n++;
    }
    closedir(dp);
    assert_true(n >= 10);
}

/* A formula evaluated by the throttle's code: Alibaba's cloud SSD at
 * 500 GiB is min(1,800 + 30 x 500, 25,000) = 16,800 IOPS and
 * min(120 + 0.5 x 500, 300) MB/s = 300 MB/s. */
static void test_formula_known(void **state)
{
    (void)state;
    char path[64], err[512];
    temp_file(path, "name = ssd\ncapacity = 500GiB\niops_base = 1800\niops_per_gib = 30\niops_max = 25000\n"
                    "bandwidth_base = 120MB\nbandwidth_per_gib = 0.5MB\nbandwidth_max = 300MB\n"
                    "[disk]\nlatency = 1.25ms\n");
    rep_disks d = {0};
    if (rep_disks_load(&d, path, NULL, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(d.v[0].name, "ssd");
    assert_true(d.v[0].iops == 16800 && d.v[0].bandwidth == 300e6);
    assert_true(fabs(d.v[0].latency - 1.25e-3) < 1e-15);
    unlink(path);
    rep_disks_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_by_both),
        cmocka_unit_test(test_shipped_same_limits),
        cmocka_unit_test(test_formula_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
