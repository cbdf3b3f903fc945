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
#include "reco_storage.h"
#include "recommend.h"
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
    if (!has_axis(g, is_memory) && f->meets && rep_num(cell->row, "rss_peak_bytes", &rss) &&
        in->memory / ncopies + 0.5 < rss) {
        f->meets = false;
        snprintf(f->why, sizeof f->why, "%s needs memory >= %.3g GiB%s (its peak RSS; memory not swept)", tag,
                 rss / 1073741824.0, g->per_gpu ? " per GPU" : "");
    }
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
            f->cap_unknown = rep_cap_matters(in, ax, kv, disks);
        if (!is_resource(ax) || supplies(g, in, ax, kv, disks))
            continue;
        f->meets = false;
        size_t n = (size_t)snprintf(f->why, sizeof f->why, "%s needs %s %s%s%s", tag, ax->key,
                                    ax->kind == REP_AX_STORAGE ? "like " : ">= ", ax->vals[kv],
                                    ax->kind != REP_AX_STORAGE && g->per_gpu ? " per GPU" : "");
        if (ax->kind == REP_AX_STORAGE && n < sizeof f->why && rep_storage_fit(in, ax, kv, disks) == REP_DISK_CAPPED)
            rep_cap_reason(in, rep_disks_find(disks, ax->vals[kv]), f->why + n, sizeof f->why - n);
    }
    long c = best_supplied(g, in, disks);
    const rep_cell *credited = &g->cells[c >= 0 ? (size_t)c : g->best];
    check_unswept(f, g, credited, in, ncopies, tag);
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
            if (is_resource(&g->axes[a]) && g->cells[g->knees[a].cell].thr < lo)
                lo = g->cells[g->knees[a].cell].thr;
        f->thr = lo * ncopies * measured_scaling(f, m, gi, g->best, in);
        f->estimated = true;
    } /* else: less than any cell measured; a knee's figure would flatter it, so none */
}

bool rep_group_counted(const rep_model *m, const bool *selected, size_t gi)
{
    return (!selected || selected[gi]) && m->g[gi].has_best && m->g[gi].ranks == 1 && !m->g[gi].collective;
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
    if (rep_choice_hourly(a) != rep_choice_hourly(b))
        return rep_choice_hourly(a) < rep_choice_hourly(b) ? -1 : 1;
    return strcmp(a->inst->name, b->inst->name);
}

/* Every counted group's fit on instance in (the others meet, with no
 * figure); whether it meets every knee. */
static bool fit_all(rep_fit *fits, const rep_model *m, const bool *selected, const rep_instance *in,
                    const rep_disks *disks)
{
    bool meets = true;
    memset(fits, 0, m->n * sizeof *fits);
    for (size_t gi = 0; gi < m->n; gi++) {
        if (!rep_group_counted(m, selected, gi)) {
            fits[gi].meets = true;
            continue;
        }
        fit_group(&fits[gi], m, gi, in, disks);
        meets = meets && fits[gi].meets;
    }
    return meets;
}

/* Each counted group's cost at hour (a price an hour) per its quantum. */
static void cost_fits(rep_fit *fits, const rep_model *m, const bool *selected, double hour)
{
    for (size_t gi = 0; gi < m->n; gi++)
        if (rep_group_counted(m, selected, gi) && fits[gi].thr > 0)
            fits[gi].cost = hour / (fits[gi].thr * 3600.0) * rep_cost_quantum(m->g[gi].unit);
}

/* What ranks one instance's fits against its other disks' (lower is
 * cheaper): the weighted or plain sum of the costs, or with several units
 * their product (as a log), which orders as the relative score does. */
static double fits_key(const rep_fit *fits, const rep_model *m, const bool *selected, const double *weights,
                       bool one_unit)
{
    double k = 0;
    for (size_t gi = 0; gi < m->n; gi++)
        if (rep_group_counted(m, selected, gi))
            k += weights ? weights[gi] * fits[gi].cost : one_unit ? fits[gi].cost : log(fits[gi].cost);
    return k;
}

