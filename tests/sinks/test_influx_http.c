/* influx.so against a real InfluxDB 1.x started on 127.0.0.1 by
 * influx_server.sh: points written through the sink are queried back over
 * HTTP and compared field by field; an outage spools, a restart replays
 * every point exactly once (checked with InfluxDB's own write counters);
 * InfluxDB's rejections are reported once with its error text and never
 * retried.  Exit 77 (skip) when influxd is not installed. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <json-c/json.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sbuf.h"
#include "sink_test_util.h"

typedef struct server {
    char *dir;    /* temp dir: server data and spools */
    char *script; /* influx_server.sh */
    int port;
} server;

static int script(server *s, const char *verb)
{
    char cmd[8192];
    if (strcmp(verb, "start") == 0 && s->port) /* a restart keeps the port */
        snprintf(cmd, sizeof cmd, "'%s' start '%s/influxd' %d >/dev/null", s->script, s->dir, s->port);
    else
        snprintf(cmd, sizeof cmd, "'%s' %s '%s/influxd' >/dev/null", s->script, verb, s->dir);
    return system(cmd);
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    sbuf_add(ud, p, size * n);
    return size * n;
}

/* GET (body NULL) or POST form body; returns the parsed JSON response. */
static json_object *http_json(const server *s, const char *path, const char *form)
{
    char url[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->port, path);
    CURL *c = curl_easy_init();
    dlg_sbuf body = {0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    if (form)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, form);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_cleanup(c);
    json_object *o = rc == CURLE_OK && body.p ? json_tokener_parse(body.p) : NULL;
    sbuf_free(&body);
    return o;
}

static void influxql(const server *s, const char *q)
{
    char *form = curl_easy_escape(NULL, q, 0), *full = NULL;
    assert_true(asprintf(&full, "q=%s", form) > 0);
    json_object *o = http_json(s, "/query", full);
    assert_non_null(o);
    json_object_put(o);
    free(full);
    curl_free(form);
}

/* Rows of SELECT q (epoch=ns); *cols gets the column names. */
static json_object *select_rows(const server *s, const char *db, const char *q, json_object **cols,
                                json_object **root)
{
    char *esc = curl_easy_escape(NULL, q, 0), *path = NULL;
    assert_true(asprintf(&path, "/query?db=%s&epoch=ns&q=%s", db, esc) > 0);
    *root = http_json(s, path, NULL);
    free(path);
    curl_free(esc);
    assert_non_null(*root);
    json_object *r = json_object_array_get_idx(json_object_object_get(*root, "results"), 0);
    json_object *series = json_object_object_get(r, "series");
    if (!series)
        return NULL;
    json_object *s0 = json_object_array_get_idx(series, 0);
    *cols = json_object_object_get(s0, "columns");
    return json_object_object_get(s0, "values");
}

static json_object *cell(json_object *cols, json_object *row, const char *name)
{
    for (size_t i = 0; i < json_object_array_length(cols); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(cols, i)), name) == 0)
            return json_object_array_get_idx(row, i);
    fail_msg("no column %s", name);
    return NULL;
}

/* InfluxDB's HTTP counters (reset when it restarts). */
static int64_t httpd_stat(const server *s, const char *key)
{
    json_object *o = http_json(s, "/debug/vars", NULL);
    assert_non_null(o);
    int64_t v = -1;
    json_object_object_foreach(o, k, val) {
        if (strncmp(k, "httpd", 5) == 0)
            v = json_object_get_int64(json_object_object_get(json_object_object_get(val, "values"), key));
    }
    json_object_put(o);
    return v;
}

static int group_setup(void **state)
{
    server *s = calloc(1, sizeof *s);
    const char *src = getenv("DLG_SOURCE_DIR");
    s->dir = st_tempdir();
    if (!s->dir || asprintf(&s->script, "%s/tests/sinks/influx_server.sh", src ? src : ".") < 0)
        return -1;
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("DLG_WATCH_PID", pid, 1); /* the server dies with this test */
    if (script(s, "start") != 0)
        return -1;
    char *port_file = st_join(s->dir, "influxd/port"), *text = st_slurp(port_file, NULL);
    s->port = text ? atoi(text) : 0;
    free(port_file);
    free(text);
    *state = s;
    if (s->port <= 0)
        return -1;
    influxql(s, "CREATE DATABASE dlgtest");
    return 0;
}

static int group_teardown(void **state)
{
    server *s = *state;
    script(s, "stop");
    st_rmtree(s->dir);
    free(s->dir);
    free(s->script);
    free(s);
    return 0;
}

static void *open_sink(const server *s, mock_host *m, const char *db, const char *spool, const char *extra1,
                       const char *extra2, const dlg_sink_ops **ops, int want)
{
    char url[256], sd[4200];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/write?db=%s", s->port, db);
    snprintf(sd, sizeof sd, "spool_dir=%s/%s", s->dir, spool);
    const char *ov[] = {url, sd, "backoff=10ms", "timeout=2s", extra1, extra2, NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(m, "influx.so", "influx", ov, ops, &st), want);
    return st;
}

/* Writes text as the whole file at path. */
static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

#define NRES 5

static void test_write_and_query(void **state)
{
    server *s = *state;
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_sink(s, &m, "dlgtest", "spool1", "batch=2", NULL, &ops, 0);
    dlg_point pts[NRES];
    dlg_tag tags[NRES][3];
    dlg_field fields[NRES][6];
    char notes[NRES][32];
    int64_t w0 = httpd_stat(s, "writeReq");
    for (int i = 0; i < NRES; i++) {
        snprintf(notes[i], sizeof notes[i], "n %d,x=y", i); /* needs escaping */
        tags[i][0] = (dlg_tag){"host", "h1"};
        tags[i][1] = (dlg_tag){"job", "resnet50"};
        tags[i][2] = (dlg_tag){"note", notes[i]};
        fields[i][0] = (dlg_field){"throughput", DLG_FIELD_DOUBLE, {.d = i + 1.0 / 3}};
        fields[i][1] = (dlg_field){"lost", DLG_FIELD_DOUBLE, {.d = NAN}};
        fields[i][2] = (dlg_field){"items", DLG_FIELD_INT, {.i = -640 * i}};
        fields[i][3] = (dlg_field){"bytes", DLG_FIELD_UINT, {.u = 1000000000000ull + (uint64_t)i}};
        fields[i][4] = (dlg_field){"unit", DLG_FIELD_STRING, {.s = "img \"s\" \\ ,="}};
        fields[i][5] = (dlg_field){"ok", DLG_FIELD_BOOL, {.b = i % 2 == 0}};
        pts[i] = (dlg_point){"dlgauge_result", tags[i], 3, fields[i], 6, 1700000000000000000 + i * 1001};
    }
    assert_int_equal(ops->write(st, pts, NRES), 0);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    assert_int_equal(httpd_stat(s, "writeReq") - w0, 3); /* batches of 2, 2, 1 */

    json_object *cols = NULL, *root = NULL;
    json_object *rows = select_rows(s, "dlgtest", "SELECT * FROM dlgauge_result", &cols, &root);
    assert_non_null(rows);
    assert_int_equal(json_object_array_length(rows), NRES);
    for (int i = 0; i < NRES; i++) {
        json_object *r = json_object_array_get_idx(rows, (size_t)i);
        assert_true(json_object_get_int64(cell(cols, r, "time")) == pts[i].time_ns);
        assert_string_equal(json_object_get_string(cell(cols, r, "host")), "h1");
        assert_string_equal(json_object_get_string(cell(cols, r, "job")), "resnet50");
        assert_string_equal(json_object_get_string(cell(cols, r, "note")), notes[i]);
        assert_true(json_object_get_double(cell(cols, r, "throughput")) == i + 1.0 / 3);
        assert_true(json_object_get_int64(cell(cols, r, "items")) == -640 * i);
        assert_true(json_object_get_int64(cell(cols, r, "bytes")) == 1000000000000 + i);
        assert_string_equal(json_object_get_string(cell(cols, r, "unit")), "img \"s\" \\ ,=");
        assert_int_equal(json_object_get_boolean(cell(cols, r, "ok")), i % 2 == 0);
    }
    for (size_t i = 0; i < json_object_array_length(cols); i++) /* NaN was dropped */
        assert_string_not_equal(json_object_get_string(json_object_array_get_idx(cols, i)), "lost");
    json_object_put(root);
}

