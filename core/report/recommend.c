/* The recommendation.  Per GPU of an instance, its vCPUs, memory and best
 * attachable disk must reach every knee of every selected group.  Its
 * expected throughput is the best measured cell within the instance's own
 * resources (other axes at their best) times its GPU count: data-parallel
 * scaling, an upper bound, unless the same runs were measured at several
 * ranks (scaling.c): then times the efficiency measured.  A host
 * workload (no GPU fed, rep_group.per_gpu false) takes the whole instance
 * and is not multiplied: its GPUs do not run it.  Storage: the knee's
 * disk profile (when swept), and the I/O the credited cell measured, per
 * copy on a disk, all copies under the instance's block-storage caps; the
 * one disk to attach, and its size, in reco_volume.c. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dlgauge/plugin.h>

#include "disk_use.h"
#include "model_rank.h"
#include "reco_fit.h"
#include "reco_volume.h"
#include "reco_storage.h"
#include "recommend.h"
#include "report.h"
#include "scaling.h"
#include "units.h"

static bool is_memory(const rep_axis *ax)
{
    return ax->kind == REP_AX_SIZE && strcmp(ax->key, "memory") == 0;
}

/* How many copies of a group's cell an instance runs: one per GPU, or one
 * for a host workload. */
static double copies(const rep_group *g, const rep_instance *in)
{
    return g->per_gpu && in->gpus > 0 ? in->gpus : 1;
}

static bool supplies(const rep_group *g, const rep_instance *in, const rep_axis *ax, size_t v,
                     const rep_disks *disks)
{
    double ncopies = copies(g, in);
    if (ax->kind == REP_AX_CPUS)
        return !isnan(ax->order[v]) && in->vcpus / ncopies + 1e-9 >= ax->order[v];
    if (is_memory(ax))
        return !isnan(ax->order[v]) && in->memory / ncopies + 0.5 >= ax->order[v];
    if (ax->kind == REP_AX_STORAGE)
        return rep_storage_fit(in, ax, v, disks) == REP_DISK_REACHES;
    return true; /* batch, precision...: not a property of the machine */
}

bool rep_axis_sizes_instance(const rep_axis *ax)
{
    return ax->kind == REP_AX_CPUS || is_memory(ax) || ax->kind == REP_AX_STORAGE;
}

/* Axis a of g sizes the instance: a resource, with a knee.  Where the
 * best ran without a's limit (memory_enforced = false), the axis' values
 * are no measurement of what it needed: sized as if not swept. */
static bool sizes(const rep_group *g, size_t a)
{
    return rep_axis_sizes_instance(&g->axes[a]) && !g->knees[a].unenforced;
}

/* The best ok cell the instance can run: each resource value one it
 * supplies (more vCPUs, memory or a faster disk can always run a smaller
 * configuration, so a slower larger cell does not count against it), the
 * other axes at the best cell's values.  -1 if none was measured. */
static long best_supplied(const rep_group *g, const rep_instance *in, const rep_disks *disks)
{
    const rep_cell *best = &g->cells[g->best];
    long pick = -1;
    for (size_t c = 0; c < g->ncells; c++) {
        const rep_cell *cell = &g->cells[c];
        bool ok = cell->ok && rep_cell_ranked(g, cell); /* a cache figure sizes no memory */
        for (size_t a = 0; a < g->naxes && ok; a++) {
            const rep_axis *ax = &g->axes[a];
            ok = sizes(g, a) ? supplies(g, in, ax, cell->coord[a], disks) : cell->coord[a] == best->coord[a];
        }
        if (ok && (pick < 0 || cell->thr > g->cells[pick].thr))
            pick = (long)c;
    }
    return pick;
}

static bool has_axis(const rep_group *g, bool (*is)(const rep_axis *))
{
    for (size_t a = 0; a < g->naxes; a++)
        if (is(&g->axes[a]))
            return true;
    return false;
}

/* g has a memory knee that sizes the instance (swept, and enforced). */
static bool memory_sized(const rep_group *g)
{
    for (size_t a = 0; a < g->naxes; a++)
        if (is_memory(&g->axes[a]) && sizes(g, a))
            return true;
    return false;
}

static bool is_storage(const rep_axis *ax)
{
    return ax->kind == REP_AX_STORAGE;
}

