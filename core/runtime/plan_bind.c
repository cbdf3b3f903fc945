/* A [job] section bound to its workload: the workload found, its keys
 * checked, every value parsed (a job's own, else [global]'s), sweep lists
 * made axes, and each cell's values picked from them. */
#include "plan_bind.h"

#include "options.h"
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool has_list(const char *text) { return strchr(text, ',') != NULL; }

/* Core keys whose syntax is richer than their table type. */
static int core_value_check(const dlg_option *o, dlg_value *v, char *why, size_t whylen)
{
    if (o != &dlg_core_job_options[DLG_K_CPUS])
        return 0;
    int count, first, last;
    if (dlg_cpus_parse(v->text, &count, &first, &last, why, whylen) != 0)
        return -1;
    v->i = count;
    v->d = count;
    return 0;
}

/* Validates one value (or each element of a sweep list) for option o. */
/* The index among v[0..n) of a value equal to x, or -1. */
static long same_value(const dlg_option *o, const dlg_value *v, size_t n, const dlg_value *x)
{
    for (size_t i = 0; i < n; i++) {
        bool same = o->type == DLG_OPT_STRING ? strcmp(v[i].text, x->text) == 0
                    : o->type == DLG_OPT_DOUBLE ? v[i].d == x->d
                                                : v[i].i == x->i;
        if (same)
            return (long)i;
    }
    return -1;
}

