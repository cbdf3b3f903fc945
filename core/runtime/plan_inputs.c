/* Plan checks that only this machine can answer: whether the CPUs a job
 * asks for exist here, and whether the data sets it reads are on disk (see
 * dlg_plan_check_inputs in plan.h).  Found here, they stop the run at the
 * key's line before any cell, instead of failing cells one by one. */
#define _GNU_SOURCE
#include "plan.h"

#include "affinity.h"
#include "options.h"
#include "topology.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- cpus ---------------------------------------------------------------- */

/* Whether a cell could be pinned to `cpus` here (the runner's own choice
 * and quota check, without pinning); why[] says why not. */
static bool cpus_fit(const char *cpus, const dlg_cpuset *allowed, const dlg_cgroup_limits *env, char *why,
                     size_t whylen)
{
    dlg_cpuset want;
    if (dlg_cpuset_init(&want, allowed->nbits) != 0) {
        snprintf(why, whylen, "out of memory");
        return false;
    }
    int n = dlg_cpus_choose(cpus, allowed, &want, why, whylen);
    dlg_cpuset_fini(&want);
    return n >= 0 && dlg_cpus_check_limits(cpus, n, env, why, whylen) == 0;
}

/* Whether jobs a and b take cpus from one entry (a [global] line shared
 * by many jobs is said once, with all their cells). */
static bool same_cpus_line(const dlg_plan *p, size_t a, size_t b)
{
    const dlg_entry *e = p->jobs[a].core_src[DLG_K_CPUS];
    return a == b || (e && e == p->jobs[b].core_src[DLG_K_CPUS]);
}

static bool said_before(const dlg_plan *p, size_t j)
{
    for (size_t i = 0; i < j; i++)
        if (same_cpus_line(p, i, j))
            return true;
    return false;
}

/* Cells of job j and the later jobs on its line whose cpus value is one of
 * the nbad of nvalues that do not fit. */
static size_t lost_cells(const dlg_plan *p, size_t j, size_t nvalues, size_t nbad)
{
    size_t cells = 0;
    for (size_t i = j; i < p->njobs; i++)
        if (same_cpus_line(p, j, i))
            cells += p->jobs[i].ncells / nvalues * nbad;
    return cells;
}

static int check_cpus(const dlg_plan *p, size_t jidx, const dlg_cpuset *allowed, const dlg_cgroup_limits *env,
                      FILE *warn, char *err, size_t errlen)
{
    const dlg_job *j = &p->jobs[jidx];
    char **vals = NULL, why[1024], first[1024] = "", bad[256] = "", w[512];
    size_t n = 0, nbad = 0;
    if (said_before(p, jidx))
        return 0;
    if (dlg_list_split(j->core_text[DLG_K_CPUS], &vals, &n) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (cpus_fit(vals[i], allowed, env, why, sizeof why))
            continue;
        if (!nbad++)
            snprintf(first, sizeof first, "%s", why);
        snprintf(bad + strlen(bad), sizeof bad - strlen(bad), "%s%s", nbad > 1 ? ", " : "", vals[i]);
    }
    dlg_list_free(vals, n);
    if (!nbad)
        return 0;
    dlg_plan_where(j->core_src[DLG_K_CPUS], j->sec, w, sizeof w);
    if (nbad == n) { /* no cell of this job could run */
        snprintf(err, errlen, "%s[job %s] %s%s%s%s", w, j->name, first, n > 1 ? " (no value fits: " : "",
                 n > 1 ? bad : "", n > 1 ? ")" : "");
        return -1;
    }
    /* a sweep written for bigger machines too: the cells that fit still run */
    bool global = dlg_section_get(j->sec, "cpus") != j->core_src[DLG_K_CPUS];
    size_t cells = lost_cells(p, jidx, n, nbad);
    fprintf(warn, "dlgauge: %s[%s%s] warning: %s: the %zu cell%s with cpus = %s will fail\n", w,
            global ? "global" : "job ", global ? "" : j->name, first, cells, cells == 1 ? "" : "s", bad);
    return 0;
}

/* ---- paths --------------------------------------------------------------- */

