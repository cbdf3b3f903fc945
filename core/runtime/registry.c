#include "registry.h"
#include "registry_elf.h"
#include "exe_dir.h"
#include "load_guard.h"
#include "load_watch.h"

#include "metrics.h"
#include "options.h"
#include "plan.h"
#include "proc_limits.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DLG_INSTALL_PLUGIN_DIR
#define DLG_INSTALL_PLUGIN_DIR "/usr/local/lib/dlgauge"
#endif
#ifndef DLG_PLUGINS_FROM_BIN
#define DLG_PLUGINS_FROM_BIN "../lib/dlgauge"
#endif

const char *dlg_kind_name(dlg_kind k)
{
    switch (k) {
    case DLG_KIND_WORKLOAD: return "workload";
    case DLG_KIND_STORAGE: return "storage";
    case DLG_KIND_SINK: return "sink";
    }
    return "?";
}

static int add_dir(dlg_registry *r, const char *dir)
{
    if (!dir || !*dir)
        return 0;
    /* the same folder spelled two ways must not load every plugin twice */
    char real[PATH_MAX];
    if (realpath(dir, real))
        dir = real;
    for (size_t i = 0; i < r->ndirs; i++)
        if (strcmp(r->dirs[i], dir) == 0)
            return 0;
    char **d = realloc(r->dirs, (r->ndirs + 1) * sizeof *d);
    if (!d)
        return -1;
    r->dirs = d;
    if (!(r->dirs[r->ndirs] = strdup(dir)))
        return -1;
    r->ndirs++;
    return 0;
}

/* Why dir is no folder to scan (errno's text, or "not a directory"), or
 * NULL when it is one. */
static const char *not_a_folder(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return strerror(errno);
    return S_ISDIR(st.st_mode) ? NULL : "not a directory";
}

static int add_note(dlg_registry *r, const char *dir, const char *why)
{
    char line[PATH_MAX + 128];
    snprintf(line, sizeof line, "DLGAUGE_PLUGIN_PATH folder '%s': %s; skipped", dir, why);
    char **n = realloc(r->notes, (r->nnotes + 1) * sizeof *n);
    if (!n)
        return -1;
    r->notes = n;
    if (!(r->notes[r->nnotes] = strdup(line)))
        return -1;
    r->nnotes++;
    return 0;
}

/* Each entry of $DLGAUGE_PLUGIN_PATH, in order; one that is no folder is
 * kept (its name shows where a plugin was looked for) and noted. */
static int add_env_dirs(dlg_registry *r)
{
    const char *env = getenv("DLGAUGE_PLUGIN_PATH");
    char *copy = env ? strdup(env) : NULL, *save = NULL;
    if (env && !copy)
        return -1;
    int rc = 0;
    for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok && rc == 0; tok = strtok_r(NULL, ":", &save)) {
        size_t had = r->ndirs; /* a folder named twice: noted once */
        rc = add_dir(r, tok);
        const char *why = rc == 0 && r->ndirs > had ? not_a_folder(tok) : NULL;
        if (why)
            rc = add_note(r, tok, why);
    }
    free(copy);
    return rc;
}

static int init_dirs(dlg_registry *r, const char *const *extra_dirs)
{
    for (const char *const *d = extra_dirs; d && *d; d++)
        if (add_dir(r, *d) != 0)
            return -1;
    if (add_env_dirs(r) != 0)
        return -1;
    /* beside the executable: where an install puts them (LIBDIR), then
     * the build tree's lib/dlgauge (the same folder under a lib/ prefix) */
    char bin[PATH_MAX];
    static const char *const from_bin[] = {DLG_PLUGINS_FROM_BIN, "../lib/dlgauge"};
    bool known = dlg_exe_dir(bin, sizeof bin) == 0;
    for (size_t i = 0; known && i < sizeof from_bin / sizeof *from_bin; i++) {
        char dir[PATH_MAX + 64];
        snprintf(dir, sizeof dir, "%s/%s", bin, from_bin[i]);
        char real[PATH_MAX];
        if (realpath(dir, real) && add_dir(r, real) != 0)
            return -1;
    }
    return add_dir(r, DLG_INSTALL_PLUGIN_DIR);
}

