/* The tools' workloads under several ranks (mpirun -np N): what each rank
 * reads (a seed and a starting point of its own) and one allreduce in
 * report that hands every rank all ranks' counts, so that a row describes
 * the job, as fio's group_reporting: io sums its reads and merges their
 * latencies, io-pipeline sums its samples and times and takes the
 * starved rank's AU.  Alone (size 1, or a host without the ranks ABI) the
 * gather hands back this rank's own counts. */
#ifndef DLG_TOOLS_RANKS_H
#define DLG_TOOLS_RANKS_H

#include <dlgauge/plugin.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histogram.h"

typedef struct tools_ranks {
    const dlg_host *h;
    int rank, size;    /* 0 and 1 when alone */
    size_t slot_words; /* each rank's counts in a gather */
    bool hist;         /* a gather merges a latency histogram too */
    int64_t *words;    /* size > 1: the allreduce's buffer, made at setup */
    size_t nwords;
} tools_ranks;

/* At setup (no collective): the rank and size and, when size > 1, the
 * buffer of a gather of slot_words counts per rank (and of a histogram
 * with hist).  who names the workload in an error.  0 or -code after an
 * error line. */
int tools_ranks_init(tools_ranks *r, const dlg_host *h, const char *who, size_t slot_words, bool hist);
/* This rank's random seed: the job's own alone or on rank 0. */
uint64_t tools_ranks_seed(const tools_ranks *r, uint64_t seed);
/* Where this rank's share of n things starts (rank x n / size). */
uint64_t tools_ranks_share_start(const tools_ranks *r, uint64_t n);
/* In report, on every rank alike (one allreduce): every rank's counts
 * (mine: this rank's slot_words) in *all, *nranks slots of slot_words,
 * rank order; with hist, lat becomes every rank's merged (in place).
 * Alone: *all = mine, *nranks = 1, lat untouched.  0 or -code. */
int tools_ranks_gather(tools_ranks *r, const uint64_t *mine, dlg_histogram *lat, const uint64_t **all,
                       size_t *nranks);
void tools_ranks_free(tools_ranks *r);

#endif
