#include "plan.h"

#include "metrics.h"
#include "options.h"
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const dlg_option dlg_core_job_options[] = {
    [DLG_K_WORKLOAD] = {"workload", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                        "the workload to run (dlgauge list shows them)", DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP},
    [DLG_K_PLUGIN] = {"plugin", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                      "load the workload from this .so instead of the search path", DLG_OPT_NOSWEEP},
    [DLG_K_STORAGE] = {"storage", DLG_OPT_STRING, "posix", NULL, NULL, NULL,
                       "a [storage NAME] section or backend type that dataset bytes are read through", 0},
    [DLG_K_CPUS] = {"cpus", DLG_OPT_STRING, "0", NULL, NULL, NULL,
                    "vCPUs of the cell: a count (one NUMA node and distinct cores first; 0 = all, as many "
                    "as a CPU quota gives whole) or a CPU range like 0-3; pins the cell and sizes its "
                    "thread pools", 0},
    [DLG_K_WARMUP] = {"warmup", DLG_OPT_INT, "3", "0", "1000000", NULL,
                      "steps run and discarded before timing", 0},
    [DLG_K_ITERATIONS] = {"iterations", DLG_OPT_INT, "0", "0", NULL, NULL,
                          "timed steps per repetition (0 = run for `duration`)", 0},
    [DLG_K_DURATION] = {"duration", DLG_OPT_DURATION, "5s", "0", "30d", NULL,
                        "timed wall time per repetition when iterations = 0", 0},
    [DLG_K_MIN_STEPS] = {"min_steps", DLG_OPT_INT, "5", "1", NULL, NULL,
                         "at least this many timed steps, whatever the duration", 0},
    [DLG_K_REPEAT] = {"repeat", DLG_OPT_INT, "1", "1", "1000", NULL,
                      "independent repetitions of every cell (fresh setup and seed)", 0},
    [DLG_K_SEED] = {"seed", DLG_OPT_INT, "1", "0", NULL, NULL,
                    "base seed; repetition r uses seed + r", 0},
    [DLG_K_MEMORY] = {"memory", DLG_OPT_SIZE, NULL, "16MiB", NULL, NULL,
                      "memory limit of the cell's cgroup, page cache included (unset = none)", 0},
    [DLG_K_CPU_QUOTA] = {"cpu_quota", DLG_OPT_DOUBLE, "0", "0", "4096", NULL,
                         "CPU time limit in vCPUs through the cgroup CPU controller, e.g. 1.5 (0 = none)", 0},
    [DLG_K_TIMEOUT] = {"timeout", DLG_OPT_DURATION, "0", "0", "30d", NULL,
                       "a cell running longer is stopped (SIGTERM, then SIGKILL) and reported as timeout "
                       "(0 = none)", 0},
    [DLG_K_ISOLATION] = {"isolation", DLG_OPT_ENUM, "process", NULL, NULL, "process|none",
                         "process: each cell in a fresh child process (limits, crashes and leaks stay "
                         "there); none: in dlgauge's own process (debugging; a crash of the cell ends the run)",
                         DLG_OPT_NOSWEEP},
    [DLG_K_COUNT] = {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

const dlg_option dlg_global_options[] = {
    {"sinks", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "comma-separated [sink NAME] sections to write to (default: every [sink])", DLG_OPT_NOSWEEP},
    {"run_id", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "identifier of this run in every result (default: time and pid)", DLG_OPT_NOSWEEP},
    {"journal", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "the run journal that --resume continues from (default: results/journal/<config name>.journal)",
     DLG_OPT_NOSWEEP},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

const dlg_option dlg_section_options[] = {
    {"type", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "the backend or sink type (default: the section's name)", DLG_OPT_NOSWEEP},
    {"plugin", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "load the type from this .so instead of the search path", DLG_OPT_NOSWEEP},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

void dlg_plan_where(const dlg_entry *e, const dlg_section *s, char *buf, size_t len)
{
    if (e)
        dlg_entry_where(e, buf, len);
    else if (s && s->line > 0)
        snprintf(buf, len, "%s:%d: ", s->file, s->line);
    else
        snprintf(buf, len, "%s: ", s ? s->file : "config");
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* Splits "a, b, c" into trimmed strdup'ed values.  Empty elements ("a,,b",
 * "a,") are kept, so that the caller can reject them rather than guess. */
int dlg_list_split(const char *text, char ***out, size_t *n)
{
    char *copy = strdup(text);
    size_t cap = 4, cnt = 0;
    char **v = malloc(cap * sizeof *v);
    if (!copy || !v) {
        free(copy);
        free(v);
        return -1;
    }
    for (char *tok = copy, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (cnt == cap) {
            char **nv = realloc(v, (cap *= 2) * sizeof *nv);
            if (!nv)
                goto oom;
            v = nv;
        }
        if (!(v[cnt++] = strdup(trim(tok))))
            goto oom;
    }
    free(copy);
    *out = v;
    *n = cnt;
    return 0;
oom:
    for (size_t i = 0; i < cnt; i++)
        free(v[i]);
    free(v);
    free(copy);
    return -1;
}

void dlg_list_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

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

/* [global] may hold job defaults; each must mean something to some job. */
static int check_global_keys(const dlg_plan *p, const dlg_section *global, char *err, size_t errlen)
{
    for (size_t i = 0; global && i < global->n; i++) {
        const dlg_entry *e = &global->entries[i];
        if (dlg_opt_find(dlg_global_options, e->key, NULL) || dlg_opt_find(dlg_core_job_options, e->key, NULL))
            continue;
        bool used = false;
        for (size_t j = 0; j < p->njobs && !used; j++)
            used = dlg_opt_find(p->jobs[j].workload->options, e->key, NULL) != NULL;
        if (used)
            continue;
        char w[512], msg[512];
        dlg_entry_where(e, w, sizeof w);
        snprintf(msg, sizeof msg, "%s[global] unknown key '%s' (not a global key, a core job key, or an "
                 "option of any job's workload)", w, e->key);
        const char *s = dlg_opt_suggest(dlg_global_options, e->key);
        if (!s)
            s = dlg_opt_suggest(dlg_core_job_options, e->key);
        for (size_t j = 0; j < p->njobs && !s; j++)
            s = dlg_opt_suggest(p->jobs[j].workload->options, e->key);
        dlg_append_suggestion(msg, sizeof msg, s);
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    return 0;
}

int dlg_plan_instance(dlg_plan *p, dlg_kind kind, const char *name, dlg_instance_spec *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    dlg_section_kind sk = kind == DLG_KIND_SINK ? DLG_SEC_SINK : DLG_SEC_STORAGE;
    const dlg_section *s = dlg_config_find(p->cfg, sk, name);
    out->sec = s;
    const dlg_entry *te = dlg_section_get(s, "type"), *pe = dlg_section_get(s, "plugin");
    const char *type = te ? te->value : name;
    char w[512], sub[1536];
    dlg_plan_where(te, s, w, sizeof w);
    int only = -1;
    if (pe && (only = dlg_registry_load_file(p->reg, pe->value, sub, sizeof sub)) < 0) {
        dlg_entry_where(pe, w, sizeof w);
        snprintf(err, errlen, "%s[%s %s] plugin: %s", w, dlg_kind_name(kind), name, sub);
        return -1;
    }
    out->desc = dlg_registry_find(p->reg, kind, type, only, &out->plugin_path, sub, sizeof sub);
    if (!out->desc) {
        if (s) /* without a type the name is the type: say so, or "unknown storage 'slow'" puzzles */
            snprintf(err, errlen, "%s[%s %s] %s%s", w, dlg_kind_name(kind), name,
                     te ? "type: " : "no 'type' key, so the section's name is the type: ", sub);
        else
            snprintf(err, errlen, "%s", sub);
        return -1;
    }
    const dlg_option *opts = out->desc->options;
    size_t n = dlg_opt_count(opts);
    out->vals = calloc(n + 1, sizeof *out->vals);
    if (!out->vals) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char why[512];
    if (dlg_opt_defaults(opts, out->vals, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", out->plugin_path, why);
        goto fail;
    }
    for (size_t i = 0; s && i < s->n; i++) {
        const dlg_entry *e = &s->entries[i];
        if (dlg_opt_find(dlg_section_options, e->key, NULL))
            continue;
        size_t idx;
        const dlg_option *o = dlg_opt_find(opts, e->key, &idx);
        dlg_entry_where(e, w, sizeof w);
        if (!o) {
            snprintf(err, errlen, "%s[%s %s] unknown key '%s' for %s %s", w, dlg_kind_name(kind), name, e->key,
                     dlg_kind_name(kind), out->desc->name);
            dlg_append_suggestion(err, errlen, dlg_opt_suggest(opts, e->key));
            goto fail;
        }
        if (dlg_opt_parse(o, e->value, &out->vals[idx], why, sizeof why) != 0) {
            snprintf(err, errlen, "%s[%s %s] %s: %s", w, dlg_kind_name(kind), name, e->key, why);
            goto fail;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if ((opts[i].flags & DLG_OPT_REQUIRED) && !out->vals[i].set) {
            dlg_plan_where(NULL, s, w, sizeof w);
            snprintf(err, errlen, "%s[%s %s] %s %s needs '%s' (%s)", w, dlg_kind_name(kind), name,
                     dlg_kind_name(kind), out->desc->name, opts[i].name, opts[i].help ? opts[i].help : "");
            goto fail;
        }
    }
    return 0;
fail:
    /* the caller keeps only specs that succeeded */
    free(out->vals);
    out->vals = NULL;
    return -1;
}

static int add_instance(dlg_instance_spec **arr, size_t *n, const dlg_instance_spec *spec)
{
    dlg_instance_spec *a = realloc(*arr, (*n + 1) * sizeof *a);
    if (!a)
        return -1;
    a[(*n)++] = *spec;
    *arr = a;
    return 0;
}

const dlg_instance_spec *dlg_plan_storage(const dlg_plan *p, const char *name)
{
    for (size_t i = 0; i < p->nstorages; i++)
        if (strcmp(p->storages[i].name, name) == 0)
            return &p->storages[i];
    return NULL;
}

/* Every storage any cell may use, plus every [storage] section (validated
 * even when unused, so mistakes show before a long run). */
static int plan_storages(dlg_plan *p, char *err, size_t errlen)
{
    for (size_t i = 0; i < p->cfg->n; i++) {
        const dlg_section *s = &p->cfg->sections[i];
        if (s->kind != DLG_SEC_STORAGE || dlg_plan_storage(p, s->name))
            continue;
        dlg_instance_spec spec;
        if (dlg_plan_instance(p, DLG_KIND_STORAGE, s->name, &spec, err, errlen) != 0 ||
            add_instance(&p->storages, &p->nstorages, &spec) != 0)
            return -1;
    }
    for (size_t j = 0; j < p->njobs; j++) {
        const dlg_job *job = &p->jobs[j];
        char **names = NULL;
        size_t n = 0;
        if (dlg_list_split(job->core_text[DLG_K_STORAGE], &names, &n) != 0)
            return -1;
        for (size_t k = 0; k < n; k++) {
            if (dlg_plan_storage(p, names[k]))
                continue;
            dlg_instance_spec spec;
            char sub[2048], w[512];
            if (dlg_plan_instance(p, DLG_KIND_STORAGE, names[k], &spec, sub, sizeof sub) != 0) {
                dlg_plan_where(job->core_src[DLG_K_STORAGE], job->sec, w, sizeof w);
                snprintf(err, errlen, "%s[job %s] storage: %s", w, job->name, sub);
                dlg_list_free(names, n);
                return -1;
            }
            /* the name must outlive names[]: point it at the descriptor's name */
            spec.name = spec.desc->name;
            if (add_instance(&p->storages, &p->nstorages, &spec) != 0) {
                dlg_list_free(names, n);
                return -1;
            }
        }
        dlg_list_free(names, n);
    }
    return 0;
}

/* Whether names[k] equals one of names[0..k). */
static bool listed_before(char *const *names, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (strcmp(names[i], names[k]) == 0)
            return true;
    return false;
}

static int plan_sinks(dlg_plan *p, const dlg_section *global, char *err, size_t errlen)
{
    const dlg_entry *se = dlg_section_get(global, "sinks");
    if (!se) {
        for (size_t i = 0; i < p->cfg->n; i++) {
            const dlg_section *s = &p->cfg->sections[i];
            dlg_instance_spec spec;
            if (s->kind == DLG_SEC_SINK &&
                (dlg_plan_instance(p, DLG_KIND_SINK, s->name, &spec, err, errlen) != 0 ||
                 add_instance(&p->sinks, &p->nsinks, &spec) != 0))
                return -1;
        }
        return 0;
    }
    char **names = NULL;
    size_t n = 0;
    if (dlg_list_split(se->value, &names, &n) != 0)
        return -1;
    for (size_t k = 0; k < n; k++) {
        const dlg_section *s = dlg_config_find(p->cfg, DLG_SEC_SINK, names[k]);
        dlg_instance_spec spec;
        char w[512], sub[2048] = "";
        dlg_entry_where(se, w, sizeof w);
        /* a sink listed twice would be given every result twice: duplicate rows */
        if (!names[k][0] || listed_before(names, k)) {
            if (names[k][0])
                snprintf(err, errlen, "%s[global] sinks: '%s' is listed twice in '%s': name each sink once", w,
                         names[k], se->value);
            else
                snprintf(err, errlen, "%s[global] sinks: empty element in the list '%s'", w, se->value);
            dlg_list_free(names, n);
            return -1;
        }
        if (!s) {
            /* a bare sink type would have no path/url: insist on a section */
            snprintf(err, errlen, "%s[global] sinks: there is no [sink %s] section", w, names[k]);
            dlg_list_free(names, n);
            return -1;
        }
        if (dlg_plan_instance(p, DLG_KIND_SINK, s->name, &spec, sub, sizeof sub) != 0 ||
            add_instance(&p->sinks, &p->nsinks, &spec) != 0) {
            snprintf(err, errlen, "%s", sub);
            dlg_list_free(names, n);
            return -1;
        }
    }
    dlg_list_free(names, n);
    return 0;
}

static int add_tag_key(dlg_plan *p, const char *key)
{
    for (size_t i = 0; i < p->ntag_keys; i++)
        if (strcmp(p->tag_keys[i], key) == 0)
            return 0;
    const char **t = realloc(p->tag_keys, (p->ntag_keys + 1) * sizeof *t);
    if (!t)
        return -1;
    t[p->ntag_keys++] = key;
    p->tag_keys = t;
    return 0;
}

static int add_field(dlg_plan *p, const dlg_metric *m)
{
    for (size_t i = 0; i < p->nfields; i++)
        if (strcmp(p->fields[i].name, m->name) == 0)
            return 0;
    dlg_metric *f = realloc(p->fields, (p->nfields + 1) * sizeof *f);
    if (!f)
        return -1;
    f[p->nfields++] = *m;
    p->fields = f;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

bool dlg_plan_is_tag(const dlg_plan *p, const char *key)
{
    return bsearch(&key, p->tag_keys, p->ntag_keys, sizeof *p->tag_keys, cmp_str) != NULL;
}

static int plan_schema(dlg_plan *p)
{
    for (size_t i = 0; dlg_core_tags[i]; i++)
        if (add_tag_key(p, dlg_core_tags[i]) != 0)
            return -1;
    for (size_t j = 0; j < p->njobs; j++)
        for (size_t a = 0; a < p->jobs[j].naxes; a++)
            if (add_tag_key(p, p->jobs[j].axes[a].key) != 0)
                return -1;
    qsort(p->tag_keys, p->ntag_keys, sizeof *p->tag_keys, cmp_str);
    for (size_t i = 0; dlg_core_metrics[i].name; i++)
        if (add_field(p, &dlg_core_metrics[i]) != 0)
            return -1;
    /* a metric named like a swept option (io's depth, lstm-ptb's hidden)
     * shares the option's tag column: one column per name */
    for (size_t j = 0; j < p->njobs; j++)
        for (const dlg_metric *m = p->jobs[j].workload->metrics; m && m->name; m++)
            if (!dlg_plan_is_tag(p, m->name) && add_field(p, m) != 0)
                return -1;
    return 0;
}

static bool job_selected(const char *name, const char *const *only, size_t nonly)
{
    if (!nonly)
        return true;
    for (size_t i = 0; i < nonly; i++)
        if (strcmp(only[i], name) == 0)
            return true;
    return false;
}

/* Every name of --job must be a [job] of cfg. */
static int check_selected_jobs(const dlg_config *cfg, const char *const *only, size_t nonly, char *err,
                               size_t errlen)
{
    const char *names[256];
    size_t n = 0;
    for (size_t i = 0; i < cfg->n && n < 256; i++)
        if (cfg->sections[i].kind == DLG_SEC_JOB)
            names[n++] = cfg->sections[i].name;
    for (size_t k = 0; k < nonly; k++) {
        if (dlg_config_find(cfg, DLG_SEC_JOB, only[k]))
            continue;
        snprintf(err, errlen, "%s: no [job %s]", cfg->path, only[k]);
        dlg_append_suggestion(err, errlen, dlg_suggest(only[k], names, n));
        return -1;
    }
    return 0;
}

static int plan_job(dlg_plan *p, const dlg_section *s, const dlg_section *global, char *err, size_t errlen)
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

/* A failure that said nothing was an allocation's (an empty error line
 * told the user nothing). */
static int said(int rc, char *err, size_t errlen)
{
    if (rc != 0 && errlen && !err[0])
        snprintf(err, errlen, "out of memory");
    return rc;
}

static int build_jobs(dlg_plan *p, dlg_config *cfg, dlg_registry *reg, const char *const *only_jobs, size_t nonly,
                      char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->cfg = cfg;
    p->reg = reg;
    const dlg_section *global = dlg_config_find(cfg, DLG_SEC_GLOBAL, "");
    const dlg_entry *rid = dlg_section_get(global, "run_id");
    p->run_id = rid ? rid->value : NULL;
    if (rid && strlen(rid->value) > DLG_RUN_ID_MAX) {
        char w[512];
        dlg_entry_where(rid, w, sizeof w);
        snprintf(err, errlen, "%s[global] run_id: %zu bytes long; at most %d (it is kept whole in every result and "
                 "the journal)", w, strlen(rid->value), DLG_RUN_ID_MAX);
        return -1;
    }
    if (check_selected_jobs(cfg, only_jobs, nonly, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < cfg->n; i++) {
        const dlg_section *s = &cfg->sections[i];
        if (s->kind == DLG_SEC_JOB && job_selected(s->name, only_jobs, nonly) &&
            plan_job(p, s, global, err, errlen) != 0)
            return -1;
    }
    if (!p->njobs) {
        snprintf(err, errlen, "%s: no [job NAME] sections: nothing to run", cfg->path);
        return -1;
    }
    if (check_global_keys(p, global, err, errlen) != 0 || plan_storages(p, err, errlen) != 0 ||
        plan_sinks(p, global, err, errlen) != 0)
        return -1;
    if (plan_schema(p) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int dlg_plan_build_jobs(dlg_plan *p, dlg_config *cfg, dlg_registry *reg, const char *const *only_jobs,
                        size_t nonly, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    return said(build_jobs(p, cfg, reg, only_jobs, nonly, err, errlen), err, errlen);
}

int dlg_plan_build(dlg_plan *p, dlg_config *cfg, dlg_registry *reg, const char *only_job, char *err,
                   size_t errlen)
{
    return dlg_plan_build_jobs(p, cfg, reg, only_job ? &only_job : NULL, only_job ? 1 : 0, err, errlen);
}

int dlg_plan_build_sinks(dlg_plan *p, dlg_config *cfg, dlg_registry *reg, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->cfg = cfg;
    p->reg = reg;
    if (errlen)
        err[0] = '\0';
    if (plan_sinks(p, dlg_config_find(cfg, DLG_SEC_GLOBAL, ""), err, errlen) != 0)
        return said(-1, err, errlen);
    if (plan_schema(p) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
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
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *core_text[DLG_K_COUNT];
    memcpy(core_text, job->core_text, sizeof core_text);
    const char **wl_text = calloc(job->nwl + 1, sizeof *wl_text);
    if (!wl_text) {
        snprintf(err, errlen, "out of memory");
        return -1;
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

static void free_spec(dlg_instance_spec *s) { free(s->vals); }

void dlg_plan_free(dlg_plan *p)
{
    for (size_t j = 0; j < p->njobs; j++) {
        dlg_job *job = &p->jobs[j];
        for (size_t a = 0; a < job->naxes; a++)
            dlg_list_free(job->axes[a].values, job->axes[a].nvalues);
        free(job->axes);
        free(job->wl_src);
        free(job->wl_text);
    }
    free(p->jobs);
    for (size_t i = 0; i < p->nstorages; i++)
        free_spec(&p->storages[i]);
    for (size_t i = 0; i < p->nsinks; i++)
        free_spec(&p->sinks[i]);
    free(p->storages);
    free(p->sinks);
    free(p->tag_keys);
    free(p->fields);
    memset(p, 0, sizeof *p);
}