int dlg_registry_init(dlg_registry *r, const char *const *extra_dirs)
{
    memset(r, 0, sizeof *r);
    if (dlg_load_timeout(&r->load_timeout_ns, r->why, sizeof r->why) != 0)
        return -1;
    if (init_dirs(r, extra_dirs) != 0) {
        snprintf(r->why, sizeof r->why, "out of memory listing the plugin folders");
        return -1;
    }
    return 0;
}

static int check_metrics(const dlg_metric *m, const char *who, char *why, size_t whylen)
{
    for (size_t i = 0; m && m[i].name; i++) {
        if (!m[i].name[0] || m[i].name[0] == '_') {
            snprintf(why, whylen, "%s: metric #%zu has an empty or '_'-prefixed name", who, i);
            return -1;
        }
        /* line protocol has no way to write a name ending in a backslash
         * (it escapes the delimiter after it): the influx sink cuts it, so
         * 'lat\' would be stored over 'lat', 'items\' over the core's */
        if (m[i].name[strlen(m[i].name) - 1] == '\\') {
            snprintf(why, whylen, "%s: metric '%s' ends in a backslash, which InfluxDB's line protocol cannot "
                     "carry in a name", who, m[i].name);
            return -1;
        }
        /* printed as strings by dlgauge help and list: NULL would crash them */
        if (!m[i].unit || !m[i].help) {
            snprintf(why, whylen, "%s: metric '%s' has no %s (write \"\" for none)", who, m[i].name,
                     m[i].unit ? "help" : "unit");
            return -1;
        }
        if (m[i].type < DLG_FIELD_DOUBLE || m[i].type > DLG_FIELD_BOOL) {
            snprintf(why, whylen, "%s: metric '%s' has unknown type %d", who, m[i].name, (int)m[i].type);
            return -1;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(m[i].name, m[j].name) == 0) {
                snprintf(why, whylen, "%s: metric '%s' is declared twice", who, m[i].name);
                return -1;
            }
    }
    return 0;
}

static bool core_metric_name(const char *name)
{
    for (size_t i = 0; dlg_core_tags[i]; i++)
        if (strcmp(dlg_core_tags[i], name) == 0)
            return true;
    for (size_t i = 0; dlg_core_metrics[i].name; i++)
        if (strcmp(dlg_core_metrics[i].name, name) == 0)
            return true;
    return false;
}

/* Names the core owns.  A workload option called like a core job key (or a
 * [global] key) would take the job's value for both, e.g. a plugin's
 * request `timeout` also killing the cell; a storage or sink option called
 * `type` or `plugin` never reaches the plugin; a metric called like a core
 * field or tag would give a result two columns of one name, and so would a
 * workload option (each result carries its options' values as tags). */
static int check_reserved(const dlg_plugin_desc *d, char *why, size_t whylen)
{
    const char *who = dlg_kind_name(d->kind);
    bool wl = d->kind == DLG_KIND_WORKLOAD;
    for (const dlg_option *o = d->options; o && o->name; o++) {
        bool core = wl ? dlg_opt_find(dlg_core_job_options, o->name, NULL) ||
                             dlg_opt_find(dlg_global_options, o->name, NULL)
                       : dlg_opt_find(dlg_section_options, o->name, NULL) != NULL;
        if (core) {
            snprintf(why, whylen, "%s '%s': option '%s' is a core key of every %s (dlgauge help %s): rename it",
                     who, d->name, o->name, wl ? "[job]" : "[storage]/[sink]", wl ? "job" : "global");
            return -1;
        }
        if (wl && core_metric_name(o->name)) {
            snprintf(why, whylen, "%s '%s': option '%s' is named like a core result field or tag (dlgauge help "
                     "metrics): each result carries its value as a tag, two columns of one name: rename it",
                     who, d->name, o->name);
            return -1;
        }
    }
    for (const dlg_metric *m = wl ? d->metrics : NULL; m && m->name; m++)
        if (core_metric_name(m->name)) {
            snprintf(why, whylen, "%s '%s': metric '%s' is a core result field or tag (dlgauge help metrics): "
                     "rename it", who, d->name, m->name);
            return -1;
        }
    return 0;
}

