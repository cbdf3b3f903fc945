/* Per-instance block-storage caps (catalog keys disk_bandwidth_max,
 * disk_iops_max; local_disks are not behind them): a disk fast enough of
 * its own does not meet a storage knee on an instance that caps it below
 * the knee's profile, and the reason names the cap. */
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

/* An io-pipeline that fed a GPU over three throttled disks (profiles from
 * the rows' storage_config): slow 100/s, mid 395/s, fast 400/s: knee mid. */
static void storage_model(rep_report *r, const char *slow, const char *mid, const char *fast)
{
    char csv[2048];
    const char *row = "2026-12-01T10:00:0%d%s,lab,io,-,run1,ok,%s,io-pipeline,%d,0,0,images,%d,1,1,0.95,"
                      "type=throttle %s,0.1.0\n";
    size_t n = (size_t)snprintf(csv, sizeof csv, "time,host,job,mode,run_id,status,storage,workload,throughput,"
                                                 "throughput_ci95,throughput_stddev,unit,items,repeats,wall_s,au,"
                                                 "storage_config,version\n");
    n += (size_t)snprintf(csv + n, sizeof csv - n, row, 1, "Z", "slow", 100, 100, slow);
    n += (size_t)snprintf(csv + n, sizeof csv - n, row, 2, "Z", "mid", 395, 395, mid);
    snprintf(csv + n, sizeof csv - n, row, 3, "Z", "fast", 400, 400, fast);
    report_from_csv(r, csv);
    assert_int_equal(r->model.n, 1);
    long a = rep_group_axis(&r->model.g[0], "storage");
    assert_true(a >= 0);
    assert_string_equal(r->model.g[0].axes[a].vals[r->model.g[0].knees[a].val], "mid");
}

#define BW_DISKS "bandwidth=100MB", "bandwidth=400MB", "bandwidth=1GB"

/* small: 1 GPU at 1.0/h with the fast disk, but a 218.75 MB/s cap (a
 * p3.2xlarge's EBS figure): it cannot reach mid's 400 MB/s; big (1.5/h)
 * can.  Before, small's fast disk met the knee and small was recommended. */
static void test_bandwidth_cap_fails_knee(void **state)
{
    (void)state;
    rep_report r;
    storage_model(&r, BW_DISKS);
    reco_from_text(&r, "[instance small]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\ndisk_bandwidth_max = 218.75MB\n"
                  "price_per_hour = 1.0\n"
                  "[instance big]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\ndisk_bandwidth_max = 2375MB\n"
                  "price_per_hour = 1.5\n");
    assert_int_equal(r.reco.nmeet, 1);
    assert_string_equal(r.reco.v[0].inst->name, "big");
    assert_near(r.reco.v[0].fits[0].thr, 400, 1e-9);
    const rep_choice *small = choice(&r.reco, "small");
    assert_false(small->meets);
    assert_string_equal(small->fits[0].why, "io-pipeline needs storage like mid: the instance caps block storage at "
                                            "218.8 MB/s < mid's 400 MB/s");
    assert_near(small->fits[0].thr, 100, 1e-9); /* what it can run: the slow cell, 100 MB/s under its cap */
    char note[512];
    rep_reco_caps_note(&r.reco, note, sizeof note);
    assert_string_equal(note, ""); /* every cap is known */
    report_free(&r);
}

/* Without the keys the old answer stands (small's fast disk meets the
 * knee), and one note says that small's and big's caps are unknown (not
 * nvme's: its local copy of the disk meets the knee). */
