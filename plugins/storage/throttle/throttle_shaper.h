/* The emulated disk's timing: token buckets for bandwidth and IOPS and a
 * seeded per-I/O latency, shared (under a mutex) by every file of one
 * throttle instance, since the emulated disk is one device.  Each I/O gets a
 * completion deadline at issue; the caller does the real I/O, then waits.
 * Bytes flow through one pipe at the bandwidth: an I/O completes when its
 * last byte is through (after the I/Os queued before it), plus latency, so
 * it takes its transfer time even on an idle disk, and one reader at QD1
 * gets bandwidth / (1 + latency x bandwidth / size), as on a real volume.
 * The IOPS limit only spaces I/Os' starts. */
#ifndef DLG_THROTTLE_SHAPER_H
#define DLG_THROTTLE_SHAPER_H

#include <pthread.h>
#include <stdatomic.h>

#include "throttle_opts.h"

typedef struct thr_bucket {
    double rate;  /* tokens per ns; 0 = unlimited */
    double depth; /* tokens the bucket holds */
    double tat;   /* ns at which the bucket is full again */
} thr_bucket;

typedef struct thr_shaper {
    pthread_mutex_t mu;
    thr_limits lim;
    thr_bucket bytes; /* reads, and writes where they share the limit */
    thr_bucket ios;
    thr_bucket wbytes; /* writes with their own limits (write_own_*) */
    thr_bucket wios;
    /* Credit bursting: the rate banked tokens flow at (depth 0), read and
     * write alike, as the volume's one burst limit (gp2: 3000 IOPS). */
    thr_bucket peak_bytes;
    thr_bucket peak_ios;
    /* Per limit, where a write draws: its own bucket, or the read bucket
     * at wcost read tokens per write token (1: one combined limit;
     * read rate / write rate: write_budget = shared; unlimited writes keep
     * their own, unlimited bucket). */
    bool wown_bw, wown_io;
    double wcost_bw, wcost_io;
    uint64_t rng[4]; /* xoshiro256** state */
    /* How early to wake before a deadline, in ns: a low estimate of how
     * late this machine's timed sleeps return (learned; racy updates are
     * harmless, it is only a hint). */
    _Atomic uint64_t wake_lead;
} thr_shaper;

void thr_shaper_init(thr_shaper *s, const thr_limits *lim);
/* The same in memory that several processes map (throttle_shm.c): a
 * process-shared, robust mutex, so that a rank killed while holding it
 * does not stop the others.  0, or an errno. */
int thr_shaper_init_pshared(thr_shaper *s, const thr_limits *lim);
void thr_shaper_fini(thr_shaper *s);

/* Reserves an I/O of n bytes issued now that the disk counts as `ios`
 * I/Os (thr_io_units), a write if `write`; returns its completion
 * deadline (CLOCK_MONOTONIC ns): when both buckets admit it, plus the
 * time its bytes take at the bandwidth beyond the burst, plus latency. */
uint64_t thr_shaper_reserve(thr_shaper *s, size_t n, double ios, bool write);
/* The same without the latency: bytes readahead fetched ahead of their
 * reader (page_cache = model), which waits for their transfer only. */
uint64_t thr_shaper_reserve_ahead(thr_shaper *s, size_t n, double ios);

uint64_t thr_now_ns(void);

/* Sleeps until deadline, and not much past it (a plain timed sleep wakes
 * 50-100 us late, which would double an NVMe's 80 us latency); wakes every
 * 100 ms to honour a stop request.  Returns 0, or -DLG_ESTOP once
 * h->stopping(). */
int thr_sleep_until(thr_shaper *s, const dlg_host *h, uint64_t deadline);

#endif
