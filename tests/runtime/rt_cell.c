#include "rt_cell.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void no_emit(dlg_run *run, const dlg_point *p) { (void)run, (void)p; }

void rt_cell_run(rt_cell *c, const char *ini)
{
    memset(c, 0, sizeof *c);
    if (dlg_config_load(&c->cfg, ini, c->err, sizeof c->err) != 0)
        fail_msg("config did not load: %s", c->err);
    assert_int_equal(dlg_registry_init(&c->reg, NULL), 0);
    dlg_registry_scan(&c->reg); /* the default storage, posix */
    if (dlg_plan_build(&c->plan, &c->cfg, &c->reg, NULL, c->err, sizeof c->err) != 0)
        fail_msg("plan: %s", c->err);
    assert_int_equal(dlg_plan_cell(&c->plan, &c->plan.jobs[0], 0, &c->cell, c->err, sizeof c->err), 0);
    assert_int_equal(dlg_cell_result_init(&c->res), 0);
    dlg_run run = {.plan = &c->plan, .emit = no_emit, .wire_fd = -1, .cell_no = 1};
    dlg_run_cell(&run, &c->cell, &c->res);
    dlg_result_point(&run, &c->cell, &c->res, &c->row);
}

void rt_cell_done(rt_cell *c)
{
    dlg_cell_result_fini(&c->res);
    dlg_cell_free(&c->cell);
    dlg_plan_free(&c->plan);
    dlg_registry_free(&c->reg);
    dlg_config_free(&c->cfg);
}

const dlg_field *rt_cell_field(const rt_cell *c, const char *key)
{
    for (size_t i = 0; i < c->row.point.nfields; i++)
        if (strcmp(c->row.point.fields[i].key, key) == 0)
            return &c->row.point.fields[i];
    return NULL;
}

/* The row's field key of type t; fails the test without it. */
static const dlg_field *typed(const rt_cell *c, const char *key, dlg_field_type t)
{
    const dlg_field *f = rt_cell_field(c, key);
    if (!f)
        fail_msg("the row has no %s (status %s: %s)", key, c->res.status, c->res.error);
    assert_int_equal(f->type, t);
    return f;
}

uint64_t rt_cell_uint(const rt_cell *c, const char *key) { return typed(c, key, DLG_FIELD_UINT)->v.u; }

double rt_cell_double(const rt_cell *c, const char *key) { return typed(c, key, DLG_FIELD_DOUBLE)->v.d; }
