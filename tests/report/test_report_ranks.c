/* Rows measured under mpirun (result field `ranks`): never pooled with
 * another rank count's, the scaling efficiency rate(N) / (N x rate(1))
 * in every output, the recommendation scaling a 1-rank cell by the
 * efficiency measured at the most ranks up to an instance's GPUs (else
 * the upper bound, said so), compare matching only rows of one rank
 * count, a file without the field reading as 1 rank, and a bad `ranks`
 * refused with one line. */
#define _GNU_SOURCE
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

#include "compare.h"
#include "model_csv.h"
#include "reco_helpers.h"
#include "render.h"
#include "report.h"
#include "scaling.h"
#include "temp_file.h"

#define HEAD                                                                                                      \
    "time,batch,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,ranks,version\n"
/* sim, job train, fed an accelerator (au): batch, throughput, ranks */
#define ROW(batch, thr, ranks)                                                                                    \
    "2026-12-01T10:00:00Z," batch ",train,ok,sim," thr ",20,8,images,3,0.95," ranks ",0.1.0\n"
/* the same without the ranks column, as files written before it */
#define HEAD_OLD "time,batch,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,version\n"
#define ROW_OLD(batch, thr) "2026-12-01T10:00:00Z," batch ",train,ok,sim," thr ",20,8,images,3,0.95,0.1.0\n"

/* 1 rank: 1000 and 1200 images/s; 2 ranks: 1800 (0.90) and 2088 (0.87,
 * the 2-rank best). */
#define ONE_RANK ROW("32", "1000", "1") ROW("64", "1200", "1")
#define TWO_RANKS ROW("32", "1800", "2") ROW("64", "2088", "2")

/* Instances of 1, 2, 4 and 8 GPUs with room for any cell (no resource axis). */
#define CATALOG                                                                                                   \
    "[instance one]\ngpus = 1\ngpu = T\nvcpus = 8\nmemory = 32GiB\nprice_per_hour = 1.0\n"                        \
    "[instance two]\ngpus = 2\ngpu = T\nvcpus = 16\nmemory = 64GiB\nprice_per_hour = 1.5\n"                       \
    "[instance four]\ngpus = 4\ngpu = T\nvcpus = 32\nmemory = 128GiB\nprice_per_hour = 3.2\n"                     \
    "[instance eight]\ngpus = 8\ngpu = T\nvcpus = 64\nmemory = 256GiB\nprice_per_hour = 8.0\n"

/* The terminal report without colour. */
static void report_of(rep_report *r, const char *csv)
{
    memset(r, 0, sizeof *r);
    r->target = 0.95;
    model_from_csv(csv, &r->rows, &r->model);
}

/* Group i of m, which must exist. */
static const rep_group *group_at(const rep_model *m, size_t i)
{
    assert_true(i < m->n);
    return &m->g[i];
}

static const rep_cell *cell_of(const rep_group *g, const char *batch)
{
    long a = rep_group_axis(g, "batch");
    assert_true(a >= 0);
    for (size_t c = 0; c < g->ncells; c++)
        if (strcmp(g->axes[a].vals[g->cells[c].coord[a]], batch) == 0)
            return &g->cells[c];
    fail_msg("no cell batch=%s", batch);
    return NULL;
}

/* Rows at 1 and 2 ranks of one job: two groups, no cell pooled across
 * them (before, batch=64 pooled 1200 and 2088 into 1644). */
static void ranks_are_not_pooled(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, HEAD ONE_RANK TWO_RANKS);
    assert_int_equal(r.model.n, 2);
    const rep_group *g1 = group_at(&r.model, 0), *g2 = group_at(&r.model, 1);
    assert_int_equal(g1->ncells, 2);
    assert_int_equal(g2->ncells, 2);
    assert_int_equal(cell_of(g1, "64")->nrows, 1);
    assert_near(cell_of(g1, "64")->thr, 1200, 1e-9);
    assert_near(cell_of(g2, "64")->thr, 2088, 1e-9);
    assert_near(g2->cells[g2->best].thr, 2088, 1e-9);
    char tag[128];
    rep_group_tag(&r.model, 1, tag, sizeof tag);
    assert_string_equal(tag, "sim (2 ranks)");
    rep_group_tag(&r.model, 0, tag, sizeof tag);
    assert_string_equal(tag, "sim");
    char title[256];
    rep_group_title(g2, title, sizeof title);
    assert_string_equal(title, "sim (job train), mode -, precision -, 2 ranks");
    report_free(&r);
}

