/* What the recommendation may credit an instance with: only what was
 * measured, and where it estimates or assumes, it says so in the
 * headline as in the table. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "model_csv.h"
#include "reco_helpers.h"
#include "report.h"

/* m1 (1 vCPU, 2 GiB, 0.20/h), c1 (1, 4 GiB, 0.50), c2 (2, 8 GiB, 1.00). */
static const char small_catalog[] = "[instance m1]\nvcpus = 1\nmemory = 2GiB\nprice_per_hour = 0.20\n"
                                    "[instance c1]\nvcpus = 1\nmemory = 4GiB\nprice_per_hour = 0.50\n"
                                    "[instance c2]\nvcpus = 2\nmemory = 8GiB\nprice_per_hour = 1.00\n";

static char *headline(const rep_report *r)
{
    static char line[2048];
    rep_reco_text(r, line, sizeof line);
    return line;
}

#define FAIL_HEAD "time,job,memory,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,version\n"

/* Every cell failed: no instance is recommended at "0 USD per million"
 * (nothing priced it), each says why, and the headline names the group. */
static void test_all_failed_recommends_nothing(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, FAIL_HEAD "2026-12-01T00:00:00Z,j,1G,oom,io-pipeline,,,,images,0,0.95,0.1.0\n"
                                  "2026-12-01T00:00:01Z,j,2G,error,io-pipeline,,,,images,0,0.95,0.1.0\n");
    reco_from_text(&r, small_catalog);
    assert_int_equal(r.reco.nmeet, 0);
    assert_false(choice(&r.reco, "m1")->meets);
    assert_non_null(strstr(choice(&r.reco, "m1")->fits[0].why, "no cell ran ok (memory=1G oom, memory=2G error)"));
    char *line = headline(&r);
    assert_non_null(strstr(line, "no recommendation: no cell of io-pipeline ran ok"));
    assert_null(strstr(line, "recommended:"));
    report_free(&r);
}

/* Job a ran, job b failed at every memory: the mix is not priced as a
 * alone; b is named. */
static void test_failed_group_does_not_vanish(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, FAIL_HEAD "2026-12-01T00:00:00Z,a,1G,ok,io-pipeline,100,1,0.4,images,3,0.95,0.1.0\n"
                                  "2026-12-01T00:00:01Z,a,2G,ok,io-pipeline,100,1,0.4,images,3,0.95,0.1.0\n"
                                  "2026-12-01T00:00:02Z,b,1G,oom,io-pipeline,,,,images,0,0.95,0.1.0\n"
                                  "2026-12-01T00:00:03Z,b,2G,oom,io-pipeline,,,,images,0,0.95,0.1.0\n");
    reco_from_text(&r, small_catalog);
    assert_int_equal(r.reco.nmeet, 0);
    char *line = headline(&r);
    assert_non_null(strstr(line, "no cell of io-pipeline (job b) ran ok"));
    assert_null(strstr(line, "recommended:"));
    report_free(&r);
}

#define INTER_HEAD                                                                                             \
    "time,cpus,job,memory,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,version\n"
#define INTER_ROW(t, cpus, mem, thr) "2026-12-01T00:00:0" #t "Z," #cpus ",j," mem ",ok,io-pipeline," #thr ",1,0.4,images,3,0.95,0.1.0\n"

/* Each knee (cpus 1 at 4G, memory 2G at 2 cpus) holds on its slice, but
 * cpus=1 memory=2G was measured at half the best: m1, which has exactly
 * that, does not meet; c1 (1 vCPU, 4 GiB) is recommended. */
