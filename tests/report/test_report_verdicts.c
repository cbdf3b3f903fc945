/* Verdicts a reader could misread, from result rows like the quick start's:
 * an accelerator no configuration keeps fed (the group's text and the
 * recommendation say so), storage verdicts far below the emulated disk's
 * limits (the disk beneath, or the profile's latency, held the reads
 * back), STREAM cells (memory bandwidth, not compute; cache bandwidth where
 * the arrays fit in the last-level cache), and cells whose
 * threads waited for a CPU (CPU-contended, noted in the recommendation;
 * by the other processes measured on its CPUs where the results have
 * them, not by its own threads). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reco_helpers.h"
#include "disk_use.h"
#include "report.h"
#include "render.h"

#define HEAD                                                                                                        \
    "time,host,job,mode,run_id,status,storage,workload,throughput,throughput_ci95,throughput_stddev,unit,items,"   \
    "repeats,wall_s,au,data_wait_fraction,cpu_user_share,loader_busy,loader_read_s,loader_decode_s,loader_threads," \
    "storage_read_bytes,storage_ios,read_bytes,dataset_bytes,storage_config,cpu_wait_share,cpu_steal_share,"        \
    "triad_bytes_per_s,array_bytes,threads,version\n"

/* The quick start's two emulated disks (conf/disks/local-nvme.ini and
 * alibaba-ultra-2017.ini at 500 GiB: 80 MB/s, 3000 IOPS, 2 ms), two
 * without a latency: one with rates (and a copy of it read through
 * page_cache = model), one with IOPS only, and aws-gp2.ini's
 * limits at 500 GiB (1500 IOPS sustained, credits spent at 3000), and
 * one whose own bucket banks 20 MB (burst, no peak rate). */
static void load_disks(rep_disks *d)
{
    static const char *const prof[][2] = {
        {"local-nvme", "iops = 900000\nbandwidth = 6500MB\nlatency = 80us\n"},
        {"efficiency-disk", "capacity = 500GiB\niops_base = 1000\niops_per_gib = 6\niops_max = 3000\n"
                            "bandwidth_base = 50MB\nbandwidth_per_gib = 0.1MB\nbandwidth_max = 80MB\nlatency = 2ms\n"},
        {"paced-disk", "iops = 3000\nbandwidth = 80MB\n"},
        {"cached-disk", "iops = 3000\nbandwidth = 80MB\n"},
        {"iops-disk", "iops = 400\n"},
        {"gp2", "iops = 1500\nbandwidth = 250MiB\nburst_iops = 5400000\npeak_iops = 3000\n"},
        {"bucket-disk", "iops = 3000\nbandwidth = 80MB\nburst = 20MB\n"},
    };
    for (size_t i = 0; i < sizeof prof / sizeof *prof; i++) {
        char path[32], err[512];
        temp_file(path, prof[i][1]);
        int rc = rep_disks_load(d, path, prof[i][0], err, sizeof err);
        unlink(path);
        if (rc != 0)
            fail_msg("%s", err);
    }
}

