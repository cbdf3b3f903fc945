/* The throttle shim must emulate a disk accurately: a 50 MB/s profile
 * reads 1 MiB in 20.97 ms (47.5-52.5 MB/s by the median read), every read
 * takes its transfer time plus latency, after a pause too and on every
 * path, an IOPS cap holds within 5% (also with many reads in flight and
 * across threads sharing one emulated disk), fixed latency adds at least
 * that much to every I/O, and the capacity formulas and every conf/disks
 * profile resolve to the published numbers. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage_util.h"

#define DATA_BYTES ((size_t)8 << 20)

/* Under ASan, an allocation too big to make returns NULL as malloc's does
 * (test_fetch_without_memory_not_charged), instead of ending the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

typedef struct fixture {
    mock_host m;
    st_backend thr;
    char dir[512];
    char data[600];
    char profile[600];
} fixture;

static int fx_setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    mock_host_init(&fx->m);
    st_tmpdir(fx->dir, "throttle");
    snprintf(fx->data, sizeof fx->data, "%s/data.bin", fx->dir);
    snprintf(fx->profile, sizeof fx->profile, "%s/disk.ini", fx->dir);
    st_backend posix;
    assert_int_equal(st_backend_create(&posix, &fx->m, "posix", NULL), 0);
    free(st_write_file(&posix, &fx->m, fx->data, DATA_BYTES, 7));
    st_backend_destroy(&posix);
    *state = fx;
    return 0;
}

static int fx_teardown(void **state)
{
    fixture *fx = *state;
    st_backend_destroy(&fx->thr);
    mock_host_fini(&fx->m);
    unlink(fx->data);
    unlink(fx->profile);
    rmdir(fx->dir);
    free(fx);
    return 0;
}

static void write_profile(fixture *fx, const char *text)
{
    FILE *f = fopen(fx->profile, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Creates the throttle instance and registers it as "disk". */
static void make_throttle(fixture *fx, const char *const *overrides)
{
    int rc = st_backend_create(&fx->thr, &fx->m, "throttle", overrides);
    if (rc != 0)
        fail_msg("throttle create: %s", fx->m.last_error);
    assert_int_equal(mock_add_storage(&fx->m, "disk", fx->thr.ops, fx->thr.inst), 0);
}

static dlg_file *open_disk(fixture *fx)
{
    dlg_file *f = NULL;
    assert_int_equal(fx->m.host.file_open(&fx->m.host, "disk", fx->data, &f), 0);
    return f;
}

/* The spacing of completions at QD1.  Its median is the rate the
 * throttle allows: load on the box (a reader woken or preempted a few ms
 * late) stretches some gaps and shortens the next, as the late read is let
 * through at once; a wrong rate, or a schedule that drifts by each
 * wake-up's lateness, moves them all.  Caps are judged on the whole run. */
enum { GAPS_MAX = 1 << 16 };
typedef struct rate_log {
    double t0, last;
    size_t n;
    double gap[GAPS_MAX];
} rate_log;

static rate_log *rate_start(void)
{
    rate_log *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->t0 = r->last = st_now();
    return r;
}

/* Counts a completion now; returns the seconds since rate_start. */
static double rate_count(rate_log *r)
{
    double now = st_now();
    if (r->n < GAPS_MAX)
        r->gap[r->n++] = now - r->last;
    r->last = now;
    return now - r->t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* 1 / the median gap; frees r. */
static double rate_median(rate_log *r)
{
    assert_true(r->n > 0);
    qsort(r->gap, r->n, sizeof *r->gap, cmp_double);
    double mid = r->n % 2 ? r->gap[r->n / 2] : (r->gap[r->n / 2 - 1] + r->gap[r->n / 2]) / 2;
    free(r);
    return 1 / mid;
}

typedef struct rate {
    double bytes_per_s, ios_per_s; /* over the whole run */
    double median_ios_per_s;       /* QD1: 1 / the median gap between completions */
} rate;

/* Reads `chunk`-byte pieces for `seconds`. */
static rate read_for(fixture *fx, dlg_file *f, size_t chunk, double seconds, bool random)
{
    uint8_t *buf = malloc(chunk);
    uint64_t rng = 99, off = 0, bytes = 0, ios = 0;
    rate_log *log = rate_start();
    double t;
    do {
        off = random ? (dlg_splitmix_next(&rng) % (DATA_BYTES / chunk)) * chunk : (off + chunk) % DATA_BYTES;
        int64_t r = fx->m.host.file_read(&fx->m.host, f, buf, chunk, off);
        assert_int_equal(r, (int64_t)chunk);
        bytes += (uint64_t)r;
        ios++;
        t = rate_count(log);
    } while (t < seconds);
    free(buf);
    return (rate){(double)bytes / t, (double)ios / t, rate_median(log)};
}

static void test_bandwidth_profile_50MB(void **state)
{
    fixture *fx = *state;
    write_profile(fx, "; test disk\n[disk]\nbandwidth = 50MB\n");
    char opt[700];
    snprintf(opt, sizeof opt, "profile=%s", fx->profile);
    const char *const o[] = {opt, NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    /* Every read takes its transfer time, so time this reader lost (the
     * box is loaded) is lost bandwidth, as on a real disk: judge the rate
     * by the median read, and the run by the cap alone. */
    rate r = read_for(fx, f, 1 << 20, 1.0, false);
    double median_bps = r.median_ios_per_s * (1 << 20);
    print_message("bandwidth 50MB profile: %.2f MB/s, %.2f MB/s by the median read\n", r.bytes_per_s / 1e6,
                  median_bps / 1e6);
    assert_true(median_bps >= 47.5e6 && median_bps <= 52.5e6);
    assert_true(r.bytes_per_s <= 52.5e6);
    fx->m.host.file_close(&fx->m.host, f);
}

static void test_iops_cap(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"iops=2000", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    rate r = read_for(fx, f, 4096, 1.0, true);
    print_message("iops cap 2000: %.0f IOPS, median gap %.0f\n", r.ios_per_s, r.median_ios_per_s);
    assert_true(r.ios_per_s <= 2100);
    assert_true(r.median_ios_per_s >= 1900 && r.median_ios_per_s <= 2100);
    fx->m.host.file_close(&fx->m.host, f);
}

typedef struct worker {
    fixture *fx;
    double bytes_per_s;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    dlg_file *f = open_disk(w->fx);
    w->bytes_per_s = read_for(w->fx, f, 256 << 10, 1.0, true).bytes_per_s;
    w->fx->m.host.file_close(&w->fx->m.host, f);
    return NULL;
}

/* Loader threads open their own files, but share one emulated disk. */
static void test_threads_share_bucket(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"bandwidth=40000000" /* plain bytes: the mock parser is simplified */, NULL};
    make_throttle(fx, o);
    worker w[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (worker){fx, 0};
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    double total = 0;
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        total += w[i].bytes_per_s;
    }
    print_message("3 threads, bandwidth 40 MB/s: %.2f MB/s in all\n", total / 1e6);
    assert_true(total >= 38e6 && total <= 42e6);
}

static void test_fixed_latency(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"latency=2ms", "latency_dist=fixed", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    char buf[4096];
    for (int i = 0; i < 30; i++) {
        double t0 = st_now();
        assert_int_equal(fx->m.host.file_read(&fx->m.host, f, buf, sizeof buf, (uint64_t)i * 8192), 4096);
        double dt = st_now() - t0;
        if (dt < 2e-3)
            fail_msg("read %d took %.3f ms < 2 ms", i, dt * 1e3);
    }
    fx->m.host.file_close(&fx->m.host, f);
}

static void test_exponential_latency(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"latency=1ms", "latency_dist=exponential", "seed=5", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    char buf[512];
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < 300; i++) {
        double t0 = st_now();
        assert_int_equal(fx->m.host.file_read(&fx->m.host, f, buf, sizeof buf, 0), 512);
        double dt = st_now() - t0;
        sum += dt;
        lo = dt < lo ? dt : lo;
        hi = dt > hi ? dt : hi;
    }
    print_message("exponential 1ms: mean %.3f ms, min %.3f, max %.3f\n", sum / 300 * 1e3, lo * 1e3, hi * 1e3);
    assert_true(sum / 300 >= 0.85e-3 && sum / 300 <= 1.6e-3);
    assert_true(lo < 0.5e-3 && hi > 2.5e-3); /* a spread, not a constant */
    fx->m.host.file_close(&fx->m.host, f);
}