static void test_measured_corner_short_does_not_meet(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, INTER_HEAD INTER_ROW(0, 1, "2G", 50) INTER_ROW(1, 1, "4G", 96) INTER_ROW(2, 2, "2G", 96)
                            INTER_ROW(3, 2, "4G", 100));
    reco_from_text(&r, small_catalog);
    const rep_choice *m1 = choice(&r.reco, "m1");
    assert_false(m1->meets);
    assert_non_null(strstr(m1->fits[0].why, "measured 50 images/s at cpus=1 memory=2G"));
    assert_non_null(strstr(m1->fits[0].why, "50% of the best, below the 95% target"));
    assert_string_equal(r.reco.v[0].inst->name, "c1");
    report_free(&r);
}

/* The same knees with cpus=1 memory=2G not measured: m1 is an estimate,
 * and the headline names the combination that was not measured. */
static void test_unmeasured_corner_named(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, INTER_HEAD INTER_ROW(1, 1, "4G", 96) INTER_ROW(2, 2, "2G", 96) INTER_ROW(3, 2, "4G", 100));
    reco_from_text(&r, small_catalog);
    assert_string_equal(r.reco.v[0].inst->name, "m1");
    assert_true(r.reco.v[0].fits[0].estimated);
    assert_non_null(strstr(headline(&r), "(est.: cpus=1 memory=2G not measured)"));
    report_free(&r);
}

/* cpus not swept, the cell ran with 2 CPUs and 3 GB: c1 (1 vCPU) is
 * credited the cell extrapolated, and the headline says so as the table
 * does. */
static void test_extrapolated_marked_in_headline(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, "time,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,"
                        "cpus_used,rss_peak_bytes,version\n"
                        "2026-12-01T00:00:00Z,j,ok,io-pipeline,100,1,0.4,images,3,0.95,2,3000000000,0.1.0\n");
    reco_from_text(&r, small_catalog);
    assert_string_equal(r.reco.v[0].inst->name, "c1");
    assert_true(r.reco.v[0].fits[0].extrapolated);
    assert_non_null(strstr(headline(&r), "recommended: c1 (Test, 0.5 USD/h), 1.389 USD per million images (ext.: "
                                         "cpus not swept, the instance has fewer vCPUs than the cell ran with); "));
    report_free(&r);
}

#define ONE_CELL                                                                                               \
    "time,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,version\n"           \
    "2026-12-01T00:00:00Z,j,ok,io-pipeline,100,1,0.4,images,3,0.95,0.1.0\n"

/* g8's 8 GPUs cost 0.01% less per item than g1's one, on a figure that
 * is g1's cell x 8: a tie, and the measured 1-GPU shape wins it; the
 * runner-up's line says what its figure is. */
static void test_near_tie_prefers_measured_shape(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, ONE_CELL);
    reco_from_text(&r, "[instance g1]\nvcpus = 8\nmemory = 64GiB\nprice_per_hour = 1.00\n"
                       "[instance g8]\ngpus = 8\nvcpus = 64\nmemory = 512GiB\nprice_per_hour = 7.9992\n");
    assert_true(choice(&r.reco, "g8")->score < choice(&r.reco, "g1")->score);
    assert_string_equal(r.reco.v[0].inst->name, "g1");
    assert_non_null(strstr(headline(&r), "runner-up: g8 (Test, 7.999 USD/h), 2.778 USD per million images (x8 upper "
                                         "bound: one GPU's cell x 8, scaling not measured)"));
    report_free(&r);
}

/* 1% cheaper is no tie: g8 wins, its figure said to be an upper bound. */
static void test_cheaper_multi_gpu_says_upper_bound(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, ONE_CELL);
    reco_from_text(&r, "[instance g1]\nvcpus = 8\nmemory = 64GiB\nprice_per_hour = 1.00\n"
                       "[instance g8]\ngpus = 8\nvcpus = 64\nmemory = 512GiB\nprice_per_hour = 7.92\n");
    assert_string_equal(r.reco.v[0].inst->name, "g8");
    assert_non_null(strstr(headline(&r), "recommended: g8 (Test, 7.92 USD/h), 2.75 USD per million images (x8 upper "
                                         "bound: one GPU's cell x 8, scaling not measured); runner-up: g1"));
    report_free(&r);
}

