/* Rates of reads and writes against a disk's limits (disk_use.h). */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>

#include "disk_use.h"
#include "throttle_count.h"

static double num_or_nan(const rep_row *r, const char *k)
{
    double v;
    return rep_num(r, k, &v) ? v : NAN;
}

rep_limit_use rep_use_of(double r, double w, double limit, bool write_own, double wlimit, bool shared)
{
    rep_limit_use u = {NAN, false, false};
    if (write_own) {
        double rs = limit > 0 && !isnan(r) ? r / limit : NAN, ws = wlimit > 0 && !isnan(w) ? w / wlimit : NAN;
        u.writes = !isnan(ws) && !(rs >= ws);
        u.share = u.writes ? ws : rs;
        if (shared && !isnan(rs) && !isnan(ws)) { /* unlimited reads use none of it */
            u.share = rs + ws;
            u.combined = ws > 0;
        }
    } else if (limit > 0 && !(isnan(r) && isnan(w))) {
        double rr = isnan(r) ? 0 : r, ww = isnan(w) ? 0 : w;
        u.share = (rr + ww) / limit;
        u.writes = ww > rr;
        u.combined = ww > 0;
    }
    return u;
}

rep_limit_use rep_use_binding(rep_limit_use bw, rep_limit_use io)
{
    return isnan(io.share) || bw.share >= io.share ? bw : io;
}

/* The raw-read workload's pattern = seq (its default; it is the workload
 * with block_bytes).  Other loaders read whole files or records in no
 * known order: counted apart. */
bool rep_reads_contiguous(const rep_row *r)
{
    const char *cfg = rep_str(r, "config");
    char key[64], val[64];
    for (const char *s = cfg; s && rep_config_next(&s, key, sizeof key, val, sizeof val);)
        if (strcmp(key, "pattern") == 0)
            return strcmp(val, "seq") == 0;
    return !isnan(num_or_nan(r, "block_bytes"));
}

/* The throttle's own counting: a read of the mean size counts once per
 * iops_unit it spans, contiguous reads of iops_merge or more merge until
 * they fill a unit. */
double rep_charged_ios(const rep_disk *d, double ios, double bytes, bool contiguous)
{
    if (!d || !(d->iops_unit > 0) || !(bytes > 0))
        return ios;
    thr_limits lim = {.iops_unit = d->iops_unit, .iops_merge = d->iops_merge};
    return thr_stream_units(&lim, ios, bytes / ios, contiguous);
}

double rep_disk_sustained_bw(const rep_disk *d)
{
    double by_ios = d->iops > 0 && d->iops_unit > 0 ? d->iops * d->iops_unit : 0;
    return by_ios > 0 && (d->bandwidth <= 0 || by_ios < d->bandwidth) ? by_ios : d->bandwidth;
}

void rep_cell_io(const rep_cell *c, rep_io_rate *io)
{
    double wall = num_or_nan(c->row, "wall_s");
    double ios = num_or_nan(c->row, "storage_ios"), wios = num_or_nan(c->row, "storage_write_ios");
    bool disk = !isnan(c->disk_bps); /* the disk's share: page-cache hits never reached it */
    io->read_bps = disk ? c->disk_bps : c->read_bps;
    io->write_bps = c->write_bps;
    io->read_ios = disk ? c->disk_ios : ios > 0 && wall > 0 ? ios / wall : NAN;
    io->write_ios = wios > 0 && wall > 0 ? wios / wall : NAN;
    io->contiguous = rep_reads_contiguous(c->row);
}

bool rep_io_measured(const rep_io_rate *io)
{
    return io->read_bps > 0 || io->write_bps > 0 || io->read_ios > 0 || io->write_ios > 0;
}

/* I/Os per second of n copies as d counts them: reads, and writes (written
 * front to back: contiguous, as the throttle merges them). */
static void charged(const rep_io_rate *io, double n, const rep_disk *d, double *rio, double *wio)
{
    *rio = rep_charged_ios(d, n * io->read_ios, n * io->read_bps, io->contiguous);
    *wio = rep_charged_ios(d, n * io->write_ios, n * io->write_bps, true);
}

static rep_limit_use pick(rep_limit_use bw, rep_limit_use iops, bool *by_iops)
{
    rep_limit_use u = rep_use_binding(bw, iops);
    *by_iops = !(isnan(iops.share) || bw.share >= iops.share);
    return u;
}

rep_limit_use rep_io_use(const rep_io_rate *io, double n, double bw, double iops, const rep_disk *d, bool *by_iops)
{
    double rio, wio;
    charged(io, n, d, &rio, &wio);
    return pick(rep_use_of(n * io->read_bps, n * io->write_bps, bw, false, 0, false),
                rep_use_of(rio, wio, iops, false, 0, false), by_iops);
}

rep_limit_use rep_io_use_disk(const rep_io_rate *io, const rep_disk *d, bool *by_iops)
{
    double rio, wio;
    charged(io, 1, d, &rio, &wio);
    return pick(rep_use_of(io->read_bps, io->write_bps, d->bandwidth, d->write_own_bw, d->write_bandwidth,
                           d->write_shared),
                rep_use_of(rio, wio, d->iops, d->write_own_iops, d->write_iops, d->write_shared), by_iops);
}
