/* Cells whose limit no cgroup applied (`memory_enforced = false`,
 * `cpu_quota_enforced = false`) ran without it while their column says
 * it: the audit's stream sweep, arrays of 900 MiB at memory = 256MiB and
 * 2GiB, both "ran ok" unlimited, and the report named 256MiB the memory
 * knee and sized instances by it.  Such cells are no measurement at that
 * value: left out beside cells that ran with the limit, and no knee of it
 * where none did. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_csv.h"
#include "model_rank.h"
#include "reco_helpers.h"
#include "report.h"

#define HEAD                                                                                                       \
    "time,job,memory,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,rss_peak_bytes,"    \
    "memory_enforced,version\n"
/* 3 arrays of 900 MiB: a peak of ~2.7 GiB, whatever the column says */
#define ROW(mem, thr, enf) "t,s," mem ",ok,stream," thr ",1e8,8e7,bytes,3,2900000000," enf ",0.1.0\n"

/* A host workload: memory alone tells these apart. */
static const char cat[] = "[instance small]\ngpus = 0\nvcpus = 2\nmemory = 1GiB\nprice_per_hour = 0.10\n"
                          "[instance mid]\ngpus = 0\nvcpus = 2\nmemory = 2GiB\nprice_per_hour = 0.20\n"
                          "[instance big]\ngpus = 0\nvcpus = 2\nmemory = 4GiB\nprice_per_hour = 0.40\n";

/* Axis key's knee in r's one group, its text in text. */
static const rep_knee *knee_of(const rep_report *r, const char *key, char *text, size_t len)
{
    const rep_group *g = &r->model.g[0];
    long a = rep_group_axis(g, key);
    assert_true(a >= 0);
    rep_knee_text(r, g, (size_t)a, text, len);
    print_message("%s\n", text);
    return &g->knees[a];
}

static const char *knee_value(const rep_report *r, const char *key, const rep_knee *k)
{
    return r->model.g[0].axes[rep_group_axis(&r->model.g[0], key)].vals[k->val];
}

/* The model's warnings joined, and printed. */
static void warnings_text(const rep_report *r, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < r->model.nwarnings && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s\n", r->model.warnings[i]);
    print_message("%s", buf);
}

/* Both cells ran unlimited: memory has no knee, and the recommendation
 * sizes memory by the peak the cells held, as where it is not swept (it
 * had said "knee memory = 256MiB" and recommended the 1 GiB instance). */
static void test_none_enforced_no_memory_knee(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, HEAD ROW("256MiB", "1e10", "false") ROW("2GiB", "1.01e10", "false"));
    char text[1024];
    const rep_knee *k = knee_of(&r, "memory", text, sizeof text);
    assert_true(k->unenforced);
    assert_non_null(strstr(text, "no knee: memory not enforced (memory_enforced = false"));
    rep_group_rank_note(&r.model.g[0], text, sizeof text);
    print_message("%s\n", text);
    assert_non_null(strstr(text, "memory not enforced: 2 of 2 measured cells ran without their memory limit"));
    warnings_text(&r, text, sizeof text);
    assert_int_equal(r.model.nwarnings, 1);
    assert_non_null(strstr(text, "stream: 2 measured rows say no cgroup applied their memory limit "
                                 "(memory_enforced = false: "));
    assert_non_null(strstr(text, ":2, "));
    reco_from_text(&r, cat);
    const rep_choice *small = choice(&r.reco, "small");
    print_message("small: %s\n", small->fits[0].why);
    assert_false(small->meets);
    assert_non_null(strstr(small->fits[0].why, "(its peak RSS; memory not enforced)"));
    assert_false(choice(&r.reco, "mid")->meets); /* 2 GiB < 2.7 */
    assert_true(choice(&r.reco, "big")->meets);
    rep_reco_text(&r, text, sizeof text);
    assert_non_null(strstr(text, "recommended: big"));
    report_free(&r);
}

