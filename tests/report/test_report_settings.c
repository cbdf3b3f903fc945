/* Rows are repeats of one cell only where they ran the same settings on
 * the same machine: a job re-run with another value of a key it did not
 * sweep (`--set t.sleep=10ms`, study.sh with another DLG_STUDY_IMAGES),
 * or on another host, is a group of its own, labelled by what differs,
 * with one warning; keys that only govern the measurement (repeat,
 * warmup, seed, ...) do not split; rows without `config` pool as before.
 * Scaling (rows of several ranks), the per-cell fields and compare
 * follow the same groups. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "model_csv.h"
#include "model_rows.h"
#include "report.h"
#include "scaling.h"

#define HEAD                                                                                                        \
    "time,host,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,items,repeats,wall_s," \
    "latency_p50_us,ranks,version,config\n"
/* what `dlgauge run s.ini` writes for [job t] workload = sleep */
#define SLEEP_CFG(sleep, extra)                                                                                   \
    "workload=sleep storage=posix cpus=0 warmup=2 iterations=20 duration=5s min_steps=5 repeat=1 seed=1 "      \
    "cpu_quota=0 timeout=0 isolation=process sleep=" sleep " jitter=0" extra
#define SLEEP_ROW(host, run, thr, p50, ranks, cfg)                                                                 \
    "2026-12-02T14:43:56Z," host ",t," run ",ok,sleep," thr ",0,0,steps,20,1,0.02," p50 "," ranks ",0.1.0," cfg "\n"

static const rep_group *group_split(const rep_model *m, const char *split)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->g[i].split && strcmp(m->g[i].split, split) == 0)
            return &m->g[i];
    fail_msg("no group split as '%s'", split);
    return NULL;
}

static void free_model(rep_rows *rows, rep_model *m)
{
    rep_model_free(m);
    rep_rows_free(rows);
}

/* `dlgauge run s.ini` then `dlgauge run s.ini --set t.sleep=10ms` into
 * one CSV: two groups, not the mean of 920 and 97 steps/s with n = 2.  A
 * third run differing only in how it was measured (repeat, warm-up,
 * seed, duration, timeout, isolation, min_steps; keys in another order)
 * pools with the first. */
static void test_unswept_setting_splits(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv(HEAD SLEEP_ROW("vm", "r1", "919.76", "1085", "1", SLEEP_CFG("1ms", ""))
                       SLEEP_ROW("vm", "r2", "97.30", "10125", "1", SLEEP_CFG("10ms", ""))
                       SLEEP_ROW("vm", "r3", "900.24", "1090", "1",
                                 "jitter=0 sleep=1ms isolation=none timeout=1m seed=7 repeat=3 min_steps=9 "
                                 "duration=10s iterations=20 warmup=5 cpu_quota=0 cpus=0 storage=posix "
                                 "workload=sleep"),
                   &rows, &m);
    assert_int_equal(m.n, 2);
    const rep_group *a = group_split(&m, "sleep=1ms"), *b = group_split(&m, "sleep=10ms");
    assert_int_equal(a->ncells, 1);
    assert_int_equal(a->cells[0].nrows, 2); /* r1 and r3: repeats of one cell */
    assert_float_equal(a->cells[0].thr, 910.0, 1e-9);
    assert_int_equal(b->cells[0].nrows, 1);
    assert_float_equal(b->cells[0].thr, 97.30, 1e-9);
    assert_int_equal(m.nwarnings, 1);
    assert_string_equal(m.warnings[0], "sleep (job t): its rows ran with settings not swept that differ (sleep): "
                                       "2 groups, not pooled as repeats of one cell: sleep=1ms; sleep=10ms");
    char title[256];
    rep_group_title(b, title, sizeof title);
    assert_string_equal(title, "sleep (job t), mode -, precision -, sleep=10ms");
    size_t gi = (size_t)(b - m.g);
    rep_group_tag(&m, gi, title, sizeof title);
    assert_string_equal(title, "sleep [sleep=10ms]");
    /* a field pooled per cell (compare's latencies) follows the same groups */
    double **p50 = NULL;
    assert_int_equal(rep_model_cell_field(&m, &rows, "latency_p50_us", REP_POOL_MEAN, &p50), 0);
    assert_float_equal(p50[gi][0], 10125, 1e-9);
    assert_float_equal(p50[a - m.g][0], 1087.5, 1e-9);
    rep_model_cell_field_free(&m, p50);
    free_model(&rows, &m);
}

