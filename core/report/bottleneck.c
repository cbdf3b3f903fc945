/* Bottleneck attribution per cell, in the spirit of DS-Analyzer's stall
 * analysis: each verdict states the numbers it rests on.  Rules, in order:
 *   failed   the cell did not measure (oom, crashed, timeout, error)
 *   memory   the page cache thrashes: block reads exceed the dataset size
 *            (re-reads) or major faults are frequent
 *   storage  reads run near the storage profile's bandwidth or IOPS limit
 *            (input-bound), or writes near the write limit (output-bound);
 *            where writes have no limits of their own, reads and writes
 *            share one budget and the side using more of it is named;
 *            with write_budget = shared, read share + write share of
 *            their own limits is judged against one budget
 *   contended the cell's threads were runnable but queued for a CPU for a
 *            fifth of its CPU time (cpu_wait_share, cpu_user_share) while
 *            other processes used a fifth of its CPUs (cpu_other_share;
 *            in older results, inferred: queued longer than they ran), or
 *            the hypervisor stole it (cpu_steal_share) from a cell that
 *            kept them a fifth busy,
 *            and no accelerator was kept fed: every figure below would
 *            understate the machine.  Queued with the others measured
 *            idle: behind its own threads or quota, said, no verdict
 *   input    data wait high / AU low: decode if the CPUs are saturated;
 *            if the loader's threads are (fewer threads than CPUs),
 *            decode or storage by what fills their time; storage if cold
 *            block-device reads dominate; else unattributed.  A storage
 *            verdict far below the profile's limits says what held the
 *            reads back instead: its latency, or the disk beneath
 *   memory   (bandwidth) a STREAM kernel's rates: memory traffic is the work
 *   cache    ... unless the arrays a pass touches fit in the last-level
 *            cache (llc_bytes): then the rate is the cache's
 *   waiting  no accelerator and the CPUs mostly idle: the step waits on
 *            something that is neither compute nor input
 *   compute  otherwise: the accelerator (or the CPU running the step) is
 *            the limit. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpuset.h"
#include "disk_use.h"
#include "layer_profile.h"
#include "model.h"
#include "units.h"

const char *rep_bn_name(rep_bn b)
{
    static const char *const names[] = {"compute-bound", "input-bound: decode", "input-bound: storage",
                                        "memory-bound", "input-bound", "waiting", "failed",
                                        "output-bound: storage writes", "CPU-contended", "cache-bound"};
    return names[b];
}

static double num_or_nan(const rep_row *r, const char *k)
{
    double v;
    return rep_num(r, k, &v) ? v : NAN;
}

/* Fills the evidence numbers from the cell's row (J/item is pooled with
 * the throughput, model.c). */
