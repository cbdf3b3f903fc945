/* The per-cell AU / data-wait chart draws only what each cell measured: a
 * sleep cell ("waiting", no AU) had been a 100% green "AU (compute)" bar
 * (1 - data wait drawn as AU); a cell with neither gets no bar, a group
 * with neither no chart; the bars stay within 100% and the legend names
 * exactly the shares drawn. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_csv.h"
#include "report.h"
#include "svg.h"

static const char head[] = "time,cpus,job,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                           "unit,repeats,wall_s,au,data_wait_fraction,cpu_user_share,start_time,version\n";

#define GREEN "#27ae60" /* AU */
#define BLUE "#85c1e9"  /* 1 - data wait, no AU */
#define ORANGE "#e67e22" /* data wait */
#define GREY "#bdc3c7"  /* the rest */

/* The plot's top and height in the SVG (svg.c: H 330, MT 46, MB 64), and
 * the legend's row. */
enum { PLOT_TOP = 46, PLOT_H = 220, LEGEND_Y = 29 };

typedef struct bars {
    size_t n;       /* bars of the colour in the plot */
    double height;  /* their heights summed, px */
    double top;     /* the highest (smallest) y of any bar */
} bars;

/* The plot's <rect>s filled with colour (not the white background, nor
 * the legend's 10 px swatches). */
static bars bars_of(const char *svg, const char *colour)
{
    bars b = {0, 0, 1e9};
    for (const char *p = svg; (p = strstr(p, "<rect ")) != NULL; p++) {
        double x, y, w, h;
        char fill[16];
        if (sscanf(p, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\" fill=\"%15[^\"]\"", &x, &y, &w, &h,
                   fill) != 5 || strcmp(fill, "#ffffff") == 0 || (y == LEGEND_Y && h == 10))
            continue;
        b.top = y < b.top ? y : b.top;
        if (strcmp(fill, colour) == 0) {
            b.n++;
            b.height += h;
        }
    }
    return b;
}

static char *stack_of(const char *rows, rep_report *r)
{
    char csv[2048];
    snprintf(csv, sizeof csv, "%s%s", head, rows);
    *r = (rep_report){.target = 0.95};
    model_from_csv(csv, &r->rows, &r->model);
    char *svg = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&svg, &len);
    assert_non_null(f);
    rep_svg_stack(f, &r->model.g[0]);
    assert_int_equal(fclose(f), 0);
    return svg;
}

static void report_free(rep_report *r)
{
    rep_model_free(&r->model);
    rep_rows_free(&r->rows);
}

/* Two sleep cells: no AU, no data wait, CPUs 1% busy: "waiting".  The bar
 * is 1 - data wait in its own colour and legend entry, no AU anywhere. */
static void test_waiting_cell_is_not_compute(void **state)
{
    (void)state;
    rep_report r;
    char *svg = stack_of("t,1,j,r1,ok,sleep,98,1,1,steps,3,3,,0,0.01,s1,0.1.0\n"
                         "t,2,j,r1,ok,sleep,99,1,1,steps,3,3,,0.25,0.01,s2,0.1.0\n",
                         &r);
    assert_int_equal(r.model.g[0].cells[0].bn, REP_BN_WAITING);
    assert_int_equal(bars_of(svg, GREEN).n, 0);
    assert_null(strstr(svg, "AU (compute)"));
    bars blue = bars_of(svg, BLUE), orange = bars_of(svg, ORANGE);
    assert_int_equal(blue.n, 2);
    assert_int_equal(orange.n, 1);
    assert_true(blue.height + orange.height > 2 * PLOT_H - 0.2 && blue.height + orange.height < 2 * PLOT_H + 0.2);
    assert_non_null(strstr(svg, ">1 - data wait (no AU)</text>"));
    assert_non_null(strstr(svg, ">data wait</text>"));
    assert_non_null(strstr(svg, ">sleep: data wait per cell</text>"));
    assert_string_equal(rep_svg_stack_title(&r.model.g[0]), "data wait per cell");
    free(svg);
    report_free(&r);
}

/* AU 0.6 and data wait 0.3: 132 + 66 + 22 px; AU 0.9 and data wait 0.3
 * (measured over different spans) stop at 100%, not 120% above the axis. */
