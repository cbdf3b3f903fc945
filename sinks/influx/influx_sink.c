/* InfluxDB sink: points as line protocol to a file, over HTTP (1.x and
 * 2.x write APIs) or UDP.  Over HTTP, points are batched (by count or
 * flush_interval, checked on each write), retried with backoff, spooled to
 * disk when InfluxDB is unreachable and replayed later (influx_spool.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "influx.h"
#include "sinkfs.h"

/* While InfluxDB is unreachable, how often write() tries the spool again. */
#define RESEND_EVERY_NS (10ull * 1000000000ull)

enum {
    OPT_PATH, OPT_URL, OPT_UDP, OPT_ORG, OPT_BUCKET, OPT_TOKEN, OPT_USER, OPT_PASSWORD,
    OPT_BATCH, OPT_FLUSH_INTERVAL, OPT_TIMEOUT, OPT_RETRIES, OPT_BACKOFF, OPT_SPOOL_DIR,
    OPT_PROGRESS, OPT_UDP_PAYLOAD
};

#define NS DLG_OPT_NOSWEEP
static const dlg_option influx_options[] = {
    {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "write line protocol to this file (one of path, url, udp)", NS},
    {"url", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "1.x: http://HOST:8086/write?db=NAME; 2.x: http://HOST:8086 with org, bucket, token", NS},
    {"udp", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "send datagrams to HOST:PORT (an InfluxDB UDP listener)", NS},
    {"org", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 2.x organization", NS},
    {"bucket", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 2.x bucket", NS},
    {"token", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 2.x API token (Authorization: Token ...)", NS},
    {"user", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 1.x user (HTTP basic auth)", NS},
    {"password", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 1.x password", NS},
    {"batch", DLG_OPT_INT, "5000", "1", "1000000", NULL, "send when this many points are waiting", 0},
    {"flush_interval", DLG_OPT_DURATION, "1s", "0", "1h", NULL,
     "send waiting points once the oldest has waited this long (checked on each write)", 0},
    {"timeout", DLG_OPT_DURATION, "10s", "1ms", "10m", NULL, "limit for one HTTP request, connecting included", 0},
    {"retries", DLG_OPT_INT, "3", "0", "20", NULL, "retries of a batch after a connection error, timeout or 5xx", 0},
    {"backoff", DLG_OPT_DURATION, "500ms", "0", "1m", NULL, "wait before the first retry; doubles each retry, up to 1m", 0},
    {"spool_dir", DLG_OPT_STRING, "results/spool", NULL, NULL, NULL,
     "where undeliverable points wait (NAME.lp) and rejected ones are kept (NAME.rejected.lp)", NS},
    {"progress", DLG_OPT_BOOL, "true", NULL, NULL, NULL, "also send the per-second dlgauge_progress points", 0},
    {"udp_payload", DLG_OPT_SIZE, "512", "64", "65507", NULL, "largest UDP datagram; lines are never split", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
#undef NS

static uint64_t now_ns(const influx_sink *s) { return s->h->now_ns(s->h); }

static const char *opt_str(const dlg_value *v)
{
    return v->set && v->text && *v->text ? v->text : NULL;
}

/* Sleeps wait_ns unless that passes the deadline or the user stops the
 * run.  Returns false when it did not wait. */
static bool backoff_sleep(influx_sink *s, uint64_t wait_ns, uint64_t deadline_ns)
{
    uint64_t until = now_ns(s) + wait_ns;
    if (until > deadline_ns)
        return false;
    for (uint64_t t; (t = now_ns(s)) < until;) {
        if (s->h->stopping(s->h))
            return false;
        uint64_t left = until - t, slice = left < 100000000u ? left : 100000000u;
        struct timespec ts = {(time_t)(slice / 1000000000u), (long)(slice % 1000000000u)};
        nanosleep(&ts, NULL);
    }
    return true;
}

static size_t count_lines(const char *p, size_t len)
{
    size_t n = 0;
    for (const char *e = p + len; (p = memchr(p, '\n', (size_t)(e - p))); p++)
        n++;
    return n;
}

static void keep_first(int *rc, int r)
{
    if (*rc == 0 && r < 0)
        *rc = r;
}

/* Saves refused lines and reports them once per distinct error.  partial:
 * InfluxDB stored some of these lines, which ones it does not say. */
static int reject(influx_sink *s, const char *body, size_t len, const char *why, bool partial)
{
    int rc = influx_spool_reject(s, body, len);
    if (rc != 0)
        return rc;
    size_t n = count_lines(body, len);
    if (strcmp(why, s->last_reject) == 0)
        return s->h->error(s->h, DLG_EINVAL, "InfluxDB at %s rejected %s%zu more points (same error); saved to %s",
                           s->target, partial ? "some of " : "", n, s->rejected_path);
    snprintf(s->last_reject, sizeof s->last_reject, "%s", why);
    if (partial)
        return s->h->error(s->h, DLG_EINVAL, "InfluxDB at %s stored only part of %zu points: %s; all %zu were "
                           "saved to %s (sending them again is harmless: a point is stored once per series and "
                           "time)", s->target, n, why, n, s->rejected_path);
    return s->h->error(s->h, DLG_EINVAL, "InfluxDB at %s rejected %zu points: %s; they were saved to %s",
                       s->target, n, why, s->rejected_path);
}

/* Whether InfluxDB's error text names line[0..n) as unparseable (1.x and
 * 2.x both write "unable to parse '<line>': <reason>"). */
static bool named_unparseable(const char *err, const char *line, size_t n)
{
    static const char lead[] = "unable to parse '";
    for (const char *p = err; (p = strstr(p, lead)); ) {
        p += sizeof lead - 1;
        if (strncmp(p, line, n) == 0 && strncmp(p + n, "': ", 3) == 0)
            return true;
    }
    return false;
}

/* Sorts the lines of part into those InfluxDB named as unparseable and
 * the others.  Returns -DLG_ENOMEM or 0. */
static int split_named(const char *err, const char *part, size_t n, dlg_sbuf *bad, dlg_sbuf *good)
{
    for (const char *p = part, *e = part + n; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);
        if (sbuf_add(named_unparseable(err, p, len) ? bad : good, p, nl ? len + 1 : len) != 0)
            return -DLG_ENOMEM;
        p += nl ? len + 1 : len;
    }
    return 0;
}

/* A rejection that names unparseable lines costs only those lines: the
 * others were stored (1.x "partial write") or, where InfluxDB refused the
 * whole request (2.x), are sent once more without them. */
static int reject_part(influx_sink *s, const char *part, size_t n, const char *why)
{
    const char *err = influx_http_error(s->http);
    dlg_sbuf bad = {0}, good = {0};
    int rc = split_named(err, part, n, &bad, &good);
    if (rc != 0 || bad.len == 0 || good.len == 0) {
        bool partial = bad.len == 0 && strstr(err, "partial write"); /* e.g. a type conflict */
        sbuf_free(&bad);
        sbuf_free(&good);
        return rc != 0 ? s->h->error(s->h, DLG_ENOMEM, "influx %s: out of memory", s->name)
                       : reject(s, part, n, why, partial);
    }
    bool stored = strstr(err, "partial write") != NULL;
    char why_rest[512];
    rc = reject(s, bad.p, bad.len, why, false);
    if (!stored && influx_http_post(s->http, good.p, good.len, why_rest, sizeof why_rest) != INFLUX_SENT)
        keep_first(&rc, reject(s, good.p, good.len, why_rest, false));
    sbuf_free(&bad);
    sbuf_free(&good);
    return rc;
}

/* Longest wait a Retry-After may impose on one retry. */
#define RETRY_AFTER_MAX_NS (300ull * 1000000000ull)

/* The wait before the next try: the backoff, or longer if InfluxDB asked
 * for it with Retry-After (429, 503). */
static uint64_t next_wait(const influx_sink *s, uint64_t backoff)
{
    uint64_t ra = influx_http_retry_after_ns(s->http);
    if (ra > RETRY_AFTER_MAX_NS)
        ra = RETRY_AFTER_MAX_NS;
    return ra > backoff ? ra : backoff;
}

/* One request, retried with backoff while InfluxDB is unreachable. */
static influx_send post_retrying(influx_sink *s, const char *body, size_t len, bool retry, uint64_t deadline_ns,
                                 char *why, size_t whylen)
{
    int tries = retry ? s->retries + 1 : 1;
    for (int t = 1;; t++) {
        influx_send r = influx_http_post(s->http, body, len, why, whylen);
        if (r != INFLUX_RETRY)
            return r;
        s->h->log(s->h, DLG_LOG_DEBUG, "InfluxDB at %s: try %d of %d failed: %s", s->target, t, tries, why);
        if (t >= tries || !backoff_sleep(s, next_wait(s, influx_retry_wait_ns(s->backoff_ns, t - 1)), deadline_ns)) {
            snprintf(s->last_why, sizeof s->last_why, "%s", why);
            return INFLUX_RETRY;
        }
    }
}

/* End of the longest run of whole lines from off within limit bytes; at
 * least one line. */
static size_t cut_lines(const char *d, size_t off, size_t len, size_t limit)
{
    size_t end = off;
    while (end < len) {
        const char *nl = memchr(d + end, '\n', len - end);
        size_t next = nl ? (size_t)(nl - d) + 1 : len;
        if (end > off && next - off > limit)
            break;
        end = next;
    }
    return end;
}

/* A 413 for a part of more than one line: remember half its size as the
 * limit, so this and later batches go in parts InfluxDB takes. */
static bool shrink_parts(influx_sink *s, const char *part, size_t n)
{
    const char *nl = memchr(part, '\n', n);
    if (!nl || (size_t)(nl - part) + 1 >= n)
        return false; /* a single line: nothing to split */
    s->max_body = n / 2;
    s->h->log(s->h, DLG_LOG_INFO, "InfluxDB at %s refused %zu bytes in one request (413, max-body-size); "
              "sending at most %zu bytes per request", s->target, n, s->max_body);
    return true;
}

int influx_deliver(influx_sink *s, const char *body, size_t len, bool retry, uint64_t deadline_ns, size_t *done)
{
    char why[512];
    int rc = INFLUX_SENT;
    size_t off = 0;
    while (off < len) {
        size_t end = cut_lines(body, off, len, s->max_body ? s->max_body : len);
        influx_send r = post_retrying(s, body + off, end - off, retry, deadline_ns, why, sizeof why);
        if (r == INFLUX_TOO_LARGE && shrink_parts(s, body + off, end - off))
            continue;
        if (r == INFLUX_RETRY) {
            *done = off;
            return INFLUX_RETRY;
        }
        if (r == INFLUX_REJECTED)
            keep_first(&rc, reject_part(s, body + off, end - off, why));
        else if (r != INFLUX_SENT)
            keep_first(&rc, reject(s, body + off, end - off, why, false));
        off = end;
    }
    *done = len;
    return rc;
}

static void enter_degraded(influx_sink *s)
{
    s->degraded = true;
    s->next_resend_ns = now_ns(s) + RESEND_EVERY_NS;
    if (s->warned_spool)
        return;
    s->warned_spool = true;
    s->h->log(s->h, DLG_LOG_WARN, "InfluxDB at %s is unreachable (%s); points are spooled to %s and resent "
              "every 10 s and at flush", s->target, s->last_why, s->spool_path);
}

/* Sends the spool; leaves the degraded state once it is empty. */
static int try_resend(influx_sink *s, bool retry, uint64_t deadline_ns)
{
    int r = influx_spool_replay(s, retry, deadline_ns);
    if (r == 1) {
        enter_degraded(s);
        return 0;
    }
    if (s->degraded)
        s->h->log(s->h, DLG_LOG_INFO, "InfluxDB at %s is reachable again; spooled points were sent", s->target);
    s->degraded = false;
    return r;
}

static int send_http(influx_sink *s, uint64_t deadline_ns)
{
    if (s->degraded) /* keep the order: behind what is already spooled */
        return influx_spool_append(s, s->pending.p, s->pending.len);
    size_t done = 0;
    int r = influx_deliver(s, s->pending.p, s->pending.len, true, deadline_ns, &done);
    if (r != INFLUX_RETRY)
        return r < 0 ? r : 0;
    int rc = influx_spool_append(s, s->pending.p + done, s->pending.len - done);
    if (rc == 0)
        enter_degraded(s);
    return rc;
}

/* Appends the pending lines to the file whole, or not at all: a line cut
 * by a full disk could parse as a point with a wrong value. */
static int append_file(influx_sink *s)
{
    sink_lock(s->fd);
    int e = sink_append(s->fd, s->pending.p, s->pending.len);
    sink_unlock(s->fd);
    return e;
}

static int send_pending(influx_sink *s, uint64_t deadline_ns)
{
    if (s->pending.len == 0)
        return 0;
    int rc = 0, e;
    if (s->http) {
        rc = send_http(s, deadline_ns);
    } else if (s->udp) {
        influx_udp_send(s->udp, s->pending.p, s->pending.len);
    } else if ((e = append_file(s)) != 0) {
        rc = s->h->error(s->h, DLG_EIO, "%s: %s writing %zu points (not written)", s->path,
                         e == ENOSPC ? "disk full (ENOSPC)" : strerror(e), s->npending);
    }
    sbuf_truncate(&s->pending, 0);
    s->npending = 0;
    return rc;
}

static void log_dropped(influx_sink *s, const dlg_point *p)
{
    s->h->log(s->h, DLG_LOG_DEBUG, "influx %s: %s point at %lld dropped: no field InfluxDB can store "
              "(NaN/Inf or invalid keys), or an empty measurement or one starting with '#'", s->name, p->measurement ? p->measurement : "?",
              (long long)p->time_ns);
}

static int influx_write(void *state, const dlg_point *pts, size_t n)
{
    influx_sink *s = state;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const dlg_point *p = &pts[i];
        if (!s->progress && p->measurement && strcmp(p->measurement, "dlgauge_progress") == 0)
            continue;
        int r = lp_format_point(&s->pending, p, s->lp_flags, &s->stats);
        if (r < 0)
            return s->h->error(s->h, DLG_ENOMEM, "influx %s: out of memory", s->name);
        if (r == 0) {
            log_dropped(s, p);
            continue;
        }
        if (s->npending++ == 0)
            s->pending_since_ns = now_ns(s);
        if (s->npending >= s->batch)
            keep_first(&rc, send_pending(s, UINT64_MAX));
    }
    /* A file or a datagram costs nothing to send: write through. */
    if (!s->http || (s->npending && now_ns(s) - s->pending_since_ns >= s->flush_interval_ns))
        keep_first(&rc, send_pending(s, UINT64_MAX));
    if (s->degraded && now_ns(s) >= s->next_resend_ns)
        keep_first(&rc, try_resend(s, false, UINT64_MAX));
    return rc;
}

/* Nothing is lost, but not everything is delivered: -DLG_EAGAIN says so. */
static int still_spooled(influx_sink *s)
{
    size_t n = influx_spool_points(s);
    return s->h->error(s->h, DLG_EAGAIN, "InfluxDB at %s is still unreachable (%s); %zu point%s stay%s spooled "
                       "in %s until `dlgauge flush` (or the next run) sends them", s->target, s->last_why, n,
                       n == 1 ? "" : "s", n == 1 ? "s" : "", s->spool_path);
}

static int influx_flush(void *state, uint64_t timeout_ns)
{
    influx_sink *s = state;
    uint64_t deadline = timeout_ns ? now_ns(s) + timeout_ns : UINT64_MAX;
    int rc = send_pending(s, deadline);
    if (s->degraded)
        keep_first(&rc, try_resend(s, true, deadline));
    if (s->degraded && rc == 0)
        rc = still_spooled(s);
    else if (s->degraded)
        s->h->log(s->h, DLG_LOG_WARN, "InfluxDB at %s is still unreachable (%s); points stay in %s until "
                  "`dlgauge flush` (or the next run) sends them", s->target, s->last_why, s->spool_path);
    if (s->fd >= 0 && fsync(s->fd) != 0 && errno != EINVAL)
        keep_first(&rc, s->h->error(s->h, DLG_EIO, "%s: fsync failed: %s", s->path, strerror(errno)));
    return rc;
}

static void influx_close(void *state)
{
    influx_sink *s = state;
    if (!s)
        return;
    send_pending(s, now_ns(s) + s->timeout_ns);
    if (s->degraded)
        try_resend(s, false, UINT64_MAX);
    const lp_stats *ls = &s->stats;
    if (ls->dropped_fields || ls->dropped_points || ls->dropped_tags || ls->truncated || ls->trimmed)
        s->h->log(s->h, DLG_LOG_DEBUG, "influx %s: dropped %zu fields (NaN/Inf, bad keys), %zu points without "
                  "fields or with a bad measurement, %zu tags; cut %zu long strings and the trailing "
                  "backslashes of %zu names", s->name, ls->dropped_fields, ls->dropped_points,
                  ls->dropped_tags, ls->truncated, ls->trimmed);
    if (s->fd >= 0) {
        fsync(s->fd);
        close(s->fd);
    }
    influx_http_close(s->http);
    influx_udp_close(s->udp);
    sbuf_free(&s->pending);
    free(s->path);
    free(s->spool_dir);
    free(s->spool_path);
    free(s->rejected_path);
    free(s->name);
    free(s);
}

/* <spool_dir>/<name><suffix>, the name made safe as a file name. */
static char *spool_file(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *p = malloc(n);
    if (!p)
        return NULL;
    snprintf(p, n, "%s/", dir);
    char *q = p + strlen(p);
    for (const char *c = name; *c; c++)
        *q++ = (*c == '/' || *c == ' ') ? '_' : *c;
    strcpy(q, suffix);
    return p;
}

static int open_http(influx_sink *s, const dlg_value *o)
{
    influx_http_conf conf = {opt_str(&o[OPT_URL]), opt_str(&o[OPT_ORG]), opt_str(&o[OPT_BUCKET]),
                             opt_str(&o[OPT_TOKEN]), opt_str(&o[OPT_USER]), opt_str(&o[OPT_PASSWORD]),
                             s->timeout_ns};
    bool v2 = false;
    int rc = influx_http_open(s->h, &conf, &v2, &s->http);
    if (rc != 0)
        return rc;
    s->lp_flags = v2 ? LP_UNSIGNED : 0;
    s->target = influx_http_url(s->http);
    const char *dir = opt_str(&o[OPT_SPOOL_DIR]) ? opt_str(&o[OPT_SPOOL_DIR]) : "results/spool";
    if (!(s->spool_dir = strdup(dir)) || !(s->spool_path = spool_file(dir, s->name, ".lp")) ||
        !(s->rejected_path = spool_file(dir, s->name, ".rejected.lp")))
        return s->h->error(s->h, DLG_ENOMEM, "influx %s: out of memory", s->name);
    /* What a previous run could not send goes first; if it cannot, the one
     * warning below says so (not enter_degraded's as well). */
    s->warned_spool = true;
    uint64_t budget = s->timeout_ns * (uint64_t)(s->retries + 1) + influx_retry_waits_ns(s->backoff_ns, s->retries);
    rc = try_resend(s, true, now_ns(s) + budget);
    if (rc == 0 && s->degraded)
        s->h->log(s->h, DLG_LOG_WARN, "%s: kept; InfluxDB at %s is unreachable (%s); new points are spooled "
                  "after it", s->spool_path, s->target, s->last_why);
    s->warned_spool = s->degraded;
    return rc;
}

static int open_transport(influx_sink *s, const dlg_value *o)
{
    if (opt_str(&o[OPT_PATH])) {
        if (!(s->path = strdup(o[OPT_PATH].text)))
            return s->h->error(s->h, DLG_ENOMEM, "influx %s: out of memory", s->name);
        s->target = s->path;
        int e = sink_mkdir_parents(s->path);
        if (!e && (s->fd = sink_open_durable(s->path, O_RDWR | O_APPEND)) < 0)
            e = errno;
        if (e)
            return s->h->error(s->h, DLG_EIO, "%s: cannot open for writing: %s", s->path, strerror(e));
        /* a point cut short by a crash can still parse, with a wrong value */
        return sink_set_aside_cut_line(s->h, s->fd, s->path);
    }
    if (opt_str(&o[OPT_UDP])) {
        int rc = influx_udp_open(s->h, o[OPT_UDP].text, (size_t)o[OPT_UDP_PAYLOAD].i, &s->udp);
        s->target = rc == 0 ? influx_udp_target(s->udp) : NULL;
        return rc;
    }
    return open_http(s, o);
}

/* The checks of the options alone, shared by open and check. */
static int check_keys(const dlg_host *h, const dlg_value *o, const char *name)
{
    int ways = !!opt_str(&o[OPT_PATH]) + !!opt_str(&o[OPT_URL]) + !!opt_str(&o[OPT_UDP]);
    if (ways != 1)
        return h->error(h, DLG_EINVAL, "sink %s: set exactly one of path (a file), url (HTTP) or udp (HOST:PORT); "
                        "%s", name, ways ? "more than one is set" : "none is set");
    if (!opt_str(&o[OPT_URL]) && (opt_str(&o[OPT_ORG]) || opt_str(&o[OPT_BUCKET]) || opt_str(&o[OPT_TOKEN])))
        return h->error(h, DLG_EINVAL, "sink %s: org, bucket and token need url = http://HOST:8086", name);
    return 0;
}

/* --dry-run: what open() would refuse, without files or network traffic. */
static int influx_check(const dlg_host *h, const dlg_value *o, const char *name)
{
    int rc = check_keys(h, o, name);
    if (rc != 0)
        return rc;
    if (opt_str(&o[OPT_PATH]))
        return sink_check_path(h, name, &o[OPT_PATH]);
    if (opt_str(&o[OPT_UDP]))
        return influx_udp_check(h, o[OPT_UDP].text);
    influx_http_conf conf = {opt_str(&o[OPT_URL]), opt_str(&o[OPT_ORG]), opt_str(&o[OPT_BUCKET]),
                             opt_str(&o[OPT_TOKEN]), opt_str(&o[OPT_USER]), opt_str(&o[OPT_PASSWORD]), 0};
    return influx_http_check(h, &conf);
}

static int influx_open(const dlg_host *h, const dlg_value *o, const char *name, void **state)
{
    int rc = check_keys(h, o, name);
    if (rc != 0)
        return rc;
    influx_sink *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name ? name : "influx"))) {
        free(s);
        return h->error(h, DLG_ENOMEM, "sink %s: out of memory", name);
    }
    s->h = h;
    s->fd = -1;
    s->progress = o[OPT_PROGRESS].i != 0;
    s->batch = o[OPT_BATCH].i > 0 ? (size_t)o[OPT_BATCH].i : 1;
    s->flush_interval_ns = (uint64_t)(o[OPT_FLUSH_INTERVAL].i > 0 ? o[OPT_FLUSH_INTERVAL].i : 0);
    s->timeout_ns = (uint64_t)(o[OPT_TIMEOUT].i > 0 ? o[OPT_TIMEOUT].i : 1000000);
    s->retries = o[OPT_RETRIES].i > 0 ? (int)o[OPT_RETRIES].i : 0;
    s->backoff_ns = (uint64_t)(o[OPT_BACKOFF].i > 0 ? o[OPT_BACKOFF].i : 0);
    rc = open_transport(s, o);
    if (rc != 0) {
        influx_close(s);
        return rc;
    }
    *state = s;
    return 0;
}

static const dlg_sink_ops influx_ops = {
    .version = 2,
    .open = influx_open,
    .begin = NULL,
    .write = influx_write,
    .flush = influx_flush,
    .close = influx_close,
    .check = influx_check,
};

static const dlg_plugin_desc influx_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_SINK,
    .name = "influx",
    .version = "1.0",
    .summary = "points as InfluxDB line protocol: to a file, over HTTP (1.x/2.x) or UDP",
    .options = influx_options,
    .metrics = NULL,
    .ops = &influx_ops,
};

DLG_PLUGIN("influx", &influx_desc)