/* The efficiency at the 2-rank best: 2088 / (2 x 1200) = 0.87, in the
 * text, Markdown and HTML outputs. */
static void efficiency_in_every_output(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, HEAD ONE_RANK TWO_RANKS);
    rep_out_fn *outs[] = {out_text_plain, rep_out_markdown, rep_out_html};
    for (size_t i = 0; i < 3; i++) {
        char *s = render_report(&r, outs[i]);
        assert_has(s, "scaling: efficiency 0.87 at 2 ranks = ");
        assert_has(s, "batch=64 (the best)");
        free(s);
    }
    report_free(&r);
}

/* A 2-GPU instance: 1200 x 2 x 0.87 = 2088; a 4-GPU one, with nothing
 * measured at 4 ranks, the nearest below: 1200 x 4 x 0.87 = 4176; one
 * GPU: 1200.  Before: 2400 and 4800, the upper bound. */
static void recommendation_scales_by_measured_efficiency(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, HEAD ONE_RANK TWO_RANKS);
    reco_from_text(&r, CATALOG);
    assert_near(choice(&r.reco, "one")->fits[0].thr, 1200, 1e-9);
    assert_near(choice(&r.reco, "two")->fits[0].thr, 2088, 1e-6);
    assert_near(choice(&r.reco, "four")->fits[0].thr, 4176, 1e-6);
    assert_near(choice(&r.reco, "eight")->fits[0].thr, 8352, 1e-6);
    /* the 2-rank group is priced through the efficiency alone */
    assert_true(choice(&r.reco, "two")->fits[1].cost == 0);
    assert_string_equal(r.reco.v[0].inst->name, "two"); /* 1.5/h at 2088/s beats 1.0/h at 1200/s */
    char *s = render_report(&r, out_text_plain);
    assert_has(s, "(measured at 2 ranks: 0.87)");
    assert_has(s, "(measured at 2 ranks, nearest to 4: 0.87)");
    assert_has(s, "; sim on its 2 GPUs: measured at 2 ranks: 0.87");
    assert_has(s, "scales a per-GPU group's 1-rank cells): sim (2 ranks)");
    free(s);
    report_free(&r);
}

/* Measured at 2 and 4 ranks: 4 GPUs take 4 ranks' efficiency (3840 / (4
 * x 1200) = 0.80), 2 GPUs 2 ranks', 8 GPUs the nearest below, 4 ranks'. */
static void most_ranks_up_to_the_gpus(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, HEAD ONE_RANK TWO_RANKS ROW("64", "3840", "4"));
    reco_from_text(&r, CATALOG);
    assert_int_equal(r.model.n, 3);
    assert_near(choice(&r.reco, "two")->fits[0].thr, 2088, 1e-6);
    assert_near(choice(&r.reco, "four")->fits[0].thr, 3840, 1e-6);
    assert_near(choice(&r.reco, "eight")->fits[0].thr, 7680, 1e-6);
    char *s = render_report(&r, out_text_plain);
    assert_has(s, "(measured at 4 ranks: 0.80)");
    assert_has(s, "(measured at 4 ranks, nearest to 8: 0.80)");
    free(s);
    report_free(&r);
}

/* Measured at 4 ranks only: a 2-GPU instance keeps the upper bound and
 * says so; a 4-GPU one takes 0.80. */
static void upper_bound_where_not_measured(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, HEAD ONE_RANK ROW("64", "3840", "4"));
    reco_from_text(&r, CATALOG);
    assert_near(choice(&r.reco, "two")->fits[0].thr, 2400, 1e-6);
    assert_near(choice(&r.reco, "four")->fits[0].thr, 3840, 1e-6);
    char *s = render_report(&r, out_text_plain);
    assert_has(s, "(not measured: upper bound)");
    free(s);
    report_free(&r);
}

