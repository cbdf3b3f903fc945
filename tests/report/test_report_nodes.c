/* Rows of ranks over several machines (result field `nodes`): a group of
 * their own beside the same rank count on one machine, titled "N ranks on
 * M nodes"; their scaling line says they span the nodes; an instance (one
 * machine) takes its efficiency from 1-node groups only, and says where
 * only ranks across nodes were measured; compare matches nodes too; a bad
 * `nodes` is refused with one line. */
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
#include "temp_file.h"

#define HEAD                                                                                                      \
    "time,batch,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,ranks,nodes,"     \
    "version\n"
/* sim, job train, fed an accelerator (au): batch, throughput, ranks, nodes */
#define ROW(batch, thr, ranks, nodes)                                                                             \
    "2026-12-01T10:00:00Z," batch ",train,ok,sim," thr ",20,8,images,3,0.95," ranks "," nodes ",0.1.0\n"
/* written before `nodes`: ranks only */
#define HEAD_RANKS                                                                                                \
    "time,batch,job,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,au,ranks,version\n"
#define ROW_RANKS(batch, thr, ranks)                                                                              \
    "2026-12-01T10:00:00Z," batch ",train,ok,sim," thr ",20,8,images,3,0.95," ranks ",0.1.0\n"

/* 1 rank: 1000 and 1200 images/s.  At batch 64: 4 ranks on one node
 * 3840 (0.80), 4 ranks on 2 nodes 3360 (0.70), 8 ranks on 2 nodes 5760
 * (0.60). */
#define ONE_RANK ROW("32", "1000", "1", "1") ROW("64", "1200", "1", "1")
#define R4N1 ROW("64", "3840", "4", "1")
#define R4N2 ROW("64", "3360", "4", "2")
#define R8N2 ROW("64", "5760", "8", "2")

/* Instances of 1, 2, 4 and 8 GPUs with room for any cell (no resource
 * axis); at the upper bound the 4-GPU one is the cheapest per image. */
#define CATALOG                                                                                                   \
    "[instance one]\ngpus = 1\ngpu = T\nvcpus = 8\nmemory = 32GiB\nprice_per_hour = 1.0\n"                        \
    "[instance two]\ngpus = 2\ngpu = T\nvcpus = 16\nmemory = 64GiB\nprice_per_hour = 1.5\n"                       \
    "[instance four]\ngpus = 4\ngpu = T\nvcpus = 32\nmemory = 128GiB\nprice_per_hour = 2.8\n"                     \
    "[instance eight]\ngpus = 8\ngpu = T\nvcpus = 64\nmemory = 256GiB\nprice_per_hour = 8.0\n"

static void report_of(rep_report *r, const char *csv)
{
    memset(r, 0, sizeof *r);
    r->target = 0.95;
    model_from_csv(csv, &r->rows, &r->model);
}

/* The group titled "sim (job train), mode -, precision -" + suffix, which
 * must exist. */
static size_t group_titled(const rep_model *m, const char *suffix)
{
    char want[256], t[256];
    snprintf(want, sizeof want, "sim (job train), mode -, precision -%s", suffix);
    for (size_t i = 0; i < m->n; i++) {
        rep_group_title(&m->g[i], t, sizeof t);
        if (strcmp(t, want) == 0)
            return i;
    }
    fail_msg("no group %s", want);
    return 0;
}

/* 4 ranks on one node and on 2: two groups, not one pooling 3840 and
 * 3360; titles and names say the nodes only where there are several; the
 * 8-GPU instance takes 4 ranks on one node's 0.80, not 8 ranks on 2
 * nodes' 0.60 (before: 4 groups pooled to 0.75, 8 GPUs at 0.60). */
