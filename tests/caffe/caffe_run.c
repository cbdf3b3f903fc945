#define _GNU_SOURCE
#include "caffe_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_host.h"

static void add(dlg_fields *f, const char *key, const char *text)
{
    cr_result *r = (cr_result *)f;
    if (r->nfields >= CR_MAX_FIELDS)
        return;
    snprintf(r->key[r->nfields], sizeof r->key[0], "%s", key);
    snprintf(r->val[r->nfields], sizeof r->val[0], "%s", text);
    r->nfields++;
}

static void add_double(dlg_fields *f, const char *key, double v)
{
    char b[64];
    snprintf(b, sizeof b, "%.17g", v);
    add(f, key, b);
}

static void add_int(dlg_fields *f, const char *key, int64_t v)
{
    char b[64];
    snprintf(b, sizeof b, "%lld", (long long)v);
    add(f, key, b);
}

static void add_string(dlg_fields *f, const char *key, const char *v) { add(f, key, v); }

static const dlg_report_api api = {add_double, add_int, add_string};

void cr_run(const char *so, const char *name, const char *const *overrides, int steps,
            cr_result *r)
{
    memset(r, 0, sizeof *r);
    r->setup_rc = -DLG_EINTERNAL;
    const dlg_plugin_desc *d = mock_load_plugin(so, DLG_KIND_WORKLOAD, name);
    if (!d)
        return;
    const dlg_workload_ops *ops = d->ops;
    dlg_value vals[64];
    memset(vals, 0, sizeof vals);
    if (mock_options(d->options, vals, overrides) != 0) {
        snprintf(r->error, sizeof r->error, "mock_options refused the overrides");
        return;
    }
    mock_host m;
    mock_host_init(&m);
    dlg_job_info job = {sizeof job, "t", 2, 7, 0};
    void *state = NULL;
    r->setup_rc = ops->setup(&m.host, vals, &job, &state);
    if (r->setup_rc == 0) {
        for (int i = 0; i < steps; i++) {
            dlg_step s = {0};
            if ((r->step_rc = ops->step(state, &s)) < 0)
                break;
            r->steps_done++;
        }
        if (r->step_rc == 0 && ops->report)
            ops->report(state, &api, (dlg_fields *)r);
        ops->teardown(state);
    }
    snprintf(r->error, sizeof r->error, "%s", m.last_error);
    mock_host_fini(&m);
}

const char *cr_str(const cr_result *r, const char *key)
{
    for (int i = 0; i < r->nfields; i++)
        if (strcmp(r->key[i], key) == 0)
            return r->val[i];
    return NULL;
}

double cr_num(const cr_result *r, const char *key)
{
    const char *s = cr_str(r, key);
    return s ? strtod(s, NULL) : NAN;
}