/* scripts/study.sh run twice at DLG_STUDY_IMAGES=100, then at 120: the
 * preprocess rows of iterations = 100 are two repeats, 120 is another
 * cell (it converted more images), not a third repeat with a CI. */
static void test_study_rerun_with_other_size(void **state)
{
    (void)state;
#define PRE_ROW(run, thr, it)                                                                                     \
    "2026-12-02T10:00:00Z,vm,rec," run ",ok,preprocess," thr ",0,0,images," it ",1,2,,1,0.1.0,"               \
    "workload=preprocess storage=posix cpus=0 warmup=0 iterations=" it " input=data/study/train.lst "           \
    "root=data/study output=recordio:data/study/train.rec resize=256\n"
    rep_rows rows;
    rep_model m;
    model_from_csv(HEAD PRE_ROW("r1", "50", "100") PRE_ROW("r2", "52", "100") PRE_ROW("r3", "70", "120"), &rows,
                   &m);
    assert_int_equal(m.n, 2);
    const rep_group *a = group_split(&m, "iterations=100"), *b = group_split(&m, "iterations=120");
    assert_int_equal(a->cells[0].nrows, 2);
    assert_float_equal(a->cells[0].repeats, 2, 0);
    assert_float_equal(a->cells[0].thr, 51, 1e-9);
    assert_float_equal(b->cells[0].repeats, 1, 0);
    assert_float_equal(b->cells[0].thr, 70, 1e-9);
    assert_int_equal(m.nwarnings, 1);
    assert_non_null(strstr(m.warnings[0], "(iterations)"));
    free_model(&rows, &m);
}

/* One row's host edited: the same settings on two machines are two
 * groups, named by host.  Rows without `config` (older files, hand-made
 * ones) are pooled as before, whatever their host; mixed with rows of one
 * setting they join it, mixed with rows of several they are a group of
 * their own. */
static void test_hosts_and_rows_without_config(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv(HEAD SLEEP_ROW("a", "r1", "900", "", "1", SLEEP_CFG("1ms", ""))
                       SLEEP_ROW("b", "r2", "800", "", "1", SLEEP_CFG("1ms", "")),
                   &rows, &m);
    assert_int_equal(m.n, 2);
    assert_float_equal(group_split(&m, "host=a")->cells[0].thr, 900, 1e-9);
    assert_float_equal(group_split(&m, "host=b")->cells[0].thr, 800, 1e-9);
    assert_int_equal(m.nwarnings, 1);
    assert_non_null(strstr(m.warnings[0], "(host)"));
    free_model(&rows, &m);

    /* no config: one group, as before */
    model_from_csv(HEAD SLEEP_ROW("a", "r1", "900", "", "1", "") SLEEP_ROW("b", "r2", "800", "", "1", ""), &rows, &m);
    assert_int_equal(m.n, 1);
    assert_null(m.g[0].split);
    assert_int_equal(m.nwarnings, 0);
    assert_float_equal(m.g[0].cells[0].thr, 850, 1e-9);
    free_model(&rows, &m);

    /* without config beside one setting: pooled with it */
    model_from_csv(HEAD SLEEP_ROW("a", "r1", "900", "", "1", "")
                       SLEEP_ROW("a", "r2", "800", "", "1", SLEEP_CFG("1ms", "")),
                   &rows, &m);
    assert_int_equal(m.n, 1);
    assert_int_equal(m.g[0].cells[0].nrows, 2);
    free_model(&rows, &m);

    /* beside two: apart, and said so */
    model_from_csv(HEAD SLEEP_ROW("a", "r1", "900", "", "1", "")
                       SLEEP_ROW("a", "r2", "800", "", "1", SLEEP_CFG("1ms", ""))
                       SLEEP_ROW("a", "r3", "90", "", "1", SLEEP_CFG("10ms", "")),
                   &rows, &m);
    assert_int_equal(m.n, 3);
    assert_float_equal(group_split(&m, "settings not recorded")->cells[0].thr, 900, 1e-9);
    assert_float_equal(group_split(&m, "sleep=1ms")->cells[0].thr, 800, 1e-9);
    assert_float_equal(group_split(&m, "sleep=10ms")->cells[0].thr, 90, 1e-9);
    free_model(&rows, &m);
}

