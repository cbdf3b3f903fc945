/* The performance model: groups (workload x mode x precision x device),
 * their resource axes, cells with pooled confidence intervals, knees and
 * per-cell bottlenecks. */
#ifndef DLG_REPORT_MODEL_H
#define DLG_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "rows.h"

/* A disk profile (conf/disks/NAME.ini): what the storage axis is judged by. */
typedef struct rep_disk {
    char *name;
    char *path; /* the file it was read from; NULL: a throttle's limits from result rows */
    double bandwidth; /* bytes/s; 0 = unknown/unlimited */
    double iops;      /* 0 = unknown/unlimited */
    double iops_unit; /* bytes one I/O may carry before it counts as several (AWS: 256 KiB); 0 = any size is one */
    double iops_merge; /* contiguous I/Os at least this big merge up to iops_unit (AWS: 32 KiB); 0 = never */
    /* Writes' own limits where the profile has write_* keys (GCP); else
     * writes share the read limits above (one combined limit, as EBS). */
    bool write_own_bw, write_own_iops;
    double write_bandwidth, write_iops; /* 0 = unlimited */
    /* write_budget = shared (GCP Standard PD): reads and writes draw on one
     * budget, reads/read limit + writes/write limit <= 1. */
    bool write_shared;
    double latency; /* seconds the throttle adds per I/O (`latency`); 0 = none */
    /* Credit bursting (`peak_*`): the rates banked credits go at, above
     * the sustained bandwidth and iops the rules judge by; 0 = none. */
    double peak_bandwidth, peak_iops;
    /* The throttle's own buckets (`burst`, `burst_iops`: bytes and I/Os
     * it lets through at once, refilled at the limits); 0 = none. */
    double burst, burst_iops;
    /* The volume the limits are of (`capacity`, bytes; 0 = not given),
     * and the profile's keys as the throttle parsed them (its option
     * table's order; NULL: none), for rep_disk_sized to work the capacity
     * formulas out at another size. */
    double capacity;
    struct dlg_value *values;
} rep_disk;

typedef struct rep_disks {
    rep_disk *v;
    size_t n;
    /* rep_disks_from_rows: throttles' profiles not found or refused, one
     * line each (also written to stderr), once per profile */
    char **warnings;
    size_t nwarnings;
} rep_disks;

/* Loads every .ini file in dir (a missing dir is not an error). */
int rep_disks_load_dir(rep_disks *d, const char *dir, char *err, size_t errlen);
/* Loads one profile, named name (NULL: the file's `name` key, else its base name). */
int rep_disks_load(rep_disks *d, const char *path, const char *name, char *err, size_t errlen);
/* Adds the storage values of result rows whose storage_config is a
 * throttle (its profile and keys), named as the rows name them; these win
 * over profiles loaded before.  Rows that are no throttle are skipped.
 * A profile the run named relative to its own folder is looked for: as
 * written if absolute, else from the results file's folder up; then by
 * its file name in the shipped conf/disks (found from the executable:
 * rep_shipped_conf) and among the profiles loaded before; last, as
 * written from the current folder.  One not found (or refused) is said
 * once, in d->warnings (the caller prints them). */
int rep_disks_from_rows(rep_disks *d, const rep_rows *rs, char *err, size_t errlen);
const rep_disk *rep_disks_find(const rep_disks *d, const char *name);
/* The profile an instance's disk of that name is: the last loaded from a
 * file (conf/disks, --disks, --disk), never a throttle's limits from
 * result rows that share the name; those only where no file has it. */
const rep_disk *rep_disks_find_file(const rep_disks *d, const char *name);
/* Whether a rate of d grows with its capacity (a *_per_gib formula
 * where no fixed value is given: PD, st1), so that a larger volume of
 * it sustains more. */
bool rep_disk_scales(const rep_disk *d);
/* d as a volume of `bytes` (rounded up to whole GiB): its formulas worked
 * out at that capacity, its fixed limits as they are, its credit
 * bursting left out (the rules judge sustained rates); named
 * "NAME (SIZE)" into name.  False where d has no profile keys or they
 * resolve to no limit there. */
bool rep_disk_sized(const rep_disk *d, double bytes, rep_disk *out, char *name, size_t namelen);
void rep_disks_free(rep_disks *d);

