/* Result files as users edit and merge them: a large grid is modelled in
 * linear time, a run that did not sweep an axis keeps that axis ordered,
 * a knee names the value below it only when measured, and with no CI when
 * it was measured once; NaN and Infinity in JSONL are no measurements, a
 * spreadsheet's CSV reads; labels stay text in every output (Markdown
 * syntax, control characters on the terminal, bytes that are not UTF-8 in
 * HTML and SVG), and the charts of a large grid label no more than fits. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <dlgauge/plugin.h>

#include "model_csv.h"
#include "report.h"
#include "svg.h"

static const char head[] = "time,a,b,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                           "unit,repeats,start_time,version\n";

/* CPU seconds to model an na x nb grid of one row a cell, and its cells
 * in *cells. */
static double grid_seconds(int na, int nb, size_t *cells, double *best_thr, double *best_repeats)
{
    char *csv = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&csv, &len);
    assert_non_null(f);
    fputs(head, f);
    for (int a = 1; a <= na; a++)
        for (int b = 1; b <= nb; b++)
            fprintf(f, "t,%d,%d,j,r1,ok,w,%d,1,1,items,3,s%d-%d,0.1.0\n", a, b, 100 + a + b, a, b);
    assert_int_equal(fclose(f), 0);
    rep_rows rows;
    rep_model m;
    clock_t t0 = clock();
    model_from_csv(csv, &rows, &m);
    double cpu_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    free(csv);
    assert_int_equal(m.n, 1);
    *cells = m.g[0].ncells;
    *best_thr = m.g[0].cells[m.g[0].best].thr;
    *best_repeats = m.g[0].cells[m.g[0].best].repeats;
    rep_model_free(&m);
    rep_rows_free(&rows);
    return cpu_s;
}

/* 4000 cells of one row each, 80 x 50: pooling scanned every row for every
 * cell (18.6 G instructions for 1000 cells; 4000 took 49 s).  Judged
 * against an eighth of the grid on the same machine (8x the cells: ~8x
 * the time when linear, 64x when quadratic), not by a clock limit. */
static void test_large_grid_is_linear(void **state)
{
    (void)state;
    size_t cells, small_cells;
    double thr, repeats, small_thr, small_repeats;
    double small_s = grid_seconds(20, 25, &small_cells, &small_thr, &small_repeats); /* also warms the heap */
    double again = grid_seconds(20, 25, &small_cells, &small_thr, &small_repeats);
    small_s = again < small_s ? again : small_s;
    double cpu_s = grid_seconds(80, 50, &cells, &thr, &repeats);
    assert_int_equal(cells, 4000);
    assert_int_equal(small_cells, 500);
    assert_true(thr == 230 && repeats == 3);
    double ratio = cpu_s / (small_s > 1e-4 ? small_s : 1e-4);
    print_message("4000 cells modelled in %.3f s of CPU, %.1fx that of 500\n", cpu_s, ratio);
    assert_true(ratio < 30);
}

/* Run r2 set no memory limit (no `memory` tag: "-" on the axis).  The
 * axis still orders by size, "-" last: knee 2G (99 of 100), where it had
 * turned into text with no knee, and memory no resource to recommend by. */