static void write_seq(const dlg_sink_ops *ops, void *st, const char *meas, int from, int to)
{
    for (int i = from; i < to; i++) {
        dlg_field f = {"v", DLG_FIELD_INT, {.i = i}};
        dlg_point p = {meas, NULL, 0, &f, 1, 1000 + i};
        assert_int_equal(ops->write(st, &p, 1), 0);
    }
}

/* Every v in [0, n) present exactly once in measurement meas. */
static void check_seq(const server *s, const char *meas, int from, int n)
{
    char q[128];
    snprintf(q, sizeof q, "SELECT v FROM %s", meas);
    json_object *cols = NULL, *root = NULL, *rows = select_rows(s, "dlgtest", q, &cols, &root);
    assert_non_null(rows);
    assert_int_equal(json_object_array_length(rows), n - from);
    for (int i = from; i < n; i++)
        assert_int_equal(json_object_get_int64(cell(cols, json_object_array_get_idx(rows, (size_t)(i - from)), "v")), i);
    json_object_put(root);
}

/* path holds exactly want. */
static void assert_file(const char *path, const char *want)
{
    char *text = st_slurp(path, NULL);
    assert_non_null(text);
    assert_string_equal(text, want);
    free(text);
}

/* The spool file exists and is empty (sent whole). */
static void assert_emptied(const char *path)
{
    size_t len = 99;
    char *text = st_slurp(path, &len);
    assert_non_null(text);
    assert_int_equal(len, 0);
    free(text);
}

static void test_outage_spools_and_replays_once(void **state)
{
    server *s = *state;
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    assert_int_equal(script(s, "stop"), 0);

    void *st = open_sink(s, &m, "dlgtest", "spool2", "batch=2", "retries=1", &ops, 0);
    write_seq(ops, st, "spooltest", 0, 5); /* 2 batches spooled, 1 point pending */
    /* spools, loses nothing, and says what stays undelivered and where */
    assert_int_equal(ops->flush(st, 2000000000u), -DLG_EAGAIN);
    ops->close(st);
    assert_int_equal(m.errors, 1);
    assert_true(m.warnings >= 1);
    char *spool = st_join(s->dir, "spool2/influx.lp");
    assert_non_null(strstr(m.last_error, "5 points stay spooled in "));
    assert_non_null(strstr(m.last_error, spool));
    char *text = st_slurp(spool, NULL);
    assert_non_null(text);
    assert_int_equal(st_count_lines(text), 5);
    free(text);

    assert_int_equal(script(s, "start"), 0); /* same port, same data */
    mock_host_init(&m);
    st = open_sink(s, &m, "dlgtest", "spool2", "batch=2", NULL, &ops, 0); /* replays */
    size_t len = 99;
    text = st_slurp(spool, &len);
    assert_int_equal(len, 0); /* truncated after a full replay */
    free(text);
    write_seq(ops, st, "spooltest", 5, 6);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    check_seq(s, "spooltest", 0, 6);
    /* counters restarted with the server: each point crossed the wire once */
    assert_int_equal(httpd_stat(s, "pointsWrittenOK"), 6);
    assert_int_equal(httpd_stat(s, "writeReq"), 4); /* 2+2+1 replayed, then 1 */
    free(spool);
}

static void test_replay_resumes_after_accepted_batches(void **state)
{
    server *s = *state;
    /* A replay that was cut short: InfluxDB had taken the first two lines
     * (offset 30 in .sent); they must not be sent again. */
    char *dir = st_join(s->dir, "spool3"), *spool = st_join(dir, "influx.lp"), *sent = st_join(dir, "influx.lp.sent");
    mkdir(dir, 0777);
    put_file(spool, "resume v=0i 10\nresume v=1i 11\nresume v=2i 12\nresume v=3i 13\n");
    put_file(sent, "30\n");
    int64_t before = httpd_stat(s, "pointsWrittenOK");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_sink(s, &m, "dlgtest", "spool3", NULL, NULL, &ops, 0);
    ops->close(st);
    assert_int_equal(httpd_stat(s, "pointsWrittenOK") - before, 2);
    check_seq(s, "resume", 2, 4);
    assert_int_equal(access(sent, F_OK), -1);
    free(dir);
    free(spool);
    free(sent);
}

/* A database that does not exist (404) is a configuration error, not bad
 * data: the points are not retried within the run, the flush fails with
 * one line naming the URL, InfluxDB's words and what to fix, and the
 * points wait in the spool (not the rejected file) until the database
 * exists; then the next open delivers them. */
static void test_unknown_db_kept_for_flush(void **state)
{
    server *s = *state;
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    int64_t w0 = httpd_stat(s, "writeReq");
    void *st = open_sink(s, &m, "laterdb", "spool4", "retries=2", NULL, &ops, 0);
    write_seq(ops, st, "kept", 0, 2);
    assert_int_equal(ops->flush(st, 5000000000u), -DLG_EINVAL);
    ops->close(st);
    /* the batch once, the spool once at flush, none at close: no retries */
    assert_int_equal(httpd_stat(s, "writeReq") - w0, 2);
    assert_int_equal(m.errors, 1);
    char url[128];
    snprintf(url, sizeof url, "InfluxDB at http://127.0.0.1:%d/write?db=laterdb", s->port);
    assert_non_null(strstr(m.last_error, url));
    assert_non_null(strstr(m.last_error, "HTTP 404: database not found"));
    assert_non_null(strstr(m.last_error, "CREATE DATABASE"));
    char *spool = st_join(s->dir, "spool4/influx.lp"), *rej = st_join(s->dir, "spool4/influx.rejected.lp");
    assert_non_null(strstr(m.last_error, "2 points stay spooled in "));
    assert_non_null(strstr(m.last_error, spool));
    assert_int_equal(access(rej, F_OK), -1);
    assert_file(spool, "kept v=0i 1000\nkept v=1i 1001\n");

    influxql(s, "CREATE DATABASE laterdb");
    mock_host_init(&m);
    st = open_sink(s, &m, "laterdb", "spool4", NULL, NULL, &ops, 0); /* replays */
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    json_object *cols = NULL, *root = NULL;
    json_object *rows = select_rows(s, "laterdb", "SELECT v FROM kept", &cols, &root);
    assert_non_null(rows);
    assert_int_equal(json_object_array_length(rows), 2);
    json_object_put(root);
    assert_emptied(spool);
    free(spool);
    free(rej);
}

