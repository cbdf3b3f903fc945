/* Volumes sized to the work: where a catalog prices a disk by the GiB
 * ([disk NAME] price_per_gib_month, size_min, size_max), the report makes
 * the volume as large as the data the cells read (storage_files_bytes)
 * and, for a disk whose rates grow with its size, as large as the knee's
 * rate needs, and prices that volume; a disk that cannot hold the data
 * (a fixed volume's capacity, a sized one's size_max) is no option. */
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

#include "model_csv.h"
#include "reco_helpers.h"
#include "report.h"
#include "temp_file.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* An io-pipeline that fed a GPU over three throttled disks: slow 100/s
 * at 40 MB/s, mid 395/s, fast 400/s (knee: mid; mid and fast: a
 * throttle's keys), each cell having read data_gib GiB of files (0: no
 * such field). */
static void disks_model(rep_report *r, const char *mid, const char *fast, double data_gib)
{
    char csv[2048], files[32] = "";
    if (data_gib > 0)
        snprintf(files, sizeof files, "%.0f", data_gib * GIB);
    const char *row = "2026-12-01T10:00:0%dZ,lab,io,-,run1,ok,%s,io-pipeline,%d,0,0,images,%d,1,1,0.95,"
                      "type=throttle %s,%s,0.1.0\n";
    size_t n = (size_t)snprintf(csv, sizeof csv, "time,host,job,mode,run_id,status,storage,workload,throughput,"
                                                 "throughput_ci95,throughput_stddev,unit,items,repeats,wall_s,au,"
                                                 "storage_config,storage_files_bytes,version\n");
    n += (size_t)snprintf(csv + n, sizeof csv - n, row, 1, "slow", 100, 100, "bandwidth=40MB", files);
    n += (size_t)snprintf(csv + n, sizeof csv - n, row, 2, "mid", 395, 395, mid, files);
    snprintf(csv + n, sizeof csv - n, row, 3, "fast", 400, 400, fast, files);
    report_from_csv(r, csv);
    long a = rep_group_axis(&r->model.g[0], "storage");
    assert_true(a >= 0);
    assert_string_equal(r->model.g[0].axes[a].vals[r->model.g[0].knees[a].val], "mid");
}

static void add_profile(rep_report *r, const char *name, const char *text)
{
    char path[32], err[512];
    temp_file(path, text);
    int rc = rep_disks_load(&r->disks, path, name, err, sizeof err);
    unlink(path);
    if (rc != 0)
        fail_msg("%s", err);
}

/* gp: 1 GB/s at any size (gp3's kind); st: 40 MiB/s per TiB in 1-MiB
 * I/Os, st1's formula (80 MiB/s at its profile's 2 TiB). */
#define GP "capacity = 500GiB\nbandwidth = 1GB\n"
#define ST "capacity = 2TiB\niops_per_gib = 0.0390625\niops_unit = 1MiB\nbandwidth = 500MiB\n"
#define GP_PRICE "[disk gp]\nprice_per_gib_month = 0.073\nsize_min = 1GiB\nsize_max = 16TiB\n"
#define ST_PRICE "[disk st]\nprice_per_gib_month = 0.0365\nsize_min = 125GiB\nsize_max = 16TiB\n"
#define INSTANCE(disks) "[instance a]\nvcpus = 8\nmemory = 32GiB\ndisks = " disks "\nprice_per_hour = 1.0\n"

/* The recommendation of disks_model's rows (mid at 100 MB/s, fast at 1
 * GB/s) over the catalog, the profiles given as name, text pairs (NULL
 * ends them). */
static void volumes(rep_report *r, double data_gib, const char *catalog, ...)
{
    disks_model(r, "bandwidth=100MB", "bandwidth=1GB", data_gib);
    va_list ap;
    va_start(ap, catalog);
    for (const char *name; (name = va_arg(ap, const char *));)
        add_profile(r, name, va_arg(ap, const char *));
    va_end(ap);
    reco_from_text(r, catalog);
}

/* A rate that does not depend on the size: the volume holds the data,
 * 20 GiB at 0.073 a GiB-month = 0.002 an hour; without the field, the
 * smallest the provider makes, and a note says why. */
