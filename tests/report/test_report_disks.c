/* The report's disk model reads disk profiles as the throttle does: write
 * limits apart from read limits where a profile gives write_* keys (GCP),
 * and I/Os counted by the throttle's own code, so that sequential 32 KiB
 * reads on an AWS profile merge 8 to a 256 KiB I/O (iops_merge) as they
 * did on the emulated disk. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>

#include "model.h"
#include "rows.h"
#include "temp_file.h"

/* The shipped profile, as conf/disks/NAME.ini in the source tree. */
static void load_shipped(rep_disks *d, const char *file)
{
    const char *src = getenv("DLG_SOURCE_DIR") ? getenv("DLG_SOURCE_DIR") : ".";
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/conf/disks/%s", src, file);
    if (rep_disks_load(d, path, NULL, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* One cell: 270,000 reads of 32 KiB in 100 s through storage "gp3". */
static double limit_share(const rep_disks *disks, const char *pattern, rep_bn *bn)
{
    char csv[64], text[1024];
    snprintf(text, sizeof text,
             "time,host,job,mode,run_id,status,storage,workload,throughput,throughput_ci95,throughput_stddev,unit,"
             "items,repeats,wall_s,data_wait_fraction,au,storage_ios,storage_read_bytes,config,version\n"
             "2026-12-01T10:00:01Z,lab,io,-,run1,ok,aws-gp3,read,100,1,1,MB/s,270000,1,100,0.6,0.4,270000,8847360000,"
             "%s,0.1.0\n",
             pattern);
    temp_file(csv, text);
    rep_rows rows = {0};
    rep_model m;
    char err[512];
    assert_int_equal(rep_read_file(&rows, csv, err, sizeof err), 0);
    unlink(csv);
    assert_int_equal(rep_rows_validate(&rows, err, sizeof err), 0);
    if (rep_model_build(&m, &rows, disks, 0.95, err, sizeof err) != 0)
        fail_msg("%s", err);
    double share = m.g[0].cells[0].limit_share;
    *bn = m.g[0].cells[0].bn;
    rep_model_free(&m);
    rep_rows_free(&rows);
    return share;
}

/* gp3: 3,000 IOPS, 125 MiB/s.  Sequential: the throttle charged
 * 270,000 / 8 = 33,750 I/Os (337.5 IOPS), so the limit is the bandwidth,
 * 88.5 MB/s of 131.1 = 67.5%: not storage-bound (each read counted once,
 * 2,700 IOPS = 90% said it was).  Random reads do not merge: 90%. */
static void test_aws_merged_sequential_reads(void **state)
{
    (void)state;
    rep_disks disks = {0};
    load_shipped(&disks, "aws-gp3.ini");
    const rep_disk *d = rep_disks_find(&disks, "aws-gp3");
    assert_non_null(d);
    assert_true(d->iops_merge == 32768 && d->iops_unit == 262144);
    rep_bn bn;
    double seq = limit_share(&disks, "pattern=seq block=32KiB", &bn);
    print_message("sequential: %.4f of the limit, random: ", seq);
    assert_true(fabs(seq - 8847360000.0 / 100 / (125 * 1048576.0)) < 1e-9);
    assert_int_not_equal(bn, REP_BN_STORAGE);
    double rnd = limit_share(&disks, "pattern=rand block=32KiB", &bn);
    print_message("%.4f\n", rnd);
    assert_true(fabs(rnd - 0.9) < 1e-9);
    assert_int_equal(bn, REP_BN_STORAGE);
    rep_disks_free(&disks);
}

/* pd-balanced at 500 GiB: reads 6,000 IOPS and 280 MiB/s; writes by their
 * own columns.  aws-gp3 has no write keys: one combined limit. */
static void test_write_limits_read(void **state)
{
    (void)state;
    rep_disks disks = {0};
    load_shipped(&disks, "gcp-pd-balanced.ini");
    load_shipped(&disks, "aws-gp3.ini");
    const rep_disk *g = rep_disks_find(&disks, "gcp-pd-balanced"), *a = rep_disks_find(&disks, "aws-gp3");
    assert_true(g && a);
    assert_true(g->iops == 6000 && fabs(g->bandwidth - 280 * 1048576.0) < 1e4);
    assert_true(g->write_own_iops && g->write_own_bw);
    assert_true(g->write_iops == 6000 && fabs(g->write_bandwidth - 280 * 1048576.0) < 1e4) /* 0.28MiB is rounded to bytes */;
    assert_false(a->write_own_iops || a->write_own_bw);
    rep_disks_free(&disks);
}

/* A bad write key value names the file and line. */
static void test_bad_write_key(void **state)
{
    (void)state;
    char path[64], err[512];
    temp_file(path, "name = x\niops = 100\nwrite_iops_per_gib = lots\n");
    rep_disks disks = {0};
    assert_int_not_equal(rep_disks_load(&disks, path, NULL, err, sizeof err), 0);
    char want[128];
    snprintf(want, sizeof want, "%s:3:", path);
    print_message("%s\n", err);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "lots"));
    unlink(path);
    rep_disks_free(&disks);
}

/* write_budget: the shipped Standard PD's reads and writes share one
 * budget, pd-balanced's do not; a bad value names the file, line and key. */
static void test_write_budget(void **state)
{
    (void)state;
    rep_disks disks = {0};
    load_shipped(&disks, "gcp-pd-standard.ini");
    load_shipped(&disks, "gcp-pd-balanced.ini");
    assert_true(rep_disks_find(&disks, "gcp-pd-standard")->write_shared);
    assert_false(rep_disks_find(&disks, "gcp-pd-balanced")->write_shared);
    char path[64], err[512], want[160];
    temp_file(path, "name = x\niops = 100\nwrite_iops = 200\nwrite_budget = half\n");
    assert_int_not_equal(rep_disks_load(&disks, path, NULL, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s:4: bad disk profile line: write_budget: 'half' is not one of own|shared", path);
    print_message("%s\n", err);
    assert_string_equal(err, want);
    unlink(path);
    rep_disks_free(&disks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aws_merged_sequential_reads),
        cmocka_unit_test(test_write_limits_read),
        cmocka_unit_test(test_bad_write_key),
        cmocka_unit_test(test_write_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