/* Mean lateness (s) of plain 200 us timed sleeps on this box. */
static double plain_sleep_late(void)
{
    double sum = 0;
    for (int i = 0; i < 100; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double want = (double)ts.tv_sec + ts.tv_nsec / 1e9 + 200e-6;
        ts.tv_nsec += 200000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += (double)ts.tv_sec + ts.tv_nsec / 1e9 - want;
    }
    return sum / 100;
}

/* QD1 IOPS is 1 / latency: a 200 us disk gives ~5000, not the ~3300 of
 * waits that wake a timer's 50-100 us late.  Skipped where plain sleeps
 * wake 0.3 ms late (a saturated box cannot tell). */
static void test_qd1_short_latency(void **state)
{
    fixture *fx = *state;
    double busy = plain_sleep_late();
    if (busy > 300e-6) {
        print_message("timers on this box wake %.0f us late: too busy to judge\n", busy * 1e6);
        skip();
    }
    const char *const o[] = {"latency=200us", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    /* The typical read, judged on the median, lands within 17 us of its
     * deadline.  Measured on this Zen 3 VM: 4750-4930 with the learned lead
     * (the ASan build the lower end), 3830-4170 without it (lead = 0, both
     * builds), where an older machine gave ~4990 and 4640.  Best of 3
     * windows: noise only lowers a window, a missing lead lowers them all.
     * It was one window at >= 4800, and one CI run's ASan pass, this test
     * alone, saw 4749 */
    rate r;
    for (int attempt = 0; attempt < 3; attempt++) {
        r = read_for(fx, f, 4096, 0.5, true);
        print_message("latency 200us, QD1: %.0f IOPS, median gap %.0f (ideal 5000)\n", r.ios_per_s,
                      r.median_ios_per_s);
        assert_true(r.ios_per_s <= 5050);
        assert_true(r.median_ios_per_s <= 5050);
        if (r.median_ios_per_s >= 4600)
            break;
    }
    assert_true(r.median_ios_per_s >= 4600);
    fx->m.host.file_close(&fx->m.host, f);
}

/* A read at the end of the file transfers nothing and the kernel answers
 * it without the disk: no latency.  One cut short by the end still pays. */
static void test_read_at_eof(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"latency=20ms", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    const dlg_host *h = &fx->m.host;
    static char buf[8192];
    double t0 = st_now();
    assert_int_equal(h->file_read(h, f, buf, sizeof buf, DATA_BYTES), 0);
    double at_eof = st_now() - t0;
    t0 = st_now();
    assert_int_equal(h->file_read(h, f, buf, sizeof buf, DATA_BYTES - 4096), 4096);
    double cut = st_now() - t0;
    print_message("latency 20ms: read at EOF %.2f ms, read cut short %.2f ms\n", at_eof * 1e3, cut * 1e3);
    assert_true(at_eof < 10e-3);
    assert_true(cut >= 20e-3);
    h->file_close(h, f);
}

/* bandwidth = 1 is 1 B/s: a 64 KiB read would take 18 hours in silence.
 * The first read whose transfer alone passes 10 s says so, once; a stop
 * ends the wait (the mock's stopping() answers true). */
static void test_slow_read_said(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"bandwidth=1000", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    const dlg_host *h = &fx->m.host;
    static char buf[65536];
    fx->m.stop = true;
    assert_int_equal(fx->m.warnings, 0);
    assert_int_equal(h->file_read(h, f, buf, 8192, 0), -DLG_ESTOP); /* 8.2 s: not said */
    assert_int_equal(fx->m.warnings, 0);
    assert_int_equal(h->file_read(h, f, buf, sizeof buf, 0), -DLG_ESTOP);
    assert_int_equal(h->file_read(h, f, buf, sizeof buf, 0), -DLG_ESTOP);
    print_message("%s\n", fx->m.last_log);
    assert_int_equal(fx->m.warnings, 1);
    char want[1024];
    snprintf(want, sizeof want,
             "throttle: one 65536-byte read of %s takes 66 s at bandwidth = 1000 B/s (over 10 s per I/O: "
             "bandwidth is bytes per second, e.g. 150MB; 0 = unlimited)",
             fx->data);
    assert_string_equal(fx->m.last_log, want);
    fx->m.stop = false;
    h->file_close(h, f);
}

/* A fetch of nothing at the end of the file (a reader asking for the rest
 * of a file it has all of) moves no data: like a read there, it is no I/O
 * and waits out no latency, whether throttle lends its own copy (inner
 * posix) or the inner backend's pages (inner mmap). */
static void fetch_at_eof(fixture *fx, const char *inner)
{
    const char *const o[] = {"latency=20ms", inner, NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    const dlg_host *h = &fx->m.host;
    const void *p = NULL;
    double t0 = st_now();
    assert_int_equal(h->file_fetch(h, f, DATA_BYTES, 0, &p), 0);
    double at_eof = st_now() - t0;
    h->file_unfetch(h, f, p, 0);
    t0 = st_now();
    assert_int_equal(h->file_fetch(h, f, DATA_BYTES - 4096, 4096, &p), 0);
    double last = st_now() - t0;
    h->file_unfetch(h, f, p, 4096);
    print_message("%s, latency 20ms: fetch at EOF %.2f ms, of the last 4 KiB %.2f ms\n", inner, at_eof * 1e3,
                  last * 1e3);
    assert_true(at_eof < 10e-3);
    assert_true(last >= 20e-3);
    h->file_close(h, f);
}

static void test_fetch_at_eof_emulated(void **state) { fetch_at_eof(*state, "inner=posix"); }

static void test_fetch_at_eof_zero_copy(void **state)
{
    fixture *fx = *state;
    st_backend mm;
    assert_int_equal(st_backend_create(&mm, &fx->m, "mmap", NULL), 0);
    assert_int_equal(mock_add_storage(&fx->m, "mapped", mm.ops, mm.inst), 0);
    fetch_at_eof(fx, "inner=mapped");
    st_backend_destroy(&fx->thr);
    st_backend_destroy(&mm);
}

/* Keeps qd reads of `block` bytes in flight for `seconds`, at random
 * offsets or sequentially (wrapping); returns reads/s. */
/* Enough reads in flight to queue over 10 ms of admissions: a reader away
 * for a few scheduler slices on a loaded box (16 let the disk idle after
 * ~3 ms away) does not idle the disk. */
enum { QD_MAX = 64, QD_BLOCK_MAX = 32768 };
static double async_rate(fixture *fx, dlg_file *f, int qd, size_t block, bool seq, double seconds)
{
    static uint8_t bufs[QD_MAX][QD_BLOCK_MAX];
    assert_true(qd <= QD_MAX && block <= QD_BLOCK_MAX);
    uint64_t rng = 3, next = 0, nblocks = DATA_BYTES / block;
    dlg_io io[QD_MAX];
    for (uint64_t i = 0; i < (uint64_t)qd; i++)
        io[i] = (dlg_io){bufs[i], block, (seq ? next++ : dlg_splitmix_next(&rng)) % nblocks * block, i};
    const dlg_host *h = &fx->m.host;
    double t0 = st_now(), t;
    assert_int_equal(h->file_submit(h, f, io, (size_t)qd), qd);
    uint64_t n = 0;
    do {
        dlg_io_done d[QD_MAX];
        int k = h->file_reap(h, f, d, (size_t)qd, 1);
        assert_true(k >= 1);
        for (int i = 0; i < k; i++) {
            assert_int_equal(d[i].result, (int64_t)block);
            io[0] = (dlg_io){bufs[d[i].user], block, (seq ? next++ : dlg_splitmix_next(&rng)) % nblocks * block,
                             d[i].user};
            assert_int_equal(h->file_submit(h, f, io, 1), 1);
        }
        n += (uint64_t)k;
        t = st_now() - t0;
    } while (t < seconds);
    dlg_io_done d[QD_MAX];
    int left = qd;
    while (left > 0) {
        int k = h->file_reap(h, f, d, QD_MAX, (size_t)left);
        assert_true(k > 0);
        left -= k;
    }
    return (double)n / t;
}

/* Many reads in flight overlap their latency; the IOPS cap still holds. */
static void async_iops(fixture *fx, const char *inner)
{
    const char *const o[] = {inner, "iops=2000", "latency=5ms", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    double iops = async_rate(fx, f, 32 /* uring's default depth */, 4096, false, 1.0);
    print_message("%s, QD32, iops 2000, latency 5ms: %.0f IOPS\n", inner, iops);
    assert_true(iops >= 1900 && iops <= 2100); /* QD1 would give ~200 */
    fx->m.host.file_close(&fx->m.host, f);
}

static void test_async_iops_uring(void **state) { async_iops(*state, "inner=uring"); }
static void test_async_iops_emulated(void **state) { async_iops(*state, "inner=posix"); }

/* The shipped gp3 profile, as EBS counts I/Os: sequential 32 KiB reads
 * merge 8 to one 256 KiB I/O, so they reach the 125 MiB/s bandwidth
 * (4000 reads/s) instead of stopping at 3000 IOPS (94 MiB/s); random ones
 * count one each and stop at 3000. */
static void test_gp3_merges_sequential(void **state)
{
    fixture *fx = *state;
    char opt[4200];
    snprintf(opt, sizeof opt, "profile=%s/conf/disks/aws-gp3.ini",
             getenv("DLG_SOURCE_DIR") ? getenv("DLG_SOURCE_DIR") : ".");
    const char *const o[] = {opt, NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    double seq = async_rate(fx, f, QD_MAX, 32768, true, 0.6);
    double rnd = async_rate(fx, f, QD_MAX, 32768, false, 0.6);
    print_message("gp3, QD%d, 32 KiB: sequential %.0f reads/s (%.1f MiB/s), random %.0f\n", QD_MAX, seq,
                  seq * 32768 / 1048576, rnd);
    assert_true(seq >= 3800 && seq <= 4150);
    assert_true(rnd >= 2850 && rnd <= 3150);
    fx->m.host.file_close(&fx->m.host, f);
}

/* The shipped HDD profiles charge each read of 1 MiB or less a 1 MiB
 * credit, as AWS does: 4 KiB random reads go at the burst rate in 1-MiB
 * I/Os while the bucket lasts (st1 500/s, sc1 160/s) and at the baseline
 * once it is empty (80/s, 24/s: burst_iops = 0), as 1 MiB sequential
 * reads do in MiB/s.  latency = 0 to see the rates alone. */
static void hdd_rates(fixture *fx, const char *file, double peak, double base)
{
    char opt[4200];
    snprintf(opt, sizeof opt, "profile=%s/conf/disks/%s", getenv("DLG_SOURCE_DIR") ? getenv("DLG_SOURCE_DIR") : ".",
             file);
    const char *const full[] = {opt, "latency=0", NULL}, *const drained[] = {opt, "latency=0", "burst_iops=0", NULL};
    const char *const *cases[] = {full, drained};
    double want[] = {peak, base};
    for (int c = 0; c < 2; c++) {
        st_backend_destroy(&fx->thr);
        mock_host_fini(&fx->m);
        mock_host_init(&fx->m);
        make_throttle(fx, cases[c]);
        dlg_file *f = open_disk(fx);
        rate small = read_for(fx, f, 4096, 0.5, true);
        rate big = read_for(fx, f, 1 << 20, 0.5, false);
        print_message("%s%s: 4 KiB random %.0f reads/s (median %.0f), 1 MiB sequential %.1f MiB/s\n", file,
                      c ? " drained" : "", small.ios_per_s, small.median_ios_per_s, big.bytes_per_s / 1048576);
        assert_true(small.median_ios_per_s >= 0.9 * want[c] && small.median_ios_per_s <= 1.1 * want[c]);
        assert_true(small.ios_per_s <= 1.1 * want[c]);
        assert_true(big.median_ios_per_s >= 0.9 * want[c] && big.median_ios_per_s <= 1.1 * want[c]);
        fx->m.host.file_close(&fx->m.host, f);
    }
}

static void test_aws_hdd_profiles(void **state)
{
    hdd_rates(*state, "aws-st1.ini", 500, 80);
    hdd_rates(*state, "aws-sc1.ini", 160, 24);
}

/* Pages of path's first `bytes` in the page cache. */
static size_t resident_pages(const char *path, size_t bytes)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    void *p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(p != MAP_FAILED);
    size_t pages = bytes / 4096, n = 0;
    unsigned char *vec = malloc(pages);
    assert_int_equal(mincore(p, bytes, vec), 0);
    for (size_t i = 0; i < pages; i++)
        n += vec[i] & 1;
    free(vec);
    munmap(p, bytes);
    close(fd);
    return n;
}

/* Drops path's pages from the page cache; whether they went. */
static bool evict(const char *path)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return resident_pages(path, DATA_BYTES) == 0;
}

/* Seconds to read [0, bytes) in chunk-byte reads through the disk. */
static double read_through(fixture *fx, dlg_file *f, size_t bytes, size_t chunk)
{
    uint8_t *buf = malloc(chunk);
    double t0 = st_now();
    for (size_t off = 0; off < bytes; off += chunk)
        assert_int_equal(fx->m.host.file_read(&fx->m.host, f, buf, chunk, off), (int64_t)chunk);
    free(buf);
    return st_now() - t0;
}

/* What the disk told the host it charged since *mark (bytes; its I/Os
 * to *ios), and moves the mark. */
typedef struct charged_mark {
    uint64_t bytes;
    double ios;
} charged_mark;

static uint64_t charged_since(fixture *fx, charged_mark *mark, double *ios)
{
    uint64_t b = fx->m.disk_bytes - mark->bytes;
    *ios = fx->m.disk_ios - mark->ios;
    *mark = (charged_mark){fx->m.disk_bytes, fx->m.disk_ios};
    return b;
}

/* page_cache = model at 40 MB/s and 2 ms: a cold pass of 4 MiB takes its
 * transfer time, a second pass (the page cache's) none; 4 KiB reads,
 * whose pages the kernel's readahead brings, pay their bytes as read but
 * not a miss's latency each, so a cold pass takes the transfer time and
 * far less than 1024 latencies, also after the paid pages were evicted;
 * pages cached before the first read (cache = warm) are free; ignore (the
 * default) charges the second pass.  What the host is told (the row's
 * emulated_disk_read_*) is what was charged: every byte of a cold pass,
 * none of a cached one but pages evicted meanwhile (memory reclaim on a
 * loaded machine); a cold pass's I/Os between its 128 KiB readahead
 * I/Os (32) and its reads (64 of 64 KiB), a 4 KiB pass's below what its
 * time allows (1 s / 2 ms). */
static void test_page_cache_model(void **state)
{
    fixture *fx = *state;
    if (!evict(fx->data)) {
        print_message("page cache: POSIX_FADV_DONTNEED left pages cached here; nothing to measure\n");
        skip();
    }
    const size_t part = (size_t)4 << 20;
    const double xfer = (double)part / 40e6; /* 0.105 s */
    const char *const model[] = {"bandwidth=40MB", "latency=2ms", "page_cache=model", NULL};
    make_throttle(fx, model);
    charged_mark mark = {0, 0};
    double cold_ios, warm_ios, again_ios, small_ios;
    dlg_file *f = open_disk(fx);
    assert_true(fx->m.disk_calls == 1 && fx->m.disk_bytes == 0); /* counted from the open */
    double cold = read_through(fx, f, part, 65536);
    uint64_t cold_b = charged_since(fx, &mark, &cold_ios);
    double warm = read_through(fx, f, part, 65536);
    uint64_t warm_b = charged_since(fx, &mark, &warm_ios);
    /* evicted after it was paid for (a cache smaller than the file): the
     * pages readahead brings back are paid for again */
    assert_true(evict(fx->data));
    double again = read_through(fx, f, part, 4096);
    uint64_t again_b = charged_since(fx, &mark, &again_ios);
    fx->m.host.file_close(&fx->m.host, f);
    assert_true(evict(fx->data));
    f = open_disk(fx);
    double small = read_through(fx, f, part, 4096);
    uint64_t small_b = charged_since(fx, &mark, &small_ios);
    fx->m.host.file_close(&fx->m.host, f);
    print_message("page_cache = model, 4 MiB at 40 MB/s: cold %.3f s, cached %.3f s, evicted %.3f s, cold in 4 KiB "
                  "reads %.3f s\n", cold, warm, again, small);
    print_message("charged: cold %llu bytes in %.1f I/Os, cached %llu, evicted %llu in %.1f, 4 KiB %llu in %.1f\n",
                  (unsigned long long)cold_b, cold_ios, (unsigned long long)warm_b, (unsigned long long)again_b,
                  again_ios, (unsigned long long)small_b, small_ios);
    /* each miss waits 2 ms, readahead's pages do not: 1024 misses would take 2 s */
    assert_true(cold >= 0.9 * xfer && warm < 0.2 * xfer && small >= 0.9 * xfer && small < 1.0);
    assert_true(again >= 0.9 * xfer && again < 1.0);
    /* each pass charges a page at most once; the cached one only pages
     * reclaim took meanwhile (a loaded CI machine's took 5 of 1024) */
    assert_true(cold_b == part && again_b == part && small_b == part);
    assert_true(warm_b <= part / 16 && warm_b % 4096 == 0 && (warm_b == 0) == (warm_ios == 0));
    assert_true(cold_ios >= 32 && cold_ios <= 64);
    assert_true(again_ios >= 32 && again_ios < 500 && small_ios >= 32 && small_ios < 500);
    /* the whole file cached before it is opened: free from the first read */
    read_through(fx, (f = open_disk(fx)), DATA_BYTES, 1 << 20);
    fx->m.host.file_close(&fx->m.host, f);
    st_backend_destroy(&fx->thr);
    mock_host_fini(&fx->m);
    mock_host_init(&fx->m);
    make_throttle(fx, model);
    f = open_disk(fx);
    double prewarmed = read_through(fx, f, part, 65536);
    fx->m.host.file_close(&fx->m.host, f);
    /* the open's 0, all hits (but pages reclaim took meanwhile) */
    assert_true(fx->m.disk_calls >= 1 && fx->m.disk_bytes <= part / 16);
    /* ignore: the cached pass is charged as the cold one */
    st_backend_destroy(&fx->thr);
    mock_host_fini(&fx->m);
    mock_host_init(&fx->m);
    const char *const ignore[] = {"bandwidth=40MB", NULL};
    make_throttle(fx, ignore);
    f = open_disk(fx);
    double charged = read_through(fx, f, part, 65536);
    fx->m.host.file_close(&fx->m.host, f);
    assert_true(fx->m.disk_bytes == part && fx->m.disk_ios == 64); /* every read, as a miss */
    print_message("cached before the first read: %.3f s; page_cache = ignore, cached: %.3f s\n", prewarmed, charged);
    assert_true(prewarmed < 0.2 * xfer && charged >= 0.9 * xfer);
}

/* An asynchronous inner backend whose submit reads at once, as io_uring's
 * workers may before io_uring_enter returns: the page cache holds a read's
 * pages before the throttle has charged it. */
enum { EAGER_QD = 64 };
typedef struct eager_file {
    dlg_file base;
    int fd;
    dlg_io_done done[EAGER_QD];
    size_t ndone;
} eager_file;

static int eager_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst, (void)h, (void)flags;
    eager_file *ef = (eager_file *)f;
    ef->fd = open(path, O_RDONLY);
    ef->ndone = 0;
    return ef->fd < 0 ? -DLG_EIO : 0;
}

static int eager_close(dlg_file *f) { return close(((eager_file *)f)->fd) == 0 ? 0 : -DLG_EIO; }

static int eager_size(dlg_file *f, uint64_t *out)
{
    struct stat st;
    if (fstat(((eager_file *)f)->fd, &st) != 0)
        return -DLG_EIO;
    *out = (uint64_t)st.st_size;
    return 0;
}

static int64_t eager_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    return pread(((eager_file *)f)->fd, buf, n, (off_t)off);
}

