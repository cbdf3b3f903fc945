/* Builds the model: rows -> groups -> axes -> cells (repetitions pooled)
 * -> best cell and knees; each cell is then classified (bottleneck.c). */
#define _GNU_SOURCE
#include "model.h"
#include "model_rank.h"
#include "model_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "stats.h"
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

static long find_group(const rep_model *m, const rep_row *r)
{
    for (size_t i = 0; i < m->n; i++) {
        const rep_group *g = &m->g[i];
        if (same(g->job, or_dash(rep_tag(r, "job"))) && same(g->workload, or_dash(rep_tag(r, "workload"))) &&
            same(g->mode, or_dash(rep_str(r, "mode"))) &&
            same(g->precision, or_dash(rep_str(r, "precision"))) && same(g->device, or_dash(rep_str(r, "device"))))
            return (long)i;
    }
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
        same_wl = true;
        same_job = same_job || same(o->job, g->job);
    }
    int n = snprintf(buf, len, "%s%s%s", g->workload, same(g->mode, "-") ? "" : "/", same(g->mode, "-") ? "" : g->mode);
    if (same_wl && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " (job %s)", g->job);
    if (same_job && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " %s %s", g->precision, g->device);
}

long rep_group_axis(const rep_group *g, const char *key)
{
    for (size_t a = 0; a < g->naxes; a++)
        if (same(g->axes[a].key, key))
            return (long)a;
    return -1;
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
    case REP_AX_STORAGE: {
        const rep_disk *d = rep_disks_find(disks, v);
        return d && d->bandwidth > 0 ? d->bandwidth : NAN;
    }
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
            long a = rep_group_axis(g, r->tags[t].key);
            if (a < 0) {
                rep_axis *na = realloc(g->axes, (g->naxes + 1) * sizeof *na);
                if (!na)
                    return -1;
                g->axes = na;
                memset(&na[g->naxes], 0, sizeof *na);
                if (!(na[g->naxes].key = strdup(r->tags[t].key)))
                    return -1;
                a = (long)g->naxes++;
            }
            /* an empty tag (JSONL's "a": "") sits at "-", where the
             * cells look for it, as a CSV's empty cell does */
            const char *v = or_dash(r->tags[t].str);
            if (axis_val(&g->axes[a], v) < 0 && push_str(&g->axes[a].vals, &g->axes[a].n, v) != 0)
                return -1;
        }
    }
    /* a row without an axis' tag sits at "-" on it */
    for (size_t i = 0; i < rs->n; i++) {
        if (gid[i] != (long)gi)
            continue;
        for (size_t a = 0; a < g->naxes; a++)
            if (!rep_tag(&rs->v[i], g->axes[a].key) && axis_val(&g->axes[a], "-") < 0 &&
                push_str(&g->axes[a].vals, &g->axes[a].n, "-") != 0)
                return -1;
    }
    for (size_t a = 0; a < g->naxes; a++) {
        if (!(g->axes[a].order = calloc(g->axes[a].n, sizeof(double))))
            return -1;
        axis_orders(&g->axes[a], rs, gid, gi, disks);
    }
    return 0;
}

/* Both sinks of one run (CSV and JSONL) hold the same measurement: count it once. */
static bool same_measurement(const rep_row *a, const rep_row *b)
{
    const char *k[] = {"run_id", "job", "start_time"};
    for (size_t i = 0; i < 3; i++) {
        const char *x = rep_str(a, k[i]), *y = rep_str(b, k[i]);
        if (!x || !y || !same(x, y))
            return false;
    }
    return true;
}

/* Row k of a cell's rows repeats an earlier row of it of the same kind,
 * ok or failed (the same run appended twice, or read from both of its
 * sinks). */
static bool repeated(const rep_rows *rs, const size_t *rows, size_t k)
{
    bool ok = rep_row_measured(&rs->v[rows[k]]);
    for (size_t j = 0; j < k; j++)
        if (rep_row_measured(&rs->v[rows[j]]) == ok && same_measurement(&rs->v[rows[j]], &rs->v[rows[k]]))
            return true;
    return false;
}

