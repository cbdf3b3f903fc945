/* The recommendation.  Per GPU of an instance, its vCPUs, memory and best
 * attachable disk must reach every knee of every selected group.  Its
 * expected throughput is the best measured cell within the instance's own
 * resources (other axes at their best) times its GPU count: data-parallel
 * scaling, an upper bound, unless the same runs were measured at several
 * ranks (scaling.c): then times the efficiency measured.  A host
 * workload (no GPU fed, rep_group.per_gpu false) takes the whole instance
 * and is not multiplied: its GPUs do not run it.  Storage: the knee's
 * disk profile (when swept), and the I/O the credited cell measured, per
 * copy on a disk, all copies under the instance's block-storage caps. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "disk_use.h"
#include "model_rank.h"
#include "recommend.h"
#include "scaling.h"
#include "units.h"

static bool is_memory(const rep_axis *ax)
{
    return ax->kind == REP_AX_SIZE && strcmp(ax->key, "memory") == 0;
}

/* A limit (0: unknown or none) bounded by a cap (0: none known). */
static double capped(double limit, double cap)
{
    return cap > 0 && (limit <= 0 || cap < limit) ? cap : limit;
}

/* Has at least need, where both are known (0: unknown or unlimited). */
static bool reaches(double have, double need)
{
    return need <= 0 || have <= 0 || have >= need;
}

/* How disk i of the instance stands against the profile want of a storage
 * value: its own profile is that value or at least as fast (bandwidth, and
 * IOPS where both are known), and still is once the instance's
 * block-storage caps bound it (instance-store disks have none). */
typedef enum { DISK_SHORT, DISK_CAPPED, DISK_REACHES } disk_fit;

static disk_fit disk_against(const rep_instance *in, size_t i, const char *value, const rep_disk *want,
                             const rep_disks *disks)
{
    const rep_disk *d = rep_disks_find(disks, in->disks[i]);
    bool own = strcmp(in->disks[i], value) == 0 ||
               (want && d && want->bandwidth > 0 && d->bandwidth >= want->bandwidth && reaches(d->iops, want->iops));
    if (!own)
        return DISK_SHORT;
    if (!want || !d || in->local[i]) /* no profile: nothing to hold a cap against */
        return DISK_REACHES;
    return reaches(capped(d->bandwidth, in->disk_bw_max), want->bandwidth) &&
                   reaches(capped(d->iops, in->disk_iops_max), want->iops)
               ? DISK_REACHES
               : DISK_CAPPED;
}

/* Can the instance supply storage value v of the axis?  The best of its
 * disks. */
static disk_fit has_storage(const rep_instance *in, const rep_axis *ax, size_t v, const rep_disks *disks)
{
    const rep_disk *want = rep_disks_find(disks, ax->vals[v]);
    disk_fit best = DISK_SHORT;
    for (size_t i = 0; i < in->ndisks && best != DISK_REACHES; i++) {
        disk_fit f = disk_against(in, i, ax->vals[v], want, disks);
        best = f > best ? f : best;
    }
    return best;
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
        return has_storage(in, ax, v, disks) == DISK_REACHES;
    return true; /* batch, precision...: not a property of the machine */
}

static bool is_resource(const rep_axis *ax)
{
    return ax->kind == REP_AX_CPUS || is_memory(ax) || ax->kind == REP_AX_STORAGE;
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
            ok = is_resource(ax) ? supplies(g, in, ax, cell->coord[a], disks) : cell->coord[a] == best->coord[a];
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
    if (!has_axis(g, is_memory) && f->meets && rep_num(cell->row, "rss_peak_bytes", &rss) &&
        in->memory / ncopies + 0.5 < rss) {
        f->meets = false;
        snprintf(f->why, sizeof f->why, "%s needs memory >= %.3g GiB%s (its peak RSS; memory not swept)", tag,
                 rss / 1073741824.0, g->per_gpu ? " per GPU" : "");
    }
}

static bool is_storage(const rep_axis *ax)
{
    return ax->kind == REP_AX_STORAGE;
}

/* How disk i of the instance carries n copies of a cell's I/O: each copy
 * on a disk of its own (the profile's limits, per copy), network disks all
 * behind the instance's caps (the total of the n copies). */
typedef struct io_carry {
    disk_fit fit;      /* DISK_CAPPED: the caps bind */
    bool unknown;      /* no profile, or a network disk with no cap known */
    rep_limit_use use; /* of the binding limit: the profile's, or the caps' when capped */
    bool by_iops;
    size_t disk;
} io_carry;