/* What a path ARG names: a folder (DIR), a file (FILE, LIST: judged only as
 * not a folder; a backend says what else it cannot read), or either (PATH,
 * LIST_OR_DIR, "DIR or LIST"). */
typedef enum { ARG_EITHER, ARG_FILE, ARG_DIR } arg_kind;

/* A form that a path option's help declares (the loader's `data`): "recordio:FILE" and
 * "files:LIST_OR_DIR" take a path (their upper-case argument says PATH, DIR, FILE
 * or LIST), "synthetic[:N]" or "s3:BUCKET" an argument that is none. */
typedef struct data_form {
    char kind[32];
    char shown[64];
    bool path;
    arg_kind want;
} data_form;

static bool word_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-'; }

static bool names_path(const char *arg)
{
    static const char *const words[] = {"PATH", "DIR", "FILE", "LIST"};
    size_t len = strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        const char *hit = strstr(arg, words[i]);
        if (hit && (size_t)(hit - arg) < len)
            return true;
    }
    return false;
}

/* The kind the ARG in arg[0, len) names. */
static arg_kind arg_kind_of(const char *arg, size_t len)
{
    bool dir = false, file = false;
    for (size_t i = 0; i < len; i++) {
        dir |= i + 3 <= len && strncmp(arg + i, "DIR", 3) == 0;
        file |= i + 4 <= len && (strncmp(arg + i, "FILE", 4) == 0 || strncmp(arg + i, "LIST", 4) == 0);
    }
    return dir == file ? ARG_EITHER : dir ? ARG_DIR : ARG_FILE;
}

