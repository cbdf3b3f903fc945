/* An instance must carry the I/O the credited cell measured (reads and
 * writes, bandwidth and IOPS) on one of its disks, per copy of the cell,
 * and all copies together under its block-storage caps: the only storage
 * check where storage was not swept, and the caps' share of N copies where
 * it was. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_more.h"

#include <dlgauge/plugin.h>

#include "reco_helpers.h"
#include "report.h"
#include "temp_file.h"

/* Disk profiles: gp (network, 1 GB/s, 16000 IOPS counted per 256 KiB),
 * slow (100 MB/s), nvme (6.5 GB/s); own (writes 60 MB/s of their own),
 * shared (the same, one read+write budget), combined (80 MB/s for both);
 * st1 and sc1 as AWS's at 2 TiB (80 and 24 MiB/s sustained, in 1-MiB
 * I/Os). */
static const char *const profiles[][2] = {
    {"gp", "bandwidth = 1GB\niops = 16000\niops_unit = 256KiB\n"},
    {"slow", "bandwidth = 100MB\n"},
    {"nvme", "bandwidth = 6500MB\niops = 900000\n"},
    {"own", "bandwidth = 100MB\nwrite_bandwidth = 60MB\n"},
    {"shared", "bandwidth = 100MB\nwrite_bandwidth = 60MB\nwrite_budget = shared\n"},
    {"combined", "bandwidth = 80MB\n"},
    {"st1", "bandwidth = 500MiB\niops = 80\niops_unit = 1MiB\n"},
    {"sc1", "bandwidth = 250MiB\niops = 24\niops_unit = 1MiB\n"},
};

/* One cell of workload wl over 10 s, its I/O in the extra columns cols =
 * vals; per_gpu: it fed a GPU (au), else a host workload. */
static void io_model(rep_report *r, const char *wl, bool per_gpu, const char *cols, const char *vals)
{
    char csv[2048], path[32], err[512];
    snprintf(csv, sizeof csv,
             "time,host,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,items,repeats,"
             "wall_s%s,%s,version\n"
             "2026-12-01T10:00:00Z,lab,io,run1,ok,%s,500,0,0,images,5000,1,10%s,%s,0.1.0\n",
             per_gpu ? ",au" : "", cols, wl, per_gpu ? ",0.95" : "", vals);
    memset(r, 0, sizeof *r);
    r->target = 0.95;
    temp_file(path, csv);
    int rc = rep_read_file(&r->rows, path, err, sizeof err);
    unlink(path);
    if (rc != 0)
        fail_msg("%s", err);
    assert_int_equal(rep_rows_validate(&r->rows, err, sizeof err), 0);
    for (size_t i = 0; i < sizeof profiles / sizeof *profiles; i++) {
        temp_file(path, profiles[i][1]);
        rc = rep_disks_load(&r->disks, path, profiles[i][0], err, sizeof err);
        unlink(path);
        if (rc != 0)
            fail_msg("%s", err);
    }
    assert_int_equal(rep_model_build(&r->model, &r->rows, &r->disks, 0.95, err, sizeof err), 0);
    assert_int_equal(r->model.n, 1);
    assert_true(r->model.g[0].has_best);
    assert_int_equal(r->model.g[0].per_gpu, per_gpu);
}

/* 6 GB over 10 s: 600 MB/s per copy. */
#define READS_600 "storage_read_bytes", "6000000000"

/* Before, small (a p3.2xlarge's 218.75 MB/s EBS cap, no local disk) was
 * credited the 600 MB/s cell in full and recommended.  nvme has the same
 * cap, but a local disk (instance store) carries it behind none. */