static void gather(rep_cell *c, const rep_group *g, const rep_disks *disks, const rep_disk **prof)
{
    const rep_row *r = c->row;
    double wall = num_or_nan(r, "wall_s");
    c->au = num_or_nan(r, "au");
    c->data_wait = num_or_nan(r, "data_wait_fraction");
    c->cpu_share = num_or_nan(r, "cpu_user_share");
    if (isnan(c->cpu_share)) {
        double u = num_or_nan(r, "cpu_user_s"), s = num_or_nan(r, "cpu_sys_s"), n = num_or_nan(r, "cpus_used");
        if (!isnan(u) && wall > 0 && n > 0)
            c->cpu_share = (u + (isnan(s) ? 0 : s)) / (wall * n);
    }
    c->iowait = num_or_nan(r, "host_iowait_fraction");
    c->loader_busy = num_or_nan(r, "loader_busy");
    double lr = num_or_nan(r, "loader_read_s"), ld = num_or_nan(r, "loader_decode_s");
    c->loader_read_share = lr + ld > 0 ? lr / (lr + ld) : NAN;
    double ios = num_or_nan(r, "storage_ios");
    c->read_io_s = lr > 0 && ios > 0 ? lr / ios : NAN;
    c->cpu_wait = num_or_nan(r, "cpu_wait_share");
    c->cpu_steal = num_or_nan(r, "cpu_steal_share");
    c->cpu_other = num_or_nan(r, "cpu_other_share");
    double sread = num_or_nan(r, "storage_read_bytes"), bread = num_or_nan(r, "read_bytes");
    c->read_bps = sread > 0 && wall > 0 ? sread / wall : NAN;
    if (isnan(c->read_bps) && !isnan(num_or_nan(r, "mb_per_s")))
        c->read_bps = num_or_nan(r, "mb_per_s") * 1e6;
    c->cold_share = sread > 0 && !isnan(bread) ? bread / sread : NAN;
    double dread = num_or_nan(r, "emulated_disk_read_bytes"), dios = num_or_nan(r, "emulated_disk_read_ios");
    c->disk_bps = !isnan(dread) && wall > 0 ? dread / wall : NAN;
    c->disk_ios = !isnan(dios) && wall > 0 ? dios / wall : NAN;
    /* read_bytes sums the repetitions, and each may start cold (cache =
     * cold evicts before every one): re-reads are what one repetition
     * reads beyond the dataset */
    double ds = num_or_nan(r, "dataset_bytes"), reps = num_or_nan(r, "repeats");
    c->reread = ds > 0 && !isnan(bread) ? bread / (reps >= 1 ? reps : 1) / ds : NAN;
    /* a workload writing past the host (preprocess) gives its own rate */
    double swrite = num_or_nan(r, "storage_write_bytes");
    c->write_bps = swrite > 0 && wall > 0 ? swrite / wall : num_or_nan(r, "write_mb_per_s") * 1e6;
    double mf = num_or_nan(r, "major_faults");
    c->fault_rate = !isnan(mf) && wall > 0 ? mf / wall : NAN;
    c->limit_share = NAN;
    c->limit_writes = c->limit_combined = false;
    *prof = NULL;
    long sa = rep_group_axis(g, "storage");
    const char *sname = sa >= 0 ? g->axes[sa].vals[c->coord[sa]] : rep_str(r, "storage");
    const rep_disk *d = sname ? rep_disks_find(disks, sname) : NULL;
    if (d) {
        *prof = d;
        rep_io_rate io; /* as the recommendation judges an instance's disk */
        rep_cell_io(c, &io);
        bool by_iops;
        rep_limit_use u = rep_io_use_disk(&io, d, &by_iops);
        c->limit_share = u.share;
        c->limit_writes = u.writes;
        c->limit_combined = u.combined;
    }
}

#define ADD(...) (n += snprintf(c->evidence + n, sizeof c->evidence > n ? sizeof c->evidence - n : 0, __VA_ARGS__))

/* "60.0 MB/s, 375 IOPS": the limits named, those set. */
static size_t add_pair(rep_cell *c, size_t n, double bw, double iops)
{
    if (bw > 0)
        ADD("%.1f MB/s%s", bw / 1e6, iops > 0 ? ", " : "");
    if (iops > 0)
        ADD("%.0f IOPS", iops);
    return n;
}

/* "reads 120.0 MB/s", and where a throttle modelled the page cache and
 * served some of them from it, what reached its disk: the rate its
 * limits are judged by. */
static size_t add_reads(rep_cell *c, size_t n)
{
    ADD("reads %.1f MB/s", isnan(c->read_bps) ? 0 : c->read_bps / 1e6);
    if (!isnan(c->disk_bps) && !(c->disk_bps >= 0.95 * c->read_bps))
        ADD(" (%.1f MB/s of them from the disk, the page cache served the rest)", c->disk_bps / 1e6);
    return n;
}

/* The read rate a limit share is of: the disk's part where counted. */
static double disk_side_mbps(const rep_cell *c)
{
    double r = isnan(c->disk_bps) ? c->read_bps : c->disk_bps;
    return isnan(r) ? 0 : r / 1e6;
}

/* "(60.0 MB/s, 375 IOPS); " */
static size_t add_limits(rep_cell *c, size_t n, double bw, double iops)
{
    ADD("(");
    n = add_pair(c, n, bw, iops);
    return ADD("); ");
}

/* Reads above the sustained limit judged say why they could be: a profile
 * with burst credits spent them (a new volume's, full at the start: the
 * run ended before they did), a throttle's own bucket let what it banks
 * through at once, a throttle modelling the page cache served some from
 * memory, else nothing held the reads to the profile. */