/* The report of these rows (after head), judged with the disks above. */
static void report_with(rep_report *r, const char *head, const char *rows)
{
    char path[32], err[512], text[8192];
    memset(r, 0, sizeof *r);
    r->target = 0.95;
    snprintf(text, sizeof text, "%s%s", head, rows);
    temp_file(path, text);
    load_disks(&r->disks);
    int rc = rep_read_file(&r->rows, path, err, sizeof err);
    unlink(path);
    if (rc != 0)
        fail_msg("%s", err);
    if (rep_rows_validate(&r->rows, err, sizeof err) != 0)
        fail_msg("%s", err);
    if (rep_model_build(&r->model, &r->rows, &r->disks, 0.95, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void report_of(rep_report *r, const char *rows) { report_with(r, HEAD, rows); }

static const rep_cell *only_cell(const rep_report *r)
{
    assert_int_equal(r->model.n, 1);
    assert_int_equal(r->model.g[0].ncells, 1);
    const rep_cell *c = &r->model.g[0].cells[0];
    print_message("%s: %s\n", rep_bn_name(c->bn), c->evidence);
    return c;
}


#define THROTTLE(p) "type=throttle inner=posix profile=conf/disks/" p ".ini"
/* Two io-pipeline cells, cold cache, far below their disks' limits: 8.7
 * and 9.2 MB/s, AU 0.08 and 0.09, loader threads 98% busy, 63% of it
 * reading (the quick start's cells under an older emulated disk model;
 * fixed input here, not what the quick start measures now). */
#define QUICKSTART_ROWS                                                                                              \
    "2026-12-01T10:00:01Z,vm,input-pipeline,-,run1,ok,local-nvme,io-pipeline,76,0,0,images,228,1,3,0.08,0.92,0.40," \
    "0.98,3.70,2.17,2,26100000,237,26100000,33072384," THROTTLE("local-nvme") ",,,,,,0.1.0\n"                        \
    "2026-12-01T10:00:05Z,vm,input-pipeline,-,run1,ok,efficiency-disk,io-pipeline,80,0,0,images,240,1,3,0.09,0.91,"  \
    "0.40,0.98,3.70,2.17,2,27600000,250,27600000,33072384," THROTTLE("alibaba-ultra-2017") ",,,,,,0.1.0\n"

static const char catalog[] = "[instance one-gpu]\ngpus = 1\ngpu = Test GPU\nvcpus = 8\nmemory = 32GiB\n"
                              "disks = local-nvme, efficiency-disk\nprice_per_hour = 1.00\n";

/* Even the best cell leaves the accelerator idle 91% of the time: the
 * group's text and the recommendation, in every output, say that nothing
 * measured feeds it, with the best AU and where it was measured. */
static void test_starved_accelerator(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, QUICKSTART_ROWS);
    const rep_group *g = &r.model.g[0];
    assert_true(rep_group_starved(g));
    char line[2048];
    rep_group_starved_text(g, line, sizeof line);
    assert_non_null(strstr(line, "no configuration measured keeps the accelerator fed (best AU 0.09, job "
                                 "input-pipeline, storage=efficiency-disk; fed = AU >= 0.90)"));
    reco_from_text(&r, catalog);
    assert_true(choice(&r.reco, "one-gpu")->meets);
    rep_reco_text(&r, line, sizeof line);
    print_message("%s\n", line);
    assert_non_null(strstr(line, "recommended: one-gpu"));
    assert_non_null(strstr(line, "no configuration measured keeps the accelerator fed for io-pipeline (best AU "
                                 "0.09, job input-pipeline, storage=efficiency-disk): this is the cheapest instance "
                                 "reaching the best measured rate, not one that feeds the GPU"));
    rep_out_fn *outs[] = {out_text_plain, rep_out_markdown, rep_out_html};
    for (size_t i = 0; i < 3; i++) {
        char *doc = render_report(&r, outs[i]);
        const char *grp = strstr(doc, "accelerator starved: no configuration measured keeps the accelerator fed");
        const char *reco = strstr(doc, "not one that feeds the GPU");
        assert_non_null(grp);
        assert_non_null(reco);
        assert_true(grp < reco); /* the group's text, then the recommendation's */
        free(doc);
    }
    report_free(&r);
}

/* A group whose best cell keeps the accelerator fed says nothing of it. */
static void test_fed_accelerator(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,p,-,run1,ok,local-nvme,io-pipeline,1500,0,0,images,4500,1,3,0.95,0.02,0.5,"
                  ",,,,,,,,,,,,,,0.1.0\n"
                  "2026-12-01T10:00:02Z,vm,p,-,run1,ok,efficiency-disk,io-pipeline,500,0,0,images,1500,1,3,0.30,0.7,"
                  "0.3,,,,,,,,,,,,,,,0.1.0\n");
    char line[2048];
    assert_false(rep_group_starved(&r.model.g[0]));
    rep_group_starved_text(&r.model.g[0], line, sizeof line);
    assert_string_equal(line, "");
    reco_from_text(&r, catalog);
    rep_reco_text(&r, line, sizeof line);
    assert_null(strstr(line, "fed"));
    report_free(&r);
}

/* Reads at 12% of the emulated disk's limits, 14.8 ms per read where the
 * profile takes 3.4 ms (2 ms latency, 110 kB at 80 MB/s): the disk beneath
 * the emulation held them back, and the evidence says so. */
static void test_storage_below_profile(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, QUICKSTART_ROWS);
    for (size_t i = 0; i < 2; i++) {
        const rep_cell *c = &r.model.g[0].cells[i];
        print_message("%s: %s\n", rep_bn_name(c->bn), c->evidence);
        assert_int_equal(c->bn, REP_BN_STORAGE);
        assert_non_null(strstr(c->evidence, "loader threads 98% busy, 63% of it reading"));
        assert_non_null(strstr(c->evidence, "held the reads back, not the profile"));
        assert_non_null(strstr(c->evidence, "the disk beneath the emulation (the host's own disk, page-cache misses)"));
    }
    assert_non_null(strstr(r.model.g[0].cells[0].evidence, "reads 8.7 MB/s = under 1% of profile local-nvme's limit"));
    const rep_cell *slow = &r.model.g[0].cells[1];
    assert_non_null(strstr(slow->evidence, "reads 9.2 MB/s = only 12% of profile efficiency-disk's limit "
                                           "(80.0 MB/s, 3000 IOPS)"));
    assert_non_null(strstr(slow->evidence, "14.80 ms per read where the profile takes 3.38 ms"));
    report_free(&r);
}