/* REP_AX_DURATION: every value a duration (`sleep = 1500us, 2ms`); sorted
 * by length, but no knee: a longer sleep, step or timeout is no more of a
 * resource. */
typedef enum { REP_AX_NUM, REP_AX_CPUS, REP_AX_SIZE, REP_AX_STORAGE, REP_AX_DURATION, REP_AX_TEXT } rep_axis_kind;

typedef struct rep_axis {
    char *key;
    rep_axis_kind kind;
    char **vals;   /* distinct values, ascending by order */
    double *order; /* sort key: count, bytes, bytes/s, ns; NaN = unknown (last) */
    size_t n;
} rep_axis;

typedef enum {
    REP_BN_COMPUTE,
    REP_BN_DECODE,
    REP_BN_STORAGE,
    REP_BN_MEMORY,
    REP_BN_INPUT, /* input-bound, cause not attributable from the numbers */
    REP_BN_WAITING, /* neither compute nor input: CPUs idle, no accelerator */
    REP_BN_FAILED,
    REP_BN_STORAGE_WRITE, /* writes near the profile's write (or shared) limit */
    REP_BN_CONTENDED,     /* runnable but descheduled: other work or the hypervisor held the CPUs */
    REP_BN_CACHE          /* a STREAM cell whose arrays fit in the last-level cache: cache bandwidth */
} rep_bn;

/* Limits a run applies through a cgroup, and may fail to: the axis key,
 * the result field that says whether it was applied, the cell's bit. */
enum { REP_UNENF_MEMORY = 1u, REP_UNENF_CPU_QUOTA = 2u };
typedef struct rep_limit_axis {
    const char *key, *field;
    unsigned bit;
} rep_limit_axis;
extern const rep_limit_axis rep_limit_axes[2];
/* The REP_UNENF_* bit of the limit an axis of that key sets, 0: none. */
unsigned rep_limit_bit(const char *key);
/* "memory", "cpu_quota" or "memory and cpu_quota": the limits of bits. */
const char *rep_limit_names(unsigned bits);
/* "memory_enforced", ...: the field that says so of the first of bits. */
const char *rep_limit_field(unsigned bits);

typedef struct rep_cell {
    size_t *coord; /* value index per axis */
    const rep_row *row; /* the last ok row (else the last row) */
    size_t nrows;
    bool ok;
    /* its figure is partial rows' alone (no ok row): a repetition cut short
     * by a stop, which --resume measures again; no best nor knee beside
     * cells measured whole (model_rank.c) */
    bool partial;
    /* REP_UNENF_* bits: a limit its axis names that some pooled row says
     * no cgroup applied (`memory_enforced = false`): the cell ran without
     * it, so its figure is no measurement at that value (model_rank.c) */
    unsigned unenforced;
    const char *status;
    size_t nfailed;            /* failed rows (each run's once), even when others ran ok */
    size_t nok;                /* the measured rows pooled (each run's once): its runs are nok + nfailed */
    /* the failed rows' distinct statuses, first seen first (a cell may have
     * been OOM-killed in one run and timed out in another) */
    const char *failed_status[3];
    size_t failed_count[3];   /* the failed rows of each */
    size_t nfailed_status;    /* of them kept */
    bool failed_status_more;  /* and others not kept */
    const char *failed_error; /* the first failed row's `error` (file order), NULL: none said */
    double thr, ci, sd, repeats; /* pooled over rows */
    /* evidence (NaN = not measured) */
    double au, data_wait, cpu_share, iowait, read_bps, limit_share, cold_share, reread, fault_rate, energy_item;
    bool energy_cpu;     /* energy_item is the CPU packages' (RAPL), no GPU energy measured */
    double write_bps;    /* storage_write_bytes / wall_s, or the workload's write_mb_per_s */
    /* what of read_bps reached an emulated disk, and its I/Os per second:
     * emulated_disk_read_* / wall_s (NaN: no throttle counted them) */
    double disk_bps, disk_ios;
    bool limit_writes;   /* limit_share is the write side's (or writes fill most of a shared limit) */
    bool limit_combined; /* limit_share is reads and writes together against one shared limit */
    double loader_busy, loader_read_share; /* io-pipeline's workers: busy share, reading's part of it */
    double read_io_s;          /* the loader's reading time per storage I/O (loader_read_s / storage_ios) */
    double cpu_wait, cpu_steal; /* cpu_wait_share, cpu_steal_share: CPU time the cell was denied */
    double cpu_other;           /* cpu_other_share: the share of its CPUs other processes used */
    rep_bn bn;
    char evidence[512];
} rep_cell;

