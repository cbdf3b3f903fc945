/* Builds the model: rows -> groups -> axes -> cells, each cell's rows
 * pooled (model_pool.c) and classified (bottleneck.c), then the best cell
 * and the knees (model_rank.c). */
#define _GNU_SOURCE
#include "disk_use.h"
#include "model.h"
#include "model_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "settings_kind.h"
#include "units.h"

/* Tags that identify a row rather than place it on a resource axis. */
static const char *const ident_tags[] = {"run_id", "job", "workload", "host", "status", "mode", "precision", "device"};

static bool is_ident(const char *k)
{
    for (size_t i = 0; i < sizeof ident_tags / sizeof *ident_tags; i++)
        if (strcmp(k, ident_tags[i]) == 0)
            return true;
    return false;
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

static bool same(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

long rep_row_ranks(const rep_row *r)
{
    double v;
    return rep_num(r, "ranks", &v) && v >= 1 && v <= 1e9 ? (long)v : 1; /* rep_rows_validate refused the rest */
}

long rep_row_nodes(const rep_row *r)
{
    double v;
    return rep_num(r, "nodes", &v) && v >= 1 && v <= 1e9 ? (long)v : 1; /* as ranks */
}

void rep_group_ranks_text(const rep_group *g, char *buf, size_t len)
{
    if (g->nodes > 1)
        snprintf(buf, len, "%ld ranks on %ld nodes", g->ranks, g->nodes);
    else
        snprintf(buf, len, "%ld ranks", g->ranks);
}

/* Row r is of g's identity: job, workload, mode, precision, device,
 * ranks and nodes. */
static bool of_identity(const rep_group *g, const rep_row *r)
{
    return g->ranks == rep_row_ranks(r) && g->nodes == rep_row_nodes(r) && same(g->job, or_dash(rep_tag(r, "job"))) &&
           same(g->workload, or_dash(rep_tag(r, "workload"))) && same(g->mode, or_dash(rep_str(r, "mode"))) &&
           same(g->precision, or_dash(rep_str(r, "precision"))) && same(g->device, or_dash(rep_str(r, "device")));
}

/* Both NULL, or both the same text. */
static bool same_or_null(const char *a, const char *b)
{
    return a && b ? same(a, b) : a == b;
}

/* The group of r's identity that ran on host with settings (NULL: not
 * recorded), or -1. */
static long find_group(const rep_model *m, const rep_row *r, const char *host, const char *settings)
{
    for (size_t i = 0; i < m->n; i++)
        if (of_identity(&m->g[i], r) && same_or_null(m->g[i].host, host) && same_or_null(m->g[i].settings, settings))
            return (long)i;
    return -1;
}

void rep_group_tag(const rep_model *m, size_t gi, char *buf, size_t len)
{
    const rep_group *g = &m->g[gi];
    bool same_wl = false, same_job = false;
    for (size_t i = 0; i < m->n; i++) {
        const rep_group *o = &m->g[i];
        if (i == gi || !same(o->workload, g->workload) || !same(o->mode, g->mode))
            continue;
        bool other_count = o->ranks != g->ranks || o->nodes != g->nodes, split = g->split && o->split;
        if ((other_count || split) && same(o->job, g->job) && same(o->precision, g->precision) &&
            same(o->device, g->device))
            continue; /* the same job at another rank or node count, or with other settings: "(N ranks)" and
                       * "[sleep=10ms]" tell them apart */
        same_wl = true;
        same_job = same_job || same(o->job, g->job);
    }
    int n = snprintf(buf, len, "%s%s%s", g->workload, same(g->mode, "-") ? "" : "/", same(g->mode, "-") ? "" : g->mode);
    if (same_wl && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " (job %s)", g->job);
    if (same_job && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " %s %s", g->precision, g->device);
    char rk[64];
    rep_group_ranks_text(g, rk, sizeof rk);
    if (g->ranks > 1 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " (%s)", rk);
    if (g->split && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " [%s]", g->split);
}

long rep_group_axis(const rep_group *g, const char *key)
{
    for (size_t a = 0; a < g->naxes; a++)
        if (same(g->axes[a].key, key))
            return (long)a;
    return -1;
}

bool rep_axis_swept(const rep_group *g, size_t a) { return g->axes[a].n >= 2; }

size_t rep_group_nswept(const rep_group *g)
{
    size_t n = 0;
    for (size_t a = 0; a < g->naxes; a++)
        n += rep_axis_swept(g, a);
    return n;
}

static long axis_val(const rep_axis *ax, const char *v)
{
    for (size_t i = 0; i < ax->n; i++)
        if (same(ax->vals[i], v))
            return (long)i;
    return -1;
}

static int push_str(char ***arr, size_t *n, const char *s)
{
    char **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na)
        return -1;
    *arr = na;
    if (!(na[*n] = strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

/* CPU count of a `cpus` value: N, or a list like 0,2-3; 0 = all (the
 * row's cpus_used says how many that was). */
static double cpus_order(const char *v, const rep_rows *rs, const long *gid, size_t gi, const char *key)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*end && end != v && n > 0)
        return (double)n;
    if (!*end && end != v && n == 0) {
        for (size_t i = 0; i < rs->n; i++) {
            double u;
            const char *t = rep_tag(&rs->v[i], key);
            if (t && same(t, v) && gid[i] == (long)gi && rep_num(&rs->v[i], "cpus_used", &u))
                return u;
        }
        return 1e9; /* all CPUs of an unknown machine: largest */
    }
    double count = 0;
    for (const char *p = v; *p;) {
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return NAN;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                return NAN;
        }
        count += (double)(b - a + 1);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return NAN;
    }
    return count;
}

/* What disk d sustains, in bytes/s, for the reads that the group's rows
 * of storage v did: its bandwidth, or what its IOPS carry in reads of the
 * rows' size where that is less (3000 IOPS of 4 KiB are 12 MB/s, under a
 * 500 MB/s bandwidth); without rows that counted I/Os, in iops_unit I/Os
 * (rep_disk_sustained_bw).  NaN: no limit known (an unthrottled disk). */
static double storage_order(const rep_disk *d, const rep_rows *rs, const long *gid, size_t gi, const char *key,
                            const char *v)
{
    if (!d)
        return NAN;
    double bytes = 0, ios = 0, x;
    bool contiguous = true;
    for (size_t i = 0; i < rs->n; i++) {
        const char *t = rep_tag(&rs->v[i], key);
        if (gid[i] != (long)gi || !t || !same(t, v) || !rep_num(&rs->v[i], "storage_read_bytes", &x) || x <= 0)
            continue;
        double n;
        if (!rep_num(&rs->v[i], "storage_ios", &n) || n <= 0)
            continue;
        bytes += x;
        ios += n;
        contiguous = contiguous && rep_reads_contiguous(&rs->v[i]);
    }
    if (d->iops <= 0 || ios <= 0) {
        double bw = rep_disk_sustained_bw(d);
        return bw > 0 ? bw : NAN;
    }
    double by_ios = d->iops * bytes / rep_charged_ios(d, ios, bytes, contiguous);
    return d->bandwidth > 0 && d->bandwidth < by_ios ? d->bandwidth : by_ios;
}

/* The axis' kind: by its key (cpus, storage), else by the syntax every
 * value shares ("-", a row without the tag, aside): numbers, sizes,
 * durations, else text.  Size and duration suffixes are disjoint (M vs m),
 * and bare numbers are numbers. */
static rep_axis_kind axis_kind(const rep_axis *ax)
{
    if (same(ax->key, "cpus"))
        return REP_AX_CPUS;
    if (same(ax->key, "storage"))
        return REP_AX_STORAGE;
    bool num = true, size = true, dur = true;
    for (size_t i = 0; i < ax->n; i++) {
        const char *v = ax->vals[i];
        char *end, why[160];
        int64_t b;
        if (same(v, "-"))
            continue;
        (void)strtod(v, &end);
        num = num && !*end && end != v;
        size = size && dlg_parse_size(v, &b, why, sizeof why) == 0;
        dur = dur && dlg_parse_duration(v, &b, why, sizeof why) == 0;
    }
    return num ? REP_AX_NUM : size ? REP_AX_SIZE : dur ? REP_AX_DURATION : REP_AX_TEXT;
}

/* Value i's sort key by the axis' kind: count, bytes, bytes/s, ns; NaN =
 * none (text, "-", a disk without a profile). */
static double value_order(const rep_axis *ax, size_t i, const rep_rows *rs, const long *gid, size_t gi,
                          const rep_disks *disks)
{
    const char *v = ax->vals[i];
    char *end, why[160];
    int64_t b;
    if (same(v, "-"))
        return NAN;
    switch (ax->kind) {
    case REP_AX_NUM:
        return strtod(v, &end);
    case REP_AX_CPUS:
        return cpus_order(v, rs, gid, gi, ax->key);
    case REP_AX_SIZE:
        return dlg_parse_size(v, &b, why, sizeof why) == 0 ? (double)b : NAN;
    case REP_AX_DURATION:
        return dlg_parse_duration(v, &b, why, sizeof why) == 0 ? (double)b : NAN;
    case REP_AX_STORAGE:
        return storage_order(rep_disks_find(disks, v), rs, gid, gi, ax->key, v);
    case REP_AX_TEXT:
        break;
    }
    return NAN;
}

static void axis_orders(rep_axis *ax, const rep_rows *rs, const long *gid, size_t gi, const rep_disks *disks)
{
    ax->kind = axis_kind(ax);
    for (size_t i = 0; i < ax->n; i++)
        ax->order[i] = value_order(ax, i, rs, gid, gi, disks);
    /* insertion sort: known orders ascending, unknown last in first-seen order */
    for (size_t i = 1; i < ax->n; i++)
        for (size_t j = i; j > 0; j--) {
            double a = ax->order[j - 1], b = ax->order[j];
            bool swap = !isnan(b) && (isnan(a) || b < a);
            if (!swap)
                break;
            char *t = ax->vals[j - 1];
            ax->vals[j - 1] = ax->vals[j];
            ax->vals[j] = t;
            ax->order[j - 1] = b;
            ax->order[j] = a;
        }
}

/* g's axis of key, added (with no values) where g has none: its index,
 * or -1 out of memory. */
static long axis_of_key(rep_group *g, const char *key)
{
    long a = rep_group_axis(g, key);
    if (a >= 0)
        return a;
    rep_axis *na = realloc(g->axes, (g->naxes + 1) * sizeof *na);
    if (!na)
        return -1;
    g->axes = na;
    memset(&na[g->naxes], 0, sizeof *na);
    if (!(na[g->naxes].key = strdup(key)))
        return -1;
    return (long)g->naxes++;
}

/* Whether failed row r lacks the value of an axis that the workload names
 * as it sets up (backend): a cell that failed before then never sent it.
 * Where the axis has one value, the row sits at it (row_coord), in the
 * cell it belongs to, not at a "-" of its own beside it. */
static bool unknown_on(const rep_row *r, const rep_axis *ax)
{
    return !rep_row_measured(r) && strcmp(or_dash(rep_tag(r, ax->key)), "-") == 0;
}

static int build_axes(rep_model *m, size_t gi, const rep_rows *rs, const long *gid, const rep_disks *disks)
{
    rep_group *g = &m->g[gi];
    for (size_t i = 0; i < rs->n; i++) {
        const rep_row *r = &rs->v[i];
        if (gid[i] != (long)gi)
            continue;
        for (size_t t = 0; t < r->ntags; t++) {
            if (is_ident(r->tags[t].key))
                continue;
            long a = axis_of_key(g, r->tags[t].key);
            if (a < 0)
                return -1;
            if (unknown_on(r, &g->axes[a]))
                continue; /* placed below, once the axis has its values */
            /* an empty tag (JSONL's "a": "") sits at "-", where the
             * cells look for it, as a CSV's empty cell does */
            const char *v = or_dash(r->tags[t].str);
            if (axis_val(&g->axes[a], v) < 0 && push_str(&g->axes[a].vals, &g->axes[a].n, v) != 0)
                return -1;
        }
    }
    /* a row without an axis' tag sits at "-" on it (a failed one at the
     * axis' one value, where it has one) */
    for (size_t i = 0; i < rs->n; i++) {
        if (gid[i] != (long)gi)
            continue;
        for (size_t a = 0; a < g->naxes; a++) {
            const rep_axis *ax = &g->axes[a];
            bool at_dash = unknown_on(&rs->v[i], ax) ? ax->n != 1 : !rep_tag(&rs->v[i], ax->key);
            if (at_dash && axis_val(ax, "-") < 0 &&
                push_str(&g->axes[a].vals, &g->axes[a].n, "-") != 0)
                return -1;
        }
    }
    for (size_t a = 0; a < g->naxes; a++) {
        if (!(g->axes[a].order = calloc(g->axes[a].n, sizeof(double))))
            return -1;
        axis_orders(&g->axes[a], rs, gid, gi, disks);
    }
    return 0;
}

/* The cell at coord, added if new: its index, or -1 (out of memory).  *cap
 * cells are allocated, doubled when full (one realloc per cell copied the
 * grid once per cell). */
static long cell_at(rep_group *g, size_t *cap, const size_t *coord)
{
    long c = rep_group_find(g, coord);
    if (c >= 0)
        return c;
    if (g->ncells == *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        rep_cell *nc = realloc(g->cells, ncap * sizeof *nc);
        if (!nc)
            return -1;
        g->cells = nc;
        *cap = ncap;
    }
    rep_cell *cell = &g->cells[g->ncells];
    memset(cell, 0, sizeof *cell);
    if (!(cell->coord = malloc((g->naxes + 1) * sizeof *coord)))
        return -1;
    memcpy(cell->coord, coord, (g->naxes + 1) * sizeof *coord);
    g->ncells++;
    return rep_group_index_last(g) == 0 ? (long)g->ncells - 1 : -1;
}

/* Row r's place in g: each axis's value index in coord; false where a
 * value is not on its axis. */
static bool row_coord(const rep_group *g, const rep_row *r, size_t *coord)
{
    for (size_t a = 0; a < g->naxes; a++) {
        long v = axis_val(&g->axes[a], or_dash(rep_tag(r, g->axes[a].key)));
        if (v < 0 && unknown_on(r, &g->axes[a]) && g->axes[a].n == 1)
            v = 0; /* build_axes: a failed row at the axis' one value */
        if (v < 0)
            return false;
        coord[a] = (size_t)v;
    }
    return true;
}

static int build_cells(rep_model *m, size_t gi, const rep_rows *rs, const long *gid)
{
    rep_group *g = &m->g[gi];
    size_t *coord = calloc(g->naxes + 1, sizeof *coord);
    long *cell_of = malloc((rs->n + 1) * sizeof *cell_of);
    int rc = coord && cell_of ? 0 : -1;
    size_t cap = 0;
    for (size_t i = 0; i < rs->n && !rc; i++) {
        const rep_row *r = &rs->v[i];
        cell_of[i] = -1;
        if (gid[i] != (long)gi)
            continue;
        long c = row_coord(g, r, coord) ? cell_at(g, &cap, coord) : -1; /* the axes hold every row's values */
        if (c < 0) {
            rc = -1;
            break;
        }
        cell_of[i] = c;
        rep_cell *cell = &g->cells[c];
        cell->nrows++;
        if (!cell->row || rep_row_measured(r) || !rep_row_measured(cell->row))
            cell->row = r; /* the latest ok row speaks for the cell */
        cell->status = rep_tag(cell->row, "status");
    }
    if (!rc)
        rc = rep_group_pool_cells(g, rs, cell_of);
    free(coord);
    free(cell_of);
    return rc;
}

/* Some group of row r's identity sweeps key (rep_swept_fn). */
typedef struct sweep_ctx {
    const rep_model *m;
    const rep_row *r;
} sweep_ctx;

static bool identity_sweeps(const void *ctx, const char *key)
{
    const sweep_ctx *c = ctx;
    for (size_t i = 0; i < c->m->n; i++)
        if (of_identity(&c->m->g[i], c->r) && rep_group_axis(&c->m->g[i], key) >= 0)
            return true;
    return false;
}

/* Row r's group: that of its identity, host and settings; a row that
 * recorded none joins the only group of its identity (rep_model_build
 * put it there), else the group of those that recorded none. */
static long group_of_row(const rep_model *m, const rep_row *r)
{
    sweep_ctx ctx = {m, r};
    char *settings;
    if (rep_row_settings(r, m->kinds, identity_sweeps, &ctx, &settings) != 0)
        return -1;
    bool recorded = settings != NULL;
    long g = find_group(m, r, recorded ? or_dash(rep_tag(r, "host")) : NULL, settings);
    free(settings);
    if (g < 0 && !recorded) {
        size_t n = 0;
        for (size_t i = 0; i < m->n; i++)
            if (of_identity(&m->g[i], r) && ++n)
                g = (long)i;
        g = n == 1 ? g : -1;
    }
    return g;
}

/* Row r's cell: its group in *gi and the cell's index, or -1 (coord:
 * scratch of the most axes a group has). */
long rep_model_cell_of_row(const rep_model *m, const rep_row *r, size_t *gi, size_t *coord)
{
    long g = group_of_row(m, r);
    if (g < 0)
        return -1;
    if (!row_coord(&m->g[g], r, coord))
        return -1;
    *gi = (size_t)g;
    return rep_group_find(&m->g[g], coord);
}

static bool fed_an_accelerator(const rep_row *r)
{
    const char *be = rep_str(r, "backend"), *gpu = rep_str(r, "gpu_name");
    double au;
    return (be && *be) || (gpu && *gpu) || rep_num(r, "au", &au);
}

static int build_group(rep_model *m, size_t gi, const rep_rows *rs, const long *gid, const rep_disks *disks)
{
    rep_group *g = &m->g[gi];
    if (build_axes(m, gi, rs, gid, disks) != 0 || build_cells(m, gi, rs, gid) != 0)
        return -1;
    /* classified first: the best and the knees leave cache-bound cells out */
    for (size_t c = 0; c < g->ncells; c++)
        rep_cell_classify(&g->cells[c], g, disks);
    rep_group_pick_best(g);
    for (size_t c = 0; c < g->ncells; c++) {
        const rep_cell *cell = &g->cells[c];
        g->per_gpu = g->per_gpu || fed_an_accelerator(cell->row);
        double factor;
        g->collective = g->collective || rep_num(cell->row, "busbw_factor", &factor);
        const char *u = rep_str(cell->row, "unit");
        if (!g->unit && u && (g->unit = strdup(u)) == NULL)
            return -1;
    }
    if (!(g->knees = calloc(g->naxes + 1, sizeof *g->knees)))
        return -1;
    size_t *coord = calloc(g->naxes + 1, sizeof *coord);
    if (!coord)
        return -1;
    for (size_t a = 0; a < g->naxes && g->has_best; a++)
        rep_group_find_knee(g, a, m->target, coord);
    free(coord);
    return 0;
}

static int add_group(rep_model *m, const rep_row *r)
{
    rep_group *ng = realloc(m->g, (m->n + 1) * sizeof *ng);
    if (!ng)
        return -1;
    m->g = ng;
    rep_group *g = &ng[m->n];
    memset(g, 0, sizeof *g);
    m->n++;
    g->workload = strdup(or_dash(rep_tag(r, "workload")));
    g->mode = strdup(or_dash(rep_str(r, "mode")));
    g->precision = strdup(or_dash(rep_str(r, "precision")));
    g->device = strdup(or_dash(rep_str(r, "device")));
    g->job = strdup(or_dash(rep_tag(r, "job")));
    g->ranks = rep_row_ranks(r);
    g->nodes = rep_row_nodes(r);
    return g->workload && g->mode && g->precision && g->device && g->job ? 0 : -1;
}

static bool group_sweeps(const void *ctx, const char *key)
{
    return rep_group_axis(ctx, key) >= 0;
}

/* Each row's identity in bid (groups of base, with the keys each sweeps
 * as axes of no values), its settings in set and its host in host (NULL
 * where it recorded no settings).  0, or -1 out of memory. */
static int identities(rep_model *base, const rep_rows *rs, const rep_kinds *kinds, long *bid, char **set,
                      const char **host)
{
    for (size_t i = 0; i < rs->n; i++) {
        const rep_row *r = &rs->v[i];
        if ((bid[i] = find_group(base, r, NULL, NULL)) < 0 && add_group(base, r) != 0)
            return -1;
        if (bid[i] < 0)
            bid[i] = (long)base->n - 1;
        for (size_t t = 0; t < r->ntags; t++)
            if (!is_ident(r->tags[t].key) && axis_of_key(&base->g[bid[i]], r->tags[t].key) < 0)
                return -1;
    }
    for (size_t i = 0; i < rs->n; i++) {
        if (rep_row_settings(&rs->v[i], kinds, group_sweeps, &base->g[bid[i]], &set[i]) != 0)
            return -1;
        host[i] = set[i] ? or_dash(rep_tag(&rs->v[i], "host")) : NULL;
    }
    return 0;
}

/* Each row's group in gid: its identity, host and settings. */
static int assign_groups(rep_model *m, const rep_rows *rs, long *gid)
{
    rep_model base = {0};
    long *bid = malloc((rs->n + 1) * sizeof *bid);
    char **set = calloc(rs->n + 1, sizeof *set);
    const char **host = calloc(rs->n + 1, sizeof *host);
    int rc = bid && set && host ? 0 : -1;
    if (!rc)
        rc = identities(&base, rs, m->kinds, bid, set, host);
    if (!rc)
        rc = rep_adopt_settings(base.n, rs, bid, set, host);
    for (size_t i = 0; i < rs->n && !rc; i++) {
        if ((gid[i] = find_group(m, &rs->v[i], host[i], set[i])) >= 0)
            continue;
        rc = add_group(m, &rs->v[i]);
        rep_group *g = rc ? NULL : &m->g[m->n - 1];
        if (g && set[i] && (!(g->host = strdup(host[i])) || !(g->settings = strdup(set[i]))))
            rc = -1;
        gid[i] = (long)m->n - 1;
    }
    for (size_t i = 0; set && i < rs->n; i++)
        free(set[i]);
    free(set);
    free(host);
    free(bid);
    rep_model_free(&base);
    return rc;
}

int rep_model_build(rep_model *m, const rep_rows *rs, const rep_disks *disks, double target, char *err,
                    size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->target = target;
    long *gid = malloc((rs->n + 1) * sizeof *gid); /* each row's group, looked up once */
    if (!gid || rep_kinds_build(rs, &m->kinds) != 0 || assign_groups(m, rs, gid) != 0)
        goto oom;
    for (size_t gi = 0; gi < m->n; gi++)
        if (build_group(m, gi, rs, gid, disks) != 0)
            goto oom;
    if (rep_model_label_splits(m) != 0 || rep_model_warn_revisions(m, rs, gid) != 0 ||
        rep_model_warn_unenforced(m, rs, gid) != 0)
        goto oom;
    free(gid);
    return 0;
oom:
    free(gid);
    snprintf(err, errlen, "out of memory building the model");
    return -DLG_ENOMEM;
}

void rep_model_free(rep_model *m)
{
    for (size_t gi = 0; gi < m->n; gi++) {
        rep_group *g = &m->g[gi];
        for (size_t a = 0; a < g->naxes; a++) {
            for (size_t v = 0; v < g->axes[a].n; v++)
                free(g->axes[a].vals[v]);
            free(g->axes[a].vals);
            free(g->axes[a].order);
            free(g->axes[a].key);
        }
        for (size_t c = 0; c < g->ncells; c++)
            free(g->cells[c].coord);
        free(g->axes);
        free(g->cells);
        free(g->index);
        free(g->knees);
        free(g->workload);
        free(g->mode);
        free(g->job);
        free(g->precision);
        free(g->device);
        free(g->unit);
        free(g->host);
        free(g->settings);
        free(g->split);
    }
    for (size_t i = 0; i < m->nwarnings; i++)
        free(m->warnings[i]);
    free(m->warnings);
    free(m->g);
    rep_kinds_free(m->kinds);
    memset(m, 0, sizeof *m);
}
