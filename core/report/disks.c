/* Disk profiles (conf/disks/NAME.ini, the throttle's keys): the bandwidth and
 * IOPS a storage value stands for, with the capacity formulas evaluated
 * as the throttle evaluates them. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>
#include "ini_lines.h"
#include "model.h"
#include "units.h"

/* One limit's keys: X, X_base, X_per_gib, X_max. */
typedef struct limit_keys {
    double fixed, base, per_gib, max;
    bool has_fixed, has_f;
} limit_keys;

enum { L_BW, L_IOPS, L_WBW, L_WIOPS, L_COUNT };

typedef struct prof {
    char name[128];
    limit_keys lim[L_COUNT];
    double iops_unit, iops_merge, cap_gib, latency_s;
    bool write_shared;
    char why[200];
} prof;

static const struct {
    const char *key;
    bool size; /* a size (bytes), else a number */
} limit_names[L_COUNT] = {
    [L_BW] = {"bandwidth", true},
    [L_IOPS] = {"iops", false},
    [L_WBW] = {"write_bandwidth", true},
    [L_WIOPS] = {"write_iops", false},
};

/* A value of a units syntax (bytes, nanoseconds) times scale: 1, or 0
 * with the reason kept. */
static int units_key(prof *p, const char *v, int (*parse)(const char *, int64_t *, char *, size_t), double scale,
                     double *out)
{
    int64_t x;
    char why[96];
    if (parse(v, &x, why, sizeof why) != 0) {
        snprintf(p->why, sizeof p->why, "'%s': %s", v, why);
        return 0;
    }
    *out = (double)x * scale;
    return 1;
}

static int size_key(prof *p, const char *v, double *out)
{
    return units_key(p, v, dlg_parse_size, 1, out);
}

/* An I/O rate: >= 0, as the throttle takes it (a negative one made
 * negative limits). */
static int num_key(prof *p, const char *v, double *out)
{
    char why[96];
    if (dlg_parse_double(v, out, why, sizeof why) != 0) {
        snprintf(p->why, sizeof p->why, "'%s': %s", v, why);
        return 0;
    }
    if (*out < 0) {
        snprintf(p->why, sizeof p->why, "'%s' is negative: an I/O rate is a number >= 0", v);
        return 0;
    }
    return 1;
}

/* A key of one of the limits (bandwidth_per_gib, write_iops, ...): 1 and
 * parsed, 0 on a bad value, -1 when k is none of them. */
static int limit_key(prof *p, const char *k, const char *v)
{
    for (int i = 0; i < L_COUNT; i++) {
        size_t n = strlen(limit_names[i].key);
        if (strncmp(k, limit_names[i].key, n) != 0)
            continue;
        const char *suffix = k + n;
        limit_keys *l = &p->lim[i];
        double *dst = !*suffix                        ? &l->fixed
                      : strcmp(suffix, "_base") == 0    ? &l->base
                      : strcmp(suffix, "_per_gib") == 0 ? &l->per_gib
                      : strcmp(suffix, "_max") == 0     ? &l->max
                                                        : NULL;
        if (!dst)
            continue;
        if (dst == &l->fixed)
            l->has_fixed = true;
        else
            l->has_f = true;
        return limit_names[i].size ? size_key(p, v, dst) : num_key(p, v, dst);
    }
    return -1;
}

/* write_budget = own|shared, the throttle's choices. */
static int budget_key(prof *p, const char *v)
{
    if (strcmp(v, "own") != 0 && strcmp(v, "shared") != 0) {
        snprintf(p->why, sizeof p->why, "write_budget = '%s' is not own|shared", v);
        return 0;
    }
    p->write_shared = strcmp(v, "shared") == 0;
    return 1;
}

static int on_kv(void *user, const char *sec, const char *k, const char *v)
{
    prof *p = user;
    double cap;
    if (p->why[0])
        return 0; /* keep the first error */
    int rc = limit_key(p, k, v);
    if (rc >= 0)
        return rc;
    if (strcmp(k, "name") == 0)
        snprintf(p->name, sizeof p->name, "%s", v);
    else if (strcmp(k, "write_budget") == 0)
        return budget_key(p, v);
    else if (strcmp(k, "iops_unit") == 0)
        return size_key(p, v, &p->iops_unit);
    else if (strcmp(k, "iops_merge") == 0)
        return size_key(p, v, &p->iops_merge);
    else if (strcmp(k, "latency") == 0) /* what a reader with few threads waits per I/O */
        return units_key(p, v, dlg_parse_duration, 1e-9, &p->latency_s);
    else if (strcmp(k, "capacity") == 0) {
        if (!size_key(p, v, &cap))
            return 0;
        p->cap_gib = cap / 1073741824.0;
    }
    return 1; /* latency_dist and the like: not needed here */
}

