/* The in-memory result rows: adding, looking up, checking, freeing. */
#define _GNU_SOURCE
#include "rows.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

const char *rep_rows_add_file(rep_rows *rs, const char *path)
{
    char **nf = realloc(rs->files, (rs->nfiles + 1) * sizeof *nf);
    if (!nf)
        return NULL;
    rs->files = nf;
    if (!(nf[rs->nfiles] = strdup(path)))
        return NULL;
    return nf[rs->nfiles++];
}

int rep_rows_warn(rep_rows *rs, const char *fmt, ...)
{
    char **nw = realloc(rs->warnings, (rs->nwarnings + 1) * sizeof *nw);
    if (!nw)
        return -1;
    rs->warnings = nw;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&nw[rs->nwarnings], fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    rs->nwarnings++;
    return 0;
}

rep_row *rep_rows_add(rep_rows *rs, const char *src, long line)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 64;
        rep_row *nv = realloc(rs->v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        rs->v = nv;
        rs->cap = cap;
    }
    rep_row *r = &rs->v[rs->n++];
    memset(r, 0, sizeof *r);
    r->src = src;
    r->line = line;
    return r;
}

static rep_kv *kv_append(rep_row *r, bool tag, const char *key, const char *val)
{
    rep_kv **arr = tag ? &r->tags : &r->fields;
    size_t *n = tag ? &r->ntags : &r->nfields;
    rep_kv *na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na)
        return NULL;
    *arr = na;
    rep_kv *kv = &na[*n];
    memset(kv, 0, sizeof *kv);
    kv->key = strdup(key);
    kv->str = strdup(val);
    if (!kv->key || !kv->str) {
        free(kv->key);
        free(kv->str);
        return NULL;
    }
    (*n)++;
    return kv;
}

/* A whole-string finite number (CSV cells are text until proven numeric). */
static bool parse_number(const char *s, double *out)
{
    if (!*s || isspace((unsigned char)*s))
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* ERANGE: an overflow (inf) is no number; an underflow (1e-310) is a
     * tiny one, its nearest double */
    if (*end || (errno == ERANGE && fabs(v) >= DBL_MIN) || !isfinite(v))
        return false;
    *out = v;
    return true;
}

int rep_row_put(rep_row *r, bool tag, const char *key, const char *val)
{
    rep_kv *kv = kv_append(r, tag, key, val);
    if (!kv)
        return -1;
    if (!tag)
        kv->is_num = parse_number(val, &kv->num);
    return 0;
}

int rep_row_put_num(rep_row *r, const char *key, double v, const char *text)
{
    rep_kv *kv = kv_append(r, false, key, text);
    if (!kv)
        return -1;
    kv->num = v;
    kv->is_num = true;
    return 0;
}

static const rep_kv *find(const rep_kv *a, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].key, key) == 0)
            return &a[i];
    return NULL;
}

const char *rep_tag(const rep_row *r, const char *key)
{
    const rep_kv *kv = find(r->tags, r->ntags, key);
    return kv ? kv->str : NULL;
}

const char *rep_str(const rep_row *r, const char *key)
{
    const rep_kv *kv = find(r->tags, r->ntags, key);
    if (!kv)
        kv = find(r->fields, r->nfields, key);
    return kv ? kv->str : NULL;
}

bool rep_num(const rep_row *r, const char *key, double *out)
{
    const rep_kv *kv = find(r->fields, r->nfields, key);
    if (!kv || !kv->is_num)
        return false;
    *out = kv->num;
    return true;
}

/* Fields every measured row must carry, and why. */
static const struct {
    const char *key;
    const char *why;
} needed[] = {
    {"throughput", "the scaling curves"},
    {"throughput_ci95", "the confidence intervals"},
    {"repeats", "pooling repetitions"},
};

bool rep_row_measured(const rep_row *r)
{
    const char *st = rep_tag(r, "status");
    double v;
    return st && (strcmp(st, "ok") == 0 || (strcmp(st, "partial") == 0 && rep_num(r, "throughput", &v)));
}

/* The column holds a whole number from 1 to max. */
static bool whole_in(const rep_kv *kv, double max)
{
    return kv->is_num && kv->num >= 1 && kv->num <= max && kv->num == (double)(long)kv->num;
}

/* `ranks`, where the row has it (rows written before it read as 1), is a
 * whole number of processes: anything else is no row of dlgauge's. */