/* A 404 of InfluxDB's router ("404 page not found") is a url to fix, not
 * a database or bucket to create: a 1.x url whose path is not InfluxDB's
 * /write, and 2.x settings (its /api/v2/write) against this 1.x server,
 * whose X-Influxdb-Version is named.  Both said to check db= or org and
 * bucket, which exist. */
static void test_page_not_found_names_url(void **state)
{
    server *s = *state;
    mock_host m;
    mock_host_init(&m);
    char url[256], sd[4200];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/x/write?db=dlgtest", s->port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool4e", s->dir);
    const char *ov1[] = {url, sd, "retries=0", NULL};
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov1, &ops, &st), 0);
    write_seq(ops, st, "nf", 0, 1);
    assert_int_equal(ops->flush(st, 5000000000u), -DLG_EINVAL);
    ops->close(st);
    assert_non_null(strstr(m.last_error, "HTTP 404: 404 page not found"));
    assert_non_null(strstr(m.last_error, "check url: the server (InfluxDB 1."));
    assert_non_null(strstr(m.last_error, ") has no write API at its path (page not found), not a missing database"));
    assert_null(strstr(m.last_error, "CREATE DATABASE"));

    mock_host_init(&m);
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d", s->port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool4f", s->dir);
    const char *ov2[] = {url, sd, "org=o", "bucket=dlgtest", "token=t", "retries=0", NULL};
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov2, &ops, &st), 0);
    write_seq(ops, st, "nf", 0, 1);
    assert_int_equal(ops->flush(st, 5000000000u), -DLG_EINVAL);
    ops->close(st);
    assert_non_null(strstr(m.last_error, "check url: the server is InfluxDB 1."));
    assert_non_null(strstr(m.last_error, "which has no 2.x write API there; for 1.x write "
                                         "url = http://HOST:8086/write?db=NAME and drop org, bucket and token"));
    assert_null(strstr(m.last_error, "check org and bucket"));
}

static void test_rejections_reported_once_not_retried(void **state)
{
    server *s = *state;
    mock_host m;
    const dlg_sink_ops *ops;
    /* 400: a field whose type conflicts with what the database holds */
    mock_host_init(&m);
    int64_t w0 = httpd_stat(s, "writeReq");
    void *st = open_sink(s, &m, "dlgtest", "spool4b", NULL, NULL, &ops, 0);
    dlg_field f1 = {"x", DLG_FIELD_DOUBLE, {.d = 1.5}}, f2 = {"x", DLG_FIELD_STRING, {.s = "text"}};
    dlg_point p1 = {"conflict", NULL, 0, &f1, 1, 1}, p2 = {"conflict", NULL, 0, &f2, 1, 2};
    assert_int_equal(ops->write(st, &p1, 1), 0);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    /* not a progress point: sent (and refused) in the write */
    assert_int_equal(ops->write(st, &p2, 1), -DLG_EINVAL);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    assert_int_equal(httpd_stat(s, "writeReq") - w0, 2); /* not retried */
    assert_int_equal(m.errors, 1);
    assert_non_null(strstr(m.last_error, "HTTP 400"));
    assert_non_null(strstr(m.last_error, "field type conflict"));
    char *rej = st_join(s->dir, "spool4b/influx.rejected.lp");
    assert_file(rej, "conflict x=\"text\" 2\n");
    free(rej);
}


/* A 1.x partial write that dropped every point of the request (dropped=2
 * of 2) stored nothing: "rejected 2 points", not "stored only part of 2
 * points"; the same error for one more point (dropped=1) is grouped as
 * such, and one point is one. */
static void test_all_dropped_rejected_and_grouped(void **state)
{
    server *s = *state;
    mock_host m;
    const dlg_sink_ops *ops;
    mock_host_init(&m);
    void *st = open_sink(s, &m, "dlgtest", "spool4c", NULL, NULL, &ops, 0);
    dlg_field f1 = {"x", DLG_FIELD_DOUBLE, {.d = 1.5}}, f2 = {"x", DLG_FIELD_STRING, {.s = "text"}};
    dlg_point p1 = {"conflict2", NULL, 0, &f1, 1, 1};
    dlg_point p2[2] = {{"conflict2", NULL, 0, &f2, 1, 2}, {"conflict2", NULL, 0, &f2, 1, 3}};
    assert_int_equal(ops->write(st, &p1, 1), 0);
    assert_int_equal(ops->write(st, p2, 2), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "rejected 2 points: HTTP 400: partial write: field type conflict"));
    assert_non_null(strstr(m.last_error, "dropped=2; they were saved to"));
    dlg_point p3 = {"conflict2", NULL, 0, &f2, 1, 4};
    assert_int_equal(ops->write(st, &p3, 1), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "rejected 1 more point (same error); saved to"));
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
}

/* A progress point whose field type conflicts with the database's (1.x:
 * "partial write: field type conflict ... dropped=1", no line named) sent
 * in one request with a result row, which InfluxDB stored: the row's write
 * succeeds (its journal entry is done), the progress point is warned of
 * and saved, and the flush fails for it.  The write failed, and the run
 * said the stored row had not reached InfluxDB. */
static void test_rejected_progress_spares_result(void **state)
{
    server *s = *state;
    mock_host m;
    const dlg_sink_ops *ops;
    mock_host_init(&m);
    void *st = open_sink(s, &m, "dlgtest", "spool4d", "flush_interval=1h", NULL, &ops, 0);
    dlg_field fs = {"rate", DLG_FIELD_STRING, {.s = "str"}}, fd = {"rate", DLG_FIELD_DOUBLE, {.d = 2.5}};
    dlg_field fr = {"items", DLG_FIELD_INT, {.i = 7}};
    dlg_point old = {"pconf", NULL, 0, &fs, 1, 1}; /* not progress: sent at once, stored */
    assert_int_equal(ops->write(st, &old, 1), 0);
    old.measurement = "dlgauge_progress";
    assert_int_equal(ops->write(st, &old, 1), 0); /* waits in the batch */
    assert_int_equal(ops->flush(st, 5000000000u), 0); /* stored: rate is a string now */
    dlg_point prog = {"dlgauge_progress", NULL, 0, &fd, 1, 2}, row = {"pconf_row", NULL, 0, &fr, 1, 3};
    assert_int_equal(ops->write(st, &prog, 1), 0);
    assert_int_equal(ops->write(st, &row, 1), 0); /* the batch and the row: 400, the row again: 204 */
    assert_int_equal(m.errors, 0);
    assert_non_null(strstr(m.last_log, "rejected 1 point: HTTP 400: partial write: field type conflict"));
    assert_non_null(strstr(m.last_log, "(progress points: the run goes on and exits non-zero)"));
    assert_int_equal(ops->flush(st, 5000000000u), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "rejected 1 progress point (first: HTTP 400: partial write"));
    ops->close(st);
    char *rej = st_join(s->dir, "spool4d/influx.rejected.lp");
    assert_file(rej, "dlgauge_progress rate=2.5 2\n");
    free(rej);
    json_object *cols = NULL, *root = NULL;
    json_object *rows = select_rows(s, "dlgtest", "SELECT items FROM pconf_row", &cols, &root);
    assert_non_null(rows);
    assert_int_equal(json_object_array_length(rows), 1);
    json_object_put(root);
}

/* Tag values users write (paths, notes) with every character line
 * protocol cares about read back exactly; a trailing backslash, which
 * InfluxDB cannot parse in any form, is cut instead of losing the point. */