static int check_ops(const dlg_plugin_desc *d, char *why, size_t whylen)
{
    const char *missing = NULL;
    switch (d->kind) {
    case DLG_KIND_WORKLOAD: {
        const dlg_workload_ops *o = d->ops;
        if (o->version < 1) missing = "version";
        else if (!o->unit || !o->unit[0]) missing = "unit";
        else if (!o->setup) missing = "setup";
        else if (!o->step) missing = "step";
        else if (!o->teardown) missing = "teardown";
        break;
    }
    case DLG_KIND_STORAGE: {
        const dlg_storage_ops *o = d->ops;
        if (o->version < 1) missing = "version";
        else if (!o->file_size) missing = "file_size";
        else if (o->file_size < sizeof(dlg_file)) {
            snprintf(why, whylen, "storage '%s': ops table's file_size %zu is smaller than a dlg_file (%zu bytes): "
                     "set it to the size of the backend's file struct, which starts with a dlg_file",
                     d->name, o->file_size, sizeof(dlg_file));
            return -1;
        }
        else if (!o->create || !o->destroy) missing = "create/destroy";
        else if (!o->open || !o->close || !o->size || !o->read) missing = "open/close/size/read";
        else if ((o->caps & DLG_CAP_ZERO_COPY) && (!o->fetch || !o->unfetch)) missing = "fetch/unfetch";
        else if ((o->caps & DLG_CAP_ASYNC) && (!o->submit || !o->reap)) missing = "submit/reap";
        break;
    }
    case DLG_KIND_SINK: {
        const dlg_sink_ops *o = d->ops;
        if (o->version < 1) missing = "version";
        else if (!o->open || !o->write || !o->close) missing = "open/write/close";
        break;
    }
    }
    if (missing) {
        snprintf(why, whylen, "%s '%s': ops table lacks %s", dlg_kind_name(d->kind), d->name, missing);
        return -1;
    }
    return 0;
}

/* Two descriptors of one kind and name in one file: the second could never
 * be used (not even with plugin = FILE), and list would call it shadowed
 * by its own file. */
static int check_unique(const dlg_plugin_info *info, size_t i, char *why, size_t whylen)
{
    const dlg_plugin_desc *d = info->items[i];
    for (size_t j = 0; j < i; j++)
        if (info->items[j]->kind == d->kind && strcmp(info->items[j]->name, d->name) == 0) {
            snprintf(why, whylen, "%s '%s' is declared twice (descriptors #%zu and #%zu): rename one",
                     dlg_kind_name(d->kind), d->name, j, i);
            return -1;
        }
    return 0;
}

/* A descriptor's size, kind, name, version, summary and ops: each one
 * that is wrong named as such. */
static int check_desc_head(const dlg_plugin_desc *d, size_t i, char *why, size_t whylen)
{
    if (d->struct_size < sizeof(dlg_plugin_desc)) {
        snprintf(why, whylen, "descriptor #%zu: struct_size %u is smaller than %zu", i, d->struct_size,
                 sizeof(dlg_plugin_desc));
        return -1;
    }
    if (!d->name || !d->name[0]) {
        snprintf(why, whylen, "descriptor #%zu: no name", i);
        return -1;
    }
    if (d->kind < DLG_KIND_WORKLOAD || d->kind > DLG_KIND_SINK) {
        snprintf(why, whylen, "descriptor #%zu '%s': unknown kind %d (DLG_KIND_WORKLOAD, DLG_KIND_STORAGE or "
                 "DLG_KIND_SINK)", i, d->name, (int)d->kind);
        return -1;
    }
    const char *missing = !d->version ? "version" : !d->summary ? "summary" : !d->ops ? "ops table" : NULL;
    if (missing) {
        snprintf(why, whylen, "%s '%s' (descriptor #%zu): no %s", dlg_kind_name(d->kind), d->name, i, missing);
        return -1;
    }
    return 0;
}

