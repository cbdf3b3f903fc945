/* Disk profiles (conf/disks/NAME.ini, the throttle's keys): the bandwidth and
 * IOPS a storage value stands for.  Keys, values and their bounds are read
 * and the capacity formulas evaluated by the throttle's own code
 * (throttle_profile.c, throttle_opts.c), so that the report judges exactly
 * the profiles a run accepts, by the limits the run had. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>
#include "ini_lines.h"
#include "model.h"
#include "throttle_profile.h"

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

static int add_prof(rep_disks *d, const thr_limits *lim, const char *name, const char *what, char *err,
                    size_t errlen)
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
    return add_prof(d, &lim, name, path, err, errlen);
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
 * then its own keys on top (explicit keys win, as in the throttle), and
 * the limits they resolve to.  False when the storage is no throttle or
 * its profile cannot be read. */
static bool prof_from_config(prof *p, const char *cfg, thr_limits *lim)
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
        if (strcmp(key, "type") != 0 && strcmp(key, "profile") != 0 && strcmp(key, "name") != 0 &&
            strcmp(key, "inner") != 0 && !p->why[0] &&
            thr_profile_override(&p->tp, key, val, p->why, sizeof p->why) != 0)
            return false;
    return throttle && !p->why[0] && resolve(p, lim);
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
        thr_limits lim;
        if (!name || !cfg || seen || !prof_from_config(&p, cfg, &lim))
            continue;
        int rc = add_prof(d, &lim, name, rs->v[i].src, err, errlen);
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
