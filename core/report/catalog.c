/* Instance catalog files (INI, inih):
 *   [catalog]  provider, region, currency, source, retrieved
 *   [instance NAME]  gpus, gpu, vcpus, memory, disks, local_disks,
 *                    local_disk_size (the instance store's bytes),
 *                    disk_bandwidth_max, disk_iops_max, price_per_hour,
 *                    price_verified (true|false)
 *   [disk NAME]  price_per_month (the volume its conf/disks profile
 *                describes, or with price_per_gib_month what is paid
 *                beyond the GiB), price_per_gib_month, size_min, size_max
 *                (the volumes made, with a price per GiB), the rates that
 *                can be bought above the profile's (iops_max, iops_min,
 *                price_per_iops_month, iops_per_gib_max, bandwidth_max,
 *                price_per_mibps_month, bandwidth_per_iops_max), the
 *                IOPS price's cheaper tiers (price_per_iops_month_above =
 *                FROM:PRICE, ...), price_verified
 * Unknown keys are errors, like everywhere in dlgauge. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dlgauge/plugin.h>
#include "ini_lines.h"
#include "recommend.h"
#include "units.h"

typedef struct cat_state {
    rep_catalog *c;
    size_t first; /* first instance of this file */
    const char *path;
    const rep_ini *ini;
    int catalog_line; /* of the [catalog] header, 0 if it has no keys */
    char *provider, *region, *currency, *source, *retrieved;
    unsigned seen; /* the current instance's keys, by index in inst_keys */
    /* [disk NAME] sections of this file */
    struct cat_disk {
        char *name;
        rep_disk_price price; /* month, per_gib, size_min, size_max: 0 not given */
        bool verified_set;
        int line;
    } *dk;
    size_t ndk;
    char why[320];
    bool oom;
} cat_state;

static const char *const inst_keys[] = {"gpus",           "gpu",           "vcpus",       "memory",
                                        "disks",          "local_disks",   "disk_bandwidth_max",
                                        "disk_iops_max",  "price_per_hour", "price_verified",
                                        "local_disk_size", "gpu_memory"};

/* [catalog] keys: a key given twice would let the later silently win. */
static int set_str(cat_state *s, char **dst, const char *k, const char *v)
{
    if (*dst)
        return (snprintf(s->why, sizeof s->why, "[catalog]: %s set twice", k), 0);
    if (!(*dst = strdup(v)))
        s->oom = true;
    return !s->oom;
}

/* local: instance-store disks, which the instance's block-storage caps do
 * not bound. */
static int split_disks(cat_state *s, rep_instance *in, const char *v, bool local)
{
    char *copy = strdup(v), *save = NULL;
    if (!copy)
        return (s->oom = true, 0);
    for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        bool *nl = realloc(in->local, (in->ndisks + 1) * sizeof *nl);
        if (nl)
            in->local = nl;
        char **nd = nl ? realloc(in->disks, (in->ndisks + 1) * sizeof *nd) : NULL;
        if (!nd || !(nd[in->ndisks] = strdup(t))) {
            if (nd)
                in->disks = nd;
            s->oom = true;
            break;
        }
        in->disks = nd;
        in->local[in->ndisks++] = local;
    }
    free(copy);
    return !s->oom;
}

/* A size > 0 (bytes); else the reason in s->why: the parser's, or what
 * is expected (a zero parses, and left the parser's reason unset). */
static int positive_size(cat_state *s, const char *k, const char *v, int64_t *out, const char *expect)
{
    char why[96];
    if (dlg_parse_size(v, out, why, sizeof why) != 0)
        return (snprintf(s->why, sizeof s->why, "%s = '%s': %s", k, v, why), 0);
    if (*out <= 0)
        return (snprintf(s->why, sizeof s->why, "%s = '%s': %s", k, v, expect), 0);
    return 1;
}

