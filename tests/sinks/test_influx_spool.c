/* The spool of influx.so: a Retry-After (seconds or HTTP-date) delays the
 * resend while degraded; sinks whose names differ only in '/', ' ' or '_'
 * spool to files of their own, named absolute in messages; an older
 * dlgauge's spool is pointed out; a spool larger than the replay's
 * window is sent whole with bounded memory; and a result row that neither
 * InfluxDB nor a full spool takes fails its write (the journal keeps it),
 * where a progress point waits in memory; a spool deleted or moved during
 * the run is followed.  fake_influx.py on 127.0.0.1
 * (python3) answers; port 1 refuses connections. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "spool_sink.h"

/* A mock host whose clock the test moves forward. */
typedef struct skewed {
    mock_host m; /* first: the sink's host is &m.host */
    uint64_t skew_ns;
} skewed;

static uint64_t skewed_now(const dlg_host *h)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + ((const skewed *)(const void *)h)->skew_ns;
}

/* Requests the fake got; *lines: the lines of their bodies, but for
 * request `skip` (-1: none). */
static size_t fake_requests(const st_fake *fk, int skip, size_t *lines)
{
    char *path = st_join(fk->dir, "requests.jsonl"), *text = st_slurp(path, NULL);
    size_t n = 0;
    *lines = 0;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n"), n++) {
        json_object *o = json_tokener_parse(line);
        if ((int)n != skip)
            *lines += st_count_lines(json_object_get_string(json_object_object_get(o, "body")));
        json_object_put(o);
    }
    free(text);
    free(path);
    return n;
}

/* InfluxDB answers 429 with Retry-After (30 s, as `ra` says it): the
 * resend while degraded waits that long, not the usual 10 s. */
static void retry_after_delays_resend(const char *ra)
{
    char *dir = st_tempdir(), url[128], sd[4200], step[32];
    snprintf(step, sizeof step, "429:%s", ra);
    const char *steps[] = {step, NULL};
    st_fake fk;
    assert_int_equal(st_fake_start(&fk, dir, "fake", steps), 0);
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/write?db=x", fk.port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool", dir);
    const char *ov[] = {url, sd, "batch=1", "retries=0", "timeout=2s", NULL};
    skewed k = {.skew_ns = 0};
    mock_host_init(&k.m);
    k.m.host.now_ns = skewed_now;
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&k.m, "influx.so", "influx", ov, &ops, &st), 0);
    size_t lines;
    spool_write_one(ops, st, 1); /* 429: spooled */
    assert_int_equal(fake_requests(&fk, -1, &lines), 1);
    assert_non_null(strstr(k.m.last_log, "HTTP 429"));
    k.skew_ns += 11000000000u;
    spool_write_one(ops, st, 2); /* past the 10 s, not past the Retry-After */
    assert_int_equal(fake_requests(&fk, -1, &lines), 1);
    k.skew_ns += 20000000000u;
    spool_write_one(ops, st, 3); /* past it: the spool goes, a line per request */
    assert_int_equal(fake_requests(&fk, -1, &lines), 4);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    st_fake_stop(&fk);
    st_rmtree(dir);
    free(dir);
}

static void test_retry_after_seconds_delays_resend(void **unused) { retry_after_delays_resend("30"); }

static void test_retry_after_date_delays_resend(void **unused) { retry_after_delays_resend("date+30"); }

/* Opens sink `name` (spool_dir = spool, relative to the current
 * directory), writes one point to an unreachable InfluxDB, flushes: the
 * error names the spool absolute. */
static void spool_one(const char *name, const char *abs_spool)
{
    spool_sink s;
    spool_sink_open(&s, name, "spool", true);
    spool_write_one(s.ops, s.st, 1);
    assert_int_equal(s.ops->flush(s.st, 2000000000u), -DLG_EAGAIN);
    char want[4400];
    snprintf(want, sizeof want, "1 point stays spooled in %s until `dlgauge flush` (or the next run) sends it",
             abs_spool);
    assert_non_null(strstr(s.m.last_error, want));
    s.ops->close(s.st);
}