static bool bad_ranks(const rep_row *r, char *err, size_t errlen)
{
    const rep_kv *kv = find(r->fields, r->nfields, "ranks");
    if (!kv || whole_in(kv, 1e9))
        return false;
    snprintf(err, errlen, "%s:%ld: column 'ranks' is '%s': the run's ranks are a whole number >= 1", r->src, r->line,
             kv->str ? kv->str : "");
    return true;
}

/* `nodes` (the machines the ranks were on; absent: 1) is a whole number
 * no larger than the ranks: each node ran at least one of them.  Called
 * once `ranks` passed. */
static bool bad_nodes(const rep_row *r, char *err, size_t errlen)
{
    const rep_kv *kv = find(r->fields, r->nfields, "nodes"), *rk = find(r->fields, r->nfields, "ranks");
    double ranks = rk ? rk->num : 1;
    if (!kv || whole_in(kv, ranks))
        return false;
    snprintf(err, errlen,
             "%s:%ld: column 'nodes' is '%s': the machines the run's ranks were on are a whole number >= 1 and "
             "at most its ranks (%.0f)",
             r->src, r->line, kv->str ? kv->str : "", ranks);
    return true;
}

/* A rate or its spread below zero is no measurement: a sign lost or
 * flipped by an edit would otherwise rank and pool as one. */
static bool bad_negative(const rep_row *r, char *err, size_t errlen)
{
    static const char *const keys[] = {"throughput", "throughput_ci95", "throughput_stddev"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const rep_kv *kv = find(r->fields, r->nfields, keys[k]);
        if (kv && kv->is_num && kv->num < 0) {
            snprintf(err, errlen, "%s:%ld: column '%s' is '%s': a measured rate and its spread are never negative",
                     r->src, r->line, keys[k], kv->str);
            return true;
        }
    }
    return false;
}

/* A row's group identity, as the model groups rows (model.c find_group:
 * workload, job, mode, precision, device, ranks, nodes), its unit and its
 * place, for finding a group whose rows count different units. */
typedef struct unit_key {
    const char *id[5];
    double ranks, nodes;
    const char *unit;
    size_t i;
} unit_key;

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "-", b ? b : "-");
}

static int group_cmp(const unit_key *x, const unit_key *y)
{
    for (size_t k = 0; k < 5; k++) {
        int d = cmp_str(x->id[k], y->id[k]);
        if (d)
            return d;
    }
    if (x->ranks != y->ranks)
        return x->ranks < y->ranks ? -1 : 1;
    return x->nodes != y->nodes ? (x->nodes < y->nodes ? -1 : 1) : 0;
}

static int group_then_place(const void *a, const void *b)
{
    const unit_key *x = a, *y = b;
    int d = group_cmp(x, y);
    return d ? d : (x->i > y->i) - (x->i < y->i);
}

static double num_or_one(const rep_row *r, const char *key)
{
    double v;
    return rep_num(r, key, &v) ? v : 1;
}

/* Rows of one group counting different units (images and bytes) would
 * pool into one curve whose best compares bytes with images: refused,
 * naming the first such row (in file order) and the group's first unit.
 * One sort by group: scanning the groups per row is quadratic in them.
 * 0, 1 (err says why) or -1 out of memory. */
static int mixed_units(const rep_rows *rs, char *err, size_t errlen)
{
    unit_key *v = malloc((rs->n + 1) * sizeof *v);
    if (!v)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const rep_row *r = &rs->v[i];
        const char *u = rep_str(r, "unit");
        if (u && *u)
            v[m++] = (unit_key){{rep_tag(r, "workload"), rep_tag(r, "job"), rep_str(r, "mode"), rep_str(r, "precision"),
                                 rep_str(r, "device")},
                                num_or_one(r, "ranks"), num_or_one(r, "nodes"), u, i};
    }
    qsort(v, m, sizeof *v, group_then_place);
    size_t bad = rs->n, first = 0, ref = 0; /* the earliest offending row, and its group's first */
    for (size_t j = 1; j < m; j++) {
        if (group_cmp(&v[j], &v[first]) != 0)
            first = j;
        else if (strcmp(v[j].unit, v[first].unit) != 0 && v[j].i < bad) {
            bad = v[j].i;
            ref = v[first].i;
        }
    }
    free(v);
    if (bad == rs->n)
        return 0;
    const rep_row *r = &rs->v[bad], *f = &rs->v[ref];
    snprintf(err, errlen,
             "%s:%ld: unit '%s', but %s:%ld of the same workload %s (job %s) counts '%s': one curve cannot rank "
             "%s against %s; report them separately",
             r->src, r->line, rep_str(r, "unit"), f->src, f->line, rep_tag(r, "workload"),
             rep_tag(r, "job") ? rep_tag(r, "job") : "-", rep_str(f, "unit"), rep_str(r, "unit"), rep_str(f, "unit"));
    return 1;
}

