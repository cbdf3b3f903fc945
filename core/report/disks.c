/* Disk profiles (conf/disks/NAME.ini, the throttle's keys): the bandwidth and
 * IOPS a storage value stands for.  Keys, values and their bounds are read
 * and the capacity formulas evaluated by the throttle's own code
 * (throttle_profile.c, throttle_opts.c), so that the report judges exactly
 * the profiles a run accepts, by the limits the run had. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>
#include "ini_lines.h"
#include "model.h"
#include "shipped_conf.h"
#include "throttle_profile.h"
#include "units.h"

typedef struct prof {
    char name[128];
    thr_profile tp; /* the keys given, as the throttle parsed them */
    char why[256];
} prof;

static int on_kv(void *user, const char *sec, const char *k, const char *v)
{
    prof *p = user;
    if (p->why[0])
        return 0; /* keep the first error */
    if (strcmp(k, "name") == 0)
        snprintf(p->name, sizeof p->name, "%s", v);
    return thr_profile_key(&p->tp, sec, k, v, p->why, sizeof p->why) == 0;
}

/* thr_resolve reports through a host: its message lands in the prof. */
static int keep_error(const dlg_host *h, int code, const char *fmt, ...)
{
    prof *p = h->ctx;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    return -code;
}

/* The limits the throttle would run with (capacity formulas, the checks
 * of key combinations); false with p->why on a combination it refuses. */
static bool resolve(prof *p, thr_limits *lim)
{
    dlg_host h = {.struct_size = sizeof h, .ctx = p, .error = keep_error};
    memset(lim, 0, sizeof *lim);
    return thr_resolve(&h, p->tp.v, "", lim) == 0;
}

/* The limits of lim into k (its name, path and values untouched). */
static void set_limits(rep_disk *k, const thr_limits *lim)
{
    k->bandwidth = lim->bandwidth;
    k->iops = lim->iops;
    k->iops_unit = lim->iops_unit;
    k->iops_merge = lim->iops_merge;
    k->write_own_bw = lim->write_own_bw;
    k->write_own_iops = lim->write_own_iops;
    k->write_bandwidth = lim->write_bandwidth;
    k->write_iops = lim->write_iops;
    k->write_shared = lim->write_shared;
    k->latency = (double)lim->latency * 1e-9;
    k->peak_bandwidth = lim->peak_bandwidth;
    k->peak_iops = lim->peak_iops;
    k->burst = lim->burst;
    k->burst_iops = lim->burst_iops;
}

/* Adds the profile of keys v (resolved to lim) as name. */
static int add_prof(rep_disks *d, const thr_limits *lim, const dlg_value *v, const char *name, const char *path,
                    const char *what, char *err, size_t errlen)
{
    rep_disk *nv = realloc(d->v, (d->n + 1) * sizeof *nv);
    char *copy = nv ? strdup(name) : NULL, *pcopy = copy && path ? strdup(path) : NULL;
    dlg_value *vals = copy ? calloc(THR_OPT_COUNT, sizeof *vals) : NULL;
    if (nv)
        d->v = nv;
    if (!vals || (path && !pcopy)) {
        free(copy);
        free(pcopy);
        free(vals);
        snprintf(err, errlen, "%s: out of memory", what);
        return -DLG_ENOMEM;
    }
    for (size_t i = 0; i < THR_OPT_COUNT; i++) /* numbers only: the text lives in the parser's buffer */
        vals[i] = (dlg_value){.i = v[i].i, .d = v[i].d, .set = v[i].set};
    rep_disk *k = &nv[d->n++];
    memset(k, 0, sizeof *k);
    k->name = copy;
    k->path = pcopy;
    k->values = vals;
    k->capacity = v[THR_CAPACITY].set ? (double)v[THR_CAPACITY].i : 0;
    set_limits(k, lim);
    return 0;
}

bool rep_disk_scales(const rep_disk *d)
{
    static const int per_gib[][2] = {{THR_BANDWIDTH, THR_BANDWIDTH_PER_GIB},
                                     {THR_IOPS, THR_IOPS_PER_GIB},
                                     {THR_WRITE_BANDWIDTH, THR_WRITE_BANDWIDTH_PER_GIB},
                                     {THR_WRITE_IOPS, THR_WRITE_IOPS_PER_GIB}};
    for (size_t i = 0; d->values && i < sizeof per_gib / sizeof *per_gib; i++)
        if (!d->values[per_gib[i][0]].set && d->values[per_gib[i][1]].set &&
            (d->values[per_gib[i][1]].i > 0 || d->values[per_gib[i][1]].d > 0))
            return true;
    return false;
}


