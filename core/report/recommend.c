/* The recommendation.  Per GPU of an instance, its vCPUs, memory and best
 * attachable disk must reach every knee of every selected group.  Its
 * expected throughput is the best measured cell within the instance's own
 * resources (other axes at their best) times its GPU count: data-parallel
 * scaling, an upper bound.  A host
 * workload (no GPU fed, rep_group.per_gpu false) takes the whole instance
 * and is not multiplied: its GPUs do not run it. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "recommend.h"
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
        bool ok = cell->ok;
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
    if (c >= 0) {
        f->thr = g->cells[c].thr * ncopies;
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
        f->thr = lo * ncopies;
        f->estimated = true;
    } /* else: less than any cell measured; a knee's figure would flatter it, so none */
    if (f->thr > 0)
        f->cost = in->price / (f->thr * 3600.0) * rep_cost_quantum(g->unit);
}

/* A group the recommendation counts: selected and measured. */
static bool counted(const rep_model *m, const bool *selected, size_t gi)
{
    return (!selected || selected[gi]) && m->g[gi].has_best;
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

void rep_reco_caps_note(const rep_reco *r, char *buf, size_t len)
{
    size_t n = 0, named = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n && n < len; i++) {
        bool unknown = false;
        for (size_t gi = 0; r->v[i].meets && gi < r->ngroups && !unknown; gi++)
            unknown = r->v[i].fits[gi].cap_unknown;
        if (unknown)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", named++ ? ", " : "note: no block-storage cap known for ",
                                  r->v[i].inst->name);
    }
    if (named && n < len)
        snprintf(buf + n, len - n, " (catalog keys disk_bandwidth_max, disk_iops_max): %s judged at the disk "
                 "profiles' own limits, which the instance may not reach", named > 1 ? "their disks are" : "its disks are");
}

void rep_reco_free(rep_reco *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].fits);
    free(r->v);
    memset(r, 0, sizeof *r);
}
