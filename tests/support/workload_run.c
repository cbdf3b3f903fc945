#define _GNU_SOURCE
#include "workload_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(dlg_fields *f, const char *key, const char *text)
{
    wr_result *r = (wr_result *)f;
    if (r->nfields >= WR_MAX_FIELDS)
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

const dlg_report_api wr_api = {add_double, add_int, add_string};

void wr_run(const char *so, const char *name, const char *const *overrides, int steps, wr_result *r)
{
    wr_run_with(so, name, overrides, steps, r, NULL, NULL);
}

bool wr_check(const char *so, const char *name, const char *const *overrides, int *rc, char *err,
              size_t len)
{
    const dlg_plugin_desc *d = mock_load_plugin(so, DLG_KIND_WORKLOAD, name);
    dlg_value vals[64];
    memset(vals, 0, sizeof vals);
    if (!d || !dlg_workload_has_check(d->ops) || mock_options(d->options, vals, overrides) != 0) {
        snprintf(err, len, "%s %s: %s", so, name,
                 !d ? "not loaded" : !dlg_workload_has_check(d->ops) ? "no check op" : "overrides refused");
        return false;
    }
    mock_host m;
    mock_host_init(&m);
    dlg_job_info job = {.struct_size = sizeof job, .job = "t", .cpus = 2, .seed = 7};
    *rc = ((const dlg_workload_ops *)d->ops)->check(&m.host, vals, &job);
    snprintf(err, len, "%s", m.last_error);
    mock_host_fini(&m);
    return true;
}

void wr_run_with(const char *so, const char *name, const char *const *overrides, int steps, wr_result *r,
                 void (*hook)(mock_host *m, void *arg), void *arg)
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
    if (hook)
        hook(&m, arg);
    dlg_job_info job = {.struct_size = sizeof job, .job = "t", .cpus = 2, .seed = 7};
    void *state = NULL;
    r->setup_rc = ops->setup(&m.host, vals, &job, &state);
    if (r->setup_rc == 0) {
        for (int i = 0; i < steps; i++) {
            dlg_step s = {0};
            r->step_rc = ops->step(state, &s);
            if (r->step_rc < 0)
                break;
            r->steps_done++;
            r->items += s.items;
            r->wait_ns += s.wait_ns;
            r->bytes_read += s.bytes_read;
        }
        if (r->step_rc == 0 && ops->report)
            ops->report(state, &wr_api, (dlg_fields *)r);
        ops->teardown(state);
    }
    snprintf(r->error, sizeof r->error, "%s", m.last_error);
    snprintf(r->log, sizeof r->log, "%s", m.last_log);
    snprintf(r->warning, sizeof r->warning, "%s", m.last_warning);
    r->errors = m.errors;
    r->warnings = m.warnings;
    r->bytes_written = m.bytes_written;
    r->write_ios = m.write_ios;
    mock_host_fini(&m);
}

const char *wr_field(const wr_result *r, const char *key)
{
    for (int i = 0; i < r->nfields; i++)
        if (strcmp(r->key[i], key) == 0)
            return r->val[i];
    return NULL;
}

double wr_double(const wr_result *r, const char *key)
{
    const char *v = wr_field(r, key);
    return v ? strtod(v, NULL) : NAN;
}

long long wr_int(const wr_result *r, const char *key)
{
    const char *v = wr_field(r, key);
    return v ? strtoll(v, NULL, 10) : -1;
}

bool wr_cpu_has(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    bool has = false;
    while (f && !has && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0)
            for (char *t = strtok(line, " \t\n"); t && !has; t = strtok(NULL, " \t\n"))
                has = strcmp(t, flag) == 0;
    if (f)
        fclose(f);
    return has;
}