static size_t declared_forms(const char *help, data_form *out, size_t max)
{
    size_t n = 0;
    for (const char *p = help; p && *p && n < max; p++) {
        if (!islower((unsigned char)*p) || (p > help && word_char(p[-1])))
            continue;
        size_t k = 0;
        while (word_char(p[k]))
            k++;
        const char *q = p + k;
        bool required = q[0] == ':' && isupper((unsigned char)q[1]);
        bool optional = q[0] == '[' && q[1] == ':';
        if ((required || optional) && k < sizeof out->kind) {
            size_t len = strcspn(q, " \t|,;()");
            memcpy(out[n].kind, p, k);
            out[n].kind[k] = '\0';
            snprintf(out[n].shown, sizeof out[n].shown, "%.*s%.*s", (int)k, p, (int)len, q);
            out[n].want = arg_kind_of(q + 1, strspn(q + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_"));
            out[n++].path = required && names_path(q + 1);
        }
        p = q - 1;
    }
    return n;
}

/* Whether option o names a path the job reads or writes: its flags say so
 * (DLG_OPT_PATH_IN/OUT).  An option with neither flag, as every option of a
 * plugin built before them, is judged by its name, as this check did before
 * the flags: `data` and `input` are read, `output` written. */
static bool reads_path(const dlg_option *o)
{
    if (o->type != DLG_OPT_STRING)
        return false;
    if (o->flags & (DLG_OPT_PATH_IN | DLG_OPT_PATH_OUT))
        return (o->flags & DLG_OPT_PATH_IN) != 0;
    return strcmp(o->name, "data") == 0 || strcmp(o->name, "input") == 0;
}

static bool writes_path(const dlg_option *o)
{
    if (o->type != DLG_OPT_STRING)
        return false;
    if (o->flags & (DLG_OPT_PATH_IN | DLG_OPT_PATH_OUT))
        return (o->flags & DLG_OPT_PATH_OUT) != 0;
    return strcmp(o->name, "output") == 0;
}

/* The path that a writing option's value v names, and its kind ("" if none)
 * in kind[]: "KIND:path" where o's help declares forms (an unflagged
 * `output` is read so too, as before the flags), else all of v. */
static const char *written_path(const dlg_option *o, const char *v, char *kind, size_t klen)
{
    data_form f[16];
    bool forms = !(o->flags & DLG_OPT_PATH_OUT) || declared_forms(o->help, f, sizeof f / sizeof *f) > 0;
    const char *colon = forms ? strchr(v, ':') : NULL;
    snprintf(kind, klen, "%.*s", colon ? (int)(colon - v) : 0, v);
    return colon ? colon + 1 : v;
}

/* The job (other than self) with a path-writing option for the same file as
 * path, the first in run order; that option's index in *opt, the kind it
 * writes ("" if none) in kind[]. */
static const dlg_job *writer_of(const dlg_plan *p, size_t self, const char *path, size_t *opt, char *kind,
                                size_t klen)
{
    for (size_t j = 0; j < p->njobs; j++) {
        const dlg_job *job = &p->jobs[j];
        for (size_t k = 0; j != self && k < job->nwl; k++) {
            const dlg_option *o = &job->workload->options[k];
            if (!job->wl_text[k] || !writes_path(o) ||
                !dlg_path_same(written_path(o, job->wl_text[k], kind, klen), path))
                continue;
            *opt = k;
            return job;
        }
    }
    return NULL;
}

/* Whether an earlier job writes path, as the kind job jidx reads it as
 * (kind: "" for a form-declaring value without one, NULL for a whole-value
 * path); if not, why[] says what a user needs to know, if anything. */
static bool written_before(const dlg_plan *p, size_t jidx, const char *kind, const char *path, char *why,
                           size_t len)
{
    char wkind[32], w[512];
    size_t k = 0;
    const dlg_job *wr = writer_of(p, jidx, path, &k, wkind, sizeof wkind);
    why[0] = '\0';
    if (!wr) { /* a whole-value path is seldom a job's output: no need to say it */
        snprintf(why, len, "%s", kind ? " (and no earlier job of this run writes it as its output)" : "");
        return false;
    }
    dlg_plan_where(wr->wl_src[k], wr->sec, w, sizeof w);
    w[strlen(w) > 1 ? strlen(w) - 2 : 0] = '\0'; /* "file:line", without ": " */
    if (wr > &p->jobs[jidx])
        snprintf(why, len, " (job %s writes it, at %s, but runs after this one)", wr->name, w);
    else if (kind && *kind && *wkind && strcmp(kind, wkind) != 0)
        snprintf(why, len, " (job %s writes it as %s, at %s, not as %s)", wr->name, wkind, w, kind);
    return !why[0];
}

/* Whether storage `name` (a [storage] section or a backend type) reads
 * local file names: a built-in backend does; a wrapper (an option flagged
 * DLG_OPT_STORAGE, the throttle's inner) does when what it wraps does.
 * depth bounds a loop of wrappers, which the host refuses when it opens them. */
static bool reads_local(const dlg_plan *p, const char *name, int depth)
{
    static const char *const local[] = {"posix", "direct", "mmap", "uring"};
    const dlg_instance_spec *s = dlg_plan_storage(p, name);
    const char *type = s && s->desc ? s->desc->name : name;
    for (size_t k = 0; k < sizeof local / sizeof *local; k++)
        if (strcmp(type, local[k]) == 0)
            return true;
    const dlg_option *opts = s && s->desc ? s->desc->options : NULL;
    for (size_t i = 0; depth > 0 && s && s->vals && opts && opts[i].name; i++)
        if ((opts[i].flags & DLG_OPT_STORAGE) && s->vals[i].set && s->vals[i].text &&
            reads_local(p, s->vals[i].text, depth - 1))
            return true;
    return false;
}

/* Whether any storage the job reads through takes local file names: a
 * path missing here fails those cells whatever another plugin's cells make
 * of it (a bucket or a URL that only it can resolve), so only a job read
 * through none is left to it. */
static bool local_files(const dlg_plan *p, const dlg_job *j)
{
    char **vals = NULL;
    size_t n = 0;
    if (!j->core_text[DLG_K_STORAGE] || dlg_list_split(j->core_text[DLG_K_STORAGE], &vals, &n) != 0)
        return false;
    bool any = false;
    for (size_t i = 0; i < n && !any; i++)
        any = reads_local(p, vals[i], 4);
    dlg_list_free(vals, n);
    return any;
}

/* That the path job jidx's option k names (read as kind: see
 * written_before) exists, or that an earlier job of the run writes it. */
static int check_path(const dlg_plan *p, size_t jidx, size_t k, const char *kind, const char *path, char *err,
                      size_t errlen)
{
    const dlg_job *j = &p->jobs[jidx];
    struct stat st;
    if (stat(path, &st) == 0)
        return 0;
    int e = errno;
    char why[1024] = "", w[512];
    if ((e == ENOENT || e == ENOTDIR) && written_before(p, jidx, kind, path, why, sizeof why))
        return 0;
    dlg_plan_where(j->wl_src[k], j->sec, w, sizeof w);
    snprintf(err, errlen, "%s[job %s] %s: %s: %s%s", w, j->name, j->workload->options[k].name, path, strerror(e),
             why);
    return -1;
}

/* That a path which exists is of the kind its ARG names (shown: that ARG as
 * the help writes it): a folder where a file is read fails every cell. */
static int check_path_kind(const dlg_plan *p, size_t jidx, size_t k, const char *path, arg_kind want,
                           const char *shown, char *err, size_t errlen)
{
    struct stat st;
    if (want == ARG_EITHER || stat(path, &st) != 0 || (S_ISDIR(st.st_mode) != 0) == (want == ARG_DIR))
        return 0;
    const dlg_job *j = &p->jobs[jidx];
    char w[512];
    dlg_plan_where(j->wl_src[k], j->sec, w, sizeof w);
    snprintf(err, errlen, "%s[job %s] %s: %s: %s (%s expected: %s)", w, j->name, j->workload->options[k].name, path,
             strerror(want == ARG_DIR ? ENOTDIR : EISDIR), want == ARG_DIR ? "a directory" : "a file", shown);
    return -1;
}

/* One value of job jidx's option k against the forms it declares. */
static int check_form_value(const dlg_plan *p, size_t jidx, size_t k, const char *v, const data_form *f, size_t nf,
                            char *err, size_t errlen)
{
    const dlg_job *j = &p->jobs[jidx];
    const char *name = j->workload->options[k].name;
    const char *colon = strchr(v, ':');
    size_t klen = colon ? (size_t)(colon - v) : strlen(v);
    const data_form *form = NULL;
    for (size_t i = 0; i < nf && !form; i++)
        if (strlen(f[i].kind) == klen && strncmp(f[i].kind, v, klen) == 0)
            form = &f[i];
    char w[512];
    dlg_plan_where(j->wl_src[k], j->sec, w, sizeof w);
    if (!form) {
        const char *kinds[16];
        for (size_t i = 0; i < nf; i++)
            kinds[i] = f[i].kind;
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)klen, v);
        /* the help verbatim: it may say which workload reads this kind */
        snprintf(err, errlen, "%s[job %s] %s: unknown kind '%s' in '%s' (workload %s: %s)", w, j->name, name, word,
                 v, j->workload->name, j->workload->options[k].help);
        dlg_append_suggestion(err, errlen, dlg_suggest(word, kinds, nf));
        return -1;
    }
    if (!form->path)
        return 0;
    const char *path = colon ? colon + 1 : "";
    if (*path && !local_files(p, j))
        return 0;
    if (!*path) {
        snprintf(err, errlen, "%s[job %s] %s: '%s' names no path (%s)", w, j->name, name, v, form->shown);
        return -1;
    }
    if (check_path(p, jidx, k, form->kind, path, err, errlen) != 0)
        return -1;
    return check_path_kind(p, jidx, k, path, form->want, form->shown, err, errlen);
}