static int check_value(const dlg_option *o, const char *text, const dlg_entry *e, const dlg_section *s,
                       const char *job, char *err, size_t errlen)
{
    char why[512], w[512];
    char **vals = NULL;
    size_t n = 0;
    bool list = has_list(text) && !(o->flags & DLG_OPT_NOSWEEP);
    if (list) {
        if (dlg_list_split(text, &vals, &n) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    dlg_value *seen = list ? calloc(n, sizeof *seen) : NULL;
    if (list && !seen) {
        dlg_list_free(vals, n);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < (list ? n : 1); i++) {
        const char *t = list ? vals[i] : text;
        dlg_value v;
        long dup = -1;
        if (list && !*t) { /* one empty value is for the option to judge (a string may be "") */
            snprintf(why, sizeof why, "empty element in the list '%s'", text);
        } else if (dlg_opt_parse(o, t, &v, why, sizeof why) == 0 && core_value_check(o, &v, why, sizeof why) == 0) {
            if (!list || (dup = same_value(o, seen, i, &v)) < 0) {
                if (list)
                    seen[i] = v;
                continue;
            }
            /* 1GiB, 1024MiB: one cell measured twice under two names */
            snprintf(why, sizeof why, "'%s' and '%s' are the same value: give each once", vals[dup], t);
        }
        dlg_plan_where(e, s, w, sizeof w);
        if (e && e != dlg_section_get(s, o->name)) /* [global]'s, which this job takes */
            snprintf(err, errlen, "%s[global] %s: %s (in [job %s])", w, o->name, why, job);
        else
            snprintf(err, errlen, "%s[job %s] %s: %s", w, job, o->name, why);
        free(seen);
        dlg_list_free(vals, n);
        return -1;
    }
    free(seen);
    dlg_list_free(vals, n);
    return 0;
}

/* The value of key for a job: its own entry, else [global]'s. */
static const dlg_entry *lookup(const dlg_section *job, const dlg_section *global, const char *key)
{
    const dlg_entry *e = dlg_section_get(job, key);
    return e ? e : dlg_section_get(global, key);
}

static int add_axis(dlg_job *j, const char *key, bool core, size_t index, const char *text)
{
    dlg_axis *a = realloc(j->axes, (j->naxes + 1) * sizeof *a);
    if (!a)
        return -1;
    j->axes = a;
    a = &j->axes[j->naxes];
    memset(a, 0, sizeof *a);
    a->key = key;
    a->core = core;
    a->index = index;
    if (dlg_list_split(text, &a->values, &a->nvalues) != 0)
        return -1;
    j->naxes++;
    return 0;
}

/* The job's cells times the values of its newest axis, unless that passes
 * DLG_PLAN_MAX_CELLS (the product of a few long sweeps wrapped around
 * size_t: a job of 0 cells, or of a few, ran without a word). */
static int multiply_cells(dlg_job *j, const dlg_entry *e, char *err, size_t errlen)
{
    const dlg_axis *a = &j->axes[j->naxes - 1];
    if (a->nvalues <= DLG_PLAN_MAX_CELLS / j->ncells) {
        j->ncells *= a->nvalues;
        return 0;
    }
    char w[512];
    dlg_plan_where(e, j->sec, w, sizeof w);
    snprintf(err, errlen, "%s[job %s] %s: %zu values times the %zu cells of the axes before make more than %d "
             "cells, the most a run may have: sweep fewer values, or split the job", w, j->name, a->key,
             a->nvalues, j->ncells, DLG_PLAN_MAX_CELLS);
    return -1;
}

static int resolve_workload(dlg_plan *p, dlg_job *j, const dlg_section *global, char *err, size_t errlen)
{
    char w[512], sub[1536];
    const dlg_entry *we = lookup(j->sec, global, "workload");
    if (!we) {
        /* keys are case-sensitive: `Workload = x` is there but is not it */
        for (size_t i = 0; i < j->sec->n; i++)
            if (strcasecmp(j->sec->entries[i].key, "workload") == 0) {
                dlg_entry_where(&j->sec->entries[i], w, sizeof w);
                snprintf(err, errlen, "%s[job %s] unknown key '%s' (did you mean 'workload'? keys are "
                         "case-sensitive)", w, j->name, j->sec->entries[i].key);
                return -1;
            }
        dlg_plan_where(NULL, j->sec, w, sizeof w);
        snprintf(err, errlen, "%s[job %s] has no 'workload' key (dlgauge list shows the workloads)", w, j->name);
        return -1;
    }
    int only = -1;
    const dlg_entry *pe = lookup(j->sec, global, "plugin");
    if (pe && (only = dlg_registry_load_file(p->reg, pe->value, sub, sizeof sub)) < 0) {
        dlg_entry_where(pe, w, sizeof w);
        snprintf(err, errlen, "%s[job %s] plugin: %s", w, j->name, sub);
        return -1;
    }
    j->workload = dlg_registry_find(p->reg, DLG_KIND_WORKLOAD, we->value, only, &j->workload_path, sub,
                                    sizeof sub);
    if (!j->workload) {
        dlg_entry_where(we, w, sizeof w);
        snprintf(err, errlen, "%s[job %s] workload: %s", w, j->name, sub);
        return -1;
    }
    return 0;
}

static int check_job_keys(const dlg_job *j, char *err, size_t errlen)
{
    for (size_t i = 0; i < j->sec->n; i++) {
        const dlg_entry *e = &j->sec->entries[i];
        if (dlg_opt_find(dlg_core_job_options, e->key, NULL) || dlg_opt_find(j->workload->options, e->key, NULL))
            continue;
        char w[512], msg[512];
        dlg_entry_where(e, w, sizeof w);
        snprintf(msg, sizeof msg, "%s[job %s] unknown key '%s' for workload %s", w, j->name, e->key,
                 j->workload->name);
        const char *s = dlg_opt_suggest(j->workload->options, e->key);
        dlg_append_suggestion(msg, sizeof msg, s ? s : dlg_opt_suggest(dlg_core_job_options, e->key));
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    return 0;
}

static int bind_values(dlg_job *j, const dlg_section *global, char *err, size_t errlen)
{
    j->ncells = 1;
    for (size_t k = 0; k < DLG_K_COUNT; k++) {
        const dlg_option *o = &dlg_core_job_options[k];
        const dlg_entry *e = lookup(j->sec, global, o->name);
        j->core_src[k] = e;
        j->core_text[k] = e ? e->value : o->def;
        if (!j->core_text[k])
            continue;
        if (check_value(o, j->core_text[k], e, j->sec, j->name, err, errlen) != 0)
            return -1;
        if (has_list(j->core_text[k]) && !(o->flags & DLG_OPT_NOSWEEP)) {
            if (add_axis(j, o->name, true, k, j->core_text[k]) != 0)
                goto oom;
            if (multiply_cells(j, e, err, errlen) != 0)
                return -1;
        }
    }
    j->nwl = dlg_opt_count(j->workload->options);
    j->wl_src = calloc(j->nwl + 1, sizeof *j->wl_src);
    j->wl_text = calloc(j->nwl + 1, sizeof *j->wl_text);
    if (!j->wl_src || !j->wl_text)
        goto oom;
    for (size_t k = 0; k < j->nwl; k++) {
        const dlg_option *o = &j->workload->options[k];
        const dlg_entry *e = lookup(j->sec, global, o->name);
        j->wl_src[k] = e;
        j->wl_text[k] = e ? e->value : o->def;
        if (!j->wl_text[k]) {
            if (o->flags & DLG_OPT_REQUIRED) {
                char w[512];
                dlg_plan_where(NULL, j->sec, w, sizeof w);
                snprintf(err, errlen, "%s[job %s] workload %s needs '%s' (%s)", w, j->name,
                         j->workload->name, o->name, o->help ? o->help : "");
                return -1;
            }
            continue;
        }
        if (check_value(o, j->wl_text[k], e, j->sec, j->name, err, errlen) != 0)
            return -1;
        if (has_list(j->wl_text[k]) && !(o->flags & DLG_OPT_NOSWEEP)) {
            if (add_axis(j, o->name, false, k, j->wl_text[k]) != 0)
                goto oom;
            if (multiply_cells(j, e, err, errlen) != 0)
                return -1;
        }
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Whether some value of a (validated, maybe swept) limit asks for a limit:
 * 0 means "none" for cpu_quota and timeout, memory has no such value. */
static bool limit_requested(const dlg_option *o, const char *text)
{
    char **vals = NULL, why[256];
    size_t n = 0;
    if (dlg_list_split(text, &vals, &n) != 0)
        return true;
    bool any = false;
    for (size_t i = 0; i < n && !any; i++) {
        dlg_value v;
        any = dlg_opt_parse(o, vals[i], &v, why, sizeof why) != 0 || v.i != 0 || v.d != 0;
    }
    dlg_list_free(vals, n);
    return any;
}

/* isolation = none runs the cell in dlgauge's own process: no cgroup and no
 * watchdog, so a limit the job asks for could not be enforced. */
static int check_isolation(const dlg_job *j, char *err, size_t errlen)
{
    static const enum dlg_core_key limits[] = {DLG_K_MEMORY, DLG_K_CPU_QUOTA, DLG_K_TIMEOUT};
    if (strcmp(j->core_text[DLG_K_ISOLATION], "none") != 0)
        return 0;
    char keys[128] = "";
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        enum dlg_core_key k = limits[i];
        if (j->core_src[k] && limit_requested(&dlg_core_job_options[k], j->core_text[k]))
            snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", keys[0] ? ", " : "",
                     dlg_core_job_options[k].name);
    }
    if (!keys[0])
        return 0;
    char w[512];
    dlg_plan_where(j->core_src[DLG_K_ISOLATION], j->sec, w, sizeof w);
    snprintf(err, errlen, "%s[job %s] isolation = none cannot enforce %s: the cell would run in dlgauge's own "
             "process, without cgroup or watchdog (use isolation = process, or remove them)", w, j->name, keys);
    return -1;
}

int dlg_plan_add_job(dlg_plan *p, const dlg_section *s, const dlg_section *global, char *err, size_t errlen)
{
    dlg_job *jobs = realloc(p->jobs, (p->njobs + 1) * sizeof *jobs);
    if (!jobs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->jobs = jobs;
    dlg_job *j = &p->jobs[p->njobs++];
    memset(j, 0, sizeof *j);
    j->name = s->name;
    j->sec = s;
    if (resolve_workload(p, j, global, err, errlen) != 0 || check_job_keys(j, err, errlen) != 0 ||
        bind_values(j, global, err, errlen) != 0 || check_isolation(j, err, errlen) != 0)
        return -1;
    if (j->ncells > DLG_PLAN_MAX_CELLS - p->total_cells) {
        char w[512];
        dlg_plan_where(NULL, j->sec, w, sizeof w);
        snprintf(err, errlen, "%s[job %s]: its %zu cells and the %zu of the jobs before make more than %d cells, "
                 "the most a run may have: run some jobs with --job, or sweep fewer values", w, j->name,
                 j->ncells, p->total_cells, DLG_PLAN_MAX_CELLS);
        return -1;
    }
    p->total_cells += j->ncells;
    return 0;
}

int dlg_plan_cell(const dlg_plan *p, const dlg_job *job, size_t k, dlg_cell *cell, char *err, size_t errlen)
{
    (void)p;
    memset(cell, 0, sizeof *cell);
    cell->job = job;
    cell->index = k;
    cell->wl = calloc(job->nwl + 1, sizeof *cell->wl);
    cell->tags = calloc(job->naxes + 1, sizeof *cell->tags);
    if (!cell->wl || !cell->tags) {
        snprintf(err, errlen, "[job %s] cell %zu: out of memory", job->name, k);
        return -DLG_ENOMEM;
    }
    const char *core_text[DLG_K_COUNT];
    memcpy(core_text, job->core_text, sizeof core_text);
    const char **wl_text = calloc(job->nwl + 1, sizeof *wl_text);
    if (!wl_text) {
        snprintf(err, errlen, "[job %s] cell %zu: out of memory", job->name, k);
        return -DLG_ENOMEM;
    }
    memcpy(wl_text, job->wl_text, job->nwl * sizeof *wl_text);
    /* mixed radix, the last axis varying fastest; axes are the core keys in
     * table order, then the workload's options in table order */
    size_t rest = k;
    for (size_t a = job->naxes; a-- > 0;) {
        const dlg_axis *ax = &job->axes[a];
        const char *v = ax->values[rest % ax->nvalues];
        rest /= ax->nvalues;
        if (ax->core)
            core_text[ax->index] = v;
        else
            wl_text[ax->index] = v;
        cell->tags[a].key = ax->key;
        cell->tags[a].value = v;
    }
    cell->ntags = job->naxes;
    char why[512];
    int rc = 0;
    for (size_t i = 0; i < DLG_K_COUNT && rc == 0; i++)
        if (core_text[i])
            rc = dlg_opt_parse(&dlg_core_job_options[i], core_text[i], &cell->core[i], why, sizeof why) ||
                 core_value_check(&dlg_core_job_options[i], &cell->core[i], why, sizeof why);
    for (size_t i = 0; i < job->nwl && rc == 0; i++)
        if (wl_text[i])
            rc = dlg_opt_parse(&job->workload->options[i], wl_text[i], &cell->wl[i], why, sizeof why);
    free(wl_text);
    if (rc != 0)
        snprintf(err, errlen, "[job %s] cell %zu: %s", job->name, k, why);
    return rc;
}

void dlg_cell_free(dlg_cell *cell)
{
    free(cell->wl);
    free(cell->tags);
    memset(cell, 0, sizeof *cell);
}