static int inst_key(cat_state *s, rep_instance *in, const char *k, const char *v)
{
    char why[96];
    int64_t iv;
    if (strcmp(k, "gpus") == 0) {
        if (dlg_parse_int(v, &iv, why, sizeof why) != 0 || iv < 0 || iv > 1024)
            return (snprintf(s->why, sizeof s->why, "gpus = '%s': a count 0..1024", v), 0);
        in->gpus = (int)iv;
    } else if (strcmp(k, "gpu") == 0) {
        if (!(in->gpu = strdup(v)))
            s->oom = true;
        return !s->oom;
    } else if (strcmp(k, "vcpus") == 0) {
        if (dlg_parse_double(v, &in->vcpus, why, sizeof why) != 0 || in->vcpus <= 0)
            return (snprintf(s->why, sizeof s->why, "vcpus = '%s': a positive number", v), 0);
    } else if (strcmp(k, "memory") == 0) {
        if (!positive_size(s, k, v, &iv, "a positive size (e.g. 16GiB)"))
            return 0;
        in->memory = (double)iv;
    } else if (strcmp(k, "disks") == 0 || strcmp(k, "local_disks") == 0) {
        return split_disks(s, in, v, strcmp(k, "local_disks") == 0);
    } else if (strcmp(k, "disk_bandwidth_max") == 0) { /* bytes/s, as a profile's bandwidth */
        if (!positive_size(s, k, v, &iv, "a positive size per second (e.g. 1250MB)"))
            return 0;
        in->disk_bw_max = (double)iv;
    } else if (strcmp(k, "gpu_memory") == 0) { /* per GPU, as the vendor names it (24GB) */
        if (!positive_size(s, k, v, &iv, "a positive size per GPU (e.g. 24GB)"))
            return 0;
        in->gpu_memory = (double)iv;
    } else if (strcmp(k, "local_disk_size") == 0) {
        if (!positive_size(s, k, v, &iv, "a positive size (e.g. 250GB)"))
            return 0;
        in->local_size = (double)iv;
    } else if (strcmp(k, "disk_iops_max") == 0) {
        if (dlg_parse_double(v, &in->disk_iops_max, why, sizeof why) != 0 || in->disk_iops_max <= 0)
            return (snprintf(s->why, sizeof s->why, "disk_iops_max = '%s': a positive number", v), 0);
    } else if (strcmp(k, "price_per_hour") == 0) {
        if (dlg_parse_double(v, &in->price, why, sizeof why) != 0 || in->price <= 0)
            return (snprintf(s->why, sizeof s->why, "price_per_hour = '%s': a positive number", v), 0);
    } else if (strcmp(k, "price_verified") == 0) {
        if (dlg_parse_bool(v, &in->price_verified, why, sizeof why) != 0)
            return (snprintf(s->why, sizeof s->why, "price_verified = '%s': %s", v, why), 0);
    } else {
        snprintf(s->why, sizeof s->why,
                 "unknown key '%s' (an instance takes gpus, gpu, gpu_memory, vcpus, memory, disks, local_disks, "
                 "local_disk_size, disk_bandwidth_max, disk_iops_max, price_per_hour, price_verified)", k);
        return 0;
    }
    return 1;
}

/* price_per_iops_month_above = FROM:PRICE, ...: each IOPS above FROM
 * costs PRICE a month (FROM increasing); 0 or a why in s->why. */
static int iops_tiers(cat_state *s, const char *sec, rep_disk_price *p, const char *v)
{
    const char *form = "FROM:PRICE pairs, FROM increasing (e.g. 32000:0.0455, 64000:0.03185)";
    if (p->ntiers > 0)
        return (snprintf(s->why, sizeof s->why, "[%s]: price_per_iops_month_above set twice", sec), -1);
    for (const char *at = v;;) {
        char *end;
        double from = strtod(at, &end), price = NAN;
        if (end != at && *end == ':')
            price = strtod(at = end + 1, &end);
        while (*end == ' ' || *end == '\t')
            end++;
        if (end == at || !(from > 0) || !(price > 0) || !isfinite(from) || !isfinite(price) ||
            (*end != ',' && *end != '\0') || p->ntiers == REP_IOPS_TIERS ||
            (p->ntiers > 0 && !(from > p->tier_from[p->ntiers - 1]))) {
            p->ntiers = 0;
            return (snprintf(s->why, sizeof s->why, "price_per_iops_month_above = '%s': %s, at most %d", v, form,
                             REP_IOPS_TIERS), -1);
        }
        p->tier_from[p->ntiers] = from;
        p->tier_price[p->ntiers++] = price;
        if (*end == '\0')
            return 0;
        at = end + 1; /* past the comma: another pair must follow */
    }
}

/* One value of [disk NAME] into d: its prices, the sizes it comes in,
 * where the prices were read. */