/* A swept key is an axis, not a split: sleep = 1ms, 10ms swept twice
 * with jitter = 0 and once with jitter = 1ms gives two groups (by jitter),
 * each with both sleep cells. */
static void test_swept_key_stays_an_axis(void **state)
{
    (void)state;
#define SWEPT_HEAD                                                                                                 \
    "time,host,job,run_id,status,workload,sleep,throughput,throughput_ci95,throughput_stddev,unit,repeats,version," \
    "config\n"
#define SWEPT_ROW(run, sleep, thr, jitter)                                                                        \
    "2026-12-02T10:00:00Z,vm,t," run ",ok,sleep," sleep "," thr ",0,0,steps,1,0.1.0,workload=sleep warmup=2 sleep=" \
    sleep " jitter=" jitter "\n"
    rep_rows rows;
    rep_model m;
    model_from_csv(SWEPT_HEAD SWEPT_ROW("r1", "1ms", "900", "0") SWEPT_ROW("r1", "10ms", "98", "0")
                       SWEPT_ROW("r2", "1ms", "910", "0") SWEPT_ROW("r2", "10ms", "96", "0")
                       SWEPT_ROW("r3", "1ms", "500", "1ms") SWEPT_ROW("r3", "10ms", "90", "1ms"),
                   &rows, &m);
    assert_int_equal(m.n, 2);
    const rep_group *a = group_split(&m, "jitter=0"), *b = group_split(&m, "jitter=1ms");
    assert_int_equal(a->naxes, 1);
    assert_int_equal(a->ncells, 2);
    assert_int_equal(b->ncells, 2);
    assert_float_equal(a->cells[0].thr, 905, 1e-9);
    assert_float_equal(b->cells[0].thr, 500, 1e-9);
    free_model(&rows, &m);
}

/* Rows of several ranks: the 2-rank run of sleep = 10ms scales against
 * the 1-rank run of 10ms, not against a pool of 1 ms and 10 ms runs
 * (efficiency 180 / (2 x 100) = 0.9; pooled it read 0.36). */
static void test_scaling_pairs_same_settings(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv(HEAD SLEEP_ROW("vm", "r1", "400", "", "1", SLEEP_CFG("1ms", ""))
                       SLEEP_ROW("vm", "r2", "100", "", "1", SLEEP_CFG("10ms", ""))
                       SLEEP_ROW("vm", "r3", "180", "", "2", SLEEP_CFG("10ms", "")),
                   &rows, &m);
    assert_int_equal(m.n, 3);
    size_t g2 = m.n;
    for (size_t i = 0; i < m.n; i++)
        if (m.g[i].ranks == 2)
            g2 = i;
    assert_true(g2 < m.n);
    assert_null(m.g[g2].split); /* alone at 2 ranks: nothing to tell apart */
    long g1 = rep_group_one_rank(&m, g2);
    assert_true(g1 >= 0);
    assert_string_equal(m.g[g1].split, "sleep=10ms");
    rep_scaling s = rep_group_scaling(&m, g2);
    assert_int_equal(s.n, 2);
    assert_float_equal(s.eff, 0.9, 1e-12);
    free_model(&rows, &m);
}

/* compare: base ran sleep = 1ms and 10ms (two groups), new only 10ms:
 * new's group is compared with base's 10ms group (not a pool of both,
 * nor 1ms), and base's 1ms group is only in base. */