static void test_nasty_tags_read_back(void **state)
{
    server *s = *state;
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_sink(s, &m, "dlgtest", "spool5", NULL, NULL, &ops, 0);
    static const char *const vals[] = {
        "a,b=c d", "x\\,y", "C:\\data\\", "\"q\" 'q'", "tab\there", "ünï ✓ 测试", "back\\ slash", "=", "#h",
    };
    enum { NV = sizeof vals / sizeof vals[0] };
    dlg_tag tags[NV][1];
    dlg_field f[NV][1];
    dlg_point pts[NV];
    for (int i = 0; i < NV; i++) {
        tags[i][0] = (dlg_tag){"path", vals[i]};
        f[i][0] = (dlg_field){"v", DLG_FIELD_INT, {.i = i}};
        pts[i] = (dlg_point){"nasty", tags[i], 1, f[i], 1, 100 + i};
    }
    assert_int_equal(ops->write(st, pts, NV), 0);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    json_object *cols = NULL, *root = NULL;
    json_object *rows = select_rows(s, "dlgtest", "SELECT v, path FROM nasty", &cols, &root);
    assert_non_null(rows);
    assert_int_equal(json_object_array_length(rows), NV);
    for (int i = 0; i < NV; i++) {
        json_object *r = json_object_array_get_idx(rows, (size_t)i);
        const char *want = strcmp(vals[i], "C:\\data\\") == 0 ? "C:\\data" : vals[i];
        assert_int_equal(json_object_get_int64(cell(cols, r, "v")), i);
        assert_string_equal(json_object_get_string(cell(cols, r, "path")), want);
    }
    json_object_put(root);
}

/* A batch over InfluxDB's max-body-size (413) goes in parts that fit: all
 * of it is stored, nothing is rejected; a single line over the limit alone
 * is rejected. */
static void test_413_splits_batch(void **state)
{
    server *big = *state, sm = {0};
    sm.dir = st_join(big->dir, "small");
    sm.script = big->script;
    mkdir(sm.dir, 0777);
    setenv("INFLUX_MAX_BODY_SIZE", "400", 1);
    int started = script(&sm, "start");
    unsetenv("INFLUX_MAX_BODY_SIZE");
    assert_int_equal(started, 0);
    char *port_file = st_join(sm.dir, "influxd/port"), *text = st_slurp(port_file, NULL);
    sm.port = atoi(text);
    influxql(&sm, "CREATE DATABASE dlgtest");

    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_sink(&sm, &m, "dlgtest", "spool6", "batch=40", NULL, &ops, 0);
    write_seq(ops, st, "split", 0, 40); /* 40 lines of ~20 bytes: one 800-byte body */
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    assert_int_equal(m.errors, 0);
    check_seq(&sm, "split", 0, 40);
    char *rej = st_join(sm.dir, "spool6/influx.rejected.lp");
    assert_int_equal(access(rej, F_OK), -1);

    char huge[600];
    memset(huge, 'x', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    dlg_field f[2] = {{"v", DLG_FIELD_INT, {.i = 40}}, {"s", DLG_FIELD_STRING, {.s = huge}}};
    dlg_point p[2] = {{"split", NULL, 0, &f[0], 1, 1040}, {"split", NULL, 0, &f[1], 1, 1041}};
    assert_int_equal(ops->write(st, p, 2), -DLG_EINVAL); /* not progress points: sent in the write */
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 1);
    assert_non_null(strstr(m.last_error, "HTTP 413"));
    assert_non_null(strstr(m.last_error, "rejected 1 point: "));
    check_seq(&sm, "split", 0, 41);
    free(text);
    text = st_slurp(rej, NULL);
    assert_non_null(text);
    assert_int_equal(st_count_lines(text), 1);
    assert_non_null(strstr(text, "split s=\"xxx"));
    free(text);
    free(rej);
    script(&sm, "stop");
    free(port_file);
    free(sm.dir);
}

/* A spool whose last line was cut short by a crash: the fragment
 * ("frag v=2i 17" would be a valid point at the wrong time) is not sent but
 * moved to the rejected file; every whole line is sent. */
static void test_spool_fragment_not_sent(void **state)
{
    server *s = *state;
    char *dir = st_join(s->dir, "spool7"), *spool = st_join(dir, "influx.lp");
    char *rej = st_join(dir, "influx.rejected.lp");
    mkdir(dir, 0777);
    put_file(spool, "frag v=0i 10\nfrag v=1i 11\nfrag v=2i 17");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_sink(s, &m, "dlgtest", "spool7", NULL, NULL, &ops, 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    assert_true(m.warnings >= 1);
    check_seq(s, "frag", 0, 2);
    size_t len = 99;
    char *text = st_slurp(spool, &len);
    assert_int_equal(len, 0);
    free(text);
    text = st_slurp(rej, NULL);
    assert_non_null(text);
    assert_string_equal(text, "frag v=2i 17\n");
    free(text);
    free(dir);
    free(spool);
    free(rej);
}

/* Appending to a spool that ends in a fragment does not glue new lines
 * onto it (InfluxDB unreachable: a port nobody listens on). */
static void test_spool_append_after_fragment(void **state)
{
    server *s = *state;
    char *dir = st_join(s->dir, "spool8"), *spool = st_join(dir, "influx.lp");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    char sd[4200];
    snprintf(sd, sizeof sd, "spool_dir=%s", dir);
    const char *ov[] = {"url=http://127.0.0.1:9/write?db=dlgtest", sd, "retries=0", "timeout=1s", "batch=1", NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), 0);
    write_seq(ops, st, "glue", 0, 1); /* spooled, degraded */
    FILE *f = fopen(spool, "a");
    fputs("glue v=9i 99", f); /* as a crash mid-append leaves it */
    fclose(f);
    write_seq(ops, st, "glue", 1, 2);
    ops->close(st);
    char *text = st_slurp(spool, NULL);
    assert_non_null(text);
    assert_string_equal(text, "glue v=0i 1000\nglue v=1i 1001\n");
    free(text);
    free(dir);
    free(spool);
}

/* A .sent offset that is not at a line start is ignored: the whole spool
 * is resent (harmless) instead of half a line ("d v=0i 10" from
 * "mid v=0i 10"). */