int rep_rows_validate(const rep_rows *rs, char *err, size_t errlen)
{
    if (rs->n == 0) {
        snprintf(err, errlen, "no dlgauge_result rows in %s%s", rs->nfiles ? rs->files[0] : "the input",
                 rs->nfiles > 1 ? " and the other files" : "");
        return -DLG_EINVAL;
    }
    const rep_row *first_v = NULL;
    for (size_t i = 0; i < rs->n; i++) {
        const rep_row *r = &rs->v[i];
        const char *st = rep_tag(r, "status");
        if (!rep_tag(r, "workload") || !st) {
            snprintf(err, errlen, "%s:%ld: missing column '%s' (a dlgauge_result row always has workload and status tags)",
                     r->src, r->line, rep_tag(r, "workload") ? "status" : "workload");
            return -DLG_EINVAL;
        }
        if (rep_row_measured(r))
            for (size_t k = 0; k < sizeof needed / sizeof *needed; k++) {
                double v;
                if (!rep_num(r, needed[k].key, &v)) {
                    snprintf(err, errlen, "%s:%ld: missing or non-numeric column '%s' (needed for %s)", r->src,
                             r->line, needed[k].key, needed[k].why);
                    return -DLG_EINVAL;
                }
            }
        if (bad_ranks(r, err, errlen) || bad_nodes(r, err, errlen) ||
            (rep_row_measured(r) && bad_negative(r, err, errlen)))
            return -DLG_EINVAL;
        const char *ver = rep_str(r, "version");
        if (!ver || !*ver) {
            snprintf(err, errlen, "%s:%ld: missing column 'version' (which dlgauge wrote the row)", r->src, r->line);
            return -DLG_EINVAL;
        }
        if (!first_v)
            first_v = r;
        else if (strcmp(ver, rep_str(first_v, "version")) != 0) {
            snprintf(err, errlen,
                     "mixed dlgauge versions: %s:%ld was written by %s, %s:%ld by %s; "
                     "read each version's results on their own",
                     first_v->src, first_v->line, rep_str(first_v, "version"), r->src, r->line, ver);
            return -DLG_EINVAL;
        }
    }
    int mixed = mixed_units(rs, err, errlen);
    if (mixed < 0)
        snprintf(err, errlen, "out of memory checking the rows' units");
    return mixed < 0 ? -DLG_ENOMEM : mixed ? -DLG_EINVAL : 0;
}

static void free_kvs(rep_kv *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(a[i].key);
        free(a[i].str);
    }
    free(a);
}

void rep_rows_free(rep_rows *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        free_kvs(rs->v[i].tags, rs->v[i].ntags);
        free_kvs(rs->v[i].fields, rs->v[i].nfields);
    }
    free(rs->v);
    for (size_t i = 0; i < rs->nfiles; i++)
        free(rs->files[i]);
    free(rs->files);
    for (size_t i = 0; i < rs->nhosts; i++) {
        rep_host *h = &rs->hosts[i];
        free(h->run_id);
        free(h->host);
        free(h->cpu_model);
        free(h->version);
    }
    free(rs->hosts);
    for (size_t i = 0; i < rs->nwarnings; i++)
        free(rs->warnings[i]);
    free(rs->warnings);
    memset(rs, 0, sizeof *rs);
}

bool rep_config_next(const char **p, char *key, size_t klen, char *val, size_t vlen)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (!*s)
        return false;
    size_t k = 0, v = 0;
    bool in_val = false;
    for (; *s && *s != ' '; s++) {
        char c = *s;
        if (c == '\\' && s[1])
            c = *++s;
        else if (c == '=' && !in_val) {
            in_val = true;
            continue;
        }
        if (!in_val && k + 1 < klen)
            key[k++] = c;
        else if (in_val && v + 1 < vlen)
            val[v++] = c;
    }
    key[k] = '\0';
    val[v] = '\0';
    *p = s;
    return true;
}

bool rep_config_has(const char *cfg, const char *key, const char *val)
{
    char k[128], v[1024];
    for (const char *p = cfg; p && rep_config_next(&p, k, sizeof k, v, sizeof v);)
        if (strcmp(k, key) == 0 && strcmp(v, val) == 0)
            return true;
    return false;
}

