/* io's read-latency percentiles against a hand computation.  A storage
 * backend of the test's own answers every read at once, but for two reads
 * it sleeps 20 ms: with n reads the nearest-rank percentile p is the
 * ceil(p/100 * n)-th smallest, so whether it lands on an outlier is known
 * in advance (the runner's latency_p99_us uses the same definition). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "workload_run.h"

#define BLOCK 4096
#define SLOW_NS 20000000L
#define SLOW_US (SLOW_NS / 1000.0)

typedef struct slow_store {
    uint64_t reads;   /* reads so far */
    uint64_t slow[2]; /* the reads (0-based) that take SLOW_NS */
} slow_store;

static int ss_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst, (void)h, (void)path, (void)flags, (void)f;
    return 0;
}

static int ss_close(dlg_file *f)
{
    (void)f;
    return 0;
}

static int ss_size(dlg_file *f, uint64_t *out)
{
    (void)f;
    *out = 16 * BLOCK;
    return 0;
}

static int64_t ss_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)off;
    slow_store *s = f->inst;
    uint64_t k = s->reads++;
    if (k == s->slow[0] || k == s->slow[1]) {
        struct timespec ts = {0, SLOW_NS};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    memset(buf, 0, n);
    return (int64_t)n;
}

static const dlg_storage_ops slow_ops = {
    .version = 1,
    .file_size = sizeof(dlg_file),
    .open = ss_open,
    .close = ss_close,
    .size = ss_size,
    .read = ss_read,
};

static void add_slow(mock_host *m, void *arg) { assert_int_equal(mock_add_storage(m, "slow", &slow_ops, arg), 0); }

/* One step of `ios` reads of which reads a and b are slow. */
static void run_io(const char *ios, uint64_t a, uint64_t b, wr_result *r)
{
    slow_store s = {0, {a, b}};
    const char *const over[] = {"data=raw:slow.bin", "block=4KiB", "cache=none", ios, NULL};
    wr_run_with("tools.so", "io", over, 1, r, add_slow, &s);
    if (r->setup_rc != 0 || r->step_rc != 0)
        fail_msg("io: %s", r->error);
}

/* n reads, 2 of them slow: percentile field `at` is the rank of the
 * faster outlier, field `below` a rank under both. */
static void outlier_at(long n, const char *at, const char *below)
{
    char ios[32];
    snprintf(ios, sizeof ios, "step_ios=%ld", n);
    wr_result r;
    run_io(ios, 7, (uint64_t)n - 30, &r);
    assert_int_equal(wr_int(&r, "ios"), n);
    double p = wr_double(&r, at), q = wr_double(&r, below);
    printf("%ld reads: %s %.1f, %s %.1f\n", n, at, p, below, q);
    assert_true(p >= SLOW_US);
    assert_true(q < SLOW_US);
    assert_true(wr_double(&r, "io_lat_max_us") >= p);
}

/* 170 reads: p99 is rank ceil(168.3) = 169 (rounding 168.3 to 168
 * reported a fast read as p99). */
static void p99_is_nearest_rank(void **st)
{
    (void)st;
    outlier_at(170, "io_lat_p99_us", "io_lat_p50_us");
}

/* 1600 reads: p99.9 is rank ceil(1598.4) = 1599. */
static void p999_is_nearest_rank(void **st)
{
    (void)st;
    outlier_at(1600, "io_lat_p999_us", "io_lat_p99_us");
}

/* One read: every percentile is that read, the maximum exactly. */
static void one_read_is_every_percentile(void **st)
{
    (void)st;
    wr_result r;
    run_io("step_ios=1", 0, 99, &r);
    double max = wr_double(&r, "io_lat_max_us");
    assert_true(max >= SLOW_US);
    assert_true(wr_double(&r, "io_lat_p50_us") == max);
    assert_true(wr_double(&r, "io_lat_p999_us") == max);
    assert_true(wr_double(&r, "io_lat_mean_us") == max);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(p99_is_nearest_rank),
        cmocka_unit_test(p999_is_nearest_rank),
        cmocka_unit_test(one_read_is_every_percentile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
