/* How many I/Os the emulated disk counts for one request, as the provider
 * counts them: AWS EBS SSD counts an I/O up to 256 KiB (iops_unit) as one,
 * splits a larger one, and merges physically contiguous I/Os of at least
 * 32 KiB (iops_merge) up to 256 KiB, so 8 sequential 32 KiB reads are one. */
#ifndef DLG_THROTTLE_COUNT_H
#define DLG_THROTTLE_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "throttle_opts.h"

/* A file's current contiguous stream (one per file: its own reads are
 * what lies contiguous on the emulated disk). */
typedef struct thr_run {
    uint64_t end; /* offset just past the last I/O */
    double fill;  /* bytes of the stream's last, partly filled unit */
    bool open;    /* the last I/O may be merged with */
} thr_run;

/* I/Os charged for n bytes at off (0 when it merges into a unit already
 * charged); run may be NULL (no merging).  Updates run. */
double thr_io_units(const thr_limits *lim, thr_run *run, uint64_t off, size_t n);

/* I/Os charged for `count` I/Os of n bytes each that follow one another in
 * one file (contiguous) or lie apart: what thr_io_units sums to over them,
 * without calling it count times (the report's disk model). */
double thr_stream_units(const thr_limits *lim, double count, double n, bool contiguous);

#endif