static size_t above_profile(rep_cell *c, const rep_disk *d, size_t n)
{
    if (!(c->limit_share > REP_OVER_LIMIT))
        return n;
    if (d->peak_bandwidth > 0 || d->peak_iops > 0) {
        ADD("above it on the profile's burst credits (peak ");
        n = add_pair(c, n, d->peak_bandwidth, d->peak_iops);
        return ADD("), a new volume's: a run longer than they last measures the limit; ");
    }
    if (d->burst > 0 || d->burst_iops > 0) {
        ADD("above it on the throttle's bucket, which lets ");
        if (d->burst > 0)
            ADD("%.1f MB%s", d->burst / 1e6, d->burst_iops > 0 ? " and " : "");
        if (d->burst_iops > 0)
            ADD("%.0f I/Os", d->burst_iops);
        return ADD(" through at once (burst%s): a run long enough that they are small beside it measures the "
                   "limit; ",
                   d->burst > 0 && d->burst_iops > 0 ? ", burst_iops" : d->burst > 0 ? "" : "_iops");
    }
    const char *cfg = rep_str(c->row, "storage_config");
    /* a row without the disk's own count (before dlgauge had it) judged
     * all reads, the page cache's too */
    if (rep_config_has(cfg, "type", "throttle") && rep_config_has(cfg, "page_cache", "model") && isnan(c->disk_bps))
        return ADD("above it: the reads the page cache served cost the disk nothing (page_cache = model); ");
    if (rep_config_has(cfg, "type", "throttle"))
        return ADD("above it: reads queued before the timed steps ended inside them (a short run); ");
    return ADD("above it: the storage is no throttle of that profile, so nothing held its reads to it; ");
}

/* The storage verdict's numbers: the side that binds, the limit it meets. */
static size_t storage_evidence(rep_cell *c, const rep_disk *d, size_t n)
{
    double rd = disk_side_mbps(c);
    if (c->limit_combined && d->write_shared) {
        /* the shares of different limits add up, not the MB/s */
        ADD("reads %.1f and writes %.1f MB/s use %.0f%% of profile %s's shared read+write budget (reads ", rd,
            c->write_bps / 1e6, 100 * c->limit_share, d->name);
        n = add_pair(c, n, d->bandwidth, d->iops);
        ADD("; writes ");
        n = add_pair(c, n, d->write_own_bw ? d->write_bandwidth : d->bandwidth,
                     d->write_own_iops ? d->write_iops : d->iops);
        return ADD("); ");
    }
    if (c->limit_combined) {
        ADD("reads %.1f + writes %.1f MB/s = %.0f%% of profile %s's limit shared by reads and writes ", rd,
            c->write_bps / 1e6, 100 * c->limit_share, d->name);
        return add_limits(c, n, d->bandwidth, d->iops);
    }
    if (c->limit_writes) {
        ADD("writes %.1f MB/s = %.0f%% of profile %s's write limit ", c->write_bps / 1e6, 100 * c->limit_share,
            d->name);
        n = add_limits(c, n, d->write_own_bw ? d->write_bandwidth : 0, d->write_own_iops ? d->write_iops : 0);
        if (isnan(c->read_bps))
            return n;
        n = add_reads(c, n);
        return ADD("; ");
    }
    n = add_reads(c, n);
    ADD(" = %.0f%% of profile %s's limit ", 100 * c->limit_share, d->name);
    return above_profile(c, d, add_limits(c, n, d->bandwidth, d->iops));
}

/* Whether below_profile can say what held a storage verdict's reads back:
 * far below the profile's limits, or short of them (50-85%: one reader at
 * QD1 gets bandwidth / (1 + latency x bandwidth / size) of the emulated
 * disk) with the time per read to show it. */
static bool explains_below(const rep_cell *c)
{
    return c->limit_share < REP_LIMIT_LOW || (c->limit_share < REP_NEAR_LIMIT && !isnan(c->read_io_s));
}

/* A storage verdict far below the profile's limits: the profile's rates
 * did not hold the reads back.  Reads at the profile's own pace were held
 * back by taking them one at a time per loader thread (with its latency,
 * if it has one); slower reads, by the disk beneath the emulation (the
 * host's own disk, page-cache misses). */