int dlg_plugin_info_check(const dlg_plugin_info *info, char *why, size_t whylen)
{
    dlg_load_phase(DLG_LOAD_INFO);
    if (info->abi_major != DLG_ABI_MAJOR) {
        snprintf(why, whylen, "built for plugin ABI %u.%u, but this dlgauge speaks ABI %d.%d: rebuild "
                 "the plugin against this dlgauge's headers", info->abi_major, info->abi_minor,
                 DLG_ABI_MAJOR, DLG_ABI_MINOR);
        return -1;
    }
    if (info->abi_minor > DLG_ABI_MINOR) {
        snprintf(why, whylen, "built for plugin ABI %u.%u, newer than this dlgauge's %d.%d: upgrade dlgauge",
                 info->abi_major, info->abi_minor, DLG_ABI_MAJOR, DLG_ABI_MINOR);
        return -1;
    }
    if (info->struct_size < sizeof(dlg_plugin_info)) {
        snprintf(why, whylen, "malformed plugin info (struct_size %u, expected %zu)", info->struct_size,
                 sizeof(dlg_plugin_info));
        return -1;
    }
    if (!info->name || !info->items) {
        snprintf(why, whylen, "plugin info has no %s (DLG_PLUGIN(\"name\", &desc, ...) fills both)",
                 info->name ? "descriptor list (items is NULL)" : "name (NULL)");
        return -1;
    }
    for (size_t i = 0;; i++) {
        dlg_load_phase(DLG_LOAD_INFO); /* reading the list */
        const dlg_plugin_desc *d = info->items[i];
        if (!d)
            break;
        dlg_load_phase(DLG_LOAD_DESC + (int)(i < 1000 ? i : 1000));
        if (check_desc_head(d, i, why, whylen) != 0)
            return -1;
        char sub[384];
        if (dlg_opt_table_check(d->options, sub, sizeof sub) != 0) {
            snprintf(why, whylen, "%s '%s': malformed option table: %s", dlg_kind_name(d->kind), d->name, sub);
            return -1;
        }
        if (check_unique(info, i, why, whylen) != 0 || check_metrics(d->metrics, d->name, why, whylen) != 0 ||
            check_reserved(d, why, whylen) != 0 || check_ops(d, why, whylen) != 0)
            return -1;
    }
    return 0;
}

static dlg_plugin_file *new_file(dlg_registry *r, const char *path)
{
    if (r->nfiles == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        dlg_plugin_file *f = realloc(r->files, cap * sizeof *f);
        if (!f)
            return NULL;
        r->files = f;
        r->cap = cap;
    }
    dlg_plugin_file *f = &r->files[r->nfiles];
    memset(f, 0, sizeof *f);
    if (!(f->path = strdup(path)))
        return NULL;
    r->nfiles++;
    return f;
}

/* -1 when not even the reason can be kept (out of memory): a file
 * without one would look loaded, and its names merely unknown */
static int set_error(dlg_plugin_file *f, const char *why)
{
    free(f->error);
    f->error = strdup(why);
    return f->error ? 0 : -1;
}

/* Whether dlopen's msg is a mapping that ran out of room (ENOMEM) under
 * an address-space limit, ulimit -v (its value into lim): ldd would show
 * nothing wrong with the file. */
static bool address_space_short(const char *msg, char *lim, size_t len)
{
    struct rlimit rl;
    if (!strstr(msg, "failed to map segment") && !strstr(msg, "annot allocate memory"))
        return false;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return false;
    dlg_rlimit_text(RLIMIT_AS, lim, len);
    return true;
}

/* dlerror() without the path it starts with (every message names the file
 * already), and what shows the cause: the file itself when it is no
 * loadable shared object; else plain ldd, which lists missing libraries,
 * or ldd -r for the symbols that nothing loaded defines. */
static void dlopen_error(const char *path, const char *msg, char *why, size_t whylen)
{
    char lim[32];
    if (!msg)
        msg = "cannot be loaded";
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
        msg += n + 2;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(why, whylen, "a folder, not a plugin file (a folder of plugins goes in --plugin-dir or "
                 "DLGAUGE_PLUGIN_PATH)");
    else if (dlg_plugin_not_loadable(path, msg, why, whylen))
        return;
    else if (address_space_short(msg, lim, sizeof lim))
        snprintf(why, whylen, "%s (most likely the address-space limit, ulimit -v %s, too small to map it and "
                 "the libraries it links: raise it, or lift it with ulimit -v unlimited)", msg, lim);
    else if (strstr(msg, "undefined symbol"))
        snprintf(why, whylen, "%s (no library it links defines it; link it with -Wl,--no-undefined, as "
                 "dlg_add_plugin does, to see this at build time; list them with: ldd -r %s)", msg, path);
    else
        snprintf(why, whylen, "%s (check its dependencies with: ldd %s)", msg, path);
}

