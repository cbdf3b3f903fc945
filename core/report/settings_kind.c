/* What a `config` value means: a core [job] key by its declared type
 * (dlg_core_job_options); a workload's option by what its rows hold,
 * since the report reads results without the plugins: a size where one
 * value has a size unit and the rest are sizes or bare numbers (bytes),
 * a duration likewise (bare: seconds), a boolean where one is a word
 * (true, off, ...) and the rest are words or 0 and 1.  Anything else is
 * text, compared as written: two values are made one only where every
 * reading the run could have had gives them one meaning. */
#define _GNU_SOURCE
#include "settings_kind.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dlgauge/fnv1a.h>
#include <dlgauge/plugin.h>

#include "plan.h"
#include "units.h"

typedef enum { K_TEXT, K_SIZE, K_DURATION, K_BOOL, K_NUMBER } kind;

/* What one value could be. */
enum { F_BARE = 1, F_BARE_NOT01 = 2, F_SIZE = 4, F_DURATION = 8, F_BOOL_WORD = 16, F_OTHER = 32 };

typedef struct entry {
    char *id; /* "workload\0key" */
    size_t idlen;
    unsigned flags;
    kind k;
} entry;

struct rep_kinds {
    entry *slot; /* open addressing, id NULL = empty */
    size_t cap, n;
};

static bool bool_word(const char *v)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcasecmp(v, words[i]) == 0)
            return true;
    return false;
}

static unsigned value_flags(const char *v)
{
    char why[128];
    double d;
    int64_t i;
    if (dlg_parse_double(v, &d, why, sizeof why) == 0)
        return F_BARE | (strcmp(v, "0") && strcmp(v, "1") ? F_BARE_NOT01 : 0u);
    if (bool_word(v))
        return F_BOOL_WORD;
    if (dlg_parse_size(v, &i, why, sizeof why) == 0)
        return F_SIZE; /* size and duration units share no suffix */
    if (dlg_parse_duration(v, &i, why, sizeof why) == 0)
        return F_DURATION;
    return F_OTHER;
}

static kind kind_of_flags(unsigned f)
{
    if (f & F_OTHER)
        return K_TEXT;
    if ((f & F_SIZE) && !(f & (F_DURATION | F_BOOL_WORD)))
        return K_SIZE;
    if ((f & F_DURATION) && !(f & (F_SIZE | F_BOOL_WORD)))
        return K_DURATION;
    if ((f & F_BOOL_WORD) && !(f & (F_SIZE | F_DURATION | F_BARE_NOT01)))
        return K_BOOL;
    return K_TEXT; /* bare numbers alone: "1.10" and "1.1" may be versions */
}

/* A core [job] key's kind; false for a workload's option. */
static bool core_kind(const char *key, kind *out)
{
    for (const dlg_option *o = dlg_core_job_options; o->name; o++) {
        if (strcmp(o->name, key) != 0)
            continue;
        switch (o->type) {
        case DLG_OPT_SIZE:
            *out = K_SIZE;
            break;
        case DLG_OPT_DURATION:
            *out = K_DURATION;
            break;
        case DLG_OPT_BOOL:
            *out = K_BOOL;
            break;
        case DLG_OPT_INT:
        case DLG_OPT_DOUBLE:
            *out = K_NUMBER;
            break;
        default:
            *out = K_TEXT;
        }
        return true;
    }
    return false;
}

/* id = "wl\0key" in buf; its length, or 0 where it does not fit. */
static size_t make_id(const char *wl, const char *key, char *buf, size_t len)
{
    size_t a = strlen(wl), b = strlen(key);
    if (a + b + 2 > len)
        return 0;
    memcpy(buf, wl, a + 1);
    memcpy(buf + a + 1, key, b + 1);
    return a + b + 1;
}

static entry *find(const rep_kinds *k, const char *id, size_t idlen)
{
    if (!k || !k->cap)
        return NULL;
    size_t mask = k->cap - 1;
    for (size_t i = (size_t)dlg_fnv1a(DLG_FNV1A_INIT, id, idlen) & mask;; i = (i + 1) & mask) {
        entry *e = &k->slot[i];
        if (!e->id || (e->idlen == idlen && memcmp(e->id, id, idlen) == 0))
            return e;
    }
}

static int grow(rep_kinds *k)
{
    rep_kinds big = {calloc(k->cap ? 2 * k->cap : 64, sizeof(entry)), k->cap ? 2 * k->cap : 64, k->n};
    if (!big.slot)
        return -1;
    for (size_t i = 0; i < k->cap; i++)
        if (k->slot[i].id)
            *find(&big, k->slot[i].id, k->slot[i].idlen) = k->slot[i];
    free(k->slot);
    *k = big;
    return 0;
}

