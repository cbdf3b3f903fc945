/* The per-group cells tables: J/item per cell beside throughput, pooled
 * over the cell's runs, marked "cpu" where it is the CPU packages' (RAPL),
 * a column only in groups where some cell has a figure; the terminal,
 * Markdown and HTML outputs show the same numbers. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_csv.h"
#include "report.h"

/* Three groups:
 *  sim (GPU): cpus 2 two runs, 400 J / 400 items = 1 (their CPU packages'
 *    figure is not shown); cpus 4 0.25 J/item x 400 + 125 J / 100 items
 *    = 0.45 (the runs' mean, 0.75, would be wrong); cpus 8 only the
 *    packages' 80 J / 100 items = 0.8 cpu; cpus 16 none; cpus 32 oom;
 *  preprocess (CPU only): cpus 2 400 J / 400 = 1 cpu, cpus 4 180 / 400
 *    = 0.45 cpu;
 *  io-pipeline: no energy measured. */
static const char cells_csv[] =
    "time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,items,"
    "repeats,wall_s,au,energy_j,energy_per_item_j,cpu_energy_j,version\n"
    "2026-12-01T10:00:01Z,2,lab,g,train,run1,ok,sim,100,0,0,images,200,1,2,0.9,100,,500,0.1.0\n"
    "2026-12-01T10:00:02Z,2,lab,g,train,run2,ok,sim,100,0,0,images,200,1,2,0.9,300,,500,0.1.0\n"
    "2026-12-01T10:00:03Z,4,lab,g,train,run1,ok,sim,200,0,0,images,400,1,2,0.9,,0.25,,0.1.0\n"
    "2026-12-01T10:00:04Z,4,lab,g,train,run2,ok,sim,200,0,0,images,100,1,0.5,0.9,125,,,0.1.0\n"
    "2026-12-01T10:00:05Z,8,lab,g,train,run1,ok,sim,300,0,0,images,100,1,2,0.9,,,80,0.1.0\n"
    "2026-12-01T10:00:06Z,16,lab,g,train,run1,ok,sim,300,0,0,images,600,1,2,0.9,,,,0.1.0\n"
    "2026-12-01T10:00:07Z,32,lab,g,train,run1,oom,sim,,,,,,,,,,,,0.1.0\n"
    "2026-12-01T10:00:08Z,2,lab,p,-,run1,ok,preprocess,100,0,0,images,200,1,2,,,,100,0.1.0\n"
    "2026-12-01T10:00:09Z,2,lab,p,-,run2,ok,preprocess,100,0,0,images,200,1,2,,,,300,0.1.0\n"
    "2026-12-01T10:00:10Z,4,lab,p,-,run1,ok,preprocess,200,0,0,images,400,1,2,,,,180,0.1.0\n"
    "2026-12-01T10:00:11Z,2,lab,n,-,run1,ok,io-pipeline,100,0,0,images,200,1,2,0.9,,,,0.1.0\n"
    "2026-12-01T10:00:12Z,4,lab,n,-,run1,ok,io-pipeline,200,0,0,images,400,1,2,0.9,,,,0.1.0\n";

static int setup(void **state)
{
    rep_report *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->target = 0.95;
    model_from_csv(cells_csv, &r->rows, &r->model);
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    rep_report *r = *state;
    rep_model_free(&r->model);
    rep_rows_free(&r->rows);
    free(r);
    return 0;
}

static const rep_group *group(const rep_report *r, const char *workload)
{
    for (size_t i = 0; i < r->model.n; i++)
        if (strcmp(r->model.g[i].workload, workload) == 0)
            return &r->model.g[i];
    fail_msg("no group %s", workload);
    return NULL;
}

/* The column headed head, or -1. */
static long column(const rep_table *t, const char *head)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (strcmp(t->cell[c], head) == 0)
            return (long)c;
    return -1;
}

/* The text in column head of the row whose first column (cpus) is cpus. */
static const char *cell_at(const rep_table *t, const char *cpus, const char *head)
{
    long c = column(t, head);
    if (c < 0)
        fail_msg("no column %s", head);
    for (size_t row = 1; row < t->nrows; row++)
        if (strcmp(t->cell[row * t->ncols], cpus) == 0)
            return t->cell[row * t->ncols + (size_t)c];
    fail_msg("no row cpus = %s", cpus);
    return NULL;
}

/* GPU energy pooled over the runs (all joules over all items), beside
 * throughput (after n), right-aligned; a cell with only the packages'
 * figure is marked cpu, one without any and a failed one show "-". */
