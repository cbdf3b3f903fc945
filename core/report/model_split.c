/* Rows are repeats of one cell only where they ran the same settings on
 * the same machine (values by meaning: settings_kind.c): a row's settings
 * are its `config` keys less those
 * its identity sweeps (axes), those of the identity itself and those that
 * only govern the measurement; rows of one identity with other settings
 * or another `host` form groups of their own, labelled by what differs.
 * Rows of several builds of one dlgauge version (`git_rev`) are pooled,
 * with a warning: a sweep resumed after a rebuild would split into
 * groups of part of its grid each. */
#define _GNU_SOURCE
#include "model_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"
#include "settings_kind.h"

/* Keys that govern how a cell is measured, not what it runs: how long
 * and how often (warm-up, duration, min_steps, repeat; seed, since every
 * repetition already runs with its own), when it is stopped (timeout),
 * how it is isolated, and the [global] keys of where results go (sinks,
 * run_id, journal).  `iterations` is not among them: it can be the work
 * itself (preprocess converts that many images). */
static const char *const measure_keys[] = {"warmup",    "duration", "min_steps", "repeat", "seed",
                                           "timeout",   "isolation", "sinks",    "run_id", "journal"};
/* Keys of the identity (model.c groups by them): equal within a group. */
static const char *const ident_keys[] = {"workload", "job", "mode", "precision", "device", "host"};

static bool listed(const char *k, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(k, list[i]) == 0)
            return true;
    return false;
}