static void test_no_cap_keeps_answer_and_notes_it(void **state)
{
    (void)state;
    rep_report r;
    storage_model(&r, BW_DISKS);
    reco_from_text(&r, "[instance small]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\nprice_per_hour = 1.0\n"
                  "[instance big]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\nprice_per_hour = 1.5\n"
                  "[instance none]\nvcpus = 8\nmemory = 32GiB\ndisks = slow\nprice_per_hour = 0.5\n"
                  "[instance nvme]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\nlocal_disks = fast\n"
                  "price_per_hour = 2.0\n");
    assert_int_equal(r.reco.nmeet, 3);
    assert_string_equal(r.reco.v[0].inst->name, "small");
    assert_near(r.reco.v[0].fits[0].thr, 400, 1e-9);
    assert_true(r.reco.v[0].fits[0].cap_unknown);
    char note[512];
    rep_reco_caps_note(&r.reco, note, sizeof note);
    /* "none" does not meet the knee: its unknown cap changes nothing; nor
     * does nvme's, whose instance-store disk meets it behind no cap */
    assert_false(choice(&r.reco, "nvme")->fits[0].cap_unknown);
    assert_string_equal(note, "note: no block-storage cap known for small, big (catalog keys disk_bandwidth_max, "
                              "disk_iops_max): their disks are judged at the disk profiles' own limits, which the "
                              "instance may not reach");
    report_free(&r);
}

/* The note in the Markdown report names catalog instances as text: an
 * instance "*small*" was printed raw there and rendered in italics. */
static void test_caps_note_markdown_is_text(void **state)
{
    (void)state;
    rep_report r;
    storage_model(&r, BW_DISKS);
    reco_from_text(&r, "[instance *small*]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\nprice_per_hour = 1.0\n");
    char *md = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&md, &len);
    assert_non_null(f);
    rep_out_markdown(f, &r);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(md, "note: no block-storage cap known for \\*small\\* (catalog keys"));
    free(md);
    report_free(&r);
}

/* The Markdown report lists where the prices come from, as the HTML
 * does: each catalog once, with its provider, region, source and date
 * (it said "see each catalog's source and date" and listed neither). */
static void test_markdown_lists_price_sources(void **state)
{
    (void)state;
    rep_report r;
    storage_model(&r, BW_DISKS);
    reco_from_text(&r, "[instance small]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\nprice_per_hour = 1.0\n"
                       "[instance big]\nvcpus = 16\nmemory = 64GiB\ndisks = fast\nprice_per_hour = 2.0\n");
    char *md = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&md, &len);
    assert_non_null(f);
    rep_out_markdown(f, &r);
    assert_int_equal(fclose(f), 0);
    char want[256];
    snprintf(want, sizeof want, "\nPrices from:\n\n- %s: Test, -, invented (retrieved 2026-12-01)\n",
             r.cat.v[0].catalog);
    assert_non_null(strstr(md, want));
    assert_null(strstr(strstr(md, want) + strlen(want), "invented")); /* once per catalog, not per instance */
    assert_null(strstr(md, "see each catalog"));
    free(md);
    report_free(&r);
}

/* The IOPS cap likewise: every disk moves 1 GB/s, mid needs 16000 IOPS;
 * small caps at 10000.  An instance-store disk (local_disks) is not behind
 * the cap: local meets with a cap far below. */
static void test_iops_cap_and_local_disks(void **state)
{
    (void)state;
    rep_report r;
    storage_model(&r, "bandwidth=1GB iops=1000", "bandwidth=1GB iops=16000", "bandwidth=1GB iops=64000");
    reco_from_text(&r, "[instance small]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\ndisk_iops_max = 10000\n"
                  "price_per_hour = 1.0\n"
                  "[instance local]\nvcpus = 8\nmemory = 32GiB\ndisks = slow\nlocal_disks = fast\n"
                  "disk_bandwidth_max = 10MB\ndisk_iops_max = 100\nprice_per_hour = 1.2\n"
                  "[instance big]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\ndisk_iops_max = 80000\n"
                  "price_per_hour = 1.5\n");
    assert_int_equal(r.reco.nmeet, 2);
    assert_string_equal(r.reco.v[0].inst->name, "local");
    assert_string_equal(r.reco.v[1].inst->name, "big");
    const rep_choice *small = choice(&r.reco, "small");
    assert_false(small->meets);
    assert_string_equal(small->fits[0].why, "io-pipeline needs storage like mid: the instance caps block storage at "
                                            "10000 IOPS < mid's 16000 IOPS");
    assert_false(choice(&r.reco, "local")->fits[0].cap_unknown);
    report_free(&r);
}

