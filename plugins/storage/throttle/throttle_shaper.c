#define _GNU_SOURCE
#include "throttle_shaper.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <dlgauge/splitmix.h>

uint64_t thr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next_u64(uint64_t *s)
{
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* Uniform in (0, 1]: never 0, so log() below stays finite. */
static double unit_open(uint64_t *s) { return ((double)(next_u64(s) >> 11) + 1.0) * 0x1p-53; }

static void bucket_init(thr_bucket *b, double per_s, double depth)
{
    b->rate = per_s > 0 ? per_s / 1e9 : 0;
    b->depth = depth;
    b->tat = 0; /* starts full, as a freshly attached disk does */
}

/* GCRA: the earliest time at which `cost` tokens are available (a request
 * bigger than the bucket waits for a full bucket and goes into debt).  One
 * that costs nothing (a read merged into an I/O already counted) does not
 * wait: it waited for the debt before it, and sequential 32 KiB reads on
 * gp3 got 120 MiB/s of the 125. */
static double bucket_ready(const thr_bucket *b, double cost, double now)
{
    if (b->rate <= 0 || cost <= 0)
        return now;
    double need = cost < b->depth ? cost : b->depth;
    return fmax(now, b->tat - (b->depth - need) / b->rate);
}

/* Takes `cost` tokens at t, when the I/O really starts: charged at an
 * earlier time that the other bucket made it wait past, a bucket would
 * count the wait as idle and let the next I/Os through in a burst. */
static void bucket_charge(thr_bucket *b, double cost, double t)
{
    if (b->rate > 0)
        b->tat = fmax(b->tat, t) + cost / b->rate;
}

/* When the last of the `cost` tokens charged at t passes the bucket: an
 * I/O's bytes flow at the rate, less what the bucket's depth (burst) lets
 * through at once.  Done at t instead, an I/O after a pause cost nothing:
 * its debt fell on the next one, and a reader that paused between reads
 * (compute) longer than a read's transfer saw an unlimited disk. */
static double bucket_done(const thr_bucket *b, double cost, double t)
{
    return b->rate > 0 && cost > 0 ? fmax(t, b->tat - b->depth / b->rate) : t;
}

/* A symmetric sample clamped to [0, 2 mean]: cutting both tails alike
 * keeps the mean (clamping at 0 alone raised a normal's with jitter = mean
 * by 8%).  thr_resolve refuses a jitter this would cut materially (uniform
 * half-width > mean, normal stddev > mean / 2): here it trims rare tails. */
static double clamp_symmetric(double x, double mean) { return fmin(2 * mean, fmax(0, x)); }

static double sample_latency(thr_shaper *s)
{
    double mean = (double)s->lim.latency, j = (double)s->lim.jitter;
    switch (s->lim.dist) {
    case THR_DIST_UNIFORM:
        return clamp_symmetric(mean - j + 2 * j * unit_open(s->rng), mean);
    case THR_DIST_EXPONENTIAL: /* floor (mean - j) plus an exponential tail of mean j */
        return mean - j - j * log(unit_open(s->rng));
    case THR_DIST_NORMAL: { /* Box-Muller */
        double r = sqrt(-2 * log(unit_open(s->rng)));
        return clamp_symmetric(mean + j * r * cos(2 * M_PI * unit_open(s->rng)), mean);
    }
    default:
        return mean;
    }
}

/* Where writes of one limit draw (see thr_shaper.wown_*).  Shared with an
 * unlimited read side, reads use none of the budget: writes keep theirs;
 * unlimited writes (write_* = 0) cost none of it, and must not wait behind
 * the reads' debt either: they keep their own (unlimited) bucket too. */
static void route_writes(bool own, bool shared, double rrate, double wrate, bool *wown, double *wcost)
{
    *wown = own && !(shared && rrate > 0 && wrate > 0);
    *wcost = *wown || !own ? 1 : rrate / wrate;
}

static void shaper_setup(thr_shaper *s, const thr_limits *lim)
{
    s->lim = *lim;
    bucket_init(&s->bytes, lim->bandwidth, lim->burst);
    bucket_init(&s->ios, lim->iops, lim->burst_iops);
    bucket_init(&s->wbytes, lim->write_bandwidth, lim->burst);
    bucket_init(&s->wios, lim->write_iops, lim->burst_iops);
    bucket_init(&s->peak_bytes, lim->peak_bandwidth, 0);
    bucket_init(&s->peak_ios, lim->peak_iops, 0);
    route_writes(lim->write_own_bw, lim->write_shared, lim->bandwidth, lim->write_bandwidth, &s->wown_bw,
                 &s->wcost_bw);
    route_writes(lim->write_own_iops, lim->write_shared, lim->iops, lim->write_iops, &s->wown_io, &s->wcost_io);
    atomic_init(&s->wake_lead, 0);
    uint64_t x = lim->seed;
    for (int i = 0; i < 4; i++)
        s->rng[i] = dlg_splitmix_next(&x);
}

void thr_shaper_init(thr_shaper *s, const thr_limits *lim)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    shaper_setup(s, lim);
}