/* Reads above the sustained limit say why: 3000 IOPS of 4 KiB on aws-gp2
 * (1500 IOPS sustained at 500 GiB) ran on its burst credits; 96 MB/s on
 * an 80 MB/s profile through a storage that is no throttle of it was held
 * by nothing; a cell at the limit says neither. */
static void test_storage_above_profile(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,p,-,run1,ok,gp2,io-pipeline,3000,0,0,images,9000,1,3,0.3,0.7,"
                  "0.2,0.99,2.9,0.1,4,36864000,9000,,33072384," THROTTLE("aws-gp2") ",,,,,,0.1.0\n"
                  "2026-12-01T10:00:05Z,vm,p,-,run1,ok,paced-disk,io-pipeline,2000,0,0,images,6000,1,3,0.3,0.7,"
                  "0.2,0.99,2.9,0.1,4,288000000,2400,,33072384,type=posix,,,,,,0.1.0\n"
                  "2026-12-01T10:00:09Z,vm,p,-,run1,ok,efficiency-disk,io-pipeline,1600,0,0,images,4800,1,3,0.3,0.7,"
                  "0.2,0.99,2.9,0.1,4,240000000,2400,,33072384," THROTTLE("alibaba-ultra-2017") ",,,,,,0.1.0\n"
                  "2026-12-01T10:00:13Z,vm,p,-,run1,ok,cached-disk,io-pipeline,2000,0,0,images,6000,1,3,0.3,0.7,"
                  "0.2,0.99,2.9,0.1,4,288000000,2400,,33072384," THROTTLE("cached-disk")
                  " page_cache=model,,,,,,0.1.0\n");
    const rep_cell *gp2 = NULL, *paced = NULL, *at = NULL, *cached = NULL;
    for (size_t g = 0; g < r.model.n; g++)
        for (size_t i = 0; i < r.model.g[g].ncells; i++) {
            const rep_cell *c = &r.model.g[g].cells[i];
            const char *s = rep_str(c->row, "storage");
            print_message("%s: %s: %s\n", s, rep_bn_name(c->bn), c->evidence);
            if (strcmp(s, "gp2") == 0)
                gp2 = c;
            else if (strcmp(s, "paced-disk") == 0)
                paced = c;
            else if (strcmp(s, "cached-disk") == 0)
                cached = c;
            else
                at = c;
        }
    assert_true(gp2 && paced && at && cached);
    assert_non_null(strstr(cached->evidence, "= 120% of profile cached-disk's limit (80.0 MB/s, 3000 IOPS); above it: "
                                             "the reads the page cache served cost the disk nothing (page_cache = model)"));
    assert_non_null(strstr(gp2->evidence, "reads 12.3 MB/s = 200% of profile gp2's limit (262.1 MB/s, 1500 IOPS); "
                                          "above it on the profile's burst credits (peak 3000 IOPS), a new "
                                          "volume's: a run longer than they last measures the limit"));
    assert_non_null(strstr(paced->evidence, "= 120% of profile paced-disk's limit (80.0 MB/s, 3000 IOPS); above it: "
                                            "the storage is no throttle of that profile"));
    assert_non_null(strstr(at->evidence, "= 100% of profile efficiency-disk's limit"));
    assert_null(strstr(at->evidence, "above it"));
    report_free(&r);
}

/* A throttle with a bucket of its own (burst = 20 MB, no peak_*) lets
 * that much through at once: reads above its limit say so, not "a short
 * run" (which a 10 s run read at 120% too). */
static void test_storage_above_bucket(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,p,-,run1,ok,bucket-disk,io-pipeline,2000,0,0,images,6000,1,3,0.3,0.7,"
                  "0.2,0.99,2.9,0.1,4,288000000,2400,,33072384," THROTTLE("bucket-disk") ",,,,,,0.1.0\n");
    const rep_cell *c = only_cell(&r);
    print_message("%s\n", c->evidence);
    assert_non_null(strstr(c->evidence, "= 120% of profile bucket-disk's limit (80.0 MB/s, 3000 IOPS); above it on "
                                        "the throttle's bucket, which lets 20.0 MB through at once (burst)"));
    assert_null(strstr(c->evidence, "short run"));
    report_free(&r);
}

