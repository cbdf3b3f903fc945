#include "throttle_opts.h"

#include <math.h>

#include "units.h"

/* Keys a profile may set have no table default, so that `set` tells an
 * explicit value from an absent one; the defaults are in the help text. */
const dlg_option thr_options[THR_OPT_COUNT + 1] = {
    [THR_INNER] = {"inner", DLG_OPT_STRING, "posix", NULL, NULL, NULL,
                   "backend doing the real I/O: a [storage NAME] or a backend type.  The throttle "
                   "takes queued reads over any of them (posix too), so io's depth defaults to "
                   "32 here, where over posix itself it is 1", DLG_OPT_STORAGE},
    [THR_PROFILE] = {"profile", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                     "disk profile INI (conf/disks/X.ini) giving the keys below; explicit keys win",
                     DLG_OPT_NOSWEEP | DLG_OPT_PATH_IN},
    [THR_CAPACITY] = {"capacity", DLG_OPT_SIZE, NULL, "1GiB", NULL, NULL,
                      "emulated disk size; the *_per_gib formulas use it", 0},
    [THR_BANDWIDTH] = {"bandwidth", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                       "throughput cap per second, e.g. 150MB: each I/O takes size / bandwidth, after "
                       "those queued before it; 0 = unlimited (default: formula, else unlimited)", 0},
    [THR_BANDWIDTH_BASE] = {"bandwidth_base", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                            "formula: bandwidth = min(base + per_gib * capacity_GiB, max)", 0},
    [THR_BANDWIDTH_PER_GIB] = {"bandwidth_per_gib", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                               "formula: bytes/s added per GiB of capacity (0.5MB)", 0},
    [THR_BANDWIDTH_MAX] = {"bandwidth_max", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                           "formula: upper bound (default none)", 0},
    [THR_IOPS] = {"iops", DLG_OPT_INT, NULL, "0", "100000000", NULL,
                  "I/O operations per second cap; 0 = unlimited (default: formula, else unlimited)", 0},
    [THR_IOPS_BASE] = {"iops_base", DLG_OPT_INT, NULL, "0", "100000000", NULL,
                       "formula: iops = min(base + per_gib * capacity_GiB, max)", 0},
    [THR_IOPS_PER_GIB] = {"iops_per_gib", DLG_OPT_DOUBLE, NULL, "0", "1000000", NULL,
                          "formula: IOPS added per GiB of capacity", 0},
    [THR_IOPS_MAX] = {"iops_max", DLG_OPT_INT, NULL, "0", "100000000", NULL,
                      "formula: upper bound (default none)", 0},
    [THR_WRITE_BANDWIDTH] = {"write_bandwidth", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                             "write throughput cap per second, 0 = unlimited; with any write_* key writes have "
                             "their own limits (GCP), else they share the read ones (AWS)", 0},
    [THR_WRITE_BANDWIDTH_BASE] = {"write_bandwidth_base", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                                  "formula: write_bandwidth = min(base + per_gib * capacity_GiB, max)", 0},
    [THR_WRITE_BANDWIDTH_PER_GIB] = {"write_bandwidth_per_gib", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                                     "formula: write bytes/s added per GiB of capacity", 0},
    [THR_WRITE_BANDWIDTH_MAX] = {"write_bandwidth_max", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                                 "formula: upper bound of write_bandwidth (default none)", 0},
    [THR_WRITE_IOPS] = {"write_iops", DLG_OPT_INT, NULL, "0", "100000000", NULL,
                        "write I/O operations per second cap, 0 = unlimited; absent: writes share iops", 0},
    [THR_WRITE_IOPS_BASE] = {"write_iops_base", DLG_OPT_INT, NULL, "0", "100000000", NULL,
                             "formula: write_iops = min(base + per_gib * capacity_GiB, max)", 0},
    [THR_WRITE_IOPS_PER_GIB] = {"write_iops_per_gib", DLG_OPT_DOUBLE, NULL, "0", "1000000", NULL,
                                "formula: write IOPS added per GiB of capacity", 0},
    [THR_WRITE_IOPS_MAX] = {"write_iops_max", DLG_OPT_INT, NULL, "0", "100000000", NULL,
                            "formula: upper bound of write_iops (default none)", 0},
    [THR_WRITE_BUDGET] = {"write_budget", DLG_OPT_ENUM, NULL, NULL, NULL, "own|shared",
                          "how writes with write_* limits meet reads: own (default) = each side its full "
                          "limit at once; shared = one device budget, a read costing 1/read limit and "
                          "a write 1/write limit of a second (GCP Standard PD)", 0},
    [THR_IOPS_UNIT] = {"iops_unit", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                       "an I/O larger than this counts as ceil(size/unit) I/Os (AWS: 256KiB); 0 = one", 0},
    [THR_IOPS_MERGE] = {"iops_merge", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                        "with iops_unit: a file's contiguous I/Os of at least this size merge into "
                        "one until they fill a unit (AWS: 32KiB); 0 = never", 0},
    [THR_BURST] = {"burst", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                   "bytes a bucket lets through at once after idle (default 0: none, as "
                   "gp3 and PD, which throttle at the ms scale)", 0},
    [THR_BURST_IOPS] = {"burst_iops", DLG_OPT_INT, NULL, "0", "100000000", NULL,
                        "I/Os a bucket lets through at once after idle (default 0: none)", 0},
    [THR_PEAK_BANDWIDTH] = {"peak_bandwidth", DLG_OPT_SIZE, NULL, "0", NULL, NULL,
                            "with burst: the rate the banked bytes flow at (credit bursting, Azure "
                            "Premium SSD: 170MB), instead of at once; 0 = at once", 0},
    [THR_PEAK_IOPS] = {"peak_iops", DLG_OPT_INT, NULL, "0", "100000000", NULL,
                       "with burst_iops: the rate the banked I/Os go at (credit bursting, gp2: 3000 "
                       "while its 5.4 million I/O credits last), instead of at once; 0 = at once", 0},
    [THR_LATENCY] = {"latency", DLG_OPT_DURATION, NULL, "0", "10s", NULL,
                     "mean added latency per I/O, after its transfer time (default 0)", 0},
    [THR_LATENCY_DIST] = {"latency_dist", DLG_OPT_ENUM, NULL, NULL, NULL,
                          "fixed|uniform|exponential|normal",
                          "latency distribution (default fixed); mean is always `latency`", 0},
    [THR_LATENCY_JITTER] = {"latency_jitter", DLG_OPT_DURATION, NULL, "0", "10s", NULL,
                            "uniform: half-width (at most latency); normal: stddev (at most latency / 2); "
                            "exponential: tail mean (at most latency); default = latency, normal: "
                            "latency / 2", 0},
    [THR_SEED] = {"seed", DLG_OPT_INT, NULL, "0", NULL, NULL,
                  "seed of the latency random stream (default 1)", 0},
    [THR_PAGE_CACHE] = {"page_cache", DLG_OPT_ENUM, NULL, NULL, NULL, "ignore|model",
                        "ignore (default): every read is charged, as if the page cache missed; model: "
                        "a read the page cache serves is free, a miss costs its pages and readahead's "
                        "pages cost when read (mincore; set the job's memory to size the cache as the "
                        "emulated machine's)", 0},
    [THR_OPT_COUNT] = {0},
};