/* Adds what value v of key (workload wl) could be. */
static int note(rep_kinds *k, const char *wl, const char *key, const char *v)
{
    kind unused;
    char id[256];
    size_t idlen = make_id(wl, key, id, sizeof id);
    if (!idlen || core_kind(key, &unused))
        return 0; /* a key too long to be an option's is compared as written */
    if (2 * (k->n + 1) > k->cap && grow(k) != 0)
        return -1;
    entry *e = find(k, id, idlen);
    if (!e->id) {
        if (!(e->id = malloc(idlen + 1)))
            return -1;
        memcpy(e->id, id, idlen + 1);
        e->idlen = idlen;
        k->n++;
    }
    e->flags |= value_flags(v);
    return 0;
}

static const char *workload_of(const rep_row *r)
{
    const char *wl = rep_str(r, "workload");
    return wl && *wl ? wl : "-";
}

int rep_kinds_build(const rep_rows *rs, rep_kinds **out)
{
    rep_kinds *k = calloc(1, sizeof *k);
    int rc = k ? 0 : -1;
    for (size_t i = 0; i < rs->n && !rc; i++) {
        const char *cfg = rep_str(&rs->v[i], "config");
        char key[128], val[1024];
        for (const char *p = cfg; !rc && p && rep_config_next(&p, key, sizeof key, val, sizeof val);)
            rc = note(k, workload_of(&rs->v[i]), key, val);
    }
    for (size_t i = 0; !rc && i < k->cap; i++)
        k->slot[i].k = kind_of_flags(k->slot[i].flags);
    if (rc) {
        rep_kinds_free(k);
        k = NULL;
    }
    *out = k;
    return rc;
}

void rep_kinds_free(rep_kinds *k)
{
    for (size_t i = 0; k && i < k->cap; i++)
        free(k->slot[i].id);
    if (k)
        free(k->slot);
    free(k);
}

/* n in the biggest unit of units[] (scale descending) that divides it. */
static void exact_text(int64_t n, const char *const *names, const int64_t *scale, size_t nunits, char *buf,
                       size_t len)
{
    for (size_t u = 0; u < nunits; u++)
        if (n % scale[u] == 0) {
            snprintf(buf, len, "%" PRId64 "%s", n / scale[u], names[u]);
            return;
        }
}

static void size_text(int64_t b, char *buf, size_t len)
{
    static const char *const names[] = {"PiB", "TiB", "GiB", "MiB", "KiB", "PB", "TB", "GB", "MB", "kB", "B"};
    static const int64_t scale[] = {1ll << 50, 1ll << 40, 1ll << 30, 1ll << 20, 1ll << 10, 1000000000000000ll,
                                    1000000000000ll, 1000000000ll, 1000000ll, 1000ll, 1};
    exact_text(b, names, scale, sizeof scale / sizeof *scale, buf, len);
}

static void duration_text(int64_t ns, char *buf, size_t len)
{
    static const char *const names[] = {"d", "h", "m", "s", "ms", "us", "ns"};
    static const int64_t scale[] = {86400000000000ll, 3600000000000ll, 60000000000ll, 1000000000ll,
                                    1000000ll,        1000ll,          1};
    exact_text(ns, names, scale, sizeof scale / sizeof *scale, buf, len);
}

/* The shortest text that reads back as v. */
static void number_text(double v, char *buf, size_t len)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

const char *rep_kinds_canon(const rep_kinds *k, const char *wl, const char *key, const char *val, char *buf,
                            size_t len)
{
    kind kd = K_TEXT;
    if (!core_kind(key, &kd)) {
        char id[256];
        size_t idlen = make_id(wl ? wl : "-", key, id, sizeof id);
        const entry *e = idlen ? find(k, id, idlen) : NULL;
        kd = e && e->id ? e->k : K_TEXT;
    }
    char why[128];
    int64_t i;
    double d;
    bool b;
    if (kd == K_SIZE && dlg_parse_size(val, &i, why, sizeof why) == 0)
        i ? size_text(i, buf, len) : (void)snprintf(buf, len, "0");
    else if (kd == K_DURATION && dlg_parse_duration(val, &i, why, sizeof why) == 0)
        i ? duration_text(i, buf, len) : (void)snprintf(buf, len, "0");
    else if (kd == K_BOOL && dlg_parse_bool(val, &b, why, sizeof why) == 0)
        snprintf(buf, len, "%s", b ? "true" : "false");
    else if (kd == K_NUMBER && dlg_parse_double(val, &d, why, sizeof why) == 0)
        number_text(d, buf, len);
    else
        return val; /* as written: text, or a value its kind does not read */
    return buf;
}