static void assert_lines(const char *dir, const char *file, size_t want)
{
    char *path = st_join(dir, file), *text = st_slurp(path, NULL);
    assert_non_null(text);
    assert_int_equal(st_count_lines(text), want);
    free(text);
    free(path);
}

/* "a b", "a/b" and "a_b" once all spooled to a_b.lp, mixing their points. */
static void test_spool_names_distinct_and_absolute(void **unused)
{
    char *dir = st_tempdir(), cwd[4096], *spool = st_join(dir, "spool");
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    static const char *const names[] = {"a b", "a/b", "a_b", "a%20b"};
    static const char *const files[] = {"a%20b.lp", "a%2Fb.lp", "a_b.lp", "a%2520b.lp"};
    for (size_t i = 0; i < 4; i++) {
        char *abs = st_join(spool, files[i]);
        spool_one(names[i], abs);
        free(abs);
    }
    for (size_t i = 0; i < 4; i++)
        assert_lines(spool, files[i], 1);
    assert_int_equal(chdir(cwd), 0);
    st_rmtree(dir);
    free(spool);
    free(dir);
}

/* A spool an older dlgauge wrote under the '_' name is pointed out, once. */
static void test_legacy_spool_pointed_out(void **unused)
{
    char *dir = st_tempdir(), *legacy = st_join(dir, "a_b.lp");
    FILE *f = fopen(legacy, "w");
    assert_non_null(f);
    fputs("m v=1i 1\n", f);
    fclose(f);
    spool_sink s;
    spool_sink_open(&s, "a b", dir, false);
    assert_int_equal(s.m.warnings, 1);
    assert_non_null(strstr(s.m.last_log, legacy));
    assert_non_null(strstr(s.m.last_log, "a%20b.lp"));
    assert_int_equal(s.ops->flush(s.st, 1000000000u), 0);
    s.ops->close(s.st);
    assert_lines(dir, "a_b.lp", 1); /* left as it was */
    st_rmtree(dir);
    free(legacy);
    free(dir);
}

/* A spool InfluxDB cannot take when the sink opens: a run's begin warns of
 * it before any cell; `dlgauge flush` (open, flush, no begin) says it once,
 * in flush's error of what stays spooled (the open's warning came before
 * it, all but the same line). */
static void test_unreachable_said_once(void **unused)
{
    char *dir = st_tempdir(), *spool = st_join(dir, "influx.lp");
    for (int run = 0; run < 2; run++) {
        FILE *f = fopen(spool, "w");
        assert_non_null(f);
        fputs("m v=1i 1\nm v=2i 2\n", f);
        fclose(f);
        spool_sink s;
        spool_sink_open(&s, "influx", dir, false);
        assert_int_equal(s.m.warnings, 0);
        if (run) {
            assert_int_equal(s.ops->begin(s.st, &(dlg_schema){0}), 0);
            assert_int_equal(s.m.warnings, 1);
            assert_non_null(strstr(s.m.last_log, "is unreachable ("));
            assert_non_null(strstr(s.m.last_log, "points stay spooled in"));
        }
        assert_int_equal(s.ops->flush(s.st, 1000000000u), -DLG_EAGAIN);
        s.ops->close(s.st);
        assert_int_equal(s.m.warnings, run);
        assert_int_equal(s.m.errors, 1);
        assert_non_null(strstr(s.m.last_error, "is unreachable ("));
        assert_non_null(strstr(s.m.last_error, "2 points stay spooled in"));
        assert_lines(dir, "influx.lp", 2);
    }
    st_rmtree(dir);
    free(spool);
    free(dir);
}

/* Peak resident memory (VmHWM) in bytes; reset_peak() starts it again. */
static long long peak_rss(void)
{
    char *text = st_slurp("/proc/self/status", NULL), *p = text ? strstr(text, "VmHWM:") : NULL;
    long long kb = p ? atoll(p + 6) : -1;
    free(text);
    return kb * 1024;
}

static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    assert_non_null(f);
    fputs("5", f);
    fclose(f);
}

/* A 24 MiB spool (six replay windows) replayed at open: the first window
 * is taken, the second meets a 503, so the rest is copied into the new
 * spool; the flush sends that.  Every line arrives once, and the process
 * grows by far less than the spool. */