bool rep_disk_sized(const rep_disk *d, double bytes, rep_disk *out, char *name, size_t namelen)
{
    if (!d->values || !(bytes > 0))
        return false;
    dlg_value v[THR_OPT_COUNT];
    memcpy(v, d->values, sizeof v);
    double gib = ceil(bytes / REP_GIB);
    v[THR_CAPACITY] = (dlg_value){.i = (int64_t)(gib * REP_GIB), .set = true};
    /* the credits' peak rates are checked against the sustained ones,
     * which a size may raise past them (st1 at 16 TiB): not judged here */
    v[THR_PEAK_BANDWIDTH].set = v[THR_PEAK_IOPS].set = v[THR_BURST].set = v[THR_BURST_IOPS].set = false;
    prof p = {.why = ""};
    thr_limits lim;
    dlg_host h = {.struct_size = sizeof h, .ctx = &p, .error = keep_error};
    memset(&lim, 0, sizeof lim);
    if (thr_resolve(&h, v, "", &lim) != 0)
        return false;
    *out = *d;
    set_limits(out, &lim);
    out->peak_bandwidth = out->peak_iops = 0;
    out->burst = out->burst_iops = 0;
    out->capacity = gib * REP_GIB;
    char size[32];
    dlg_format_size((int64_t)out->capacity, size, sizeof size);
    snprintf(name, namelen, "%s (%s)", d->name, size);
    out->name = name;
    return true;
}

int rep_disks_load(rep_disks *d, const char *path, const char *name, char *err, size_t errlen)
{
    prof p = {0};
    rep_ini ini;
    int line = rep_ini_parse(&ini, path, on_kv, &p);
    if (line == -2) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -DLG_ENOMEM;
    }
    if (line < 0) {
        snprintf(err, errlen, "%s: cannot open the disk profile: %s", path, strerror(ini.open_errno));
        return -DLG_EIO;
    }
    if (line > 0) {
        const char *why = ini.bad[0] ? ini.bad : p.why;
        snprintf(err, errlen, "%s:%d: bad disk profile line%s%s", path, line, why[0] ? ": " : "", why);
        return -DLG_EINVAL;
    }
    thr_limits lim;
    if (!resolve(&p, &lim)) {
        snprintf(err, errlen, "%s: bad disk profile: %s", path, p.why);
        return -DLG_EINVAL;
    }
    if (!name) {
        if (!p.name[0]) {
            const char *b = strrchr(path, '/');
            snprintf(p.name, sizeof p.name, "%s", b ? b + 1 : path);
            char *dot = strrchr(p.name, '.');
            if (dot)
                *dot = 0;
        }
        name = p.name;
    }
    return add_prof(d, &lim, p.tp.v, name, path, path, err, errlen);
}

/* Strings already handled (storage names found, profiles not found). */
typedef struct strs {
    const char **v;
    size_t n;
} strs;

static bool strs_has(const strs *s, const char *x)
{
    for (size_t k = 0; k < s->n; k++)
        if (strcmp(s->v[k], x) == 0)
            return true;
    return false;
}

/* Adds x (not copied: it outlives s); 0 or -1 out of memory. */
static int strs_add(strs *s, const char *x)
{
    const char **nv = realloc(s->v, (s->n + 1) * sizeof *nv);
    if (!nv)
        return -1;
    s->v = nv;
    nv[s->n++] = x;
    return 0;
}

/* The search for the profile one throttle named: where it looked, and
 * why it stopped short. */
typedef struct lookup {
    const rep_row *row;   /* the row whose storage_config named it */
    const rep_disks *d;   /* the profiles loaded by name before (--disks, catalogs, ./conf/disks) */
    const strs *failed;   /* profiles not found or refused for an earlier row (and said) */
    char profile[4096];   /* the path as the run wrote it */
    char tried[2048];     /* the paths that held no file */
    size_t ntried;        /* its length */
    char why[1024];       /* a file found but refused, or "" */
} lookup;