static int disk_value(cat_state *s, const char *sec, struct cat_disk *d, const char *k, const char *v)
{
    static const char *const keys[] = {"price_per_month",   "price_per_gib_month",  "size_min",
                                       "size_max",          "bandwidth_max",        "bandwidth_per_iops_max",
                                       "iops_max",          "price_per_iops_month", "iops_per_gib_max",
                                       "price_per_mibps_month", "iops_min"};
    rep_disk_price *p = &d->price;
    double *dst[] = {&p->month,  &p->per_gib,  &p->size_min,     &p->size_max, &p->bw_max,
                     &p->bw_per_iops, &p->iops_max, &p->per_iops, &p->iops_per_gib, &p->per_mibps, &p->iops_min};
    enum { FIRST_SIZE = 2, FIRST_RATE = 4, LAST_SIZE = 5 }; /* keys[2..5] are sizes: bytes, then bytes/s */
    char why[96];
    if (strcmp(k, "price_per_iops_month_above") == 0)
        return iops_tiers(s, sec, &d->price, v) == 0;
    if (strcmp(k, "price_verified") == 0) {
        if (d->verified_set)
            return (snprintf(s->why, sizeof s->why, "[%s]: %s set twice", sec, k), 0);
        if (dlg_parse_bool(v, &d->price.verified, why, sizeof why) != 0)
            return (snprintf(s->why, sizeof s->why, "price_verified = '%s': %s", v, why), 0);
        d->verified_set = true;
        return 1;
    }
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        if (strcmp(k, keys[i]) != 0)
            continue;
        if (*dst[i] > 0)
            return (snprintf(s->why, sizeof s->why, "[%s]: %s set twice", sec, k), 0);
        if (i >= FIRST_SIZE && i <= LAST_SIZE) {
            int64_t b = 0;
            if (dlg_parse_size(v, &b, why, sizeof why) != 0 || b <= 0)
                return (snprintf(s->why, sizeof s->why, "%s = '%s': a positive size (e.g. %s)", k, v,
                                 i < FIRST_RATE ? "125GiB" : "1000MiB"), 0);
            *dst[i] = (double)b;
        } else if (dlg_parse_double(v, dst[i], why, sizeof why) != 0 || !(*dst[i] > 0)) {
            return (snprintf(s->why, sizeof s->why, "%s = '%s': a positive number", k, v), 0);
        }
        return 1;
    }
    snprintf(s->why, sizeof s->why, "unknown key '%s' (a disk takes price_per_month, price_per_gib_month, size_min, "
             "size_max, iops_max, iops_min, price_per_iops_month, price_per_iops_month_above, iops_per_gib_max, "
             "bandwidth_max, price_per_mibps_month, bandwidth_per_iops_max, price_verified)", k);
    return 0;
}

/* A key of [disk NAME]: its prices, and where they were read. */
static int disk_key(cat_state *s, const char *sec, const char *k, const char *v)
{
    struct cat_disk *d = NULL;
    for (size_t i = 0; i < s->ndk && !d; i++)
        d = strcmp(s->dk[i].name, sec + 5) == 0 ? &s->dk[i] : NULL;
    if (d && d->line != s->ini->section_line)
        return (snprintf(s->why, sizeof s->why, "[%s] appears twice", sec), 0);
    if (!d) {
        struct cat_disk *nd = realloc(s->dk, (s->ndk + 1) * sizeof *nd);
        if (!nd)
            return (s->oom = true, 0);
        s->dk = nd;
        d = &nd[s->ndk];
        *d = (struct cat_disk){.name = strdup(sec + 5), .line = s->ini->section_line};
        if (!d->name)
            return (s->oom = true, 0);
        s->ndk++;
    }
    return disk_value(s, sec, d, k, v);
}