/* Only the small cell ran unlimited: the knee is among the cells that ran
 * with their limit, and no instance is credited the unlimited figure. */
static void test_small_unenforced_left_out(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, HEAD ROW("256MiB", "1e10", "false") ROW("2GiB", "1.01e10", "true"));
    char text[1024];
    const rep_knee *k = knee_of(&r, "memory", text, sizeof text);
    assert_false(k->unenforced);
    assert_string_equal(knee_value(&r, "memory", k), "2GiB");
    assert_non_null(strstr(text, "the smaller values ran without their limit (not enforced), not ranked"));
    const rep_group *g = &r.model.g[0];
    assert_false(rep_cell_ranked(g, &g->cells[0]));
    rep_group_rank_note(g, text, sizeof text);
    print_message("%s\n", text);
    assert_non_null(strstr(text, "memory not enforced: 1 of 2 measured cells ran without their memory limit "
                                 "(memory_enforced = false: no cgroup applied it): left out of the best and the "
                                 "knees"));
    warnings_text(&r, text, sizeof text);
    assert_non_null(strstr(text, "1 measured row says no cgroup applied its memory limit"));
    reco_from_text(&r, cat);
    const rep_choice *small = choice(&r.reco, "small");
    print_message("small: %s\n", small->fits[0].why);
    assert_false(small->meets);
    assert_non_null(strstr(small->fits[0].why, "needs memory >= 2GiB"));
    assert_true(choice(&r.reco, "mid")->meets);
    report_free(&r);
}

/* Enforced, or a row that does not say (an older dlgauge): as before. */
static void test_enforced_or_unsaid_unchanged(void **state)
{
    (void)state;
    static const char *const texts[] = {
        HEAD ROW("256MiB", "1e10", "true") ROW("2GiB", "1.01e10", "true"),
        "time,job,memory,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,version\n"
        "t,s,256MiB,ok,stream,1e10,1e8,8e7,bytes,3,0.1.0\nt,s,2GiB,ok,stream,1.01e10,1e8,8e7,bytes,3,0.1.0\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        rep_report r;
        report_from_csv(&r, texts[i]);
        char text[1024];
        const rep_knee *k = knee_of(&r, "memory", text, sizeof text);
        assert_false(k->unenforced);
        assert_string_equal(knee_value(&r, "memory", k), "256MiB");
        assert_int_equal(r.model.nwarnings, 0);
        rep_group_rank_note(&r.model.g[0], text, sizeof text);
        assert_string_equal(text, "");
        report_free(&r);
    }
}

/* cpu_quota is an axis like any: a quota no cgroup applied is left out of
 * its knee as memory is. */
static void test_cpu_quota_unenforced(void **state)
{
    (void)state;
    rep_report r;
    report_from_csv(&r, "time,job,cpu_quota,status,workload,throughput,throughput_ci95,throughput_stddev,unit,"
                        "repeats,cpu_quota_enforced,version\n"
                        "t,q,0.5,ok,sim,99,1,0.8,images,3,false,0.1.0\n"
                        "t,q,1,ok,sim,100,1,0.8,images,3,true,0.1.0\n"
                        "t,q,2,ok,sim,100,1,0.8,images,3,true,0.1.0\n");
    char text[1024];
    const rep_knee *k = knee_of(&r, "cpu_quota", text, sizeof text);
    assert_string_equal(knee_value(&r, "cpu_quota", k), "1");
    rep_group_rank_note(&r.model.g[0], text, sizeof text);
    print_message("%s\n", text);
    assert_non_null(strstr(text, "cpu_quota not enforced: 1 of 3 measured cells ran without their cpu_quota limit "
                                 "(cpu_quota_enforced = false"));
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none_enforced_no_memory_knee),
        cmocka_unit_test(test_small_unenforced_left_out),
        cmocka_unit_test(test_enforced_or_unsaid_unchanged),
        cmocka_unit_test(test_cpu_quota_unenforced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