static bool asks_disk(const rep_fit *fits, const rep_model *m, const bool *selected)
{
    for (size_t gi = 0; gi < m->n; gi++)
        if (rep_group_counted(m, selected, gi) && fits[gi].asks_disk)
            return true;
    return false;
}

/* A disk the instance could attach, as choose_disk weighs it. */
typedef struct disk_option {
    long i;        /* its index, -1: none yet */
    double month;  /* its price a month: 0 instance store, NaN not priced */
    double bytes;  /* the volume sized for the work; 0: the profile's, as priced */
    double iops, bwp; /* rates bought above the profile's (IOPS, bytes/s); 0: none */
    double key;    /* fits_key */
    double hour;   /* instance and disk an hour */
    double bw;     /* what it sustains */
} disk_option;

/* a sustains less than b (an unknown rate never does) */
static bool sustains_less(const disk_option *a, const disk_option *b)
{
    return a->bw > 0 && (b->bw <= 0 || a->bw < b->bw);
}

static bool better_option(const disk_option *a, const disk_option *b)
{
    bool priced = !isnan(a->month);
    if (b->i < 0 || priced != !isnan(b->month))
        return b->i < 0 || priced;
    /* unpriced, a faster disk would always look cheaper per item: the one
     * that sustains least is as a rule the cheapest kind */
    if (!priced && a->bw != b->bw)
        return sustains_less(a, b);
    if (a->key != b->key)
        return a->key < b->key;
    if (a->hour != b->hour)
        return a->hour < b->hour;
    return sustains_less(a, b);
}

/* The instance with disk i alone. */
static rep_instance only_disk(const rep_instance *in, size_t i)
{
    rep_instance one = *in;
    one.disks += i;
    one.local += i;
    one.ndisks = 1;
    one.disk_price += i;
    return one;
}

/* What choose_disk sizes volumes with: the data they must hold, and the
 * profiles with one more slot, where a volume of another size stands
 * under a name of its own ("aws-gp3 (20GiB)"), so that the knee's
 * profile is still the one measured. */
typedef struct disk_sizer {
    const rep_model *m;
    const bool *selected;
    const rep_disks *disks;
    double data; /* bytes; 0: not known */
    rep_disk *slots; /* disks->n + 1 */
    rep_disks view;
    char name[192];
    const char *names[1];
    rep_fit *tmp;  /* m->n fits */
    rep_fit *base; /* m->n fits: a smaller volume's, which a larger one must beat */
    const double *weights; /* choose_disk's, for fits_key */
    bool one_unit;
} disk_sizer;

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024.0 * 1024.0)

/* The data a volume must hold: the most any ok cell of the counted groups
 * read (storage_files_bytes; a group's cells read one data set, as a
 * rule, and the groups run one at a time); 0 where no row says. */
static double data_bytes(const rep_model *m, const bool *selected)
{
    double most = 0, v;
    for (size_t gi = 0; gi < m->n; gi++)
        for (size_t c = 0; rep_group_counted(m, selected, gi) && c < m->g[gi].ncells; c++)
            if (m->g[gi].cells[c].ok && rep_num(m->g[gi].cells[c].row, "storage_files_bytes", &v) && v > most)
                most = v;
    return most;
}

/* Whether the instance with disk d as a volume of `bytes` alone meets
 * every knee (fits into z->tmp), with iops and bw (bytes/s) bought where
 * above 0. */