static void note_tried(lookup *lk, const char *path)
{
    if (lk->ntried + 1 >= sizeof lk->tried)
        return; /* a long list is cut: the first paths say enough */
    int n = snprintf(lk->tried + lk->ntried, sizeof lk->tried - lk->ntried, "%s%s", lk->ntried ? ", " : "", path);
    lk->ntried = n < 0 ? lk->ntried : lk->ntried + (size_t)n;
    if (lk->ntried >= sizeof lk->tried)
        lk->ntried = sizeof lk->tried - 1;
}

/* The profile at path into p: 1 read, 0 no file there (noted), -1 a file
 * that is no profile (lk->why says why). */
static int try_file(prof *p, lookup *lk, const char *path)
{
    rep_ini ini;
    memset(p, 0, sizeof *p);
    int line = rep_ini_parse(&ini, path, on_kv, p);
    if (line == 0)
        return 1;
    if (line == -1) {
        note_tried(lk, path);
        return 0;
    }
    if (line == -2)
        snprintf(lk->why, sizeof lk->why, "%s: out of memory", path);
    else
        snprintf(lk->why, sizeof lk->why, "%s:%d: bad disk profile line%s%s", path, line,
                 ini.bad[0] || p->why[0] ? ": " : "", ini.bad[0] ? ini.bad : p->why);
    return -1;
}

/* A relative path from the results file's folder and each folder above
 * it: a run names profiles relative to where it ran, most often the
 * parent of its results folder (results/x.csv, conf/disks/y.ini). */
static int near_results(prof *p, lookup *lk)
{
    const char *src = lk->row->src;
    char dir[PATH_MAX], cand[PATH_MAX + 4096];
    if (!src || strcmp(src, REP_STDIN_NAME) == 0)
        return 0;
    const char *slash = strrchr(src, '/');
    snprintf(cand, sizeof cand, "%.*s", slash ? (int)(slash - src) + 1 : 1, slash ? src : ".");
    if (!realpath(cand, dir))
        return 0;
    for (size_t len = strlen(dir);;) {
        snprintf(cand, sizeof cand, "%.*s/%s", (int)len, dir, lk->profile);
        int rc = try_file(p, lk, cand);
        if (rc || len == 0)
            return rc;
        while (len > 0 && dir[--len] != '/')
            ; /* the folder above: "/a/b" -> "/a" -> "" (the root) */
    }
}

/* A profile of the same file name: the shipped ones (conf/disks beside
 * this executable: the install's share/dlgauge/conf, a build tree's link
 * to the source conf/), then those loaded by name, the latest first
 * (--disks DIRs, ./conf/disks, the catalogs' disks folders). */
static int by_base_name(prof *p, lookup *lk)
{
    const char *b = strrchr(lk->profile, '/');
    b = b ? b + 1 : lk->profile;
    int rc = 0;
    char conf[PATH_MAX], cand[PATH_MAX + 4096];
    if (rep_shipped_conf(conf, sizeof conf) == 0) {
        snprintf(cand, sizeof cand, "%s/disks/%s", conf, b);
        rc = try_file(p, lk, cand);
    }
    for (size_t i = lk->d->n; rc == 0 && i-- > 0;) {
        const char *path = lk->d->v[i].path, *pb = path ? strrchr(path, '/') : NULL;
        if (path && strcmp(pb ? pb + 1 : path, b) == 0)
            rc = try_file(p, lk, path);
    }
    return rc;
}

/* The profile a throttle named, wherever the report is run from: the path
 * as written if absolute; else from the results' folder up; a profile of
 * its file name; last, as written from the current folder (as before). */
static int find_profile(prof *p, lookup *lk)
{
    int rc = 0;
    if (lk->profile[0] == '/')
        rc = try_file(p, lk, lk->profile);
    else
        rc = near_results(p, lk);
    if (rc == 0)
        rc = by_base_name(p, lk);
    if (rc == 0 && lk->profile[0] != '/')
        rc = try_file(p, lk, lk->profile);
    return rc;
}

/* One throttle's limits from its storage_config: the profile it named,
 * then its own keys on top (explicit keys win, as in the throttle), and
 * the limits they resolve to.  1 with *lim; 0 the storage is no
 * throttle; -1 its profile was not found or is refused (lk says why); -2
 * it was so for an earlier row. */