static size_t below_profile(rep_cell *c, const rep_disk *d, size_t n)
{
    const rep_row *r = c->row;
    double ios = num_or_nan(r, "storage_ios");
    double io_bytes = ios > 0 ? num_or_nan(r, "storage_read_bytes") / ios : NAN;
    /* what one read takes under the profile: its latency, then the transfer
     * or the IOPS bucket's spacing, whichever is slower */
    double allowed = d->latency + fmax(d->bandwidth > 0 && io_bytes > 0 ? io_bytes / d->bandwidth : 0,
                                       d->iops > 0 ? 1 / d->iops : 0);
    const char *cfg = rep_str(r, "storage_config");
    const char *beneath = rep_config_has(cfg, "type", "throttle") ? "the disk beneath the emulation (the host's own disk, "
                                                                "page-cache misses)"
                                                              : "the storage itself (the host's disk, page-cache misses)";
    n = add_reads(c, n);
    if (c->limit_share < 0.01)
        ADD(" = under 1%% of profile %s's limit ", d->name);
    else
        ADD(" = %s%.0f%% of profile %s's limit ", c->limit_share < REP_LIMIT_LOW ? "only " : "",
            100 * c->limit_share, d->name);
    n = add_limits(c, n, d->bandwidth, d->iops);
    if (isnan(c->read_io_s) || !(allowed > 0))
        return ADD("%s held the reads back, not the profile's rates; ", beneath);
    if (c->read_io_s <= 1.5 * allowed) {
        double th = num_or_nan(r, "loader_threads");
        if (d->latency > 0)
            ADD("%.2f ms per read, the profile's latency %.2f ms: that latency", 1e3 * c->read_io_s,
                1e3 * d->latency);
        else /* no latency: the transfer alone, still one read after another */
            ADD("%.2f ms per read, the profile's pace (%.2f ms): one read at a time", 1e3 * c->read_io_s,
                1e3 * allowed);
        if (th > 0)
            ADD(" with %.0f loader thread%s", th, th == 1 ? "" : "s");
        return ADD(" held the reads back, not its rates; ");
    }
    return ADD("%.2f ms per read where the profile takes %.2f ms: %s held the reads back, not the profile; ",
               1e3 * c->read_io_s, 1e3 * allowed, beneath);
}

/* The time the cell's threads were runnable but queued, as a share of the
 * CPU time it could have had (cpu_user_share's capacity): from the share
 * of runnable time queued, w, and the share of capacity on a CPU, u:
 * u * w / (1 - w).  Measured against capacity, not runnable time: threads
 * that run for microseconds between sleeps (a loader, a sleep) queue a
 * large share of their short runnable time on wake-up alone, most of all
 * on a VM's halted vCPUs, with the CPUs mostly idle. */
static double queued_share(const rep_cell *c)
{
    if (isnan(c->cpu_wait) || isnan(c->cpu_share))
        return NAN;
    return c->cpu_wait >= 1 ? INFINITY : c->cpu_share * c->cpu_wait / (1 - c->cpu_wait);
}

/* Steal takes a vCPU from whatever would run on it: it slows a cell that
 * kept its CPUs busy, not one that left them idle (a sleep, 1% busy), so
 * it counts from REP_STEAL_BUSY of cpu_user_share (the share below which
 * an idle cell is `waiting`); without that field, as before, always. */
static bool steal_felt(const rep_cell *c)
{
    return !(c->cpu_share < REP_STEAL_BUSY);
}

/* Held back by other work on its CPUs: queued for a fifth of its CPU time
 * while other processes used a fifth of its CPUs.  Results without that
 * measure infer it: queued for longer than it ran (w >= 0.5), since a
 * cell with a few more threads than CPUs of its own queues too, for less
 * than it runs (3 busy threads on 2 CPUs: w = 1/3; the quick start's
 * preprocess: 0.30, CPUs 79% busy).  With its CPUs saturated it is busy,
 * not held back.  Steal is always the host's, and held back a cell that
 * used its CPUs (steal_felt). */
static bool contended(const rep_cell *c)
{
    if (!isnan(c->cpu_steal) && c->cpu_steal >= REP_CPU_STEAL && steal_felt(c))
        return true;
    if (!(queued_share(c) >= REP_CPU_QUEUED) || c->cpu_share >= REP_CPU_BUSY)
        return false;
    return !isnan(c->cpu_other) ? c->cpu_other >= REP_CPU_OTHER : c->cpu_wait >= REP_CPU_WAIT_RUN;
}