/* dlgauge_plugin_entry as a C++ compiler names it (Itanium ABI): a C++
 * plugin whose DLG_PLUGIN expanded without extern "C" (older plugin.h). */
#define CXX_ENTRY_SYMBOL "_Z20dlgauge_plugin_entryv"

/* The plugin's info from its entry, or NULL with why. */
static const dlg_plugin_info *plugin_info(void *dl, char *why, size_t whylen)
{
    dlg_plugin_entry_fn entry = (dlg_plugin_entry_fn)dlsym(dl, DLG_PLUGIN_ENTRY_SYMBOL);
    dlg_load_phase(DLG_LOAD_ENTRY);
    const dlg_plugin_info *info = entry ? entry() : NULL;
    dlg_load_phase(DLG_LOAD_INFO);
    if (!entry && dlsym(dl, CXX_ENTRY_SYMBOL))
        snprintf(why, whylen, "not a dlgauge plugin: its entry has a C++ name (%s), not %s: rebuild it "
                 "against this dlgauge's plugin.h, whose DLG_PLUGIN declares it extern \"C\"",
                 CXX_ENTRY_SYMBOL, DLG_PLUGIN_ENTRY_SYMBOL);
    else if (!info)
        snprintf(why, whylen, entry ? "not a dlgauge plugin (its %s returned NULL)"
                                    : "not a dlgauge plugin (no %s symbol)", DLG_PLUGIN_ENTRY_SYMBOL);
    else if (dlg_plugin_info_check(info, why, whylen) != 0)
        return NULL;
    return info;
}

/* Reads each byte of s (NULL: none), so that a pointer to nothing faults
 * here, under the load guard, not in whatever reads it later. */
static size_t touch(const char *s) { return s ? strlen(s) : 0; }

/* Every string of info's tables that the host reads after the load (help
 * and list print each option's and metric's texts) but the checks do not. */
static void touch_tables(const dlg_plugin_info *info)
{
    volatile size_t sum = touch(info->name);
    for (size_t i = 0; info->items[i]; i++) {
        const dlg_plugin_desc *d = info->items[i];
        dlg_load_phase(DLG_LOAD_DESC + (int)(i < 1000 ? i : 1000));
        sum += touch(d->name) + touch(d->version) + touch(d->summary);
        for (const dlg_option *o = d->options; o && o->name; o++)
            sum += touch(o->name) + touch(o->def) + touch(o->min) + touch(o->max) + touch(o->choices) +
                   touch(o->help);
        for (const dlg_metric *m = d->metrics; m && m->name; m++)
            sum += touch(m->name) + touch(m->unit) + touch(m->help);
        if (d->kind == DLG_KIND_WORKLOAD)
            sum += touch(((const dlg_workload_ops *)d->ops)->unit);
    }
    (void)sum;
}

/* The plugin's info from its entry, every string of its tables read:
 * what the load guard runs (load_guard.h). */
static const dlg_plugin_info *read_info(void *dl, char *why, size_t whylen)
{
    const dlg_plugin_info *info = plugin_info(dl, why, whylen);
    if (info)
        touch_tables(info);
    return info;
}

/* Loads f->path, each step within timeout_ns; on failure records why in
 * f->error.  -1 when out of memory to record it. */
