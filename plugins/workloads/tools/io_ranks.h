/* The io workload under several ranks (mpirun -np N): each rank reads its
 * own part of the file (sequential passes start at its share, random
 * reads draw from a seed of its own), and its row describes the job, as
 * fio's group_reporting: reads and bytes summed over the ranks, iops
 * over the slowest rank's window, latencies from every rank's reads.
 * Alone (size 1, or a host without the ranks ABI) it changes nothing. */
#ifndef DLG_TOOLS_IO_RANKS_H
#define DLG_TOOLS_IO_RANKS_H

#include <dlgauge/plugin.h>

#include <stdint.h>

#include "histogram.h"

typedef struct io_ranks {
    const dlg_host *h;
    int rank, size;   /* 0 and 1 when alone */
    int64_t *words;   /* size > 1: the merge's allreduce buffer, made at setup */
    size_t nwords;
} io_ranks;

/* What a rank (or the job) read in a repetition's timed steps. */
typedef struct io_tally {
    uint64_t ios, bytes, crc_sum;
    uint64_t window_ns; /* first step's start to last step's end */
} io_tally;

/* At setup (no collective): the rank and size, and the merge's buffer
 * when size > 1.  0 or -code after an error line. */
int io_ranks_init(io_ranks *r, const dlg_host *h);
/* This rank's random seed: the job's own alone or on rank 0. */
uint64_t io_ranks_seed(const io_ranks *r, uint64_t seed);
/* The block this rank's sequential pass starts at, of nblocks. */
uint64_t io_ranks_first_block(const io_ranks *r, uint64_t nblocks);
/* In report, on every rank alike (one allreduce): the job's tally into
 * *job and the ranks' latencies merged into `lat` (in place; all ranks
 * get the job's).  Alone: *job = *mine, lat untouched.  0 or -code. */
int io_ranks_merge(io_ranks *r, const io_tally *mine, io_tally *job, dlg_histogram *lat);
void io_ranks_free(io_ranks *r);

#endif
