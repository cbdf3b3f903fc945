#include "comm_drive.h"

#include <stdio.h>
#include <string.h>

static const dlg_workload_ops *load(const char *name, const char *const *overrides, dlg_value *vals)
{
    const dlg_plugin_desc *d = mock_load_plugin("comm.so", DLG_KIND_WORKLOAD, name);
    if (!d || mock_options(d->options, vals, overrides) != 0) {
        fprintf(stderr, "comm.so %s: %s\n", name, d ? "overrides refused" : "not loaded");
        return NULL;
    }
    return d->ops;
}

bool cd_check(const dlg_host *h, const char *name, const char *const *overrides, int *rc)
{
    dlg_value vals[8];
    memset(vals, 0, sizeof vals);
    const dlg_workload_ops *ops = load(name, overrides, vals);
    if (!ops || !dlg_workload_has_check(ops))
        return false;
    dlg_job_info job = {.struct_size = sizeof job, .job = "t", .cpus = 1, .seed = 7};
    *rc = ops->check(h, vals, &job);
    return true;
}

bool cd_run(const dlg_host *h, const char *name, const char *const *overrides, int steps, cd_result *r)
{
    memset(r, 0, sizeof *r);
    dlg_value vals[8];
    memset(vals, 0, sizeof vals);
    const dlg_workload_ops *ops = load(name, overrides, vals);
    if (!ops || !dlg_workload_has_begin_timed(ops))
        return false;
    dlg_job_info job = {.struct_size = sizeof job, .job = "t", .cpus = 1, .seed = 7};
    r->check_rc = ops->check(h, vals, &job);
    void *state = NULL;
    if ((r->setup_rc = ops->setup(h, vals, &job, &state)) < 0)
        return true;
    if ((r->begin_rc = ops->begin_timed(state)) == 0) {
        for (int i = 0; i < steps && r->step_rc == 0; i++) {
            dlg_step s = {0};
            if ((r->step_rc = ops->step(state, &s)) == 0)
                r->items += s.items;
        }
        if (r->step_rc == 0)
            r->report_rc = ops->report(state, &wr_api, (dlg_fields *)&r->fields);
    }
    ops->teardown(state);
    return true;
}