/* A throttle that counted what reached its disk (emulated_disk_read_*):
 * 96 MB/s read, 72 MB/s of it from the disk, judged by the disk's part
 * (90% of 80 MB/s: at the limit, not above it on the page cache). */
static void test_storage_disk_share(void **state)
{
    (void)state;
    rep_report r;
    report_with(&r,
                "time,host,job,mode,run_id,status,storage,workload,throughput,throughput_ci95,throughput_stddev,unit,"
                "items,repeats,wall_s,au,data_wait_fraction,loader_busy,loader_threads,storage_read_bytes,storage_ios,"
                "emulated_disk_read_bytes,emulated_disk_read_ios,storage_config,version\n",
                "2026-12-01T10:00:13Z,vm,p,-,run1,ok,cached-disk,io-pipeline,2000,0,0,images,6000,1,3,0.3,0.7,0.99,4,"
                "288000000,2400,216000000,1648," THROTTLE("cached-disk") " page_cache=model,0.1.0\n");
    const rep_cell *c = only_cell(&r);
    assert_non_null(strstr(c->evidence, "reads 96.0 MB/s (72.0 MB/s of them from the disk, the page cache served "
                                        "the rest) = 90% of profile cached-disk's limit (80.0 MB/s, 3000 IOPS)"));
    assert_null(strstr(c->evidence, "above it"));
    rep_io_rate io;
    rep_cell_io(c, &io);
    assert_true(io.read_bps == 72e6 && fabs(io.read_ios - 1648 / 3.0) < 1e-9);
    report_free(&r);
}

/* One loader thread, 3.1 ms per read against the profile's 2 ms latency
 * (3.4 ms with the transfer): the profile's latency held the reads back,
 * not its rates, and not the disk beneath. */
static void test_storage_latency_bound(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,p,-,run1,ok,efficiency-disk,io-pipeline,300,0,0,images,900,1,3,0.3,0.7,"
                  "0.2,0.99,2.9,0.1,1,105000000,954,,33072384," THROTTLE("alibaba-ultra-2017") ",,,,,,0.1.0\n");
    const rep_cell *c = only_cell(&r);
    assert_int_equal(c->bn, REP_BN_STORAGE);
    assert_non_null(strstr(c->evidence, "3.04 ms per read, the profile's latency 2.00 ms: that latency with 1 "
                                        "loader thread held the reads back, not its rates"));
    assert_null(strstr(c->evidence, "beneath"));
    report_free(&r);
}

/* One loader thread of 256 KiB reads at 62% of the profile's 80 MB/s:
 * at QD1 each read takes its 2 ms latency and its 3.3 ms transfer, so the
 * latency held the reads back, said although the share is above half. */
static void test_storage_latency_short_of_limit(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,p,-,run1,ok,efficiency-disk,io-pipeline,189,0,0,images,567,1,3,0.3,0.7,"
                  "0.2,0.99,2.9,0.1,1,148635648,567,,33072384," THROTTLE("alibaba-ultra-2017") ",,,,,,0.1.0\n");
    const rep_cell *c = only_cell(&r);
    print_message("%s: %s\n", rep_bn_name(c->bn), c->evidence);
    assert_int_equal(c->bn, REP_BN_STORAGE);
    assert_non_null(strstr(c->evidence, "reads 49.5 MB/s = 62% of profile efficiency-disk's limit"));
    assert_non_null(strstr(c->evidence, "5.11 ms per read, the profile's latency 2.00 ms: that latency with 1 "
                                        "loader thread held the reads back, not its rates"));
    report_free(&r);
}

/* One loader thread reading at the pace of a profile without latency
 * (1.40 ms per read where its 80 MB/s takes 1.38 ms for 110 kB; 2.60 ms
 * where its 400 IOPS space reads 2.50 ms apart), half of its time
 * decoding: taking one read at a time held the reads back, not the disk
 * beneath the emulation, which kept the profile's pace. */
static void test_storage_at_profile_pace(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,p,-,run1,ok,paced-disk,io-pipeline,357,0,0,images,1071,1,3,0.3,0.7,0.4,"
                  "0.99,1.5,1.45,1,117810000,1071,,33072384," THROTTLE("paced") ",,,,,,0.1.0\n"
                  "2026-12-01T10:00:02Z,vm,p,-,run1,ok,iops-disk,io-pipeline,192,0,0,images,673,1,3.5,0.3,0.7,0.4,"
                  "0.99,1.75,1.7,1,74030000,673,,33072384," THROTTLE("iops") ",,,,,,0.1.0\n");
    assert_int_equal(r.model.n, 1);
    const char *want[] = {"1.40 ms per read, the profile's pace (1.38 ms): one read at a time with 1 loader "
                          "thread held the reads back, not its rates",
                          "2.60 ms per read, the profile's pace (2.50 ms): one read at a time with 1 loader "
                          "thread held the reads back, not its rates"};
    for (size_t i = 0; i < 2; i++) {
        const rep_cell *c = &r.model.g[0].cells[i];
        print_message("%s: %s\n", rep_bn_name(c->bn), c->evidence);
        assert_int_equal(c->bn, REP_BN_STORAGE);
        assert_non_null(strstr(c->evidence, "% of profile"));
        assert_non_null(strstr(c->evidence, want[i]));
        assert_null(strstr(c->evidence, "beneath"));
    }
    report_free(&r);
}