static int eager_submit(dlg_file *f, const dlg_io *ios, size_t n)
{
    eager_file *ef = (eager_file *)f;
    size_t k = 0;
    for (; k < n && ef->ndone < EAGER_QD; k++)
        ef->done[ef->ndone++] = (dlg_io_done){ios[k].user, eager_read(f, ios[k].buf, ios[k].len, ios[k].off)};
    return (int)k;
}

static int eager_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    (void)min_done;
    eager_file *ef = (eager_file *)f;
    size_t k = ef->ndone < max ? ef->ndone : max;
    memcpy(done, ef->done, k * sizeof *done);
    memmove(ef->done, ef->done + k, (ef->ndone - k) * sizeof *done);
    ef->ndone -= k;
    return (int)k;
}

static const dlg_storage_ops eager_ops = {
    .version = 1,
    .caps = DLG_CAP_ASYNC,
    .file_size = sizeof(eager_file),
    .open = eager_open,
    .close = eager_close,
    .size = eager_size,
    .read = eager_read,
    .submit = eager_submit,
    .reap = eager_reap,
};

/* page_cache = model over it: the cold reads are still misses, charged
 * at the disk's 20 MB/s (looked at before the inner read, not after, when
 * they were all taken for cached before the run). */
static void test_page_cache_model_reads_before_submit_returns(void **state)
{
    fixture *fx = *state;
    if (!evict(fx->data)) {
        print_message("page cache: POSIX_FADV_DONTNEED left pages cached here; nothing to measure\n");
        skip();
    }
    assert_int_equal(mock_add_storage(&fx->m, "eager", &eager_ops, NULL), 0);
    const char *const o[] = {"inner=eager", "bandwidth=20MB", "page_cache=model", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    double cold = async_rate(fx, f, 8, 32768, true, 0.2), disk = 20e6 / 32768;
    fx->m.host.file_close(&fx->m.host, f);
    print_message("page_cache = model over an inner that reads in submit: cold %.0f reads/s (the disk: %.0f)\n",
                  cold, disk);
    assert_true(cold <= 1.1 * disk && cold >= 0.8 * disk);
}

/* page_cache = model on queued reads over io_uring (buffered): cold at
 * the disk's 20 MB/s, cached far above it. */
static void test_page_cache_model_uring(void **state)
{
    fixture *fx = *state;
    if (!evict(fx->data)) {
        print_message("page cache: POSIX_FADV_DONTNEED left pages cached here; nothing to measure\n");
        skip();
    }
    const char *const o[] = {"inner=uring", "bandwidth=20MB", "page_cache=model", NULL};
    make_throttle(fx, o);
    dlg_file *f = NULL;
    if (fx->m.host.file_open(&fx->m.host, "disk", fx->data, &f) != 0) {
        print_message("io_uring refused here (%s): nothing to check\n", fx->m.last_error);
        skip();
    }
    double cold = async_rate(fx, f, 8, 32768, true, 0.2); /* 4 of the 8 MiB */
    fx->m.host.file_close(&fx->m.host, f);
    read_through(fx, (f = open_disk(fx)), DATA_BYTES, 1 << 20); /* the rest cached */
    fx->m.host.file_close(&fx->m.host, f);
    f = open_disk(fx);
    double cached = async_rate(fx, f, 8, 32768, true, 0.2);
    fx->m.host.file_close(&fx->m.host, f);
    double disk = 20e6 / 32768;
    print_message("page_cache = model over uring, QD8, 32 KiB: cold %.0f reads/s, cached %.0f (the disk: %.0f)\n",
                  cold, cached, disk);
    assert_true(cold <= 1.1 * disk && cold >= 0.8 * disk && cached >= 3 * disk);
}

/* page_cache = model over an O_DIRECT inner backend: its reads never
 * touch the page cache, so every one is charged, and that is said once. */
static void test_page_cache_model_direct(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"inner=direct", "bandwidth=40MB", "page_cache=model", NULL};
    make_throttle(fx, o);
    dlg_file *f = NULL, *g = NULL;
    if (fx->m.host.file_open(&fx->m.host, "disk", fx->data, &f) != 0) {
        print_message("O_DIRECT refused here (%s): nothing to check\n", fx->m.last_error);
        skip();
    }
    print_message("%s\n", fx->m.last_log);
    assert_string_equal(fx->m.last_log,
                        "throttle: page_cache = model: inner = direct reads past the page cache (O_DIRECT); "
                        "every read is charged");
    assert_int_equal(fx->m.host.file_open(&fx->m.host, "disk", fx->data, &g), 0);
    assert_int_equal(fx->m.warnings, 1); /* once per storage */
    double twice = read_through(fx, f, (size_t)2 << 20, 65536) + read_through(fx, f, (size_t)2 << 20, 65536);
    assert_true(twice >= 0.9 * 2 * (double)(2 << 20) / 40e6);
    fx->m.host.file_close(&fx->m.host, f);
    fx->m.host.file_close(&fx->m.host, g);
}