int thr_shaper_init_pshared(thr_shaper *s, const thr_limits *lim)
{
    memset(s, 0, sizeof *s);
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (rc == 0)
        rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0)
        rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (rc == 0)
        rc = pthread_mutex_init(&s->mu, &a);
    pthread_mutexattr_destroy(&a);
    if (rc == 0)
        shaper_setup(s, lim);
    return rc;
}

/* A process that died holding the lock left at worst one reservation half
 * made (a few doubles): the disk's state stays usable, so go on with it. */
static void shaper_lock(thr_shaper *s)
{
    if (pthread_mutex_lock(&s->mu) == EOWNERDEAD)
        pthread_mutex_consistent(&s->mu);
}

void thr_shaper_fini(thr_shaper *s) { pthread_mutex_destroy(&s->mu); }

static uint64_t reserve(thr_shaper *s, size_t n, double ios, bool write, bool latency)
{
    thr_bucket *bb = write && s->wown_bw ? &s->wbytes : &s->bytes;
    thr_bucket *ib = write && s->wown_io ? &s->wios : &s->ios;
    double bytes = (double)n * (write ? s->wcost_bw : 1), units = ios * (write ? s->wcost_io : 1);
    double now = (double)thr_now_ns();
    shaper_lock(s);
    double t = fmax(fmax(bucket_ready(bb, bytes, now), bucket_ready(ib, units, now)),
                    fmax(bucket_ready(&s->peak_bytes, bytes, now), bucket_ready(&s->peak_ios, units, now)));
    bucket_charge(bb, bytes, t);
    bucket_charge(ib, units, t);
    bucket_charge(&s->peak_bytes, bytes, t);
    bucket_charge(&s->peak_ios, units, t);
    /* an IOPS limit admits an I/O: no transfer time; bytes flow at the
     * bandwidth, or at the peak while the burst lasts */
    double done = fmax(bucket_done(bb, bytes, t), bucket_done(&s->peak_bytes, bytes, t));
    double lat = latency && s->lim.latency ? sample_latency(s) : 0;
    pthread_mutex_unlock(&s->mu);
    return (uint64_t)(done + lat);
}

uint64_t thr_shaper_reserve(thr_shaper *s, size_t n, double ios, bool write)
{
    return reserve(s, n, ios, write, true);
}

uint64_t thr_shaper_reserve_ahead(thr_shaper *s, size_t n, double ios) { return reserve(s, n, ios, false, false); }

/* Tracks a low quantile of how late sleeps wake: down fast, up slowly, so
 * that the poll after waking early stays short. */
static void learn_lateness(thr_shaper *s, uint64_t late)
{
    uint64_t lead = atomic_load_explicit(&s->wake_lead, memory_order_relaxed);
    lead = late < lead ? lead - (lead - late) / 8 : lead + (late - lead) / 64;
    atomic_store_explicit(&s->wake_lead, lead, memory_order_relaxed);
}

/* A timed sleep to `until` without the thread's timer slack (50 us by
 * default), restored after; returns how late it woke. */
static uint64_t sleep_exact(uint64_t until)
{
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack > 1)
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    if (slack > 1)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    uint64_t now = thr_now_ns();
    return now > until ? now - until : 0;
}

int thr_sleep_until(thr_shaper *s, const dlg_host *h, uint64_t deadline)
{
    for (;;) {
        uint64_t now = thr_now_ns();
        if (now >= deadline)
            return 0;
        if (h->stopping && h->stopping(h))
            return -DLG_ESTOP;
        uint64_t left = deadline - now;
        if (left > 100000000u) { /* a long wait: in slices, to see a stop */
            learn_lateness(s, sleep_exact(now + 100000000u));
            continue;
        }
        uint64_t lead = atomic_load_explicit(&s->wake_lead, memory_order_relaxed);
        if (lead > left / 2) /* always sleep some, so the estimate keeps learning */
            lead = left / 2;
        if (left > 2000) /* else too close to sleep */
            learn_lateness(s, sleep_exact(deadline - lead));
        break;
    }
    while (thr_now_ns() < deadline) /* the last stretch, usually a few us: */
        ;                            /* yielding would lose the CPU for ms */
    return 0;
}
