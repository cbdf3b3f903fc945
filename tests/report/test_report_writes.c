/* The report's storage rule judges writes as well as reads: against the
 * profile's write limits where it has write_* keys (GCP: output-bound
 * while reads are fine), with write_budget = shared their shares of their
 * own limits together against one budget (GCP Standard PD), else reads and
 * writes together against the one shared limit (AWS EBS), as the throttle
 * charges them. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>

#include "model.h"
#include "rows.h"
#include "temp_file.h"

#define MIB 1048576.0
/* pd-standard's 0.12 MiB/s per GiB, whole bytes, x 500 GiB */
#define PD_WRITE_BW (500 * 125829.0)

/* The shipped gcp-pd-standard.ini without its write_budget line, as
 * gcp-pd-standard-own: each side its full limit. */
static void load_own_standard(rep_disks *d, const char *dir)
{
    char path[4300], tmp[64], text[8192], line[512], err[512];
    snprintf(path, sizeof path, "%s/gcp-pd-standard.ini", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "write_budget", 12) != 0 && strncmp(line, "name", 4) != 0)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s", line);
    fclose(f);
    assert_true(n < sizeof text);
    temp_file(tmp, text);
    if (rep_disks_load(d, tmp, "gcp-pd-standard-own", err, sizeof err) != 0)
        fail_msg("%s", err);
    unlink(tmp);
}

/* The shipped profiles, conf/disks/ of the source tree, and the variant above. */
static void load_profiles(rep_disks *d)
{
    const char *src = getenv("DLG_SOURCE_DIR") ? getenv("DLG_SOURCE_DIR") : ".";
    char dir[4200], err[512];
    snprintf(dir, sizeof dir, "%s/conf/disks", src);
    if (rep_disks_load_dir(d, dir, err, sizeof err) != 0 || !rep_disks_find(d, "aws-gp3"))
        fail_msg("%s: %s", dir, err);
    load_own_standard(d, dir);
}

/* One preprocess cell of 100 s on storage `disk`, with the extra columns
 * `cols` holding `vals`: its verdict, limit share and evidence. */
static rep_bn judge(const char *disk, const char *cols, const char *vals, double *share, char *evidence, size_t len)
{
    rep_disks disks = {0};
    char csv[64], text[1024], err[512] = "";
    load_profiles(&disks);
    snprintf(text, sizeof text,
             "time,host,job,mode,run_id,status,storage,workload,throughput,throughput_ci95,throughput_stddev,unit,"
             "items,repeats,wall_s,%s,version\n"
             "2026-12-01T10:00:01Z,lab,prep,-,run1,ok,%s,preprocess,500,1,1,images,50000,1,100,%s,0.1.0\n",
             cols, disk, vals);
    temp_file(csv, text);
    rep_rows rows = {0};
    rep_model m;
    assert_int_equal(rep_read_file(&rows, csv, err, sizeof err), 0);
    unlink(csv);
    assert_int_equal(rep_rows_validate(&rows, err, sizeof err), 0);
    if (rep_model_build(&m, &rows, &disks, 0.95, err, sizeof err) != 0)
        fail_msg("%s", err);
    const rep_cell *c = &m.g[0].cells[0];
    rep_bn bn = c->bn;
    *share = c->limit_share;
    snprintf(evidence, len, "%s", c->evidence);
    print_message("%s: %s (%s)\n", disk, rep_bn_name(bn), c->evidence);
    rep_model_free(&m);
    rep_rows_free(&rows);
    rep_disks_free(&disks);
    return bn;
}

/* pd-standard at 500 GiB with limits of their own for writes: reads 60
 * MiB/s and 375 IOPS, writes 60 MiB/s and 750 IOPS.  Reads 20 MB/s at 200
 * IOPS (53% of the read IOPS) are fine; writes 58 MB/s are 92.2% of the
 * write bandwidth. */
static void test_gcp_write_bound(void **state)
{
    (void)state;
    double share;
    char ev[320];
    rep_bn bn = judge("gcp-pd-standard-own", "storage_read_bytes,storage_ios,storage_write_bytes,storage_write_ios",
                      "2000000000,20000,5800000000,5800", &share, ev, sizeof ev);
    assert_int_equal(bn, REP_BN_STORAGE_WRITE);
    assert_string_equal(rep_bn_name(bn), "output-bound: storage writes");
    assert_true(fabs(share - 58e6 / PD_WRITE_BW) < 1e-9);
    assert_string_equal(ev, "writes 58.0 MB/s = 92% of profile gcp-pd-standard-own's write limit "
                            "(62.9 MB/s, 750 IOPS); reads 20.0 MB/s");
}

/* preprocess writes its output itself, past the host: its own
 * write_mb_per_s is the write rate. */