/* Throughput-credit disks (st1-like: iops in 1-MiB I/Os, bandwidth the
 * burst's 500 MiB/s) judged by what they sustain: slow 20, mid 80, fast
 * 500 MiB/s (knee mid, at 80 MiB/s).  A gp3-like disk (125 MiB/s, 3000
 * I/Os of 256 KiB) meets it; before, its 125 MiB/s fell short of mid's
 * 500 and no instance met the knee.  A cap of 50 MB/s is said against
 * mid's 80 MiB/s (83.9 MB/s). */
static void test_credit_disks_by_sustained_rate(void **state)
{
    (void)state;
    rep_report r;
    storage_model(&r, "bandwidth=500MiB iops=20 iops_unit=1MiB", "bandwidth=500MiB iops=80 iops_unit=1MiB",
                  "bandwidth=500MiB iops=500 iops_unit=1MiB");
    char path[32], err[512];
    temp_file(path, "iops = 3000\nbandwidth = 125MiB\niops_unit = 256KiB\n");
    int rc = rep_disks_load(&r.disks, path, "gp", err, sizeof err);
    unlink(path);
    if (rc != 0)
        fail_msg("%s", err);
    reco_from_text(&r, "[instance ebs]\nvcpus = 8\nmemory = 32GiB\ndisks = gp\ndisk_bandwidth_max = 1250MB\n"
                       "price_per_hour = 1.0\n"
                       "[instance capped]\nvcpus = 8\nmemory = 32GiB\ndisks = fast\ndisk_bandwidth_max = 50MB\n"
                       "price_per_hour = 0.5\n");
    assert_int_equal(r.reco.nmeet, 1);
    assert_string_equal(r.reco.v[0].inst->name, "ebs");
    assert_string_equal(choice(&r.reco, "capped")->fits[0].why,
                        "io-pipeline needs storage like mid: the instance caps block storage at 50 MB/s < mid's "
                        "83.89 MB/s");
    report_free(&r);
}

/* The disk to attach (knee mid, 400 MB/s), none priced: of a's fast, mid
 * and slow disks, mid (the least that reaches the knee; a is credited
 * what it runs with mid, 395 images/s); b's instance store (fast) before
 * its network disk mid, since its price is in the instance's; c meets no
 * knee and names none.  The headline says a's. */
static void test_disk_to_attach(void **state)
{
    (void)state;
    rep_report r;
    storage_model(&r, BW_DISKS);
    reco_from_text(&r, "[instance a]\nvcpus = 8\nmemory = 32GiB\ndisks = fast, mid, slow\nprice_per_hour = 1.0\n"
                       "disk_bandwidth_max = 2375MB\n"
                       "[instance b]\nvcpus = 8\nmemory = 32GiB\ndisks = mid\nlocal_disks = fast\n"
                       "disk_bandwidth_max = 2375MB\nprice_per_hour = 1.5\n"
                       "[instance c]\nvcpus = 8\nmemory = 32GiB\ndisks = slow\nprice_per_hour = 0.5\n");
    assert_int_equal(r.reco.nmeet, 2);
    assert_string_equal(choice(&r.reco, "a")->disk, "mid");
    assert_near(choice(&r.reco, "a")->fits[0].thr, 395, 1e-9);
    assert_string_equal(choice(&r.reco, "b")->disk, "fast");
    assert_null(choice(&r.reco, "c")->disk);
    char line[1024];
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "recommended: a (Test, 1 USD/h, disk mid (not priced in the catalog))"));
    assert_non_null(strstr(line, "runner-up: b (Test, 1.5 USD/h, disk fast)"));
    report_free(&r);
}

/* A catalog that prices disks ([disk NAME] price_per_month): the disk to
 * attach is the one with the lowest cost per item, its price an hour (the
 * month's / 730) in the cost, and the instance is credited what it runs
 * with that disk.  a: mid at 73 a month (0.1/h: 1.1/h at 395 images/s)
 * rather than fast at 730 (2/h at 400); e: fast, cheaper than mid there
 * and faster. */