#define OVER(u) ((u).share > 1 + 1e-9)

static io_carry carry(const rep_instance *in, size_t i, const rep_io_rate *io, double n, const rep_disks *disks)
{
    io_carry c = {.fit = DISK_REACHES, .use = {NAN, false, false}, .disk = i};
    const rep_disk *d = rep_disks_find(disks, in->disks[i]);
    if (!d)
        return (c.unknown = true, c);
    c.use = rep_io_use_disk(io, d, &c.by_iops);
    if (OVER(c.use))
        return (c.fit = DISK_SHORT, c);
    if (in->local[i])
        return c;
    if (in->disk_bw_max <= 0 && in->disk_iops_max <= 0)
        return (c.unknown = true, c);
    rep_limit_use cap = rep_io_use(io, n, in->disk_bw_max, in->disk_iops_max, d, &c.by_iops);
    if (OVER(cap))
        c.fit = DISK_CAPPED;
    c.use = cap;
    return c;
}

/* The instance's disk that carries the I/O best: one that does, else one
 * that may (unknown), else the one nearest to it. */
static io_carry best_carry(const rep_instance *in, const rep_io_rate *io, double n, const rep_disks *disks)
{
    io_carry best = {.fit = DISK_SHORT, .unknown = in->ndisks == 0, .use = {INFINITY, false, false}};
    for (size_t i = 0; i < in->ndisks; i++) {
        io_carry c = carry(in, i, io, n, disks);
        bool known_ok = c.fit == DISK_REACHES && !c.unknown;
        if (known_ok || (c.unknown && !best.unknown) ||
            (!best.unknown && !c.unknown && c.use.share < best.use.share))
            best = c;
        if (known_ok)
            break;
    }
    return best;
}

/* "reads 300.0 MB/s and writes 50.0 MB/s" for n copies, in bytes or, by
 * IOPS, in I/Os as disk d counts them. */
static size_t io_text(char *buf, size_t len, const rep_io_rate *io, double n, bool by_iops, const rep_disk *d)
{
    double r = n * io->read_bps, w = n * io->write_bps;
    char rs[32], ws[32];
    if (by_iops) {
        r = rep_charged_ios(d, n * io->read_ios, n * io->read_bps, io->contiguous);
        w = rep_charged_ios(d, n * io->write_ios, n * io->write_bps, true);
        snprintf(rs, sizeof rs, "%.6g IOPS", r);
        snprintf(ws, sizeof ws, "%.6g IOPS", w);
    } else {
        dlg_format_rate(r, "bytes", rs, sizeof rs);
        dlg_format_rate(w, "bytes", ws, sizeof ws);
    }
    bool reads = r > 0, writes = w > 0;
    return (size_t)snprintf(buf, len, "%s%s%s%s%s", reads ? "reads " : "", reads ? rs : "",
                            reads && writes ? " and " : "", writes ? "writes " : "", writes ? ws : "");
}

/* What limit binds the best disk: "the instance's disks carry at most
 * 218.8 MB/s (its block-storage cap)", "its best disk, gp, carries at
 * most 125.0 MB/s", "writes at most", or the share of a shared budget. */
static void limit_text(char *buf, size_t len, const rep_instance *in, const io_carry *c, const rep_disk *d)
{
    char lim[32];
    if (c->fit == DISK_CAPPED) {
        if (c->by_iops)
            snprintf(lim, sizeof lim, "%.6g IOPS", in->disk_iops_max);
        else
            dlg_format_rate(in->disk_bw_max, "bytes", lim, sizeof lim);
        snprintf(buf, len, "the instance's disks carry at most %s (its block-storage cap)", lim);
        return;
    }
    if (c->use.combined && d->write_shared) {
        snprintf(buf, len, "on its best disk, %s, that is %.0f%% of its shared read+write budget", d->name,
                 100 * c->use.share);
        return;
    }
    bool wside = c->use.writes && (c->by_iops ? d->write_own_iops : d->write_own_bw);
    double v = c->by_iops ? (wside ? d->write_iops : d->iops) : (wside ? d->write_bandwidth : d->bandwidth);
    if (c->by_iops)
        snprintf(lim, sizeof lim, "%.6g IOPS", v);
    else
        dlg_format_rate(v, "bytes", lim, sizeof lim);
    snprintf(buf, len, "its best disk, %s, %s at most %s%s", d->name, wside ? "writes" : "carries", lim,
             c->use.combined && !wside ? " (reads and writes together)" : "");
}

