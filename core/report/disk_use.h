/* How much of a disk's limits a rate of reads and writes uses, as the
 * throttle charges them: the bottleneck rules judge a cell by it, the
 * recommendation an instance's disks and block-storage caps. */
#ifndef DLG_REPORT_DISK_USE_H
#define DLG_REPORT_DISK_USE_H

#include <stdbool.h>

#include "model.h"

/* How near one limit (bandwidth or IOPS) a rate runs. */
typedef struct rep_limit_use {
    double share;  /* of the limit; NaN = not judged */
    bool writes;   /* the write side binds */
    bool combined; /* reads and writes against one shared limit */
} rep_limit_use;

/* Reads r and writes w per second (NaN = not measured) against one limit:
 * each against its own where writes have one (the larger share binds);
 * with a shared budget (write_budget = shared) the two shares add up;
 * else both against the one limit. */
rep_limit_use rep_use_of(double r, double w, double limit, bool write_own, double wlimit, bool shared);
/* The binding one of the bandwidth and IOPS uses (bandwidth on a tie). */
rep_limit_use rep_use_binding(rep_limit_use bw, rep_limit_use io);

/* Whether the row's reads follow one another in a file, so that the disk
 * merges them (iops_merge). */
bool rep_reads_contiguous(const rep_row *r);
/* I/Os as the throttle counts `ios` I/Os carrying `bytes` on disk d. */
double rep_charged_ios(const rep_disk *d, double ios, double bytes, bool contiguous);
/* The bytes per second d sustains: its bandwidth, or what its IOPS carry
 * in iops_unit I/Os where that is less (st1 at 2 TiB: 80 x 1 MiB, though
 * its bandwidth key is the 500 MiB/s its credits reach); 0 = unknown. */
double rep_disk_sustained_bw(const rep_disk *d);

/* One copy of a cell's storage I/O, per second (NaN = not measured). */
typedef struct rep_io_rate {
    double read_bps, write_bps;
    double read_ios, write_ios; /* I/Os issued */
    bool contiguous;            /* the reads merge (rep_reads_contiguous) */
} rep_io_rate;

/* The I/O an ok, classified cell measured. */
void rep_cell_io(const rep_cell *c, rep_io_rate *io);
bool rep_io_measured(const rep_io_rate *io);

/* n copies of io against limits bw (bytes/s) and iops (0 = none) that reads
 * and writes share, I/Os counted as disk d counts them (d may be NULL). */
rep_limit_use rep_io_use(const rep_io_rate *io, double n, double bw, double iops, const rep_disk *d, bool *by_iops);
/* One copy of io against disk d's own limits, its write limits and write
 * budget as the bottleneck rules judge them. */
rep_limit_use rep_io_use_disk(const rep_io_rate *io, const rep_disk *d, bool *by_iops);

#endif