static void test_large_spool_streams(void **unused)
{
    char *dir = st_tempdir(), url[128], sd[4200], *sdir = st_join(dir, "spool");
    const char *steps[] = {"204", "503", NULL};
    st_fake fk;
    assert_int_equal(st_fake_start(&fk, dir, "fake", steps), 0);
    assert_int_equal(mkdir(sdir, 0777), 0);
    char *spool = st_join(sdir, "influx.lp");
    FILE *f = fopen(spool, "w");
    assert_non_null(f);
    char pad[201];
    memset(pad, 'x', 200);
    pad[200] = '\0';
    size_t n = 0;
    for (long long bytes = 0; bytes < (24ll << 20); n++)
        bytes += fprintf(f, "big,t=x s=\"%s\",v=%zui %zu\n", pad, n, n + 1);
    fclose(f);
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/write?db=x", fk.port);
    snprintf(sd, sizeof sd, "spool_dir=%s", sdir);
    const char *ov[] = {url, sd, "batch=1000000", "retries=0", "timeout=30s", NULL};
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = NULL;
    reset_peak();
    long long before = peak_rss();
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), 0);
    long long grown = peak_rss() - before;
    size_t taken, reqs = fake_requests(&fk, 1, &taken); /* the second met a 503 */
    assert_int_equal(reqs, 2);
    assert_true(taken > 0 && taken < n);
    assert_lines(sdir, "influx.lp", n - taken);
    assert_int_equal(ops->flush(st, 10000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    print_message("peak memory grew by %lld KiB replaying a %zu-line spool\n", grown >> 10, n);
    assert_true(grown < (12ll << 20));
    reqs = fake_requests(&fk, 1, &taken);
    assert_true(reqs >= 7);
    assert_int_equal(taken, n); /* each once */
    assert_lines(sdir, "influx.lp", 0);
    st_fake_stop(&fk);
    st_rmtree(dir);
    free(sdir);
    free(spool);
    free(dir);
}

/* Writes one point of measurement meas, field v = t, at time t. */
static int write_meas(const spool_sink *s, const char *meas, int64_t t)
{
    dlg_field f = {"v", DLG_FIELD_INT, {.i = t}};
    dlg_point p = {meas, NULL, 0, &f, 1, t};
    return s->ops->write(s->st, &p, 1);
}

/* A spool on a full disk: dir/spool/influx.lp is /dev/full (each write
 * fails with ENOSPC).  Returns the spool's path, or NULL (skip) without
 * /dev/full. */
static char *full_spool(const char *dir)
{
    char *sdir = st_join(dir, "spool"), *spool = st_join(sdir, "influx.lp");
    assert_int_equal(mkdir(sdir, 0777), 0);
    free(sdir);
    if (access("/dev/full", W_OK) != 0 || symlink("/dev/full", spool) != 0) {
        free(spool);
        return NULL;
    }
    return spool;
}

/* An influx sink whose spool (*spool, in *dir) is /dev/full: skips the
 * test where there is none. */
static void open_full_spool(spool_sink *s, char **dir, char **spool)
{
    *dir = st_tempdir();
    *spool = full_spool(*dir);
    if (!*spool) {
        st_rmtree(*dir);
        free(*dir);
        skip();
    }
    char *sd = st_join(*dir, "spool");
    spool_sink_open(s, "influx", sd, true);
    free(sd);
}

/* InfluxDB unreachable, the spool's disk full: a progress point waits in
 * memory (write returns 0, one warning), but a write carrying a result
 * row or the dlgauge_host point fails, in one line naming the spool, the
 * reason and the journal, so that the host keeps the row for --resume
 * (such writes returned 0, so the journal called the rows sent, and the
 * flush said they were lost: gone for good).  The flush does not call the
 * journaled points held lost. */
static void test_unspoolable_result_fails_write(void **unused)
{
    char *dir, *spool;
    spool_sink s;
    open_full_spool(&s, &dir, &spool);
    assert_int_equal(write_meas(&s, "dlgauge_progress", 1), 0);
    assert_int_equal(s.m.errors, 0);
    assert_int_equal(write_meas(&s, "dlgauge_result", 2), -DLG_EIO);
    assert_int_equal(s.m.errors, 1);
    assert_int_equal(s.m.warnings, 1); /* (no word of a spool that took nothing) */
    assert_non_null(strstr(s.m.last_log, "progress points wait in memory"));
    char want[4400];
    snprintf(want, sizeof want, "%s: cannot spool a result row that InfluxDB at http://127.0.0.1:1/write?db=x&"
             "precision=ns did not take: %s; the run's journal keeps it: `dlgauge run --resume` sends it again",
             spool, strerror(ENOSPC));
    assert_string_equal(s.m.last_error, want);
    assert_int_equal(write_meas(&s, "dlgauge_host", 3), -DLG_EIO);
    assert_non_null(strstr(s.m.last_error, "cannot spool the run's dlgauge_host point that"));
    assert_int_equal(write_meas(&s, "dlgauge_progress", 4), 0);
    assert_int_equal(s.m.errors, 2);
    assert_int_equal(s.m.warnings, 1); /* said once */
    assert_int_equal(s.ops->flush(s.st, 2000000000u), -DLG_EIO);
    assert_non_null(strstr(s.m.last_error, "; 2 progress points held in memory are lost when the run ends; the "
                           "result row and the run's dlgauge_host point held in memory stay in the run's journal: "
                           "`dlgauge run --resume` sends them"));
    s.ops->close(s.st);
    /* only journaled points held: nothing is lost */
    char *sd = st_join(dir, "spool");
    spool_sink_open(&s, "influx", sd, true);
    free(sd);
    assert_int_equal(write_meas(&s, "dlgauge_result", 5), -DLG_EIO);
    assert_int_equal(s.m.warnings, 0); /* no word of progress points in memory */
    assert_int_equal(s.ops->flush(s.st, 2000000000u), -DLG_EAGAIN);
    assert_non_null(strstr(s.m.last_error, "; the result row held in memory stays in the run's journal: `dlgauge "
                           "run --resume` sends it"));
    assert_null(strstr(s.m.last_error, "lost"));
    s.ops->close(s.st);
    st_rmtree(dir);
    free(spool);
    free(dir);
}

/* The disk freed: what was held goes to the spool in the order written,
 * behind it the next point; the row a failed write left in the journal,
 * sent again through write_again (as --resume does), is spooled too. */
static void test_held_spooled_in_order_once_freed(void **unused)
{
    char *dir, *spool;
    spool_sink s;
    open_full_spool(&s, &dir, &spool);
    assert_int_equal(write_meas(&s, "dlgauge_progress", 1), 0);
    assert_int_equal(write_meas(&s, "dlgauge_result", 2), -DLG_EIO);
    assert_int_equal(unlink(spool), 0);
    assert_int_equal(write_meas(&s, "dlgauge_progress", 3), 0);
    dlg_field f = {"v", DLG_FIELD_INT, {.i = 2}};
    dlg_point row = {"dlgauge_result", NULL, 0, &f, 1, 2};
    assert_int_equal(s.ops->write_again(s.st, &row, 1), 0);
    assert_int_equal(s.m.errors, 1);
    assert_int_equal(s.ops->flush(s.st, 2000000000u), -DLG_EAGAIN); /* all spooled */
    s.ops->close(s.st);
    char *text = st_slurp(spool, NULL);
    assert_non_null(text);
    assert_string_equal(text, "dlgauge_progress v=1i 1\ndlgauge_result v=2i 2\ndlgauge_progress v=3i 3\n"
                              "dlgauge_result v=2i 2\n");
    free(text);
    st_rmtree(dir);
    free(spool);
    free(dir);
}

/* The bodies the fake was sent, one after another (caller frees). */
static char *fake_bodies(const st_fake *fk)
{
    char *path = st_join(fk->dir, "requests.jsonl"), *text = st_slurp(path, NULL), *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        json_object *o = json_tokener_parse(line);
        fputs(json_object_get_string(json_object_object_get(o, "body")), f);
        json_object_put(o);
    }
    fclose(f);
    free(text);
    free(path);
    return out;
}