/* One read (sync read, fetch, or submit + reap of one) of n at off;
 * returns the seconds it took. */
enum read_path { VIA_READ, VIA_FETCH, VIA_SUBMIT };
static double timed_read(fixture *fx, dlg_file *f, enum read_path how, void *buf, size_t n, uint64_t off)
{
    const dlg_host *h = &fx->m.host;
    double t0 = st_now();
    if (how == VIA_READ) {
        assert_int_equal(h->file_read(h, f, buf, n, off), (int64_t)n);
    } else if (how == VIA_FETCH) {
        const void *p = NULL;
        assert_int_equal(h->file_fetch(h, f, off, n, &p), 0);
        h->file_unfetch(h, f, p, n);
    } else {
        dlg_io io = {buf, n, off, 7};
        dlg_io_done d;
        assert_int_equal(h->file_submit(h, f, &io, 1), 1);
        assert_int_equal(h->file_reap(h, f, &d, 1, 1), 1);
        assert_int_equal(d.result, (int64_t)n);
    }
    return st_now() - t0;
}

/* Times of n reads of `size` one after another, each `pause_ms` after
 * the last (0: back to back), at distinct offsets; sorted. */
static void qd1_times(fixture *fx, dlg_file *f, enum read_path how, size_t size, long pause_ms, double *took,
                      int n)
{
    static uint8_t buf[1 << 20];
    assert_true(size <= sizeof buf);
    for (int i = 0; i < n; i++) {
        struct timespec pause = {0, pause_ms * 1000000L}; /* the disk idles */
        if (pause_ms)
            nanosleep(&pause, NULL);
        took[i] = timed_read(fx, f, how, buf, size, (uint64_t)i * 2 * size % DATA_BYTES);
    }
    qsort(took, (size_t)n, sizeof *took, cmp_double);
}