static void test_sized_to_the_data(void **state)
{
    (void)state;
    rep_report r;
    volumes(&r, 20, GP_PRICE INSTANCE("gp"), "gp", GP, NULL);
    const rep_choice *a = choice(&r.reco, "a");
    assert_true(a->meets);
    assert_string_equal(a->disk, "gp");
    assert_near(a->disk_bytes, 20 * GIB, 0);
    assert_near(a->disk_hour, 0.073 * 20 / 730, 1e-12);
    char line[1024];
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "recommended: a (Test, 1.002 USD/h with disk gp of 20GiB (0.002 of it))"));
    report_free(&r);

    char note[512];
    rep_reco_caps_note(&r.reco, note, sizeof note); /* a's cap is unknown, its data known */
    assert_null(strstr(note, "volumes are sized"));
    report_free(&r);

    volumes(&r, 0, GP_PRICE INSTANCE("gp"), "gp", GP, NULL);
    assert_near(choice(&r.reco, "a")->disk_bytes, 1 * GIB, 0);
    rep_reco_caps_note(&r.reco, note, sizeof note); /* and the report says so */
    assert_non_null(strstr(note, "volumes are sized without the data the work read"));
    report_free(&r);
}

/* A rate that grows with the size: st must be 2442 GiB to sustain the
 * knee's 100 MB/s (2441 GiB: 99.98 MB/s), more than the data needs; a
 * larger data set makes it larger still. */
static void test_sized_to_the_rate(void **state)
{
    (void)state;
    rep_report r;
    volumes(&r, 10, ST_PRICE INSTANCE("st"), "st", ST, NULL);
    const rep_choice *a = choice(&r.reco, "a");
    assert_true(a->meets);
    assert_near(a->disk_bytes, 2442 * GIB, 0);
    assert_near(a->disk_hour, 0.0365 * 2442 / 730, 1e-12);
    assert_near(a->fits[0].thr, 395, 1e-9);
    report_free(&r);

    volumes(&r, 3000, ST_PRICE INSTANCE("st"), "st", ST, NULL);
    assert_near(choice(&r.reco, "a")->disk_bytes, 3000 * GIB, 0);
    report_free(&r);
}

/* A larger volume that reaches a faster cell: fast reads at 200 MB/s,
 * which st sustains from 4883 GiB (the knee, mid's 100 MB/s, from 2442).
 * On an instance of 1.00 an hour the knee's volume costs less per image,
 * (1 + 0.122) / 395 < (1 + 0.244) / 400; on one of 30.00 the larger one
 * does, (30 + 0.122) / 395 > (30 + 0.244) / 400, and is credited fast's
 * 400 images/s. */
static void test_larger_volume(void **state)
{
    (void)state;
    rep_report r;
    disks_model(&r, "bandwidth=100MB", "bandwidth=200MB", 10);
    add_profile(&r, "st", ST);
    reco_from_text(&r, ST_PRICE INSTANCE("st") "[instance b]\nvcpus = 8\nmemory = 32GiB\ndisks = st\n"
                                               "price_per_hour = 30.0\n");
    const rep_choice *a = choice(&r.reco, "a"), *b = choice(&r.reco, "b");
    assert_true(a->meets && b->meets);
    assert_near(a->disk_bytes, 2442 * GIB, 0);
    assert_near(a->fits[0].thr, 395, 1e-9);
    assert_near(b->disk_bytes, 4883 * GIB, 0);
    assert_near(b->fits[0].thr, 400, 1e-9);
    assert_near(b->disk_hour, 0.0365 * 4883 / 730, 1e-12);
    assert_near(b->fits[0].cost, (30 + 0.0365 * 4883 / 730) / (400 * 3600.0) * 1e6, 1e-9);
    report_free(&r);
}

/* The cheaper volume wins: 100 GiB of data, gp at 100 GiB (7.30 a month)
 * before st at 2442 GiB (89.13); 3000 GiB of data, st (109.50) before gp
 * (219.00). */
static void test_cheaper_volume(void **state)
{
    (void)state;
    rep_report r;
    volumes(&r, 100, GP_PRICE ST_PRICE INSTANCE("st, gp"), "gp", GP, "st", ST, NULL);
    assert_string_equal(choice(&r.reco, "a")->disk, "gp");
    assert_near(choice(&r.reco, "a")->disk_bytes, 100 * GIB, 0);
    report_free(&r);

    volumes(&r, 3000, GP_PRICE ST_PRICE INSTANCE("gp, st"), "gp", GP, "st", ST, NULL);
    assert_string_equal(choice(&r.reco, "a")->disk, "st");
    assert_near(choice(&r.reco, "a")->disk_hour, 0.0365 * 3000 / 730, 1e-12);
    report_free(&r);
}