static void test_compare_matches_same_settings(void **state)
{
    (void)state;
    rep_compare c;
    memset(&c, 0, sizeof c);
    c.alpha = 0.05;
    model_from_csv(HEAD SLEEP_ROW("vm", "r1", "900", "", "1", SLEEP_CFG("1ms", ""))
                       SLEEP_ROW("vm", "r2", "100", "", "1", SLEEP_CFG("10ms", "")),
                   &c.base.rows, &c.base.model);
    model_from_csv(HEAD SLEEP_ROW("vm", "r3", "95", "", "1", SLEEP_CFG("10ms", "")), &c.new.rows, &c.new.model);
    char err[256];
    assert_int_equal(rep_compare_build(&c, err, sizeof err), 0);
    assert_int_equal(c.n, 2);
    size_t both = 0, base_only = 0;
    for (size_t i = 0; i < c.n; i++) {
        const rep_cmp_group *g = &c.g[i];
        if (g->base && g->new) {
            both++;
            assert_string_equal(g->base->split, "sleep=10ms");
            assert_float_equal(g->cells[0].ratio, 0.95, 1e-12);
        } else if (g->base) {
            base_only++;
            assert_string_equal(g->base->split, "sleep=1ms");
        }
    }
    assert_int_equal(both, 1);
    assert_int_equal(base_only, 1);
    rep_compare_free(&c);
}

/* One setting spelled otherwise is one setting: memory = 1G, 1024M and
 * 1073741824 (a core key, by its declared type), sleep = 10ms, 0.01s and
 * 10000us and jitter = 0 and 0s (a workload's option: durations, as its
 * values say), spin = true, 1 and on (a boolean) pool as three repeats of
 * one cell, with no warning. */
#define SPELT_ROW(run, thr, mem, sleep, jitter, spin)                                                            \
    SLEEP_ROW("vm", run, thr, "", "1",                                                                            \
              "workload=sleep storage=posix cpus=0 iterations=20 memory=" mem " sleep=" sleep " jitter=" jitter \
              " spin=" spin " tag=1.10")
static void test_same_setting_spelt_otherwise(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv(HEAD SPELT_ROW("r1", "90", "1G", "10ms", "0", "true")
                       SPELT_ROW("r2", "96", "1024M", "0.01s", "0s", "1")
                       SPELT_ROW("r3", "93", "1073741824", "10000us", "0", "on"),
                   &rows, &m);
    assert_int_equal(m.n, 1);
    assert_null(m.g[0].split);
    assert_int_equal(m.nwarnings, 0);
    assert_int_equal(m.g[0].cells[0].nrows, 3);
    assert_float_equal(m.g[0].cells[0].repeats, 3, 0);
    assert_float_equal(m.g[0].cells[0].thr, 93, 1e-9);
    free_model(&rows, &m);
}

/* Values that differ stay apart, named by what they mean: 1G (GiB) and
 * 1GB (10^9 bytes); 10ms and 10m; spin = true and 0; and a text option
 * whose values merely read as equal numbers (1.10 and 1.1, versions). */
static void test_different_values_stay_apart(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv(HEAD SPELT_ROW("r1", "90", "1G", "10ms", "0", "true")
                       SPELT_ROW("r2", "80", "1GB", "10ms", "0", "true"),
                   &rows, &m);
    assert_int_equal(m.n, 2);
    assert_int_equal(m.nwarnings, 1);
    assert_string_equal(m.warnings[0], "sleep (job t): its rows ran with settings not swept that differ (memory): "
                                       "2 groups, not pooled as repeats of one cell: memory=1GiB; memory=1GB");
    free_model(&rows, &m);

    model_from_csv(HEAD SPELT_ROW("r1", "90", "1G", "10ms", "0", "true")
                       SPELT_ROW("r2", "80", "1G", "10m", "0", "true")
                       SPELT_ROW("r3", "70", "1G", "10ms", "0", "0"),
                   &rows, &m);
    assert_int_equal(m.n, 3);
    assert_float_equal(group_split(&m, "sleep=10ms spin=true")->cells[0].thr, 90, 0);
    assert_float_equal(group_split(&m, "sleep=10m spin=true")->cells[0].thr, 80, 0);
    assert_float_equal(group_split(&m, "sleep=10ms spin=false")->cells[0].thr, 70, 0);
    free_model(&rows, &m);

    model_from_csv(HEAD SPELT_ROW("r1", "90", "1G", "10ms", "0", "true")
                       SLEEP_ROW("vm", "r2", "80", "", "1",
                                 "workload=sleep storage=posix cpus=0 iterations=20 memory=1G sleep=10ms jitter=0 "
                                 "spin=true tag=1.1"),
                   &rows, &m);
    assert_int_equal(m.n, 2);
    assert_float_equal(group_split(&m, "tag=1.1")->cells[0].thr, 80, 0);
    free_model(&rows, &m);
}