static int on_kv(void *user, const char *sec, const char *k, const char *v)
{
    cat_state *s = user;
    if (s->why[0] || s->oom)
        return 0; /* inih goes on after an error; the first one is the one to report */
    if (strcmp(sec, "catalog") == 0) {
        if (!s->catalog_line)
            s->catalog_line = s->ini->section_line;
        if (strcmp(k, "provider") == 0)
            return set_str(s, &s->provider, k, v);
        if (strcmp(k, "region") == 0)
            return set_str(s, &s->region, k, v);
        if (strcmp(k, "currency") == 0)
            return set_str(s, &s->currency, k, v);
        if (strcmp(k, "source") == 0)
            return set_str(s, &s->source, k, v);
        if (strcmp(k, "retrieved") == 0)
            return set_str(s, &s->retrieved, k, v);
        snprintf(s->why, sizeof s->why, "[catalog]: unknown key '%s' (provider, region, currency, source, retrieved)", k);
        return 0;
    }
    if (strncmp(sec, "disk ", 5) == 0 && sec[5])
        return disk_key(s, sec, k, v);
    if (!sec[0]) { /* a disk profile (conf/disks) is such a file */
        snprintf(s->why, sizeof s->why, "key '%s' outside any section (a catalog's keys sit in [catalog], "
                 "[instance NAME] or [disk NAME])", k);
        return 0;
    }
    if (strncmp(sec, "instance ", 9) != 0 || !sec[9]) {
        snprintf(s->why, sizeof s->why, "unknown section [%s] (expected [catalog], [instance NAME] or [disk NAME])",
                 sec);
        return 0;
    }
    rep_catalog *c = s->c;
    if (c->n == s->first || strcmp(c->v[c->n - 1].name, sec + 9) != 0) {
        for (size_t i = s->first; i < c->n; i++)
            if (strcmp(c->v[i].name, sec + 9) == 0)
                return (snprintf(s->why, sizeof s->why, "[%s] appears twice", sec), 0);
        rep_instance *nv = realloc(c->v, (c->n + 1) * sizeof *nv);
        if (!nv)
            return (s->oom = true, 0);
        c->v = nv;
        memset(&nv[c->n], 0, sizeof *nv);
        nv[c->n].gpus = 1;
        nv[c->n].line = s->ini->section_line;
        if (!(nv[c->n].name = strdup(sec + 9)))
            return (s->oom = true, 0);
        c->n++;
        s->seen = 0;
    }
    /* a key twice: the section is there twice in a row, or a slip */
    for (unsigned i = 0; i < sizeof inst_keys / sizeof *inst_keys; i++) {
        if (strcmp(k, inst_keys[i]) != 0)
            continue;
        if (s->seen & (1u << i))
            return (snprintf(s->why, sizeof s->why, "[%s]: %s set twice", sec, k), 0);
        s->seen |= 1u << i;
    }
    return inst_key(s, &c->v[c->n - 1], k, v);
}

/* Each disk of the instance's price a month from this file's [disk]
 * sections: instance store 0 (in the instance's price), NaN none. */
static int price_disks(cat_state *s, rep_instance *in)
{
    if (!(in->disk_price = calloc(in->ndisks + 1, sizeof *in->disk_price)))
        return -1;
    for (size_t i = 0; i < in->ndisks; i++) {
        rep_disk_price *p = &in->disk_price[i];
        *p = (rep_disk_price){.month = in->local[i] ? 0 : NAN, .verified = in->local[i] && in->price_verified};
        for (size_t k = 0; k < s->ndk && !in->local[i]; k++)
            if (strcmp(s->dk[k].name, in->disks[i]) == 0)
                *p = s->dk[k].price;
    }
    return 0;
}

/* A [disk NAME] section's keys together: a price, and with a price per
 * GiB the sizes the volume comes in. */
static int check_disk(const cat_state *s, const struct cat_disk *d, char *err, size_t errlen)
{
    const rep_disk_price *p = &d->price;
    const char *why = !(p->month > 0) && !(p->per_gib > 0) ? "has no price_per_month or price_per_gib_month (what the "
                                                             "volume costs a month, or a GiB of it)"
                      : p->per_gib > 0 && !(p->size_min > 0 && p->size_max > 0)
                          ? "prices by the GiB without size_min and size_max (the volumes the provider makes)"
                      : !(p->per_gib > 0) && (p->size_min > 0 || p->size_max > 0)
                          ? "gives sizes without price_per_gib_month (a volume is sized only where it is priced by "
                            "the GiB)"
                      : p->size_min > p->size_max ? "has size_min above size_max"
                      : (p->iops_max > 0) != (p->per_iops > 0) || (p->bw_max > 0) != (p->per_mibps > 0)
                          ? "buys IOPS or bandwidth without both its most (iops_max, bandwidth_max) and its price "
                            "(price_per_iops_month, price_per_mibps_month)"
                      : p->ntiers > 0 && !(p->per_iops > 0)
                          ? "has price_per_iops_month_above without price_per_iops_month (the first tier's price)"
                      : p->iops_min > 0 && !(p->iops_max >= p->iops_min)
                          ? "has iops_min without an iops_max at least as large"
                      : (p->iops_max > 0 || p->bw_max > 0) && !(p->per_gib > 0)
                          ? "buys IOPS or bandwidth without price_per_gib_month (rates are bought for a sized volume)"
                          : NULL;
    if (!why)
        return 0;
    snprintf(err, errlen, "%s:%d: [disk %s] %s", s->path, d->line, d->name, why);
    return -DLG_EINVAL;
}