/* A STREAM cell (diag stream, measured on this host): memory bandwidth is
 * its work, so it is memory-bound, not compute-bound, with the kernel's rate. */
/* Random 4 KiB reads on a disk of 3000 IOPS and 80 MB/s and on one of 400
 * IOPS alone: the storage axis orders them by what each sustains for reads
 * of that size (12.3 and 1.6 MB/s), so the 400-IOPS disk is the smaller
 * value and the knee has one below it.  Ordered by bandwidth alone, the
 * disk without one came last and the knee was "the smallest value
 * measured". */
static void test_storage_ordered_by_read_size(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,rand4k,-,run1,ok,paced-disk,io,12288000,0,0,bytes,24576000,1,2,,,0.05,,,,,"
                  "24576000,6000,24576000,,type=throttle iops=3000 bandwidth=80MB,,,,,,0.1.0\n"
                  "2026-12-01T10:00:05Z,vm,rand4k,-,run1,ok,iops-disk,io,1638400,0,0,bytes,3276800,1,2,,,0.05,,,,,"
                  "3276800,800,3276800,,type=throttle iops=400,,,,,,0.1.0\n");
    const rep_group *g = &r.model.g[0];
    long a = rep_group_axis(g, "storage");
    assert_true(a >= 0);
    assert_string_equal(g->axes[a].vals[0], "iops-disk");
    assert_string_equal(g->axes[a].vals[1], "paced-disk");
    char *text = render_report(&r, out_text_plain);
    print_message("%s", text);
    assert_non_null(strstr(text, "storage = paced-disk: 12.29 MB/s, 100.0% of the best (it is the best); no smaller "
                                 "value reaches the target"));
    assert_null(strstr(text, "it is the smallest value measured"));
    free(text);
    report_free(&r);
}

static void test_stream_memory_bound(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,mem,-,run1,ok,,stream,25872472769,0,0,bytes,25920798720,1,1.0,,0,0.48,"
                  ",,,,,,,,type=posix advice=normal,0.05,0,29857053876,16777216,1,0.1.0\n");
    const rep_cell *c = only_cell(&r);
    assert_int_equal(c->bn, REP_BN_MEMORY);
    assert_string_equal(rep_bn_name(c->bn), "memory-bound");
    assert_non_null(strstr(c->evidence, "memory bandwidth: triad 29.86 GB/s, arrays of 16MiB, 1 thread; CPUs 48% busy"));
    report_free(&r);
}

/* stream's threads as results now write it: a tag column (a metric named
 * like its option is a tag, swept or not), before throughput in a CSV. */
static void test_stream_threads_tag(void **state)
{
    (void)state;
    rep_report r;
    report_with(&r,
                "time,host,job,mode,run_id,status,threads,workload,throughput,throughput_ci95,throughput_stddev,"
                "unit,items,repeats,wall_s,cpu_user_share,triad_bytes_per_s,array_bytes,version\n",
                "2026-12-01T10:00:01Z,vm,mem,-,run1,ok,4,stream,1e9,0,0,bytes,1e9,1,1.0,0.5,20e9,268435456,0.1.0\n");
    const rep_cell *c = only_cell(&r);
    assert_int_equal(c->bn, REP_BN_MEMORY);
    assert_non_null(strstr(c->evidence, "arrays of 256MiB, 4 threads;"));
    report_free(&r);
}

/* STREAM cells with the last-level cache their threads had (llc_bytes, 32
 * MiB): triad's 3 arrays of 4 MiB, or copy's 2 of 12 MiB, fit in it and
 * measured the cache (cache-bound, though the rate reads like memory's);
 * 3 of 16 MiB do not fit but break STREAM's rule (arrays >= 4x the cache):
 * memory-bound, inflated by cache hits; 256 MiB arrays measured memory. */
#define STREAM_HEAD                                                                                          \
    "time,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,items,repeats," \
    "wall_s,cpu_user_share,copy_bytes_per_s,triad_bytes_per_s,array_bytes,threads,llc_bytes,version\n"