/* A disk that cannot hold the data is no option: 200 GiB do not fit the
 * 100 GiB instance store of b (its profile's capacity) nor the 150 GiB
 * of c (local_disk_size), so a's network disk wins though b and c are
 * cheaper; d's 250 GB (232.8 GiB) hold them, and d wins; a network
 * disk priced as its profile's 100 GiB cannot hold them either, one not
 * priced can (a larger one may be made); 20 TiB fit no volume of gp (16
 * TiB at most), and the instance says why. */
#define NV "capacity = 100GiB\nbandwidth = 2GB\n"
#define LOCAL(name, price, size) \
    "[instance " name "]\nvcpus = 8\nmemory = 32GiB\nlocal_disks = nv\nprice_per_hour = " price "\n" size

static void test_data_must_fit(void **state)
{
    (void)state;
    rep_report r;
    volumes(&r, 200, GP_PRICE INSTANCE("gp") LOCAL("b", "0.5", "") LOCAL("c", "0.6", "local_disk_size = 150GiB\n"),
            "gp", GP, "nv", NV, NULL);
    assert_int_equal(r.reco.nmeet, 1);
    assert_string_equal(r.reco.v[0].inst->name, "a");
    assert_false(choice(&r.reco, "c")->meets);
    report_free(&r);

    volumes(&r, 200, GP_PRICE INSTANCE("gp") LOCAL("b", "0.5", "") LOCAL("d", "0.7", "local_disk_size = 250GB\n"),
            "gp", GP, "nv", NV, NULL);
    assert_int_equal(r.reco.nmeet, 2);
    assert_string_equal(r.reco.v[0].inst->name, "d");
    assert_string_equal(r.reco.v[0].disk, "nv");
    const rep_choice *b = choice(&r.reco, "b");
    assert_false(b->meets);
    assert_string_equal(b->fits[0].why, "none of its disks holds the 200 GiB of files the work read "
                                        "(storage_files_bytes)");
    report_free(&r);

    /* a network disk priced as its profile's 100 GiB volume cannot hold
     * 200 GiB; one the catalog does not price may be made larger */
    volumes(&r, 200,
            "[disk fixed]\nprice_per_month = 10\n"
            "[instance e]\nvcpus = 8\nmemory = 32GiB\ndisks = fixed\nprice_per_hour = 1\n"
            "[instance f]\nvcpus = 8\nmemory = 32GiB\ndisks = open\nprice_per_hour = 2\n",
            "fixed", NV, "open", NV, NULL);
    assert_false(choice(&r.reco, "e")->meets);
    assert_true(choice(&r.reco, "f")->meets);
    assert_string_equal(choice(&r.reco, "f")->disk, "open");
    report_free(&r);

    volumes(&r, 20480, GP_PRICE INSTANCE("gp"), "gp", GP, NULL);
    assert_int_equal(r.reco.nmeet, 0);
    assert_string_equal(choice(&r.reco, "a")->fits[0].why, "none of its disks holds the 20480 GiB of files the work "
                                                         "read (storage_files_bytes)");
    report_free(&r);
}

/* Rates bought above the profile's (gp3's kind: 3000 IOPS and 125 MiB/s
 * included, up to 16,000 IOPS and 1000 MiB/s, at most 500 IOPS a GiB and
 * 0.25 MiB/s an IOPS): a knee at 300 MB/s (286.1 MiB/s) buys 287 MiB/s,
 * 162 MiB/s above the 125 (6.48 a month at 0.04), and the 1148 IOPS
 * those need at 0.25 MiB/s each are within the 3000 included; 20 GiB of
 * data at 0.08.  A knee at 2 GB/s is past what it can buy: no option. */
#define GPB "capacity = 500GiB\niops = 3000\nbandwidth = 125MiB\n"
#define GPB_PRICE                                                                                                  \
    "[disk gpb]\nprice_per_gib_month = 0.08\nsize_min = 1GiB\nsize_max = 16TiB\niops_max = 16000\n"              \
    "price_per_iops_month = 0.005\niops_per_gib_max = 500\nbandwidth_max = 1000MiB\nprice_per_mibps_month = 0.04\n" \
    "bandwidth_per_iops_max = 0.25MiB\n"