/* Within a tie of measured figures on one GPU each, the lower hourly
 * price wins: c2 costs 0.1% less per item (1.001 / 100 against 1 / 99.8)
 * but rents twice the vCPUs for the same work. */
static void test_tie_goes_to_lower_hourly_price(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, "time,cpus,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,"
                        "au,version\n"
                        "2026-12-01T00:00:00Z,1,j,ok,io-pipeline,99.8,0.2,0.08,images,3,0.95,0.1.0\n"
                        "2026-12-01T00:00:01Z,2,j,ok,io-pipeline,100,0.2,0.08,images,3,0.95,0.1.0\n");
    reco_from_text(&r, "[instance c1]\nvcpus = 1\nmemory = 4GiB\nprice_per_hour = 1.000\n"
                       "[instance c2]\nvcpus = 2\nmemory = 8GiB\nprice_per_hour = 1.001\n");
    assert_true(choice(&r.reco, "c2")->score < choice(&r.reco, "c1")->score);
    assert_string_equal(r.reco.v[0].inst->name, "c1");
    assert_string_equal(r.reco.v[1].inst->name, "c2");
    report_free(&r);
}

#define H100_ROW                                                                                               \
    "time,job,mode,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,backend,"          \
    "gpu_mem_peak_bytes,gpu_name,version\n"                                                                    \
    "2026-12-01T00:00:00Z,a,train,ok,resnet50,2000,10,4,images,3,cuda,60000000000,NVIDIA H100 80GB HBM3,0.1.0\n"

/* Measured on an H100: an A10G instance is ranked as if its GPU performed
 * like it, and the line and the table say so. */
static void test_other_gpu_said(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, H100_ROW);
    reco_from_text(&r, "[instance a10]\ngpu = NVIDIA A10G 24GB\nvcpus = 4\nmemory = 16GiB\nprice_per_hour = 1\n"
                       "[instance h100]\ngpu = NVIDIA H100 80GB\nvcpus = 8\nmemory = 64GiB\nprice_per_hour = 4\n");
    assert_string_equal(r.reco.v[0].inst->name, "a10");
    assert_true(choice(&r.reco, "a10")->other_gpu);
    assert_false(choice(&r.reco, "h100")->other_gpu);
    char *line = headline(&r);
    assert_non_null(strstr(line, "recommended: a10 (Test, 1 USD/h), 0.1389 USD per million images (other GPU); "));
    assert_non_null(strstr(line, "; throughput was measured on NVIDIA H100 80GB HBM3: instances of another GPU "
                                 "(other GPU) are ranked as if theirs performed like it (--gpu H100 compares only "
                                 "those)"));
    rep_table t;
    assert_int_equal(rep_table_reco(&t, &r), 0);
    assert_string_equal(t.cell[t.ncols + 4], "NVIDIA A10G 24GB (other GPU)");
    assert_string_equal(t.cell[2 * t.ncols + 4], "NVIDIA H100 80GB");
    rep_table_free(&t);
    report_free(&r);
}

/* The cell held 60 GB of GPU memory: a GPU of 24 GB cannot run it. */
static void test_gpu_memory_judged(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, H100_ROW);
    reco_from_text(&r, "[instance a10]\ngpu = NVIDIA A10G 24GB\ngpu_memory = 24GB\nvcpus = 4\nmemory = 16GiB\n"
                       "price_per_hour = 1\n"
                       "[instance h100]\ngpu = NVIDIA H100 80GB\ngpu_memory = 80GB\nvcpus = 8\nmemory = 64GiB\n"
                       "price_per_hour = 4\n");
    const rep_choice *a10 = choice(&r.reco, "a10");
    assert_false(a10->meets);
    assert_string_equal(a10->fits[0].why, "resnet50/train needs GPU memory >= 60 GB (gpu_mem_peak_bytes on NVIDIA "
                                          "H100 80GB HBM3), its GPU has 24 GB");
    assert_string_equal(r.reco.v[0].inst->name, "h100");
    report_free(&r);
}