/* The spool deleted during the run (rm spool/influx.lp) took the points
 * in it unseen, and `dlgauge flush` found nothing to send: it is made
 * again from the copy the sink holds, with one warning, and the next
 * open (as `dlgauge flush` does) delivers every point once, in order. */
static void test_spool_deleted_during_run(void **unused)
{
    char *dir = st_tempdir(), *sdir = st_join(dir, "spool"), *spool = st_join(sdir, "influx.lp");
    spool_sink s;
    spool_sink_open(&s, "influx", sdir, true);
    spool_write_one(s.ops, s.st, 1);
    spool_write_one(s.ops, s.st, 2);
    assert_int_equal(s.m.warnings, 1); /* unreachable: spooled */
    assert_int_equal(unlink(spool), 0);
    spool_write_one(s.ops, s.st, 3);
    assert_int_equal(s.m.warnings, 2);
    char want[4400];
    snprintf(want, sizeof want, "%s was deleted during the run: made again from the copy still open, with the 2 "
             "spooled points it held before", spool);
    assert_non_null(strstr(s.m.last_log, want));
    assert_int_equal(s.ops->flush(s.st, 2000000000u), -DLG_EAGAIN);
    assert_non_null(strstr(s.m.last_error, "3 points stay spooled"));
    s.ops->close(s.st);

    const char *steps[] = {NULL};
    st_fake fk;
    assert_int_equal(st_fake_start(&fk, dir, "fake", steps), 0);
    char url[128], sd[4200];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/write?db=x", fk.port);
    snprintf(sd, sizeof sd, "spool_dir=%s", sdir);
    const char *ov[] = {url, sd, "retries=0", "timeout=10s", NULL};
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), 0);
    assert_int_equal(ops->flush(st, 10000000000u), 0);
    ops->close(st);
    char *sent = fake_bodies(&fk);
    assert_string_equal(sent, "m v=1i 1\nm v=2i 2\nm v=3i 3\n");
    assert_int_equal(m.errors, 0);
    free(sent);
    st_fake_stop(&fk);
    st_rmtree(dir);
    free(spool);
    free(sdir);
    free(dir);
}