static bool is_cpus(const rep_axis *ax)
{
    return ax->kind == REP_AX_CPUS;
}

/* Resources the sweep did not vary: the cell ran with cpus_used CPUs and
 * peaked at rss_peak_bytes.  Fewer vCPUs were never measured (marked as an
 * extrapolation); less memory than the process held cannot run it. */
static void check_unswept(rep_fit *f, const rep_group *g, const rep_cell *cell, const rep_instance *in,
                          double ncopies, const char *tag)
{
    double used, rss;
    if (!has_axis(g, is_cpus) && rep_num(cell->row, "cpus_used", &used) && in->vcpus / ncopies + 1e-9 < used)
        f->extrapolated = true;
    if (!memory_sized(g) && f->meets && rep_num(cell->row, "rss_peak_bytes", &rss) &&
        in->memory / ncopies + 0.5 < rss) {
        f->meets = false;
        snprintf(f->why, sizeof f->why, "%s needs memory >= %.3g GiB%s (its peak RSS; memory %s)", tag,
                 rss / 1073741824.0, g->per_gpu ? " per GPU" : "",
                 has_axis(g, is_memory) ? "not enforced" : "not swept");
    }
}

/* A group that fed a GPU needs one with the memory its cell held
 * (gpu_mem_peak_bytes, NVML's in use) where the catalog gives it. */
static void check_gpu_memory(rep_fit *f, const rep_group *g, const rep_cell *cell, const rep_instance *in,
                             const char *tag)
{
    double peak;
    if (!f->meets || !g->per_gpu || !(in->gpu_memory > 0) || !rep_num(cell->row, "gpu_mem_peak_bytes", &peak) ||
        peak <= in->gpu_memory)
        return;
    const char *gpu = rep_str(cell->row, "gpu_name");
    f->meets = false;
    snprintf(f->why, sizeof f->why, "%s needs GPU memory >= %.3g GB (gpu_mem_peak_bytes%s%s), its GPU has %.3g GB",
             tag, peak / 1e9, gpu ? " on " : "", gpu ? gpu : "", in->gpu_memory / 1e9);
}

/* The factor on cell c's rate x GPUs: the efficiency measured on one
 * node at the most ranks up to the instance's GPUs, else 1 (the upper
 * bound, marked where the runs were measured at other rank counts, or
 * across nodes, only). */
static double measured_scaling(rep_fit *f, const rep_model *m, size_t gi, size_t c, const rep_instance *in)
{
    if (!m->g[gi].per_gpu || in->gpus < 2 || !rep_group_scaled(m, gi))
        return 1;
    rep_scaling s = rep_scaling_for(m, gi, c, in->gpus);
    f->scale_ranks = s.n;
    f->scale_eff = s.eff;
    f->scale_upper = s.n == 0;
    long span = s.n ? -1 : rep_scaling_other_nodes(m, gi, in->gpus);
    f->span_ranks = span >= 0 ? m->g[span].ranks : 0;
    f->span_nodes = span >= 0 ? m->g[span].nodes : 0;
    return s.n ? s.eff : 1;
}

/* "memory=1G oom, memory=2G error": the group's failed cells, the first
 * few, for a reason that must fit one table cell. */
static void failed_cells_text(const rep_group *g, char *buf, size_t len)
{
    size_t n = 0, named = 0;
    buf[0] = '\0';
    for (size_t c = 0; c < g->ncells && n < len; c++) {
        char label[96], st[64];
        if (named == 3) {
            snprintf(buf + n, len - n, ", ...");
            break;
        }
        rep_cell_label(g, &g->cells[c], label, sizeof label);
        rep_cell_failures_text(&g->cells[c], st, sizeof st);
        n += (size_t)snprintf(buf + n, len - n, "%s%s %s", named++ ? ", " : "", label, st);
    }
}

/* The cell at the most the instance supplies on each resource axis (the
 * other axes at the best cell's values): its coordinates into coord, its
 * index, or -1 where that combination was not measured. */