/* One reader at QD1 gets what a real volume gives it: every read takes
 * its transfer, 256 KiB at 50 MB/s = 5.24 ms, plus the 1 ms latency, on
 * every path (read, fetch, submit over an inner backend that is or is not
 * asynchronous), back to back or after a pause: bandwidth / (1 + latency
 * x bandwidth / size).  A read completed at once, its transfer charged to
 * the next: back to back the latency hid behind the next read's transfer
 * (5.24 ms a read), and a reader that computes between reads (a training
 * loop) saw no bandwidth limit at all (1.04 ms). */
static void qd1_reads(fixture *fx, const char *inner, enum read_path how)
{
    const char *const o[] = {"bandwidth=50000000", "latency=1ms", "latency_dist=fixed", inner, NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    enum { N = 7, SIZE = 256 << 10 };
    double want = (double)SIZE / 50e6 + 1e-3;
    for (long pause_ms = 0; pause_ms <= 20; pause_ms += 20) {
        double took[N];
        qd1_times(fx, f, how, SIZE, pause_ms, took, N);
        print_message("%s, path %d, %ld ms apart: 256 KiB reads took %.2f-%.2f ms (median %.2f, want %.2f)\n",
                      inner, (int)how, pause_ms, took[0] * 1e3, took[N - 1] * 1e3, took[N / 2] * 1e3, want * 1e3);
        /* Sleeps end late, never early: the shortest read is the model's
         * time, and none may take less (the paths agree) */
        assert_true(took[0] >= want - 2e-6 && took[0] <= want + 1e-3);
    }
    fx->m.host.file_close(&fx->m.host, f);
}

static void test_qd1_read(void **state) { qd1_reads(*state, "inner=posix", VIA_READ); }
static void test_qd1_fetch(void **state) { qd1_reads(*state, "inner=posix", VIA_FETCH); }
static void test_qd1_submit_emulated(void **state) { qd1_reads(*state, "inner=posix", VIA_SUBMIT); }
static void test_qd1_submit_uring(void **state) { qd1_reads(*state, "inner=uring", VIA_SUBMIT); }

/* Reads in flight overlap their latency, and the bytes still reach the
 * bandwidth, through an asynchronous inner backend or not: 32 KiB at
 * 50 MB/s is 1526 reads/s once 5.66 ms / 0.66 ms = 9 are in flight (32,
 * uring's depth: the reader may be away 16 ms before the disk idles). */
static void async_bandwidth(fixture *fx, const char *inner)
{
    const char *const o[] = {inner, "bandwidth=50000000", "latency=5ms", "latency_dist=fixed", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    double deep = async_rate(fx, f, 32, 32768, true, 0.6), want = 50e6 / 32768;
    print_message("%s, 32 KiB, 50 MB/s, 5 ms, QD32: %.0f reads/s (bandwidth: %.0f)\n", inner, deep, want);
    assert_true(deep >= 0.93 * want && deep <= 1.02 * want);
    fx->m.host.file_close(&fx->m.host, f);
}

static void test_async_bandwidth_uring(void **state) { async_bandwidth(*state, "inner=uring"); }
static void test_async_bandwidth_emulated(void **state) { async_bandwidth(*state, "inner=posix"); }

/* Bytes appended after open cost disk time like the others: the size at
 * open was the limit of what a read was charged, so reading a growing
 * file's new end was free. */
static void test_grown_file_charged(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"bandwidth=50000000", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    enum { SIZE = 1 << 20 };
    static uint8_t buf[SIZE];
    FILE *app = fopen(fx->data, "ab");
    assert_non_null(app);
    assert_int_equal(fwrite(buf, 1, SIZE, app), SIZE);
    assert_int_equal(fclose(app), 0);
    double took = timed_read(fx, f, VIA_READ, buf, SIZE, DATA_BYTES);
    print_message("1 MiB appended after open, read at 50 MB/s: %.2f ms\n", took * 1e3);
    assert_true(took >= SIZE / 50e6 - 2e-6);
    fx->m.host.file_close(&fx->m.host, f);
}

/* The time a 4 KiB read takes at 5 MB/s (0.8 ms) after `what` failed: a
 * failure that did no I/O must leave the disk idle, not owe 4 MiB (0.8 s)
 * that the next read waited out. */
static double read_after_failure(fixture *fx, dlg_file *f, const char *what)
{
    static uint8_t buf[4096];
    double took = timed_read(fx, f, VIA_READ, buf, sizeof buf, 0);
    print_message("4 KiB at 5 MB/s after %s: %.2f ms\n", what, took * 1e3);
    return took;
}

/* uring refuses more reads than its depth (32) at once. */
static void test_refused_submit_not_charged(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"inner=uring", "bandwidth=5000000", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    enum { N = 33, SIZE = 128 << 10 };
    static uint8_t bufs[N][SIZE];
    dlg_io io[N];
    for (size_t i = 0; i < N; i++)
        io[i] = (dlg_io){bufs[i], SIZE, i * SIZE, i};
    assert_true(fx->m.host.file_submit(&fx->m.host, f, io, N) < 0);
    assert_true(read_after_failure(fx, f, "a refused submit of 33 x 128 KiB") < 0.3);
    fx->m.host.file_close(&fx->m.host, f);
}

/* No buffer for a fetch of 1 PiB: it fails before any I/O. */
static void test_fetch_without_memory_not_charged(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"inner=posix", "bandwidth=5000000", NULL};
    make_throttle(fx, o);
    dlg_file *f = open_disk(fx);
    const void *p = NULL;
    assert_int_equal(fx->m.host.file_fetch(&fx->m.host, f, 0, (size_t)1 << 50, &p), -DLG_ENOMEM);
    assert_true(read_after_failure(fx, f, "a fetch with no memory") < 0.3);
    fx->m.host.file_close(&fx->m.host, f);
}

/* Numbers the log line reports for the resolved limits. */
static void resolved(fixture *fx, double *bw, double *iops)
{
    const char *p = strstr(fx->m.last_log, ": ");
    assert_non_null(p);
    assert_int_equal(sscanf(p, ": %lf B/s (burst %*f B), %lf IOPS", bw, iops), 2);
}

static void test_formula_and_override(void **state)
{
    fixture *fx = *state;
    /* Alibaba ESSD PL1 at 500 GiB: min(1800+50*500, 50000) = 26800 IOPS,
     * min(120+0.5*500, 350) = 350 MB/s. */
    write_profile(fx, "capacity = 500GiB\niops_base = 1800\niops_per_gib = 50\niops_max = 50000\n"
                      "bandwidth_base = 120MB\nbandwidth_per_gib = 0.5MB\nbandwidth_max = 350MB\n");
    char opt[700];
    snprintf(opt, sizeof opt, "profile=%s", fx->profile);
    const char *const o1[] = {opt, NULL};
    make_throttle(fx, o1);
    double bw, iops;
    resolved(fx, &bw, &iops);
    assert_true(bw == 350e6 && iops == 26800);
    st_backend_destroy(&fx->thr);
    /* explicit options win over the profile; capacity feeds the formula */
    const char *const o2[] = {opt, "capacity=100GiB", "bandwidth=20000000", NULL};
    mock_host_fini(&fx->m); /* forget "disk" and the posix instance behind it */
    make_throttle(fx, o2);
    resolved(fx, &bw, &iops);
    assert_true(bw == 20e6 && iops == 6800);
}

/* A profile of `text` fails to load, the error naming the file, then `what`
 * ("LINE: KEY = ..."). */
static void expect_profile_error(fixture *fx, const char *text, const char *what)
{
    char opt[700], tag[800];
    snprintf(opt, sizeof opt, "profile=%s", fx->profile);
    const char *const o[] = {opt, NULL};
    write_profile(fx, text);
    st_backend b;
    assert_int_not_equal(st_backend_create(&b, &fx->m, "throttle", o), 0);
    snprintf(tag, sizeof tag, "%s:%s", fx->profile, what);
    print_message("%s\n", fx->m.last_error);
    assert_non_null(strstr(fx->m.last_error, tag));
}

/* Write keys: a bad value names the profile's file and line; a profile
 * without them (as every one before them) keeps one combined limit;
 * write_budget = shared makes the write limits one budget with the reads,
 * and an explicit option (--set) overrides the profile's. */
/* A throttle over a profile of `text` (and options `extra`, or NULL) ends
 * its limits line with `want` (the writes' limits come last). */
static void expect_limits_log(fixture *fx, const char *text, const char *extra, const char *want)
{
    char opt[700];
    snprintf(opt, sizeof opt, "profile=%s", fx->profile);
    const char *const o[] = {opt, extra, NULL};
    write_profile(fx, text);
    make_throttle(fx, o);
    size_t n = strlen(fx->m.last_log), w = strlen(want);
    print_message("%s\n", fx->m.last_log);
    assert_true(n >= w && strcmp(fx->m.last_log + n - w, want) == 0);
    st_backend_destroy(&fx->thr);
    mock_host_fini(&fx->m); /* forget "disk" and the posix instance behind it */
}

static void test_write_keys(void **state)
{
    fixture *fx = *state;
    expect_profile_error(fx, "iops = 100\nwrite_iops = 50\nwrite_bandwidth = fast\n",
                         "3: write_bandwidth: 'fast' is not a size");
    expect_limits_log(fx, "capacity = 10GiB\nwrite_iops_per_gib = 3\nwrite_iops_max = 20\nwrite_bandwidth = 1MB\n",
                      NULL, "; writes 1000000 B/s, 20 IOPS");
    expect_limits_log(fx, "bandwidth = 50MB\niops = 100\n", NULL, "; writes shared B/s, shared IOPS");
    expect_profile_error(fx, "iops = 100\nwrite_iops = 200\nwrite_budget = sometimes\n",
                         "3: write_budget: 'sometimes' is not one of own|shared");
    const char *budget = "iops = 100\nwrite_iops = 200\nwrite_budget = shared\n";
    expect_limits_log(fx, budget, NULL, "; writes shared B/s, 200 IOPS, one budget with reads");
    expect_limits_log(fx, budget, "write_budget=own", "; writes shared B/s, 200 IOPS");
}

/* A profile path that opens but cannot be read (a directory, as
 * conf/disks/ for conf/disks/X.ini) is an error: it read as an empty
 * profile and the "throttle" ran unlimited. */
static void test_profile_unreadable(void **state)
{
    fixture *fx = *state;
    char opt[700];
    snprintf(opt, sizeof opt, "profile=%s", fx->dir);
    const char *const o[] = {opt, NULL};
    st_backend b;
    assert_int_not_equal(st_backend_create(&b, &fx->m, "throttle", o), 0);
    print_message("%s\n", fx->m.last_error);
    char want[800];
    snprintf(want, sizeof want, "profile %s: cannot read: %s", fx->dir, strerror(EISDIR));
    assert_non_null(strstr(fx->m.last_error, want));
}

static void test_disk_profiles_load(void **state)
{
    fixture *fx = *state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/conf/disks", getenv("DLG_SOURCE_DIR") ? getenv("DLG_SOURCE_DIR") : ".");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        char opt[4200];
        snprintf(opt, sizeof opt, "profile=%s/%s", dir, e->d_name);
        const char *const o[] = {opt, NULL};
        st_backend b;
        if (st_backend_create(&b, &fx->m, "throttle", o) != 0)
            fail_msg("%s: %s", e->d_name, fx->m.last_error);
        double bw, iops;
        resolved(fx, &bw, &iops);
        print_message("%-28s %8.1f MB/s %9.0f IOPS\n", e->d_name, bw / 1e6, iops);
        assert_true(bw > 0 && iops > 0);
        st_backend_destroy(&b);
        n++;
    }
    closedir(d);
    assert_true(n >= 10);
}