/* compare: base ran memory = 1G and 2G (two groups), new 1024M with
 * sleep = 0.01s for base's 10ms: new is compared with base's 1G group,
 * not left only in new beside two groups only in base. */
static void test_compare_matches_spelt_otherwise(void **state)
{
    (void)state;
    rep_compare c;
    memset(&c, 0, sizeof c);
    c.alpha = 0.05;
    model_from_csv(HEAD SPELT_ROW("r1", "50", "2G", "10ms", "0", "true") SPELT_ROW("r2", "100", "1G", "10ms", "0", "true"),
                   &c.base.rows, &c.base.model);
    model_from_csv(HEAD SPELT_ROW("r3", "95", "1024M", "0.01s", "0s", "on"), &c.new.rows, &c.new.model);
    char err[256];
    assert_int_equal(rep_compare_build(&c, err, sizeof err), 0);
    assert_int_equal(c.n, 2);
    size_t both = 0;
    for (size_t i = 0; i < c.n; i++)
        if (c.g[i].base && c.g[i].new) {
            both++;
            assert_float_equal(c.g[i].cells[0].ratio, 0.95, 1e-12); /* against 1G's 100, not 2G's 50 */
            assert_string_equal(c.g[i].base->split, "memory=1GiB");
        }
    assert_int_equal(both, 1);
    rep_compare_free(&c);
}

/* Rows of one version from builds of two git revisions (a sweep resumed
 * after a rebuild, files merged from two checkouts): pooled as repeats,
 * as before, but said once, naming the revisions; they had pooled with
 * no word.  One revision: no warning. */
static void test_git_revisions_pooled_with_warning(void **state)
{
    (void)state;
    const char *head = "time,cpus,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,"
                       "repeats,start_time,git_rev,version\n";
    char csv[1024];
    snprintf(csv, sizeof csv, "%s%s", head,
             "t,1,j,r1,ok,w,50,2,0.8,items,3,s1,abc1234,0.1.0\n"
             "t,2,j,r1,ok,w,100,2,0.8,items,3,s2,abc1234,0.1.0\n"
             "t,2,j,r2,ok,w,80,2,0.8,items,3,s3,def5678-dirty,0.1.0\n");
    rep_rows rows;
    rep_model m;
    model_from_csv(csv, &rows, &m);
    assert_int_equal(m.n, 1);
    assert_int_equal(m.g[0].ncells, 2); /* pooled: a split would leave each revision part of the grid */
    assert_int_equal(m.nwarnings, 1);
    assert_string_equal(m.warnings[0],
                        "w (job j): its rows were written by dlgauge built from 2 git revisions (abc1234, "
                        "def5678-dirty) and pooled as repeats of its cells: a change between them reads as noise, "
                        "or as a step in its curve; read each revision's rows alone, or set them side by side with "
                        "dlgauge compare");
    free_model(&rows, &m);
    snprintf(csv, sizeof csv, "%s%s", head,
             "t,1,j,r1,ok,w,50,2,0.8,items,3,s1,abc1234,0.1.0\n"
             "t,2,j,r2,ok,w,80,2,0.8,items,3,s3,abc1234,0.1.0\n");
    model_from_csv(csv, &rows, &m);
    assert_int_equal(m.nwarnings, 0);
    free_model(&rows, &m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unswept_setting_splits),
        cmocka_unit_test(test_study_rerun_with_other_size),
        cmocka_unit_test(test_hosts_and_rows_without_config),
        cmocka_unit_test(test_swept_key_stays_an_axis),
        cmocka_unit_test(test_scaling_pairs_same_settings),
        cmocka_unit_test(test_compare_matches_same_settings),
        cmocka_unit_test(test_same_setting_spelt_otherwise),
        cmocka_unit_test(test_different_values_stay_apart),
        cmocka_unit_test(test_compare_matches_spelt_otherwise),
        cmocka_unit_test(test_git_revisions_pooled_with_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