static void nodes_are_their_own_group(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, HEAD ONE_RANK R4N1 R4N2 R8N2);
    assert_int_equal(r.model.n, 4);
    size_t g41 = group_titled(&r.model, ", 4 ranks"), g42 = group_titled(&r.model, ", 4 ranks on 2 nodes");
    size_t g82 = group_titled(&r.model, ", 8 ranks on 2 nodes");
    assert_int_equal(r.model.g[g41].cells[r.model.g[g41].best].nrows, 1);
    assert_near(r.model.g[g41].cells[r.model.g[g41].best].thr, 3840, 1e-9);
    assert_near(r.model.g[g42].cells[r.model.g[g42].best].thr, 3360, 1e-9);
    char s[256];
    rep_group_tag(&r.model, g41, s, sizeof s);
    assert_string_equal(s, "sim (4 ranks)");
    rep_group_tag(&r.model, g82, s, sizeof s);
    assert_string_equal(s, "sim (8 ranks on 2 nodes)");

    reco_from_text(&r, CATALOG);
    assert_near(choice(&r.reco, "four")->fits[0].thr, 3840, 1e-6);
    assert_near(choice(&r.reco, "eight")->fits[0].thr, 7680, 1e-6);
    assert_near(choice(&r.reco, "two")->fits[0].thr, 2400, 1e-6); /* no N <= 2 measured */
    rep_out_fn *outs[] = {out_text_plain, rep_out_markdown, rep_out_html};
    for (size_t i = 0; i < 3; i++) {
        char *t = render_report(&r, outs[i]);
        assert_has(t, "scaling: efficiency 0.80 at 4 ranks = ");
        assert_has(t, "scaling: efficiency 0.70 at 4 ranks on 2 nodes = ");
        assert_has(t, "(the best); it spans 2 nodes (the network between them included): no instance"); /* ' in HTML */
        assert_has(t, "scaling: efficiency 0.60 at 8 ranks on 2 nodes = ");
        assert_has(t, "(measured at 4 ranks, nearest to 8: 0.80)");
        assert_has(t, "up to the instance");
        assert_has(t, " GPUs on one node (an instance is one machine; ranks across nodes measured the network "
                      "between them too); not measured: upper bound = no such N was measured on one node;");
        assert_has(t, "1-rank cells): sim (4 ranks), sim (4 ranks on 2 nodes), sim (8 ranks on 2 nodes)");
        free(t);
    }
    report_free(&r);

    /* nodes = 1 on every row reads exactly as a file without the column
     * (the catalogs left out: their temporary files' names differ) */
    rep_report a, b;
    report_of(&a, HEAD ONE_RANK R4N1);
    report_of(&b, HEAD_RANKS ROW_RANKS("32", "1000", "1") ROW_RANKS("64", "1200", "1") ROW_RANKS("64", "3840", "4"));
    for (size_t i = 0; i < 3; i++) {
        char *sa = render_report(&a, outs[i]), *sb = render_report(&b, outs[i]);
        assert_string_equal(sa, sb);
        assert_null(strstr(sa, "node"));
        free(sa);
        free(sb);
    }
    reco_from_text(&a, CATALOG);
    reco_from_text(&b, CATALOG);
    for (size_t i = 0; i < a.reco.n; i++) {
        char how_a[128], how_b[128];
        assert_string_equal(a.reco.v[i].inst->name, b.reco.v[i].inst->name);
        assert_near(a.reco.v[i].fits[0].thr, b.reco.v[i].fits[0].thr, 1e-9);
        int gpus = a.reco.v[i].inst->gpus;
        assert_string_equal(rep_fit_scaling_text(&a.reco.v[i].fits[0], gpus, how_a, sizeof how_a),
                            rep_fit_scaling_text(&b.reco.v[i].fits[0], gpus, how_b, sizeof how_b));
    }
    char *ta = render_report(&a, out_text_plain);
    assert_null(strstr(ta, "node"));
    free(ta);
    report_free(&a);
    report_free(&b);
}

/* Measured across 2 nodes only: instances keep the upper bound and say
 * that only ranks across nodes were measured (before: 4 GPUs x 0.70);
 * without a 1-rank run the group's line names its nodes. */