static void test_gcp_write_bound_from_workload(void **state)
{
    (void)state;
    double share;
    char ev[320];
    rep_bn bn = judge("gcp-pd-standard-own", "storage_read_bytes,storage_ios,write_mb_per_s", "2000000000,20000,58",
                      &share, ev, sizeof ev);
    assert_int_equal(bn, REP_BN_STORAGE_WRITE);
    assert_true(fabs(share - 58e6 / PD_WRITE_BW) < 1e-9);
}

/* The same reads with writes at half the write limit: reads bind no limit,
 * so no storage verdict. */
static void test_gcp_writes_fine(void **state)
{
    (void)state;
    double share;
    char ev[320];
    rep_bn bn = judge("gcp-pd-standard-own", "storage_read_bytes,storage_ios,storage_write_bytes,storage_write_ios",
                      "2000000000,20000,3000000000,3000", &share, ev, sizeof ev);
    assert_int_not_equal(bn, REP_BN_STORAGE_WRITE);
    assert_int_not_equal(bn, REP_BN_STORAGE);
    assert_true(fabs(share - 200.0 / 375) < 1e-9); /* the read IOPS */
}

/* pd-standard's one budget: reads at 60% and writes at 50% of their own
 * bandwidth limits (large I/Os: IOPS 10% and 4%) need 110% of the disk:
 * storage-bound, named by the reads, which use more of it; with limits of
 * their own neither comes near its limit. */
static void test_gcp_shared_budget(void **state)
{
    (void)state;
    double share;
    char ev[320];
    const double bw = PD_WRITE_BW; /* reads and writes alike */
    char vals[128];
    snprintf(vals, sizeof vals, "%.0f,3600,%.0f,3000", 0.6 * bw * 100, 0.5 * bw * 100);
    const char *cols = "storage_read_bytes,storage_ios,storage_write_bytes,storage_write_ios";
    rep_bn bn = judge("gcp-pd-standard", cols, vals, &share, ev, sizeof ev);
    assert_int_equal(bn, REP_BN_STORAGE);
    assert_true(fabs(share - 1.1) < 1e-9);
    assert_string_equal(ev, "reads 37.7 and writes 31.5 MB/s use 110% of profile gcp-pd-standard's shared "
                            "read+write budget (reads 62.9 MB/s, 375 IOPS; writes 62.9 MB/s, 750 IOPS)");
    bn = judge("gcp-pd-standard-own", cols, vals, &share, ev, sizeof ev);
    assert_int_not_equal(bn, REP_BN_STORAGE);
    assert_int_not_equal(bn, REP_BN_STORAGE_WRITE);
    assert_true(fabs(share - 0.6) < 1e-9);
    /* the writes' larger share names them: output-bound */
    snprintf(vals, sizeof vals, "%.0f,3600,%.0f,3000", 0.3 * bw * 100, 0.6 * bw * 100);
    bn = judge("gcp-pd-standard", cols, vals, &share, ev, sizeof ev);
    assert_int_equal(bn, REP_BN_STORAGE_WRITE);
    assert_true(fabs(share - 0.9) < 1e-9);
}

/* gp3: one 125 MiB/s budget for reads and writes.  Reads 55 MB/s and
 * writes 65 MB/s are each under half of it, together 91.6%: storage,
 * named by the writes, which use more of it. */
static void test_aws_shared_limit(void **state)
{
    (void)state;
    double share;
    char ev[320];
    rep_bn bn = judge("aws-gp3", "storage_read_bytes,storage_ios,storage_write_bytes,storage_write_ios",
                      "5500000000,5500,6500000000,6500", &share, ev, sizeof ev);
    assert_int_equal(bn, REP_BN_STORAGE_WRITE);
    assert_true(fabs(share - 120e6 / (125 * MIB)) < 1e-9);
    assert_string_equal(ev, "reads 55.0 + writes 65.0 MB/s = 92% of profile aws-gp3's limit shared by reads and "
                            "writes (131.1 MB/s, 3000 IOPS)");
    /* reads the larger part: the reads' verdict, the same share */
    bn = judge("aws-gp3", "storage_read_bytes,storage_ios,storage_write_bytes,storage_write_ios",
               "6500000000,6500,5500000000,5500", &share, ev, sizeof ev);
    assert_int_equal(bn, REP_BN_STORAGE);
    assert_true(fabs(share - 120e6 / (125 * MIB)) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gcp_write_bound),
        cmocka_unit_test(test_gcp_write_bound_from_workload),
        cmocka_unit_test(test_gcp_writes_fine),
        cmocka_unit_test(test_aws_shared_limit),
        cmocka_unit_test(test_gcp_shared_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