typedef struct rep_knee {
    size_t val;       /* index into the axis' values */
    size_t cell;      /* the knee's cell */
    size_t npoints;   /* cells on the slice (other axes at their best) */
    double ratio;     /* knee throughput / best */
    bool significant; /* the knee's shortfall from the best exceeds the combined CI */
    long below;       /* the cell of the value below the knee on the slice, -1: none measured */
    /* the value below the knee is below target x best beyond the 95% CIs
     * of both (its and the best's, x target), or failed, or none */
    bool below_clear;
    /* reach_low: the knee's throughput less the same intervals, / best;
     * reach_clear: that is at least 2 x target - 1 (the target's tolerance
     * twice: 90% of the best at 95%), or the knee is the best */
    bool reach_clear;
    double reach_low;
    /* the smallest value below the knee on the slice that the intervals
     * do not show short of the target (both measured twice or more), -1:
     * none; the knee may be as low as it */
    long cheaper;
    /* the knee's and the best's intervals leave it open: it may not reach
     * the target, or a smaller value may (cheaper) */
    bool uncertain;
    /* No knee, val is the best: no value has an order (text; disks without
     * profiles), or the axis is a duration (ordered, but no resource). */
    bool unordered;
    /* ... and unordered because the cells it would be chosen among (the
     * best's tier) ran without the axis' limit (rep_cell.unenforced):
     * their values on it say nothing of what they needed. */
    bool unenforced;
} rep_knee;

typedef struct rep_group {
    char *job; /* jobs of one workload differ in more than their axes */
    char *workload, *mode, *precision, *device, *unit;
    /* The rows' `ranks` (mpirun -np N; 1 where the field is absent): part
     * of the group's identity, as a rate summed over N ranks is no
     * repetition of one rank's cell, nor one GPU's share (scaling.c). */
    long ranks;
    /* The machines those ranks were on (`nodes`; 1 where absent): part of
     * the identity too, as N ranks over several machines measured their
     * network as well; one instance is one machine (recommend.c). */
    long nodes;
    /* What the rows ran with beyond the identity and the axes
     * (model_split.c): the machine (`host`) and the settings, "k=v" of
     * each `config` key not swept and not measurement-only, sorted and
     * joined by '\x1f'.  Rows of one cell pool only where both are equal.
     * NULL settings (and host): the rows carry no `config`, and pool as
     * before it existed. */
    char *host, *settings;
    /* Rows of this identity ran with several settings and were split:
     * what tells this group apart ("sleep=10ms", "host=b"); else NULL. */
    char *split;
    rep_axis *axes;
    size_t naxes;
    rep_cell *cells;
    size_t ncells;
    long *index;      /* cell_index.c: cell indices by coordinate hash, -1 = empty */
    size_t index_cap; /* its slots, a power of two; 0 = no cell yet */
    bool has_best;
    size_t best;
    rep_knee *knees; /* per axis */
    /* The group fed a GPU or an emulated accelerator (a `backend`, `au` or
     * `gpu_name` field): an instance is judged per GPU and scaled by its
     * GPUs.  Otherwise a host workload (preprocess, io, stream...): judged
     * against the whole instance, one copy. */
    bool per_gpu;
    /* The rows carry `busbw_factor` (allreduce, p2p: nccl-tests' fields):
     * they time the link between ranks, not work that ranks share, so the
     * group has no scaling efficiency and no price per byte moved. */
    bool collective;
} rep_group;

typedef struct rep_model {
    rep_group *g;
    size_t n;
    double target;
    /* One line per identity whose rows were split by their settings
     * (model_split.c); the caller prints them. */
    char **warnings;
    size_t nwarnings;
    /* What each `config` key's values mean (settings_kind.h): rows'
     * settings are compared by it. */
    struct rep_kinds *kinds;
} rep_model;