static void test_sent_offset_mid_line_ignored(void **state)
{
    server *s = *state;
    char *dir = st_join(s->dir, "spool9"), *spool = st_join(dir, "influx.lp"), *sent = st_join(dir, "influx.lp.sent");
    mkdir(dir, 0777);
    put_file(spool, "mid v=0i 10\nmid v=1i 11\n");
    put_file(sent, "2\n");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_sink(s, &m, "dlgtest", "spool9", NULL, NULL, &ops, 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    json_object *cols = NULL, *root = NULL;
    assert_null(select_rows(s, "dlgtest", "SELECT v FROM d", &cols, &root));
    json_object_put(root);
    json_object *rows = select_rows(s, "dlgtest", "SELECT v FROM mid", &cols, &root);
    assert_non_null(rows);
    assert_int_equal(json_object_array_length(rows), 2);
    json_object_put(root);
    free(dir);
    free(spool);
    free(sent);
}

/* ---- against fake_influx.py (answers a real influxd 1.x never gives) ---- */

typedef st_fake fake;

static void fake_start(fake *fk, const char *base, const char *name, const char *const *script_steps)
{
    assert_int_equal(st_fake_start(fk, base, name, script_steps), 0);
}

static void fake_stop(fake *fk) { st_fake_stop(fk); }

/* A test's start: the fake InfluxDB `name` answering steps, in the
 * server's folder, and the host m made anew. */
static void begin_fake(void **state, const char *name, const char *const *steps, fake *fk, mock_host *m)
{
    const server *s = *state;
    fake_start(fk, s->dir, name, steps);
    mock_host_init(m);
}

/* The fake's requests.jsonl, one object per request (caller puts). */
static json_object *fake_requests(const fake *fk, size_t *n)
{
    char *path = st_join(fk->dir, "requests.jsonl"), *text = st_slurp(path, NULL);
    json_object *all = json_object_new_array();
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n"))
        json_object_array_add(all, json_tokener_parse(line));
    *n = json_object_array_length(all);
    free(text);
    free(path);
    return all;
}

static double req_time(json_object *all, size_t i)
{
    return json_object_get_double(json_object_object_get(json_object_array_get_idx(all, i), "t"));
}

/* A 1.x sink on the fake, spooling under its dir, with extra options. */
static void *open_fake_with(const fake *fk, mock_host *m, const dlg_sink_ops **ops, const char *const *extra)
{
    char url[128], sd[4200];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/write?db=x", fk->port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool", fk->dir);
    const char *ov[16] = {url, sd};
    for (size_t i = 0; extra[i] && i < 13; i++)
        ov[i + 2] = extra[i];
    void *st = NULL;
    assert_int_equal(st_open_sink(m, "influx.so", "influx", ov, ops, &st), 0);
    return st;
}

/* 503 and 429 with Retry-After: the next try waits that long, not just
 * the (much shorter) backoff; then the batch is delivered. */
static void test_retry_after_honoured(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"503:1", "429:1", NULL};
    begin_fake(state, "fake1", steps, &fk, &m);
    const dlg_sink_ops *ops;
    static const char *const opts[] = {"backoff=10ms", "retries=3", "timeout=2s", NULL};
    void *st = open_fake_with(&fk, &m, &ops, opts);
    write_seq(ops, st, "ra", 0, 1);
    assert_int_equal(ops->flush(st, 10000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    size_t n;
    json_object *all = fake_requests(&fk, &n);
    assert_int_equal(n, 3);
    assert_true(req_time(all, 1) - req_time(all, 0) >= 0.9);
    assert_true(req_time(all, 2) - req_time(all, 1) >= 0.9);
    json_object_put(all);
    fake_stop(&fk);
}

/* 2.x: org and bucket are URL-encoded, the token goes in
 * "Authorization: Token ...", precision=ns. */
static void test_v2_request(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {NULL};
    begin_fake(state, "fake2", steps, &fk, &m);
    const dlg_sink_ops *ops;
    char url[128], sd[4200];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d", fk.port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool", fk.dir);
    const char *ov[] = {url, sd, "org=my org&x=1", "bucket=b/1+2", "token=tok=en", NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), 0);
    dlg_field f = {"n", DLG_FIELD_UINT, {.u = UINT64_MAX}};
    dlg_point p = {"v2", NULL, 0, &f, 1, 5};
    assert_int_equal(ops->write(st, &p, 1), 0);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    size_t n;
    json_object *all = fake_requests(&fk, &n);
    assert_int_equal(n, 1);
    json_object *r = json_object_array_get_idx(all, 0), *h = json_object_object_get(r, "headers");
    const char *path = json_object_get_string(json_object_object_get(r, "path"));
    assert_true(strstr(path, "/api/v2/write?") == path);
    assert_non_null(strstr(path, "org=my+org%26x%3d1") ? strstr(path, "org=my+org%26x%3d1")
                                                        : strstr(path, "org=my%20org%26x%3D1"));
    assert_true(strstr(path, "bucket=b%2f1%2b2") || strstr(path, "bucket=b%2F1%2B2"));
    assert_non_null(strstr(path, "precision=ns"));
    assert_string_equal(json_object_get_string(json_object_object_get(h, "Authorization")), "Token tok=en");
    assert_string_equal(json_object_get_string(json_object_object_get(r, "body")), "v2 n=18446744073709551615u 5\n");
    json_object_put(all);
    fake_stop(&fk);
}

/* A token of 3000 bytes goes whole (one over about 1000 was cut, and
 * InfluxDB answered 401 to a token nobody wrote). */
static void test_v2_long_token(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {NULL};
    begin_fake(state, "fakelongtok", steps, &fk, &m);
    const dlg_sink_ops *ops;
    char url[128], sd[4200], tok[3100];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d", fk.port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool", fk.dir);
    memcpy(tok, "token=", 6);
    for (size_t i = 6; i < 3006; i++)
        tok[i] = (char)('a' + i % 26);
    tok[3006] = '\0';
    const char *ov[] = {url, sd, "org=o", "bucket=b", tok, NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), 0);
    write_seq(ops, st, "lt", 0, 1);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    size_t n;
    json_object *all = fake_requests(&fk, &n);
    assert_int_equal(n, 1);
    json_object *h = json_object_object_get(json_object_array_get_idx(all, 0), "headers");
    const char *auth = json_object_get_string(json_object_object_get(h, "Authorization"));
    assert_int_equal(strlen(auth), 6 + 3000);
    assert_string_equal(auth + 6, tok + 6);
    json_object_put(all);
    fake_stop(&fk);
}

/* The fake got n requests, request i (from 0) with this body. */
static void assert_request(const fake *fk, size_t n, size_t i, const char *body)
{
    size_t got;
    json_object *all = fake_requests(fk, &got);
    assert_int_equal(got, n);
    assert_string_equal(json_object_get_string(json_object_object_get(json_object_array_get_idx(all, i), "body")),
                        body);
    json_object_put(all);
}

/* During the run a Retry-After longer than a whole retry sequence (here
 * 2 x 1 s timeouts and a 10 ms backoff) does not hold the run up: the
 * batch is spooled at once, and the flush delivers it. */
static void test_long_retry_after_spools_during_run(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"429:6", NULL};
    begin_fake(state, "fake8", steps, &fk, &m);
    const dlg_sink_ops *ops;
    static const char *const opts[] = {"backoff=10ms", "retries=1", "timeout=1s", "batch=1", NULL};
    void *st = open_fake_with(&fk, &m, &ops, opts);
    double t0 = st_mono_s();
    write_seq(ops, st, "ra", 0, 1);
    assert_true(st_mono_s() - t0 < 2.0); /* not the 6 s InfluxDB asked for */
    assert_int_equal(m.warnings, 1); /* spooled */
    assert_non_null(strstr(m.last_log, "HTTP 429"));
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    assert_request(&fk, 2, 1, "ra v=0i 1000\n");
    fake_stop(&fk);
}

/* A v2 sink on the fake with a NULL-ended script; spool under the fake's dir. */
static void *open_v2(const fake *fk, mock_host *m, const dlg_sink_ops **ops, int want)
{
    char url[128], sd[4200];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d", fk->port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool", fk->dir);
    const char *ov[] = {url, sd, "org=o", "bucket=b", "token=t", "retries=0", NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(m, "influx.so", "influx", ov, ops, &st), want);
    return st;
}

/* 2.x answering 401 (a wrong token): one error naming the URL, InfluxDB's
 * words and the token; the point stays in the spool and the next open,
 * once the token works, delivers it. */
