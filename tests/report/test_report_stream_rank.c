/* A STREAM sweep over array_size where the smallest arrays fit in the
 * last-level cache: that cell measured the cache (cache-bound) at several
 * times memory's rate, and must not be the group's best, its knee or the
 * figure the recommendation sizes memory bandwidth by.  Every output says
 * which cells were left out; a sweep entirely in the cache says that its
 * best is the cache's. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_csv.h"
#include "model_rank.h"
#include "render.h"
#include "report.h"

static const char head[] = "time,array_size,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                           "unit,repeats,wall_s,cpu_user_share,triad_bytes_per_s,array_bytes,threads,llc_bytes,"
                           "start_time,version\n";

/* 32 MiB of last-level cache: 4 MiB arrays (3 of them) fit in it. */
#define ROW(job, size, thr, bytes, start)                                                                   \
    "t," size "," job ",r1,ok,stream," thr ",1e8,1e8,bytes,3,1.0,0.5," thr "," bytes ",2,33554432," start \
    ",0.1.0\n"

static const char sweep[] = ROW("mem", "4MiB", "90e9", "4194304", "s1") ROW("mem", "64MiB", "20.5e9", "67108864", "s2")
    ROW("mem", "256MiB", "20e9", "268435456", "s3") ROW("llc", "1MiB", "95e9", "1048576", "s4")
        ROW("llc", "4MiB", "90e9", "4194304", "s5");

static void report_of(rep_report *r)
{
    char csv[4096];
    snprintf(csv, sizeof csv, "%s%s", head, sweep);
    *r = (rep_report){.target = 0.95};
    model_from_csv(csv, &r->rows, &r->model);
}

static void report_free(rep_report *r)
{
    rep_model_free(&r->model);
    rep_rows_free(&r->rows);
}

static const char *value_of(const rep_group *g, size_t cell)
{
    return g->axes[0].vals[g->cells[cell].coord[0]];
}

/* The best and the knee are memory's (64 MiB), not the 4 MiB cache cell's
 * 90 GB/s. */
static void test_cache_cell_not_best_nor_knee(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r);
    const rep_group *g = &r.model.g[0];
    assert_string_equal(g->job, "mem");
    assert_true(g->has_best);
    assert_string_equal(value_of(g, g->best), "64MiB");
    assert_string_equal(g->axes[0].vals[g->knees[0].val], "64MiB");
    assert_string_equal(value_of(g, g->knees[0].cell), "64MiB");
    assert_int_equal(rep_group_unranked(g), 1);
    assert_true(rep_knee_below_unranked(g, 0)); /* 4 MiB, below the knee, was measured: left out */
    for (size_t c = 0; c < g->ncells; c++)
        assert_true(rep_cell_ranked(g, &g->cells[c]) == (g->cells[c].bn != REP_BN_CACHE));
    report_free(&r);
}

/* A sweep whose every cell fits in the cache ranks its cells among
 * themselves, and says its best is the cache's bandwidth. */
static void test_all_cache_ranked_among_themselves(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r);
    const rep_group *g = &r.model.g[1];
    assert_string_equal(g->job, "llc");
    assert_string_equal(value_of(g, g->best), "1MiB");
    assert_int_equal(rep_group_unranked(g), 0);
    assert_false(rep_knee_below_unranked(g, 0));
    char note[512];
    rep_group_rank_note(g, note, sizeof note);
    assert_non_null(strstr(note, "every measured cell kept its arrays in the last-level cache: the best and the "
                                 "knees are the cache's bandwidth, not memory's"));
    report_free(&r);
}

/* Text, Markdown and HTML say which cells were left out; the curve draws
 * the cache cell hollow and named, the knee at 64 MiB. */
static void test_outputs_say_so(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r);
    static const char want[] = "cache-bound: 1 of 3 measured cells kept their arrays in the last-level cache and "
                               "measured the cache, not memory: left out of the best and the knees";
    char *text = render_report(&r, out_text_plain), *md = render_report(&r, rep_out_markdown), *html = render_report(&r, rep_out_html);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(md, want));
    assert_non_null(strstr(html, want));
    assert_non_null(strstr(text, "array_size = 64MiB: 20.5 GB/s, 100.0% of the best (it is the best)"));
    free(text);
    free(md);
    free(html);
    char *svg = render_curve(&r, &r.model.g[0], 0);
    assert_non_null(strstr(svg, ">cache</text>"));
    assert_int_equal(strstr(svg, ">knee</text>") != NULL, 1);
    free(svg);
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_cell_not_best_nor_knee),
        cmocka_unit_test(test_all_cache_ranked_among_themselves),
        cmocka_unit_test(test_outputs_say_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
