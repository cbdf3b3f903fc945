/* A throttle's profile, named in the rows' storage_config relative to
 * where the run ran (profile=conf/disks/x.ini), found wherever the report
 * runs from: from the results file's folder up, then by file name (the
 * source tree's conf/disks, the profiles loaded by name); one never found
 * is said once per profile.  The report opened the path from its own
 * current folder: from elsewhere each such storage silently had no
 * limits, no order and no knee, and the recommendation no instance. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "rows.h"

/* A scratch tree: root/results/r.csv and root/conf/disks/. */
typedef struct tree {
    char root[64], path[4200];
} tree;

static void put(tree *t, const char *rel, const char *text)
{
    snprintf(t->path, sizeof t->path, "%s/%s", t->root, rel);
    FILE *f = fopen(t->path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void tree_make(tree *t)
{
    snprintf(t->root, sizeof t->root, "/tmp/dlg-report-profXXXXXX");
    assert_non_null(mkdtemp(t->root));
    static const char *const dirs[] = {"results", "conf", "conf/disks", "mine"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(t->path, sizeof t->path, "%s/%s", t->root, dirs[i]);
        assert_int_equal(mkdir(t->path, 0700), 0);
    }
}

static void tree_remove(tree *t)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
}

/* results/r.csv with one row per storage name, each a throttle of that
 * profile path (as written). */
static void results(tree *t, const char *const *storage, const char *const *profile, size_t n)
{
    char text[8192];
    size_t len = (size_t)snprintf(text, sizeof text,
                                  "time,job,run_id,status,storage,workload,throughput,throughput_ci95,"
                                  "throughput_stddev,unit,repeats,storage_config,version\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "2026-12-02T10:00:0%zuZ,j,r1,ok,%s,io-pipeline,%zu,1,1,images,3,"
                                "type=throttle inner=posix profile=%s,0.1.0\n",
                                i, storage[i], 100 + i, profile[i]);
    assert_true(len < sizeof text);
    put(t, "results/r.csv", text);
}

/* The disks the rows' throttles stand for, over those loaded before
 * (loaded: a folder of profiles loaded by name first, or NULL). */
static void disks_of(tree *t, rep_disks *d, const char *loaded)
{
    rep_rows rows = {0};
    char err[512] = "", csv[4200];
    snprintf(csv, sizeof csv, "%s/results/r.csv", t->root);
    memset(d, 0, sizeof *d);
    if (loaded) {
        snprintf(t->path, sizeof t->path, "%s/%s", t->root, loaded);
        assert_int_equal(rep_disks_load_dir(d, t->path, err, sizeof err), 0);
    }
    assert_int_equal(rep_read_file(&rows, csv, err, sizeof err), 0);
    assert_int_equal(rep_rows_validate(&rows, err, sizeof err), 0);
    if (rep_disks_from_rows(d, &rows, err, sizeof err) != 0)
        fail_msg("%s", err);
    rep_rows_free(&rows);
}

/* conf/disks/x.ini beside the results folder (the run ran in root): found
 * from the results' folder's parent, the test's own folder being another. */
static void test_found_beside_the_results(void **state)
{
    (void)state;
    tree t;
    tree_make(&t);
    put(&t, "conf/disks/x.ini", "bandwidth = 40MB\niops = 500\n");
    put(&t, "results/y.ini", "bandwidth = 7MB\n");
    results(&t, (const char *const[]){"slow", "near"}, (const char *const[]){"conf/disks/x.ini", "y.ini"}, 2);
    rep_disks d;
    disks_of(&t, &d, NULL);
    const rep_disk *slow = rep_disks_find(&d, "slow"), *near = rep_disks_find(&d, "near");
    assert_non_null(slow);
    assert_non_null(near);
    assert_true(slow->bandwidth == 40e6 && slow->iops == 500);
    assert_true(near->bandwidth == 7e6); /* the results' own folder first */
    assert_int_equal(d.nwarnings, 0);
    rep_disks_free(&d);
    tree_remove(&t);
}

/* A path that is nowhere (an absolute one from another machine): the
 * source tree's profile of that file name. */
static void test_shipped_by_file_name(void **state)
{
    (void)state;
    tree t;
    tree_make(&t);
    results(&t, (const char *const[]){"nvme"}, (const char *const[]){"/gone/conf/disks/local-nvme.ini"}, 1);
    rep_disks d, shipped = {0};
    disks_of(&t, &d, NULL);
    const char *src = getenv("DLG_SOURCE_DIR");
    assert_non_null(src);
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/conf/disks/local-nvme.ini", src);
    assert_int_equal(rep_disks_load(&shipped, path, NULL, err, sizeof err), 0);
    const rep_disk *nvme = rep_disks_find(&d, "nvme");
    assert_non_null(nvme);
    assert_true(nvme->bandwidth == shipped.v[0].bandwidth && nvme->iops == shipped.v[0].iops);
    assert_true(nvme->bandwidth > 0);
    rep_disks_free(&shipped);
    rep_disks_free(&d);
    tree_remove(&t);
}

/* Nowhere near the results nor shipped: a folder of profiles given
 * (--disks DIR) supplies it by file name; without one, one warning per
 * profile (two storages name it), naming the row, the storage and each
 * path tried, and the storage has no limits. */
static void test_missing_said_once(void **state)
{
    (void)state;
    tree t;
    tree_make(&t);
    put(&t, "mine/only-here.ini", "bandwidth = 9MB\n");
    results(&t, (const char *const[]){"a", "b", "c"},
            (const char *const[]){"disks/only-here.ini", "disks/only-here.ini", "disks/nowhere.ini"}, 3);
    rep_disks d;
    disks_of(&t, &d, "mine");
    assert_non_null(rep_disks_find(&d, "a"));
    assert_true(rep_disks_find(&d, "a")->bandwidth == 9e6);
    assert_int_equal(d.nwarnings, 1); /* c's */
    rep_disks_free(&d);

    disks_of(&t, &d, NULL);
    assert_null(rep_disks_find(&d, "a"));
    assert_null(rep_disks_find(&d, "c"));
    assert_int_equal(d.nwarnings, 2);
    char want[4600];
    snprintf(want, sizeof want,
             "%s/results/r.csv:2: storage a: its throttle's profile disks/only-here.ini was not found (tried "
             "%s/results/disks/only-here.ini, %s/disks/only-here.ini, ",
             t.root, t.root, t.root);
    assert_non_null(strstr(d.warnings[0], want));
    assert_non_null(strstr(d.warnings[0], "--disks DIR"));
    assert_non_null(strstr(d.warnings[1], "r.csv:4: storage c: its throttle's profile disks/nowhere.ini"));
    assert_null(strchr(d.warnings[0], '\n'));
    rep_disks_free(&d);
    tree_remove(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_beside_the_results),
        cmocka_unit_test(test_shipped_by_file_name),
        cmocka_unit_test(test_missing_said_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