static void test_cells_gpu_energy(void **state)
{
    rep_report *r = *state;
    rep_table t;
    assert_int_equal(rep_table_cells(&t, r, group(r, "sim")), 0);
    assert_int_equal(column(&t, "J/item"), column(&t, "n") + 1);
    assert_true(t.right[column(&t, "J/item")]);
    assert_string_equal(cell_at(&t, "2", "J/item"), "1");
    assert_string_equal(cell_at(&t, "4", "J/item"), "0.45");
    assert_string_equal(cell_at(&t, "8", "J/item"), "0.8 cpu");
    assert_string_equal(cell_at(&t, "16", "J/item"), "-");
    assert_string_equal(cell_at(&t, "32", "J/item"), "-");
    assert_string_equal(cell_at(&t, "32", "throughput"), "oom");
    assert_string_equal(cell_at(&t, "4", "AU"), "0.90"); /* the columns after it stay in place */
    rep_table_free(&t);
}

/* A CPU-only group: the packages' pooled figure, marked cpu. */
static void test_cells_cpu_energy(void **state)
{
    rep_report *r = *state;
    rep_table t;
    assert_int_equal(rep_table_cells(&t, r, group(r, "preprocess")), 0);
    assert_string_equal(cell_at(&t, "2", "J/item"), "1 cpu");
    assert_string_equal(cell_at(&t, "4", "J/item"), "0.45 cpu");
    rep_table_free(&t);
}

/* A group counting bytes (stream): 50 J of the packages over 1e10 bytes
 * is 5 J/GB, under a J/GB head (not 5e-09 under J/item). */
static void test_cells_energy_per_gb(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,"
                   "throughput_stddev,unit,items,repeats,wall_s,cpu_energy_j,version\n"
                   "2026-12-01T10:00:01Z,2,lab,s,-,run1,ok,stream,5e9,0,0,bytes,1e10,1,2,50,0.1.0\n",
                   &r.rows, &r.model);
    rep_table t;
    assert_int_equal(rep_table_cells(&t, &r, group(&r, "stream")), 0);
    assert_int_equal(column(&t, "J/item"), -1);
    assert_string_equal(cell_at(&t, "2", "J/GB"), "5 cpu");
    rep_table_free(&t);
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
}

/* The column is the group's: the report's energy groups have it, the
 * group without energy keeps exactly the columns it had (no empty one). */
static void test_cells_energy_column_per_group(void **state)
{
    rep_report *r = *state;
    static const char *const heads[] = {"cpus", "throughput", "+-CI95", "n", "AU", "data wait", "CPU busy",
                                        "read MB/s", "bottleneck", "note"};
    size_t nh = sizeof heads / sizeof *heads, with = 0;
    for (size_t gi = 0; gi < r->model.n; gi++) {
        rep_table t;
        assert_int_equal(rep_table_cells(&t, r, &r->model.g[gi]), 0);
        with += column(&t, "J/item") >= 0;
        if (strcmp(r->model.g[gi].workload, "io-pipeline") == 0) {
            assert_int_equal(t.ncols, nh);
            for (size_t c = 0; c < nh; c++)
                assert_string_equal(t.cell[c], heads[c]);
            assert_string_equal(cell_at(&t, "4", "throughput"), "200 images/s");
        }
        rep_table_free(&t);
    }
    assert_int_equal(with, 2);
}

/* One output into a string. */
static char *render(const rep_report *r, int kind)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (kind == 0)
        rep_out_text(f, r, false);
    else if (kind == 1)
        rep_out_markdown(f, r);
    else
        rep_out_html(f, r);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* The HTML (and Markdown, terminal) tables carry the same figures: a
 * J/item header per energy group, each pooled number in its cell. */
static void test_cells_energy_in_outputs(void **state)
{
    rep_report *r = *state;
    char *html = render(r, 2), *md = render(r, 1), *text = render(r, 0);
    assert_int_equal(count(html, "<th class=\"\">J/item</th>"), 2);
    assert_int_equal(count(html, "<td class=\"r\">0.45</td>"), 1);
    assert_int_equal(count(html, "<td class=\"r\">0.8 cpu</td>"), 1);
    assert_int_equal(count(html, "<td class=\"r\">1 cpu</td>"), 1);
    assert_int_equal(count(html, "<td class=\"r\">0.45 cpu</td>"), 1);
    assert_int_equal(count(md, "| n | J/item | AU |"), 2);
    assert_int_equal(count(md, "| 0.45 cpu |"), 1);
    assert_int_equal(count(md, "| 1 cpu |"), 1);
    assert_non_null(strstr(md, "| 2 | 0.45 | 0.90 |")); /* n, J/item, AU of sim's cpus 4 */
    assert_int_equal(count(text, "J/item"), 2);
    assert_int_equal(count(text, "0.45 cpu"), 1);
    free(html);
    free(md);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cells_gpu_energy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cells_cpu_energy, setup, teardown),
        cmocka_unit_test(test_cells_energy_per_gb),
        cmocka_unit_test_setup_teardown(test_cells_energy_column_per_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cells_energy_in_outputs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