static void test_untagged_run_keeps_axis_order(void **state)
{
    (void)state;
    static const char csv[] =
        "time,job,memory,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,version\n"
        "t,j,1G,r1,ok,w,50,1,1,images,3,0.1.0\n"
        "t,j,2G,r1,ok,w,99,1,1,images,3,0.1.0\n"
        "t,j,4G,r1,ok,w,100,1,1,images,3,0.1.0\n"
        "t,j,,r2,ok,w,100,1,1,images,3,0.1.0\n";
    rep_rows rows;
    rep_model m;
    model_from_csv(csv, &rows, &m);
    const rep_group *g = &m.g[0];
    assert_int_equal(g->naxes, 1);
    const rep_axis *ax = &g->axes[0];
    assert_int_equal(ax->kind, REP_AX_SIZE);
    assert_string_equal(ax->vals[ax->n - 1], "-");
    const rep_knee *k = &g->knees[0];
    assert_false(k->unordered);
    assert_string_equal(ax->vals[k->val], "2G");
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* The knee text of axis cpus in a one-group model of csv: it holds want
 * and the knee, and not absent. */
static void knee_says(const char *csv, const char *knee, const char *want, const char *absent)
{
    rep_report r = {.target = 0.95};
    model_from_csv(csv, &r.rows, &r.model);
    const rep_group *g = &r.model.g[0];
    long a = rep_group_axis(g, "cpus");
    assert_true(a >= 0);
    char text[640];
    rep_knee_text(&r, g, (size_t)a, text, sizeof text);
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
    print_message("%s\n", text);
    assert_non_null(strstr(text, knee));
    assert_non_null(strstr(text, want));
    assert_null(strstr(text, absent));
}

/* cpus 1 measured once (94, target 95): it has no CI, so nothing shows it
 * short of the target beyond one; the text had said it fell short beyond
 * its CI. */
static void test_knee_below_measured_once(void **state)
{
    (void)state;
    knee_says("time,cpus,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,repeats,version\n"
              "t,1,j,r1,ok,w,94,0,0,images,1,0.1.0\n"
              "t,2,j,r2,ok,w,96,1,1,images,3,0.1.0\n"
              "t,4,j,r2,ok,w,100,1,1,images,3,0.1.0\n",
              "cpus = 2: 96 images/s, 96.0% of the best", "; the value below was measured once: no CI",
              "beyond its CI");
}

/* Merged runs: cpus 1 ran with batch 32 only, so the slice through the
 * best (batch 64) holds cpus 4 and 8: the knee cpus = 4 is the smallest
 * value measured there, not one with "the value below" beyond its CI. */
static void test_knee_nothing_below_on_slice(void **state)
{
    (void)state;
    knee_says("time,batch,cpus,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,"
              "repeats,version\n"
              "t,32,1,j,r1,ok,w,40,1,1,images,3,0.1.0\n"
              "t,64,4,j,r2,ok,w,98,1,1,images,3,0.1.0\n"
              "t,64,8,j,r2,ok,w,100,1,1,images,3,0.1.0\n",
              "cpus = 4: 98 images/s", "; it is the smallest value measured", "the value below");
}

/* json-c reads NaN, Infinity and 1e999 as doubles; the json sink writes
 * null instead.  A needed field so written is an error naming the line,
 * as "nan" in a CSV cell is; it had made the NaN cell the best. */
static void test_jsonl_nonfinite_is_no_number(void **state)
{
    (void)state;
    static const char *const bad[] = {"NaN", "Infinity", "-Infinity", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[1024], path[32], err[512];
        snprintf(text, sizeof text,
                 "{\"measurement\":\"dlgauge_result\",\"tags\":{\"workload\":\"w\",\"status\":\"ok\",\"a\":\"1\"},"
                 "\"fields\":{\"throughput\":10.0,\"throughput_ci95\":1.0,\"repeats\":3,\"version\":\"0.1.0\","
                 "\"au\":%s}}\n"
                 "{\"measurement\":\"dlgauge_result\",\"tags\":{\"workload\":\"w\",\"status\":\"ok\",\"a\":\"2\"},"
                 "\"fields\":{\"throughput\":%s,\"throughput_ci95\":1.0,\"repeats\":3,\"version\":\"0.1.0\"}}\n",
                 bad[i], bad[i]);
        temp_file(path, text);
        rep_rows rows = {0};
        assert_int_equal(rep_read_file(&rows, path, err, sizeof err), 0);
        double v;
        assert_false(rep_num(&rows.v[0], "au", &v)); /* not measured, not NaN */
        assert_int_not_equal(rep_rows_validate(&rows, err, sizeof err), 0);
        char want[128];
        snprintf(want, sizeof want, "%s:2: missing or non-numeric column 'throughput'", path);
        assert_non_null(strstr(err, want));
        rep_rows_free(&rows);
        unlink(path);
    }
}

/* A value that underflows (1e-310, a subnormal) is a tiny number, not
 * "non-numeric" (strtod's ERANGE); one that overflows (1e999) stays none. */
static void test_underflow_is_a_number(void **state)
{
    (void)state;
    char path[32], err[512];
    temp_file(path, "time,workload,status,throughput,repeats,version,au,lat\n"
                    "2026-11-29T10:00:00Z,w,ok,10,3,0.1.0,1e-310,1e999\n");
    rep_rows rows = {0};
    assert_int_equal(rep_read_file(&rows, path, err, sizeof err), 0);
    double v = -1;
    assert_true(rep_num(&rows.v[0], "au", &v));
    assert_true(v > 0 && v < 1e-300);
    assert_false(rep_num(&rows.v[0], "lat", &v));
    rep_rows_free(&rows);
    unlink(path);
}

/* err of rep_rows_validate over this CSV text (which must fail); path:
 * the temporary file it was read from (removed). */
static void validate_fails(const char *text, char *path, char *err, size_t errlen)
{
    temp_file(path, text);
    rep_rows rows = {0};
    assert_int_equal(rep_read_file(&rows, path, err, errlen), 0);
    assert_int_equal(rep_rows_validate(&rows, err, errlen), -DLG_EINVAL);
    assert_null(strchr(err, '\n'));
    rep_rows_free(&rows);
    unlink(path);
}

/* One group's rows counting different units (a bytes row among images)
 * are refused, naming both rows and units: pooled, "5 G images/s" became
 * the best.  Other groups may count what they like. */
static void test_mixed_units_in_a_group_refused(void **state)
{
    (void)state;
    static const char h[] = "time,cpus,job,mode,status,workload,throughput,repeats,throughput_ci95,"
                            "throughput_stddev,unit,version\n";
    char csv[1024], path[32], err[512], want[256];
    snprintf(csv, sizeof csv,
             "%s2026-11-29T10:00:00Z,1,j,train,ok,sim,100,3,2.5,1,images,0.1.0\n"
             "2026-11-29T10:00:01Z,1,k,train,ok,other,7e9,3,2.5,1,bytes,0.1.0\n"
             "2026-11-29T10:00:02Z,2,j,train,ok,sim,5000000000.0,3,2.5,1,bytes,0.1.0\n"
             "2026-11-29T10:00:03Z,4,j,train,ok,sim,200,3,2.5,1,images,0.1.0\n",
             h);
    validate_fails(csv, path, err, sizeof err);
    snprintf(want, sizeof want, "%s:4: unit 'bytes', but %s:2 of the same workload sim (job j) counts 'images'", path,
             path);
    assert_non_null(strstr(err, want));
    /* the same rows with the bytes row in a job of its own: two groups, accepted */
    snprintf(csv, sizeof csv,
             "%s2026-11-29T10:00:00Z,1,j,train,ok,sim,100,3,2.5,1,images,0.1.0\n"
             "2026-11-29T10:00:02Z,2,b,train,ok,sim,5000000000.0,3,2.5,1,bytes,0.1.0\n",
             h);
    rep_rows rows;
    rep_model m;
    model_from_csv(csv, &rows, &m);
    assert_int_equal(m.n, 2);
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* A negative throughput, CI or sd on a measured row is refused, naming
 * the row; a failed row's figures are not read. */
static void test_negative_rate_refused(void **state)
{
    (void)state;
    static const char *const col[] = {"throughput", "throughput_ci95", "throughput_stddev"};
    static const char *const row[] = {"-5,3,0.1,0.05", "5,3,-0.1,0.05", "5,3,0.1,-0.05"};
    for (size_t i = 0; i < 3; i++) {
        char csv[1024], path[32], err[512], want[160];
        snprintf(csv, sizeof csv,
                 "time,cpus,job,status,workload,throughput,repeats,throughput_ci95,throughput_stddev,unit,version\n"
                 "2026-11-29T10:00:00Z,2,j,ok,sim,1,3,0.02,0.01,images,0.1.0\n"
                 "2026-11-29T10:00:01Z,1,j,ok,sim,%s,images,0.1.0\n",
                 row[i]);
        validate_fails(csv, path, err, sizeof err);
        snprintf(want, sizeof want, "%s:3: column '%s' is '-", path, col[i]);
        assert_non_null(strstr(err, want));
    }
    rep_rows rows;
    rep_model m;
    model_from_csv("time,cpus,job,status,workload,throughput,repeats,throughput_ci95,throughput_stddev,unit,version\n"
                   "2026-11-29T10:00:00Z,2,j,ok,sim,1,3,0.02,0.01,images,0.1.0\n"
                   "2026-11-29T10:00:01Z,1,j,crashed,sim,-1,0,-1,-1,images,0.1.0\n",
                   &rows, &m);
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* A JSONL tag that is empty ("a": "") sits at "-" on its axis, as a
 * CSV's empty cell does: its cell looked for "-", which the axis lacked,
 * and indexed the axis at -1 (the report crashed). */
static void test_jsonl_empty_tag_is_dash(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv("{\"measurement\":\"dlgauge_result\",\"tags\":{\"workload\":\"w\",\"status\":\"ok\",\"job\":\"j\","
                   "\"a\":\"1\"},\"fields\":{\"throughput\":10.0,\"throughput_ci95\":1.0,\"repeats\":3,"
                   "\"version\":\"0.1.0\"}}\n"
                   "{\"measurement\":\"dlgauge_result\",\"tags\":{\"workload\":\"w\",\"status\":\"ok\",\"job\":\"j\","
                   "\"a\":\"\"},\"fields\":{\"throughput\":20.0,\"throughput_ci95\":1.0,\"repeats\":3,"
                   "\"version\":\"0.1.0\"}}\n",
                   &rows, &m);
    assert_int_equal(m.n, 1);
    const rep_group *g = &m.g[0];
    assert_int_equal(g->naxes, 1);
    assert_int_equal(g->axes[0].n, 2);
    assert_int_equal(g->ncells, 2);
    for (size_t c = 0; c < g->ncells; c++) {
        assert_true(g->cells[c].coord[0] < g->axes[0].n);
        const char *v = g->axes[0].vals[g->cells[c].coord[0]];
        assert_true(g->cells[c].thr == (strcmp(v, "-") == 0 ? 20.0 : 10.0));
    }
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* A spreadsheet's "CSV UTF-8" (byte-order mark, CRLF) reads as written;
 * the mark had made the header "not a dlgauge results file". */
static void test_csv_byte_order_mark(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv("\xef\xbb\xbftime,a,job,status,workload,throughput,throughput_ci95,repeats,version\r\n"
                   "t,1,j,ok,w,10,1,3,0.1.0\r\n",
                   &rows, &m);
    assert_int_equal(rows.n, 1);
    double v;
    assert_true(rep_num(&rows.v[0], "throughput", &v) && v == 10);
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* HTML and SVG are UTF-8: a byte that is not (a Latin-1 label) becomes
 * U+FFFD; it had made the chart's SVG an XML error in the browser. */
static void test_xml_text_is_utf8(void **state)
{
    (void)state;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    rep_xml_esc(f, "ger\xe4t <\xc3\xa9> \xe2\x82 \xed\xa0\x80 \xf0\x9f\x98\x80&");
    assert_int_equal(fclose(f), 0);
    assert_string_equal(out, "ger\xef\xbf\xbdt &lt;\xc3\xa9&gt; \xef\xbf\xbd\xef\xbf\xbd "
                             "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xf0\x9f\x98\x80&amp;");
    free(out);
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

/* 6 x 40 values = 240 cells: the per-cell chart labels every 11th cell
 * (22 labels, in the table's order) and the curve over 40 values every
 * other one; every label had been drawn, 240 overprinting 2 px apart. */
static void test_chart_labels_readable(void **state)
{
    (void)state;
    char *csv = NULL, *svg = NULL;
    size_t len = 0, slen = 0;
    FILE *f = open_memstream(&csv, &len);
    assert_non_null(f);
    fputs(head, f);
    for (int a = 1; a <= 32; a *= 2)
        for (int b = 1; b <= 40; b++)
            fprintf(f, "t,%d,%d,j,r1,ok,w,%d,1,1,items,3,s%d-%d,0.1.0\n", a, b, 100 * a + b, a, b);
    assert_int_equal(fclose(f), 0);
    rep_report r = {.target = 0.95};
    model_from_csv(csv, &r.rows, &r.model);
    free(csv);
    const rep_group *g = &r.model.g[0];
    assert_int_equal(g->ncells, 240);
    f = open_memstream(&svg, &slen);
    rep_svg_stack(f, g);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(count(svg, "rotate("), 22);
    assert_non_null(strstr(svg, ">a=1 b=1</text>"));
    assert_non_null(strstr(svg, ">a=1 b=12</text>"));
    assert_null(strstr(svg, ">a=1 b=2</text>"));
    free(svg);
    f = open_memstream(&svg, &slen);
    rep_svg_curve(f, &r, g, 1); /* b: 40 values */
    assert_int_equal(fclose(f), 0);
    assert_int_equal(count(svg, "rotate("), 20);
    free(svg);
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
}

/* The Markdown (or, markdown false, the terminal text) report of these
 * rows under head. */
static char *report_of(const char *rows, bool markdown)
{
    rep_report r = {.target = 0.95};
    char csv[1024];
    snprintf(csv, sizeof csv, "%s%s", head, rows);
    model_from_csv(csv, &r.rows, &r.model);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    if (markdown)
        rep_out_markdown(f, &r);
    else
        rep_out_text(f, &r, false);
    assert_int_equal(fclose(f), 0);
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
    return out;
}

/* A label with a newline (a quoted CSV cell) or an escape sequence: a
 * space on the terminal, where they had broken the table row and driven
 * the terminal (no colour was asked for). */
static void test_text_no_control_characters(void **state)
{
    (void)state;
    char *txt = report_of("t,\"two\nlines\",1,j,r1,ok,w,30,1,1,items,3,s3,0.1.0\n"
                          "t,\033]0;title\a\033[31mred,1,j,r1,ok,w,20,1,1,items,3,s2,0.1.0\n",
                          false);
    assert_null(strchr(txt, '\033'));
    assert_null(strchr(txt, '\a'));
    assert_non_null(strstr(txt, "\n  two lines "));
    assert_non_null(strstr(txt, "\n    a=two lines b=1: compute-bound"));
    assert_non_null(strstr(txt, "\n   ]0;title  [31mred "));
    free(txt);
}

static void test_markdown_labels_stay_text(void **state)
{
    (void)state;
    char *md = report_of("t,\"x|<b>&amp;\\|\",1,j,r1,ok,w,10,1,1,items,3,s1,0.1.0\n"
                         "t,`q`,1,j,r1,ok,w,20,1,1,items,3,s2,0.1.0\n"
                         "t,\"two\nlines\",1,j,r1,ok,w,30,1,1,items,3,s3,0.1.0\n",
                         true);
    /* in the table: one cell, no HTML tag, no entity, no line break */
    assert_non_null(strstr(md, "| x\\|\\<b>\\&amp;\\\\\\| | 1 | 10 items/s |"));
    assert_non_null(strstr(md, "| two lines | 1 | 30 items/s |"));
    /* in the bottleneck list: code spans that a backtick in the label does not end */
    assert_non_null(strstr(md, "- ``a=`q` b=1``: **"));
    assert_non_null(strstr(md, "- `a=two lines b=1`: **"));
    free(md);
}

/* Labels that Markdown would format stay as written: "*fast*" and "_x_"
 * were emphasis, "[l](u)" a link; "io_uring" needs no escape. */
static void test_markdown_labels_do_not_format(void **state)
{
    (void)state;
    char *md = report_of("t,*fast*,1,j,r1,ok,w,10,1,1,items,3,s1,0.1.0\n"
                         "t,_x_ [l](u) ~~s~~,1,j,r1,ok,w,20,1,1,items,3,s2,0.1.0\n"
                         "t,io_uring,1,j,r1,ok,w,30,1,1,items,3,s3,0.1.0\n",
                         true);
    assert_non_null(strstr(md, "| \\*fast\\* | 1 | 10 items/s |"));
    assert_non_null(strstr(md, "| \\_x\\_ \\[l\\](u) \\~\\~s\\~\\~ | 1 | 20 items/s |"));
    assert_non_null(strstr(md, "| io_uring | 1 | 30 items/s |"));
    free(md);
}

/* Two runs merged: the cell a=1 ran in r1 and was OOM-killed in r2 (whose
 * row was read from both of its sinks): its figures are r1's, and the note
 * says one run failed, where it had looked like a clean cell. */
static void test_failed_run_of_ok_cell_noted(void **state)
{
    (void)state;
    char *txt = report_of("t,1,1,j,r1,ok,w,10,1,1,items,3,s1,0.1.0\n"
                          "t,2,1,j,r1,ok,w,20,1,1,items,3,s2,0.1.0\n"
                          "t,1,1,j,r2,oom,w,,,,items,,s3,0.1.0\n"
                          "t,1,1,j,r2,oom,w,,,,items,,s3,0.1.0\n",
                          false);
    assert_non_null(strstr(txt, "1 failed run (oom)"));
    assert_null(strstr(txt, "2 failed runs"));
    free(txt);
}

/* Three runs merged, the cell a=1 OOM-killed in r2 and timed out in r3:
 * the note names both statuses, where it had named only the last. */
static void test_failed_runs_name_each_status(void **state)
{
    (void)state;
    char *txt = report_of("t,1,1,j,r1,ok,w,10,1,1,items,3,s1,0.1.0\n"
                          "t,2,1,j,r1,ok,w,20,1,1,items,3,s2,0.1.0\n"
                          "t,1,1,j,r2,oom,w,,,,items,,s3,0.1.0\n"
                          "t,1,1,j,r3,timeout,w,,,,items,,s4,0.1.0\n"
                          "t,1,1,j,r4,oom,w,,,,items,,s5,0.1.0\n",
                          false);
    assert_non_null(strstr(txt, "3 failed runs (oom, timeout)"));
    free(txt);
}

/* A run stopped before a cell's first repetition writes a partial row
 * without throughput: the report had refused the whole file ("missing or
 * non-numeric column 'throughput'"); the cell is a failed one, its run
 * merged with one that measured it keeps that run's figures. */
static void test_partial_row_without_rate(void **state)
{
    (void)state;
    char *txt = report_of("t,1,1,j,r1,ok,w,10,1,1,items,3,s1,0.1.0\n"
                          "t,2,1,j,r1,partial,w,,,,items,0,s2,0.1.0\n"
                          "t,1,1,j,r2,partial,w,,,,items,0,s3,0.1.0\n",
                          false);
    assert_non_null(strstr(txt, "1 failed run (partial)"));
    assert_non_null(strstr(txt, "partial"));
    assert_null(strstr(txt, " 0 items/s"));
    free(txt);
}

/* A repetition cut short (partial, repeats 0) and the whole one --resume
 * measured after it: the cell is the whole one's, not a pool of both
 * (98.61 and 96.95 had read "97.78 ... n 2"); alone, a partial row is the
 * cell's figure. */
static void test_partial_beside_complete(void **state)
{
    (void)state;
    char *txt = report_of("t,1,1,j,r1,partial,w,96.95,1,1,items,0,s1,0.1.0\n"
                          "t,1,1,j,r1,ok,w,98.61,1,1,items,1,s2,0.1.0\n"
                          "t,2,1,j,r1,partial,w,50.5,1,1,items,0,s3,0.1.0\n",
                          false);
    assert_non_null(strstr(txt, "98.61"));
    assert_null(strstr(txt, "97.78"));
    assert_non_null(strstr(txt, "50.5"));
    free(txt);
}

/* A cell whose only figure is a repetition cut short (partial, 130) is
 * no best beside cells measured whole: it had been the best and the knee
 * at a = 4, unmarked, and the recommendation sized for it.  It is left
 * out of the best and the knees, and said so in its note and the group's
 * text; its knee text names why a smaller value is not ranked. */
static void test_partial_cell_not_best(void **state)
{
    (void)state;
    const char *rows = "t,1,1,j,r2,ok,w,96,2,0.8,items,3,s2,0.1.0\n"
                       "t,2,1,j,r1,ok,w,100,2,0.8,items,3,s3,0.1.0\n"
                       "t,4,1,j,r1,partial,w,130,0,0,items,0,s4,0.1.0\n";
    char csv[1024];
    snprintf(csv, sizeof csv, "%s%s", head, rows);
    rep_rows rs;
    rep_model m;
    model_from_csv(csv, &rs, &m);
    const rep_group *g = &m.g[0];
    assert_true(g->has_best);
    assert_true(g->cells[g->best].thr == 100);
    long a = rep_group_axis(g, "a");
    assert_string_equal(g->axes[a].vals[g->knees[a].val], "1");
    rep_model_free(&m);
    rep_rows_free(&rs);
    char *txt = report_of(rows, false);
    assert_non_null(strstr(txt, "partial: 1 of 3 measured cells were cut short"));
    assert_non_null(strstr(txt, "compute-bound  partial"));
    free(txt);
    /* the partial cell below the knee: the knee text says why it is not it */
    txt = report_of("t,1,1,j,r1,partial,w,130,0,0,items,0,s1,0.1.0\n"
                    "t,2,1,j,r1,ok,w,99,2,0.8,items,3,s2,0.1.0\n"
                    "t,4,1,j,r1,ok,w,100,2,0.8,items,3,s3,0.1.0\n",
                    false);
    assert_non_null(strstr(txt, "a = 2: 99"));
    assert_non_null(strstr(txt, "the smaller values were cut short (partial), not ranked"));
    free(txt);
}

/* The bottleneck list follows the table (axis order), not the file's rows:
 * a=3 was written first and had been listed first. */
static void test_bottlenecks_in_table_order(void **state)
{
    (void)state;
    for (int md = 0; md < 2; md++) {
        char *out = report_of("t,3,1,j,r1,ok,w,30,1,1,items,3,s1,0.1.0\n"
                              "t,1,1,j,r1,ok,w,10,1,1,items,3,s2,0.1.0\n"
                              "t,2,1,j,r1,ok,w,20,1,1,items,3,s3,0.1.0\n",
                              md);
        const char *bn = strstr(out, md ? "**Bottlenecks:**" : "bottlenecks:");
        assert_non_null(bn);
        const char *a1 = strstr(bn, "a=1 b=1"), *a2 = strstr(bn, "a=2 b=1"), *a3 = strstr(bn, "a=3 b=1");
        assert_true(a1 && a2 && a3 && a1 < a2 && a2 < a3);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_grid_is_linear),
        cmocka_unit_test(test_untagged_run_keeps_axis_order),
        cmocka_unit_test(test_knee_below_measured_once),
        cmocka_unit_test(test_knee_nothing_below_on_slice),
        cmocka_unit_test(test_jsonl_nonfinite_is_no_number),
        cmocka_unit_test(test_underflow_is_a_number),
        cmocka_unit_test(test_mixed_units_in_a_group_refused),
        cmocka_unit_test(test_negative_rate_refused),
        cmocka_unit_test(test_jsonl_empty_tag_is_dash),
        cmocka_unit_test(test_markdown_labels_stay_text),
        cmocka_unit_test(test_markdown_labels_do_not_format),
        cmocka_unit_test(test_text_no_control_characters),
        cmocka_unit_test(test_csv_byte_order_mark),
        cmocka_unit_test(test_xml_text_is_utf8),
        cmocka_unit_test(test_chart_labels_readable),
        cmocka_unit_test(test_failed_run_of_ok_cell_noted),
        cmocka_unit_test(test_failed_runs_name_each_status),
        cmocka_unit_test(test_partial_row_without_rate),
        cmocka_unit_test(test_partial_beside_complete),
        cmocka_unit_test(test_partial_cell_not_best),
        cmocka_unit_test(test_bottlenecks_in_table_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