static bool same(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int rep_row_settings(const rep_row *r, const rep_kinds *kinds, rep_swept_fn swept, const void *ctx, char **out)
{
    *out = NULL;
    const char *cfg = rep_str(r, "config");
    if (!cfg)
        return 0;
    const char *wl = rep_str(r, "workload");
    char **pairs = NULL, key[128], val[1024], canon[64];
    size_t n = 0, total = 1;
    int rc = 0;
    for (const char *p = cfg; !rc && rep_config_next(&p, key, sizeof key, val, sizeof val);) {
        if (listed(key, measure_keys, sizeof measure_keys / sizeof *measure_keys) ||
            listed(key, ident_keys, sizeof ident_keys / sizeof *ident_keys) || swept(ctx, key))
            continue;
        char **np = realloc(pairs, (n + 1) * sizeof *np);
        /* by meaning: memory = 1G and 1024M are one setting */
        if (!np || asprintf(&np[n], "%s=%s", key, rep_kinds_canon(kinds, wl && *wl ? wl : "-", key, val, canon,
                                                                   sizeof canon)) < 0)
            rc = -1;
        if (np)
            pairs = np;
        if (!rc)
            total += strlen(pairs[n++]) + 1;
    }
    if (!rc && (*out = malloc(total)) == NULL)
        rc = -1;
    if (!rc) { /* sorted: the order the keys were written in is no setting */
        if (n)
            qsort(pairs, n, sizeof *pairs, by_str);
        (*out)[0] = '\0';
        for (size_t i = 0, len = 0; i < n; i++)
            len += (size_t)sprintf(*out + len, "%s%s", i ? "\x1f" : "", pairs[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(pairs[i]);
    free(pairs);
    return rc;
}

/* The value of key in settings s ("k=v\x1fk=v"), copied to buf; "-" where
 * s lacks it. */
static const char *setting(const char *s, const char *key, char *buf, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = s; p && *p;) {
        const char *end = strchr(p, '\x1f');
        size_t pl = end ? (size_t)(end - p) : strlen(p);
        if (pl > kl && p[kl] == '=' && strncmp(p, key, kl) == 0) {
            snprintf(buf, len, "%.*s", (int)(pl - kl - 1), p + kl + 1);
            return buf;
        }
        p = end ? end + 1 : p + pl;
    }
    return "-";
}

/* Calls fn for each key of settings s (at most 127 bytes of it). */
static void each_key(const char *s, void (*fn)(const char *key, void *ctx), void *ctx)
{
    for (const char *p = s; p && *p;) {
        const char *end = strchr(p, '\x1f'), *eq = strchr(p, '=');
        size_t pl = end ? (size_t)(end - p) : strlen(p);
        char key[128];
        if (eq && eq < p + pl) {
            snprintf(key, sizeof key, "%.*s", (int)(eq - p), p);
            fn(key, ctx);
        }
        p = end ? end + 1 : p + pl;
    }
}

typedef struct same_ctx {
    const rep_group *a, *b;
    bool same;
} same_ctx;

static void same_key(const char *key, void *vctx)
{
    same_ctx *c = vctx;
    char va[1024], vb[1024];
    if (rep_group_axis(c->a, key) >= 0 || rep_group_axis(c->b, key) >= 0)
        return; /* each cell's value is its own */
    c->same = c->same && strcmp(setting(c->a->settings, key, va, sizeof va),
                                setting(c->b->settings, key, vb, sizeof vb)) == 0;
}

bool rep_group_same_settings(const rep_group *a, const rep_group *b)
{
    if (!a->settings || !b->settings)
        return true; /* not recorded: as before settings were compared */
    same_ctx c = {a, b, true};
    each_key(a->settings, same_key, &c);
    each_key(b->settings, same_key, &c);
    return c.same;
}

bool rep_group_same_identity(const rep_group *a, const rep_group *b)
{
    return a->ranks == b->ranks && a->nodes == b->nodes && strcmp(a->job, b->job) == 0 &&
           strcmp(a->workload, b->workload) == 0 && strcmp(a->mode, b->mode) == 0 &&
           strcmp(a->precision, b->precision) == 0 && strcmp(a->device, b->device) == 0;
}

/* Rows that recorded no settings take those of the other rows of their
 * identity where these all ran one (older rows merged with newer ones of
 * the same runs); else they stay a group of their own.  first[b]: the
 * first row of identity b with settings, -2 where two differ. */
int rep_adopt_settings(size_t nbase, const rep_rows *rs, const long *bid, char **set, const char **host)
{
    long *first = malloc((nbase + 1) * sizeof *first);
    if (!first)
        return -1;
    for (size_t b = 0; b < nbase; b++)
        first[b] = -1;
    for (size_t i = 0; i < rs->n; i++) {
        long *f = &first[bid[i]];
        if (set[i] && *f == -1)
            *f = (long)i;
        else if (set[i] && *f >= 0 && (!same(set[*f], set[i]) || !same(host[*f], host[i])))
            *f = -2;
    }
    int rc = 0;
    for (size_t i = 0; i < rs->n && !rc; i++) {
        long f = first[bid[i]];
        if (set[i] || f < 0)
            continue;
        host[i] = host[f];
        rc = (set[i] = strdup(set[f])) ? 0 : -1;
    }
    free(first);
    return rc;
}

/* Whether settings s has key. */
static bool has_key(const char *s, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = s; p && *p;) {
        const char *end = strchr(p, '\x1f');
        size_t pl = end ? (size_t)(end - p) : strlen(p);
        if (pl > kl && p[kl] == '=' && strncmp(p, key, kl) == 0)
            return true;
        p = end ? end + 1 : p + pl;
    }
    return false;
}

/* The groups sib[0..n) of one identity, the keys whose values differ
 * among those that recorded settings ("host" first) written to out, each
 * followed by '\x1f'. */
typedef struct diff_ctx {
    const rep_model *m;
    const size_t *sib;
    size_t n, cur; /* the sibling whose keys are walked */
    FILE *out;
} diff_ctx;

static void diff_key(const char *key, void *vctx)
{
    diff_ctx *d = vctx;
    for (size_t j = 0; j < d->cur; j++)
        if (has_key(d->m->g[d->sib[j]].settings, key))
            return; /* judged at that sibling */
    char first[1024] = "", v[1024];
    bool any = false, differ = false;
    for (size_t i = 0; i < d->n && !differ; i++) {
        const rep_group *g = &d->m->g[d->sib[i]];
        if (!g->settings)
            continue;
        const char *val = strcmp(key, "host") == 0 ? g->host : setting(g->settings, key, v, sizeof v);
        differ = any && strcmp(first, val) != 0;
        if (!any)
            snprintf(first, sizeof first, "%s", val);
        any = true;
    }
    if (differ)
        fprintf(d->out, "%s\x1f", key);
}

/* The keys (each followed by '\x1f') differing among the siblings, or NULL. */
static char *differing_keys(const rep_model *m, const size_t *sib, size_t n)
{
    rep_mem_out keys;
    diff_ctx d = {m, sib, n, 0, rep_mem_open(&keys)};
    if (!d.out)
        return NULL;
    diff_key("host", &d);
    for (d.cur = 0; d.cur < n; d.cur++)
        each_key(m->g[sib[d.cur]].settings, diff_key, &d);
    return rep_mem_close(d.out, &keys) == 0 ? keys.buf : NULL;
}

/* "sleep=10ms host=b": group g's values of keys; without settings recorded, that. */
static char *split_label(const rep_group *g, const char *keys)
{
    if (!g->settings)
        return strdup("settings not recorded");
    char v[1024];
    rep_mem_out label;
    FILE *f = rep_mem_open(&label);
    if (!f)
        return NULL;
    for (const char *k = keys, *end; (end = strchr(k, '\x1f')) != NULL; k = end + 1) {
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(end - k), k);
        fprintf(f, "%s%s=%s", k == keys ? "" : " ", key,
                strcmp(key, "host") == 0 ? g->host : setting(g->settings, key, v, sizeof v));
    }
    return rep_mem_close(f, &label) == 0 ? label.buf : NULL;
}

/* "sleep (job t)": what a warning names a group's identity by, to f. */
static void write_identity(FILE *f, const rep_group *g)
{
    char rk[64];
    rep_group_ranks_text(g, rk, sizeof rk);
    fprintf(f, "%s%s%s (job %s%s%s)", g->workload, strcmp(g->mode, "-") ? "/" : "",
            strcmp(g->mode, "-") ? g->mode : "", g->job, g->ranks > 1 ? ", " : "", g->ranks > 1 ? rk : "");
}

int rep_model_push_warning(rep_model *m, FILE *f, rep_mem_out *line)
{
    if (rep_mem_close(f, line) != 0)
        return -1;
    char **nw = realloc(m->warnings, (m->nwarnings + 1) * sizeof *nw);
    if (!nw) {
        free(line->buf);
        return -1;
    }
    m->warnings = nw;
    nw[m->nwarnings++] = line->buf;
    return 0;
}

/* The warning for the identity of sib[0..n): "sleep (job t): rows ran
 * with settings not swept that differ (sleep): 2 groups, not pooled as
 * repeats of one cell: sleep=1ms; sleep=10ms". */
static int add_warning(rep_model *m, const size_t *sib, size_t n, const char *keys)
{
    rep_mem_out line;
    FILE *f = rep_mem_open(&line);
    if (!f)
        return -1;
    write_identity(f, &m->g[sib[0]]);
    fprintf(f, ": its rows ran with settings not swept that differ (");
    for (const char *k = keys, *end; (end = strchr(k, '\x1f')) != NULL; k = end + 1)
        fprintf(f, "%s%.*s", k == keys ? "" : ", ", (int)(end - k), k);
    fprintf(f, "): %zu groups, not pooled as repeats of one cell:", n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s %s", i ? ";" : "", m->g[sib[i]].split);
    return rep_model_push_warning(m, f, &line);
}

int rep_model_label_splits(rep_model *m)
{
    size_t *sib = malloc((m->n + 1) * sizeof *sib);
    int rc = sib ? 0 : -1;
    for (size_t gi = 0; gi < m->n && !rc; gi++) {
        size_t n = 0;
        bool earlier = false; /* the identity was labelled at its first group */
        for (size_t j = 0; j < m->n; j++)
            if (rep_group_same_identity(&m->g[j], &m->g[gi])) {
                earlier = earlier || j < gi;
                sib[n++] = j;
            }
        if (n < 2 || earlier)
            continue;
        char *keys = differing_keys(m, sib, n);
        rc = keys ? 0 : -1;
        for (size_t i = 0; i < n && !rc; i++)
            rc = (m->g[sib[i]].split = split_label(&m->g[sib[i]], keys)) ? 0 : -1;
        if (!rc)
            rc = add_warning(m, sib, n, keys);
        free(keys);
    }
    free(sib);
    return rc;
}

/* A group's git revisions, the first REVS_NAMED of them named. */
enum { REVS_NAMED = 3 };
typedef struct rev_seen {
    const char *rev[REVS_NAMED];
    size_t n;
    bool more; /* and others */
} rev_seen;

static void rev_add(rev_seen *s, const char *rev)
{
    for (size_t i = 0; i < s->n; i++)
        if (same(s->rev[i], rev))
            return;
    if (s->n < REVS_NAMED)
        s->rev[s->n++] = rev;
    else
        s->more = true;
}

/* "sim (job t): its rows were written by dlgauge built from 2 git
 * revisions (abc, def) and pooled as repeats: ..." */
static int add_rev_warning(rep_model *m, size_t gi, const rev_seen *s)
{
    rep_mem_out line;
    FILE *f = rep_mem_open(&line);
    if (!f)
        return -1;
    const rep_group *g = &m->g[gi];
    write_identity(f, g);
    if (g->split)
        fprintf(f, " [%s]", g->split);
    fprintf(f, ": its rows were written by dlgauge built from %s%zu git revisions (", s->more ? "more than " : "",
            s->n);
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%s%s", i ? ", " : "", s->rev[i]);
    fprintf(f, "%s) and pooled as repeats of its cells: a change between them reads as noise, or as a step in its "
               "curve; read each revision's rows alone, or set them side by side with dlgauge compare",
            s->more ? ", ..." : "");
    return rep_model_push_warning(m, f, &line);
}

int rep_model_warn_revisions(rep_model *m, const rep_rows *rs, const long *gid)
{
    rev_seen *seen = calloc(m->n + 1, sizeof *seen);
    if (!seen)
        return -1;
    for (size_t i = 0; i < rs->n; i++) {
        const char *rev = rep_str(&rs->v[i], "git_rev");
        if (gid[i] >= 0 && rev && *rev && rep_row_measured(&rs->v[i]))
            rev_add(&seen[gid[i]], rev);
    }
    int rc = 0;
    for (size_t gi = 0; gi < m->n && !rc; gi++)
        if (seen[gi].n > 1)
            rc = add_rev_warning(m, gi, &seen[gi]);
    free(seen);
    return rc;
}