/* Adds status st to the cell's distinct failed statuses. */
static void add_failed_status(rep_cell *c, const char *st)
{
    const size_t cap = sizeof c->failed_status / sizeof *c->failed_status;
    st = st ? st : "?";
    for (size_t i = 0; i < c->nfailed_status; i++)
        if (strcmp(c->failed_status[i], st) == 0)
            return;
    if (c->nfailed_status < cap)
        c->failed_status[c->nfailed_status++] = st;
    else
        c->failed_status_more = true;
}

/* The cell's failed rows, each measurement once, and their statuses:
 * merged runs where a cell failed in one and ran in another would
 * otherwise show only the good figures. */
static void count_failed(rep_cell *c, const rep_rows *rs, const size_t *rows, size_t nrows)
{
    c->nfailed = 0;
    c->nfailed_status = 0;
    c->failed_status_more = false;
    for (size_t k = 0; k < nrows; k++)
        if (!rep_row_measured(&rs->v[rows[k]]) && !repeated(rs, rows, k)) {
            c->nfailed++;
            add_failed_status(c, rep_tag(&rs->v[rows[k]], "status"));
        }
}

/* A row's energy and items (energy from per_key, J/item, when only that
 * was written); NaN where not measured.  key: energy_j (the GPU's) or
 * cpu_energy_j (the CPU packages'). */
static void row_energy(const rep_row *r, const char *key, const char *per_key, double *ej, double *items)
{
    double per = NAN;
    if (!rep_num(r, "items", items))
        *items = NAN;
    if (!rep_num(r, key, ej) && rep_num(r, per_key, &per))
        *ej = per * *items;
}

/* Energy and items summed over a cell's rows, for its pooled J/item. */
typedef struct energy_sum {
    double j, items;
} energy_sum;

static void energy_add(energy_sum *e, const rep_row *r, const char *key, const char *per_key)
{
    double ej = NAN, items = NAN;
    row_energy(r, key, per_key, &ej, &items);
    if (ej > 0 && items > 0) {
        e->j += ej;
        e->items += items;
    }
}

/* The GPU's J/item where measured, else the CPU packages' (RAPL): a cell
 * on a GPU is judged by the GPU's energy, as before; a CPU-only one by the
 * packages it ran on (whole packages: energy_cpu marks it). */
static void cell_energy(rep_cell *c, const energy_sum *gpu, const energy_sum *cpu)
{
    c->energy_cpu = !(gpu->items > 0) && cpu->items > 0;
    const energy_sum *e = c->energy_cpu ? cpu : gpu;
    c->energy_item = e->items > 0 ? e->j / e->items : NAN;
}

/* Pools the repetitions of every row of a cell: weighted mean, pooled
 * variance (within and between rows), Student-t half-width; J/item as
 * all their energy over all their items.  One row keeps its own figures
 * exactly. */
static void pool_cell(rep_cell *c, const rep_rows *rs, const size_t *rows, size_t nrows)
{
    double n_sum = 0, mean = 0, ss = 0;
    energy_sum egpu = {0, 0}, ecpu = {0, 0};
    size_t nok = 0;
    const rep_row *only = NULL;
    c->energy_item = NAN;
    c->energy_cpu = false;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < nrows; k++) {
            const rep_row *r = &rs->v[rows[k]];
            if (!rep_row_measured(r) || repeated(rs, rows, k))
                continue;
            double t = 0, sd = 0, n = 1;
            rep_num(r, "throughput", &t);
            rep_num(r, "throughput_stddev", &sd);
            rep_num(r, "repeats", &n);
            if (n < 1)
                n = 1;
            if (pass == 0) {
                n_sum += n;
                mean += n * t;
                nok++;
                only = r;
                energy_add(&egpu, r, "energy_j", "energy_per_item_j");
                energy_add(&ecpu, r, "cpu_energy_j", "cpu_energy_per_item_j");
            } else {
                ss += (n - 1) * sd * sd + n * (t - mean) * (t - mean);
            }
        }
        if (pass == 0 && nok)
            mean /= n_sum;
    }
    if (nok == 0)
        return;
    c->ok = true;
    c->status = rep_tag(only, "status");
    c->repeats = n_sum;
    c->thr = mean;
    cell_energy(c, &egpu, &ecpu);
    if (nok == 1) {
        rep_num(only, "throughput_ci95", &c->ci);
        rep_num(only, "throughput_stddev", &c->sd);
        return;
    }
    c->sd = n_sum > 1 ? sqrt(ss / (n_sum - 1)) : 0;
    c->ci = n_sum > 1 ? dlg_t_quantile_975((size_t)n_sum - 1) * c->sd / sqrt(n_sum) : 0;
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