/* An unflagged `input` (a plugin built before the flags) is a whole-value
 * path when its help starts with a path ARG ("DIR or LIST: ..."). */
static bool help_starts_with_path(const char *help)
{
    return help && isupper((unsigned char)help[0]) && names_path(help);
}

/* The kind a whole-value option's help names by the ARG it starts with
 * ("DIR: the folder ...", "DIR or LIST: ..."), and "NAME = ARG" in shown[]. */
static arg_kind leading_arg(const dlg_option *o, char *shown, size_t len)
{
    if (!help_starts_with_path(o->help))
        return ARG_EITHER;
    size_t n = strcspn(o->help, ":");
    snprintf(shown, len, "%s = %.*s", o->name, (int)n, o->help);
    return arg_kind_of(o->help, n);
}

/* One value of job jidx's option k that is a path as a whole (an empty
 * element of a sweep list: the workload says what that means). */
static int check_whole_value(const dlg_plan *p, size_t jidx, size_t k, const char *v, char *err, size_t errlen)
{
    if (!*v || !local_files(p, &p->jobs[jidx]))
        return 0;
    if (check_path(p, jidx, k, NULL, v, err, errlen) != 0)
        return -1;
    char shown[128];
    arg_kind want = leading_arg(&p->jobs[jidx].workload->options[k], shown, sizeof shown);
    return check_path_kind(p, jidx, k, v, want, shown, err, errlen);
}