/* A 2-thread STREAM row on a host with 32 MiB of last-level cache. */
#define STREAM_ROW(job, copy, triad, array)                                                                \
    "2026-12-01T10:00:01Z,vm," job ",-,run1,ok,stream,1e9,0,0,bytes,1e9,1,1.0,0.5," copy "," triad "," array \
    ",2,33554432,0.1.0\n"

static void test_stream_cache_bound(void **state)
{
    (void)state;
    rep_report r;
    report_with(&r, STREAM_HEAD,
                STREAM_ROW("fits", "", "90e9", "4194304") STREAM_ROW("copy", "80e9", "", "12582912")
                    STREAM_ROW("rule", "", "40e9", "16777216") STREAM_ROW("dram", "", "20e9", "268435456"));
    assert_int_equal(r.model.n, 4);
    const rep_cell *fits = &r.model.g[0].cells[0], *copy = &r.model.g[1].cells[0];
    const rep_cell *rule = &r.model.g[2].cells[0], *dram = &r.model.g[3].cells[0];
    for (size_t i = 0; i < 4; i++)
        print_message("%s: %s\n", rep_bn_name(r.model.g[i].cells[0].bn), r.model.g[i].cells[0].evidence);
    assert_string_equal(rep_bn_name(fits->bn), "cache-bound");
    assert_string_equal(fits->evidence, "cache bandwidth: triad 90 GB/s, arrays of 4MiB, 2 threads; the 3 arrays a "
                                        "pass touches (12MiB) fit in the 32MiB last-level cache: the rate is the "
                                        "cache's, not memory's; CPUs 50% busy");
    assert_string_equal(rep_bn_name(copy->bn), "cache-bound");
    assert_non_null(strstr(copy->evidence, "the 2 arrays a pass touches (24MiB) fit in the 32MiB"));
    assert_int_equal(rule->bn, REP_BN_MEMORY);
    assert_non_null(strstr(rule->evidence, "memory bandwidth: triad 40 GB/s, arrays of 16MiB, 2 threads; arrays "
                                           "under 4x the 32MiB last-level cache (STREAM's rule): part of the "
                                           "traffic hits the cache, overstating memory bandwidth"));
    assert_int_equal(dram->bn, REP_BN_MEMORY);
    assert_null(strstr(dram->evidence, "cache"));
    char *doc = render_report(&r, rep_out_markdown);
    assert_non_null(strstr(doc, "**cache-bound**"));
    free(doc);
    report_free(&r);
}

/* Runnable but descheduled: the cell measured the other work on the host.
 * CPU-contended by cpu_wait_share (a cell that read "waiting" before, and
 * a STREAM cell), or by steal alone; below both thresholds, or with the
 * accelerator fed, not. */