/* Queued for a fifth of its CPU time with other processes measured (near)
 * idle on its CPUs: behind its own threads (more than its CPUs) or its CPU
 * quota (throttled time counts as run delay). */
static bool oversubscribed(const rep_cell *c)
{
    return !isnan(c->cpu_other) && c->cpu_other < REP_CPU_OTHER && queued_share(c) >= REP_CPU_QUEUED;
}

/* "the cell's 2 CPUs": those cpu_other_share is over, cpu_list's (the
 * cell's affinity, which it was measured on), else cpus_used. */
static const char *other_cpus(const rep_cell *c, char *buf, size_t len)
{
    const char *list = rep_str(c->row, "cpu_list");
    dlg_cpuset s;
    int n = -1;
    if (list && dlg_cpuset_init(&s, 0) == 0) {
        n = dlg_cpuset_parse_list(list, &s);
        dlg_cpuset_fini(&s);
    }
    double used;
    if (n <= 0 && rep_num(c->row, "cpus_used", &used) && used >= 1)
        n = (int)used;
    if (n > 0)
        snprintf(buf, len, "the cell's %d CPU%s", n, n == 1 ? "" : "s");
    else
        snprintf(buf, len, "the cell's CPUs");
    return buf;
}

/* "other processes used 35% of the cell's 2 CPUs; runnable but queued
 * ...; steal 2%; CPUs 10% busy; " */
static size_t contended_evidence(rep_cell *c, size_t n)
{
    char cpus[48];
    if (!isnan(c->cpu_other))
        ADD("other processes used %.0f%% of %s; ", 100 * c->cpu_other, other_cpus(c, cpus, sizeof cpus));
    if (!isnan(queued_share(c)))
        ADD("runnable but queued for a CPU %.0f%% of its runnable time (%.2f of its CPUs' time); ",
            100 * c->cpu_wait, fmin(queued_share(c), 99));
    if (!isnan(c->cpu_steal))
        ADD("steal %.0f%%; ", 100 * c->cpu_steal);
    if (!isnan(c->cpu_share))
        ADD("CPUs %.0f%% busy; ", 100 * c->cpu_share);
    return n;
}

/* "queued for a CPU 75% of its runnable time behind its own threads or
 * CPU quota (other processes used 2% of the cell's 2 CPUs); " */
static size_t oversubscribed_evidence(rep_cell *c, size_t n)
{
    char cpus[48];
    return ADD("queued for a CPU %.0f%% of its runnable time behind its own threads or CPU quota (other processes "
               "used %.0f%% of %s); ",
               100 * c->cpu_wait, 100 * c->cpu_other, other_cpus(c, cpus, sizeof cpus));
}

/* A profiled cell's (profile = true) two heaviest layer kinds with their
 * shares, without their times: what the compute is. */
static size_t layer_evidence(rep_cell *c, size_t n)
{
    rep_layer_kind k[2];
    size_t nk = rep_layer_kinds(c->row, k, 2);
    for (size_t i = 0; i < nk; i++)
        ADD("%s%s: %.1f%%", i ? ", " : "heaviest layers ", k[i].key, k[i].share);
    if (nk)
        ADD("; ");
    return n;
}

/* STREAM's kernels (diag stream): their rates are memory traffic, over
 * the arrays each touches (copy and scale 2, add and triad 3). */
static const struct {
    const char *name;
    int arrays;
} stream_kernels[] = {{"copy", 2}, {"scale", 2}, {"add", 3}, {"triad", 3}};
#define NKERNELS (sizeof stream_kernels / sizeof *stream_kernels)

static bool stream_rate(const rep_row *r, size_t k, double *v)
{
    char key[32];
    snprintf(key, sizeof key, "%s_bytes_per_s", stream_kernels[k].name);
    return rep_num(r, key, v) && *v > 0;
}

/* The most arrays one of the cell's kernels touches; 0: no STREAM rate. */
static int stream_arrays(const rep_cell *c)
{
    double v;
    int most = 0;
    for (size_t k = 0; k < NKERNELS; k++)
        if (stream_rate(c->row, k, &v) && stream_kernels[k].arrays > most)
            most = stream_kernels[k].arrays;
    return most;
}

/* What a STREAM cell's arrays were, next to the last-level cache its
 * threads had (llc_bytes, absent: unknown). */
