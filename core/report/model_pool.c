/* A cell's figures pooled from its rows: repetitions and runs, each
 * measurement once (both sinks of a run hold it), into one throughput
 * with its interval, energy per item and the failed runs' statuses; and
 * fields the model does not pool, for dlgauge compare (model_rows.h). */
#include "model.h"
#include "model_build.h"
#include "model_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* What names one measurement: both sinks of one run (CSV and JSONL) hold
 * the same, and a run appended twice repeats it.  k: the row's place
 * among its cell's rows. */
typedef struct meas_key {
    const char *run_id, *job, *start_time;
    bool ok; /* an ok row and a failed one of one run are not repeats */
    size_t k;
} meas_key;

static int key_cmp(const meas_key *x, const meas_key *y)
{
    int d = (int)x->ok - (int)y->ok;
    if (!d)
        d = strcmp(x->run_id, y->run_id);
    if (!d)
        d = strcmp(x->job, y->job);
    return d ? d : strcmp(x->start_time, y->start_time);
}

static int key_then_place(const void *a, const void *b)
{
    const meas_key *x = a, *y = b;
    int d = key_cmp(x, y);
    return d ? d : (x->k > y->k) - (x->k < y->k);
}

/* dup[k]: the cell's row k repeats an earlier row of it of the same kind
 * (ok or failed), as run_id, job and start_time say (a row without one
 * of them repeats nothing).  One sort by that key (keys: scratch of nrows
 * entries): scanning the earlier rows for each row made a cell of many
 * runs quadratic (100k rows in 5 cells took minutes). */
static void mark_repeats(const rep_rows *rs, const size_t *rows, size_t nrows, meas_key *keys, bool *dup)
{
    size_t m = 0;
    for (size_t k = 0; k < nrows; k++) {
        const rep_row *r = &rs->v[rows[k]];
        meas_key e = {rep_str(r, "run_id"), rep_str(r, "job"), rep_str(r, "start_time"), rep_row_measured(r), k};
        dup[k] = false;
        if (e.run_id && e.job && e.start_time)
            keys[m++] = e;
    }
    qsort(keys, m, sizeof *keys, key_then_place);
    for (size_t i = 1; i < m; i++)
        dup[keys[i].k] = key_cmp(&keys[i - 1], &keys[i]) == 0;
}

/* Scratch for mark_repeats over cells of up to n rows. */
typedef struct repeats_scratch {
    meas_key *keys;
    bool *dup;
} repeats_scratch;

static int scratch_alloc(repeats_scratch *s, size_t n)
{
    s->keys = malloc((n + 1) * sizeof *s->keys);
    s->dup = malloc((n + 1) * sizeof *s->dup);
    return s->keys && s->dup ? 0 : -1;
}

static void scratch_free(repeats_scratch *s)
{
    free(s->keys);
    free(s->dup);
}

/* Adds status st to the cell's distinct failed statuses, counted. */
static void add_failed_status(rep_cell *c, const char *st)
{
    const size_t cap = sizeof c->failed_status / sizeof *c->failed_status;
    st = st ? st : "?";
    for (size_t i = 0; i < c->nfailed_status; i++)
        if (strcmp(c->failed_status[i], st) == 0) {
            c->failed_count[i]++;
            return;
        }
    if (c->nfailed_status < cap) {
        c->failed_count[c->nfailed_status] = 1;
        c->failed_status[c->nfailed_status++] = st;
    } else
        c->failed_status_more = true;
}

void rep_cell_failures_text(const rep_cell *c, char *buf, size_t len)
{
    bool counted = c->nfailed > 1; /* one failed row: its status alone, as it always read */
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->nfailed_status && n < len; i++) {
        int k = counted ? snprintf(buf + n, len - n, "%s%s x%zu", i ? ", " : "", c->failed_status[i], c->failed_count[i])
                        : snprintf(buf + n, len - n, "%s%s", i ? ", " : "", c->failed_status[i]);
        n += k > 0 ? (size_t)k : 0;
    }
    if (n < len && c->failed_status_more)
        snprintf(buf + n, len - n, ", ...");
    if (!buf[0] && len) /* no failed row (every one a repeat): the cell's own status */
        snprintf(buf, len, "%s", c->status ? c->status : "?");
}

/* The cell's failed rows, each measurement once, and their statuses:
 * merged runs where a cell failed in one and ran in another would
 * otherwise show only the good figures. */