/* Job jidx's option k, when it reads a path: each value (a sweep's each)
 * against the forms its help declares, else as a path as a whole.  Unflagged
 * options keep the name rule: a `data` with forms, an `input` with a path
 * ARG; any other is the workload's to check (its own setup does). */
static int check_read_path(const dlg_plan *p, size_t jidx, size_t k, char *err, size_t errlen)
{
    const dlg_job *j = &p->jobs[jidx];
    const dlg_option *o = &j->workload->options[k];
    if (!j->wl_text[k] || !reads_path(o))
        return 0;
    data_form f[16];
    bool flagged = (o->flags & DLG_OPT_PATH_IN) != 0, input = strcmp(o->name, "input") == 0;
    size_t nf = flagged || !input ? declared_forms(o->help, f, sizeof f / sizeof *f) : 0;
    if (!flagged && (input ? !help_starts_with_path(o->help) : !nf))
        return 0;
    char **vals = NULL;
    size_t n = 0;
    bool list = !(o->flags & DLG_OPT_NOSWEEP);
    if (list && dlg_list_split(j->wl_text[k], &vals, &n) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < (list ? n : 1) && rc == 0; i++) {
        const char *v = list ? vals[i] : j->wl_text[k];
        rc = nf ? check_form_value(p, jidx, k, v, f, nf, err, errlen) : check_whole_value(p, jidx, k, v, err, errlen);
    }
    dlg_list_free(vals, n);
    return rc;
}

/* A [storage] section's options flagged DLG_OPT_PATH_IN (the throttle's
 * profile) must exist: said at the key's line, where creating the storage
 * could only name its section. */
static int check_storage_paths(const dlg_plan *p, char *err, size_t errlen)
{
    for (size_t i = 0; i < p->nstorages; i++) {
        const dlg_instance_spec *s = &p->storages[i];
        const dlg_option *opts = s->desc->options;
        for (size_t k = 0; s->sec && opts && opts[k].name; k++) {
            struct stat st;
            const char *path = s->vals[k].text;
            if (!(opts[k].flags & DLG_OPT_PATH_IN) || opts[k].type != DLG_OPT_STRING || !s->vals[k].set ||
                !path || !*path || stat(path, &st) == 0)
                continue;
            int e = errno;
            char w[512];
            dlg_plan_where(dlg_section_get(s->sec, opts[k].name), s->sec, w, sizeof w);
            snprintf(err, errlen, "%s[storage %s] %s: %s: %s", w, s->name, opts[k].name, path, strerror(e));
            return -1;
        }
    }
    return 0;
}

int dlg_plan_check_inputs(const dlg_plan *p, FILE *warn, char *err, size_t errlen)
{
    if (check_storage_paths(p, err, errlen) != 0)
        return -1;
    dlg_cpuset allowed;
    if (dlg_cpuset_init(&allowed, 0) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    bool have_cpus = dlg_cpuset_get_affinity(&allowed) == 0;
    dlg_cgroup_limits env;
    dlg_cgroup_env_limits(NULL, &env);
    int rc = 0;
    for (size_t j = 0; j < p->njobs && rc == 0; j++) {
        const dlg_job *job = &p->jobs[j];
        if (have_cpus && check_cpus(p, j, &allowed, &env, warn, err, errlen) != 0)
            rc = -1;
        for (size_t k = 0; k < job->nwl && rc == 0; k++)
            if (check_read_path(p, j, k, err, errlen) != 0)
                rc = -1;
    }
    dlg_cpuset_fini(&allowed);
    return rc;
}