typedef enum { STREAM_MEMORY, STREAM_PARTLY_CACHED, STREAM_CACHED } stream_fit;

static stream_fit stream_fit_of(const rep_cell *c, double *array, double *llc)
{
    if (!rep_num(c->row, "array_bytes", array) || !(*array > 0) || !rep_num(c->row, "llc_bytes", llc) ||
        !(*llc > 0))
        return STREAM_MEMORY;
    if (*array * stream_arrays(c) <= *llc)
        return STREAM_CACHED; /* every pass after the first hits the cache */
    return *array < REP_STREAM_LLC * *llc ? STREAM_PARTLY_CACHED : STREAM_MEMORY;
}

/* "memory bandwidth: triad 11.2 GB/s, arrays of 64MiB, 2 threads; ", and
 * where the arrays fit in the last-level cache, or are under STREAM's
 * rule, what the rate measured instead. */
static size_t bandwidth_evidence(rep_cell *c, stream_fit fit, double array, double llc, size_t n)
{
    double v;
    char b[32], l[32];
    ADD("%s bandwidth:", fit == STREAM_CACHED ? "cache" : "memory");
    for (size_t k = 0, named = 0; k < NKERNELS; k++)
        if (stream_rate(c->row, k, &v)) {
            dlg_format_rate(v, "bytes", b, sizeof b);
            ADD("%s %s %s", named++ ? "," : "", stream_kernels[k].name, b);
        }
    if (rep_num(c->row, "array_bytes", &v) && v > 0) {
        dlg_format_size((int64_t)v, b, sizeof b);
        ADD(", arrays of %s", b);
    }
    /* a tag (the metric is named like stream's option), a field in older results */
    const char *threads = rep_str(c->row, "threads");
    if (threads && sscanf(threads, "%lf", &v) == 1 && v > 0)
        ADD(", %.0f thread%s", v, v == 1 ? "" : "s");
    ADD("; ");
    if (fit != STREAM_MEMORY)
        dlg_format_size((int64_t)llc, l, sizeof l);
    if (fit == STREAM_CACHED) {
        dlg_format_size((int64_t)(array * stream_arrays(c)), b, sizeof b);
        ADD("the %d arrays a pass touches (%s) fit in the %s last-level cache: the rate is the cache's, "
            "not memory's; ",
            stream_arrays(c), b, l);
    } else if (fit == STREAM_PARTLY_CACHED)
        ADD("arrays under %.0fx the %s last-level cache (STREAM's rule): part of the traffic hits the cache, "
            "overstating memory bandwidth; ",
            REP_STREAM_LLC, l);
    if (!isnan(c->cpu_share))
        ADD("CPUs %.0f%% busy; ", 100 * c->cpu_share);
    return n;
}