/* Rows bucketed by cell, each cell's in file order: cell c's are
 * rows[start[c]] .. rows[start[c + 1] - 1].  One pass over the rows (a
 * counting sort): scanning every row per cell made a large grid
 * quadratic. */
typedef struct row_buckets {
    size_t *rows, *start;
} row_buckets;

static void buckets_free(row_buckets *b)
{
    free(b->rows);
    free(b->start);
}

/* Buckets the n rows by cell_of (row i's cell in [0, ncells), or -1: none
 * of these cells').  0, or -1 out of memory (b then empty). */
static int bucket_rows(row_buckets *b, const long *cell_of, size_t n, size_t ncells)
{
    size_t *fill = calloc(ncells + 1, sizeof *fill);
    b->start = calloc(ncells + 1, sizeof *b->start);
    b->rows = malloc((n + 1) * sizeof *b->rows);
    if (!fill || !b->start || !b->rows) {
        free(fill);
        buckets_free(b);
        *b = (row_buckets){0};
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (cell_of[i] >= 0)
            b->start[cell_of[i] + 1]++;
    for (size_t c = 0; c < ncells; c++)
        fill[c + 1] = b->start[c + 1] += b->start[c];
    for (size_t i = 0; i < n; i++)
        if (cell_of[i] >= 0)
            b->rows[fill[cell_of[i]]++] = i;
    free(fill);
    return 0;
}

/* Pools each cell over its own rows (cell_of: row i's cell, -1 = another
 * group's row). */
static int pool_cells(rep_group *g, const rep_rows *rs, const long *cell_of)
{
    row_buckets b;
    if (bucket_rows(&b, cell_of, rs->n, g->ncells) != 0)
        return -1;
    for (size_t c = 0; c < g->ncells; c++) {
        pool_cell(&g->cells[c], rs, b.rows + b.start[c], b.start[c + 1] - b.start[c]);
        count_failed(&g->cells[c], rs, b.rows + b.start[c], b.start[c + 1] - b.start[c]);
    }
    buckets_free(&b);
    return 0;
}

/* Row r's place in g: each axis's value index in coord; false where a
 * value is not on its axis. */
static bool row_coord(const rep_group *g, const rep_row *r, size_t *coord)
{
    for (size_t a = 0; a < g->naxes; a++) {
        long v = axis_val(&g->axes[a], or_dash(rep_tag(r, g->axes[a].key)));
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
        rc = pool_cells(g, rs, cell_of);
    free(coord);
    free(cell_of);
    return rc;
}

/* The cell at the best cell's coordinates but value v on axis a, or -1.
 * coord is scratch of naxes entries (never the best cell's own: moving
 * those would make it match every probe). */
static long slice_cell(const rep_group *g, size_t a, size_t v, size_t *coord)
{
    memcpy(coord, g->cells[g->best].coord, g->naxes * sizeof *coord);
    coord[a] = v;
    return rep_group_find(g, coord);
}

/* Whether cell c is ranked against the best: a cache-bound STREAM cell
 * measured the cache, not the memory its group sizes, so it is no best nor
 * knee beside memory-bound cells; among cache-bound cells only (no array
 * left the cache) they rank each other. */
bool rep_cell_ranked(const rep_group *g, const rep_cell *c)
{
    return c->ok && (c->bn != REP_BN_CACHE || !g->has_best || g->cells[g->best].bn == REP_BN_CACHE);
}

/* Knee of axis a: on the slice through the best cell, the smallest value
 * reaching target x best. */
static void find_knee(rep_group *g, size_t a, double target, size_t *coord)
{
    rep_knee *k = &g->knees[a];
    const rep_cell *best = &g->cells[g->best];
    k->unordered = true;
    k->val = best->coord[a];
    k->cell = g->best;
    k->ratio = 1;
    k->below = -1;
    k->below_clear = true;
    for (size_t v = 0; v < g->axes[a].n; v++) {
        k->npoints += slice_cell(g, a, v, coord) >= 0;
        k->unordered &= isnan(g->axes[a].order[v]) != 0;
    }
    /* "smallest value" means nothing without an order (unknown disks sort
     * last: unlimited), nor on a duration: the shortest sleep or step
     * reaching the target is no resource to buy */
    k->unordered |= g->axes[a].kind == REP_AX_DURATION;
    if (k->unordered)
        return;
    long prev = -1;
    for (size_t v = 0; v < g->axes[a].n; v++) {
        long c = slice_cell(g, a, v, coord);
        if (c < 0)
            continue;
        const rep_cell *cell = &g->cells[c];
        if (cell->ok && !rep_cell_ranked(g, cell))
            continue; /* neither the knee nor the value below it */
        if (cell->ok && cell->thr >= target * best->thr) {
            k->val = v;
            k->cell = (size_t)c;
            k->ratio = best->thr > 0 ? cell->thr / best->thr : 1;
            k->significant = best->thr - cell->thr > sqrt(best->ci * best->ci + cell->ci * cell->ci);
            if (prev >= 0) { /* one repetition has no CI: nothing shows it clear */
                const rep_cell *pc = &g->cells[prev];
                k->below = prev;
                k->below_clear = !pc->ok || (pc->repeats >= 2 && target * best->thr - pc->thr > pc->ci);
            }
            break;
        }
        prev = c;
    }
}

/* The best cell: the fastest ok one that is not cache-bound, else (every
 * ok cell is) the fastest cache-bound one. */
static void pick_best(rep_group *g)
{
    for (size_t c = 0; c < g->ncells; c++) {
        const rep_cell *cell = &g->cells[c], *best = g->has_best ? &g->cells[g->best] : NULL;
        if (!cell->ok)
            continue;
        bool cached = cell->bn == REP_BN_CACHE;
        bool better = !best || (cached == (best->bn == REP_BN_CACHE) ? cell->thr > best->thr
                                                                     : best->bn == REP_BN_CACHE);
        if (better) {
            g->best = c;
            g->has_best = true;
        }
    }
}

size_t rep_group_unranked(const rep_group *g)
{
    size_t n = 0;
    for (size_t c = 0; g->has_best && c < g->ncells; c++)
        n += g->cells[c].ok && !rep_cell_ranked(g, &g->cells[c]);
    return n;
}

bool rep_knee_below_unranked(const rep_group *g, size_t a)
{
    if (!g->has_best || a >= g->naxes)
        return false;
    size_t *coord = malloc((g->naxes + 1) * sizeof *coord);
    bool found = false;
    for (size_t v = 0; coord && v < g->knees[a].val && !found; v++) {
        long c = slice_cell(g, a, v, coord);
        found = c >= 0 && g->cells[c].ok && !rep_cell_ranked(g, &g->cells[c]);
    }
    free(coord);
    return found;
}

void rep_group_rank_note(const rep_group *g, char *buf, size_t len)
{
    size_t left = rep_group_unranked(g), ok = 0;
    buf[0] = 0;
    for (size_t c = 0; c < g->ncells; c++)
        ok += g->cells[c].ok;
    if (left)
        snprintf(buf, len,
                 "cache-bound: %zu of %zu measured cells kept their arrays in the last-level cache and measured "
                 "the cache, not memory: left out of the best and the knees",
                 left, ok);
    else if (g->has_best && g->cells[g->best].bn == REP_BN_CACHE)
        snprintf(buf, len,
                 "cache-bound: every measured cell kept its arrays in the last-level cache: the best and the knees "
                 "are the cache's bandwidth, not memory's (arrays of 4x the cache or more measure memory)");
}

/* Row r's cell: its group in *gi and the cell's index, or -1 (coord:
 * scratch of the most axes a group has). */
static long cell_of_row(const rep_model *m, const rep_row *r, size_t *gi, size_t *coord)
{
    long g = find_group(m, r);
    if (g < 0)
        return -1;
    if (!row_coord(&m->g[g], r, coord))
        return -1;
    *gi = (size_t)g;
    return rep_group_find(&m->g[g], coord);
}

/* Field over a cell's rows (indices into rs), each measurement once: the
 * steps-weighted mean, or the largest (how, model_rows.h); NaN where none
 * has it. */
static double cell_field_pool(const rep_rows *rs, const size_t *rows, size_t nrows, const char *field,
                              rep_pool how)
{
    double sum = 0, wsum = 0, top = -INFINITY, v, w;
    for (size_t k = 0; k < nrows; k++) {
        const rep_row *r = &rs->v[rows[k]];
        if (!rep_row_measured(r) || repeated(rs, rows, k) || !rep_num(r, field, &v) || !isfinite(v))
            continue;
        if (!rep_num(r, "steps", &w) || !(w > 0))
            w = 1;
        sum += w * v;
        wsum += w;
        top = v > top ? v : top;
    }
    if (!(wsum > 0))
        return NAN;
    return how == REP_POOL_MAX ? top : sum / wsum;
}

void rep_model_cell_field_free(const rep_model *m, double **v)
{
    for (size_t gi = 0; v && gi < m->n; gi++)
        free(v[gi]);
    free(v);
}

int rep_model_cell_field(const rep_model *m, const rep_rows *rs, const char *field, rep_pool how, double ***out)
{
    size_t *first = calloc(m->n + 1, sizeof *first), ncells = 0, naxes = 0; /* each group's first global cell */
    double **v = calloc(m->n + 1, sizeof *v);
    int rc = first && v ? 0 : -1;
    for (size_t gi = 0; gi < m->n && !rc; gi++) {
        first[gi] = ncells;
        ncells += m->g[gi].ncells;
        naxes = m->g[gi].naxes > naxes ? m->g[gi].naxes : naxes;
        rc = (v[gi] = malloc((m->g[gi].ncells + 1) * sizeof **v)) ? 0 : -1;
    }
    size_t *coord = malloc((naxes + 1) * sizeof *coord);
    long *cell = malloc((rs->n + 1) * sizeof *cell); /* each row's global cell */
    rc = rc || !coord || !cell ? -1 : 0;
    for (size_t i = 0; i < rs->n && !rc; i++) {
        size_t gi = 0;
        long c = cell_of_row(m, &rs->v[i], &gi, coord);
        cell[i] = c < 0 ? -1 : (long)(first[gi] + (size_t)c);
    }
    row_buckets b = {0};
    rc = rc || bucket_rows(&b, cell, rs->n, ncells) != 0 ? -1 : 0;
    for (size_t gi = 0; gi < m->n && !rc; gi++)
        for (size_t c = 0; c < m->g[gi].ncells; c++) {
            size_t gc = first[gi] + c;
            v[gi][c] = cell_field_pool(rs, b.rows + b.start[gc], b.start[gc + 1] - b.start[gc], field, how);
        }
    buckets_free(&b);
    free(first);
    free(coord);
    free(cell);
    if (rc)
        rep_model_cell_field_free(m, v);
    *out = rc ? NULL : v;
    return rc;
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
    pick_best(g);
    for (size_t c = 0; c < g->ncells; c++) {
        const rep_cell *cell = &g->cells[c];
        g->per_gpu = g->per_gpu || fed_an_accelerator(cell->row);
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
        find_knee(g, a, m->target, coord);
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
    return g->workload && g->mode && g->precision && g->device && g->job ? 0 : -1;
}

int rep_model_build(rep_model *m, const rep_rows *rs, const rep_disks *disks, double target, char *err,
                    size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->target = target;
    long *gid = malloc((rs->n + 1) * sizeof *gid); /* each row's group, looked up once */
    if (!gid)
        goto oom;
    for (size_t i = 0; i < rs->n; i++) {
        if ((gid[i] = find_group(m, &rs->v[i])) < 0 && add_group(m, &rs->v[i]) != 0)
            goto oom;
        if (gid[i] < 0)
            gid[i] = (long)m->n - 1;
    }
    for (size_t gi = 0; gi < m->n; gi++)
        if (build_group(m, gi, rs, gid, disks) != 0)
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
    }
    free(m->g);
    memset(m, 0, sizeof *m);
}