static void test_cpu_contended(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,a,-,run1,ok,,sleep,90,0,0,items,270,1,3,,,0.10,,,,,,,,,,0.75,0.02,,,,0.1.0\n"
                  "2026-12-01T10:00:02Z,vm,b,-,run1,ok,,stream,14080656176,0,0,bytes,14143193088,1,1.0,,0,0.38,"
                  ",,,,,,,,,0.60,0.02,57948383531,16777216,2,0.1.0\n"
                  "2026-12-01T10:00:03Z,vm,c,-,run1,ok,,resnet,50,0,0,images,150,1,3,,,0.25,,,,,,,,,,0.05,0.15,,,,0.1.0\n"
                  "2026-12-01T10:00:04Z,vm,d,-,run1,ok,,resnet2,50,0,0,images,150,1,3,,,0.95,,,,,,,,,,0.19,0.09,,,,"
                  "0.1.0\n"
                  "2026-12-01T10:00:05Z,vm,e,-,run1,ok,,io-pipeline,800,0,0,images,2400,1,3,1.00,0,0.01,,,,,,,,,,0.22,0,"
                  ",,,0.1.0\n"
                  "2026-12-01T10:00:06Z,vm,f,-,run1,ok,,gemm,50,0,0,items,150,1,3,,,0.97,,,,,,,,,,0.45,0,,,,0.1.0\n"
                  "2026-12-01T10:00:07Z,vm,g,-,run1,ok,,preprocess,3294,0,0,images,300,1,3,,0.69,0.27,,,,,,,,,,0.27,0,,,,"
                  "0.1.0\n"
                  "2026-12-01T10:00:08Z,vm,h,-,run1,ok,,prep2,18210,0,0,images,300,1,3,,0.12,0.79,,,,,,,,,,0.30,0,,,,"
                  "0.1.0\n");
    assert_int_equal(r.model.n, 8);
    const rep_cell *sleep = &r.model.g[0].cells[0], *stream = &r.model.g[1].cells[0];
    const rep_cell *steal = &r.model.g[2].cells[0], *calm = &r.model.g[3].cells[0];
    assert_int_equal(sleep->bn, REP_BN_CONTENDED);
    assert_string_equal(rep_bn_name(sleep->bn), "CPU-contended");
    assert_non_null(strstr(sleep->evidence, "runnable but queued for a CPU 75% of its runnable time (0.30 of its "
                                            "CPUs' time); steal 2%; CPUs 10% busy"));
    assert_int_equal(stream->bn, REP_BN_CONTENDED);
    assert_non_null(strstr(stream->evidence, "queued for a CPU 60% of its runnable time (0.57 of its CPUs' time)"));
    assert_int_equal(steal->bn, REP_BN_CONTENDED);
    assert_non_null(strstr(steal->evidence, "steal 15%"));
    assert_int_equal(calm->bn, REP_BN_COMPUTE);
    /* report_cli's fed io-pipeline cell: 1% busy, a fifth of that queued,
     * AU 1.00: the accelerator bounds it, contention did not */
    assert_int_equal(r.model.g[4].cells[0].bn, REP_BN_COMPUTE);
    /* its CPUs 97% busy: more threads than CPUs of its own, not the host */
    assert_int_equal(r.model.g[5].cells[0].bn, REP_BN_COMPUTE);
    /* the quick start's preprocess on an idle VM: 27% of a short runnable
     * time queued on wake-up is 0.10 of its CPUs' time, no contention */
    assert_int_not_equal(r.model.g[6].cells[0].bn, REP_BN_CONTENDED);
    /* the quick start's preprocess with a warm cache on the idle VM: its
     * threads queued 0.34 of its CPU time, less than they ran (CPUs 79% busy) */
    assert_int_not_equal(r.model.g[7].cells[0].bn, REP_BN_CONTENDED);
    reco_from_text(&r, "[instance box]\ngpus = 0\ngpu = none\nvcpus = 8\nmemory = 32GiB\nprice_per_hour = 1\n");
    char line[2048];
    rep_reco_contended_note(&r, line, sizeof line);
    print_message("%s\n", line);
    assert_non_null(strstr(line, "note: CPU-contended cells (runnable but waiting for a CPU, or its time stolen by "
                                 "the hypervisor) in sleep (1 of 1 cells, the best among them), stream (1 of 1 "
                                 "cells, the best among them), resnet (1 of 1 cells, the best among them): their "
                                 "figures understate what an instance would do"));
    assert_null(strstr(line, "resnet2"));
    rep_out_fn *outs[] = {out_text_plain, rep_out_markdown, rep_out_html};
    for (size_t i = 0; i < 3; i++) {
        char *doc = render_report(&r, outs[i]);
        assert_non_null(strstr(doc, "their figures understate what an instance would do"));
        free(doc);
    }
    report_free(&r);
}

/* Steal slows a cell that wants its CPUs: a sleep cell 1% busy with 17%
 * steal is waiting (its evidence names the steal), not CPU-contended (it
 * was); from 20% busy (REP_STEAL_BUSY) steal counts, and where
 * cpu_user_share is absent it counts as before. */
static void test_steal_needs_busy_cpus(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, "2026-12-01T10:00:01Z,vm,a,-,run1,ok,,sleep,90,0,0,items,270,1,3,,,0.01,,,,,,,,,,0.05,0.17,,,,0.1.0\n"
                  "2026-12-01T10:00:02Z,vm,b,-,run1,ok,,gemm,90,0,0,items,270,1,3,,,0.20,,,,,,,,,,0.05,0.17,,,,0.1.0\n"
                  "2026-12-01T10:00:03Z,vm,c,-,run1,ok,,old,90,0,0,items,270,1,3,,,,,,,,,,,,,0.05,0.17,,,,0.1.0\n");
    assert_int_equal(r.model.n, 3);
    const rep_cell *idle = &r.model.g[0].cells[0];
    assert_int_equal(idle->bn, REP_BN_WAITING);
    assert_string_equal(idle->evidence, "CPUs 1% busy, no accelerator; steal 17%, which holds back no cell that "
                                        "leaves its CPUs idle");
    assert_int_equal(r.model.g[1].cells[0].bn, REP_BN_CONTENDED);
    assert_non_null(strstr(r.model.g[1].cells[0].evidence, "steal 17%; CPUs 20% busy"));
    assert_int_equal(r.model.g[2].cells[0].bn, REP_BN_CONTENDED);
    report_free(&r);
}

