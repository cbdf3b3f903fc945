/* influx.so sending when memory runs out: its InfluxDB is fake_influx.py,
 * which answers a 1.x write without db= with 400 "database is required",
 * as influxd does, and every allocation from the sink's first write to its
 * close fails in turn (rt_oom.h, libcurl's own included).  No point may be
 * rejected (NAME.rejected.lp: kept as refused for good), and each must have
 * reached the fake in a request that named the database, or be in the
 * spool for `dlgauge flush`.  libcurl 7.88 drops a URL's query when it has
 * no memory to copy it as it connects, and sends the request without it:
 * InfluxDB's 400 to that request was taken as a verdict on the points,
 * which went to the rejected file (found by tests/influx_cli/flush_oom.sh). */
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

enum { POINTS = 2 };

/* Lines of text that hold needle. */
static int lines_with(const char *text, const char *needle, const char *also)
{
    int n = 0;
    for (const char *l = text; l && *l;) {
        const char *eol = strchr(l, '\n');
        size_t len = eol ? (size_t)(eol - l) : strlen(l);
        char *line = strndup(l, len);
        assert_non_null(line);
        n += strstr(line, needle) && (!also || strstr(line, also));
        free(line);
        l = eol ? eol + 1 : NULL;
    }
    return n;
}

/* One sink from write to close with allocation n failing: each point whose
 * write returned 0 got to InfluxDB (a request naming db=x; its body is a
 * JSON string in the fake's log) or to the spool; a write that failed said
 * so; no point went to the rejected file.  Returns the allocations made. */
static long one_trial(const dlg_plugin_desc *d, const st_fake *fk, long n, size_t *logged)
{
    char url[128], sd[4200];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/write?db=x", fk->port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool%ld", fk->dir, n);
    const char *ov[] = {url, sd, "retries=0", "timeout=2s", "batch=1", NULL};
    dlg_value vals[64];
    assert_int_equal(mock_options(d->options, vals, ov), 0);
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops = d->ops;
    void *st = NULL;
    assert_int_equal(ops->open(&m.host, vals, "influx", &st), 0);
    char mark[POINTS][32];
    bool stored[POINTS];
    rt_oom_arm(n);
    for (int i = 0; i < POINTS; i++) { /* result rows: sent as they are written */
        snprintf(mark[i], sizeof mark[i], "t%ldp%d", n, i);
        dlg_tag tags[] = {{"trial", mark[i]}};
        dlg_field f = {"v", DLG_FIELD_INT, {.i = i}};
        dlg_point p = {"dlgauge_result", tags, 1, &f, 1, 1000 + i};
        int errors = m.errors;
        stored[i] = ops->write(st, &p, 1) == 0; /* else said, and the caller's to keep */
        if (!stored[i] && m.errors == errors)
            fail_msg("allocation %ld failed: write %d failed without a line", n, i);
    }
    ops->flush(st, 2000000000u);
    ops->close(st);
    long made = rt_oom_disarm();
    mock_host_fini(&m);

    char *log = st_join(fk->dir, "requests.jsonl"), *reqs = st_slurp(log, NULL);
    size_t all = reqs ? strlen(reqs) : 0;
    const char *mine = reqs ? reqs + *logged : ""; /* this trial's requests */
    char path[4300];
    snprintf(path, sizeof path, "%s/spool%ld/influx.rejected.lp", fk->dir, n);
    char *rejected = st_slurp(path, NULL);
    if (rejected && rejected[0])
        fail_msg("allocation %ld failed: points rejected: '%.200s' (requests: '%.300s')", n, rejected, mine);
    snprintf(path, sizeof path, "%s/spool%ld/influx.lp", fk->dir, n);
    char *spool = st_slurp(path, NULL);
    for (int i = 0; i < POINTS; i++) {
        char tag[48];
        snprintf(tag, sizeof tag, "trial=%s", mark[i]);
        if (stored[i] && !lines_with(mine, tag, "db=x") && !(spool && strstr(spool, tag)))
            fail_msg("allocation %ld failed: point %d neither sent with db=x nor spooled (requests: '%.300s')", n, i,
                     mine);
    }
    *logged = all;
    free(spool);
    free(rejected);
    free(reqs);
    free(log);
    return made;
}

static void no_point_rejected_for_want_of_memory(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    const dlg_plugin_desc *d = mock_load_plugin("influx.so", DLG_KIND_SINK, "influx");
    assert_non_null(d);
    char *dir = st_tempdir();
    assert_non_null(dir);
    st_fake fk;
    static const char *const none[] = {NULL};
    assert_int_equal(st_fake_start(&fk, dir, "fake", none), 0);
    size_t logged = 0;
    long n = 1;
    for (; n < 100000; n++)
        if (one_trial(d, &fk, n, &logged) < n)
            break; /* nothing failed: every allocation was tried */
    fprintf(stderr, "influx: %ld allocations from the first write to close\n", n);
    assert_true(n > 20 && n < 100000);
    st_fake_stop(&fk);
    st_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_point_rejected_for_want_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
