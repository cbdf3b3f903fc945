/* The plan as a whole: the core's option tables, the helpers its files
 * share, and building it (jobs: plan_bind.c; storages and sinks:
 * plan_instances.c; then the run's result schema) and freeing it. */
#include "plan.h"

#include "metrics.h"
#include "options.h"
#include "plan_bind.h"
#include "plan_instances.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                    "thread pools.  A list sweeps, as every key's does (0,1 is two cells: all CPUs, "
                    "then one), so a set of CPUs that is not one range cannot be given", 0},
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
     "the run journal that --resume continues from (default: results/journal/<config name>-<hash of its absolute path>.journal, relative to the directory dlgauge runs in)",
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

/* Whether a workload's metric names a setting of its job: a core job key
 * or an option of the workload.  Such a metric reports that setting (io's
 * depth, lstm-ptb's hidden, stream's threads), so it is a tag in every run,
 * swept or not: a key that were a tag in one run and a field in another
 * would be both in one InfluxDB measurement, and WHERE / GROUP BY on it
 * would answer by which runs the time range holds. */
static bool metric_is_setting(const dlg_plugin_desc *wl, const char *name)
{
    return dlg_opt_find(dlg_core_job_options, name, NULL) || dlg_opt_find(wl->options, name, NULL);
}

static int plan_schema(dlg_plan *p)
{
    for (size_t i = 0; dlg_core_tags[i]; i++)
        if (add_tag_key(p, dlg_core_tags[i]) != 0)
            return -1;
    for (size_t j = 0; j < p->njobs; j++) {
        for (size_t a = 0; a < p->jobs[j].naxes; a++)
            if (add_tag_key(p, p->jobs[j].axes[a].key) != 0)
                return -1;
        const dlg_plugin_desc *wl = p->jobs[j].workload;
        for (const dlg_metric *m = wl->metrics; m && m->name; m++)
            if (metric_is_setting(wl, m->name) && add_tag_key(p, m->name) != 0)
                return -1;
    }
    qsort(p->tag_keys, p->ntag_keys, sizeof *p->tag_keys, cmp_str);
    for (size_t i = 0; dlg_core_metrics[i].name; i++)
        if (add_field(p, &dlg_core_metrics[i]) != 0)
            return -1;
    /* one column per name: a metric named like another job's swept option
     * (no setting of its own workload) joins that tag in this run */
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
            dlg_plan_add_job(p, s, global, err, errlen) != 0)
            return -1;
    }
    if (!p->njobs) {
        snprintf(err, errlen, "%s: no [job NAME] sections: nothing to run", cfg->path);
        return -1;
    }
    if (check_global_keys(p, global, err, errlen) != 0 || dlg_plan_storages(p, err, errlen) != 0 ||
        dlg_plan_sinks(p, global, err, errlen) != 0)
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
    if (dlg_plan_sinks(p, dlg_config_find(cfg, DLG_SEC_GLOBAL, ""), err, errlen) != 0)
        return said(-1, err, errlen);
    if (plan_schema(p) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
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