static void test_priced_disks(void **state)
{
    (void)state;
    rep_report r;
    storage_model(&r, BW_DISKS);
    reco_from_text(&r, "[disk mid]\nprice_per_month = 73\nprice_verified = true\n"
                       "[disk fast]\nprice_per_month = 730\n"
                       "[instance a]\nvcpus = 8\nmemory = 32GiB\ndisks = fast, mid, slow\nprice_per_hour = 1.0\n"
                       "disk_bandwidth_max = 2375MB\nprice_verified = true\n");
    const rep_choice *a = choice(&r.reco, "a");
    assert_string_equal(a->disk, "mid");
    assert_near(a->disk_hour, 0.1, 1e-12);
    assert_true(a->disk_verified && rep_choice_price_verified(a));
    assert_near(a->fits[0].thr, 395, 1e-9);
    assert_near(a->fits[0].cost, 1.1 / (395 * 3600.0) * 1e6, 1e-9);
    char line[1024];
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "recommended: a (Test, 1.1 USD/h with disk mid (0.1 of it)), 0.7736 USD per million"));
    report_free(&r);

    storage_model(&r, BW_DISKS);
    reco_from_text(&r, "[disk mid]\nprice_per_month = 73\n[disk fast]\nprice_per_month = 36.5\n"
                       "[instance e]\nvcpus = 8\nmemory = 32GiB\ndisks = mid, fast\nprice_per_hour = 1.0\n"
                       "disk_bandwidth_max = 2375MB\nprice_verified = true\n");
    const rep_choice *e = choice(&r.reco, "e");
    assert_string_equal(e->disk, "fast");
    assert_near(e->disk_hour, 0.05, 1e-12);
    assert_near(e->fits[0].thr, 400, 1e-9);
    assert_false(rep_choice_price_verified(e)); /* the disk's price was not verified */
    report_free(&r);
}

/* The keys as a catalog reads them: sizes as disk profiles write them,
 * local_disks flagged; a key twice, a bad unit, zero: one line naming the
 * file, line and key. */