/* A file without the column is 1 rank: its rows pool with the 1-rank rows
 * of a newer file, not the 2-rank ones, and a file with ranks = 1 on every
 * row reports exactly as the same file without the column (the catalogs
 * left out: their temporary files' names differ). */
static void no_column_reads_as_one_rank(void **state)
{
    (void)state;
    char old_path[32], new_path[32], err[512];
    temp_file(old_path, HEAD_OLD ROW_OLD("64", "1000"));
    temp_file(new_path, HEAD ONE_RANK TWO_RANKS);
    rep_report r;
    memset(&r, 0, sizeof r);
    r.target = 0.95;
    assert_int_equal(rep_read_file(&r.rows, old_path, err, sizeof err), 0);
    assert_int_equal(rep_read_file(&r.rows, new_path, err, sizeof err), 0);
    unlink(old_path);
    unlink(new_path);
    assert_int_equal(rep_rows_validate(&r.rows, err, sizeof err), 0);
    assert_int_equal(rep_model_build(&r.model, &r.rows, &r.disks, 0.95, err, sizeof err), 0);
    assert_int_equal(r.model.n, 2);
    const rep_cell *c = cell_of(group_at(&r.model, 0), "64");
    assert_int_equal(c->nrows, 2);
    assert_near(c->thr, 1100, 1e-9); /* 1000 and 1200 */
    assert_near(cell_of(group_at(&r.model, 1), "64")->thr, 2088, 1e-9);
    report_free(&r);

    rep_report a, b;
    report_of(&a, HEAD_OLD ROW_OLD("32", "1000") ROW_OLD("64", "1200"));
    report_of(&b, HEAD ONE_RANK);
    rep_out_fn *outs[] = {out_text_plain, rep_out_markdown, rep_out_html};
    for (size_t i = 0; i < 3; i++) {
        char *sa = render_report(&a, outs[i]), *sb = render_report(&b, outs[i]);
        assert_string_equal(sa, sb);
        assert_null(strstr(sa, "ranks"));
        free(sa);
        free(sb);
    }
    reco_from_text(&a, CATALOG); /* nothing measured at several ranks: the upper bound, unmarked */
    assert_near(choice(&a.reco, "two")->fits[0].thr, 2400, 1e-9);
    char *s = render_report(&a, out_text_plain);
    assert_null(strstr(s, "not measured: upper bound"));
    free(s);
    report_free(&a);
    report_free(&b);
}

/* compare: a base written before `ranks` against a new file at 1 and 2
 * ranks: the 1-rank cells match the base's, the 2-rank ones are only in
 * new (before: one group, the new cells pooling both rank counts). */
static void compare_matches_one_rank_count(void **state)
{
    (void)state;
    rep_compare c;
    memset(&c, 0, sizeof c);
    c.alpha = 0.05;
    model_from_csv(HEAD_OLD ROW_OLD("32", "1000") ROW_OLD("64", "1200"), &c.base.rows, &c.base.model);
    model_from_csv(HEAD ONE_RANK TWO_RANKS, &c.new.rows, &c.new.model);
    char err[256];
    assert_int_equal(rep_compare_build(&c, err, sizeof err), 0);
    assert_int_equal(c.n, 2);
    assert_non_null(c.g[0].base);
    assert_non_null(c.g[0].new);
    assert_int_equal(c.g[0].ncells, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_non_null(c.g[0].cells[i].base);
        assert_non_null(c.g[0].cells[i].new);
        assert_near(c.g[0].cells[i].ratio, 1, 1e-12);
    }
    assert_null(c.g[1].base); /* only in new */
    assert_string_equal(c.g[1].name, "sim (job train), mode -, precision -, 2 ranks");
    assert_near(c.geomean, 1, 1e-12);
    rep_compare_free(&c);
}