static void test_gpu_model_names(void **state)
{
    (void)state;
    char m[64];
    rep_gpu_model("NVIDIA A100-SXM4-40GB", m, sizeof m);
    assert_string_equal(m, "A100");
    rep_gpu_model("Tesla T4", m, sizeof m);
    assert_string_equal(m, "T4");
    assert_true(rep_gpu_same("NVIDIA A100 40GB", "NVIDIA A100-SXM4-80GB"));
    assert_false(rep_gpu_same("NVIDIA A10G 24GB", "NVIDIA A100-SXM4-40GB"));
    assert_false(rep_gpu_same("NVIDIA L4 24GB", "NVIDIA L40S"));
    assert_false(rep_gpu_same("", "NVIDIA L40S"));
}

/* A run's storage named like a profile file (gp: 125 MiB/s, 3000 IOPS)
 * whose throttle ran with its own 600 MB/s and 60000 IOPS: the knee is
 * what it ran with, an instance's gp disk is the file's profile, and it
 * does not reach the knee; the report says the two differ. */
static void test_storage_named_like_profile(void **state)
{
    (void)state;
    rep_report r;
    char path[32], err[512];
    memset(&r, 0, sizeof r);
    r.target = 0.95;
    temp_file(path, "name = gp\nbandwidth = 125MiB\niops = 3000\n");
    int rc = rep_disks_load(&r.disks, path, NULL, err, sizeof err);
    unlink(path);
    assert_int_equal(rc, 0);
    rows_from_csv("time,host,job,mode,run_id,status,storage,workload,throughput,throughput_ci95,throughput_stddev,"
                  "unit,items,repeats,wall_s,au,storage_config,version\n"
                  "2026-12-01T10:00:01Z,lab,io,-,run1,ok,slow,io-pipeline,100,0,0,images,100,1,1,0.95,"
                  "type=throttle bandwidth=100MB,0.1.0\n"
                  "2026-12-01T10:00:02Z,lab,io,-,run1,ok,gp,io-pipeline,400,0,0,images,400,1,1,0.95,"
                  "type=throttle bandwidth=600MB iops=60000,0.1.0\n",
                  &r.rows);
    assert_int_equal(rep_disks_from_rows(&r.disks, &r.rows, err, sizeof err), 0);
    assert_int_equal(rep_model_build(&r.model, &r.rows, &r.disks, 0.95, err, sizeof err), 0);
    assert_int_equal(r.disks.nwarnings, 1);
    assert_non_null(strstr(r.disks.warnings[0], "storage gp: the results' throttle ran with limits of its own (600 MB/s, "
                                                "60000 IOPS), not those of the profile of that name"));
    reco_from_text(&r, "[instance i]\nvcpus = 8\nmemory = 32GiB\ndisks = gp\nprice_per_hour = 1.0\n");
    const rep_choice *i = choice(&r.reco, "i");
    assert_false(i->meets);
    assert_string_equal(i->fits[0].why, "io-pipeline needs storage like gp");
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_failed_recommends_nothing),
        cmocka_unit_test(test_failed_group_does_not_vanish),
        cmocka_unit_test(test_measured_corner_short_does_not_meet),
        cmocka_unit_test(test_unmeasured_corner_named),
        cmocka_unit_test(test_extrapolated_marked_in_headline),
        cmocka_unit_test(test_near_tie_prefers_measured_shape),
        cmocka_unit_test(test_cheaper_multi_gpu_says_upper_bound),
        cmocka_unit_test(test_tie_goes_to_lower_hourly_price),
        cmocka_unit_test(test_other_gpu_said),
        cmocka_unit_test(test_gpu_memory_judged),
        cmocka_unit_test(test_gpu_model_names),
        cmocka_unit_test(test_storage_named_like_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