/* 20 GiB read; mid's keys given, fast at 4 GB/s; the profile gpb. */
static void bought_model(rep_report *r, const char *mid)
{
    disks_model(r, mid, "bandwidth=4GB", 20);
    add_profile(r, "gpb", GPB);
}

static void test_rates_bought(void **state)
{
    (void)state;
    rep_report r;
    bought_model(&r, "bandwidth=300MB");
    reco_from_text(&r, GPB_PRICE INSTANCE("gpb"));
    const rep_choice *a = choice(&r.reco, "a");
    assert_true(a->meets);
    assert_near(a->disk_bytes, 20 * GIB, 0);
    assert_near(a->disk_bw, 287 * 1048576.0, 0);
    assert_near(a->disk_iops, 0, 0); /* the 3000 included carry 750 MiB/s */
    assert_near(a->disk_hour, (20 * 0.08 + 162 * 0.04) / 730, 1e-12);
    char line[1024];
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "with disk gpb of 20GiB with 287MiB/s ("));
    report_free(&r);

    /* 4000 IOPS at 4 KiB: a knee of 16 MB/s that IOPS bind (iops = 12000) */
    bought_model(&r, "bandwidth=40MB iops=12000");
    reco_from_text(&r, GPB_PRICE INSTANCE("gpb"));
    a = choice(&r.reco, "a");
    assert_true(a->meets);
    assert_near(a->disk_iops, 12000, 0);
    assert_near(a->disk_bw, 0, 0);
    assert_near(a->disk_bytes, 24 * GIB, 0); /* 12000 IOPS need 24 GiB at 500 a GiB */
    assert_near(a->disk_hour, (24 * 0.08 + 9000 * 0.005) / 730, 1e-12);
    report_free(&r);

    bought_model(&r, "bandwidth=2GB");
    reco_from_text(&r, GPB_PRICE INSTANCE("gpb"));
    assert_false(choice(&r.reco, "a")->meets);
    report_free(&r);
}

/* IOPS bought down (io2's kind: its month prices the profile's 32,000
 * IOPS at 0.065 each, iops_min 100): a knee of 100 MB/s needs 382 IOPS of
 * 256 KiB (381 carry 99.9 MB/s), 31,618 fewer: 2080 - 2055.17 a month,
 * and 20 GiB at 0.125. */
static void test_iops_bought_down(void **state)
{
    (void)state;
    rep_report r;
    bought_model(&r, "bandwidth=100MB");
    add_profile(&r, "io", "capacity = 500GiB\niops = 32000\niops_unit = 256KiB\nbandwidth = 4000MiB\n");
    reco_from_text(&r, "[disk io]\nprice_per_gib_month = 0.125\nprice_per_month = 2080\nsize_min = 4GiB\n"
                       "size_max = 64TiB\niops_min = 100\niops_max = 32000\nprice_per_iops_month = 0.065\n"
                       "iops_per_gib_max = 1000\n" INSTANCE("io"));
    const rep_choice *a = choice(&r.reco, "a");
    assert_true(a->meets);
    assert_near(a->disk_iops, 382, 0);
    assert_near(a->disk_bw, 0, 0);
    assert_near(a->disk_bytes, 20 * GIB, 0);
    assert_near(a->disk_hour, (2080 - 0.065 * (32000 - 382) + 0.125 * 20) / 730, 1e-9);
    char line[1024];
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "with disk io of 20GiB with 382 IOPS ("));
    report_free(&r);
}

/* IOPS bought above the profile's in cheaper tiers (io2's: 0.065 to
 * 32,000, 0.0455 to 64,000, 0.03185 above): a knee at 50,000 IOPS buys
 * 18,000 above the profile's 32,000 at 0.0455 (819 a month, not the
 * 1170 of the first tier's price), in 50 GiB at 1,000 a GiB; one at
 * 100,000 buys 32,000 at 0.0455 and 36,000 at 0.03185. */
