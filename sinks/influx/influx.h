/* Internal interfaces of the InfluxDB sink: the sink state and its three
 * transports (file, HTTP, UDP) and the spool. */
#ifndef DLG_INFLUX_H
#define DLG_INFLUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlgauge/plugin.h>

#include "lineproto.h"
#include "sbuf.h"

/* Outcome of one HTTP request. */
typedef enum influx_send {
    INFLUX_SENT = 0,    /* 2xx: InfluxDB has the points */
    INFLUX_RETRY = 1,   /* connection error, timeout, 5xx, 429: try again later */
    INFLUX_REJECTED = 2, /* other 4xx: InfluxDB refuses these lines; never retried */
    INFLUX_TOO_LARGE = 3, /* 413: the body exceeds the server's limit; send it in smaller parts */
    INFLUX_DENIED = 4    /* 401/403/404: a wrong token, user, org, bucket or database (3xx: a
                          * redirected url; no answer: a certificate not trusted), not bad data: the
                          * points wait in the spool until the configuration is fixed */
} influx_send;

/* Retries wait backoff, then twice that, and so on, each wait at most a
 * minute: uncapped, retries = 20 from 500 ms would wait out 6 days. */
#define INFLUX_BACKOFF_MAX_NS (60ull * 1000000000ull)

/* Longest wait a Retry-After may impose: on one retry, and on the resend
 * of the spool while degraded. */
#define INFLUX_RETRY_AFTER_MAX_NS (300ull * 1000000000ull)

/* *rc keeps the first error (a negative r) of several steps. */
static inline void influx_keep_first(int *rc, int r)
{
    if (*rc == 0 && r < 0)
        *rc = r;
}

/* The wait before retry k (0 = the first) from the first wait `backoff`. */
static inline uint64_t influx_retry_wait_ns(uint64_t backoff, int k)
{
    if (backoff >= INFLUX_BACKOFF_MAX_NS)
        return backoff;
    for (; k > 0 && backoff < INFLUX_BACKOFF_MAX_NS; k--)
        backoff *= 2;
    return backoff < INFLUX_BACKOFF_MAX_NS ? backoff : INFLUX_BACKOFF_MAX_NS;
}

/* The sum of the waits of `retries` retries. */
static inline uint64_t influx_retry_waits_ns(uint64_t backoff, int retries)
{
    uint64_t sum = 0;
    for (int k = 0; k < retries; k++)
        sum += influx_retry_wait_ns(backoff, k);
    return sum;
}

/* Longest wait for another process's replay of the same spool to end
 * (its lock; influx_spool.c), at open and at the final flush. */
#define INFLUX_LOCK_WAIT_MAX_NS (60ull * 1000000000ull)

typedef struct influx_http influx_http;
typedef struct influx_udp influx_udp;

typedef struct influx_sink {
    const dlg_host *h;
    char *name;
    bool progress;
    unsigned lp_flags;
    size_t batch;
    uint64_t flush_interval_ns, timeout_ns, backoff_ns;
    int retries;
    size_t max_body; /* largest body InfluxDB took after a 413 (0: no limit seen) */

    /* exactly one transport */
    char *path;
    int fd;
    size_t file_points; /* written to path by this run (for the warning when it is deleted) */
    influx_http *http;
    influx_udp *udp;
    const char *target; /* for messages: path, URL or host:port (owned by the transport) */

    dlg_sbuf pending; /* formatted lines not yet delivered */
    size_t npending;
    bool pending_result; /* a result among them: a file syncs it (fdatasync) */
    uint64_t pending_since_ns;

    /* HTTP failure handling */
    char *spool_dir, *spool_path, *rejected_path;
    int spool_fd; /* the spool as this sink last appended to or replayed it, kept open: one deleted during
                   * the run is made again from it (influx_spool.c); -1: none yet */
    bool v2;       /* the 2.x write API (org, bucket, token) */
    bool degraded; /* InfluxDB unreachable or denying: new batches go to the spool */
    const char *denied; /* the last failed request was denied (INFLUX_DENIED): what to fix; NULL when
                         * InfluxDB was unreachable */
    char denied_text[512]; /* what s->denied points to where it is not a fixed text */
    bool untrusted;     /* denied because InfluxDB's certificate is not trusted (TLS) */
    uint64_t next_resend_ns;
    bool warned_spool, warned_denied; /* a warning was given, and whether for a denial */
    /* in open or flush, whose failures a line of their own says later (a
     * run's begin, flush's error): the warning that points stay spooled
     * waits, in warn_spool_later */
    bool hold_warning, warn_spool_later;
    char last_reject[512];
    size_t progress_rejected; /* progress points rejected since the last flush said so (their writes did not
                               * fail: no row of theirs is journaled) */
    char progress_why[512];   /* InfluxDB's words for the first of them */
    char last_why[512]; /* why InfluxDB was last unreachable or denying */
    bool spool_busy;    /* the last replay found the spool locked by another process */
    uint64_t lock_wait_until_ns; /* how long a spool append waits for its lock (0: not at all) */
    size_t rejected;      /* points InfluxDB rejected so far (saved to rejected_path) */
    size_t rejected_partial; /* of them, in requests InfluxDB stored in part, not saying which */
    size_t open_rejected; /* of them, while open replayed the spool: the flush reports them */
    size_t open_partial;  /* of those, stored in part */
    char open_why[512];   /* InfluxDB's words then */
    dlg_sbuf held; /* lines the spool could not take (a full disk): they wait here, behind the spool */
    int held_errno; /* why the spool could not take them */
    bool held_warned; /* the warning that progress points wait in memory was given (since the spool last took
                       * points) */

    lp_stats stats;
    size_t logged_drops;
} influx_sink;