static void test_v2_401_kept_for_flush(void **state)
{
    fake fk;
    mock_host m;
    /* the write and the flush are refused (close sends nothing more) */
    static const char *const steps[] = {"401::unauthorized access", "401::unauthorized access", NULL};
    begin_fake(state, "fake401", steps, &fk, &m);
    const dlg_sink_ops *ops;
    void *st = open_v2(&fk, &m, &ops, 0);
    write_seq(ops, st, "tok", 0, 1);
    /* true in `dlgauge flush` too, where a flush is one more try: no
     * promise of a resend every 10 s */
    assert_non_null(strstr(m.last_log, "points stay spooled in"));
    assert_non_null(strstr(m.last_log, "while a run measures, and when the sink flushes"));
    assert_int_equal(ops->flush(st, 5000000000u), -DLG_EINVAL);
    ops->close(st);
    assert_int_equal(m.errors, 1);
    assert_true(m.warnings >= 1);
    assert_non_null(strstr(m.last_error, "/api/v2/write?org=o&bucket=b&precision=ns refused the points"));
    assert_non_null(strstr(m.last_error, "HTTP 401: unauthorized access"));
    assert_non_null(strstr(m.last_error, "check token"));
    assert_non_null(strstr(m.last_error, "1 point stays spooled"));
    char *spool = st_join(fk.dir, "spool/influx.lp"), *rej = st_join(fk.dir, "spool/influx.rejected.lp");
    assert_file(spool, "tok v=0i 1000\n");
    assert_int_equal(access(rej, F_OK), -1);

    mock_host_init(&m);
    st = open_v2(&fk, &m, &ops, 0); /* the fake now answers 204 */
    ops->close(st);
    assert_int_equal(m.errors, 0);
    assert_request(&fk, 3, 2, "tok v=0i 1000\n");
    assert_emptied(spool);
    free(spool);
    free(rej);
    fake_stop(&fk);
}

/* 2.x refuses a whole request for one bad line (400 naming it); the good
 * lines, sent again without it, meet a 503: they stay in the spool (and
 * are delivered by the next resend), only the bad line is rejected. */
static void test_v2_partial_then_503_keeps_good(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"400::unable to parse 'half v=1i 1001': scripted", "503", NULL};
    begin_fake(state, "fake400", steps, &fk, &m);
    const dlg_sink_ops *ops;
    void *st = open_v2(&fk, &m, &ops, 0);
    dlg_field f[3] = {{"v", DLG_FIELD_INT, {.i = 0}}, {"v", DLG_FIELD_INT, {.i = 1}}, {"v", DLG_FIELD_INT, {.i = 2}}};
    dlg_point p[3] = {{"half", NULL, 0, &f[0], 1, 1000}, {"half", NULL, 0, &f[1], 1, 1001},
                      {"half", NULL, 0, &f[2], 1, 1002}};
    /* in the write (no progress points): the batch (400), the good lines
     * (503, spooled); the spool at flush (204) */
    assert_int_equal(ops->write(st, p, 3), -DLG_EINVAL);
    assert_int_equal(ops->flush(st, 5000000000u), 0);
    char *spool = st_join(fk.dir, "spool/influx.lp"), *rej = st_join(fk.dir, "spool/influx.rejected.lp");
    assert_emptied(spool);
    ops->close(st);
    assert_int_equal(m.errors, 1);
    assert_non_null(strstr(m.last_error, "rejected 1 point: "));
    assert_file(rej, "half v=1i 1001\n");
    assert_request(&fk, 3, 2, "half v=0i 1000\nhalf v=2i 1002\n");
    free(spool);
    free(rej);
    fake_stop(&fk);
}

/* 2.x refuses a request of a progress point and a result row for the
 * progress point (400 naming it): the row, sent again alone, is stored,
 * and its write succeeds; the flush fails for the progress point. */
static void test_v2_progress_named_spares_result(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"400::unable to parse 'dlgauge_progress v=0i 1000': scripted", NULL};
    begin_fake(state, "fake400p", steps, &fk, &m);
    const dlg_sink_ops *ops;
    void *st = open_v2(&fk, &m, &ops, 0);
    dlg_field f[2] = {{"v", DLG_FIELD_INT, {.i = 0}}, {"v", DLG_FIELD_INT, {.i = 1}}};
    dlg_point p[2] = {{"dlgauge_progress", NULL, 0, &f[0], 1, 1000}, {"row", NULL, 0, &f[1], 1, 1001}};
    assert_int_equal(ops->write(st, p, 2), 0);
    assert_int_equal(m.errors, 0);
    assert_non_null(strstr(m.last_log, "rejected 1 point: HTTP 400: unable to parse"));
    assert_int_equal(ops->flush(st, 5000000000u), -DLG_EINVAL);
    ops->close(st);
    assert_non_null(strstr(m.last_error, "rejected 1 progress point (first: HTTP 400: unable to parse"));
    char *rej = st_join(fk.dir, "spool/influx.rejected.lp");
    assert_file(rej, "dlgauge_progress v=0i 1000\n");
    assert_request(&fk, 2, 1, "row v=1i 1001\n");
    free(rej);
    fake_stop(&fk);
}

/* A redirect (a proxy sending http:// on to https://) is a url to fix,
 * not bad data: the points wait in the spool for `dlgauge flush` (they
 * used to be saved as rejected, which nothing sends again). */
static void test_redirect_kept_for_flush(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"301", "301", NULL};
    begin_fake(state, "fake301", steps, &fk, &m);
    const dlg_sink_ops *ops;
    void *st = open_v2(&fk, &m, &ops, 0);
    write_seq(ops, st, "moved", 0, 2);
    assert_int_equal(ops->flush(st, 5000000000u), -DLG_EINVAL);
    ops->close(st);
    assert_non_null(strstr(m.last_error, "check url: it is redirected"));
    assert_non_null(strstr(m.last_error, "2 points stay spooled"));
    char *spool = st_join(fk.dir, "spool/influx.lp"), *rej = st_join(fk.dir, "spool/influx.rejected.lp");
    assert_file(spool, "moved v=0i 1000\nmoved v=1i 1001\n");
    assert_int_equal(access(rej, F_OK), -1);
    free(spool);
    free(rej);
    fake_stop(&fk);
}

/* A failed test must not leave the file size limit to the next ones. */
static int unlimit(void **state)
{
    (void)state;
    st_fsize_unlimit();
    return 0;
}

/* A 1.x sink on the fake (retries=1, batch=1), spool under the fake's dir. */
static void *open_fake_v1(const fake *fk, mock_host *m, const dlg_sink_ops **ops)
{
    static const char *const opts[] = {"backoff=10ms", "retries=1", "batch=1", NULL};
    return open_fake_with(fk, m, ops, opts);
}

static int write_full(const dlg_sink_ops *ops, void *st, int i)
{
    dlg_field fl = {"v", DLG_FIELD_INT, {.i = i}};
    dlg_point p = {"full", NULL, 0, &fl, 1, 1000 + i};
    return ops->write(st, &p, 1);
}

/* A progress point: the only kind that may wait in memory (a result row
 * the spool cannot take fails its write: test_influx_spool). */
static int write_progress(const dlg_sink_ops *ops, void *st, int i)
{
    dlg_field fl = {"v", DLG_FIELD_INT, {.i = i}};
    dlg_point p = {"dlgauge_progress", NULL, 0, &fl, 1, 1000 + i};
    return ops->write(st, &p, 1);
}

/* InfluxDB unreachable and the spool unwritable (as on a full disk): the
 * progress points wait in memory, not lost, and only the first batch goes
 * through the retries (later ones do not slow the run down with theirs);
 * once InfluxDB answers, the flush delivers all of them, in order. */
