/* The INI model: sections of entries, found, added and set (files are read
 * in config_load.c, --set is applied in config_set.c). */
#include "config_add.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *dlg_section_kind_name(dlg_section_kind k)
{
    switch (k) {
    case DLG_SEC_GLOBAL: return "global";
    case DLG_SEC_JOB: return "job";
    case DLG_SEC_STORAGE: return "storage";
    case DLG_SEC_SINK: return "sink";
    }
    return "?";
}

void dlg_entry_where(const dlg_entry *e, char *buf, size_t len)
{
    if (e->line > 0)
        snprintf(buf, len, "%s:%d: ", e->file, e->line);
    else
        snprintf(buf, len, "%s: ", e->file);
}

/* arr (n used of *cap elements of elem bytes) with room for one more, or NULL. */
void *dlg_room_for_one(void *arr, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return arr;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = realloc(arr, c * elem);
    if (p)
        *cap = c;
    return p;
}

dlg_section *dlg_config_add_section(dlg_config *c, dlg_section_kind kind, const char *name,
                                    const char *file, int line)
{
    dlg_section *grown = dlg_room_for_one(c->sections, c->n, &c->cap, sizeof *grown);
    if (!grown)
        return NULL;
    c->sections = grown;
    dlg_section *s = &c->sections[c->n];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->name = strdup(name);
    s->file = strdup(file);
    s->line = line;
    if (!s->name || !s->file) {
        free(s->name);
        free(s->file);
        return NULL;
    }
    c->n++;
    return s;
}

dlg_section *dlg_config_find(const dlg_config *c, dlg_section_kind kind, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->sections[i].kind == kind && strcmp(c->sections[i].name, name) == 0)
            return &c->sections[i];
    return NULL;
}

const dlg_entry *dlg_section_get(const dlg_section *s, const char *key)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (strcmp(s->entries[i].key, key) == 0)
            return &s->entries[i];
    return NULL;
}

/* Sets key in s; a later file or --set overrides, the same file twice is an error. */
int dlg_section_put(dlg_section *s, const char *key, const char *value, const char *file,
                    int line, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->n; i++) {
        dlg_entry *e = &s->entries[i];
        if (strcmp(e->key, key) != 0)
            continue;
        if (line > 0 && strcmp(e->file, file) == 0) {
            if (s->kind == DLG_SEC_GLOBAL)
                snprintf(err, errlen, "%s:%d: [global] %s: set twice in this section (first at line %d)", file,
                         line, key, e->line);
            else
                snprintf(err, errlen, "%s:%d: [%s %s] %s: set twice in this section (first at line %d)", file,
                         line, dlg_section_kind_name(s->kind), s->name, key, e->line);
            return -1;
        }
        char *v = strdup(value), *f = strdup(file);
        if (!v || !f) {
            free(v);
            free(f);
            snprintf(err, errlen, "%s:%d: out of memory", file, line);
            return -1;
        }
        free(e->value);
        free(e->file);
        e->value = v;
        e->file = f;
        e->line = line;
        return 0;
    }
    dlg_entry *grown = dlg_room_for_one(s->entries, s->n, &s->cap, sizeof *grown);
    if (!grown) {
        snprintf(err, errlen, "%s:%d: out of memory", file, line);
        return -1;
    }
    s->entries = grown;
    dlg_entry *e = &s->entries[s->n];
    e->key = strdup(key);
    e->value = strdup(value);
    e->file = strdup(file);
    e->line = line;
    if (!e->key || !e->value || !e->file) {
        free(e->key);
        free(e->value);
        free(e->file);
        snprintf(err, errlen, "%s:%d: out of memory", file, line);
        return -1;
    }
    s->n++;
    return 0;
}

void dlg_config_free(dlg_config *c)
{
    for (size_t i = 0; i < c->n; i++) {
        dlg_section *s = &c->sections[i];
        for (size_t j = 0; j < s->n; j++) {
            free(s->entries[j].key);
            free(s->entries[j].value);
            free(s->entries[j].file);
        }
        free(s->entries);
        free(s->name);
        free(s->file);
    }
    free(c->sections);
    free(c->path);
    memset(c, 0, sizeof *c);
}