static int prof_from_config(prof *p, lookup *lk, const char *cfg, thr_limits *lim)
{
    char key[64], val[4096];
    memset(p, 0, sizeof *p);
    bool throttle = rep_config_has(cfg, "type", "throttle");
    for (const char *s = cfg; throttle && rep_config_next(&s, key, sizeof key, val, sizeof val);)
        if (strcmp(key, "profile") == 0) {
            snprintf(lk->profile, sizeof lk->profile, "%s", val);
            if (strs_has(lk->failed, lk->profile))
                return -2; /* looked for in vain already, and said */
            if (find_profile(p, lk) <= 0)
                return -1;
        }
    for (const char *s = cfg; throttle && rep_config_next(&s, key, sizeof key, val, sizeof val);)
        if (strcmp(key, "type") != 0 && strcmp(key, "profile") != 0 && strcmp(key, "name") != 0 &&
            strcmp(key, "inner") != 0 && !strchr(key, '.') /* the inner storage's: inner.depth */ && !p->why[0] &&
            thr_profile_override(&p->tp, key, val, p->why, sizeof p->why) != 0)
            break;
    if (throttle && !p->why[0] && resolve(p, lim))
        return 1;
    if (throttle)
        snprintf(lk->why, sizeof lk->why, "%s", p->why);
    return throttle ? -1 : 0;
}

/* Says that a throttle's profile could not be used: its storage is then
 * judged with no limits, which nothing else would show. */
static int warn_unused(rep_disks *d, const lookup *lk, const char *name)
{
    char line[8192];
    const rep_row *r = lk->row;
    if (lk->why[0])
        snprintf(line, sizeof line, "%s:%ld: storage %s: its throttle's profile %s: %s: its cells are judged without "
                 "the profile's limits (--disk %s=PROFILE.ini supplies one)",
                 r->src, r->line, name, lk->profile[0] ? lk->profile : "(none)", lk->why, name);
    else
        snprintf(line, sizeof line, "%s:%ld: storage %s: its throttle's profile %s was not found (tried %s): its cells "
                 "are judged without the profile's limits; --disks DIR (a folder holding it) or --disk %s=PROFILE.ini "
                 "supplies it", r->src, r->line, name, lk->profile, lk->tried, name);
    char **nw = realloc(d->warnings, (d->nwarnings + 1) * sizeof *nw);
    if (!nw)
        return -1;
    d->warnings = nw;
    if (!(nw[d->nwarnings] = strdup(line)))
        return -1;
    d->nwarnings++;
    return 0;
}

/* A row's storage: its throttle's limits added under its name, or one
 * warning per profile that could not be used (failed: those warned of). */
static int storage_of_row(rep_disks *d, const rep_row *r, const char *name, const char *cfg, lookup *lk,
                          strs *failed, char *err, size_t errlen)
{
    memset(lk, 0, sizeof *lk);
    lk->row = r;
    lk->d = d;
    lk->failed = failed;
    prof p;
    thr_limits lim;
    int found = prof_from_config(&p, lk, cfg, &lim);
    if (found > 0)
        return add_prof(d, &lim, p.tp.v, name, NULL, r->src, err, errlen);
    const char *key = lk->profile[0] ? lk->profile : name; /* its profile, else its own keys were refused */
    if (found != -1 || strs_has(failed, key))
        return 0; /* the first storage naming a missing profile speaks for the others */
    char *copy = strdup(key);
    if (!copy || strs_add(failed, copy) != 0) {
        free(copy);
        return -DLG_ENOMEM;
    }
    return warn_unused(d, lk, name) != 0 ? -DLG_ENOMEM : 0;
}

/* "125 MB/s, 3000 IOPS" of d's read limits. */
static void limits_text(const rep_disk *d, char *buf, size_t len)
{
    char bw[32] = "no bandwidth limit";
    if (d->bandwidth > 0)
        dlg_format_rate(d->bandwidth, "bytes", bw, sizeof bw);
    if (d->iops > 0)
        snprintf(buf, len, "%s, %.6g IOPS", bw, d->iops);
    else
        snprintf(buf, len, "%s, no IOPS limit", bw);
}

static bool same_limits(const rep_disk *a, const rep_disk *b)
{
    return a->bandwidth == b->bandwidth && a->iops == b->iops && a->iops_unit == b->iops_unit &&
           a->write_bandwidth == b->write_bandwidth && a->write_iops == b->write_iops;
}

