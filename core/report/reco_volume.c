/* The disk an instance attaches, and how large.  The instance is judged
 * with each of its disks alone; a disk the catalog prices by the GiB is
 * the volume the work needs (the files it read, and for rates that grow
 * with the size as large as the knees need, or larger where a faster cell
 * costs less per item); rates the catalog sells above a profile's are
 * bought, the least that meets the knees; the disk whose cost per item
 * (the instance's price and its own) is lowest wins. */
#define _GNU_SOURCE
#include "reco_volume.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "disk_use.h"
#include "reco_fit.h"
#include "units.h"

static bool asks_disk(const rep_fit *fits, const rep_model *m, const bool *selected)
{
    for (size_t gi = 0; gi < m->n; gi++)
        if (rep_group_counted(m, selected, gi) && fits[gi].asks_disk)
            return true;
    return false;
}

/* A disk the instance could attach, as rep_choose_disk weighs it. */
typedef struct disk_option {
    long i;        /* its index, -1: none yet */
    double month;  /* its price a month: 0 instance store, NaN not priced */
    double bytes;  /* the volume sized for the work; 0: the profile's, as priced */
    double iops, bwp; /* rates bought above the profile's (IOPS, bytes/s); 0: none */
    double key;    /* rep_fits_key */
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
static bool fits_bought(rep_volumes *z, const rep_instance *one, const rep_disk *d, double bytes, double iops,
                        double bw)
{
    rep_instance v = *one;
    rep_disk *slot = &z->slots[z->disks->n];
    if (d->capacity > 0 && ceil(bytes / REP_GIB) * REP_GIB == d->capacity && !(iops > 0) && !(bw > 0)) {
        *slot = *d; /* the profile's own volume, by its own name */
        slot->name = z->name;
        z->name[0] = 0;
        return rep_fit_all(z->tmp, z->m, z->selected, one, z->disks);
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
    return rep_fit_all(z->tmp, z->m, z->selected, &v, &z->view);
}

static bool fits_sized(rep_volumes *z, const rep_instance *one, const rep_disk *d, double bytes)
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

/* A month of `iops` provisioned IOPS at the disk's price and its cheaper
 * tiers above (io2); per_iops x iops where it has none. */
static double iops_month(const rep_disk_price *p, double iops)
{
    double month = 0, from = 0, price = p->per_iops;
    for (int k = 0; k <= p->ntiers; k++) {
        double to = k < p->ntiers ? p->tier_from[k] : INFINITY;
        if (iops > from)
            month += price * (fmin(iops, to) - from);
        if (k < p->ntiers)
            from = to, price = p->tier_price[k];
    }
    return month;
}

/* A volume with rates bought above its profile's: what it holds at
 * least, the rates being tried. */
typedef struct bought {
    rep_volumes *z;
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
    double need = buys && p->iops_per_gib > 0 ? ceil(iops / p->iops_per_gib) * REP_GIB : 0;
    return fmax(b->data, need);
}

static bool fits_bw(void *arg, double mib)
{
    bought *b = arg;
    return fits_bought(b->z, b->one, b->d, bought_size(b, b->iops), b->iops, mib * REP_MIB);
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
static bool buy_rates(rep_volumes *z, const rep_instance *one, const rep_disk *d, double data, disk_option *o)
{
    const rep_disk_price *p = one->disk_price;
    double i0 = d->iops, b0 = d->bandwidth;
    double imax = fmax(p->iops_max, i0), bmax = fmax(p->bw_max, b0);
    double imin = p->iops_min > 0 ? fmin(p->iops_min, i0) : i0;
    if (!(i0 > 0) || !(b0 > 0))
        return false; /* an unlimited rate buys nothing */
    bought b = {z, one, d, data, imax, floor(bmax / REP_MIB) * REP_MIB};
    if (bought_size(&b, imax) > p->size_max || !fits_iops(&b, imax))
        return false;
    b.bw = b0;
    if (!fits_iops(&b, imax)) /* its own bandwidth falls short: the least bought (fits at bmax) */
        b.bw = least_fitting(floor(b0 / REP_MIB), floor(bmax / REP_MIB), fits_bw, &b) * REP_MIB;
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
    rep_volumes *z;
    const rep_instance *one;
    const rep_disk *d;
} sized_search;

static bool fits_gib(void *arg, double gib)
{
    sized_search *ss = arg;
    return fits_sized(ss->z, ss->one, ss->d, gib * REP_GIB);
}

/* A month of a volume of `bytes` priced by the GiB (its fixed part too). */
static double sized_month(const rep_disk_price *p, double bytes)
{
    return (p->month > 0 ? p->month : 0) + p->per_gib * bytes / REP_GIB;
}

/* Whether the volume at gib GiB credits some counted group more items/s
 * than z->base does (its fits in z->tmp): a larger volume of a disk whose
 * rates grow with its size reaches a faster measured cell. */
static bool credits_more(void *arg, double gib)
{
    sized_search *ss = arg;
    rep_volumes *z = ss->z;
    fits_sized(z, ss->one, ss->d, gib * REP_GIB);
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
    rep_volumes *z = ss->z;
    fits_sized(z, ss->one, ss->d, gib * REP_GIB);
    double hour = ss->one->price + sized_month(ss->one->disk_price, gib * REP_GIB) / REP_HOURS_PER_MONTH;
    rep_cost_fits(z->tmp, z->m, z->selected, hour);
    return rep_fits_key(z->tmp, z->m, z->selected, z->weights, z->one_unit);
}

/* The volume, from the smallest that meets every knee (gib) up to hi GiB,
 * whose cost per item is least: each size at which the instance is
 * credited a faster measured cell (the knee is the smallest storage within
 * 95% of the best; the best's price per item is lower wherever the
 * instance costs much more than the volume grows by) is weighed. */
static double cheapest_larger(sized_search *ss, double gib, double hi)
{
    rep_volumes *z = ss->z;
    double best = gib, best_key = sized_key(ss, gib);
    for (int steps = 0; steps < 64 && gib < hi; steps++) { /* a step per storage value, as a rule */
        memcpy(z->base, z->tmp, z->m->n * sizeof *z->tmp); /* sized_key left gib's fits there */
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
static double size_volume(rep_volumes *z, const rep_instance *one, const rep_disk *d)
{
    const rep_disk_price *p = one->disk_price;
    double lo = ceil(fmax(p->size_min, z->data) / REP_GIB), hi = floor(p->size_max / REP_GIB);
    if (lo > hi)
        return 0;
    sized_search ss = {z, one, d};
    double gib = lo;
    if (!fits_sized(z, one, d, lo * REP_GIB)) {
        if (!rep_disk_scales(d) || !fits_sized(z, one, d, hi * REP_GIB))
            return 0;
        gib = least_fitting(lo, hi, fits_gib, &ss);
    }
    if (rep_disk_scales(d))
        gib = cheapest_larger(&ss, gib, hi);
    fits_sized(z, one, d, gib * REP_GIB); /* its fits in z->tmp */
    return gib * REP_GIB;
}

/* Disk i as rep_choose_disk weighs it, the instance's fits with it in z->tmp;
 * false when the instance does not meet every knee with it, or it cannot
 * hold the data (*holds false). */
static bool disk_fits(rep_volumes *z, const rep_instance *in, size_t i, disk_option *o, bool *holds)
{
    rep_instance one = only_disk(in, i);
    const rep_disk *d = rep_disks_find_file(z->disks, in->disks[i]);
    const rep_disk_price *p = &in->disk_price[i];
    *o = (disk_option){.i = (long)i, .month = p->month, .bw = d ? rep_disk_sustained_bw(d) : 0};
    *holds = true;
    if (p->per_gib > 0) {
        if (!(*holds = z->data <= p->size_max))
            return false;
        if (d && d->values) {
            double data = ceil(fmax(p->size_min, z->data) / REP_GIB) * REP_GIB;
            bool buys = !rep_disk_scales(d) && (p->iops_max > 0 || p->bw_max > 0);
            if (buys ? !buy_rates(z, &one, d, data, o) : !(o->bytes = size_volume(z, &one, d)))
                return false;
            if (!buys)
                o->bw = rep_disk_sustained_bw(&z->slots[z->disks->n]);
        } else { /* no profile to size by: as large as the data, its limits unknown */
            o->bytes = ceil(fmax(p->size_min, z->data) / REP_GIB) * REP_GIB;
            if (!rep_fit_all(z->tmp, z->m, z->selected, &one, z->disks))
                return false;
        }
        o->month = sized_month(p, o->bytes) +
                   (o->iops > 0 ? iops_month(p, o->iops) - iops_month(p, d->iops) : 0) + /* < 0: bought down */
                   (o->bwp > 0 ? p->per_mibps * (o->bwp - d->bandwidth) / REP_MIB : 0);
        return true;
    }
    /* an instance store holds what it holds; a network disk priced as its
     * profile's volume, that volume; one not priced may be made larger */
    double cap = d ? d->capacity : 0;
    double holds_bytes = in->local[i] ? (in->local_size > 0 ? in->local_size : cap) : p->month > 0 ? cap : 0;
    *holds = !(z->data > 0 && holds_bytes > 0 && z->data > holds_bytes);
    return *holds && rep_fit_all(z->tmp, z->m, z->selected, &one, z->disks);
}

/* No disk of the instance holds the data: the first group that asks for
 * storage says so, and the instance does not meet. */
static void holds_none(rep_choice *ch, const rep_volumes *z)
{
    char data[32];
    double gib = z->data / REP_GIB;
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
void rep_choose_disk(rep_choice *ch, rep_volumes *z, const double *weights, bool one_unit)
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
        rep_cost_fits(z->tmp, m, z->selected, o.hour);
        o.key = rep_fits_key(z->tmp, m, z->selected, weights, one_unit);
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

int rep_volumes_init(rep_volumes *z, const rep_model *m, const bool *selected, const rep_disks *disks)
{
    *z = (rep_volumes){.m = m, .selected = selected, .disks = disks, .data = data_bytes(m, selected)};
    z->tmp = calloc(m->n + 1, sizeof *z->tmp);
    z->base = calloc(m->n + 1, sizeof *z->base);
    z->slots = calloc(disks->n + 1, sizeof *z->slots);
    if (!z->tmp || !z->base || !z->slots)
        return -DLG_ENOMEM;
    if (disks->n)
        memcpy(z->slots, disks->v, disks->n * sizeof *z->slots);
    z->slots[disks->n].name = z->name; /* "" until a volume is sized */
    z->view = (rep_disks){.v = z->slots, .n = disks->n + 1};
    return 0;
}

void rep_volumes_free(rep_volumes *z)
{
    free(z->tmp);
    free(z->base);
    free(z->slots);
    *z = (rep_volumes){0};
}
