/* The calling thread's OpenMP team for one cell: its size, and its pool
 * threads kept on the caller's CPUs. */
#ifndef DLG_NN_OMP_TEAM_H
#define DLG_NN_OMP_TEAM_H

/* Sets the calling thread's team size to threads (> 0) and moves every
 * pool thread of that team that may run outside the caller's CPU set onto
 * it.  libgomp keeps its pool threads from cell to cell in one process,
 * each with the CPUs its creator had then: without this, an in-process
 * cell pinned to other CPUs than an earlier one would run part of its team
 * on the earlier cell's CPUs.  A pool thread already inside the set (as
 * OMP_PROC_BIND places it) is left where it is.  Call it once per cell
 * (it runs one parallel region), not per step.  Returns 0, or -1 when the
 * caller's CPU set cannot be read (the size is set regardless). */
int dlg_omp_team(int threads);

#endif