static bool fits_bought(disk_sizer *z, const rep_instance *one, const rep_disk *d, double bytes, double iops,
                        double bw)
{
    rep_instance v = *one;
    rep_disk *slot = &z->slots[z->disks->n];
    if (d->capacity > 0 && ceil(bytes / GIB) * GIB == d->capacity && !(iops > 0) && !(bw > 0)) {
        *slot = *d; /* the profile's own volume, by its own name */
        slot->name = z->name;
        z->name[0] = 0;
        return fit_all(z->tmp, z->m, z->selected, one, z->disks);
    }
    if (!rep_disk_sized(d, bytes, slot, z->name, sizeof z->name))
        return false;
    if (iops > 0 || bw > 0) { /* "NAME (SIZE, N IOPS, R)" */
        char rate[32];
        dlg_format_rate(bw > 0 ? bw : slot->bandwidth, "bytes", rate, sizeof rate);
        size_t n = strlen(z->name);
        snprintf(z->name + n - 1, sizeof z->name - (n - 1), ", %.0f IOPS, %s)", iops > 0 ? iops : slot->iops, rate);
        slot->iops = iops > 0 ? iops : slot->iops;
        slot->bandwidth = bw > 0 ? bw : slot->bandwidth;
    }
    z->names[0] = z->name;
    v.disks = (char **)z->names;
    return fit_all(z->tmp, z->m, z->selected, &v, &z->view);
}

static bool fits_sized(disk_sizer *z, const rep_instance *one, const rep_disk *d, double bytes)
{
    return fits_bought(z, one, d, bytes, 0, 0);
}

/* The least whole number in (lo, hi] for which fits holds, given that it
 * holds at hi, not at lo, and for every number above one that it holds
 * for (bisection). */
