/* Which ranks share this process's CPU set (affinity.h's dlg_cpu_share):
 * ranks that mpirun did not bind (--bind-to none, or more ranks than
 * cores) all start on the same set, and pinned each to its first CPUs
 * they would all run on the same ones while the others idle. */
#ifndef DLG_CPU_SHARE_H
#define DLG_CPU_SHARE_H

#include "affinity.h"
#include "plan.h"
#include "run.h"

#include <stddef.h>

/* rows[0..n) of 1 + chunks doubles each, rank order: a rank's node, then
 * its set (rank_totals.h's mask; all zero: not known).  Rank me's place
 * among the ranks of its node with the same known set, and their count;
 * {0, 1} for a set not known. */
dlg_cpu_share dlg_cpu_share_find(const double *rows, size_t n, size_t chunks, size_t me);

/* The same from every rank's own set and node (two collectives on the
 * runner's channel; every rank calls it); alone {0, 1}.  A failed
 * exchange ends every rank (dlg_ranks_abort). */
dlg_cpu_share dlg_cpu_share_exchange(dlg_run *run, int node);

/* Ranks that share their `avail` CPUs, more of them than the CPUs hold
 * slices of cell's cpus: a warning on stderr at the cpus key's line, said
 * by the first of them (share.index 0). */
void dlg_cpu_share_warn(const dlg_cell *cell, dlg_cpu_share share, int avail);

#endif