static void count_failed(rep_cell *c, const rep_rows *rs, const size_t *rows, size_t nrows, const bool *dup)
{
    c->nfailed = 0;
    c->nfailed_status = 0;
    c->failed_status_more = false;
    c->failed_error = NULL;
    for (size_t k = 0; k < nrows; k++)
        if (!rep_row_measured(&rs->v[rows[k]]) && !dup[k]) {
            const char *e = rep_str(&rs->v[rows[k]], "error");
            c->nfailed++;
            add_failed_status(c, rep_tag(&rs->v[rows[k]], "status"));
            if (!c->failed_error && e && *e)
                c->failed_error = e;
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

/* A row's standard deviation over its n repetitions: its own, else from
 * its CI95 (half-width = t(n-1) x sd / sqrt n; a row may carry only the
 * CI), else 0.  A row without one pooled as 0 hid its spread from the
 * cell's interval and from compare's test. */
static double row_sd(const rep_row *r, double n)
{
    double sd, ci;
    if (rep_num(r, "throughput_stddev", &sd))
        return sd;
    if (n >= 2 && rep_num(r, "throughput_ci95", &ci) && ci > 0)
        return ci * sqrt(n) / dlg_t_quantile_975(n < 1e9 ? (size_t)n - 1 : (size_t)1e9); /* t is z long before */
    return 0;
}

/* Pools the repetitions of every row of a cell: weighted mean, pooled
 * variance (within and between rows), Student-t half-width; J/item as
 * all their energy over all their items.  One row keeps its own figures
 * exactly; partial rows count only in a cell with no complete one. */
/* Whether the cell has a whole measurement (status ok): its partial rows
 * (a repetition cut short, repeats 0, which --resume measures again) are
 * then no repeats of it. */
static bool has_complete(const rep_rows *rs, const size_t *rows, size_t nrows, const bool *dup)
{
    for (size_t k = 0; k < nrows; k++) {
        const char *st = rep_tag(&rs->v[rows[k]], "status");
        if (!dup[k] && st && strcmp(st, "ok") == 0)
            return true;
    }
    return false;
}

static bool is_partial(const rep_row *r)
{
    const char *st = rep_tag(r, "status");
    return st && strcmp(st, "partial") == 0;
}

static void pool_cell(rep_cell *c, const rep_rows *rs, const size_t *rows, size_t nrows, const bool *dup)
{
    bool skip_partial = has_complete(rs, rows, nrows, dup);
    double n_sum = 0, mean = 0, ss = 0;
    energy_sum egpu = {0, 0}, ecpu = {0, 0};
    size_t nok = 0;
    const rep_row *only = NULL;
    c->energy_item = NAN;
    c->energy_cpu = false;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < nrows; k++) {
            const rep_row *r = &rs->v[rows[k]];
            if (!rep_row_measured(r) || dup[k] || (skip_partial && is_partial(r)))
                continue;
            double t = 0, n = 1;
            rep_num(r, "throughput", &t);
            rep_num(r, "repeats", &n);
            if (n < 1)
                n = 1;
            if (pass == 0) {
                n_sum += n;
                mean += n * t;
                nok++;
                only = r;
                c->unenforced |= rep_row_unenforced(r);
                energy_add(&egpu, r, "energy_j", "energy_per_item_j");
                energy_add(&ecpu, r, "cpu_energy_j", "cpu_energy_per_item_j");
            } else {
                double sd = row_sd(r, n);
                ss += (n - 1) * sd * sd + n * (t - mean) * (t - mean);
            }
        }
        if (pass == 0 && nok)
            mean /= n_sum;
    }
    c->nok = nok;
    if (nok == 0)
        return;
    c->ok = true;
    c->partial = !skip_partial;
    c->status = rep_tag(only, "status");
    c->repeats = n_sum;
    c->thr = mean;
    cell_energy(c, &egpu, &ecpu);
    if (nok == 1) {
        rep_num(only, "throughput_ci95", &c->ci);
        c->sd = row_sd(only, n_sum);
        return;
    }
    c->sd = n_sum > 1 ? sqrt(ss / (n_sum - 1)) : 0;
    c->ci = n_sum > 1 ? dlg_t_quantile_975((size_t)n_sum - 1) * c->sd / sqrt(n_sum) : 0;
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
int rep_group_pool_cells(rep_group *g, const rep_rows *rs, const long *cell_of)
{
    row_buckets b;
    if (bucket_rows(&b, cell_of, rs->n, g->ncells) != 0)
        return -1;
    repeats_scratch s;
    int rc = scratch_alloc(&s, b.start[g->ncells]);
    for (size_t c = 0; c < g->ncells && !rc; c++) {
        const size_t *rows = b.rows + b.start[c], n = b.start[c + 1] - b.start[c];
        mark_repeats(rs, rows, n, s.keys, s.dup);
        pool_cell(&g->cells[c], rs, rows, n, s.dup);
        g->cells[c].unenforced &= rep_group_limit_bits(g); /* a limit no axis names moves no cell */
        count_failed(&g->cells[c], rs, rows, n, s.dup);
    }
    scratch_free(&s);
    buckets_free(&b);
    return rc;
}

/* Field over a cell's rows (indices into rs), each measurement once: the
 * steps-weighted mean, or the largest (how, model_rows.h); NaN where none
 * has it. */
static double cell_field_pool(const rep_rows *rs, const size_t *rows, size_t nrows, const bool *dup,
                              const char *field, rep_pool how)
{
    double sum = 0, wsum = 0, top = -INFINITY, v, w;
    for (size_t k = 0; k < nrows; k++) {
        const rep_row *r = &rs->v[rows[k]];
        if (!rep_row_measured(r) || dup[k] || !rep_num(r, field, &v) || !isfinite(v))
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
        long c = rep_model_cell_of_row(m, &rs->v[i], &gi, coord);
        cell[i] = c < 0 ? -1 : (long)(first[gi] + (size_t)c);
    }
    row_buckets b = {0};
    repeats_scratch s = {0};
    rc = rc || bucket_rows(&b, cell, rs->n, ncells) != 0 || scratch_alloc(&s, rs->n) != 0 ? -1 : 0;
    for (size_t gi = 0; gi < m->n && !rc; gi++)
        for (size_t c = 0; c < m->g[gi].ncells; c++) {
            size_t gc = first[gi] + c, n = b.start[gc + 1] - b.start[gc];
            mark_repeats(rs, b.rows + b.start[gc], n, s.keys, s.dup);
            v[gi][c] = cell_field_pool(rs, b.rows + b.start[gc], n, s.dup, field, how);
        }
    scratch_free(&s);
    buckets_free(&b);
    free(first);
    free(coord);
    free(cell);
    if (rc)
        rep_model_cell_field_free(m, v);
    *out = rc ? NULL : v;
    return rc;
}
