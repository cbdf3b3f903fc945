#define _GNU_SOURCE
#include "throttle_shaper.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

uint64_t thr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
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
 * bigger than the bucket waits for a full bucket and goes into debt). */
static double bucket_take(thr_bucket *b, double cost, double now)
{
    if (b->rate <= 0)
        return now;
    double need = cost < b->depth ? cost : b->depth;
    double t0 = b->tat - (b->depth - need) / b->rate;
    if (t0 < now)
        t0 = now;
    b->tat = (b->tat > t0 ? b->tat : t0) + cost / b->rate;
    return t0;
}

static double sample_latency(thr_shaper *s)
{
    double mean = (double)s->lim.latency, j = (double)s->lim.jitter;
    switch (s->lim.dist) {
    case THR_DIST_UNIFORM:
        return fmax(0, mean - j + 2 * j * unit_open(s->rng));
    case THR_DIST_EXPONENTIAL: /* floor (mean - j) plus an exponential tail of mean j */
        return mean - j - j * log(unit_open(s->rng));
    case THR_DIST_NORMAL: { /* Box-Muller, clamped at 0 */
        double r = sqrt(-2 * log(unit_open(s->rng)));
        return fmax(0, mean + j * r * cos(2 * M_PI * unit_open(s->rng)));
    }
    default:
        return mean;
    }
}

void thr_shaper_init(thr_shaper *s, const thr_limits *lim)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->lim = *lim;
    bucket_init(&s->bytes, lim->bandwidth, lim->burst);
    bucket_init(&s->ios, lim->iops, lim->burst_iops);
    uint64_t x = lim->seed;
    for (int i = 0; i < 4; i++)
        s->rng[i] = splitmix64(&x);
}

void thr_shaper_fini(thr_shaper *s) { pthread_mutex_destroy(&s->mu); }

uint64_t thr_shaper_reserve(thr_shaper *s, size_t n)
{
    double now = (double)thr_now_ns();
    double ios = s->lim.iops_unit > 0 ? fmax(1, ceil((double)n / s->lim.iops_unit)) : 1;
    pthread_mutex_lock(&s->mu);
    double tb = bucket_take(&s->bytes, (double)n, now);
    double ti = bucket_take(&s->ios, ios, now);
    double lat = s->lim.latency ? sample_latency(s) : 0;
    pthread_mutex_unlock(&s->mu);
    return (uint64_t)((tb > ti ? tb : ti) + lat);
}

int thr_sleep_until(const dlg_host *h, uint64_t deadline)
{
    for (;;) {
        uint64_t now = thr_now_ns();
        if (now >= deadline)
            return 0;
        if (h->stopping && h->stopping(h))
            return -DLG_ESTOP;
        uint64_t until = deadline - now > 100000000u ? now + 100000000u : deadline;
        struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        if (rc != 0 && rc != EINTR)
            return 0; /* cannot sleep: run unthrottled rather than spin */
    }
}