static long corner_cell(const rep_group *g, const rep_instance *in, const rep_disks *disks, size_t *coord)
{
    const rep_cell *best = &g->cells[g->best];
    for (size_t a = 0; a < g->naxes; a++) {
        const rep_axis *ax = &g->axes[a];
        coord[a] = best->coord[a];
        for (size_t v = 0; sizes(g, a) && v < ax->n; v++)
            if (supplies(g, in, ax, v, disks))
                coord[a] = v; /* values ascend: the last supplied is the most */
    }
    return rep_group_find(g, coord);
}

/* "cpus=1 memory=2G" of the coordinates coord. */
static void coord_label(const rep_group *g, const size_t *coord, char *buf, size_t len)
{
    rep_cell c = {.coord = (size_t *)coord};
    rep_cell_label(g, &c, buf, len);
}

/* Every knee is met, each on its slice through the best cell, but the
 * instance's own combination of them need not be: where that corner was
 * measured and the best cell the instance runs falls short of target x
 * best (or the corner failed), it does not meet.  Where the corner was
 * not measured, the figure is an estimate, and est_at names the corner.
 * Whether the credited cell c (-1: none) stands. */
static bool check_corner(rep_fit *f, const rep_model *m, const rep_group *g, const rep_instance *in,
                         const rep_disks *disks, long c, const char *tag)
{
    size_t coord[64];
    if (!f->meets || g->naxes > sizeof coord / sizeof *coord)
        return true;
    double want = m->target * g->cells[g->best].thr;
    if (c >= 0 && g->cells[c].thr >= want)
        return true;
    long k = corner_cell(g, in, disks, coord);
    char at[96], rate[48];
    coord_label(g, coord, at, sizeof at);
    if (k < 0) {
        snprintf(f->est_at, sizeof f->est_at, "%s", at);
        return false;
    }
    const rep_cell *corner = &g->cells[k];
    f->meets = false;
    if (!corner->ok) {
        rep_cell_failures_text(corner, rate, sizeof rate);
        snprintf(f->why, sizeof f->why, "%s failed (%s) at %s, the most the instance supplies (each knee alone is "
                 "met)", tag, rate, at);
        return true;
    }
    dlg_format_rate(corner->thr, g->unit, rate, sizeof rate);
    snprintf(f->why, sizeof f->why, "%s measured %s at %s, the most the instance supplies: %.0f%% of the best, "
             "below the %.0f%% target (each knee alone is met)", tag, rate, at,
             100 * corner->thr / g->cells[g->best].thr, 100 * m->target);
    return true;
}

static void fit_group(rep_fit *f, const rep_model *m, size_t gi, const rep_instance *in, const rep_disks *disks)
{
    const rep_group *g = &m->g[gi];
    double ncopies = copies(g, in);
    char tag[96];
    rep_group_tag(m, gi, tag, sizeof tag);
    f->meets = true;
    f->energy_item = NAN;
    f->energy_cpu = false;
    f->thr = NAN;
    f->cost = INFINITY;
    f->scale_eff = NAN;
    if (!g->has_best) { /* no knee, no figure: no instance can be said to run it */
        char failed[160];
        failed_cells_text(g, failed, sizeof failed);
        f->meets = false;
        snprintf(f->why, sizeof f->why, "%s: no cell ran ok (%s), nothing to judge an instance by", tag, failed);
        return;
    }
    if (g->per_gpu && in->gpus == 0) { /* the group fed a GPU: an instance without one cannot run it */
        f->meets = false;
        snprintf(f->why, sizeof f->why, "%s needs a GPU, the instance has none", tag);
        return;
    }
    for (size_t a = 0; a < g->naxes && f->meets; a++) {
        const rep_axis *ax = &g->axes[a];
        size_t kv = g->knees[a].val;
        if (ax->kind == REP_AX_STORAGE)
            f->cap_unknown = rep_cap_matters(in, ax, kv, disks);
        if (!sizes(g, a) || supplies(g, in, ax, kv, disks))
            continue;
        f->meets = false;
        size_t n = (size_t)snprintf(f->why, sizeof f->why, "%s needs %s %s%s%s", tag, ax->key,
                                    ax->kind == REP_AX_STORAGE ? "like " : ">= ", ax->vals[kv],
                                    ax->kind != REP_AX_STORAGE && g->per_gpu ? " per GPU" : "");
        if (ax->kind == REP_AX_STORAGE && n < sizeof f->why && rep_storage_fit(in, ax, kv, disks) == REP_DISK_CAPPED)
            rep_cap_reason(in, rep_disks_find(disks, ax->vals[kv]), f->why + n, sizeof f->why - n);
    }
    long c = best_supplied(g, in, disks);
    if (!check_corner(f, m, g, in, disks, c, tag))
        c = -1; /* below the target, the corner unmeasured: the knees' estimate */
    const rep_cell *credited = &g->cells[c >= 0 ? (size_t)c : g->best];
    check_unswept(f, g, credited, in, ncopies, tag);
    check_gpu_memory(f, g, credited, in, tag);
    rep_check_io(f, credited, in, ncopies, has_axis(g, is_storage), disks, tag);
    rep_io_rate io;
    if (!(f->asks_disk = has_axis(g, is_storage)) && credited->ok) {
        rep_cell_io(credited, &io);
        f->asks_disk = rep_io_measured(&io);
    }
    if (c >= 0) {
        f->thr = g->cells[c].thr * ncopies * measured_scaling(f, m, gi, (size_t)c, in);
        f->energy_item = g->cells[c].energy_item;
        f->energy_cpu = g->cells[c].energy_cpu;
    } else if (f->meets) {
        /* every knee is met, but no measured cell has all of them at once:
         * the weakest knee is the estimate (each is >= target x best) */
        const rep_cell *best = &g->cells[g->best];
        double lo = best->thr;
        for (size_t a = 0; a < g->naxes; a++)
            if (sizes(g, a) && g->cells[g->knees[a].cell].thr < lo)
                lo = g->cells[g->knees[a].cell].thr;
        f->thr = lo * ncopies * measured_scaling(f, m, gi, g->best, in);
        f->estimated = true;
    } /* else: less than any cell measured; a knee's figure would flatter it, so none */
}