static void test_inner_errors(void **state)
{
    fixture *fx = *state;
    const char *const o[] = {"inner=nosuch", NULL};
    st_backend b;
    assert_true(st_backend_create(&b, &fx->m, "throttle", o) < 0);
    assert_non_null(strstr(fx->m.last_error, "inner = nosuch"));
    /* a registered [storage NAME] is found by name */
    st_backend mm;
    assert_int_equal(st_backend_create(&mm, &fx->m, "mmap", NULL), 0);
    assert_int_equal(mock_add_storage(&fx->m, "fastdisk", mm.ops, mm.inst), 0);
    const char *const o2[] = {"inner=fastdisk", NULL};
    make_throttle(fx, o2);
    dlg_file *f = open_disk(fx);
    const void *p = NULL;
    assert_int_equal(fx->m.host.file_fetch(&fx->m.host, f, 0, 16, &p), 0);
    fx->m.host.file_unfetch(&fx->m.host, f, p, 16);
    fx->m.host.file_close(&fx->m.host, f);
    st_backend_destroy(&fx->thr);
    st_backend_destroy(&mm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bandwidth_profile_50MB, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_iops_cap, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_threads_share_bucket, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_fixed_latency, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_exponential_latency, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qd1_short_latency, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_read_at_eof, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_slow_read_said, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_fetch_at_eof_emulated, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_fetch_at_eof_zero_copy, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_async_iops_uring, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_async_iops_emulated, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gp3_merges_sequential, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_aws_hdd_profiles, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_page_cache_model, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_page_cache_model_direct, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_page_cache_model_uring, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_page_cache_model_reads_before_submit_returns, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qd1_read, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qd1_fetch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qd1_submit_emulated, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qd1_submit_uring, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_async_bandwidth_uring, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_async_bandwidth_emulated, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_grown_file_charged, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_refused_submit_not_charged, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_fetch_without_memory_not_charged, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_formula_and_override, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_write_keys, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_profile_unreadable, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_disk_profiles_load, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_inner_errors, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