/* Options that identify a group (mode, precision, device) and the storage
 * a cell read through are tags only when swept; otherwise they are in the
 * row's `config` field. */
static int expand_config(rep_row *r)
{
    static const char *const wanted[] = {"mode", "precision", "device", "storage"};
    const char *cfg = NULL;
    for (size_t i = 0; i < r->nfields; i++)
        if (strcmp(r->fields[i].key, "config") == 0)
            cfg = r->fields[i].str;
    char key[64], val[256];
    for (const char *p = cfg; p && rep_config_next(&p, key, sizeof key, val, sizeof val);)
        for (size_t w = 0; w < sizeof wanted / sizeof *wanted; w++)
            if (strcmp(key, wanted[w]) == 0 && !rep_str(r, key) && rep_row_put(r, false, key, val) != 0)
                return -1;
    return 0;
}

/* Reads the file at path, named name in rows and messages (the readers
 * name it by path in some). */
static int read_named(rep_rows *rs, const char *path, const char *name, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", name, strerror(errno));
        return -DLG_EIO;
    }
    int c;
    do
        c = fgetc(f);
    while (c != EOF && isspace(c));
    fclose(f);
    const char *src = rep_rows_add_file(rs, name);
    if (!src) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -DLG_ENOMEM;
    }
    if (c == EOF) {
        snprintf(err, errlen, "%s: empty file (no header, no rows)", name);
        return -DLG_EINVAL;
    }
    size_t first = rs->n;
    int rc = c == '{' ? rep_read_jsonl(rs, path, src, err, errlen) : rep_read_csv(rs, path, src, err, errlen);
    for (size_t i = first; rc == 0 && i < rs->n; i++)
        if (expand_config(&rs->v[i]) != 0) {
            snprintf(err, errlen, "%s: out of memory", name);
            rc = -DLG_ENOMEM;
        }
    return rc;
}

/* Standard input copied to an unlinked temporary file, whose name under
 * /proc/self/fd goes to path: the kind is sniffed before the reader reads
 * it again, which a pipe would not allow.  NULL after saying why. */
static FILE *spool_stdin(char *path, size_t plen, char *err, size_t errlen)
{
    if (isatty(STDIN_FILENO)) { /* waiting for typed results helps nobody */
        snprintf(err, errlen, "%s: a terminal: pipe or redirect the results in ('-' < FILE)", REP_STDIN_NAME);
        return NULL;
    }
    FILE *t = tmpfile();
    if (!t) {
        snprintf(err, errlen, "%s: cannot make a temporary copy: %s", REP_STDIN_NAME, strerror(errno));
        return NULL;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0 && fwrite(buf, 1, n, t) == n)
        ;
    if (ferror(stdin) || ferror(t) || fflush(t) != 0) {
        snprintf(err, errlen, "%s: %s: %s", REP_STDIN_NAME, ferror(stdin) ? "read error" : "copy failed",
                 strerror(errno));
        fclose(t);
        return NULL;
    }
    snprintf(path, plen, "/proc/self/fd/%d", fileno(t));
    return t;
}

/* s, a heap string or buffer of cap bytes, with its leading from renamed to
 * to; a heap string is reallocated (cap 0), a buffer cut at cap. */
static void rename_lead(char **s, size_t cap, const char *from, const char *to)
{
    size_t lf = strlen(from);
    if (!*s || strncmp(*s, from, lf) != 0)
        return;
    char *out = NULL;
    if (asprintf(&out, "%s%s", to, *s + lf) < 0)
        return;
    if (cap) {
        snprintf(*s, cap, "%s", out);
        free(out);
    } else {
        free(*s);
        *s = out;
    }
}

int rep_read_file(rep_rows *rs, const char *path, char *err, size_t errlen)
{
    if (strcmp(path, "-") != 0)
        return read_named(rs, path, path, err, errlen);
    char fdpath[64];
    FILE *t = spool_stdin(fdpath, sizeof fdpath, err, errlen);
    if (!t)
        return -DLG_EIO;
    size_t w0 = rs->nwarnings;
    int rc = read_named(rs, fdpath, REP_STDIN_NAME, err, errlen);
    fclose(t);
    if (rc)
        rename_lead(&err, errlen, fdpath, REP_STDIN_NAME);
    for (size_t i = w0; i < rs->nwarnings; i++)
        rename_lead(&rs->warnings[i], 0, fdpath, REP_STDIN_NAME);
    return rc;
}
