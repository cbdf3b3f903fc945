/* The INI model: sections of key/value entries, each remembering the file
 * and line it came from so that every later error can name them. */
#ifndef DLG_CONFIG_H
#define DLG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef enum dlg_section_kind {
    DLG_SEC_GLOBAL,
    DLG_SEC_JOB,
    DLG_SEC_STORAGE,
    DLG_SEC_SINK
} dlg_section_kind;

typedef struct dlg_entry {
    char *key;
    char *value;   /* ${ENV} already expanded */
    char *file;    /* "--set" for command-line overrides */
    int line;
} dlg_entry;

typedef struct dlg_section {
    dlg_section_kind kind;
    char *name;    /* "" for [global] */
    char *file;
    int line;
    dlg_entry *entries;
    size_t n, cap;
} dlg_section;

typedef struct dlg_config {
    char *path;
    dlg_section *sections;
    size_t n, cap;
} dlg_config;

const char *dlg_section_kind_name(dlg_section_kind k);

/* Loads path (following include = ...).  Returns 0, or -1 with one line
 * "file:line: message" in err[]. */
int dlg_config_load(dlg_config *c, const char *path, char *err, size_t errlen);
/* The longest line a file may have, in characters (newline excluded). */
int dlg_config_line_max(void);

/* Applies one --set override "SECTION.key=value".  SECTION is global,
 * job (every job), job:NAME, storage:NAME, sink:NAME, or a bare NAME that
 * names exactly one section. */
int dlg_config_set(dlg_config *c, const char *assignment, char *err, size_t errlen);

void dlg_config_free(dlg_config *c);

dlg_section *dlg_config_find(const dlg_config *c, dlg_section_kind kind, const char *name);
const dlg_entry *dlg_section_get(const dlg_section *s, const char *key);

/* "file:line: " prefix for messages about an entry or a section. */
void dlg_entry_where(const dlg_entry *e, char *buf, size_t len);

#endif