void rep_cell_classify(rep_cell *c, const rep_group *g, const rep_disks *disks)
{
    size_t n = 0;
    if (!c->ok) {
        c->bn = REP_BN_FAILED;
        /* every failed repetition's status, and the first error: a later
         * one is often a consequence (a full disk, then timeouts) */
        char what[160];
        const char *e = c->failed_error ? c->failed_error : rep_str(c->row, "error");
        rep_cell_failures_text(c, what, sizeof what);
        ADD("status %s%s%s", what, e ? (c->nfailed > 1 ? "; the first error: " : ": ") : "", e ? e : "");
        return;
    }
    const rep_disk *prof;
    gather(c, g, disks, &prof);
    bool input_limited = (!isnan(c->data_wait) && c->data_wait >= REP_INPUT_WAIT) || (!isnan(c->au) && c->au < REP_AU_OK);
    if ((!isnan(c->reread) && c->reread > REP_REREAD) || (!isnan(c->fault_rate) && c->fault_rate >= REP_FAULT_RATE)) {
        c->bn = REP_BN_MEMORY;
        if (!isnan(c->reread))
            ADD("block reads %.2fx the dataset size per repetition; ", c->reread);
        if (!isnan(c->fault_rate))
            ADD("%.0f major faults/s; ", c->fault_rate);
    } else if (!isnan(c->limit_share) && c->limit_share >= REP_NEAR_LIMIT) {
        c->bn = c->limit_writes ? REP_BN_STORAGE_WRITE : REP_BN_STORAGE;
        n = storage_evidence(c, prof, n);
    } else if (contended(c) && !(c->au >= REP_AU_OK)) {
        /* descheduled, the cell measured the other work on the host, not
         * what limits it: no other verdict holds (a fed accelerator was
         * not held back by it) */
        c->bn = REP_BN_CONTENDED;
        n = contended_evidence(c, n);
    } else if (input_limited && !isnan(c->cpu_share) && c->cpu_share >= REP_CPU_BUSY) {
        c->bn = REP_BN_DECODE;
        ADD("CPUs %.0f%% busy; ", 100 * c->cpu_share);
        if (!isnan(c->limit_share))
            ADD("storage at %.0f%% of its limit; ", 100 * c->limit_share);
        else if (!isnan(c->iowait))
            ADD("iowait %.2f; ", c->iowait);
    } else if (input_limited && !isnan(c->loader_busy) && c->loader_busy >= REP_CPU_BUSY) {
        /* the workers are saturated though the CPUs are not (fewer threads
         * than CPUs): what fills their time names the limit */
        bool reading = !isnan(c->loader_read_share) && c->loader_read_share > 0.5;
        c->bn = reading ? REP_BN_STORAGE : REP_BN_DECODE;
        ADD("loader threads %.0f%% busy", 100 * c->loader_busy);
        if (!isnan(c->loader_read_share))
            ADD(", %.0f%% of it reading", 100 * c->loader_read_share);
        ADD("; ");
        if (!isnan(c->cpu_share))
            ADD("CPUs %.0f%% busy; ", 100 * c->cpu_share);
        if (reading && prof && explains_below(c))
            n = below_profile(c, prof, n);
    } else if (input_limited && ((!isnan(c->cold_share) && c->cold_share >= REP_COLD_SHARE) ||
                                 (!isnan(c->iowait) && c->iowait >= 0.2))) {
        c->bn = REP_BN_STORAGE;
        if (!isnan(c->cold_share))
            ADD("cold block-device reads %.0f%% of storage reads; ", 100 * c->cold_share);
        if (!isnan(c->iowait))
            ADD("iowait %.2f; ", c->iowait);
        if (prof && explains_below(c))
            n = below_profile(c, prof, n);
    } else if (input_limited) {
        c->bn = REP_BN_INPUT;
        if (!isnan(c->cpu_share))
            ADD("CPUs %.0f%% busy; ", 100 * c->cpu_share);
        if (!isnan(c->limit_share))
            ADD("storage at %.0f%% of its limit; ", 100 * c->limit_share);
    } else if (stream_arrays(c) > 0) {
        double array = 0, llc = 0;
        stream_fit fit = stream_fit_of(c, &array, &llc);
        c->bn = fit == STREAM_CACHED ? REP_BN_CACHE : REP_BN_MEMORY;
        n = bandwidth_evidence(c, fit, array, llc, n);
    } else if (isnan(c->au) && !isnan(c->cpu_share) && c->cpu_share < REP_CPU_IDLE) {
        /* no accelerator, idle CPUs, no input wait: sleeps, locks, a remote
         * service; calling that compute-bound would send a reader to buy CPUs */
        c->bn = REP_BN_WAITING;
        ADD("CPUs %.0f%% busy, no accelerator; ", 100 * c->cpu_share);
        if (!isnan(c->cpu_steal) && c->cpu_steal >= REP_CPU_STEAL) /* said, as it was not counted */
            ADD("steal %.0f%%, which holds back no cell that leaves its CPUs idle; ", 100 * c->cpu_steal);
    } else {
        c->bn = REP_BN_COMPUTE;
        if (!isnan(c->cpu_share) && isnan(c->au))
            ADD("CPUs %.0f%% busy; ", 100 * c->cpu_share);
        n = layer_evidence(c, n);
    }
    if (c->bn != REP_BN_CONTENDED && oversubscribed(c))
        n = oversubscribed_evidence(c, n);
    if (!isnan(c->au))
        ADD("AU %.2f; ", c->au);
    if (!isnan(c->data_wait))
        ADD("data wait %.2f; ", c->data_wait);
    if (n >= 2 && n < sizeof c->evidence)
        c->evidence[n - 2] = 0; /* drop the last "; " */
}