/* Selected, at 1 rank, and work rather than a link's rate: a group the
 * recommendation answers for, whether or not a cell of it ran ok. */
static bool group_judged(const rep_model *m, const bool *selected, size_t gi)
{
    return (!selected || selected[gi]) && m->g[gi].ranks == 1 && !m->g[gi].collective;
}

bool rep_group_counted(const rep_model *m, const bool *selected, size_t gi)
{
    return group_judged(m, selected, gi) && m->g[gi].has_best;
}

bool rep_group_unmeasured(const rep_model *m, const bool *selected, size_t gi)
{
    return group_judged(m, selected, gi) && !m->g[gi].has_best;
}

bool rep_unit_is_bytes(const char *unit)
{
    return unit && strcmp(unit, "bytes") == 0;
}

double rep_cost_quantum(const char *unit)
{
    return rep_unit_is_bytes(unit) ? 1e12 : 1e6;
}

const char *rep_cost_label(const char *unit, bool abbrev, char *buf, size_t len)
{
    if (rep_unit_is_bytes(unit))
        snprintf(buf, len, "TB");
    else
        snprintf(buf, len, "%s %s", abbrev ? "M" : "million", unit && *unit ? unit : "items");
    return buf;
}

static const char *unit_of(const rep_group *g)
{
    return g->unit && *g->unit ? g->unit : "items";
}

/* The counted groups' one unit, or NULL when they count several. */
static const char *common_unit(const rep_model *m, const bool *selected)
{
    const char *u = NULL;
    for (size_t gi = 0; gi < m->n; gi++) {
        if (!rep_group_counted(m, selected, gi))
            continue;
        if (u && strcmp(u, unit_of(&m->g[gi])) != 0)
            return NULL;
        u = unit_of(&m->g[gi]);
    }
    return u ? u : "items";
}

/* Several units, no weights: per group, each instance's cost relative to the lowest
 * any instance offers; the score is their geometric mean, which ranks the
 * same whichever instance the costs are relative to. */
static void relative_scores(rep_reco *out, const rep_model *m, const bool *selected)
{
    size_t k = 0;
    for (size_t i = 0; i < out->n; i++)
        out->v[i].score = 0;
    for (size_t gi = 0; gi < m->n; gi++) {
        if (!rep_group_counted(m, selected, gi))
            continue;
        double lo = INFINITY;
        for (size_t i = 0; i < out->n; i++)
            lo = fmin(lo, out->v[i].fits[gi].cost);
        if (!isfinite(lo))
            continue; /* no instance has a figure for it: it ranks none */
        k++;
        for (size_t i = 0; i < out->n; i++)
            out->v[i].score += log(out->v[i].fits[gi].cost / lo);
    }
    for (size_t i = 0; i < out->n; i++)
        out->v[i].score = k ? exp(out->v[i].score / (double)k) : 1;
}