static double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

/* min(base + per_gib * cap, max) where any formula key is given. */
static int formula(const dlg_host *h, const dlg_value *v, int direct, int base, int per_gib,
                   int max, bool is_double_rate, const char *origin, double *out)
{
    *out = 0;
    if (v[direct].set) {
        *out = (double)v[direct].i;
        return 0;
    }
    if (!v[base].set && !v[per_gib].set && !v[max].set)
        return 0;
    double rate = v[per_gib].set ? (is_double_rate ? v[per_gib].d : (double)v[per_gib].i) : 0;
    if (rate > 0 && !v[THR_CAPACITY].set)
        return h->error(h, DLG_EINVAL, "%s%s needs capacity (e.g. capacity = 500GiB)", origin,
                        thr_options[per_gib].name);
    double x = (v[base].set ? (double)v[base].i : 0) + rate * gib((double)v[THR_CAPACITY].i);
    if (v[max].set && v[max].i > 0 && x > (double)v[max].i)
        x = (double)v[max].i;
    if (x <= 0)
        return h->error(h, DLG_EINVAL, "%s%s formula gives %g: set %s or a positive %s", origin,
                        thr_options[direct].name, x, thr_options[direct].name,
                        thr_options[base].name);
    *out = x;
    return 0;
}

/* Whether any of the four keys of one limit (direct, base, per_gib, max) is given. */
static bool any_set(const dlg_value *v, int first)
{
    return v[first].set || v[first + 1].set || v[first + 2].set || v[first + 3].set;
}

/* The shaper clamps uniform and normal samples to [0, 2 x latency], so
 * that the mean stays `latency`.  Refused where that would cut the spread
 * asked for: a uniform half-width over latency, and a normal stddev over
 * latency / 2.  At 2 stddevs the clamp moves 2.3% of samples at each end,
 * the stddev stays within 4% of the one asked for; at 1 stddev (jitter =
 * latency) it was 28% short, and at 10 (10 ms over 1 ms) 90%: ~1 ms. */
static int check_symmetric(const dlg_host *h, const thr_limits *lim, const char *origin)
{
    bool uniform = lim->dist == THR_DIST_UNIFORM, normal = lim->dist == THR_DIST_NORMAL;
    uint64_t honoured = uniform ? lim->latency : lim->latency / 2;
    if (!(uniform || normal) || lim->jitter <= honoured)
        return 0;
    char j[32], l[32], most[32];
    dlg_format_duration((int64_t)lim->jitter, j, sizeof j);
    dlg_format_duration((int64_t)lim->latency, l, sizeof l);
    dlg_format_duration((int64_t)honoured, most, sizeof most);
    h->error(h, DLG_EINVAL,
             "%slatency_jitter = %s is over what latency_dist = %s honours with latency = %s: "
             "samples are clamped to [0, 2 x latency] to keep the mean, which would cut the %s; "
             "the largest latency_jitter honoured is %s (%s)",
             origin, j, uniform ? "uniform" : "normal", l, uniform ? "half-width" : "stddev", most,
             uniform ? "= latency" : "= latency / 2");
    return -1;
}