static void test_reads_over_cap_fail(void **state)
{
    (void)state;
    rep_report r;
    io_model(&r, "io-pipeline", true, READS_600);
    reco_from_text(&r, "[instance small]\nvcpus = 8\nmemory = 32GiB\ndisks = gp\ndisk_bandwidth_max = 218.75MB\n"
                       "price_per_hour = 1.0\n"
                       "[instance nvme]\nvcpus = 8\nmemory = 32GiB\ndisks = gp\nlocal_disks = nvme\n"
                       "disk_bandwidth_max = 218.75MB\nprice_per_hour = 1.2\n"
                       "[instance big]\nvcpus = 8\nmemory = 32GiB\ndisks = gp\ndisk_bandwidth_max = 2375MB\n"
                       "price_per_hour = 1.5\n");
    assert_int_equal(r.reco.nmeet, 2);
    assert_string_equal(r.reco.v[0].inst->name, "nvme");
    assert_near(r.reco.v[0].fits[0].thr, 500, 1e-9);
    assert_string_equal(r.reco.v[1].inst->name, "big");
    const rep_choice *small = choice(&r.reco, "small");
    assert_false(small->meets);
    assert_string_equal(small->fits[0].why, "io-pipeline reads 600 MB/s (storage not swept); the instance's disks "
                                            "carry at most 218.8 MB/s (its block-storage cap)");
    char note[512];
    rep_reco_caps_note(&r.reco, note, sizeof note);
    assert_string_equal(note, "");
    report_free(&r);
}

/* 8 GPUs run 8 copies of a per-GPU cell reading 400 MB/s: 3.2 GB/s through
 * one 2375 MB/s cap (a p4d's), though each copy's disk carries its 400.
 * One GPU under an 875 MB/s cap meets.  A host workload is one copy. */
static void test_copies_share_the_cap(void **state)
{
    (void)state;
    rep_report r;
    const char *cat = "[instance eight]\ngpus = 8\nvcpus = 96\nmemory = 1152GiB\ndisks = gp\n"
                      "disk_bandwidth_max = 2375MB\nprice_per_hour = 8.0\n"
                      "[instance one]\nvcpus = 8\nmemory = 61GiB\ndisks = gp\ndisk_bandwidth_max = 875MB\n"
                      "price_per_hour = 3.0\n";
    io_model(&r, "io-pipeline", true, "storage_read_bytes", "4000000000");
    reco_from_text(&r, cat);
    assert_false(choice(&r.reco, "eight")->meets);
    assert_true(choice(&r.reco, "one")->meets);
    assert_string_equal(choice(&r.reco, "eight")->fits[0].why,
                        "io-pipeline reads 400 MB/s per GPU (storage not swept), so reads 3.2 GB/s on its 8 "
                        "GPUs; the instance's disks carry at most 2.375 GB/s (its block-storage cap)");
    report_free(&r);
    io_model(&r, "preprocess", false, "storage_read_bytes", "4000000000");
    reco_from_text(&r, cat);
    assert_int_equal(r.reco.nmeet, 2);
    assert_near(choice(&r.reco, "eight")->fits[0].thr, 500, 1e-9); /* once: its GPUs do not run it */
    report_free(&r);
}

/* Storage swept: slow (100 MB/s, 200 images/s) and gp (400 MB/s, 500/s),
 * knee gp.  Both instances attach gp and let it run at its 1 GB/s, so both
 * meet the knee per copy; but eight's 8 copies read 3.2 GB/s through one
 * 2375 MB/s cap.  Before, the
 * knee alone was judged and eight met it. */