static void test_au_cells_stay_within_the_axis(void **state)
{
    (void)state;
    rep_report r;
    char *svg = stack_of("t,1,j,r1,ok,sim,50,1,1,images,3,3,0.6,0.3,0.97,s1,0.1.0\n"
                         "t,2,j,r1,ok,sim,99,1,1,images,3,3,0.9,0.3,0.97,s2,0.1.0\n",
                         &r);
    bars green = bars_of(svg, GREEN), orange = bars_of(svg, ORANGE), grey = bars_of(svg, GREY);
    assert_int_equal(green.n, 2);
    assert_true(green.height > 1.5 * PLOT_H - 0.2 && green.height < 1.5 * PLOT_H + 0.2);
    assert_true(orange.height > 0.4 * PLOT_H - 0.2 && orange.height < 0.4 * PLOT_H + 0.2);
    assert_int_equal(grey.n, 1);
    assert_true(green.top >= PLOT_TOP - 0.05 && orange.top >= PLOT_TOP - 0.05);
    assert_null(strstr(svg, "no AU)"));
    assert_non_null(strstr(svg, ">AU (compute)</text>"));
    assert_non_null(strstr(svg, ">rest of the step</text>"));
    free(svg);
    report_free(&r);
}

/* AU 0.9996, data wait 0.0001 (a real io-pipeline cell): one green bar;
 * the legend had named a data wait and a rest no eye could see. */
static void test_invisible_shares_not_in_legend(void **state)
{
    (void)state;
    rep_report r;
    char *svg = stack_of("t,1,j,r1,ok,sim,50,1,1,images,3,3,0.9996,0.0001,0.01,s1,0.1.0\n", &r);
    assert_int_equal(bars_of(svg, GREEN).n, 1);
    assert_int_equal(bars_of(svg, ORANGE).n + bars_of(svg, GREY).n, 0);
    assert_non_null(strstr(svg, ">AU (compute)</text>"));
    assert_null(strstr(svg, ">data wait</text>"));
    assert_null(strstr(svg, ">rest of the step</text>"));
    free(svg);
    report_free(&r);
}

/* Neither measured in any cell: no bar, and the HTML says so instead of a
 * chart (the one chart left is the throughput curve). */
static void test_nothing_measured_no_chart(void **state)
{
    (void)state;
    rep_report r;
    char *svg = stack_of("t,1,j,r1,ok,sleep,98,1,1,steps,3,3,,,0.01,s1,0.1.0\n"
                         "t,2,j,r1,ok,sleep,99,1,1,steps,3,3,,,0.01,s2,0.1.0\n",
                         &r);
    assert_int_equal(bars_of(svg, GREEN).n + bars_of(svg, BLUE).n + bars_of(svg, ORANGE).n, 0);
    assert_non_null(strstr(svg, ">no bar: not measured</text>"));
    assert_null(rep_svg_stack_title(&r.model.g[0]));
    free(svg);
    char *html = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&html, &len);
    assert_non_null(f);
    rep_out_html(f, &r);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(html, "No cell measured AU or data wait: no utilisation chart."));
    size_t charts = 0;
    for (const char *p = html; (p = strstr(p, "data:image/svg+xml")) != NULL; p++)
        charts++;
    assert_int_equal(charts, 1);
    free(html);
    report_free(&r);
}

/* Every share and an unmeasured cell in one chart: the legend's five
 * entries end inside the 600 px chart (they had run to about 715 px, the
 * last ones cut off), and none overlaps the one before. */
static void test_full_legend_fits(void **state)
{
    (void)state;
    rep_report r;
    char *svg = stack_of("t,1,j,r1,ok,sim,50,1,1,images,3,3,0.6,0.3,0.97,s1,0.1.0\n"
                         "t,2,j,r1,ok,sim,60,1,1,images,3,3,,0.3,0.97,s2,0.1.0\n"
                         "t,3,j,r1,ok,sim,70,1,1,images,3,3,,,0.97,s3,0.1.0\n",
                         &r);
    size_t n = 0;
    double end = 0;
    for (const char *p = svg; (p = strstr(p, "<text x=\"")) != NULL; p++) {
        double x;
        int y, len = 0;
        if (sscanf(p, "<text x=\"%lf\" y=\"%d\" font-size=\"10\">%*[^<]%n", &x, &y, &len) != 2 ||
            y != LEGEND_Y + 9 || len == 0)
            continue;
        const char *text = strchr(p, '>') + 1;
        double chars = (double)(strchr(text, '<') - text);
        assert_true(x >= end); /* after the one before */
        end = x + 5.6 * chars;
        n++;
    }
    assert_int_equal(n, 5);
    assert_true(end <= 600);
    free(svg);
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waiting_cell_is_not_compute),
        cmocka_unit_test(test_au_cells_stay_within_the_axis),
        cmocka_unit_test(test_invisible_shares_not_in_legend),
        cmocka_unit_test(test_nothing_measured_no_chart),
        cmocka_unit_test(test_full_legend_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
