/* The recommendation's storage checks: whether an instance's disks, under
 * its block-storage caps, reach a swept disk profile, and carry the I/O a
 * measured cell did, per copy and all copies together. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "disk_use.h"
#include "reco_storage.h"
#include "units.h"

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
 * value: its own profile is that value or at least as fast (sustained
 * bandwidth, and IOPS where both are known: a small random read is one
 * I/O in any iops_unit), and still is once the instance's block-storage
 * caps bound it (instance-store disks have none). */
static rep_disk_fit disk_against(const rep_instance *in, size_t i, const char *value, const rep_disk *want,
                                 const rep_disks *disks)
{
    const rep_disk *d = rep_disks_find_file(disks, in->disks[i]);
    double need = want ? rep_disk_sustained_bw(want) : 0;
    bool named = strcmp(in->disks[i], value) == 0;
    bool own;
    if (want && d && d != want) /* two profiles, whatever their names: their limits decide */
        own = (named ? reaches(rep_disk_sustained_bw(d), need) : need > 0 && rep_disk_sustained_bw(d) >= need) &&
              reaches(d->iops, want->iops);
    else
        own = named;
    if (!own)
        return REP_DISK_SHORT;
    if (!want || !d || in->local[i]) /* no profile: nothing to hold a cap against */
        return REP_DISK_REACHES;
    return reaches(capped(rep_disk_sustained_bw(d), in->disk_bw_max), need) &&
                   reaches(capped(d->iops, in->disk_iops_max), want->iops)
               ? REP_DISK_REACHES
               : REP_DISK_CAPPED;
}

rep_disk_fit rep_storage_fit(const rep_instance *in, const rep_axis *ax, size_t v, const rep_disks *disks)
{
    const rep_disk *want = rep_disks_find(disks, ax->vals[v]);
    rep_disk_fit best = REP_DISK_SHORT;
    for (size_t i = 0; i < in->ndisks && best != REP_DISK_REACHES; i++) {
        rep_disk_fit f = disk_against(in, i, ax->vals[v], want, disks);
        best = f > best ? f : best;
    }
    return best;
}

/* How disk i of the instance carries n copies of a cell's I/O: each copy
 * on a disk of its own (the profile's limits, per copy), network disks all
 * behind the instance's caps (the total of the n copies). */
typedef struct io_carry {
    rep_disk_fit fit;      /* REP_DISK_CAPPED: the caps bind */
    bool unknown;      /* no profile, or a network disk with no cap known */
    rep_limit_use use; /* of the binding limit: the profile's, or the caps' when capped */
    bool by_iops;
    size_t disk;
} io_carry;

#define OVER(u) ((u).share > 1 + 1e-9)

static io_carry carry(const rep_instance *in, size_t i, const rep_io_rate *io, double n, const rep_disks *disks)
{
    io_carry c = {.fit = REP_DISK_REACHES, .use = {NAN, false, false}, .disk = i};
    const rep_disk *d = rep_disks_find_file(disks, in->disks[i]);
    if (!d)
        return (c.unknown = true, c);
    c.use = rep_io_use_disk(io, d, &c.by_iops);
    if (OVER(c.use))
        return (c.fit = REP_DISK_SHORT, c);
    if (in->local[i])
        return c;
    if (in->disk_bw_max <= 0 && in->disk_iops_max <= 0)
        return (c.unknown = true, c);
    rep_limit_use cap = rep_io_use(io, n, in->disk_bw_max, in->disk_iops_max, d, &c.by_iops);
    if (OVER(cap))
        c.fit = REP_DISK_CAPPED;
    c.use = cap;
    return c;
}

/* The instance's disk that carries the I/O best: one that does, else one
 * that may (unknown), else the one nearest to it. */
static io_carry best_carry(const rep_instance *in, const rep_io_rate *io, double n, const rep_disks *disks)
{
    io_carry best = {.fit = REP_DISK_SHORT, .unknown = in->ndisks == 0, .use = {INFINITY, false, false}};
    for (size_t i = 0; i < in->ndisks; i++) {
        io_carry c = carry(in, i, io, n, disks);
        bool known_ok = c.fit == REP_DISK_REACHES && !c.unknown;
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
    if (c->fit == REP_DISK_CAPPED) {
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
void rep_check_io(rep_fit *f, const rep_cell *cell, const rep_instance *in, double ncopies, bool swept,
                  const rep_disks *disks, const char *tag)
{
    rep_io_rate io;
    if (!f->meets || !cell->ok)
        return;
    rep_cell_io(cell, &io);
    if (!rep_io_measured(&io))
        return;
    io_carry c = best_carry(in, &io, ncopies, disks);
    if (c.unknown) {
        if (swept) /* the knee was judged; rep_cap_matters says what it could not */
            return;
        f->io_unknown = in->ndisks == 0 || !rep_disks_find_file(disks, in->disks[c.disk]);
        f->cap_unknown = !f->io_unknown;
        return;
    }
    if (c.fit == REP_DISK_REACHES)
        return;
    const rep_disk *d = rep_disks_find_file(disks, in->disks[c.disk]);
    bool total = c.fit == REP_DISK_CAPPED && ncopies > 1;
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
void rep_cap_reason(const rep_instance *in, const rep_disk *want, char *buf, size_t len)
{
    char cap[32], need[32];
    double bw = rep_disk_sustained_bw(want);
    if (!reaches(in->disk_bw_max, bw)) {
        dlg_format_rate(in->disk_bw_max, "bytes", cap, sizeof cap);
        dlg_format_rate(bw, "bytes", need, sizeof need);
    } else {
        snprintf(cap, sizeof cap, "%.6g IOPS", in->disk_iops_max);
        snprintf(need, sizeof need, "%.6g IOPS", want->iops);
    }
    snprintf(buf, len, ": the instance caps block storage at %s < %s's %s", cap, want->name, need);
}

/* The storage knee's profile has limits a cap would bound, no cap is
 * known for the instance, and only a network disk meets the knee (a local
 * disk that meets it is behind no cap). */
bool rep_cap_matters(const rep_instance *in, const rep_axis *ax, size_t v, const rep_disks *disks)
{
    const rep_disk *want = rep_disks_find(disks, ax->vals[v]);
    if (!want || (want->bandwidth <= 0 && want->iops <= 0) || in->disk_bw_max > 0 || in->disk_iops_max > 0)
        return false;
    bool network = false;
    for (size_t i = 0; i < in->ndisks; i++) {
        if (disk_against(in, i, ax->vals[v], want, disks) != REP_DISK_REACHES)
            continue;
        if (in->local[i])
            return false;
        network = true;
    }
    return network;
}