/* A peak rate paces a burst: it needs credits named (0 is a volume
 * drained of them, which then runs at its baseline), and a limit it is
 * above (at or below it, the peak would be the limit). */
static int check_peak(const dlg_host *h, const char *what, double peak, double rate, const dlg_value *burst,
                      const char *burst_key, const char *origin)
{
    if (peak <= 0)
        return 0;
    if (!burst->set)
        h->error(h, DLG_EINVAL, "%speak_%s needs %s (the credits the peak rate spends, e.g. gp2's "
                 "burst_iops = 5400000; 0: a volume drained of them)", origin, what, burst_key);
    else if (!(rate > 0) || peak <= rate)
        h->error(h, DLG_EINVAL, "%speak_%s = %.0f must be above %s = %.0f (the rate the credits "
                 "come back at)", origin, what, peak, what, rate);
    else
        return 0;
    return -1;
}

int thr_resolve(const dlg_host *h, const dlg_value *v, const char *origin, thr_limits *out)
{
    int rc = formula(h, v, THR_BANDWIDTH, THR_BANDWIDTH_BASE, THR_BANDWIDTH_PER_GIB,
                     THR_BANDWIDTH_MAX, false, origin, &out->bandwidth);
    if (rc == 0)
        rc = formula(h, v, THR_IOPS, THR_IOPS_BASE, THR_IOPS_PER_GIB, THR_IOPS_MAX, true, origin,
                     &out->iops);
    out->write_own_bw = any_set(v, THR_WRITE_BANDWIDTH);
    out->write_own_iops = any_set(v, THR_WRITE_IOPS);
    out->write_shared = v[THR_WRITE_BUDGET].set && v[THR_WRITE_BUDGET].i == THR_WRITES_SHARED;
    if (rc == 0)
        rc = formula(h, v, THR_WRITE_BANDWIDTH, THR_WRITE_BANDWIDTH_BASE,
                     THR_WRITE_BANDWIDTH_PER_GIB, THR_WRITE_BANDWIDTH_MAX, false, origin,
                     &out->write_bandwidth);
    if (rc == 0)
        rc = formula(h, v, THR_WRITE_IOPS, THR_WRITE_IOPS_BASE, THR_WRITE_IOPS_PER_GIB,
                     THR_WRITE_IOPS_MAX, true, origin, &out->write_iops);
    if (rc < 0)
        return rc;
    out->iops_unit = v[THR_IOPS_UNIT].set ? (double)v[THR_IOPS_UNIT].i : 0;
    out->iops_merge = v[THR_IOPS_MERGE].set ? (double)v[THR_IOPS_MERGE].i : 0;
    /* No burst by default: a bucket that banks idle time let 10 ms of I/O
     * through at once after every pause, which gp3 (no burst credits) and
     * PD do not: they throttle micro-bursts within the second. */
    out->burst = v[THR_BURST].set ? (double)v[THR_BURST].i : 0;
    out->burst_iops = v[THR_BURST_IOPS].set ? (double)v[THR_BURST_IOPS].i : 0;
    out->peak_bandwidth = v[THR_PEAK_BANDWIDTH].set ? (double)v[THR_PEAK_BANDWIDTH].i : 0;
    out->peak_iops = v[THR_PEAK_IOPS].set ? (double)v[THR_PEAK_IOPS].i : 0;
    if (check_peak(h, "bandwidth", out->peak_bandwidth, out->bandwidth, &v[THR_BURST], "burst", origin) != 0 ||
        check_peak(h, "iops", out->peak_iops, out->iops, &v[THR_BURST_IOPS], "burst_iops", origin) != 0)
        return -DLG_EINVAL;
    out->latency = v[THR_LATENCY].set ? (uint64_t)v[THR_LATENCY].i : 0;
    out->dist = v[THR_LATENCY_DIST].set ? (int)v[THR_LATENCY_DIST].i : THR_DIST_FIXED;
    out->jitter = v[THR_LATENCY_JITTER].set ? (uint64_t)v[THR_LATENCY_JITTER].i
                  : out->dist == THR_DIST_NORMAL ? out->latency / 2
                                                 : out->latency;
    out->seed = v[THR_SEED].set ? (uint64_t)v[THR_SEED].i : 1;
    if (out->iops_merge > 0 && !(out->iops_unit > 0))
        return h->error(h, DLG_EINVAL,
                        "%siops_merge needs iops_unit (the I/O size merged I/Os fill, e.g. 256KiB)",
                        origin);
    if (check_symmetric(h, out, origin) != 0)
        return -DLG_EINVAL;
    if (out->dist == THR_DIST_EXPONENTIAL && out->jitter > out->latency)
        return h->error(h, DLG_EINVAL,
                        "%slatency_jitter (%.3f ms) exceeds latency (%.3f ms): an exponential "
                        "tail cannot be longer than the mean",
                        origin, (double)out->jitter / 1e6, (double)out->latency / 1e6);
    return 0;
}
