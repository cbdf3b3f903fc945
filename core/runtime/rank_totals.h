/* A repetition's figures for the whole job under several ranks (DESIGN.md:
 * "results are aggregated on rank 0"): each rank's own figures of its
 * timed steps, and the row's from all of them.  What a process counts is
 * summed over the ranks, what a machine counts (its disks, its CPU
 * packages' energy, its iowait) is taken once per node, from the node's
 * lowest rank, GPU stats once per distinct GPU (node, NVML index), and
 * what a machine had to give (memory, CPUs) is summed over a node's ranks,
 * the largest node's figure.  Alone it is the rank's own figures. */
#ifndef DLG_RUNTIME_RANK_TOTALS_H
#define DLG_RUNTIME_RANK_TOTALS_H

#include "cpu_energy.h"
#include "cpuset.h"
#include "runner.h"
#include "sched_stat.h"

#include <stddef.h>
#include <stdint.h>

/* One rank's figures of one repetition.  All doubles: the ranks exchange
 * them in one allreduce of a vector of the ranks' structs (their CPU
 * masks after them), each rank writing its own slot (counts stay exact
 * up to 2^53). */
typedef struct dlg_rank_figs {
    double node; /* its node's index (comm.h's dlg_comm_node) */
    double gpu;  /* the NVML index of the GPU its cell runs on, -1 for none */
    /* its process's own counters over the timed steps */
    double cpu_user_s, cpu_sys_s;
    double cpu_window_cpu_s; /* CPU time (ns clock) in cpu_user_share's window */
    double cpu_window_cap_s; /* that window's wall time x the rank's CPU capacity */
    double read_bytes, storage_bytes, storage_ios, storage_write_bytes, storage_write_ios;
    double major_faults, ctx_voluntary, ctx_involuntary;
    /* what an emulated disk charged of its reads (disk_counted 0 or 1) */
    double disk_counted, disk_charged_bytes, disk_charged_ios;
    /* the bytes of the distinct files it opened to read so far, setup
     * included (file_set.h); files_lost 1: some were not counted */
    double files_bytes, files_lost;
    /* what its machine counted, every process on it */
    double disk_read_bytes;
    double iowait_fraction; /* since the cell's first setup; < 0 unknown */
    double rapl_have, rapl_have_dram, rapl_pkg_lost, rapl_dram_lost; /* 0 or 1 */
    double rapl_pkg_j, rapl_dram_j, rapl_s;
    /* what it held: its peak RSS in the cell so far, its CPUs */
    double rss_peak, cpus_used, cpu_capacity;
    /* its GPU's NVML stats over the timed steps (gpu_samples 0: none) */
    double gpu_samples, gpu_util, gpu_power_w, gpu_energy_j, gpu_mem_peak, gpu_seconds;
    /* its timed steps' input wait and summed latency (data_wait_fraction) */
    double wait_ns, busy_ns;
    /* its scheduler readings over the window (sched_stat.h; have_*: 0 or 1) */
    double sch_have_wait, sch_oncpu_ns, sch_delay_ns;
    double sch_have_steal, sch_steal, sch_ticks;
    double sch_have_other, sch_busy, sch_own, sch_span, sch_ncpus;
} dlg_rank_figs;

#define DLG_RANK_FIGS_DOUBLES (sizeof(dlg_rank_figs) / sizeof(double))

/* The job's figures of one repetition, as the row adds them up. */
typedef struct dlg_rep_figs {
    double cpu_user_s, cpu_sys_s, cpu_window_cpu_s, cpu_window_cap_s;
    uint64_t read_bytes, storage_bytes, storage_ios, storage_write_bytes, storage_write_ios;
    uint64_t major_faults, ctx_voluntary, ctx_involuntary;
    bool disk_counted;         /* some rank's emulated disk counted its reads */
    uint64_t disk_charged_bytes;
    double disk_charged_ios;
    uint64_t files_bytes; /* the largest of any rank's (they read one data set, as a rule) */
    bool files_lost;      /* some rank's count is short */
    uint64_t disk_read_bytes;
    double iowait_fraction;    /* mean over the nodes that read it; < 0 none did */
    dlg_cpu_energy cpu_energy; /* have false: no node read its counters */
    uint64_t rss_peak;
    int cpus_used;
    double cpu_capacity;
    int gpu_samples;
    double gpu_util_sum_s, gpu_power_sum_s, gpu_seconds, gpu_energy_j;
    uint64_t gpu_mem_peak;
    int gpus, nodes;           /* distinct GPUs with stats, distinct nodes */
    uint64_t wait_ns, busy_ns; /* the rank's whose wait was the largest share */
    dlg_sched_totals sched;    /* the job's window: cpu_wait_share and the others */
} dlg_rep_figs;

/* A CPU set travels in the ranks' vector of doubles as a mask of chunks
 * of 52 bits (exact in a double): chunk c holds ids 52c .. 52c + 51.
 * How many chunks s's highest id needs (0 for an empty set). */
#define DLG_CPU_MASK_BITS 52
size_t dlg_cpu_mask_chunks(const dlg_cpuset *s);
/* s's ids below 52 x chunks into mask[0..chunks). */
void dlg_cpu_mask_pack(const dlg_cpuset *s, double *mask, size_t chunks);

/* all[0..n) in rank order (n >= 1) -> *out; masks[i * chunks ..] rank i's
 * CPU set (an empty mask, or masks NULL: not known).  A node's machine
 * figures are its lowest rank's; a GPU's stats are those of its lowest
 * rank that has any.  A node's cpus_used: the distinct CPUs of its ranks'
 * sets, or the sum of the vCPUs each rank was granted where that is less
 * (ranks under a CPU quota, dlg_cpus_granted); a rank whose set is not
 * known adds its granted vCPUs; cpu_capacity likewise.  RAPL: where some
 * node read its counters and another did not (or lost part of them), the
 * sum would miss that node's packages, so it is marked lost (no field
 * written); likewise DRAM where only some nodes have DRAM zones.  The
 * scheduler's figures: run delay and on-CPU time summed over the ranks
 * (the job's threads), steal ticks and ticks summed over the ranks (each
 * rank's CPUs), other processes' share per node where its ranks' sets are
 * all the same (the node's CPUs read once, less every rank's own time) or
 * all disjoint (summed); a node of partly overlapping sets leaves it out. */
void dlg_rank_figs_total(const dlg_rank_figs *all, size_t n, const double *masks, size_t chunks,
                         dlg_rep_figs *out);

/* Adds a repetition's figures to the cell's: counters (the input wait and
 * the scheduler's among them) summed, peaks kept, CPUs, nodes and the
 * iowait share (since the cell's start) as the latest repetition's. */
void dlg_rep_figs_add(dlg_cell_result *res, const dlg_rep_figs *f);

#endif