/* The throttle's limits just added as d->v[k] differ from a profile file
 * of the same name loaded before (conf/disks): said once, as the two now
 * stand for different disks (the cells ran on the one; an instance
 * attaches the other). */
static int warn_renamed(rep_disks *d, size_t k, size_t first)
{
    const rep_disk *row = &d->v[k];
    for (size_t i = first; i-- > 0;) {
        const rep_disk *file = &d->v[i];
        if (!file->path || strcmp(file->name, row->name) != 0)
            continue;
        if (same_limits(file, row))
            return 0;
        char ran[96], profile[96], line[1024];
        limits_text(row, ran, sizeof ran);
        limits_text(file, profile, sizeof profile);
        snprintf(line, sizeof line, "storage %s: the results' throttle ran with limits of its own (%s), not those of "
                 "the profile of that name (%s: %s): its cells are judged by what they ran with, an instance's disk "
                 "%s by the profile", row->name, ran, file->path, profile, row->name);
        char **nw = realloc(d->warnings, (d->nwarnings + 1) * sizeof *nw);
        if (!nw)
            return -DLG_ENOMEM;
        d->warnings = nw;
        if (!(nw[d->nwarnings] = strdup(line)))
            return -DLG_ENOMEM;
        d->nwarnings++;
        return 0;
    }
    return 0;
}

int rep_disks_from_rows(rep_disks *d, const rep_rows *rs, char *err, size_t errlen)
{
    strs failed = {0};
    size_t first = d->n;
    lookup *lk = malloc(sizeof *lk);
    int rc = lk ? 0 : -DLG_ENOMEM;
    for (size_t i = 0; i < rs->n && !rc; i++) {
        const char *name = rep_str(&rs->v[i], "storage"), *cfg = rep_str(&rs->v[i], "storage_config");
        bool seen = false;
        for (size_t k = first; name && k < d->n && !seen; k++)
            seen = strcmp(d->v[k].name, name) == 0; /* the first row with a name found speaks for it */
        size_t was = d->n;
        if (name && cfg && !seen)
            rc = storage_of_row(d, &rs->v[i], name, cfg, lk, &failed, err, errlen);
        if (!rc && d->n > was)
            rc = warn_renamed(d, was, first);
    }
    if (rc == -DLG_ENOMEM)
        snprintf(err, errlen, "out of memory reading the throttles' disk profiles");
    for (size_t k = 0; k < failed.n; k++)
        free((char *)failed.v[k]);
    free(failed.v);
    free(lk);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int rep_disks_load_dir(rep_disks *d, const char *dir, char *err, size_t errlen)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    char **names = NULL;
    size_t n = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        if (!nn || asprintf(&nn[n], "%s/%s", dir, e->d_name) < 0) {
            names = nn ? nn : names;
            rc = -DLG_ENOMEM;
            snprintf(err, errlen, "%s: out of memory", dir);
            break;
        }
        names = nn;
        n++;
    }
    closedir(dp);
    if (!rc && n) /* (no names: NULL, which qsort may not take) */
        qsort(names, n, sizeof *names, by_name); /* same order on every filesystem */
    for (size_t i = 0; i < n; i++) {
        if (!rc)
            rc = rep_disks_load(d, names[i], NULL, err, errlen);
        free(names[i]);
    }
    free(names);
    return rc;
}

const rep_disk *rep_disks_find(const rep_disks *d, const char *name)
{
    for (size_t i = d ? d->n : 0; i-- > 0;) /* later loads (explicit --disk) win */
        if (strcmp(d->v[i].name, name) == 0)
            return &d->v[i];
    return NULL;
}

const rep_disk *rep_disks_find_file(const rep_disks *d, const char *name)
{
    const rep_disk *any = NULL;
    for (size_t i = d ? d->n : 0; i-- > 0;)
        if (strcmp(d->v[i].name, name) == 0) {
            if (d->v[i].path)
                return &d->v[i];
            any = any ? any : &d->v[i];
        }
    return any;
}

void rep_disks_free(rep_disks *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].name);
        free(d->v[i].path);
        free(d->v[i].values);
    }
    free(d->v);
    for (size_t i = 0; i < d->nwarnings; i++)
        free(d->warnings[i]);
    free(d->warnings);
    memset(d, 0, sizeof *d);
}
