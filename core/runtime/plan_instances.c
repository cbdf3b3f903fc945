/* [storage] and [sink] sections (or bare type names) bound to their
 * plugins, every option parsed: the storages any job may read through and
 * the sinks the run writes to. */
#include "plan_instances.h"

#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            if (strchr(e->value, ',') && !(o->flags & DLG_OPT_NOSWEEP)) /* a sweep, as a job's keys take */
                snprintf(why, sizeof why, "'%s' is a list, but a %s's options take one value%s", e->value,
                         dlg_kind_name(kind), kind == DLG_KIND_STORAGE ? " (to sweep, give each value a [storage] "
                         "section and list them in the job's storage key)" : "");
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
int dlg_plan_storages(dlg_plan *p, char *err, size_t errlen)
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

const char *dlg_spec_out_path(const dlg_instance_spec *a, size_t k)
{
    const dlg_option *o = &a->desc->options[k];
    const dlg_value *v = &a->vals[k];
    return (o->flags & DLG_OPT_PATH_OUT) && o->type == DLG_OPT_STRING && v->set && v->text && v->text[0]
               ? v->text
               : NULL;
}

/* Whether sink b (before a in the plan) writes a's file option k: the
 * error naming both keys' lines. */
static bool file_taken(const dlg_instance_spec *a, size_t k, const dlg_instance_spec *b, char *err, size_t errlen)
{
    const char *path = dlg_spec_out_path(a, k);
    for (size_t j = 0; path && b->desc->options[j].name; j++) {
        const char *other = dlg_spec_out_path(b, j);
        if (!other || !dlg_path_same(path, other))
            continue;
        const char *key = a->desc->options[k].name, *bkey = b->desc->options[j].name;
        char w[512], bw[512];
        dlg_plan_where(dlg_section_get(a->sec, key), a->sec, w, sizeof w);
        dlg_plan_where(dlg_section_get(b->sec, bkey), b->sec, bw, sizeof bw);
        bw[strlen(bw) >= 2 ? strlen(bw) - 2 : 0] = '\0'; /* "file:line", no ": " */
        snprintf(err, errlen, "%s[sink %s] %s: %s is the file [sink %s] writes too (%s = %s at %s): two sinks "
                 "in one file mix their rows; give each its own",
                 w, a->name, key, path, b->name, bkey, other, bw);
        return true;
    }
    return false;
}

/* Each sink's files its own: two csv sinks on one file would write every
 * row twice, a csv and a json sink lines no reader parses. */
static int sinks_apart(const dlg_plan *p, char *err, size_t errlen)
{
    for (size_t i = 1; i < p->nsinks; i++)
        for (size_t k = 0; p->sinks[i].desc->options && p->sinks[i].desc->options[k].name; k++)
            for (size_t b = 0; b < i; b++)
                if (file_taken(&p->sinks[i], k, &p->sinks[b], err, errlen))
                    return -1;
    return 0;
}

int dlg_plan_sinks(dlg_plan *p, const dlg_section *global, char *err, size_t errlen)
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
        return sinks_apart(p, err, errlen);
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
    return sinks_apart(p, err, errlen);
}