static void test_spool_failure_no_retry_per_batch(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"503", "503", NULL};
    begin_fake(state, "fakefull", steps, &fk, &m);
    const dlg_sink_ops *ops;
    void *st = open_fake_v1(&fk, &m, &ops);
    st_fsize_limit(1); /* the spool's appends fail (EFBIG), as on a full disk */
    for (int i = 0; i < 3; i++)
        assert_int_equal(write_progress(ops, st, i), 0);
    assert_int_equal(m.errors, 0);
    assert_int_equal(m.warnings, 1); /* the points wait in memory, said once */
    assert_non_null(strstr(m.last_log, "wait in memory"));
    assert_int_equal(ops->flush(st, 2000000000u), 0);
    ops->close(st);
    st_fsize_unlimit();
    assert_int_equal(m.errors, 0);
    /* the first batch and its one retry, then everything at the flush */
    assert_request(&fk, 3, 2,
                   "dlgauge_progress v=0i 1000\ndlgauge_progress v=1i 1001\ndlgauge_progress v=2i 1002\n");
    fake_stop(&fk);
}

/* Neither InfluxDB nor the spool takes the progress points: the flush
 * says how many are lost (the resend found an empty spool; it used to log
 * that InfluxDB was "reachable again" and flush without an error). */
static void test_unspoolable_points_lost_at_flush(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"503", "503", "503", "503", "503", "503", NULL};
    begin_fake(state, "fakefull2", steps, &fk, &m);
    const dlg_sink_ops *ops;
    void *st = open_fake_v1(&fk, &m, &ops);
    st_fsize_limit(1);
    assert_int_equal(write_progress(ops, st, 0), 0);
    assert_int_equal(write_progress(ops, st, 1), 0);
    assert_int_equal(ops->flush(st, 2000000000u), -DLG_EIO);
    assert_int_equal(m.errors, 1);
    assert_non_null(strstr(m.last_error, "2 progress points held in memory are lost when the run ends"));
    assert_null(strstr(m.last_log, "reachable again"));
    ops->close(st);
    st_fsize_unlimit();
    assert_request(&fk, 4, 3, "dlgauge_progress v=0i 1000\ndlgauge_progress v=1i 1001\n"); /* 2 + the flush's 2 */
    fake_stop(&fk);
}

/* After a flush that could not deliver, close sends nothing more: the
 * flush has just tried, and the spool waits for the next run. */
static void test_close_after_failed_flush_sends_nothing(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"503", "503", "503", "503", "503", "503", NULL};
    begin_fake(state, "fakeclose", steps, &fk, &m);
    const dlg_sink_ops *ops;
    void *st = open_fake_v1(&fk, &m, &ops);
    assert_int_equal(write_full(ops, st, 0), 0);
    assert_int_equal(ops->flush(st, 2000000000u), -DLG_EAGAIN);
    ops->close(st);
    assert_request(&fk, 4, 3, "full v=0i 1000\n"); /* the write's 2 tries, the flush's 2 */
    char *spool = st_join(fk.dir, "spool/influx.lp");
    assert_file(spool, "full v=0i 1000\n");
    free(spool);
    fake_stop(&fk);
}

/* An InfluxDB that answers after 3 s, a request timeout of 10 s and a
 * flush given 1 s: the request gets only the time left, so the flush ends
 * near its deadline with the points spooled (it waited the whole 3 s,
 * and could have waited the whole 10). */
static void test_request_capped_by_flush_deadline(void **state)
{
    fake fk;
    mock_host m;
    static const char *const steps[] = {"204@3", NULL};
    begin_fake(state, "fakelate", steps, &fk, &m);
    const dlg_sink_ops *ops;
    static const char *const opts[] = {"retries=2", "backoff=10ms", "timeout=10s", "batch=100",
                                       "flush_interval=1h", NULL};
    void *st = open_fake_with(&fk, &m, &ops, opts);
    /* a progress point: the only kind a write leaves batched */
    dlg_field fl = {"v", DLG_FIELD_INT, {.i = 0}};
    dlg_point pp = {"dlgauge_progress", NULL, 0, &fl, 1, 1000};
    assert_int_equal(ops->write(st, &pp, 1), 0);
    double t0 = st_mono_s();
    int rc = ops->flush(st, 1000000000u);
    double took = st_mono_s() - t0;
    if (took > 2.0)
        fail_msg("the flush given 1 s took %.2f s", took);
    assert_int_equal(rc, -DLG_EAGAIN);
    ops->close(st);
    char *spool = st_join(fk.dir, "spool/influx.lp");
    assert_file(spool, "dlgauge_progress v=0i 1000\n");
    free(spool);
    fake_stop(&fk);
}

/* A 1.x sink on the fake (retries=0, batch=1), spooling to spool_dir. */
static void *open_fake_spool(const fake *fk, const char *spool_dir, mock_host *m, const dlg_sink_ops **ops)
{
    char url[128], sd[4200];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/write?db=x", fk->port);
    snprintf(sd, sizeof sd, "spool_dir=%s", spool_dir);
    const char *ov[] = {url, sd, "retries=0", "batch=1", "timeout=5s", NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(m, "influx.so", "influx", ov, ops, &st), 0);
    return st;
}

/* A run spools while another process (`dlgauge flush` from cron) replays
 * the same spool: the points spooled while the replay's request is in
 * flight survive the replay's rewrite of the spool (they used to be cut
 * away with the points that were sent).  A progress point does not wait
 * for the spool's lock but is held in memory; a result row waits (else
 * its write would fail, to keep it in the journal), and goes to the spool
 * behind the held point. */
static void test_spool_append_during_replay_kept(void **state)
{
    server *s = *state;
    fake down, slow;
    static const char *const down_steps[] = {"503", "503", "503", "503", "503", "503", "503", "503", NULL};
    static const char *const slow_steps[] = {"204@1", NULL};
    fake_start(&down, s->dir, "fakedown", down_steps);
    fake_start(&slow, s->dir, "fakeslow", slow_steps);
    char *dir = st_join(s->dir, "spoolrace"), *spool = st_join(dir, "influx.lp");
    char *log = st_join(slow.dir, "requests.jsonl");
    mkdir(dir, 0777);
    put_file(spool, "full v=0i 1000\n");
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *run = open_fake_spool(&down, dir, &m, &ops); /* InfluxDB down for the run */
    pid_t flusher = fork();
    if (flusher == 0) { /* the other process: replays the spool to the slow InfluxDB */
        mock_host fm;
        mock_host_init(&fm);
        const dlg_sink_ops *fops;
        void *fst = open_fake_spool(&slow, dir, &fm, &fops);
        fops->close(fst);
        _exit(fm.errors == 0 ? 0 : 1);
    }
    for (int i = 0; i < 200 && access(log, F_OK) != 0; i++)
        usleep(10000);
    assert_int_equal(access(log, F_OK), 0); /* the replay's request is in flight */
    assert_int_equal(write_progress(ops, run, 2), 0);
    assert_int_equal(write_full(ops, run, 1), 0);
    assert_int_equal(m.errors, 0);
    int status = -1;
    assert_int_equal(waitpid(flusher, &status, 0), flusher);
    assert_int_equal(status, 0);
    assert_int_equal(ops->flush(run, 5000000000u), -DLG_EAGAIN);
    ops->close(run);
    assert_file(spool, "dlgauge_progress v=2i 1002\nfull v=1i 1001\n");
    assert_request(&slow, 1, 0, "full v=0i 1000\n");
    free(log);
    free(spool);
    free(dir);
    fake_stop(&slow);
    fake_stop(&down);
}