/* Thresholds of the bottleneck rules (docs/report.md). */
#define REP_GIB (1024.0 * 1024.0 * 1024.0) /* a volume's sizes are whole GiB */
#define REP_MIB (1024.0 * 1024.0)          /* bought bandwidth is whole MiB/s */
#define REP_NEAR_LIMIT 0.85  /* read (or write) rate / profile limit */
#define REP_INPUT_WAIT 0.10  /* data-wait fraction that makes a cell input-bound */
#define REP_AU_OK 0.90       /* AU at or above: the accelerator is kept busy */
#define REP_CPU_BUSY 0.85    /* cpu_user_share: the CPUs are saturated */
#define REP_CPU_IDLE 0.20    /* cpu_user_share below, no AU: the step waits on something */
#define REP_COLD_SHARE 0.50  /* block-device reads / storage reads */
#define REP_REREAD 1.10      /* block-device reads / dataset size */
#define REP_FAULT_RATE 100.0 /* major faults per second */
#define REP_LIMIT_LOW 0.50   /* a storage verdict's rate below this share of the profile: not the profile's limit */
#define REP_OVER_LIMIT 1.05  /* ... above this share: reads the sustained limit did not hold (credits, no throttle) */
#define REP_CPU_QUEUED 0.20  /* runnable but queued for this share of the cell's CPU time: contended */
#define REP_CPU_WAIT_RUN 0.5 /* ... and queued for this share of its runnable time (longer than it ran) */
#define REP_CPU_STEAL 0.10   /* cpu_steal_share at or above: the hypervisor took the CPUs (contended) */
#define REP_STEAL_BUSY 0.20  /* ... where the cell kept its CPUs this busy (cpu_user_share; REP_CPU_IDLE) */
#define REP_CPU_OTHER 0.20   /* cpu_other_share at or above, the cell queued: other processes held its CPUs */
#define REP_STREAM_LLC 4.0   /* STREAM's rule: arrays under this many times llc_bytes are partly cache hits */

/* Row r's `ranks`: 1 where absent (results written before it existed). */
long rep_row_ranks(const rep_row *r);
/* Row r's `nodes`: 1 where absent. */
long rep_row_nodes(const rep_row *r);
/* "4 ranks", or "4 ranks on 2 nodes" where the group spans machines. */
void rep_group_ranks_text(const rep_group *g, char *buf, size_t len);

/* a and b group rows of the same workload, mode, precision, device,
 * job, ranks and nodes (model_split.c). */
bool rep_group_same_identity(const rep_group *a, const rep_group *b);
/* a and b ran with the same settings, the keys either one sweeps aside;
 * true where either did not record them (model_split.c).  Hosts are not
 * compared. */
bool rep_group_same_settings(const rep_group *a, const rep_group *b);

/* Group gi counts in the recommendation: selected (NULL: all), measured,
 * at 1 rank, and work rather than a link's rate (recommend.c). */
bool rep_group_counted(const rep_model *m, const bool *selected, size_t gi);
/* Group gi would count but no cell of it ran ok: no instance meets it,
 * and the recommendation says so (recommend.c). */
bool rep_group_unmeasured(const rep_model *m, const bool *selected, size_t gi);

int rep_model_build(rep_model *m, const rep_rows *rs, const rep_disks *disks, double target, char *err,
                    size_t errlen);
void rep_model_free(rep_model *m);

/* A short name for group gi in lists and reasons: workload[/mode], plus
 * the job (and precision, device) where another group shares the rest,
 * and "(N ranks)" for ranks > 1 ("(N ranks on M nodes)" for nodes > 1). */
void rep_group_tag(const rep_model *m, size_t gi, char *buf, size_t len);

/* Cell with these coordinates, or -1 (cell_index.c). */
long rep_group_find(const rep_group *g, const size_t *coord);
/* Indexes the group's last cell, just added; -1: out of memory. */
int rep_group_index_last(rep_group *g);
long rep_group_axis(const rep_group *g, const char *key);
/* Whether g's rows hold two values or more on axis a: a tag every row has
 * alike (a metric named like its job's setting is a tag, swept or not:
 * plan.c) places the cells but has no knee to tell. */
bool rep_axis_swept(const rep_group *g, size_t a);
/* How many of g's axes are swept so. */
size_t rep_group_nswept(const rep_group *g);

/* What failed in cell c: "error", or with several failed rows each
 * status and its count, "error x2, timeout x1" (model_pool.c). */
void rep_cell_failures_text(const rep_cell *c, char *buf, size_t len);

/* Classifies one cell, filling bn and evidence (bottleneck.c). */
void rep_cell_classify(rep_cell *c, const rep_group *g, const rep_disks *disks);
const char *rep_bn_name(rep_bn b);

#endif
