/* The sinks when memory runs out: each allocation of a sink's open,
 * begin, three result writes, flush and close fails in turn (rt_oom.h),
 * for csv.so, json.so and influx.so (its InfluxDB on 127.0.0.1 port 1
 * refusing connections, so that every point goes to its spool).  A write
 * that returned 0 promised its row is delivered or on disk (plugin.h):
 * that row must be in the file (the spool), whole; a call that failed
 * must have said so; and the file must hold nothing else than whole rows
 * (after CSV's header). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rt_oom.h"
#include "sink_test_util.h"

enum { ROWS = 3 };

static const char *const TAGS[] = {"host", "job"};
static const dlg_metric FIELDS[] = {
    {"throughput", DLG_FIELD_DOUBLE, "images/s", ""},
    {"unit", DLG_FIELD_STRING, "", ""},
    {NULL, 0, NULL, NULL},
};
static const dlg_schema SCHEMA = {TAGS, 2, FIELDS, 2};

typedef struct sink_kind {
    const char *so, *type, *file; /* file: in the pass's folder, which is influx's spool_dir */
    const char *header; /* the file's first line, or NULL */
    const char *row_fmt; /* row i's line: %1$d is i + 1 (its second), %2$d i, %3$d the throughput 100 + i */
} sink_kind;

static const sink_kind KINDS[] = {
    {"csv.so", "csv", "run.csv", "time,host,job,throughput,unit\n",
     "1970-01-01T00:00:0%1$d.000000000Z,h1,job%2$d,%3$d,images/s\n"},
    {"json.so", "json", "run.jsonl", NULL,
     "{\"measurement\":\"dlgauge_result\",\"time\":\"1970-01-01T00:00:0%1$d.000000000Z\",\"time_ns\":%1$d000000000,"
     "\"tags\":{\"host\":\"h1\",\"job\":\"job%2$d\"},\"fields\":{\"throughput\":%3$d.0,\"unit\":\"images/s\"}}\n"},
    {"influx.so", "influx", "influx.lp", NULL,
     "dlgauge_result,host=h1,job=job%2$d throughput=%3$d,unit=\"images/s\" %1$d000000000\n"},
};

static void row_line(const sink_kind *k, int i, char *out, size_t n) { snprintf(out, n, k->row_fmt, i + 1, i, 100 + i); }

/* One run of the sink (its options vals) from open to close, under the
 * caller's armed failure: which writes returned 0 in stored[]; whether every
 * step that failed left a line (m's errors). */
static bool one_run(const dlg_plugin_desc *d, const dlg_value *vals, mock_host *m, bool stored[ROWS])
{
    char job[ROWS][16];
    const dlg_sink_ops *ops = d->ops;
    void *st = NULL;
    memset(stored, 0, ROWS * sizeof *stored);
    int errors = m->errors;
    bool silent = false; /* a failure without a line */
    if (ops->open(&m->host, vals, d->name, &st) != 0)
        return m->errors > errors;
    int rc = ops->begin ? ops->begin(st, &SCHEMA) : 0;
    silent |= rc < 0 && m->errors == errors;
    for (int i = 0; i < ROWS && rc == 0; i++) {
        snprintf(job[i], sizeof job[i], "job%d", i);
        dlg_tag tags[] = {{"host", "h1"}, {"job", job[i]}};
        dlg_field fields[] = {{"throughput", DLG_FIELD_DOUBLE, {.d = 100 + i}},
                              {"unit", DLG_FIELD_STRING, {.s = "images/s"}}};
        dlg_point p = {"dlgauge_result", tags, 2, fields, 2, (int64_t)(i + 1) * 1000000000};
        errors = m->errors;
        int w = ops->write(st, &p, 1);
        stored[i] = w == 0;
        silent |= w < 0 && m->errors == errors;
    }
    if (ops->flush)
        ops->flush(st, 1000000000);
    ops->close(st);
    return !silent;
}

/* The file holds the header (if any) and whole rows in order, among them
 * every stored one. */
static void check_file(const sink_kind *k, const char *path, const bool stored[ROWS], long n)
{
    char *text = st_slurp(path, NULL);
    const char *at = text ? text : "";
    if (k->header && text && text[0]) {
        if (strncmp(at, k->header, strlen(k->header)) != 0)
            fail_msg("%s, allocation %ld failed: the file starts '%.60s'", k->type, n, at);
        at += strlen(k->header);
    }
    char line[512];
    for (int i = 0; i < ROWS; i++) {
        row_line(k, i, line, sizeof line);
        if (strncmp(at, line, strlen(line)) == 0)
            at += strlen(line);
        else if (stored[i])
            fail_msg("%s, allocation %ld failed: row %d was stored (write returned 0), the file has '%.80s' there",
                     k->type, n, i, at);
    }
    if (*at)
        fail_msg("%s, allocation %ld failed: the file ends in '%.80s', no whole row", k->type, n, at);
    free(text);
}

static void every_allocation_fails_once(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    for (size_t s = 0; s < sizeof KINDS / sizeof *KINDS; s++) {
        const sink_kind *k = &KINDS[s];
        const dlg_plugin_desc *d = mock_load_plugin(k->so, DLG_KIND_SINK, k->type);
        assert_non_null(d);
        char *dir = st_tempdir();
        assert_non_null(dir);
        int failures = 0;
        long n = 1;
        for (; n < 100000; n++) {
            char name[64];
            snprintf(name, sizeof name, "%ld/%s", n, k->file);
            char *path = st_join(dir, name);
            char opt[4200];
            const char *ov[] = {opt, NULL, NULL, NULL, NULL, NULL};
            if (strcmp(k->type, "influx") == 0) { /* refused at once: every point spooled */
                snprintf(opt, sizeof opt, "spool_dir=%.4000s", path);
                *strrchr(opt, '/') = '\0';
                ov[1] = "url=http://127.0.0.1:1/write?db=x", ov[2] = "retries=0", ov[3] = "timeout=1s";
                ov[4] = "batch=1";
            } else {
                snprintf(opt, sizeof opt, "path=%s", path);
            }
            dlg_value vals[64];
            assert_int_equal(mock_options(d->options, vals, ov), 0);
            mock_host m;
            mock_host_init(&m);
            bool stored[ROWS];
            rt_oom_arm(n);
            bool said = one_run(d, vals, &m, stored);
            long made = rt_oom_disarm();
            bool all = stored[0] && stored[1] && stored[2];
            failures += !all;
            if (!said)
                fail_msg("%s, allocation %ld failed without a line", k->type, n);
            check_file(k, path, stored, n);
            mock_host_fini(&m);
            free(path);
            if (made < n) {
                assert_true(all); /* nothing failed: every row is there */
                break;
            }
        }
        fprintf(stderr, "%s: %ld allocations, %d runs refused a row (and said so)\n", k->type, n, failures);
        assert_true(n < 100000);
        assert_true(failures > 3);
        st_rmtree(dir);
        free(dir);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_fails_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