/* A `ranks` that is no whole number >= 1: one line naming file, line, column. */
/* allreduce/p2p rows (busbw_factor): a link's rate, not work the ranks
 * share.  1 rank's "allreduce" is a local copy, so no efficiency against
 * it (it read 0.00 at 2 ranks), and no price per TB moved; the sim group
 * beside them is still priced and scaled. */
#define HEAD_COMM                                                                                                 \
    "time,batch,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,ranks,"        \
    "busbw_factor,version\n"
#define COMM_ROW(thr, ranks, factor)                                                                              \
    "2026-12-01T10:00:00Z,-,ar,ok,allreduce," thr ",0,0,bytes,3,," ranks "," factor ",0.1.0\n"
#define SIM_ROW(batch, thr, ranks) "2026-12-01T10:00:00Z," batch ",train,ok,sim," thr ",20,8,images,3,0.95," ranks ",,0.1.0\n"
static void collectives_are_not_scaled_or_priced(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, HEAD_COMM COMM_ROW("41700000000", "1", "0") COMM_ROW("341600000", "2", "1")
                      SIM_ROW("32", "1000", "1") SIM_ROW("32", "1800", "2"));
    size_t ar1 = r.model.n, ar2 = r.model.n, sim1 = r.model.n;
    for (size_t i = 0; i < r.model.n; i++) {
        const rep_group *g = &r.model.g[i];
        if (strcmp(g->workload, "allreduce") == 0)
            *(g->ranks == 1 ? &ar1 : &ar2) = i;
        else if (g->ranks == 1)
            sim1 = i;
    }
    assert_true(ar1 < r.model.n && ar2 < r.model.n && sim1 < r.model.n);
    assert_true(r.model.g[ar2].collective && !r.model.g[sim1].collective);
    assert_int_equal(rep_group_scaling(&r.model, ar2).n, 0);
    assert_false(rep_group_counted(&r.model, NULL, ar1));
    assert_true(rep_group_counted(&r.model, NULL, sim1));
    reco_from_text(&r, CATALOG);
    assert_true(choice(&r.reco, "one")->fits[ar1].cost == 0);
    assert_true(choice(&r.reco, "one")->fits[sim1].cost > 0);
    char *s = render_report(&r, out_text_plain);
    assert_has(s, "scaling: none for a link's rate (busbw_factor)");
    assert_has(s, "scaling: efficiency 0.90 at 2 ranks = ");
    if (strstr(s, "USD per TB") || strstr(s, "efficiency 0.00"))
        fail_msg("%s", s);
    free(s);
    report_free(&r);
}

static void bad_ranks_is_an_error(void **state)
{
    (void)state;
    const char *bad[] = {"0", "two", "1.5"};
    for (size_t i = 0; i < 3; i++) {
        char csv[1024], path[32], err[512], want[128];
        snprintf(csv, sizeof csv, HEAD ROW("32", "1000", "1") "2026-12-01T10:00:00Z,64,train,ok,sim,1200,20,8,images,3,"
                                       "0.95,%s,0.1.0\n", bad[i]);
        temp_file(path, csv);
        rep_rows rows = {0};
        assert_int_equal(rep_read_file(&rows, path, err, sizeof err), 0);
        unlink(path);
        assert_int_not_equal(rep_rows_validate(&rows, err, sizeof err), 0);
        snprintf(want, sizeof want, ":3: column 'ranks' is '%s': the run's ranks are a whole number >= 1", bad[i]);
        assert_has(err, want);
        rep_rows_free(&rows);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranks_are_not_pooled),
        cmocka_unit_test(efficiency_in_every_output),
        cmocka_unit_test(recommendation_scales_by_measured_efficiency),
        cmocka_unit_test(most_ranks_up_to_the_gpus),
        cmocka_unit_test(upper_bound_where_not_measured),
        cmocka_unit_test(no_column_reads_as_one_rank),
        cmocka_unit_test(compare_matches_one_rank_count),
        cmocka_unit_test(collectives_are_not_scaled_or_priced),
        cmocka_unit_test(bad_ranks_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