static int load(dlg_plugin_file *f, int64_t timeout_ns)
{
    char why[768];
    if (dlg_plugin_truncated(f->path, why, sizeof why))
        return set_error(f, why);
    f->dl = dlg_dlopen_guarded(f->path, timeout_ns);
    if (!f->dl) {
        dlopen_error(f->path, dlerror(), why, sizeof why);
        return set_error(f, why);
    }
    bool crashed;
    if (!(f->info = dlg_load_guarded(f->dl, f->path, read_info, timeout_ns, why, sizeof why, &crashed))) {
        if (!crashed) /* a crashed one stays mapped: its destructors are its code too */
            dlclose(f->dl);
        f->dl = NULL;
        return set_error(f, why);
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The *.so names of dir, sorted, in *out (NULL, *n = 0: none, or no such
 * folder).  -1 when out of memory: a plugin left out would make its
 * names "unknown" without a word. */
static int so_names(const char *dir, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOMEM ? -1 : 0;
    char **names = NULL;
    size_t cap = 0, got = 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 3 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        if (got == cap) { /* no fixed cap: a plugin past it would be missing without a word */
            char **more = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
            if (!more) {
                rc = -1;
                break;
            }
            names = more;
        }
        if (!(names[got] = strdup(e->d_name)))
            rc = -1;
        else
            got++;
    }
    closedir(d);
    if (rc != 0) {
        free_names(names, got);
        return -1;
    }
    if (got)
        qsort(names, got, sizeof *names, by_name);
    *out = names;
    *n = got;
    return 0;
}

static int scan_dir(dlg_registry *r, const char *dir)
{
    size_t n;
    char **names;
    int rc = so_names(dir, &names, &n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        dlg_plugin_file *f = new_file(r, path);
        rc = f ? load(f, r->load_timeout_ns) : -1;
    }
    free_names(names, n);
    if (rc != 0)
        snprintf(r->why, sizeof r->why, "out of memory loading the plugins of %s", dir);
    return rc;
}

int dlg_registry_scan(dlg_registry *r)
{
    for (size_t i = 0; i < r->ndirs; i++)
        if (scan_dir(r, r->dirs[i]) != 0)
            return -1;
    return 0;
}

/* The index of the file st describes among r's, or -1. */
static int file_index(const dlg_registry *r, const struct stat *st)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        struct stat fs;
        if (stat(r->files[i].path, &fs) == 0 && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino)
            return (int)i;
    }
    return -1;
}

/* A plugin file that is not there; a relative one with where it was
 * looked for: from the current directory, not the INI file's. */
