#include "rt_plan.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

void rt_plan_load(const rt_dir *d, const char *name, const char *text, rt_plan *p)
{
    memset(p, 0, sizeof *p);
    char err[4096];
    rt_write(d, name, text, p->path, sizeof p->path);
    if (dlg_config_load(&p->cfg, p->path, err, sizeof err) != 0)
        fail_msg("config did not load: %s", err);
    assert_int_equal(dlg_registry_init(&p->reg, NULL), 0);
    dlg_registry_scan(&p->reg);
}

void rt_plan_done(rt_plan *p)
{
    dlg_plan_free(&p->plan);
    dlg_registry_free(&p->reg);
    dlg_config_free(&p->cfg);
}
