/* The measured clock behind % of peak is measured once per host and kept
 * in its tuning record (core/nn/tune.h): later cells read it back, so the
 * peak does not move with the load each one meets; a record that is
 * corrupt, of another host or holds no plausible clock is ignored with a
 * warning and rewritten, never trusted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sys/wait.h>

#include "peak.h"
#include "tune_testutil.h"

/* The peak measured into a fresh record; skips where nothing is measured
 * (no x86, no known FLOPs per cycle). */
static void first_measure(char rec[64], dlg_peak *p)
{
    tt_fresh_record(rec);
    dlg_peak_detect(p, 1);
    printf("  first: %s\n", p->source);
    if (p->flops_per_cycle == 0 || !strstr(p->source, "measured")) {
        tt_remove_record(rec);
        skip();
    }
}

/* The record's first two lines (this host's header), malloc'ed. */
static char *header_of(const char *text)
{
    const char *second = strchr(text, '\n');
    assert_non_null(second);
    const char *end = strchr(second + 1, '\n');
    assert_non_null(end);
    return strndup(text, (size_t)(end + 1 - text));
}

/* A clock no measurement here gives (a record kept from an earlier run). */
static double other_clock(const dlg_peak *p) { return round(p->ghz * 0.93 * 1e4) / 1e4; }

static void test_clock_read_from_record(void **st)
{
    (void)st;
    char rec[64];
    dlg_peak p, q;
    first_measure(rec, &p);
    char *text = tt_read(rec), line[64];
    assert_non_null(text); /* stored */
    snprintf(line, sizeof line, "\nclock_ghz %.4f\n", p.ghz);
    assert_non_null(strstr(text, line));
    assert_non_null(strstr(p.source, "stored in tuning record"));
    /* a later cell, on 4 cores, at whatever load: the record's clock */
    double kept = other_clock(&p);
    char *head = header_of(text), body[1200];
    int len = snprintf(body, sizeof body, "%sclock_ghz %.4f\n", head, kept);
    tt_write(rec, body, (size_t)len);
    dlg_peak_detect(&q, 4);
    printf("  later: %s\n", q.source);
    assert_true(fabs(q.ghz - kept) < 1e-9);
    assert_true(fabs(q.flops - 4 * kept * 1e9 * q.flops_per_cycle) < 1e3);
    assert_non_null(strstr(q.source, "measured once on this host"));
    assert_non_null(strstr(q.source, rec));
    dlg_peak_detect_prec(&q, 1, true); /* bf16's peak: the same clock */
    assert_true(fabs(q.ghz - kept) < 1e-9);
    free(head);
    free(text);
    tt_remove_record(rec);
}

/* One bad record: ignored (the clock is measured, not `bad`'s), one
 * warning line naming the problem, and the record rewritten whole. */
static void check_ignored(const char *rec, const char *text, size_t len, const char *why, double fake,
                          const char *head)
{
    dlg_peak q;
    tt_write(rec, text, len);
    tt_stderr cap;
    tt_capture(&cap);
    dlg_peak_detect(&q, 1);
    char *err = tt_captured(&cap);
    assert_non_null(err);
    assert_true(fabs(q.ghz - fake) > 1e-6);
    assert_non_null(strstr(err, rec));
    assert_non_null(strstr(err, why));
    assert_non_null(strstr(q.source, "stored in tuning record"));
    char *now = tt_read(rec), line[64];
    assert_non_null(now);
    assert_memory_equal(now, head, strlen(head));
    snprintf(line, sizeof line, "\nclock_ghz %.4f\n", q.ghz);
    assert_non_null(strstr(now, line));
    free(now);
    free(err);
}

static void test_bad_records_ignored(void **st)
{
    (void)st;
    char rec[64], bad[1400];
    dlg_peak p;
    first_measure(rec, &p);
    char *text = tt_read(rec);
    assert_non_null(text); /* stored */
    char *head = header_of(text);
    double fake = other_clock(&p);
    int n = snprintf(bad, sizeof bad, "%sclock_ghz %.4f\nwhatisthis\n", head, fake);
    check_ignored(rec, bad, (size_t)n, "line 4: not '<key> <value>'", fake, head);
    n = snprintf(bad, sizeof bad, "%sclock_ghz %.4f", head, fake);
    check_ignored(rec, bad, (size_t)n, "line 3: cut short", fake, head);
    n = snprintf(bad, sizeof bad, "dlgauge-tune 1\nhost elsewhere | Other CPU | x\nclock_ghz %.4f\n", fake);
    check_ignored(rec, bad, (size_t)n, "another host", fake, head);
    n = snprintf(bad, sizeof bad, "clock_ghz %.4f\n", fake);
    check_ignored(rec, bad, (size_t)n, "not a dlgauge tuning record", fake, head);
    n = snprintf(bad, sizeof bad, "%sclock_ghz 99\n", head);
    check_ignored(rec, bad, (size_t)n, "no clock of this CPU", 99, head);
    n = snprintf(bad, sizeof bad, "%sclock_ghz %.4f\n", head, fake);
    bad[strlen(head) + 3] = '\0';
    check_ignored(rec, bad, (size_t)n, "a NUL byte", fake, head);
    free(head);
    free(text);
    tt_remove_record(rec);
}

/* Ranks starting together on one host: one measures, the others wait for
 * its record and read it, so all divide by the same peak. */
static void test_racing_processes_agree(void **st)
{
    (void)st;
    enum { N = 4 };
#if !defined(__x86_64__) && !defined(__i386__)
    skip(); /* the clock is measured on x86 only */
#endif
    char rec[64];
    int fds[2];
    tt_fresh_record(rec);
    assert_int_equal(pipe(fds), 0);
    for (int i = 0; i < N; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            dlg_peak p;
            dlg_peak_detect(&p, 1);
            _exit(write(fds[1], &p.ghz, sizeof p.ghz) == sizeof p.ghz ? 0 : 1);
        }
    }
    close(fds[1]);
    double ghz[N];
    for (int i = 0; i < N; i++) {
        int status;
        assert_true(wait(&status) > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(read(fds[0], &ghz[i], sizeof ghz[i]), sizeof ghz[i]);
    }
    close(fds[0]);
    if (ghz[0] <= 0) {
        tt_remove_record(rec);
        skip(); /* nothing measured here */
    }
    for (int i = 1; i < N; i++)
        assert_true(fabs(ghz[i] - ghz[0]) < 1e-4); /* stored at 4 decimals */
    char *text = tt_read(rec), line[64];
    assert_non_null(text);
    snprintf(line, sizeof line, "\nclock_ghz %.4f\n", ghz[0]);
    assert_non_null(strstr(text, line));
    free(text);
    tt_remove_record(rec);
}

/* $DLGAUGE_TUNE=off: measured every time, nothing written. */
static void test_record_off(void **st)
{
    (void)st;
    dlg_peak p;
    setenv("DLGAUGE_TUNE", "off", 1);
    dlg_peak_detect(&p, 1);
    printf("  off: %s\n", p.source);
    if (p.flops_per_cycle == 0 || !strstr(p.source, "measured"))
        skip(); /* no clock measured here (no x86, no known FLOPs per cycle) */
    assert_non_null(strstr(p.source, "no tuning record"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_read_from_record),
        cmocka_unit_test(test_bad_records_ignored),
        cmocka_unit_test(test_racing_processes_agree),
        cmocka_unit_test(test_record_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
