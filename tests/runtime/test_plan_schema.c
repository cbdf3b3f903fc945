/* The run's result schema: a key's kind (tag or field) is the same in every
 * run, whatever it sweeps.  A metric named like a setting of its job (io's
 * depth, stream's threads: options of their workload) is a tag in a plan
 * that sweeps it and in one that does not; a pure measurement is a field
 * in both.  One InfluxDB measurement holds every run, and a key that is a
 * tag in some and a field in others answers WHERE / GROUP BY by which runs
 * a time range holds. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "results.h"
#include "rt_plan.h"

static bool is_field(const dlg_plan *p, const char *name)
{
    for (size_t i = 0; i < p->nfields; i++)
        if (strcmp(p->fields[i].name, name) == 0)
            return true;
    return false;
}

/* Builds a plan of one job: [job j] workload = wl, then body. */
static void plan_of(void **state, const char *file, const char *wl, const char *body, rt_plan *rp)
{
    char text[512], err[1024];
    snprintf(text, sizeof text, "[job j]\nworkload = %s\n%s", wl, body);
    rt_plan_load(*state, file, text, rp);
    if (dlg_plan_build(&rp->plan, &rp->cfg, &rp->reg, NULL, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* key: a metric that is an option of wl; measured: one that is not. */
static void same_kind(void **state, const char *wl, const char *swept, const char *plain, const char *key,
                      const char *measured)
{
    rt_plan a, b;
    plan_of(state, "swept.ini", wl, swept, &a);
    plan_of(state, "plain.ini", wl, plain, &b);
    assert_int_equal(a.plan.jobs[0].naxes, 1);
    assert_int_equal(b.plan.jobs[0].naxes, 0);
    const dlg_plan *p[2] = {&a.plan, &b.plan};
    for (int i = 0; i < 2; i++) {
        if (!dlg_plan_is_tag(p[i], key) || is_field(p[i], key))
            fail_msg("%s: %s is %s in the plan that %s it", wl, key, is_field(p[i], key) ? "a field" : "no tag",
                     i ? "does not sweep" : "sweeps");
        assert_false(dlg_plan_is_tag(p[i], measured));
        assert_true(is_field(p[i], measured));
    }
    rt_plan_done(&a);
    rt_plan_done(&b);
}

static void io_depth(void **state)
{
    same_kind(state, "io", "data = raw:f.bin\ndepth = 1, 2\n", "data = raw:f.bin\ndepth = 1\n", "depth", "iops");
}

static void stream_threads(void **state)
{
    same_kind(state, "stream", "threads = 1, 2\n", "threads = 1\n", "threads", "copy_bytes_per_s");
    /* a default left alone: the reported value is still that tag */
    same_kind(state, "stream", "threads = 0, 1\n", "", "threads", "triad_bytes_per_s");
}

/* The row of a plan that does not sweep depth: io's reported depth is the
 * depth tag, with the text a sweep would write, and no field of that name. */
static void unswept_row(void **state)
{
    rt_plan rp;
    plan_of(state, "plain.ini", "io", "data = raw:f.bin\n", &rp);
    dlg_wire_point wp;
    assert_int_equal(dlg_wire_point_init(&wp, "dlgauge_result", 0), 0);
    dlg_wire_set_tag(&wp, "job", "j");
    dlg_field fl = {.key = "depth", .type = DLG_FIELD_INT, .v.i = 32};
    dlg_wire_add_field(&wp, &fl);
    fl = (dlg_field){.key = "iops", .type = DLG_FIELD_DOUBLE, .v.d = 1000.5};
    dlg_wire_add_field(&wp, &fl);
    dlg_result_tag_columns(&rp.plan, &wp);
    const char *depth = NULL;
    for (size_t i = 0; i < wp.point.ntags; i++)
        if (strcmp(wp.tags[i].key, "depth") == 0)
            depth = wp.tags[i].value;
    assert_non_null(depth);
    assert_string_equal(depth, "32");
    assert_null(dlg_wire_field(&wp, "depth"));
    assert_non_null(dlg_wire_field(&wp, "iops"));
    dlg_wire_point_free(&wp);
    rt_plan_done(&rp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(io_depth, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(stream_threads, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(unswept_row, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
