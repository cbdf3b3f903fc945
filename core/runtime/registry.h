/* Finds plugin files, loads them with dlopen(RTLD_NOW|RTLD_LOCAL), checks
 * their ABI and descriptors, and looks up workloads/storages/sinks by name. */
#ifndef DLG_REGISTRY_H
#define DLG_REGISTRY_H

#include <dlgauge/plugin.h>

#include <stdint.h>
#include <stdio.h>

typedef struct dlg_plugin_file {
    char *path;
    void *dl;                     /* NULL if it failed to load */
    const dlg_plugin_info *info;
    char *error;                  /* why it failed, NULL if loaded */
} dlg_plugin_file;

typedef struct dlg_registry {
    char **dirs;                  /* search path, in order */
    size_t ndirs;
    /* DLGAUGE_PLUGIN_PATH's entries that are no readable folder, one line
     * each ("DLGAUGE_PLUGIN_PATH: 'DIR': No such file or directory"): a
     * misspelt folder must not vanish unsaid (dlg_registry_notes). */
    char **notes;
    size_t nnotes;
    dlg_plugin_file *files;
    size_t nfiles, cap;
    int64_t load_timeout_ns;      /* how long one file's load may take (0: no limit) */
    char why[256];                /* why dlg_registry_init failed */
} dlg_registry;

/* Search path: extra_dirs (each --plugin-dir in the order given; a
 * NULL-terminated list, or NULL), then each entry of $DLGAUGE_PLUGIN_PATH,
 * then <dir of executable>/../lib/dlgauge (the build tree, or a relocated
 * install), then the configured install prefix.  A name two folders
 * provide is the first folder's.  Also reads how long a load may take
 * ($DLGAUGE_PLUGIN_LOAD_TIMEOUT, load_watch.h).  0, or -1 with r->why
 * ("out of memory", or what is wrong with that variable). */
int dlg_registry_init(dlg_registry *r, const char *const *extra_dirs);
/* r's notes, each as one line "dlgauge: note: ..." on out (NULL: none). */
void dlg_registry_notes(const dlg_registry *r, FILE *out);
/* Loads every *.so of the search path; a file's failure is kept in it, not
 * fatal.  0, or -1 with r->why when out of memory (which would leave some
 * plugins out). */
int dlg_registry_scan(dlg_registry *r);
/* Loads one explicit file; returns its index or -1 with err[] filled. */
int dlg_registry_load_file(dlg_registry *r, const char *path, char *err, size_t errlen);
void dlg_registry_free(dlg_registry *r);

/* Checks one plugin's info; 0 or -1 with the reason. */
int dlg_plugin_info_check(const dlg_plugin_info *info, char *why, size_t whylen);

/* First descriptor of kind with that name in search order (or only in file
 * `only_file` when >= 0).  On failure err[] lists what is available and
 * which plugin files failed to load. */
const dlg_plugin_desc *dlg_registry_find(const dlg_registry *r, dlg_kind kind, const char *name,
                                         int only_file, const char **from_path, char *err,
                                         size_t errlen);

/* Where two files provide one kind and name, the first in search order is
 * used: the path of the file whose descriptor shadows desc, or NULL when
 * desc is the one used. */
const char *dlg_registry_shadowed_by(const dlg_registry *r, const dlg_plugin_desc *desc);

/* The first plugin file that failed to load and names name among its
 * strings (registry_elf.h: its likely provider), or NULL. */
const dlg_plugin_file *dlg_registry_failed_naming(const dlg_registry *r, const char *name);

const char *dlg_kind_name(dlg_kind k);

#endif
