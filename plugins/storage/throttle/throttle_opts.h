/* The throttle backend's option table, and the limits resolved from it
 * (explicit options over the profile file over built-in defaults). */
#ifndef DLG_THROTTLE_OPTS_H
#define DLG_THROTTLE_OPTS_H

#include <dlgauge/plugin.h>

enum thr_opt {
    THR_INNER,
    THR_PROFILE,
    THR_CAPACITY,
    THR_BANDWIDTH,
    THR_BANDWIDTH_BASE,
    THR_BANDWIDTH_PER_GIB,
    THR_BANDWIDTH_MAX,
    THR_IOPS,
    THR_IOPS_BASE,
    THR_IOPS_PER_GIB,
    THR_IOPS_MAX,
    THR_WRITE_BANDWIDTH,
    THR_WRITE_BANDWIDTH_BASE,
    THR_WRITE_BANDWIDTH_PER_GIB,
    THR_WRITE_BANDWIDTH_MAX,
    THR_WRITE_IOPS,
    THR_WRITE_IOPS_BASE,
    THR_WRITE_IOPS_PER_GIB,
    THR_WRITE_IOPS_MAX,
    THR_WRITE_BUDGET,
    THR_IOPS_UNIT,
    THR_IOPS_MERGE,
    THR_BURST,
    THR_BURST_IOPS,
    THR_PEAK_BANDWIDTH,
    THR_PEAK_IOPS,
    THR_LATENCY,
    THR_LATENCY_DIST,
    THR_LATENCY_JITTER,
    THR_SEED,
    THR_PAGE_CACHE,
    THR_OPT_COUNT
};

enum thr_dist { THR_DIST_FIXED, THR_DIST_UNIFORM, THR_DIST_EXPONENTIAL, THR_DIST_NORMAL };

/* write_budget: the order of its choices */
enum thr_write_budget { THR_WRITES_OWN, THR_WRITES_SHARED };

/* page_cache: the order of its choices */
enum thr_page_cache { THR_CACHE_IGNORE, THR_CACHE_MODEL };

extern const dlg_option thr_options[THR_OPT_COUNT + 1];

/* The emulated disk, in plain numbers (0 = unlimited). */
typedef struct thr_limits {
    double bandwidth;   /* bytes/s (reads; writes too unless write_own_bw) */
    double iops;        /* I/Os per second (reads; writes too unless write_own_iops) */
    /* Writes have their own limits (GCP) only where a write_* key is
     * given; else they draw on the read buckets: one combined limit (EBS). */
    bool write_own_bw, write_own_iops;
    double write_bandwidth, write_iops; /* bytes/s, I/Os per second; 0 = unlimited */
    /* write_budget = shared: reads and writes draw on one device budget, a
     * read costing 1/read limit and a write 1/write limit of a second
     * (GCP Standard PD), instead of each getting its full limit. */
    bool write_shared;
    double iops_unit;   /* bytes one I/O may carry before it counts as more; 0 = any */
    double iops_merge;  /* contiguous I/Os at least this big merge up to iops_unit; 0 = never */
    double burst;       /* bytes the bandwidth buckets hold (0 = no burst) */
    double burst_iops;  /* I/Os the IOPS buckets hold (0 = no burst) */
    /* Credit bursting (gp2, Azure Premium SSD): while a bucket holds
     * tokens, I/O flows at most at this rate, not at once (0 = at once). */
    double peak_bandwidth;
    double peak_iops;
    uint64_t latency;   /* ns, mean */
    uint64_t jitter;    /* ns */
    int dist;           /* enum thr_dist */
    uint64_t seed;
} thr_limits;

/* Resolves limits from merged option values (index = enum thr_opt), applying
 * the capacity formulas; reports a bad combination through h->error. */
int thr_resolve(const dlg_host *h, const dlg_value *v, const char *origin, thr_limits *out);

#endif