/* Costs within this share of each other tie: a 0.003% edge from a disk's
 * price spread over more GPUs, or from rounding, is no reason to rent
 * eight GPUs whose figure is one GPU's times eight. */
#define REP_TIE 0.005

static int cmp_choice(const void *pa, const void *pb)
{
    const rep_choice *a = pa, *b = pb;
    if (a->meets != b->meets)
        return a->meets ? -1 : 1;
    if (a->meets && a->score != b->score)
        return a->score < b->score ? -1 : 1;
    if (rep_choice_hourly(a) != rep_choice_hourly(b))
        return rep_choice_hourly(a) < rep_choice_hourly(b) ? -1 : 1;
    return strcmp(a->inst->name, b->inst->name);
}

/* Within a tie: a figure measured as it stands before one estimated,
 * extrapolated or multiplied by GPUs; then fewer GPUs, the lower hourly
 * price, the lower cost. */
static int cmp_tied(const void *pa, const void *pb)
{
    const rep_choice *a = pa, *b = pb;
    if (a->assumed != b->assumed)
        return a->assumed ? 1 : -1;
    if (a->inst->gpus != b->inst->gpus)
        return a->inst->gpus < b->inst->gpus ? -1 : 1;
    if (rep_choice_hourly(a) != rep_choice_hourly(b))
        return rep_choice_hourly(a) < rep_choice_hourly(b) ? -1 : 1;
    return cmp_choice(a, b);
}

/* The meeting choices, sorted by cost, reordered within each run of those
 * that cost at most REP_TIE more than its first (a run, not pairs: a
 * tolerance is no order, and qsort needs one). */
static void settle_ties(rep_reco *out)
{
    for (size_t i = 0, j; i < out->nmeet; i = j) {
        double lim = out->v[i].score * (1 + REP_TIE);
        for (j = i + 1; j < out->nmeet && isfinite(lim) && out->v[j].score <= lim; j++)
            ;
        qsort(out->v + i, j - i, sizeof *out->v, cmp_tied);
    }
}

static bool is_series(const char *w, size_t n)
{
    static const char *const skip[] = {"nvidia", "tesla", "geforce", "quadro", "amd", "instinct", "radeon"};
    for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
        if (strlen(skip[i]) == n && strncasecmp(w, skip[i], n) == 0)
            return true;
    return n >= 2 && strncasecmp(w + n - 2, "GB", 2) == 0 && w[0] >= '0' && w[0] <= '9'; /* a size */
}

void rep_gpu_model(const char *name, char *buf, size_t len)
{
    buf[0] = '\0';
    for (const char *p = name ? name : ""; *p;) {
        size_t n = strcspn(p, " -_/()");
        if (n && !is_series(p, n)) {
            snprintf(buf, len, "%.*s", (int)n, p);
            return;
        }
        p += n + (p[n] != '\0');
    }
}

bool rep_gpu_same(const char *catalog_gpu, const char *measured)
{
    char a[64], b[64];
    rep_gpu_model(catalog_gpu, a, sizeof a);
    rep_gpu_model(measured, b, sizeof b);
    return a[0] && strcasecmp(a, b) == 0;
}

/* The gpu_name the first counted group that fed a GPU ran its best cell
 * on; NULL where none says. */
static const char *measured_gpu(const rep_model *m, const bool *selected)
{
    for (size_t gi = 0; gi < m->n; gi++) {
        const rep_group *g = &m->g[gi];
        const char *name = rep_group_counted(m, selected, gi) && g->per_gpu ? rep_str(g->cells[g->best].row, "gpu_name")
                                                                           : NULL;
        if (name && *name)
            return name;
    }
    return NULL;
}

/* Some counted group's figure on the choice is not measured as it
 * stands: estimated, extrapolated, one GPU's cell times the GPUs with no
 * scaling measured, or measured on another GPU model. */
