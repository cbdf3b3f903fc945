/* The curve's throughput axis: a top that fits the data (a curve peaking
 * at 105 steps/s drew on half a 0-200 chart) with round ticks, and a bare
 * "0" at its foot ("0 MB/s" under "20 GB/s" read as another scale). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_csv.h"
#include "render.h"
#include "report.h"

static char *curve_of(const char *csv)
{
    rep_report r = {.target = 0.95};
    model_from_csv(csv, &r.rows, &r.model);
    char *svg = render_curve(&r, &r.model.g[0], 0);
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
    return svg;
}

static void test_top_fits_the_data(void **state)
{
    (void)state;
    char *svg = curve_of("time,cpus,job,status,workload,throughput,throughput_ci95,unit,repeats,version\n"
                         "t,1,j,ok,w,60,1,steps,3,0.1.0\nt,2,j,ok,w,99,1,steps,3,0.1.0\n");
    /* 100 x 1.05 headroom: a top of 150, ticks every 30 */
    static const char *const ticks[] = {">0</text>", ">30 steps/s<", ">60 steps/s<", ">90 steps/s<", ">120 steps/s<",
                                        ">150 steps/s<"};
    for (size_t i = 0; i < sizeof ticks / sizeof *ticks; i++)
        if (!strstr(svg, ticks[i]))
            fail_msg("no tick %s in:\n%s", ticks[i], svg);
    assert_null(strstr(svg, ">200 steps/s<"));
    assert_null(strstr(svg, ">0 steps/s<"));
    free(svg);
}

/* Bytes: GB/s ticks over a bare 0. */
static void test_zero_has_no_unit(void **state)
{
    (void)state;
    char *svg = curve_of("time,cpus,job,status,workload,throughput,throughput_ci95,unit,repeats,version\n"
                         "t,1,j,ok,w,12e9,1e9,bytes,3,0.1.0\nt,2,j,ok,w,21e9,1e9,bytes,3,0.1.0\n");
    assert_non_null(strstr(svg, ">0</text>"));
    assert_null(strstr(svg, "0 MB/s"));
    assert_non_null(strstr(svg, ">25 GB/s<")); /* 22 GB/s x 1.05 -> 25 */
    free(svg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_top_fits_the_data),
        cmocka_unit_test(test_zero_has_no_unit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