/* A spool of lines (text) replayed into dlgtest, one of which InfluxDB
 * names as unparseable (1.x "partial write"): only that line (bad) is
 * rejected, the others are stored and not saved as rejected. */
static void replay_bad_line(const server *s, const char *spool_name, const char *text, const char *bad)
{
    char *dir = st_join(s->dir, spool_name), *spool = st_join(dir, "influx.lp");
    char *rej = st_join(dir, "influx.rejected.lp");
    mkdir(dir, 0777);
    put_file(spool, text);
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    /* the line is saved, so the run goes on: its begin warns (a `dlgauge
     * flush` begins none: its flush's error is its one line); its flush
     * reports it */
    void *st = open_sink(s, &m, "dlgtest", spool_name, NULL, NULL, &ops, 0);
    assert_non_null(st);
    assert_int_equal(m.warnings, 0);
    assert_int_equal(ops->begin(st, &(dlg_schema){0}), 0);
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, "(the run goes on and exits non-zero)"));
    assert_int_equal(ops->flush(st, 2000000000u), -DLG_EINVAL);
    ops->close(st);
    assert_non_null(strstr(m.last_error, "rejected 1 point of the spool "));
    assert_non_null(strstr(m.last_error, "when the sink opened"));
    char *got = st_slurp(rej, NULL);
    assert_non_null(got);
    assert_string_equal(got, bad);
    free(got);
    free(dir);
    free(spool);
    free(rej);
}

/* The number of rows of db's query q. */
static size_t count_rows(const server *s, const char *db, const char *q)
{
    json_object *cols = NULL, *root = NULL;
    json_object *rows = select_rows(s, db, q, &cols, &root);
    assert_non_null(rows);
    size_t n = json_object_array_length(rows);
    json_object_put(root);
    return n;
}

static void test_400_rejects_only_bad_lines(void **state)
{
    server *s = *state;
    replay_bad_line(s, "spool10", "partial v=0i 1000\npartial v= 1001\npartial v=2i 1002\n", "partial v= 1001\n");
    assert_int_equal(count_rows(s, "dlgtest", "SELECT v FROM partial"), 2);
}

/* A bad line whose string field quotes another line of the request in
 * InfluxDB's own words ("unable to parse 'qin v=1i 1000': "): InfluxDB
 * quotes only the bad line and stores the other, which must not be saved
 * as rejected too (a search for the words anywhere in the error text took
 * it for named). */
static void test_400_quote_inside_bad_line(void **state)
{
    server *s = *state;
    static const char bad[] = "qin s=\"x unable to parse 'qin v=1i 1000': y\" 1001 junk\n";
    char text[128];
    snprintf(text, sizeof text, "qin v=1i 1000\n%s", bad);
    replay_bad_line(s, "spoolq", text, bad);
    assert_int_equal(count_rows(s, "dlgtest", "SELECT v FROM qin"), 1);
}

/* A spool replayed into a database WITH DURATION 1h: one line dated 2001
 * (beyond the retention policy) and one dated now.  InfluxDB stores the new
 * one and answers 400 "partial write: ... dropped=1" without naming the
 * line: both are saved as rejected, and the words say that InfluxDB
 * stored part of them (they used to say both were rejected). */
static void test_replay_partial_retention(void **state)
{
    server *s = *state;
    influxql(s, "CREATE DATABASE shortret WITH DURATION 1h");
    char *dir = st_join(s->dir, "spoolret"), *spool = st_join(dir, "influx.lp");
    mkdir(dir, 0777);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    FILE *f = fopen(spool, "w");
    fprintf(f, "ret v=1i 978307200000000000\nret v=2i %lld\n",
            (long long)now.tv_sec * 1000000000ll + now.tv_nsec);
    fclose(f);
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = open_sink(s, &m, "shortret", "spoolret", NULL, NULL, &ops, 0);
    assert_non_null(st);
    assert_int_equal(ops->begin(st, &(dlg_schema){0}), 0);
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, "stored only part of 2 points of the spool"));
    assert_int_equal(ops->flush(st, 2000000000u), -DLG_EINVAL);
    ops->close(st);
    assert_non_null(strstr(m.last_error, "stored only part of 2 points of the spool"));
    assert_non_null(strstr(m.last_error, "when the sink opened: HTTP 400: partial write"));
    assert_non_null(strstr(m.last_error, "it does not say which, so all 2 were saved to"));
    assert_null(strstr(m.last_error, "rejected 2"));
    json_object *cols = NULL, *root = NULL;
    json_object *rows = select_rows(s, "shortret", "SELECT v FROM ret", &cols, &root);
    assert_non_null(rows);
    assert_int_equal(json_object_array_length(rows), 1);
    assert_int_equal(json_object_get_int64(cell(cols, json_object_array_get_idx(rows, 0), "v")), 2);
    json_object_put(root);
    free(dir);
    free(spool);
}

int main(void)
{
    char cmd[4200];
    const char *src = getenv("DLG_SOURCE_DIR");
    snprintf(cmd, sizeof cmd, "'%s/tests/sinks/influx_server.sh' available", src ? src : ".");
    if (system(cmd) != 0) {
        fprintf(stderr, "influxd is not installed (Debian package influxdb): skipping\n");
        return 77;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_query),
        cmocka_unit_test(test_outage_spools_and_replays_once),
        cmocka_unit_test(test_replay_resumes_after_accepted_batches),
        cmocka_unit_test(test_unknown_db_kept_for_flush),
        cmocka_unit_test(test_page_not_found_names_url),
        cmocka_unit_test(test_rejections_reported_once_not_retried),
        cmocka_unit_test(test_all_dropped_rejected_and_grouped),
        cmocka_unit_test(test_rejected_progress_spares_result),
        cmocka_unit_test(test_nasty_tags_read_back),
        cmocka_unit_test(test_413_splits_batch),
        cmocka_unit_test(test_spool_fragment_not_sent),
        cmocka_unit_test(test_spool_append_after_fragment),
        cmocka_unit_test(test_sent_offset_mid_line_ignored),
        cmocka_unit_test(test_retry_after_honoured),
        cmocka_unit_test(test_long_retry_after_spools_during_run),
        cmocka_unit_test(test_v2_request),
        cmocka_unit_test(test_v2_long_token),
        cmocka_unit_test(test_400_rejects_only_bad_lines),
        cmocka_unit_test(test_400_quote_inside_bad_line),
        cmocka_unit_test(test_replay_partial_retention),
        cmocka_unit_test(test_v2_401_kept_for_flush),
        cmocka_unit_test(test_v2_partial_then_503_keeps_good),
        cmocka_unit_test(test_v2_progress_named_spares_result),
        cmocka_unit_test_teardown(test_spool_failure_no_retry_per_batch, unlimit),
        cmocka_unit_test_teardown(test_unspoolable_points_lost_at_flush, unlimit),
        cmocka_unit_test(test_close_after_failed_flush_sends_nothing),
        cmocka_unit_test(test_spool_append_during_replay_kept),
        cmocka_unit_test(test_redirect_kept_for_flush),
        cmocka_unit_test(test_request_capped_by_flush_deadline),
    };
    int rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
    curl_global_cleanup();
    return rc;
}