static void test_swept_copies_share_the_cap(void **state)
{
    (void)state;
    rep_report r;
    char csv[1024], path[32], err[512];
    const char *row = "2026-12-01T10:00:0%dZ,lab,io,run1,ok,%s,io-pipeline,%d,0,0,images,%d,1,10,0.95,%s,0.1.0\n";
    size_t n = (size_t)snprintf(csv, sizeof csv, "time,host,job,run_id,status,storage,workload,throughput,"
                                                 "throughput_ci95,throughput_stddev,unit,items,repeats,wall_s,au,"
                                                 "storage_read_bytes,version\n");
    n += (size_t)snprintf(csv + n, sizeof csv - n, row, 1, "slow", 200, 2000, "1000000000");
    snprintf(csv + n, sizeof csv - n, row, 2, "gp", 500, 5000, "4000000000");
    memset(&r, 0, sizeof r);
    r.target = 0.95;
    temp_file(path, csv);
    int rc = rep_read_file(&r.rows, path, err, sizeof err);
    unlink(path);
    if (rc != 0)
        fail_msg("%s", err);
    for (size_t i = 0; i < 2; i++) {
        temp_file(path, profiles[i][1]);
        assert_int_equal(rep_disks_load(&r.disks, path, profiles[i][0], err, sizeof err), 0);
        unlink(path);
    }
    assert_int_equal(rep_model_build(&r.model, &r.rows, &r.disks, 0.95, err, sizeof err), 0);
    reco_from_text(&r, "[instance eight]\ngpus = 8\nvcpus = 96\nmemory = 1152GiB\ndisks = gp\n"
                       "disk_bandwidth_max = 2375MB\nprice_per_hour = 8.0\n"
                       "[instance one]\nvcpus = 8\nmemory = 61GiB\ndisks = gp\ndisk_bandwidth_max = 1GB\n"
                       "price_per_hour = 3.0\n");
    if (!choice(&r.reco, "one")->meets)
        fail_msg("one: %s", choice(&r.reco, "one")->fits[0].why);
    assert_false(choice(&r.reco, "eight")->meets);
    assert_string_equal(choice(&r.reco, "eight")->fits[0].why,
                        "io-pipeline reads 400 MB/s per GPU, so reads 3.2 GB/s on its 8 GPUs; the instance's "
                        "disks carry at most 2.375 GB/s (its block-storage cap)");
    report_free(&r);
}

/* IOPS where measured, counted as the disk counts them: 100 MB/s in 16 KiB
 * random reads is 6103.5 IOPS, over a 5000 IOPS cap. */
static void test_iops_over_cap_fail(void **state)
{
    (void)state;
    rep_report r;
    io_model(&r, "io-pipeline", true, "storage_read_bytes,storage_ios", "1000000000,61035.15625");
    reco_from_text(&r, "[instance small]\nvcpus = 8\nmemory = 32GiB\ndisks = gp\ndisk_iops_max = 5000\n"
                       "price_per_hour = 1.0\n"
                       "[instance big]\nvcpus = 8\nmemory = 32GiB\ndisks = gp\ndisk_iops_max = 10000\n"
                       "price_per_hour = 1.5\n");
    assert_string_equal(choice(&r.reco, "small")->fits[0].why,
                        "io-pipeline reads 6103.52 IOPS (storage not swept); the instance's disks carry at most "
                        "5000 IOPS (its block-storage cap)");
    assert_true(choice(&r.reco, "big")->meets);
    report_free(&r);
}

/* A preprocess reading 40 and writing 50 MB/s: writes count.  Against its
 * own write limit (60 MB/s) it fits; with one shared budget 40/100 + 50/60
 * = 123% does not; nor do 90 MB/s on one 80 MB/s limit.  Writes alone
 * past a write limit fail where the read limit is ample.  Before, only
 * the reads were judged (and only with storage swept): all met. */
static void test_writes_against_write_limits(void **state)
{
    (void)state;
    rep_report r;
    const char *cat = "[instance own]\nvcpus = 8\nmemory = 32GiB\nlocal_disks = own\nprice_per_hour = 1.0\n"
                      "[instance shared]\nvcpus = 8\nmemory = 32GiB\nlocal_disks = shared\nprice_per_hour = 0.9\n"
                      "[instance combined]\nvcpus = 8\nmemory = 32GiB\nlocal_disks = combined\nprice_per_hour = 0.8\n";
    io_model(&r, "preprocess", false, "storage_read_bytes,storage_write_bytes", "400000000,500000000");
    reco_from_text(&r, cat);
    assert_int_equal(r.reco.nmeet, 1);
    assert_string_equal(r.reco.v[0].inst->name, "own");
    assert_string_equal(choice(&r.reco, "shared")->fits[0].why,
                        "preprocess reads 40 MB/s and writes 50 MB/s (storage not swept); on its best disk, "
                        "shared, that is 123% of its shared read+write budget");
    assert_string_equal(choice(&r.reco, "combined")->fits[0].why,
                        "preprocess reads 40 MB/s and writes 50 MB/s (storage not swept); its best disk, "
                        "combined, carries at most 80 MB/s (reads and writes together)");
    report_free(&r);

    io_model(&r, "preprocess", false, "storage_read_bytes,storage_write_bytes", "100000000,700000000");
    reco_from_text(&r, cat);
    assert_false(choice(&r.reco, "own")->meets);
    assert_string_equal(choice(&r.reco, "own")->fits[0].why,
                        "preprocess reads 10 MB/s and writes 70 MB/s (storage not swept); its best disk, own, "
                        "writes at most 60 MB/s");
    report_free(&r);
}