static int finish(cat_state *s, char *err, size_t errlen)
{
    rep_catalog *c = s->c;
    const char *lacks = !s->provider   ? "provider"
                        : !s->currency ? "currency"
                        : !s->source   ? "source"
                        : !s->retrieved ? "retrieved"
                                        : NULL;
    if (!s->catalog_line) {
        snprintf(err, errlen, "%s: no [catalog] section (it names provider, currency, source and retrieved: where the "
                 "prices come from)", s->path);
        return -DLG_EINVAL;
    }
    if (lacks) {
        snprintf(err, errlen, "%s:%d: [catalog] has no %s (it needs provider, currency, source and retrieved: where "
                 "the prices come from)", s->path, s->catalog_line, lacks);
        return -DLG_EINVAL;
    }
    for (size_t k = 0; k < s->ndk; k++)
        if (check_disk(s, &s->dk[k], err, errlen) != 0)
            return -DLG_EINVAL;
    if (c->n == s->first) { /* nothing to rank: "no instance meets" would blame the knees */
        snprintf(err, errlen, "%s:%d: the catalog lists no instance (an [instance NAME] section each, with vcpus, "
                 "memory and price_per_hour)", s->path, s->catalog_line);
        return -DLG_EINVAL;
    }
    for (size_t i = s->first; i < c->n; i++) {
        rep_instance *in = &c->v[i];
        const char *missing = in->vcpus <= 0    ? "vcpus"
                              : in->memory <= 0 ? "memory"
                              : in->price <= 0  ? "price_per_hour"
                                                : NULL;
        if (missing) {
            snprintf(err, errlen, "%s:%d: [instance %s] has no %s (an instance needs vcpus, memory and price_per_hour)",
                     s->path, in->line, in->name, missing);
            return -DLG_EINVAL;
        }
        bool local = false;
        for (size_t d = 0; d < in->ndisks; d++)
            local |= in->local[d];
        if (in->local_size > 0 && !local) {
            snprintf(err, errlen, "%s:%d: [instance %s] has local_disk_size but no local_disks (the instance store "
                     "it sizes)", s->path, in->line, in->name);
            return -DLG_EINVAL;
        }
        in->provider = strdup(s->provider);
        in->region = strdup(s->region ? s->region : "-");
        in->currency = strdup(s->currency);
        in->source = strdup(s->source);
        in->retrieved = strdup(s->retrieved);
        in->catalog = strdup(s->path);
        if (!in->gpu)
            in->gpu = strdup("-");
        if (!in->provider || !in->region || !in->currency || !in->source || !in->retrieved || !in->catalog || !in->gpu ||
            price_disks(s, in) != 0) {
            snprintf(err, errlen, "%s: out of memory", s->path);
            return -DLG_ENOMEM;
        }
    }
    return 0;
}

int rep_catalog_load(rep_catalog *c, const char *path, char *err, size_t errlen)
{
    rep_ini ini;
    cat_state s = {.c = c, .first = c->n, .path = path, .ini = &ini};
    int line = rep_ini_parse(&ini, path, on_kv, &s);
    int rc = 0;
    if (line == -2)
        s.oom = true;
    if (line == -1) {
        snprintf(err, errlen, "%s: cannot open the instance catalog: %s", path, strerror(ini.open_errno));
        rc = -DLG_EIO;
    } else if (s.oom) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -DLG_ENOMEM;
    } else if (line > 0) {
        const char *why = ini.bad[0] ? ini.bad : s.why[0] ? s.why : "syntax error (expected key = value or [section])";
        /* refused before any section or key: another kind of file (a results CSV) */
        bool first = line == ini.first_line;
        snprintf(err, errlen, "%s:%d: %s%s", path, line, why,
                 first ? " (not an instance catalog? that is an INI file of [instance NAME] sections)" : "");
        rc = -DLG_EINVAL;
    } else if (ini.empty_line) { /* an instance left out without a word */
        snprintf(err, errlen, "%s:%d: a section with no keys (an [instance NAME] needs vcpus, memory and "
                 "price_per_hour)", path, ini.empty_line);
        rc = -DLG_EINVAL;
    } else {
        rc = finish(&s, err, errlen);
    }
    for (size_t k = 0; k < s.ndk; k++)
        free(s.dk[k].name);
    free(s.dk);
    free(s.provider);
    free(s.region);
    free(s.currency);
    free(s.source);
    free(s.retrieved);
    return rc;
}

void rep_catalog_free(rep_catalog *c)
{
    for (size_t i = 0; i < c->n; i++) {
        rep_instance *in = &c->v[i];
        free(in->name);
        free(in->provider);
        free(in->region);
        free(in->currency);
        free(in->source);
        free(in->retrieved);
        free(in->catalog);
        free(in->gpu);
        for (size_t d = 0; d < in->ndisks; d++)
            free(in->disks[d]);
        free(in->disks);
        free(in->local);
        free(in->disk_price);
    }
    free(c->v);
    c->v = NULL;
    c->n = 0;
}