#define IO2_PRICE                                                                                              \
    "[disk io]\nprice_per_gib_month = 0.125\nprice_per_month = 2080\nsize_min = 4GiB\nsize_max = 64TiB\n"    \
    "iops_min = 100\niops_max = 256000\nprice_per_iops_month = 0.065\n"                                        \
    "price_per_iops_month_above = 32000:0.0455, 64000:0.03185\niops_per_gib_max = 1000\n"

/* disks_model with mid's keys given and fast at 400,000 IOPS, recommended
 * over IO2_PRICE with the profile io (io2's 32,000 IOPS). */
static void iops_model(rep_report *r, const char *mid)
{
    disks_model(r, mid, "iops=400000 iops_unit=16KiB", 20);
    add_profile(r, "io", "capacity = 500GiB\niops = 32000\nbandwidth = 4000MiB\n");
    reco_from_text(r, IO2_PRICE INSTANCE("io"));
}

static void test_iops_tiers(void **state)
{
    (void)state;
    rep_report r;
    iops_model(&r, "iops=50000 iops_unit=16KiB");
    const rep_choice *a = choice(&r.reco, "a");
    assert_true(a->meets);
    assert_near(a->disk_iops, 50000, 0);
    assert_near(a->disk_bytes, 50 * GIB, 0);
    assert_near(a->disk_hour, (2080 + 18000 * 0.0455 + 50 * 0.125) / 730, 1e-9);
    report_free(&r);

    iops_model(&r, "iops=100000 iops_unit=16KiB");
    a = choice(&r.reco, "a");
    assert_true(a->meets);
    assert_near(a->disk_iops, 100000, 0);
    assert_near(a->disk_hour, (2080 + 32000 * 0.0455 + 36000 * 0.03185 + 100 * 0.125) / 730, 1e-9);
    report_free(&r);
}

/* The tiers as the catalog reads them: FROM:PRICE pairs, FROM rising;
 * anything else names the disk's key and why. */
static void test_iops_tiers_catalog(void **state)
{
    (void)state;
    static const struct {
        const char *tiers, *why;
    } bad[] = {
        {"32000", "price_per_iops_month_above = '32000': FROM:PRICE pairs, FROM increasing"},
        {"64000:0.03, 32000:0.04", "price_per_iops_month_above = '64000:0.03, 32000:0.04': FROM:PRICE pairs"},
        {"32000:0", "FROM:PRICE pairs"},
        {"32000:0.04,", "FROM:PRICE pairs"},
        {"32000:0.04 64000:0.03", "FROM:PRICE pairs"},
        {"1:1, 2:1, 3:1, 4:1, 5:1", "at most 4"},
        {"32000:0.04\nprice_per_iops_month_above = 64000:0.03", "[disk io]: price_per_iops_month_above set twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[512], path[32], err[512];
        snprintf(text, sizeof text,
                 "[disk io]\nprice_per_gib_month = 0.1\nsize_min = 1GiB\nsize_max = 1TiB\niops_max = 9000\n"
                 "price_per_iops_month = 0.1\nprice_per_iops_month_above = %s\n",
                 bad[i].tiers);
        rep_catalog c = {0};
        int rc = catalog_from_text(&c, text, path, err, sizeof err);
        rep_catalog_free(&c);
        assert_int_not_equal(rc, 0);
        /* the key's line (the second's where it is given twice), after CATALOG_HEAD's 5 */
        if (!strstr(err, bad[i].why) || !strstr(err, strchr(bad[i].tiers, '\n') ? ":13:" : ":12:"))
            fail_msg("'%s': %s", bad[i].tiers, err);
    }
    char path[32], err[512];
    rep_catalog c = {0};
    int rc = catalog_from_text(&c,
                               "[disk io]\nprice_per_gib_month = 0.1\nsize_min = 1GiB\nsize_max = 1TiB\n"
                               "price_per_iops_month_above = 32000:0.04\n",
                               path, err, sizeof err);
    rep_catalog_free(&c);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, "[disk io] has price_per_iops_month_above without price_per_iops_month"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sized_to_the_data),
        cmocka_unit_test(test_sized_to_the_rate),
        cmocka_unit_test(test_larger_volume),
        cmocka_unit_test(test_cheaper_volume),
        cmocka_unit_test(test_data_must_fit),
        cmocka_unit_test(test_rates_bought),
        cmocka_unit_test(test_iops_bought_down),
        cmocka_unit_test(test_iops_tiers),
        cmocka_unit_test(test_iops_tiers_catalog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