/* min(base + per_gib * capacity, max), as the throttle evaluates it. */
static double formula(const limit_keys *l, double cap_gib)
{
    if (l->has_fixed)
        return l->fixed;
    if (!l->has_f)
        return 0;
    double v = l->base + l->per_gib * cap_gib;
    return l->max > 0 && v > l->max ? l->max : v;
}

static int add_prof(rep_disks *d, const prof *p, const char *name, const char *what, char *err, size_t errlen)
{
    rep_disk *nv = realloc(d->v, (d->n + 1) * sizeof *nv);
    char *copy = nv ? strdup(name) : NULL;
    if (nv)
        d->v = nv;
    if (!copy) {
        snprintf(err, errlen, "%s: out of memory", what);
        return -DLG_ENOMEM;
    }
    rep_disk *k = &nv[d->n++];
    memset(k, 0, sizeof *k);
    k->name = copy;
    k->bandwidth = formula(&p->lim[L_BW], p->cap_gib);
    k->iops = formula(&p->lim[L_IOPS], p->cap_gib);
    k->iops_unit = p->iops_unit;
    k->iops_merge = p->iops_merge;
    k->write_own_bw = p->lim[L_WBW].has_fixed || p->lim[L_WBW].has_f;
    k->write_own_iops = p->lim[L_WIOPS].has_fixed || p->lim[L_WIOPS].has_f;
    k->write_bandwidth = formula(&p->lim[L_WBW], p->cap_gib);
    k->write_iops = formula(&p->lim[L_WIOPS], p->cap_gib);
    k->write_shared = p->write_shared;
    k->latency = p->latency_s;
    return 0;
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
        snprintf(err, errlen, "%s: cannot open the disk profile", path);
        return -DLG_EIO;
    }
    if (line > 0) {
        const char *why = ini.bad[0] ? ini.bad : p.why;
        snprintf(err, errlen, "%s:%d: bad disk profile line%s%s", path, line, why[0] ? ": " : "", why);
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
    return add_prof(d, &p, name, path, err, errlen);
}

/* The profile a throttle named: its path as the run wrote it, else a
 * profile of that base name in conf/disks (results read elsewhere). */
static bool read_named_profile(prof *p, const char *path)
{
    rep_ini ini;
    if (rep_ini_parse(&ini, path, on_kv, p) == 0)
        return true;
    memset(p, 0, sizeof *p);
    const char *b = strrchr(path, '/');
    char alt[4096];
    snprintf(alt, sizeof alt, "conf/disks/%s", b ? b + 1 : path);
    if (rep_ini_parse(&ini, alt, on_kv, p) == 0)
        return true;
    memset(p, 0, sizeof *p);
    return false;
}

/* One throttle's limits from its storage_config: the profile it named,
 * then its own keys on top (explicit keys win, as in the throttle).
 * False when the storage is no throttle or its profile cannot be read. */
static bool prof_from_config(prof *p, const char *cfg)
{
    char key[64], val[4096];
    bool throttle = false;
    memset(p, 0, sizeof *p);
    for (const char *s = cfg; rep_config_next(&s, key, sizeof key, val, sizeof val);) {
        if (strcmp(key, "type") == 0)
            throttle = strcmp(val, "throttle") == 0;
        else if (strcmp(key, "profile") == 0 && !read_named_profile(p, val))
            return false;
    }
    for (const char *s = cfg; throttle && rep_config_next(&s, key, sizeof key, val, sizeof val);)
        if (strcmp(key, "type") != 0 && strcmp(key, "profile") != 0 && strcmp(key, "name") != 0)
            on_kv(p, "", key, val);
    return throttle && !p->why[0];
}

int rep_disks_from_rows(rep_disks *d, const rep_rows *rs, char *err, size_t errlen)
{
    size_t first = d->n;
    for (size_t i = 0; i < rs->n; i++) {
        const char *name = rep_str(&rs->v[i], "storage"), *cfg = rep_str(&rs->v[i], "storage_config");
        bool seen = false;
        for (size_t k = first; name && k < d->n && !seen; k++)
            seen = strcmp(d->v[k].name, name) == 0; /* the first row with a name speaks for it */
        prof p;
        if (!name || !cfg || seen || !prof_from_config(&p, cfg))
            continue;
        int rc = add_prof(d, &p, name, rs->v[i].src, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
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
    if (!rc)
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

void rep_disks_free(rep_disks *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i].name);
    free(d->v);
    d->v = NULL;
    d->n = 0;
}