typedef bool (*fits_fn)(void *arg, double x);
static double least_fitting(double lo, double hi, fits_fn fits, void *arg)
{
    while (hi - lo > 1) {
        double mid = floor((lo + hi) / 2);
        if (fits(arg, mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* A volume with rates bought above its profile's: what it holds at
 * least, the rates being tried. */
typedef struct bought {
    disk_sizer *z;
    const rep_instance *one;
    const rep_disk *d;
    double data;     /* bytes */
    double iops, bw; /* bw in bytes/s */
} bought;

/* The volume's size with `iops`: the data, or what the IOPS need a GiB
 * of where they are bought (gp3: 500 a GiB above its 3,000 included at
 * any size; io2, whose IOPS are all bought: 1,000 a GiB). */
static double bought_size(const bought *b, double iops)
{
    const rep_disk_price *p = b->one->disk_price;
    bool buys = iops > b->d->iops || p->iops_min > 0;
    double need = buys && p->iops_per_gib > 0 ? ceil(iops / p->iops_per_gib) * GIB : 0;
    return fmax(b->data, need);
}

static bool fits_bw(void *arg, double mib)
{
    bought *b = arg;
    return fits_bought(b->z, b->one, b->d, bought_size(b, b->iops), b->iops, mib * MIB);
}

static bool fits_iops(void *arg, double iops)
{
    bought *b = arg;
    return fits_bought(b->z, b->one, b->d, bought_size(b, iops), iops, b->bw);
}

/* Disk d, whose rates do not grow with its size, with the IOPS and
 * bandwidth bought that the knees need: the least bandwidth (whole MiB/s,
 * its own if that does) that meets them with the most IOPS, then the
 * least IOPS (from iops_min, else its own) with that bandwidth and at
 * least what it needs per IOPS, then the size those IOPS need.  Into o
 * (bytes, iops and bwp where they differ from its own, bw), its fits in
 * z->tmp; false where the most it can buy falls short, or its size passes
 * size_max. */
static bool buy_rates(disk_sizer *z, const rep_instance *one, const rep_disk *d, double data, disk_option *o)
{
    const rep_disk_price *p = one->disk_price;
    double i0 = d->iops, b0 = d->bandwidth;
    double imax = fmax(p->iops_max, i0), bmax = fmax(p->bw_max, b0);
    double imin = p->iops_min > 0 ? fmin(p->iops_min, i0) : i0;
    if (!(i0 > 0) || !(b0 > 0))
        return false; /* an unlimited rate buys nothing */
    bought b = {z, one, d, data, imax, floor(bmax / MIB) * MIB};
    if (bought_size(&b, imax) > p->size_max || !fits_iops(&b, imax))
        return false;
    b.bw = b0;
    if (!fits_iops(&b, imax)) /* its own bandwidth falls short: the least bought (fits at bmax) */
        b.bw = least_fitting(floor(b0 / MIB), floor(bmax / MIB), fits_bw, &b) * MIB;
    double ilo = fmax(imin, p->bw_per_iops > 0 ? ceil(b.bw / p->bw_per_iops) : 0);
    b.iops = imax > ilo && !fits_iops(&b, ilo) ? least_fitting(ilo, imax, fits_iops, &b) : ilo;
    if (!fits_iops(&b, b.iops)) /* its fits in z->tmp */
        return false;
    o->bytes = bought_size(&b, b.iops);
    o->iops = b.iops != i0 ? b.iops : 0;
    o->bwp = b.bw > b0 ? b.bw : 0;
    o->bw = rep_disk_sustained_bw(&z->slots[z->disks->n]);
    return true;
}

typedef struct sized_search {
    disk_sizer *z;
    const rep_instance *one;
    const rep_disk *d;
} sized_search;

static bool fits_gib(void *arg, double gib)
{
    sized_search *ss = arg;
    return fits_sized(ss->z, ss->one, ss->d, gib * GIB);
}

/* A month of a volume of `bytes` priced by the GiB (its fixed part too). */
static double sized_month(const rep_disk_price *p, double bytes)
{
    return (p->month > 0 ? p->month : 0) + p->per_gib * bytes / GIB;
}

/* Whether the volume at gib GiB credits some counted group more items/s
 * than z->base does (its fits in z->tmp): a larger volume of a disk whose
 * rates grow with its size reaches a faster measured cell. */
static bool credits_more(void *arg, double gib)
{
    sized_search *ss = arg;
    disk_sizer *z = ss->z;
    fits_sized(z, ss->one, ss->d, gib * GIB);
    for (size_t gi = 0; gi < z->m->n; gi++) {
        double now = z->tmp[gi].thr, was = z->base[gi].thr;
        if (rep_group_counted(z->m, z->selected, gi) && now > 0 && (isnan(was) || now > was))
            return true;
    }
    return false;
}

/* The fits' key (cost per item) with the volume at gib GiB. */
static double sized_key(sized_search *ss, double gib)
{
    disk_sizer *z = ss->z;
    fits_sized(z, ss->one, ss->d, gib * GIB);
    double hour = ss->one->price + sized_month(ss->one->disk_price, gib * GIB) / REP_HOURS_PER_MONTH;
    cost_fits(z->tmp, z->m, z->selected, hour);
    return fits_key(z->tmp, z->m, z->selected, z->weights, z->one_unit);
}

/* The volume, from the smallest that meets every knee (gib) up to hi GiB,
 * whose cost per item is least: each size at which the instance is
 * credited a faster measured cell (the knee is the smallest storage within
 * 95% of the best; the best's price per item is lower wherever the
 * instance costs much more than the volume grows by) is weighed. */
static double cheapest_larger(sized_search *ss, double gib, double hi)
{
    disk_sizer *z = ss->z;
    double best = gib, best_key = sized_key(ss, gib);
    for (int steps = 0; steps < 64 && gib < hi; steps++) { /* a step per storage value, as a rule */
        fits_sized(z, ss->one, ss->d, gib * GIB);
        memcpy(z->base, z->tmp, z->m->n * sizeof *z->tmp);
        if (!credits_more(ss, hi))
            break;
        gib = least_fitting(gib, hi, credits_more, ss);
        double key = sized_key(ss, gib);
        if (key < best_key) {
            best = gib;
            best_key = key;
        }
    }
    return best;
}

/* The volume of disk i (priced by the GiB) to attach: the smallest that
 * holds the data and with which the instance meets every knee, its bytes,
 * 0 if none between the sizes made.  A disk whose rates grow with its
 * size is searched up to size_max (its rates never fall as it grows), and
 * made larger still where a faster cell credited costs less per item. */
static double size_volume(disk_sizer *z, const rep_instance *one, const rep_disk *d)
{
    const rep_disk_price *p = one->disk_price;
    double lo = ceil(fmax(p->size_min, z->data) / GIB), hi = floor(p->size_max / GIB);
    if (lo > hi)
        return 0;
    sized_search ss = {z, one, d};
    double gib = lo;
    if (!fits_sized(z, one, d, lo * GIB)) {
        if (!rep_disk_scales(d) || !fits_sized(z, one, d, hi * GIB))
            return 0;
        gib = least_fitting(lo, hi, fits_gib, &ss);
    }
    if (rep_disk_scales(d))
        gib = cheapest_larger(&ss, gib, hi);
    fits_sized(z, one, d, gib * GIB); /* its fits in z->tmp */
    return gib * GIB;
}

/* Disk i as choose_disk weighs it, the instance's fits with it in z->tmp;
 * false when the instance does not meet every knee with it, or it cannot
 * hold the data (*holds false). */
static bool disk_fits(disk_sizer *z, const rep_instance *in, size_t i, disk_option *o, bool *holds)
{
    rep_instance one = only_disk(in, i);
    const rep_disk *d = rep_disks_find(z->disks, in->disks[i]);
    const rep_disk_price *p = &in->disk_price[i];
    *o = (disk_option){.i = (long)i, .month = p->month, .bw = d ? rep_disk_sustained_bw(d) : 0};
    *holds = true;
    if (p->per_gib > 0) {
        if (!(*holds = z->data <= p->size_max))
            return false;
        if (d && d->values) {
            double data = ceil(fmax(p->size_min, z->data) / GIB) * GIB;
            bool buys = !rep_disk_scales(d) && (p->iops_max > 0 || p->bw_max > 0);
            if (buys ? !buy_rates(z, &one, d, data, o) : !(o->bytes = size_volume(z, &one, d)))
                return false;
            if (!buys)
                o->bw = rep_disk_sustained_bw(&z->slots[z->disks->n]);
        } else { /* no profile to size by: as large as the data, its limits unknown */
            o->bytes = ceil(fmax(p->size_min, z->data) / GIB) * GIB;
            if (!fit_all(z->tmp, z->m, z->selected, &one, z->disks))
                return false;
        }
        o->month = sized_month(p, o->bytes) +
                   (o->iops > 0 ? p->per_iops * (o->iops - d->iops) : 0) + /* < 0: bought down */
                   (o->bwp > 0 ? p->per_mibps * (o->bwp - d->bandwidth) / MIB : 0);
        return true;
    }
    /* an instance store holds what it holds; a network disk priced as its
     * profile's volume, that volume; one not priced may be made larger */
    double cap = d ? d->capacity : 0;
    double holds_bytes = in->local[i] ? (in->local_size > 0 ? in->local_size : cap) : p->month > 0 ? cap : 0;
    *holds = !(z->data > 0 && holds_bytes > 0 && z->data > holds_bytes);
    return *holds && fit_all(z->tmp, z->m, z->selected, &one, z->disks);
}

/* No disk of the instance holds the data: the first group that asks for
 * storage says so, and the instance does not meet. */
static void holds_none(rep_choice *ch, const disk_sizer *z)
{
    char data[32];
    double gib = z->data / GIB;
    snprintf(data, sizeof data, gib >= 1000 ? "%.0f GiB" : "%.3g GiB", gib);
    ch->meets = false;
    for (size_t gi = 0; gi < z->m->n; gi++)
        if (rep_group_counted(z->m, z->selected, gi) && ch->fits[gi].asks_disk) {
            ch->fits[gi].meets = false;
            snprintf(ch->fits[gi].why, sizeof ch->fits[gi].why,
                     "none of its disks holds the %s of files the work read (storage_files_bytes)", data);
            return;
        }
}

/* Where a counted group asks for storage: the disk to attach (rep_choice's
 * disk), sized where the catalog prices it by the GiB, and the instance's
 * fits with it alone. */
static void choose_disk(rep_choice *ch, disk_sizer *z, const double *weights, bool one_unit)
{
    const rep_instance *in = ch->inst;
    const rep_model *m = z->m;
    disk_option best = {.i = -1};
    z->weights = weights;
    z->one_unit = one_unit;
    bool any_holds = false;
    size_t n = asks_disk(ch->fits, m, z->selected) ? in->ndisks : 0;
    for (size_t i = 0; i < n; i++) {
        disk_option o;
        bool holds;
        bool fits = disk_fits(z, in, i, &o, &holds);
        any_holds |= holds;
        if (!fits)
            continue;
        o.hour = in->price + (isnan(o.month) ? 0 : o.month / REP_HOURS_PER_MONTH);
        cost_fits(z->tmp, m, z->selected, o.hour);
        o.key = fits_key(z->tmp, m, z->selected, weights, one_unit);
        if (better_option(&o, &best)) {
            best = o;
            memcpy(ch->fits, z->tmp, m->n * sizeof *z->tmp);
        }
    }
    if (n && !any_holds)
        holds_none(ch, z);
    if (best.i < 0)
        return;
    ch->meets = true;
    ch->disk = in->disks[best.i];
    ch->disk_bytes = best.bytes;
    ch->disk_iops = best.iops;
    ch->disk_bw = best.bwp;
    ch->disk_hour = best.month / REP_HOURS_PER_MONTH;
    ch->disk_verified = in->disk_price[best.i].verified;
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
    rep_fit *tmp = calloc(m->n + 1, sizeof *tmp); /* an instance's fits with one of its disks */
    disk_sizer z = {.m = m, .selected = selected, .disks = disks, .data = data_bytes(m, selected), .tmp = tmp,
                    .slots = calloc(disks->n + 1, sizeof *z.slots), .base = calloc(m->n + 1, sizeof *tmp)};
    out->data_unknown = !(z.data > 0);
    if (!tmp || !z.slots || !z.base || !(out->v = calloc(cat->n + 1, sizeof *out->v)))
        goto oom;
    if (disks->n)
        memcpy(z.slots, disks->v, disks->n * sizeof *z.slots);
    z.slots[disks->n].name = z.name; /* "" until a volume is sized */
    z.view = (rep_disks){.v = z.slots, .n = disks->n + 1};
    for (size_t i = 0; i < cat->n; i++) {
        const rep_instance *in = &cat->v[i];
        if (gpu_filter && !strcasestr(in->gpu, gpu_filter))
            continue;
        if (out->currency && strcmp(out->currency, in->currency) != 0) {
            snprintf(err, errlen, "the catalogs price in %s and %s (%s): compare one currency at a time",
                     out->currency, in->currency, in->catalog);
            free(tmp);
            free(z.slots);
            free(z.base);
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
        ch->meets = fit_all(ch->fits, m, selected, in, disks);
        cost_fits(ch->fits, m, selected, in->price);
        choose_disk(ch, &z, weights, common_unit(m, selected) != NULL);
        score_choice(ch, m, selected, weights);
        out->nmeet += ch->meets;
    }
    free(tmp);
    free(z.slots);
    free(z.base);
    /* weights in each group's own quanta make the sum a price, in any units */
    if (!(out->unit = common_unit(m, selected)) && !weights)
        relative_scores(out, m, selected);
    qsort(out->v, out->n, sizeof *out->v, cmp_choice);
    return 0;
oom:
    free(tmp);
    free(z.slots);
    free(z.base);
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