static void test_catalog_cap_keys(void **state)
{
    (void)state;
    char path[32], err[512];
    rep_catalog c = {0};
    assert_int_equal(catalog_from_text(&c,
                                  "[instance a]\nvcpus = 4\nmemory = 16GiB\ndisks = gp, io\nlocal_disks = nvme\n"
                                  "disk_bandwidth_max = 1250MB\ndisk_iops_max = 40000\nprice_per_hour = 1\n"
                                  "[instance b]\nvcpus = 4\nmemory = 16GiB\ndisks = gp\nprice_per_hour = 1\n",
                                  path, err, sizeof err),
                     0);
    assert_int_equal(c.n, 2);
    assert_near(c.v[0].disk_bw_max, 1.25e9, 0);
    assert_near(c.v[0].disk_iops_max, 40000, 0);
    assert_int_equal(c.v[0].ndisks, 3);
    assert_string_equal(c.v[0].disks[2], "nvme");
    assert_false(c.v[0].local[0]);
    assert_false(c.v[0].local[1]);
    assert_true(c.v[0].local[2]);
    assert_near(c.v[1].disk_bw_max, 0, 0); /* absent: no cap known */
    assert_near(c.v[1].disk_iops_max, 0, 0);
    rep_catalog_free(&c);

    const struct {
        const char *body, *says;
    } bad[] = {
        {"[instance a]\nvcpus = 4\ndisk_bandwidth_max = 1GB\ndisk_bandwidth_max = 2GB\n",
         ":9: [instance a]: disk_bandwidth_max set twice"},
        {"[instance a]\nvcpus = 4\ndisk_bandwidth_max = 12XB\n", ":8: disk_bandwidth_max = '12XB': "},
        {"[instance a]\nvcpus = 4\ndisk_bandwidth_max = 0\n",
         ":8: disk_bandwidth_max = '0': a positive size per second (e.g. 1250MB)"},
        {"[instance a]\nvcpus = 4\ndisk_iops_max = many\n", ":8: disk_iops_max = 'many': a positive number"},
        {"[instance a]\nvcpus = 4\ndisk_iops_max = -5\n", ":8: disk_iops_max = '-5': a positive number"},
        {"[disk gp]\nprice_per_month = -1\n", ":7: price_per_month = '-1': a positive number"},
        {"[disk gp]\nprice_per_month = 1\nprice_per_month = 2\n", ":8: [disk gp]: price_per_month set twice"},
        {"[instance a]\nvcpus = 4\nmemory = 1GiB\nprice_per_hour = 1\nlocal_disk_size = 250GB\n",
         ":6: [instance a] has local_disk_size but no local_disks"},
        {"[instance a]\nvcpus = 4\nlocal_disk_size = none\n", ":8: local_disk_size = 'none': "},
        {"[disk gp]\nsize = 1\n", ":7: unknown key 'size' (a disk takes price_per_month, price_per_gib_month, "
                                   "size_min, size_max, iops_max, iops_min, price_per_iops_month, "
                                   "price_per_iops_month_above, iops_per_gib_max, bandwidth_max, "
                                   "price_per_mibps_month, bandwidth_per_iops_max, price_verified)"},
        {"[disk io]\nprice_per_gib_month = 0.125\nsize_min = 4GiB\nsize_max = 64TiB\niops_min = 100\n",
         ":6: [disk io] has iops_min without an iops_max at least as large"},
        {"[disk gp]\nprice_per_gib_month = 0.08\nsize_min = 1GiB\nsize_max = 1TiB\niops_max = 16000\n",
         ":6: [disk gp] buys IOPS or bandwidth without both its most"},
        {"[disk gp]\nprice_per_month = 40\nbandwidth_max = 1000MiB\nprice_per_mibps_month = 0.04\n",
         ":6: [disk gp] buys IOPS or bandwidth without price_per_gib_month"},
        {"[disk gp]\nprice_verified = true\n", ":6: [disk gp] has no price_per_month or price_per_gib_month"},
        {"[disk gp]\nprice_per_gib_month = 0.08\nsize_min = 1GiB\n",
         ":6: [disk gp] prices by the GiB without size_min and size_max"},
        {"[disk gp]\nprice_per_month = 40\nsize_max = 1TiB\n", ":6: [disk gp] gives sizes without price_per_gib_month"},
        {"[disk gp]\nprice_per_gib_month = 0.08\nsize_min = 2TiB\nsize_max = 1TiB\n",
         ":6: [disk gp] has size_min above size_max"},
        {"[disk gp]\nprice_per_gib_month = 0.08\nsize_min = big\n", ":8: size_min = 'big': a positive size (e.g. 125GiB)"},
        {"[disk gp]\nprice_per_gib_month = 0.08\nprice_per_gib_month = 0.1\n",
         ":8: [disk gp]: price_per_gib_month set twice"},
        /* zero parses: the reason was the parser's, never set (stack bytes) */
        {"[instance a]\nvcpus = 4\nmemory = 0\n", ":8: memory = '0': a positive size (e.g. 16GiB)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rep_catalog b = {0};
        err[0] = '\0';
        assert_int_equal(catalog_from_text(&b, bad[i].body, path, err, sizeof err), -DLG_EINVAL);
        char want[384];
        snprintf(want, sizeof want, "%s%s", path, bad[i].says);
        if (strncmp(err, want, strlen(want)) != 0)
            fail_msg("got '%s', want '%s'", err, want);
        assert_null(strchr(err, '\n'));
        rep_catalog_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bandwidth_cap_fails_knee),
        cmocka_unit_test(test_no_cap_keeps_answer_and_notes_it),
        cmocka_unit_test(test_caps_note_markdown_is_text),
        cmocka_unit_test(test_markdown_lists_price_sources),
        cmocka_unit_test(test_iops_cap_and_local_disks),
        cmocka_unit_test(test_catalog_cap_keys),
        cmocka_unit_test(test_credit_disks_by_sustained_rate),
        cmocka_unit_test(test_disk_to_attach),
        cmocka_unit_test(test_priced_disks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