/* Moved away, the spool keeps its points there (said once: `dlgauge
 * flush` does not send them); new ones spool at the path. */
static void test_spool_moved_during_run(void **unused)
{
    char *dir = st_tempdir(), *sdir = st_join(dir, "spool"), *spool = st_join(sdir, "influx.lp");
    char *moved = st_join(dir, "kept.lp");
    spool_sink s;
    spool_sink_open(&s, "influx", sdir, true);
    spool_write_one(s.ops, s.st, 1);
    assert_int_equal(rename(spool, moved), 0);
    spool_write_one(s.ops, s.st, 2);
    assert_int_equal(s.m.warnings, 2);
    assert_non_null(strstr(s.m.last_log, "the 1 spooled point it held before stay in the moved file"));
    assert_int_equal(s.ops->flush(s.st, 2000000000u), -DLG_EAGAIN);
    s.ops->close(s.st);
    char *old = st_slurp(moved, NULL), *now = st_slurp(spool, NULL);
    assert_non_null(old);
    assert_non_null(now);
    assert_string_equal(old, "m v=1i 1\n");
    assert_string_equal(now, "m v=2i 2\n");
    free(old);
    free(now);
    st_rmtree(dir);
    free(moved);
    free(spool);
    free(sdir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retry_after_seconds_delays_resend),
        cmocka_unit_test(test_retry_after_date_delays_resend),
        cmocka_unit_test(test_spool_names_distinct_and_absolute),
        cmocka_unit_test(test_legacy_spool_pointed_out),
        cmocka_unit_test(test_unreachable_said_once),
        cmocka_unit_test(test_large_spool_streams),
        cmocka_unit_test(test_unspoolable_result_fails_write),
        cmocka_unit_test(test_held_spooled_in_order_once_freed),
        cmocka_unit_test(test_spool_deleted_during_run),
        cmocka_unit_test(test_spool_moved_during_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