/* ---- HTTP (influx_http.c) ---- */
typedef struct influx_http_conf {
    const char *url, *org, *bucket, *token, *user, *password;
    uint64_t timeout_ns;
    const char *ca_cert; /* PEM file of the CA to trust (NULL: the system's) */
    bool tls_verify;     /* false: no check of InfluxDB's certificate */
} influx_http_conf;

/* Validates the URL and prepares one reusable curl handle.  On a bad
 * configuration returns -DLG_EINVAL after h->error(). */
int influx_http_open(const dlg_host *h, const influx_http_conf *conf, bool *v2, influx_http **out);
/* What influx_http_open would refuse, without a handle or any traffic. */
int influx_http_check(const dlg_host *h, const influx_http_conf *conf);
/* The full write URL for messages, credentials hidden (influx_url_shown). */
const char *influx_http_url(const influx_http *c);
/* POSTs body, waiting at most timeout_ns (connecting included; at least
 * 1 ms); on anything but INFLUX_SENT, why gets a one-line reason:
 * InfluxDB's own error text for INFLUX_REJECTED. */
influx_send influx_http_post(influx_http *c, const char *body, size_t len, uint64_t timeout_ns, char *why,
                             size_t whylen);
/* What to fix when the last request failed because InfluxDB's
 * certificate was not trusted (it is INFLUX_DENIED then); else NULL. */
const char *influx_http_tls_hint(const influx_http *c);
/* The last answer's HTTP status (0: none, a connection error). */
long influx_http_status(const influx_http *c);
/* The last answer's Retry-After (429, 503) in ns; 0 when it had none. */
uint64_t influx_http_retry_after_ns(const influx_http *c);
/* The last answer's X-Influxdb-Version ("" if none). */
const char *influx_http_version(const influx_http *c);
/* The last rejection's error text from InfluxDB, whole ("" if none). */
const char *influx_http_error(const influx_http *c);
void influx_http_close(influx_http *c);

/* ---- TLS options (influx_tls.c) ---- */
/* What ca_cert and tls_verify refuse with conf->url, whose scheme is
 * http or https (an http:// one; a CA file that is no readable PEM file). */
int influx_tls_check(const dlg_host *h, const influx_http_conf *conf);
/* Sets them on curl handle e; warns that tls_verify = false checks nothing. */
void influx_tls_setup(const dlg_host *h, void *e, const influx_http_conf *conf, const char *shown_url);
/* What to fix after the CURLcode of a failed request, where InfluxDB's
 * certificate is to blame (ca_cert: whether one is set); else NULL. */
const char *influx_tls_hint(int curl_code, bool ca_cert);

/* ---- the URL in messages (influx_url.c) ---- */
/* url into out as messages show it: a password in its user info and the
 * values of the p=, password= and token= parameters become "***".  0 or
 * -DLG_ENOMEM. */
int influx_url_shown(const char *url, dlg_sbuf *out);
/* Whether url's port, where it names one, is a number from 1 to 65535
 * (the host is found as influx_url_shown finds it by hand: after the user
 * info, up to the last '@'). */
bool influx_url_port_ok(const char *url);
/* Whether port[0..len) is a decimal port from 1 to 65535, the url's and
 * the udp key's rule: getaddrinfo would take 80899 as 15363 (modulo
 * 65536), and 0 reaches nothing. */
bool influx_port_ok(const char *port, size_t len);

/* ---- UDP (influx_udp.c) ---- */
int influx_udp_open(const dlg_host *h, const char *hostport, size_t payload, influx_udp **out);
/* What influx_udp_open would refuse in hostport's syntax (no name lookup). */
int influx_udp_check(const dlg_host *h, const char *hostport);
/* host:port as configured (for messages). */
const char *influx_udp_target(const influx_udp *u);
/* Sends whole lines in datagrams of at most `payload` bytes.  UDP gives no
 * delivery guarantee: errors are logged once, never returned. */
void influx_udp_send(influx_udp *u, const char *body, size_t len);
void influx_udp_close(influx_udp *u);

/* ---- spool file names (influx_spool_name.c) ---- */
/* Sets s->spool_dir (dir made absolute), s->spool_path and
 * s->rejected_path, points out a spool an older dlgauge left under the
 * sink's former file name, and says (info) where it looked when there is
 * nothing spooled.  0 or -DLG_ENOMEM after h->error(). */
