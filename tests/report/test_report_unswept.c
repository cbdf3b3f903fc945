/* A tag every row of a group has alike (io's depth where no run swept it:
 * a metric named like its job's setting is a tag, swept or not) places
 * the cells but is no sweep: no knee line and no curve for it, while the
 * axis the runs did sweep keeps both, in the text, Markdown and HTML. */
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

static const char csv[] = "time,job,run_id,status,workload,depth,sleep,throughput,throughput_ci95,throughput_stddev,"
                          "unit,repeats,start_time,version\n"
                          "t,j,r1,ok,io,32,1ms,900,1,1,steps,3,s1,0.1.0\n"
                          "t,j,r1,ok,io,32,2ms,480,1,1,steps,3,s2,0.1.0\n"
                          "t,j,r2,ok,io,32,1ms,910,1,1,steps,3,s3,0.1.0\n";

static void test_no_knee_for_one_value(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv(csv, &r.rows, &r.model);
    const rep_group *g = &r.model.g[0];
    assert_int_equal(g->naxes, 2);
    assert_int_equal(rep_group_nswept(g), 1);
    rep_out_fn *outs[] = {out_text_plain, rep_out_markdown, rep_out_html};
    for (size_t i = 0; i < 3; i++) {
        char *text = render_report(&r, outs[i]);
        assert_non_null(strstr(text, "sleep = 1ms"));
        if (strstr(text, "depth = 32"))
            fail_msg("output %zu has a knee line for depth, a tag every row has alike:\n%s", i, text);
        assert_null(strstr(text, "vs depth"));
        free(text);
    }
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_knee_for_one_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