/* Nothing to hold the I/O against: a network disk with no cap known, a
 * disk without a profile, no disk listed: they meet, and the note names
 * them.  A disk whose own profile is short fails with no cap at all. */
static void test_unknown_caps_meet_with_note(void **state)
{
    (void)state;
    rep_report r;
    io_model(&r, "io-pipeline", true, READS_600);
    reco_from_text(&r, "[instance nocap]\nvcpus = 8\nmemory = 32GiB\ndisks = gp\nprice_per_hour = 1.0\n"
                       "[instance noprof]\nvcpus = 8\nmemory = 32GiB\ndisks = mystery\nprice_per_hour = 1.1\n"
                       "[instance nodisk]\nvcpus = 8\nmemory = 32GiB\nprice_per_hour = 1.2\n"
                       "[instance short]\nvcpus = 8\nmemory = 32GiB\ndisks = slow\nprice_per_hour = 0.5\n");
    assert_int_equal(r.reco.nmeet, 3);
    assert_string_equal(r.reco.v[0].inst->name, "nocap");
    assert_true(r.reco.v[0].fits[0].cap_unknown);
    assert_true(choice(&r.reco, "noprof")->fits[0].io_unknown);
    assert_string_equal(choice(&r.reco, "short")->fits[0].why,
                        "io-pipeline reads 600 MB/s (storage not swept); its best disk, slow, carries at most "
                        "100 MB/s");
    char note[1024];
    rep_reco_caps_note(&r.reco, note, sizeof note);
    assert_string_equal(note, "note: no block-storage cap known for nocap (catalog keys disk_bandwidth_max, "
                              "disk_iops_max): its disks are judged at the disk profiles' own limits, which the "
                              "instance may not reach; the I/O measured with storage not swept is not judged on "
                              "noprof, nodisk: they list no disk with a profile (catalog key disks, conf/disks)");
    report_free(&r);
}

/* 600 MB/s read, 40 MB/s of it from an emulated disk in 1 MB I/Os (the
 * page cache served the rest): the disk to attach is sized by the disk's
 * part, st1 (40 of its 80 I/Os a second), not sc1 (24) nor, as all 600
 * MB/s would need, gp. */
static void test_disk_sized_by_what_reached_it(void **state)
{
    (void)state;
    rep_report r;
    io_model(&r, "io-pipeline", true, "storage_read_bytes,emulated_disk_read_bytes,emulated_disk_read_ios",
             "6000000000,400000000,400");
    reco_from_text(&r, "[instance a]\nvcpus = 8\nmemory = 32GiB\ndisks = gp, st1, sc1\n"
                       "disk_bandwidth_max = 1250MB\ndisk_iops_max = 40000\nprice_per_hour = 1.0\n");
    assert_int_equal(r.reco.nmeet, 1);
    assert_string_equal(r.reco.v[0].disk, "st1");
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_sized_by_what_reached_it),
        cmocka_unit_test(test_reads_over_cap_fail),
        cmocka_unit_test(test_copies_share_the_cap),
        cmocka_unit_test(test_swept_copies_share_the_cap),
        cmocka_unit_test(test_iops_over_cap_fail),
        cmocka_unit_test(test_writes_against_write_limits),
        cmocka_unit_test(test_unknown_caps_meet_with_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