/* The instance needs a disk that carries the I/O the credited cell
 * measured, per copy, and the copies' total under its caps: with storage
 * not swept this is the only storage check; with it swept, the knee's
 * profile is met per copy, and this adds what N GPUs' copies need of one
 * instance cap (and writes, which "as fast as the knee" does not judge).
 * A disk with no profile, or a network disk with no cap known, may:
 * noted, not failed. */
static void check_io(rep_fit *f, const rep_group *g, const rep_cell *cell, const rep_instance *in, double ncopies,
                     const rep_disks *disks, const char *tag)
{
    rep_io_rate io;
    bool swept = has_axis(g, is_storage);
    if (!f->meets || !cell->ok)
        return;
    rep_cell_io(cell, &io);
    if (!rep_io_measured(&io))
        return;
    io_carry c = best_carry(in, &io, ncopies, disks);
    if (c.unknown) {
        if (swept) /* the knee was judged; cap_matters says what it could not */
            return;
        f->io_unknown = in->ndisks == 0 || !rep_disks_find(disks, in->disks[c.disk]);
        f->cap_unknown = !f->io_unknown;
        return;
    }
    if (c.fit == DISK_REACHES)
        return;
    const rep_disk *d = rep_disks_find(disks, in->disks[c.disk]);
    bool total = c.fit == DISK_CAPPED && ncopies > 1;
    char lim[160];
    f->meets = false;
    size_t n = (size_t)snprintf(f->why, sizeof f->why, "%s ", tag);
    n += io_text(f->why + n, n < sizeof f->why ? sizeof f->why - n : 0, &io, 1, c.by_iops, d);
    n += (size_t)snprintf(f->why + n, n < sizeof f->why ? sizeof f->why - n : 0, "%s%s%s",
                          ncopies > 1 ? " per GPU" : "", swept ? "" : " (storage not swept)", total ? ", so " : "");
    if (total && n < sizeof f->why) {
        n += io_text(f->why + n, sizeof f->why - n, &io, ncopies, c.by_iops, d);
        n += (size_t)snprintf(f->why + n, n < sizeof f->why ? sizeof f->why - n : 0, " on its %d GPUs", in->gpus);
    }
    limit_text(lim, sizeof lim, in, &c, d);
    if (n < sizeof f->why)
        snprintf(f->why + n, sizeof f->why - n, "; %s", lim);
}

/* Why a disk fast enough of its own falls short on this instance:
 * ": the instance caps block storage at 218.8 MB/s < mid's 400 MB/s". */
static void cap_reason(const rep_instance *in, const rep_disk *want, char *buf, size_t len)
{
    char cap[32], need[32];
    if (!reaches(in->disk_bw_max, want->bandwidth)) {
        dlg_format_rate(in->disk_bw_max, "bytes", cap, sizeof cap);
        dlg_format_rate(want->bandwidth, "bytes", need, sizeof need);
    } else {
        snprintf(cap, sizeof cap, "%.6g IOPS", in->disk_iops_max);
        snprintf(need, sizeof need, "%.6g IOPS", want->iops);
    }
    snprintf(buf, len, ": the instance caps block storage at %s < %s's %s", cap, want->name, need);
}

/* The storage knee's profile has limits a cap would bound, no cap is
 * known for the instance, and only a network disk meets the knee (a local
 * disk that meets it is behind no cap). */