/* Results that measured other processes on the cell's CPUs
 * (cpu_other_share): the verdict rests on that figure and names it. */
#define HEAD_OTHER                                                                                                  \
    "time,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,items,repeats,"   \
    "wall_s,au,cpu_user_share,"                                                                                     \
    "cpu_wait_share,cpu_steal_share,cpu_other_share,cpus_used,cpu_list,version\n"

static void test_cpu_other_measured(void **state)
{
    (void)state;
    rep_report r;
    report_with(&r, HEAD_OTHER,
                /* 3 busy processes on its one CPU */
                "2026-12-01T10:00:01Z,box,a,-,run1,ok,hogged,90,0,0,items,270,1,3,,0.25,0.75,0,0.75,1,3,0.1.0\n"
                /* 8 threads on 2 CPUs, the host idle: queued as long as
                 * hogged, by its own threads, which the inference alone
                 * (w >= 0.5) called contended */
                "2026-12-01T10:00:02Z,box,b,-,run1,ok,crowded,90,0,0,items,270,1,3,,0.60,0.75,0,0.02,2,0-1,0.1.0\n"
                /* others on 40% of 8 CPUs, the cell's one thread not queued */
                "2026-12-01T10:00:03Z,box,c,-,run1,ok,roomy,90,0,0,items,270,1,3,,0.10,0.05,0,0.40,8,0-7,0.1.0\n"
                /* others on 30% of 4 CPUs, queued less than it ran: the
                 * inference missed it */
                "2026-12-01T10:00:04Z,box,d,-,run1,ok,shared,90,0,0,items,270,1,3,,0.50,0.40,0,0.30,4,0-3,0.1.0\n"
                /* no cpu_list: cpus_used's count */
                "2026-12-01T10:00:05Z,box,e,-,run1,ok,unlisted,90,0,0,items,270,1,3,,0.30,0.70,0,0.55,2,,0.1.0\n"
                /* the others measured, the run delay unknown: not judged */
                "2026-12-01T10:00:06Z,box,f,-,run1,ok,nowait,90,0,0,items,270,1,3,,0.30,,0,0.60,2,0-1,0.1.0\n");
    assert_int_equal(r.model.n, 6);
    const rep_cell *c[6];
    for (size_t i = 0; i < 6; i++) {
        c[i] = &r.model.g[i].cells[0];
        print_message("%s: %s: %s\n", r.model.g[i].workload, rep_bn_name(c[i]->bn), c[i]->evidence);
    }
    assert_int_equal(c[0]->bn, REP_BN_CONTENDED);
    assert_string_equal(c[0]->evidence, "other processes used 75% of the cell's 1 CPU; runnable but queued for a CPU "
                                        "75% of its runnable time (0.75 of its CPUs' time); steal 0%; CPUs 25% busy");
    assert_int_not_equal(c[1]->bn, REP_BN_CONTENDED);
    assert_non_null(strstr(c[1]->evidence, "queued for a CPU 75% of its runnable time behind its own threads or "
                                           "CPU quota (other processes used 2% of the cell's 2 CPUs)"));
    assert_int_not_equal(c[2]->bn, REP_BN_CONTENDED);
    assert_null(strstr(c[2]->evidence, "other processes"));
    assert_int_equal(c[3]->bn, REP_BN_CONTENDED);
    assert_non_null(strstr(c[3]->evidence, "other processes used 30% of the cell's 4 CPUs; "));
    assert_int_equal(c[4]->bn, REP_BN_CONTENDED);
    assert_non_null(strstr(c[4]->evidence, "other processes used 55% of the cell's 2 CPUs; "));
    assert_int_not_equal(c[5]->bn, REP_BN_CONTENDED);
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_starved_accelerator),   cmocka_unit_test(test_fed_accelerator),
        cmocka_unit_test(test_storage_below_profile), cmocka_unit_test(test_storage_latency_bound),
        cmocka_unit_test(test_storage_above_profile),
        cmocka_unit_test(test_storage_above_bucket),
        cmocka_unit_test(test_storage_disk_share),
        cmocka_unit_test(test_storage_latency_short_of_limit),
        cmocka_unit_test(test_storage_at_profile_pace),
        cmocka_unit_test(test_stream_memory_bound),   cmocka_unit_test(test_stream_cache_bound),
        cmocka_unit_test(test_stream_threads_tag),
        cmocka_unit_test(test_cpu_contended),
        cmocka_unit_test(test_storage_ordered_by_read_size),
        cmocka_unit_test(test_steal_needs_busy_cpus),         cmocka_unit_test(test_cpu_other_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
