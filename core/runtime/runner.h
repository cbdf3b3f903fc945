/* Runs one cell: setup, warm-up, timed steps, repetitions, teardown. */
#ifndef DLG_RUNNER_H
#define DLG_RUNNER_H

#include "cpu_energy.h"
#include "histogram.h"
#include "sched_stat.h"
#include "run.h"
#include "stats.h"

#include <stdbool.h>

typedef struct dlg_wfield {
    const char *key;   /* the workload's metric name */
    dlg_field_type type;
    double sum;        /* numeric fields: mean over repetitions */
    int count;
    char *text;        /* string fields: the last repetition's */
    bool warned;       /* reported with the wrong call: said once a cell */
    int rep;           /* 1 + the repetition that reported it last, 0 none */
    double last;       /* numeric fields: that repetition's value, in sum */
    bool warned_twice; /* reported twice in one repetition: said once a cell */
} dlg_wfield;

typedef struct dlg_cell_result {
    const char *status;    /* ok | partial | error */
    char error[2048];
    const char *unit;
    dlg_summary throughput;
    uint64_t items, steps;
    int reps;              /* complete repetitions: those throughput is over
                            * (one cut by a stop or timeout only counts in it
                            * where none is complete) */
    int warmup;
    double wall_s;
    dlg_histogram *latency;
    uint64_t wait_ns, busy_ns;
    double cpu_user_s, cpu_sys_s;
    /* the process's CPU time (ns clock) over the wall time of the window
     * in which cpu_user_s/cpu_sys_s were read: cpu_user_share's terms;
     * cap_s: the window x the CPUs' capacity, summed over the ranks */
    double cpu_window_s, cpu_window_cpu_s, cpu_window_cap_s;
    uint64_t rss_peak, read_bytes, storage_bytes, storage_ios;
    uint64_t disk_read_bytes; /* the machine's disks, all processes */
    uint64_t storage_write_bytes, storage_write_ios; /* written through the host */
    bool disk_counted;        /* an emulated disk said what of the reads reached it: */
    uint64_t disk_charged_bytes;
    double disk_charged_ios;
    uint64_t files_bytes;     /* the distinct files read through storage, the outputs kept (file_set.h) */
    bool files_lost;          /* ... some not counted: files_bytes unknown */
    int cpus_used;
    int ranks;                /* the run's ranks, whose items the cell sums */
    int nodes;                /* the machines they are on (rank_totals.h) */
    double cpu_capacity;      /* CPUs' worth of time the cell could use: its
                               * pinned CPUs, or less under a CPU quota */
    char cpu_list[256];       /* the CPUs the cell ran on, e.g. "0,2,4-5" */
    /* GPU (NVML) during timed steps, when the cell runs on one */
    char gpu_name[96];
    int gpus;                 /* distinct GPUs the stats below cover */
    int gpu_samples;
    double gpu_util_sum_s, gpu_power_sum_s, gpu_seconds, gpu_energy_j;
    uint64_t gpu_mem_peak;
    dlg_cpu_energy cpu_energy; /* RAPL packages during timed steps */
    uint64_t major_faults, ctx_voluntary, ctx_involuntary;
    double iowait_fraction;   /* host CPUs' iowait share of the timed steps */
    dlg_sched_totals sched;   /* run delay and steal during timed steps */
    int64_t start_realtime_ns;
    dlg_wfield *wf;
    size_t nwf;
} dlg_cell_result;

int dlg_cell_result_init(dlg_cell_result *r);
void dlg_cell_result_fini(dlg_cell_result *r);

/* Never fails the run: a failing cell comes back with status "error". */
void dlg_run_cell(dlg_run *run, const dlg_cell *cell, dlg_cell_result *res);

#endif