static bool assumed(const rep_choice *ch, const rep_model *m, const bool *selected)
{
    for (size_t gi = 0; gi < m->n; gi++) {
        const rep_fit *f = &ch->fits[gi];
        if (rep_group_counted(m, selected, gi) &&
            (f->estimated || f->extrapolated || rep_fit_upper_bound(f, &m->g[gi], ch->inst)))
            return true;
    }
    return ch->other_gpu;
}

bool rep_fit_upper_bound(const rep_fit *f, const rep_group *g, const rep_instance *in)
{
    return g->per_gpu && in->gpus > 1 && f->scale_ranks == 0 && !isnan(f->thr);
}

/* Every counted group's fit on instance in, and every unmeasured one's
 * (it does not meet: a group that never ran ok must not drop out of the
 * verdict unsaid); the others meet, with no figure.  Whether it meets
 * every knee. */
bool rep_fit_all(rep_fit *fits, const rep_model *m, const bool *selected, const rep_instance *in,
                 const rep_disks *disks)
{
    bool meets = true;
    memset(fits, 0, m->n * sizeof *fits);
    for (size_t gi = 0; gi < m->n; gi++) {
        if (!rep_group_counted(m, selected, gi) && !rep_group_unmeasured(m, selected, gi)) {
            fits[gi].meets = true;
            continue;
        }
        fit_group(&fits[gi], m, gi, in, disks);
        meets = meets && fits[gi].meets;
    }
    return meets;
}

/* Each counted group's cost at hour (a price an hour) per its quantum. */
void rep_cost_fits(rep_fit *fits, const rep_model *m, const bool *selected, double hour)
{
    for (size_t gi = 0; gi < m->n; gi++)
        if (rep_group_counted(m, selected, gi) && fits[gi].thr > 0)
            fits[gi].cost = hour / (fits[gi].thr * 3600.0) * rep_cost_quantum(m->g[gi].unit);
}

/* What ranks one instance's fits against its other disks' (lower is
 * cheaper): the weighted or plain sum of the costs, or with several units
 * their product (as a log), which orders as the relative score does. */
double rep_fits_key(const rep_fit *fits, const rep_model *m, const bool *selected, const double *weights,
                    bool one_unit)
{
    double k = 0;
    for (size_t gi = 0; gi < m->n; gi++)
        if (rep_group_counted(m, selected, gi))
            k += weights ? weights[gi] * fits[gi].cost : one_unit ? fits[gi].cost : log(fits[gi].cost);
    return k;
}

/* The choice's score from its fits' costs. */
static void score_choice(rep_choice *ch, const rep_model *m, const bool *selected, const double *weights)
{
    ch->score = 0;
    for (size_t gi = 0; gi < m->n; gi++)
        if (rep_group_counted(m, selected, gi))
            ch->score += (weights ? weights[gi] : 1) * ch->fits[gi].cost;
}

/* --gpu that no instance's GPU matches is a typo, not a verdict on the
 * instances: say so, with the GPUs there are. */
static bool gpu_known(const rep_catalog *cat, const char *gpu_filter, char *err, size_t errlen)
{
    for (size_t i = 0; i < cat->n; i++)
        if (strcasestr(cat->v[i].gpu, gpu_filter))
            return true;
    size_t n = (size_t)snprintf(err, errlen, "--gpu %s: no instance in the catalog has such a GPU; its GPUs:",
                                gpu_filter);
    for (size_t i = 0; i < cat->n && n < errlen; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(cat->v[j].gpu, cat->v[i].gpu) == 0;
        if (!seen)
            n += (size_t)snprintf(err + n, errlen - n, "%s %s", n && err[n - 1] != ':' ? "," : "",
                                  cat->v[i].gpu[0] ? cat->v[i].gpu : "(none)");
    }
    return false;
}