static bool cap_matters(const rep_instance *in, const rep_axis *ax, size_t v, const rep_disks *disks)
{
    const rep_disk *want = rep_disks_find(disks, ax->vals[v]);
    if (!want || (want->bandwidth <= 0 && want->iops <= 0) || in->disk_bw_max > 0 || in->disk_iops_max > 0)
        return false;
    bool network = false;
    for (size_t i = 0; i < in->ndisks; i++) {
        if (disk_against(in, i, ax->vals[v], want, disks) != DISK_REACHES)
            continue;
        if (in->local[i])
            return false;
        network = true;
    }
    return network;
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
    if (g->per_gpu && in->gpus == 0) { /* the group fed a GPU: an instance without one cannot run it */
        f->meets = false;
        snprintf(f->why, sizeof f->why, "%s needs a GPU, the instance has none", tag);
        return;
    }
    for (size_t a = 0; a < g->naxes && f->meets; a++) {
        const rep_axis *ax = &g->axes[a];
        size_t kv = g->knees[a].val;
        if (ax->kind == REP_AX_STORAGE)
            f->cap_unknown = cap_matters(in, ax, kv, disks);
        if (!is_resource(ax) || supplies(g, in, ax, kv, disks))
            continue;
        f->meets = false;
        size_t n = (size_t)snprintf(f->why, sizeof f->why, "%s needs %s %s%s%s", tag, ax->key,
                                    ax->kind == REP_AX_STORAGE ? "like " : ">= ", ax->vals[kv],
                                    ax->kind != REP_AX_STORAGE && g->per_gpu ? " per GPU" : "");
        if (ax->kind == REP_AX_STORAGE && n < sizeof f->why && has_storage(in, ax, kv, disks) == DISK_CAPPED)
            cap_reason(in, rep_disks_find(disks, ax->vals[kv]), f->why + n, sizeof f->why - n);
    }
    long c = best_supplied(g, in, disks);
    check_unswept(f, g, &g->cells[c >= 0 ? (size_t)c : g->best], in, ncopies, tag);
    check_io(f, g, &g->cells[c >= 0 ? (size_t)c : g->best], in, ncopies, disks, tag);
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
            if (is_resource(&g->axes[a]) && g->cells[g->knees[a].cell].thr < lo)
                lo = g->cells[g->knees[a].cell].thr;
        f->thr = lo * ncopies * measured_scaling(f, m, gi, g->best, in);
        f->estimated = true;
    } /* else: less than any cell measured; a knee's figure would flatter it, so none */
    if (f->thr > 0)
        f->cost = in->price / (f->thr * 3600.0) * rep_cost_quantum(g->unit);
}

/* A group the recommendation counts: selected and measured, at 1 rank. */
static bool counted(const rep_model *m, const bool *selected, size_t gi)
{
    return (!selected || selected[gi]) && m->g[gi].has_best && m->g[gi].ranks == 1;
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
        if (!counted(m, selected, gi))
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
        if (!counted(m, selected, gi))
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

/* Scores equal to 9 significant digits tie: 3 GPUs at 3 x the price cost
 * the same per item, however floating point rounds the two quotients. */
static double tie_key(double s)
{
    if (!isfinite(s) || s <= 0)
        return s;
    double e = pow(10, 8 - floor(log10(s)));
    return round(s * e) / e;
}

static int cmp_choice(const void *pa, const void *pb)
{
    const rep_choice *a = pa, *b = pb;
    if (a->meets != b->meets)
        return a->meets ? -1 : 1;
    double sa = tie_key(a->score), sb = tie_key(b->score);
    if (a->meets && sa != sb)
        return sa < sb ? -1 : 1;
    if (a->inst->price != b->inst->price)
        return a->inst->price < b->inst->price ? -1 : 1;
    return strcmp(a->inst->name, b->inst->name);
}

int rep_recommend(rep_reco *out, const rep_model *m, const bool *selected, const double *weights,
                  const rep_catalog *cat, const rep_disks *disks, const char *gpu_filter, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->weighted = weights != NULL;
    out->ngroups = m->n;
    if (!(out->v = calloc(cat->n + 1, sizeof *out->v)))
        goto oom;
    for (size_t i = 0; i < cat->n; i++) {
        const rep_instance *in = &cat->v[i];
        if (gpu_filter && !strcasestr(in->gpu, gpu_filter))
            continue;
        if (out->currency && strcmp(out->currency, in->currency) != 0) {
            snprintf(err, errlen, "the catalogs price in %s and %s (%s): compare one currency at a time",
                     out->currency, in->currency, in->catalog);
            rep_reco_free(out);
            return -DLG_EINVAL;
        }
        out->currency = in->currency;
        rep_choice *ch = &out->v[out->n++];
        ch->inst = in;
        ch->meets = true;
        if (!(ch->fits = calloc(m->n + 1, sizeof *ch->fits)))
            goto oom;
        for (size_t gi = 0; gi < m->n; gi++) {
            if (!counted(m, selected, gi)) {
                ch->fits[gi].meets = true;
                continue;
            }
            fit_group(&ch->fits[gi], m, gi, in, disks);
            ch->meets = ch->meets && ch->fits[gi].meets;
            ch->score += (weights ? weights[gi] : 1) * ch->fits[gi].cost;
        }
        out->nmeet += ch->meets;
    }
    /* weights in each group's own quanta make the sum a price, in any units */
    if (!(out->unit = common_unit(m, selected)) && !weights)
        relative_scores(out, m, selected);
    qsort(out->v, out->n, sizeof *out->v, cmp_choice);
    return 0;
oom:
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
}

void rep_reco_free(rep_reco *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].fits);
    free(r->v);
    memset(r, 0, sizeof *r);
}
