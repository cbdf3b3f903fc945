/* InfluxDB sink: points as line protocol to a file, over HTTP (1.x and
 * 2.x write APIs) or UDP.  Over HTTP, progress points are batched (by count
 * or flush_interval, checked on each write) and the others sent as they
 * come, with the batch ahead of them; retried with backoff, spooled to
 * disk when InfluxDB is unreachable and replayed later (influx_spool.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "influx.h"
#include "sinkfs.h"
#include "sinkline.h"

/* While InfluxDB is unreachable, how often write() tries the spool again. */
#define RESEND_EVERY_NS (10ull * 1000000000ull)

enum {
    OPT_PATH, OPT_URL, OPT_UDP, OPT_ORG, OPT_BUCKET, OPT_TOKEN, OPT_USER, OPT_PASSWORD,
    OPT_BATCH, OPT_FLUSH_INTERVAL, OPT_TIMEOUT, OPT_RETRIES, OPT_BACKOFF, OPT_SPOOL_DIR,
    OPT_PROGRESS, OPT_UDP_PAYLOAD, OPT_CA_CERT, OPT_TLS_VERIFY
};

#define NS DLG_OPT_NOSWEEP
static const dlg_option influx_options[] = {
    {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "write line protocol to this file (one of path, url, udp)",
     NS | DLG_OPT_PATH_OUT},
    {"url", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "1.x: http://HOST:8086/write?db=NAME; 2.x: http://HOST:8086 with org, bucket, token", NS},
    {"udp", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "send datagrams to HOST:PORT, PORT 1..65535 (an InfluxDB UDP listener)", NS},
    {"org", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 2.x organization", NS},
    {"bucket", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 2.x bucket", NS},
    {"token", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 2.x API token (Authorization: Token ...)", NS},
    {"user", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 1.x user (HTTP basic auth)", NS},
    {"password", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "InfluxDB 1.x password", NS},
    {"batch", DLG_OPT_INT, "5000", "1", "1000000", NULL, "send when this many points are waiting", 0},
    {"flush_interval", DLG_OPT_DURATION, "1s", "0", "1h", NULL,
     "send waiting progress points once the oldest has waited this long (checked as each point arrives; "
     "result rows are sent at once)", 0},
    {"timeout", DLG_OPT_DURATION, "10s", "1ms", "10m", NULL, "limit for one HTTP request, connecting included", 0},
    {"retries", DLG_OPT_INT, "3", "0", "20", NULL,
     "retries of a batch after a connection error, a timeout, 5xx, 429 or 408", 0},
    {"backoff", DLG_OPT_DURATION, "500ms", "0", "1m", NULL, "wait before the first retry; doubles each retry, up to 1m", 0},
    {"spool_dir", DLG_OPT_STRING, "results/spool", NULL, NULL, NULL,
     "where undeliverable points wait (NAME.lp; '/', ' ' and '%' in NAME percent-encoded) and rejected ones are "
     "kept (NAME.rejected.lp); a relative one is taken from the directory dlgauge runs in (run `dlgauge flush` "
     "there too), and messages name it absolute", NS},
    {"progress", DLG_OPT_BOOL, "true", NULL, NULL, NULL, "also send the per-second dlgauge_progress points", 0},
    {"udp_payload", DLG_OPT_SIZE, "512", "64", "65507", NULL, "largest UDP datagram; lines are never split", 0},
    {"ca_cert", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "PEM file of the CA that signed InfluxDB's certificate, trusted in place of the system's CAs (https url "
     "only)", NS},
    {"tls_verify", DLG_OPT_BOOL, "true", NULL, NULL, NULL,
     "check InfluxDB's certificate and host name; false: encrypted but not verified, with a warning (https url "
     "only)", NS},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
#undef NS

static uint64_t now_ns(const influx_sink *s) { return s->h->now_ns(s->h); }

static const char *opt_str(const dlg_value *v)
{
    return v->set && v->text && *v->text ? v->text : NULL;
}

/* How InfluxDB fails us now, for messages: "is unreachable (WHY)" or
 * "refused the points (WHY): WHAT TO FIX". */
static const char *failing(const influx_sink *s, char *buf, size_t n)
{
    if (s->spool_busy)
        snprintf(buf, n, "gets the spool from another dlgauge process now (its lock is taken)");
    else if (s->denied && s->untrusted)
        snprintf(buf, n, "is not trusted (%s): %s", s->last_why, s->denied);
    else if (s->denied)
        snprintf(buf, n, "refused the points (%s): %s", s->last_why, s->denied);
    else
        snprintf(buf, n, "is unreachable (%s)", s->last_why);
    return buf;
}

/* When to resend the spool: in 10 s, or later when InfluxDB's last answer
 * asked for that with Retry-After (at most 5 min). */
static uint64_t resend_at(const influx_sink *s)
{
    uint64_t ra = s->http ? influx_http_retry_after_ns(s->http) : 0;
    ra = ra < INFLUX_RETRY_AFTER_MAX_NS ? ra : INFLUX_RETRY_AFTER_MAX_NS;
    return now_ns(s) + (ra > RESEND_EVERY_NS ? ra : RESEND_EVERY_NS);
}

static void warn_spooled(influx_sink *s)
{
    s->warned_spool = true;
    s->warned_denied = s->denied != NULL;
    char how[1024];
    s->h->log(s->h, DLG_LOG_WARN, "InfluxDB at %s %s; points stay spooled in %s: tried again every 10 s (or after "
              "its Retry-After) while a run measures, and when the sink flushes",
              s->target, failing(s, how, sizeof how), s->spool_path);
}

/* Later batches go to the spool, not through retries.  spooled: the
 * points are in the spool, which is worth a warning once per kind of
 * failure (unreachable, denied); where they could not be spooled, the
 * error that says so is enough.  In open and flush the warning waits
 * (hold_warning): `dlgauge flush`, which opens, flushes and begins no run,
 * says the same in flush's one line of what stays spooled. */
static void enter_degraded(influx_sink *s, bool spooled)
{
    s->degraded = true;
    s->next_resend_ns = resend_at(s);
    if (!spooled || (s->warned_spool && s->warned_denied == (s->denied != NULL)))
        return;
    if (s->hold_warning)
        s->warn_spool_later = true;
    else
        warn_spooled(s);
}

/* Sends the spool, then what is held in memory behind it; leaves the
 * degraded state once both are empty. */
static int try_resend(influx_sink *s, bool retry, uint64_t deadline_ns)
{
    bool kept = false;
    size_t sent = 0;
    int r = influx_spool_replay(s, retry, deadline_ns, &kept, &sent);
    if (!kept)
        influx_keep_first(&r, influx_held_send(s, retry, deadline_ns, &kept, &sent));
    if (kept) {
        enter_degraded(s, s->held.len == 0);
        return r;
    }
    /* only an answer says so: an empty spool (the points could not be
     * spooled) was not sent anywhere */
    if (s->degraded && sent > 0)
        s->h->log(s->h, DLG_LOG_INFO, "InfluxDB at %s is reachable again; spooled points were sent", s->target);
    s->degraded = false;
    return r;
}

/* Delivers or spools the pending lines.  Where the spool does not take
 * them either, progress points wait in memory (influx_hold.c), but a
 * result row or the dlgauge_host point among them makes this fail: the
 * host then keeps it in the journal for --resume. */
static int send_http_now(influx_sink *s, uint64_t deadline_ns)
{
    if (s->degraded) /* keep the order: behind what is already spooled */
        return influx_spool_or_hold(s, s->pending.p, s->pending.len, true);
    influx_left left = {0};
    int rc = influx_deliver(s, s->pending.p, s->pending.len, true, deadline_ns, &left);
    if (left.why != INFLUX_SENT) {
        int sr = influx_spool_left(s, &left, s->pending.p, s->pending.len, true);
        /* even when the spool fails (a full disk): a retry sequence per
         * batch would only slow the run down */
        enter_degraded(s, sr == 0 && s->held.len == 0);
        if (sr != 0)
            rc = sr; /* points lost, or a row left to the journal: that is the error to see */
    }
    sbuf_free(&left.keep);
    return rc;
}

static int send_http(influx_sink *s, uint64_t deadline_ns)
{
    /* A spool another process replays (its lock is taken) is waited for,
     * when a result row is to be spooled, until the deadline of this
     * batch's retry sequence (a minute at most): the row would fail its
     * write otherwise.  Progress points do not wait, but are held. */
    uint64_t lock_wait = s->lock_wait_until_ns, cap = now_ns(s) + INFLUX_LOCK_WAIT_MAX_NS;
    if (s->pending_result && deadline_ns > lock_wait)
        s->lock_wait_until_ns = deadline_ns < cap ? deadline_ns : cap;
    int rc = send_http_now(s, deadline_ns);
    s->lock_wait_until_ns = lock_wait;
    return rc;
}

/* Appends the pending lines to the file whole, or not at all: a line cut
 * by a full disk could parse as a point with a wrong value.  A result is
 * synced too: the host journals it as written once write() returns. */
static int append_file(influx_sink *s, int *sync_failed)
{
    sink_lock(s->fd);
    int e = s->pending_result ? sink_append_durable(s->fd, s->pending.p, s->pending.len, sync_failed)
                              : sink_append(s->fd, s->pending.p, s->pending.len);
    sink_unlock(s->fd);
    return e;
}

/* The pending lines to the file at `path`: one deleted or moved away
 * during the run is followed as the csv and json sinks do (sinkfs.h), so
 * later points are not written into a file no one sees. */
static int write_file(influx_sink *s)
{
    int sync_failed = 0, rc = sink_follow_path(s->h, &s->fd, s->path, "point", s->file_points,
                                                  "this run wrote");
    if (rc < 0)
        return rc;
    int e = append_file(s, &sync_failed);
    if (e)
        return s->h->error(s->h, DLG_EIO, "%s: %s %s %zu points (not written)", s->path,
                           e == ENOSPC ? "disk full (ENOSPC)" : strerror(e),
                           sync_failed ? "syncing (fdatasync)" : "writing", s->npending);
    s->file_points += s->npending;
    return 0;
}

static int send_pending(influx_sink *s, uint64_t deadline_ns)
{
    if (s->pending.len == 0)
        return 0;
    int rc = 0;
    if (s->http)
        rc = send_http(s, deadline_ns);
    else if (s->udp)
        influx_udp_send(s->udp, s->pending.p, s->pending.len);
    else
        rc = write_file(s);
    sbuf_truncate(&s->pending, 0);
    s->npending = 0;
    s->pending_result = false;
    return rc;
}

/* When one retry sequence started now ends: every try taking its whole
 * timeout, plus the backoff waits.  No batch holds the run up longer: a
 * Retry-After that would (a rate-limited InfluxDB may ask for minutes per
 * retry) spools the batch instead, while the cells go on being measured. */
static uint64_t sequence_deadline(const influx_sink *s)
{
    return now_ns(s) + s->timeout_ns * (uint64_t)(s->retries + 1) + influx_retry_waits_ns(s->backoff_ns, s->retries);
}

static void log_dropped(influx_sink *s, const dlg_point *p)
{
    s->h->log(s->h, DLG_LOG_DEBUG, "%s point at %lld dropped: no field InfluxDB can store "
              "(NaN/Inf or invalid keys), or an empty measurement or one starting with '#'",
              p->measurement ? p->measurement : "?", (long long)p->time_ns);
}

static bool is_progress(const dlg_point *p)
{
    return p->measurement && strcmp(p->measurement, "dlgauge_progress") == 0;
}

/* Only progress points wait in the batch: a result row or the run's
 * dlgauge_host point is delivered or spooled (fsynced) before write
 * returns, because the host journals it as sent then, and --resume never
 * sends it again (a kill -9 would lose a batched one for good).  Where
 * neither InfluxDB nor the spool takes it (a full disk), write fails, so
 * that the journal keeps it and --resume sends it (only progress points
 * may be left to the memory hold). */
static int influx_write(void *state, const dlg_point *pts, size_t n)
{
    influx_sink *s = state;
    int rc = 0;
    bool durable = false;
    for (size_t i = 0; i < n; i++) {
        const dlg_point *p = &pts[i];
        if (!s->progress && is_progress(p))
            continue;
        durable = durable || !is_progress(p);
        int r = lp_format_point(&s->pending, p, s->lp_flags, &s->stats);
        if (r < 0)
            return s->h->error(s->h, DLG_ENOMEM, "out of memory");
        if (r == 0) {
            log_dropped(s, p);
            continue;
        }
        if (s->npending++ == 0)
            s->pending_since_ns = now_ns(s);
        s->pending_result = s->pending_result || !is_progress(p);
        if (s->npending >= s->batch)
            influx_keep_first(&rc, send_pending(s, sequence_deadline(s)));
    }
    /* A file or a datagram costs nothing to send: write through. */
    if (!s->http || durable || (s->npending && now_ns(s) - s->pending_since_ns >= s->flush_interval_ns))
        influx_keep_first(&rc, send_pending(s, sequence_deadline(s)));
    if (s->degraded && now_ns(s) >= s->next_resend_ns)
        influx_keep_first(&rc, try_resend(s, false, UINT64_MAX));
    return rc;
}

/* Whether the file holds p's line already: 1, 0, or -code after saying
 * why. */
static int file_holds(influx_sink *s, const dlg_point *p)
{
    dlg_sbuf line = {0};
    int r = lp_format_point(&line, p, s->lp_flags, NULL);
    if (r < 0)
        return s->h->error(s->h, DLG_ENOMEM, "out of memory");
    if (r > 0) {
        sink_lock(s->fd);
        r = sink_skip_held(s->h, s->fd, s->path, line.p, line.len);
        sink_unlock(s->fd);
    }
    sbuf_free(&line);
    return r;
}

/* A file holds each line once.  InfluxDB keeps one point per series and
 * time, so over HTTP or UDP a point sent again replaces its copy. */
static int influx_write_again(void *state, const dlg_point *pts, size_t n)
{
    influx_sink *s = state;
    for (size_t i = 0; i < n; i++) {
        int rc = s->fd >= 0 ? file_holds(s, &pts[i]) : 0;
        if (rc == 0)
            rc = influx_write(s, &pts[i], 1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Nothing is lost, but not everything is delivered: -DLG_EAGAIN says so
 * while InfluxDB is unreachable; a denial is an error (the configuration
 * must be fixed), so the run exits non-zero. */
static int still_spooled(influx_sink *s)
{
    size_t n = influx_spool_points(s);
    char how[1024];
    return s->h->error(s->h, s->denied ? DLG_EINVAL : DLG_EAGAIN, "InfluxDB at %s %s; %zu point%s stay%s spooled "
                       "in %s until `dlgauge flush` (or the next run) sends %s", s->target,
                       failing(s, how, sizeof how), n, n == 1 ? "" : "s", n == 1 ? "s" : "", s->spool_path,
                       n == 1 ? "it" : "them");
}

/* What InfluxDB did with the n spooled points it did not take whole
 * while open replayed the spool, of which `part` were in requests it
 * stored in part ("partial write": a point past the retention policy),
 * not saying which points: as the live path says it (reject()). */
static const char *open_rejection(const influx_sink *s, size_t n, size_t part, const char *when, char *buf,
                                  size_t len)
{
    const char *pl = n == 1 ? "" : "s";
    if (part == n)
        snprintf(buf, len, "stored only part of %zu point%s of the spool %s%s: %s; it does not say which, so all "
                 "%zu were saved to %s (sending them again is harmless: a point is stored once per series and "
                 "time)", n, pl, s->spool_path, when, s->open_why, n, s->rejected_path);
    else if (part > 0)
        snprintf(buf, len, "rejected %zu point%s of the spool %s%s: %s; %zu of them in requests it stored in part, "
                 "not saying which; all %zu were saved to %s", n, pl, s->spool_path, when, s->open_why, part, n,
                 s->rejected_path);
    else
        snprintf(buf, len, "rejected %zu point%s of the spool %s%s: %s; %s saved to %s", n, pl, s->spool_path,
                 when, s->open_why, n == 1 ? "it was" : "they were", s->rejected_path);
    return buf;
}

/* Points InfluxDB rejected while open replayed the spool: they were saved
 * then, and the run went on; its end says so, so that it exits non-zero. */
static int rejected_at_open(influx_sink *s)
{
    size_t n = s->open_rejected;
    if (n == 0)
        return 0;
    s->open_rejected = 0;
    char what[2048];
    return s->h->error(s->h, DLG_EINVAL, "InfluxDB at %s %s", s->target,
                       open_rejection(s, n, s->open_partial, " when the sink opened", what, sizeof what));
}

/* Progress points InfluxDB rejected since the last flush: each was warned
 * of as it came (reject()), and their writes went on; the run's end fails
 * for them here. */
static int progress_rejected(influx_sink *s)
{
    size_t n = s->progress_rejected;
    if (n == 0)
        return 0;
    s->progress_rejected = 0;
    return s->h->error(s->h, DLG_EINVAL, "InfluxDB at %s rejected %zu progress point%s (first: %s); saved to %s",
                       s->target, n, n == 1 ? "" : "s", s->progress_why, s->rejected_path);
}

static int influx_flush(void *state, uint64_t timeout_ns)
{
    influx_sink *s = state;
    uint64_t deadline = timeout_ns ? now_ns(s) + timeout_ns : UINT64_MAX;
    uint64_t cap = now_ns(s) + INFLUX_LOCK_WAIT_MAX_NS;
    s->lock_wait_until_ns = deadline < cap ? deadline : cap; /* the last chance to spool */
    int rc = rejected_at_open(s);
    influx_keep_first(&rc, send_pending(s, deadline));
    char how[1024];
    s->hold_warning = true; /* what stays spooled is said below */
    if (s->degraded)
        influx_keep_first(&rc, try_resend(s, true, deadline));
    s->hold_warning = false;
    influx_keep_first(&rc, influx_held_lost(s));
    influx_keep_first(&rc, progress_rejected(s));
    if (s->degraded && rc == 0)
        rc = still_spooled(s);
    else if (s->degraded && influx_spool_points(s) > 0)
        s->h->log(s->h, DLG_LOG_WARN, "InfluxDB at %s %s; points stay in %s until `dlgauge flush` (or the next "
                  "run) sends them", s->target, failing(s, how, sizeof how), s->spool_path);
    if (s->fd >= 0 && fsync(s->fd) != 0 && errno != EINVAL)
        influx_keep_first(&rc, s->h->error(s->h, DLG_EIO, "%s: fsync failed: %s", s->path, strerror(errno)));
    s->lock_wait_until_ns = 0;
    return rc;
}

static void influx_close(void *state)
{
    influx_sink *s = state;
    if (!s)
        return;
    /* no resend of the spool: the flush has just tried, and what stays
     * there is sent by the next run or `dlgauge flush` */
    send_pending(s, now_ns(s) + s->timeout_ns);
    const lp_stats *ls = &s->stats;
    if (ls->dropped_fields || ls->dropped_points || ls->dropped_tags || ls->truncated || ls->trimmed)
        s->h->log(s->h, DLG_LOG_DEBUG, "dropped %zu fields (NaN/Inf, bad keys), %zu points without "
                  "fields or with a bad measurement, %zu tags; cut %zu long strings and the trailing "
                  "backslashes of %zu names", ls->dropped_fields, ls->dropped_points,
                  ls->dropped_tags, ls->truncated, ls->trimmed);
    if (s->fd >= 0) {
        fsync(s->fd);
        close(s->fd);
    }
    influx_http_close(s->http);
    influx_udp_close(s->udp);
    if (s->spool_fd >= 0)
        close(s->spool_fd);
    sbuf_free(&s->pending);
    sbuf_free(&s->held);
    free(s->path);
    free(s->spool_dir);
    free(s->spool_path);
    free(s->rejected_path);
    free(s->name);
    free(s);
}

static influx_http_conf http_conf(const dlg_value *o, uint64_t timeout_ns)
{
    return (influx_http_conf){opt_str(&o[OPT_URL]), opt_str(&o[OPT_ORG]), opt_str(&o[OPT_BUCKET]),
                              opt_str(&o[OPT_TOKEN]), opt_str(&o[OPT_USER]), opt_str(&o[OPT_PASSWORD]),
                              timeout_ns, opt_str(&o[OPT_CA_CERT]), o[OPT_TLS_VERIFY].i != 0};
}

static const char *spool_dir(const dlg_value *o)
{
    return opt_str(&o[OPT_SPOOL_DIR]) ? opt_str(&o[OPT_SPOOL_DIR]) : "results/spool";
}

static int open_http(influx_sink *s, const dlg_value *o)
{
    /* first: what it says of the spool comes before the connection's
     * words (tls_verify = false's warning) */
    int rc = sink_check_dir(s->h, "spool_dir", spool_dir(o));
    if (rc == 0)
        rc = influx_spool_paths(s, spool_dir(o));
    if (rc != 0)
        return rc;
    influx_http_conf conf = http_conf(o, s->timeout_ns);
    bool v2 = false;
    rc = influx_http_open(s->h, &conf, &v2, &s->http);
    if (rc != 0)
        return rc;
    s->v2 = v2;
    s->lp_flags = v2 ? LP_UNSIGNED : 0;
    s->target = influx_http_url(s->http);
    /* What a previous run could not send goes first; where it cannot,
     * new points are spooled after it, and begin warns of it. */
    s->hold_warning = true;
    rc = try_resend(s, true, sequence_deadline(s));
    s->hold_warning = false;
    if (rc == -DLG_EINVAL && s->rejected > 0) {
        /* saved to the rejected file: no reason to measure nothing; begin
         * warns, the flush at the end reports them */
        s->open_rejected = s->rejected;
        s->open_partial = s->rejected_partial;
        snprintf(s->open_why, sizeof s->open_why, "%s", s->last_reject);
        s->progress_rejected = 0; /* counted in open_rejected */
        rc = 0;
    }
    return rc;
}

/* A run begins: what open found in the spool is said now, before the first
 * cell.  `dlgauge flush` begins no run: its flush says it in one line. */
static int influx_begin(void *state, const dlg_schema *schema)
{
    influx_sink *s = state;
    if (s->warn_spool_later && s->degraded)
        warn_spooled(s);
    s->warn_spool_later = false;
    if (s->open_rejected > 0) {
        char what[2048];
        s->h->log(s->h, DLG_LOG_WARN, "InfluxDB at %s %s (the run goes on and exits non-zero)", s->target,
                  open_rejection(s, s->open_rejected, s->open_partial, "", what, sizeof what));
    }
    return 0;
}

static int open_transport(influx_sink *s, const dlg_value *o)
{
    if (opt_str(&o[OPT_PATH])) {
        int rc = sink_open_append(s->h, &o[OPT_PATH], O_RDWR, &s->fd, &s->path);
        if (rc < 0)
            return rc;
        s->target = s->path;
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

/* The last of path, url and udp that is set (-1: none), and which others
 * are ("" when it is the only one). */
static int last_way(const dlg_value *o, char *others, size_t len)
{
    static const int ways[] = {OPT_PATH, OPT_URL, OPT_UDP};
    int last = -1;
    others[0] = '\0';
    for (size_t i = 0; i < sizeof ways / sizeof *ways; i++) {
        if (!opt_str(&o[ways[i]]))
            continue;
        if (last >= 0)
            snprintf(others + strlen(others), len - strlen(others), "%s%s", others[0] ? " and " : "",
                     influx_options[last].name);
        last = ways[i];
    }
    return last;
}

/* A token, user or password goes into an HTTP header: a newline there (a
 * token read from a file with its line's end, into ${VAR}) would end the
 * header section early, and InfluxDB took the request as one without a
 * body (204, nothing stored).  Refused, naming the key, not the value. */
static int check_header_value(const dlg_host *h, int key, const char *v)
{
    for (size_t i = 0; v && v[i]; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c >= 0x20 && c != 0x7f)
            continue;
        const char *what = c == '\n' ? "a newline" : c == '\r' ? "a carriage return" : c == '\t' ? "a tab"
                                                                                          : "a control character";
        return h->error(h, DLG_EINVAL, "%s = (hidden): holds %s at byte %zu of %zu, which would end the HTTP "
                        "header it is sent in (the points with it); remove it (a value read from a file keeps "
                        "the file's last newline)", influx_options[key].name, what, i + 1, strlen(v));
    }
    return 0;
}

/* The checks of the options alone, shared by open and check.  A message
 * about one key starts "KEY = VALUE: " so that the core names its line. */
static int check_keys(const dlg_host *h, const dlg_value *o)
{
    char others[32];
    int way = last_way(o, others, sizeof others);
    if (way < 0)
        return h->error(h, DLG_EINVAL, "set exactly one of path (a file), url (HTTP) or udp (HOST:PORT); none is set");
    if (others[0]) {
        dlg_sbuf shown = {0}; /* a url's credentials stay out of the message */
        const char *v = way != OPT_URL                           ? o[way].text
                        : influx_url_shown(o[way].text, &shown) == 0 ? shown.p
                                                                      : "(hidden)";
        int rc = h->error(h, DLG_EINVAL, "%s = %s: set exactly one of path (a file), url (HTTP) or udp "
                          "(HOST:PORT); more than one is set (%s too)", influx_options[way].name, v, others);
        sbuf_free(&shown);
        return rc;
    }
    if (opt_str(&o[OPT_URL])) {
        static const int header_keys[] = {OPT_TOKEN, OPT_USER, OPT_PASSWORD};
        for (size_t i = 0; i < sizeof header_keys / sizeof *header_keys; i++) {
            int rc = check_header_value(h, header_keys[i], opt_str(&o[header_keys[i]]));
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    if (opt_str(&o[OPT_CA_CERT]) || o[OPT_TLS_VERIFY].i == 0)
        return h->error(h, DLG_EINVAL, "%s = %s: only used with url = https://...; %s = %s is not HTTP",
                        opt_str(&o[OPT_CA_CERT]) ? "ca_cert" : "tls_verify",
                        opt_str(&o[OPT_CA_CERT]) ? o[OPT_CA_CERT].text : "false", influx_options[way].name,
                        o[way].text);
    int v2 = opt_str(&o[OPT_ORG])      ? OPT_ORG
             : opt_str(&o[OPT_BUCKET]) ? OPT_BUCKET
             : opt_str(&o[OPT_TOKEN])  ? OPT_TOKEN
                                       : -1;
    if (v2 >= 0) /* never the token's value: it is a secret */
        return h->error(h, DLG_EINVAL, "%s = %s: org, bucket and token need url = http://HOST:8086",
                        influx_options[v2].name, v2 == OPT_TOKEN ? "(hidden)" : o[v2].text);
    return 0;
}

/* --dry-run: what open() would refuse, without files or network traffic. */
static int influx_check(const dlg_host *h, const dlg_value *o, const char *name)
{
    (void)name; /* the host's context names the sink */
    int rc = check_keys(h, o);
    if (rc != 0)
        return rc;
    if (opt_str(&o[OPT_PATH]))
        return sink_check_path(h, &o[OPT_PATH]);
    if (opt_str(&o[OPT_UDP]))
        return influx_udp_check(h, o[OPT_UDP].text);
    /* the spool is where undelivered points survive the run: one that
     * cannot be written would lose them at its end */
    rc = sink_check_dir(h, "spool_dir", spool_dir(o));
    if (rc != 0)
        return rc;
    influx_http_conf conf = http_conf(o, 0);
    return influx_http_check(h, &conf);
}

static int influx_open(const dlg_host *h, const dlg_value *o, const char *name, void **state)
{
    int rc = check_keys(h, o);
    if (rc != 0)
        return rc;
    influx_sink *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name ? name : "influx"))) {
        free(s);
        return h->error(h, DLG_ENOMEM, "out of memory");
    }
    s->h = h;
    s->fd = -1;
    s->spool_fd = -1;
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

/* Only HTTP spools (a file or UDP delivers at write, or never knows), so
 * `dlgauge flush` leaves those alone; options with none of the three are
 * opened, so that flush says what open() refuses in them. */
static bool influx_spools(const dlg_value *o)
{
    return opt_str(&o[OPT_URL]) || !(opt_str(&o[OPT_PATH]) || opt_str(&o[OPT_UDP]));
}

static const dlg_sink_ops influx_ops = {
    .version = 4,
    .open = influx_open,
    .begin = influx_begin,
    .write = influx_write,
    .flush = influx_flush,
    .close = influx_close,
    .check = influx_check,
    .spools = influx_spools,
    .write_again = influx_write_again,
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