int influx_spool_paths(influx_sink *s, const char *dir);

/* ---- spool (influx_spool.c) ---- */
/* Appends whole lines to <spool_dir>/<name>.lp (fsynced; a failed append
 * is undone), under the spool's lock, waited for until
 * s->lock_wait_until_ns.  0 or an errno value (EWOULDBLOCK: another
 * process is replaying the spool). */
int influx_spool_write(influx_sink *s, const char *body, size_t len);
/* strerror, with EWOULDBLOCK saying that the spool is locked. */
const char *influx_spool_strerror(int e);
/* Spools lines; where the spool cannot take them (a full disk) they are
 * held in memory behind it (s->held), up to a limit, until the spool or
 * InfluxDB takes them.  Fails when points are lost, and when `fresh` (a
 * write hands body over now) and body holds a result row or the
 * dlgauge_host point, held or not: the write that carries it must fail,
 * so that the journal keeps it for --resume (influx_hold.c). */
int influx_spool_or_hold(influx_sink *s, const char *body, size_t len, bool fresh);
/* How many lines of body are not dlgauge_progress points (result rows,
 * the dlgauge_host point: points the host journals); *host: whether the
 * dlgauge_host point is one of them. */
size_t influx_journaled_lines(const char *body, size_t len, bool *host);
/* Sorts the lines of body into the dlgauge_progress points and the
 * others (as influx_journaled_lines counts them).  0 or -DLG_ENOMEM. */
int influx_split_journaled(const char *body, size_t len, dlg_sbuf *progress, dlg_sbuf *journaled);
/* Sends what is held in memory (after the spool): what InfluxDB does not
 * take now is spooled or held again.  *kept: as for influx_spool_replay;
 * *sent grows by the bytes delivered. */
int influx_held_send(influx_sink *s, bool retry, uint64_t deadline_ns, bool *kept, size_t *sent);
/* At the end of the run, with points still held: an error saying how
 * many progress points are lost with the process and that the journaled
 * ones held (whose writes failed) stay in the journal; -DLG_EAGAIN when
 * only such ones are held (nothing is lost).  0 when none are held. */
int influx_held_lost(influx_sink *s);
/* Appends lines InfluxDB refused to <spool_dir>/<name>.rejected.lp. */
int influx_spool_reject(influx_sink *s, const char *body, size_t len);
/* Sends the spool in batches.  Accepted batches are cut from the spool as
 * they go (the unsent tail is rewritten), so nothing is sent twice.
 * retry: use retries/backoff per batch (else one try).  *kept: InfluxDB is
 * unreachable or denying (s->denied), or another process is replaying the
 * spool (s->spool_busy; waited for until deadline_ns, a minute at most,
 * when retry), so points stay spooled.  *sent grows
 * by the bytes InfluxDB answered for (taken or rejected).  Returns 0, or
 * -code (lines were rejected, or the spool could not be rewritten). */
int influx_spool_replay(influx_sink *s, bool retry, uint64_t deadline_ns, bool *kept, size_t *sent);
/* Warns when `legacy`, the spool an older dlgauge named the sink's, is
 * not the sink's spool and holds points: they are not sent (that file may
 * be another sink's), so the user is told how to send them.  Not when its
 * lock names a sink: each spool lock holds its sink's name, so that is
 * the live spool of another sink ("a_b" for "a b"), not an old one. */
void influx_spool_legacy_note(const influx_sink *s, const char *legacy);
/* How many points (lines) the spool holds now, not counting a sent prefix. */
size_t influx_spool_points(const influx_sink *s);

/* ---- delivery (influx_deliver.c) ---- */
/* What a delivery left to send: body[done..] and, ahead of it, keep. */
typedef struct influx_left {
    size_t done;      /* leading bytes of body dealt with: sent, rejected or copied to keep */
    dlg_sbuf keep;    /* lines of body[0..done) still to send (caller frees) */
    influx_send why;  /* INFLUX_SENT: nothing left; else INFLUX_RETRY or INFLUX_DENIED */
} influx_left;

/* One batch to InfluxDB with retries and backoff until deadline_ns; on a
 * 413 it goes in smaller parts (whole lines).  Rejected lines are saved and
 * reported here: returns their -code (else 0).  What InfluxDB did not take
 * for want of a connection or of the right credentials is in *left, for
 * the spool. */
int influx_deliver(influx_sink *s, const char *body, size_t len, bool retry, uint64_t deadline_ns,
                   influx_left *left);
/* How many lines ('\n' ended) body holds. */
size_t influx_count_lines(const char *body, size_t len);
/* Spools (or holds) what a delivery left (keep, then body[done..len));
 * fresh as for influx_spool_or_hold. */
int influx_spool_left(influx_sink *s, influx_left *left, const char *body, size_t len, bool fresh);

#endif