static void only_across_nodes_is_not_measured(void **state)
{
    (void)state;
    rep_report r;
    report_of(&r, HEAD ONE_RANK R4N2 R8N2);
    reco_from_text(&r, CATALOG);
    assert_near(choice(&r.reco, "four")->fits[0].thr, 4800, 1e-6);
    assert_near(choice(&r.reco, "eight")->fits[0].thr, 9600, 1e-6);
    assert_true(choice(&r.reco, "four")->fits[0].scale_upper);
    assert_string_equal(r.reco.v[0].inst->name, "four");
    char *t = render_report(&r, out_text_plain);
    assert_has(t, "(not measured on one node, only at 4 ranks on 2 nodes: upper bound)");
    assert_has(t, "(not measured on one node, only at 8 ranks on 2 nodes: upper bound)");
    assert_has(t, "; sim on its 4 GPUs: not measured on one node, only at 4 ranks on 2 nodes: upper bound");
    assert_has(t, "(not measured: upper bound)"); /* two GPUs: nothing measured at 2 ranks at all */
    free(t);
    report_free(&r);

    report_of(&r, HEAD R4N2);
    t = render_report(&r, out_text_plain);
    assert_has(t, "scaling: not measured: no run of this job at 1 rank to compare the 4 ranks on 2 nodes with");
    free(t);
    report_free(&r);
}

static const rep_cmp_group *cmp_group(const rep_compare *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->g[i].name, name) == 0)
            return &c->g[i];
    fail_msg("no compared group %s", name);
    return NULL;
}

/* compare: 4 ranks on one node in base, on 2 nodes in new: not matched
 * (before: one group, 3840 against 3360, a 12.5% drop). */
static void compare_matches_nodes(void **state)
{
    (void)state;
    rep_compare c;
    memset(&c, 0, sizeof c);
    c.alpha = 0.05;
    model_from_csv(HEAD ONE_RANK R4N1, &c.base.rows, &c.base.model);
    model_from_csv(HEAD ONE_RANK R4N2, &c.new.rows, &c.new.model);
    char err[256];
    assert_int_equal(rep_compare_build(&c, err, sizeof err), 0);
    assert_int_equal(c.n, 3);
    const rep_cmp_group *one = cmp_group(&c, "sim (job train), mode -, precision -");
    assert_non_null(one->base);
    assert_non_null(one->new);
    const rep_cmp_group *b = cmp_group(&c, "sim (job train), mode -, precision -, 4 ranks");
    assert_non_null(b->base);
    assert_null(b->new);
    const rep_cmp_group *n = cmp_group(&c, "sim (job train), mode -, precision -, 4 ranks on 2 nodes");
    assert_null(n->base);
    assert_non_null(n->new);
    assert_near(c.geomean, 1, 1e-12);
    rep_compare_free(&c);
}

/* A `nodes` that is no whole number from 1 to the row's ranks: one line
 * naming file, line and column. */
static void bad_nodes_is_an_error(void **state)
{
    (void)state;
    const char *bad[] = {"0", "2.5", "3", "two"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char csv[1024], path[32], err[512], want[200];
        snprintf(csv, sizeof csv,
                 HEAD ROW("32", "1000", "1", "1") "2026-12-01T10:00:00Z,64,train,ok,sim,1200,20,8,images,3,0.95,2,%s,"
                                                  "0.1.0\n",
                 bad[i]);
        temp_file(path, csv);
        rep_rows rows = {0};
        assert_int_equal(rep_read_file(&rows, path, err, sizeof err), 0);
        unlink(path);
        assert_int_not_equal(rep_rows_validate(&rows, err, sizeof err), 0);
        snprintf(want, sizeof want,
                 ":3: column 'nodes' is '%s': the machines the run's ranks were on are a whole number >= 1 and at "
                 "most its ranks (2)",
                 bad[i]);
        assert_has(err, want);
        assert_null(strchr(err, '\n'));
        rep_rows_free(&rows);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nodes_are_their_own_group),
        cmocka_unit_test(only_across_nodes_is_not_measured),
        cmocka_unit_test(compare_matches_nodes),
        cmocka_unit_test(bad_nodes_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