int rep_recommend(rep_reco *out, const rep_model *m, const bool *selected, const double *weights,
                  const rep_catalog *cat, const rep_disks *disks, const char *gpu_filter, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (gpu_filter && !gpu_known(cat, gpu_filter, err, errlen))
        return -DLG_EINVAL;
    out->weighted = weights != NULL;
    out->ngroups = m->n;
    rep_volumes z;
    if (rep_volumes_init(&z, m, selected, disks) != 0 || !(out->v = calloc(cat->n + 1, sizeof *out->v)))
        goto oom;
    out->data_unknown = !(z.data > 0);
    out->measured_gpu = measured_gpu(m, selected);
    for (size_t i = 0; i < cat->n; i++) {
        const rep_instance *in = &cat->v[i];
        if (gpu_filter && !strcasestr(in->gpu, gpu_filter))
            continue;
        if (out->currency && strcmp(out->currency, in->currency) != 0) {
            snprintf(err, errlen, "the catalogs price in %s and %s (%s): compare one currency at a time",
                     out->currency, in->currency, in->catalog);
            rep_volumes_free(&z);
            rep_reco_free(out);
            return -DLG_EINVAL;
        }
        out->currency = in->currency;
        rep_choice *ch = &out->v[out->n++];
        ch->inst = in;
        ch->disk_hour = NAN;
        if (!(ch->fits = calloc(m->n + 1, sizeof *ch->fits)))
            goto oom;
        /* with all its disks: the verdict where none alone meets */
        ch->meets = rep_fit_all(ch->fits, m, selected, in, disks);
        rep_cost_fits(ch->fits, m, selected, in->price);
        rep_choose_disk(ch, &z, weights, common_unit(m, selected) != NULL);
        score_choice(ch, m, selected, weights);
        ch->other_gpu = out->measured_gpu && in->gpus > 0 && !rep_gpu_same(in->gpu, out->measured_gpu);
        ch->assumed = assumed(ch, m, selected);
        out->nmeet += ch->meets;
    }
    rep_volumes_free(&z);
    /* weights in each group's own quanta make the sum a price, in any units */
    if (!(out->unit = common_unit(m, selected)) && !weights)
        relative_scores(out, m, selected);
    qsort(out->v, out->n, sizeof *out->v, cmp_choice);
    settle_ties(out);
    return 0;
oom:
    rep_volumes_free(&z);
    rep_reco_free(out);
    snprintf(err, errlen, "out of memory in the recommendation");
    return -DLG_ENOMEM;
}

/* Appends "<head>a, b<tail>" naming the meeting instances that flag() holds
 * for some group's fit; returns the new length. */
static size_t name_meeting(const rep_reco *r, bool (*flag)(const rep_fit *), const char *head, const char *one,
                           const char *several, char *buf, size_t len, size_t n)
{
    size_t named = 0;
    for (size_t i = 0; i < r->n && n < len; i++) {
        bool unknown = false;
        for (size_t gi = 0; r->v[i].meets && gi < r->ngroups && !unknown; gi++)
            unknown = flag(&r->v[i].fits[gi]);
        if (unknown)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", named++ ? ", " : head, r->v[i].inst->name);
    }
    if (named && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s", named > 1 ? several : one);
    return n;
}

static bool cap_unknown(const rep_fit *f)
{
    return f->cap_unknown;
}

static bool io_unknown(const rep_fit *f)
{
    return f->io_unknown;
}

void rep_reco_caps_note(const rep_reco *r, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t n = name_meeting(r, cap_unknown, "note: no block-storage cap known for ",
                            " (catalog keys disk_bandwidth_max, disk_iops_max): its disks are judged at the disk "
                            "profiles' own limits, which the instance may not reach",
                            " (catalog keys disk_bandwidth_max, disk_iops_max): their disks are judged at the disk "
                            "profiles' own limits, which the instance may not reach",
                            buf, len, 0);
    name_meeting(r, io_unknown,
                 n ? "; the I/O measured with storage not swept is not judged on "
                   : "note: the I/O measured with storage not swept is not judged on ",
                 ": it lists no disk with a profile (catalog key disks, conf/disks)",
                 ": they list no disk with a profile (catalog key disks, conf/disks)", buf, len, n);
    n = strlen(buf);
    bool sized = false;
    for (size_t i = 0; i < r->nmeet && !sized; i++)
        sized = r->v[i].disk_bytes > 0;
    if (sized && r->data_unknown && n < len)
        snprintf(buf + n, len - n, "%svolumes are sized without the data the work read, which no row says "
                 "(storage_files_bytes, in results since 2026-12-04): as small as the catalog's disks come, or as "
                 "the knees need", n ? "; " : "note: ");
}

void rep_reco_free(rep_reco *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].fits);
    free(r->v);
    memset(r, 0, sizeof *r);
}