static void missing_file(const char *path, char *err, size_t errlen)
{
    char cwd[PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(err, errlen, "plugin file '%s' does not exist", path);
    else
        snprintf(err, errlen, "plugin file '%s' does not exist (looked for %s/%s: a relative path is from the "
                 "current directory, not the INI file's)", path, strcmp(cwd, "/") ? cwd : "", path);
}

int dlg_registry_load_file(dlg_registry *r, const char *path, char *err, size_t errlen)
{
    char real[PATH_MAX];
    const char *p = realpath(path, real) ? real : path;
    struct stat st;
    if (stat(p, &st) != 0) {
        missing_file(path, err, errlen);
        return -1;
    }
    /* a file the scan (or an earlier key) loaded, however spelled: its
     * failure once, not once more for a second try */
    int known = file_index(r, &st);
    if (known >= 0 && !r->files[known].info)
        snprintf(err, errlen, "%s: %s", path, r->files[known].error ? r->files[known].error : "cannot be loaded");
    if (known >= 0)
        return r->files[known].info ? known : -1;
    dlg_plugin_file *f = new_file(r, p);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (load(f, r->load_timeout_ns) != 0) {
        snprintf(err, errlen, "%s: out of memory loading it", path);
        return -1;
    }
    if (!f->info) {
        snprintf(err, errlen, "%s: %s", path, f->error);
        return -1;
    }
    return (int)(f - r->files);
}

static bool listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* After err's "unknown KIND 'NAME'": "; FILE provides workload 'dot',
 * no sink", for a plugin = FILE that has no descriptor of that kind. */
static void provides(const dlg_plugin_file *f, dlg_kind kind, char *err, size_t errlen)
{
    size_t w = strlen(err);
    const char *sep = " ";
    w += (size_t)snprintf(err + w, w < errlen ? errlen - w : 0, "; %s provides", f->path);
    for (const dlg_plugin_desc *const *d = f->info->items; *d && w < errlen; d++, sep = ", ")
        w += (size_t)snprintf(err + w, errlen - w, "%s%s '%s'", sep, dlg_kind_name((*d)->kind), (*d)->name);
    if (w < errlen)
        snprintf(err + w, errlen - w, "%sno %s", f->info->items[0] ? ", " : " ", dlg_kind_name(kind));
}

const dlg_plugin_file *dlg_registry_failed_naming(const dlg_registry *r, const char *name)
{
    for (size_t i = 0; i < r->nfiles; i++)
        if (r->files[i].error && dlg_plugin_names(r->files[i].path, name))
            return &r->files[i];
    return NULL;
}

const char *dlg_registry_shadowed_by(const dlg_registry *r, const dlg_plugin_desc *desc)
{
    const char *path = NULL;
    char err[64];
    const dlg_plugin_desc *used = dlg_registry_find(r, desc->kind, desc->name, -1, &path, err, sizeof err);
    return used && used != desc ? path : NULL;
}

const dlg_plugin_desc *dlg_registry_find(const dlg_registry *r, dlg_kind kind, const char *name,
                                         int only_file, const char **from_path, char *err,
                                         size_t errlen)
{
    const char *avail[256];
    size_t navail = 0;
    for (size_t i = 0; i < r->nfiles; i++) {
        if (!r->files[i].info || (only_file >= 0 && (size_t)only_file != i))
            continue;
        for (const dlg_plugin_desc *const *d = r->files[i].info->items; *d; d++) {
            if ((*d)->kind != kind)
                continue;
            if (strcmp((*d)->name, name) == 0) {
                if (from_path)
                    *from_path = r->files[i].path;
                return *d;
            }
            if (navail < 256 && !listed(avail, navail, (*d)->name)) /* a shadowed copy: once */
                avail[navail++] = (*d)->name;
        }
    }
    /* not the name's fault where the file that has it failed to load
     * (under a tight ulimit -v, every file does) */
    const dlg_plugin_file *failed = only_file < 0 ? dlg_registry_failed_naming(r, name) : NULL;
    if (failed) {
        snprintf(err, errlen, "plugin file %s, which names %s '%s', could not be loaded: %s", failed->path,
                 dlg_kind_name(kind), name, failed->error);
        return NULL;
    }
    int w = snprintf(err, errlen, "unknown %s '%s'", dlg_kind_name(kind), name);
    if (only_file >= 0 && !navail) { /* plugin = FILE without that kind: what the file has */
        provides(&r->files[only_file], kind, err, errlen);
        return NULL;
    }
    dlg_append_suggestion(err, errlen, dlg_suggest(name, avail, navail));
    w = (int)strlen(err);
    w += snprintf(err + w, w < (int)errlen ? errlen - (size_t)w : 0, "; available:%s", navail ? "" : " none");
    for (size_t i = 0; i < navail && w < (int)errlen; i++)
        w += snprintf(err + w, errlen - (size_t)w, " %s", avail[i]);
    /* where it was looked for: a misspelt folder shows here (not with
     * plugin = FILE, where that file alone was asked) */
    if (only_file < 0 && w < (int)errlen)
        w += snprintf(err + w, errlen - (size_t)w, "; searched:");
    for (size_t i = 0; only_file < 0 && i < r->ndirs && w < (int)errlen; i++)
        w += snprintf(err + w, errlen - (size_t)w, " %s%s", r->dirs[i], not_a_folder(r->dirs[i]) ? " (missing)" : "");
    for (size_t i = 0; i < r->nfiles && w < (int)errlen; i++)
        if (r->files[i].error)
            w += snprintf(err + w, errlen - (size_t)w, "; %s failed to load: %s", r->files[i].path,
                          r->files[i].error);
    return NULL;
}

void dlg_registry_notes(const dlg_registry *r, FILE *out)
{
    for (size_t i = 0; out && i < r->nnotes; i++)
        fprintf(out, "dlgauge: note: %s\n", r->notes[i]);
}

void dlg_registry_free(dlg_registry *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        /* Plugins stay mapped until exit: sinks may have registered
         * atexit-style state in libraries (libcurl), and unloading buys nothing. */
        free(r->files[i].path);
        free(r->files[i].error);
    }
    for (size_t i = 0; i < r->ndirs; i++)
        free(r->dirs[i]);
    for (size_t i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    free(r->files);
    free(r->dirs);
    free(r->notes);
    memset(r, 0, sizeof *r);
}
