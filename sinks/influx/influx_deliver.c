/* Delivery of line protocol to InfluxDB over HTTP: one batch with retries
 * and backoff, in smaller parts after a 413; lines InfluxDB refuses are
 * saved and reported, and what it could not take now (unreachable, or
 * denying the credentials or database) is handed back for the spool. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "influx.h"

static uint64_t now_ns(const influx_sink *s) { return s->h->now_ns(s->h); }

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

size_t influx_count_lines(const char *p, size_t len)
{
    size_t n = 0;
    for (const char *e = p + len; (p = memchr(p, '\n', (size_t)(e - p))); p++)
        n++;
    return n;
}

/* The wait before the next try: the backoff, or longer if InfluxDB asked
 * for it with Retry-After (429, 503). */
static uint64_t next_wait(const influx_sink *s, uint64_t backoff)
{
    uint64_t ra = influx_http_retry_after_ns(s->http);
    if (ra > INFLUX_RETRY_AFTER_MAX_NS)
        ra = INFLUX_RETRY_AFTER_MAX_NS;
    return ra > backoff ? ra : backoff;
}

/* What to fix after a 404 of InfluxDB's router ("404 page not found"):
 * the url's path, or the API version; not a database or bucket. */
static const char *no_page_hint(influx_sink *s)
{
    const char *v = influx_http_version(s->http);
    if (s->v2 && v[0] == '1')
        snprintf(s->denied_text, sizeof s->denied_text, "check url: the server is InfluxDB %s "
                 "(X-Influxdb-Version), which has no 2.x write API there; for 1.x write "
                 "url = http://HOST:8086/write?db=NAME and drop org, bucket and token", v);
    else
        snprintf(s->denied_text, sizeof s->denied_text, "check url: %s%s%sno write API at its path (page not found), "
                 "not a missing %s; 1.x writes at http://HOST:8086/write?db=NAME, 2.x at the server root with "
                 "org, bucket and token", v[0] ? "the server (InfluxDB " : "", v, v[0] ? ") has " : "",
                 s->v2 ? "org or bucket" : "database");
    return s->denied_text;
}

/* What to fix after a 401, 403 or 404 (InfluxDB's own text says which
 * name it did not find or which user it refused). */
static const char *denied_hint(influx_sink *s, long status)
{
    if (status >= 300 && status < 400)
        return "check url: it is redirected, and dlgauge sends only to the URL configured (write the one "
               "it is redirected to, e.g. https://)";
    if (status == 404 && (strstr(influx_http_error(s->http), "page not found") ||
                          strstr(influx_http_error(s->http), "path not found"))) /* 1.x, 2.x */
        return no_page_hint(s);
    if (s->v2)
        return status == 404 ? "check org and bucket: both must exist"
                             : "check token: it must be valid and allowed to write to the bucket";
    if (status == 404)
        return "check db= in url: the database must exist (CREATE DATABASE)";
    return status == 403 ? "check user: it needs WRITE on the database" : "check user and password";
}

/* Why the points were not delivered, for the warning and the final error. */
static void note_unsent(influx_sink *s, influx_send r, const char *why)
{
    const char *tls = r == INFLUX_DENIED ? influx_http_tls_hint(s->http) : NULL;
    s->untrusted = tls != NULL;
    s->denied = tls ? tls : r == INFLUX_DENIED ? denied_hint(s, influx_http_status(s->http)) : NULL;
    s->spool_busy = false;
    snprintf(s->last_why, sizeof s->last_why, "%s", why);
}

/* One request, retried with backoff while InfluxDB is unreachable.  A
 * denial is not retried: the same credentials get the same answer. */
static influx_send post_retrying(influx_sink *s, const char *body, size_t len, bool retry, uint64_t deadline_ns,
                                 char *why, size_t whylen)
{
    int tries = retry ? s->retries + 1 : 1;
    for (int t = 1;; t++) {
        /* a slow InfluxDB may not take a whole request timeout past the
         * flush's deadline: each request gets at most the time left */
        uint64_t now = now_ns(s);
        if (now >= deadline_ns) {
            snprintf(why, whylen, "no time left before the flush's deadline");
            note_unsent(s, INFLUX_RETRY, why);
            return INFLUX_RETRY;
        }
        uint64_t left = deadline_ns - now;
        influx_send r = influx_http_post(s->http, body, len, left < s->timeout_ns ? left : s->timeout_ns, why,
                                         whylen);
        if (r == INFLUX_DENIED)
            note_unsent(s, r, why);
        if (r != INFLUX_RETRY)
            return r;
        s->h->log(s->h, DLG_LOG_DEBUG, "InfluxDB at %s: try %d of %d failed: %s", s->target, t, tries, why);
        if (t >= tries || !backoff_sleep(s, next_wait(s, influx_retry_wait_ns(s->backoff_ns, t - 1)), deadline_ns)) {
            note_unsent(s, r, why);
            return INFLUX_RETRY;
        }
    }
}

/* Whether two error texts are one error: alike but for InfluxDB's count
 * of the points it dropped ("dropped=N"), which differs by request. */
static bool same_error(const char *a, const char *b)
{
    static const char drop[] = "dropped=";
    for (;; a++, b++) {
        if (strncmp(a, drop, sizeof drop - 1) == 0 && strncmp(b, drop, sizeof drop - 1) == 0) {
            a += sizeof drop - 1 + strspn(a + sizeof drop - 1, "0123456789");
            b += sizeof drop - 1 + strspn(b + sizeof drop - 1, "0123456789");
        }
        if (*a != *b)
            return false;
        if (!*a)
            return true;
    }
}

static const char *points(size_t n) { return n == 1 ? "point" : "points"; }

/* What reject() says of n refused points. */
static void rejection_text(influx_sink *s, size_t n, const char *why, bool partial, char *buf, size_t len)
{
    if (same_error(why, s->last_reject)) {
        snprintf(buf, len, "InfluxDB at %s rejected %s%zu more %s (same error); saved to %s", s->target,
                 partial ? "some of " : "", n, points(n), s->rejected_path);
        return;
    }
    snprintf(s->last_reject, sizeof s->last_reject, "%s", why);
    if (partial)
        snprintf(buf, len, "InfluxDB at %s stored only part of %zu points: %s; all %zu were saved to %s (sending "
                 "them again is harmless: a point is stored once per series and time)", s->target, n, why, n,
                 s->rejected_path);
    else
        snprintf(buf, len, "InfluxDB at %s rejected %zu %s: %s; %s saved to %s", s->target, n, points(n), why,
                 n == 1 ? "it was" : "they were", s->rejected_path);
}

/* Saves refused lines and reports them once per distinct error.  partial:
 * InfluxDB stored some of these lines, which ones it does not say.  Only
 * a result row or the dlgauge_host point among them fails the write (the
 * journal keeps it for --resume); refused progress points are warned of
 * and counted, and the flush fails for them: a row InfluxDB stored beside
 * them was said not to have reached it. */
static int reject(influx_sink *s, const char *body, size_t len, const char *why, bool partial)
{
    int rc = influx_spool_reject(s, body, len);
    if (rc != 0)
        return rc;
    size_t n = influx_count_lines(body, len);
    s->rejected += n;
    s->rejected_partial += partial ? n : 0;
    char text[2048];
    rejection_text(s, n, why, partial, text, sizeof text);
    bool host;
    if (influx_journaled_lines(body, len, &host) > 0)
        return s->h->error(s->h, DLG_EINVAL, "%s", text);
    if (s->progress_rejected == 0)
        snprintf(s->progress_why, sizeof s->progress_why, "%s", why);
    s->progress_rejected += n;
    s->h->log(s->h, DLG_LOG_WARN, "%s (progress points: the run goes on and exits non-zero)", text);
    return 0;
}

/* Whether InfluxDB says it stored the other points ("partial write", 1.x;
 * "...: partial write: ..." in 2.x): said ahead of the lines it quotes,
 * whose own text may hold those words. */
static bool says_partial(const char *err)
{
    const char *p = strstr(err, "partial write"), *quote = strstr(err, "unable to parse '");
    return p && (!quote || p < quote);
}

/* InfluxDB's error text quotes each line it could not parse: "unable to
 * parse '<line>': <reason>" (1.x and 2.x).  A quote is read as the sent
 * line it holds -- the longest of sent[0..len)'s lines that the text holds
 * whole and closes with "': " -- and passed over by it, so that a line's
 * own "': " or "unable to parse '" is never taken for InfluxDB's words (a
 * line "dr': ... dropped=4" whose NUL cut the text after its "4" read as
 * InfluxDB's count, and the stored points were sent again). */
enum { QUOTE_NONE, QUOTE_LINE, QUOTE_CUT };

typedef struct line_span {
    const char *p;
    size_t n;
} line_span;

/* The quote at or after *from: QUOTE_LINE (its line in *l, *from past
 * it), QUOTE_NONE (no more quotes) or QUOTE_CUT (it holds no sent line:
 * a NUL in the line ended the text inside it; a line with a NUL is never
 * held whole). */
static int next_quote(const char **from, const char *sent, size_t len, line_span *l)
{
    static const char lead[] = "unable to parse '";
    const char *q = strstr(*from, lead);
    if (!q)
        return QUOTE_NONE;
    q += sizeof lead - 1;
    *l = (line_span){NULL, 0};
    for (const char *p = sent, *e = sent + len; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t k = nl ? (size_t)(nl - p) : (size_t)(e - p);
        /* strncmp first: it stops at the first difference, where strnlen
         * would walk k bytes of q for every line */
        if ((!l->p || k > l->n) && strncmp(q, p, k) == 0 && strnlen(q, k) == k && strncmp(q + k, "': ", 3) == 0)
            *l = (line_span){p, k};
        p += k + (nl != NULL);
    }
    if (!l->p)
        return QUOTE_CUT;
    *from = q + l->n + 3;
    return QUOTE_LINE;
}

/* Where the text after InfluxDB's last quote starts, or NULL where a
 * quote was cut (then it cannot be told). */
static const char *after_quotes(const char *err, const char *sent, size_t len)
{
    const char *from = err;
    line_span l;
    int r;
    while ((r = next_quote(&from, sent, len, &l)) == QUOTE_LINE)
        ;
    return r == QUOTE_NONE ? from : NULL;
}

/* Whether InfluxDB says it dropped all n points of sent[0..len) ("dropped=N"
 * ends its partial-write text): then it stored none, "partial write" or
 * not.  Only a count that ends the text, after the last quoted line, is
 * InfluxDB's: a quoted line may hold the words (taking such a line's
 * "dropped=2i" for the count sent the stored points again). */
static bool dropped_all(const char *err, const char *sent, size_t len, size_t n)
{
    const char *from = after_quotes(err, sent, len), *last = NULL;
    if (!from)
        return false;
    for (const char *p = from; (p = strstr(p, "dropped=")); p++)
        last = p;
    const char *digits = last ? last + 8 : NULL;
    if (!digits || *digits < '0' || *digits > '9')
        return false;
    char *end;
    unsigned long long count = strtoull(digits, &end, 10);
    return end[strspn(end, " \t\r\n")] == '\0' && count >= n;
}

/* A partial write of sent[0..len) that stored some of its n points. */
static bool stored_some(const char *err, const char *sent, size_t len, size_t n)
{
    return says_partial(err) && !dropped_all(err, sent, len, n);
}

/* Sorts the lines of part into those InfluxDB quoted as unparseable
 * (every copy of a quoted line) and the others.  Returns -DLG_ENOMEM or 0. */
static int split_named(const char *err, const char *part, size_t n, dlg_sbuf *bad, dlg_sbuf *good)
{
    line_span *quoted = NULL, l;
    size_t nq = 0, cap = 0;
    int rc = 0;
    for (const char *from = err; !rc && next_quote(&from, part, n, &l) == QUOTE_LINE;) {
        line_span *q = nq < cap ? quoted : realloc(quoted, (cap = cap ? 2 * cap : 16) * sizeof *q);
        if (!q)
            rc = -DLG_ENOMEM;
        else
            (quoted = q)[nq++] = l;
    }
    for (const char *p = part, *e = part + n; !rc && p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);
        bool named = false;
        for (size_t i = 0; i < nq && !named; i++)
            named = quoted[i].n == len && memcmp(quoted[i].p, p, len) == 0;
        if (sbuf_add(named ? bad : good, p, nl ? len + 1 : len) != 0)
            rc = -DLG_ENOMEM;
        p += nl ? len + 1 : len;
    }
    free(quoted);
    return rc;
}

/* How many times one refused request's remaining lines are sent again,
 * each time without the lines the last answer refused: then the rest is
 * rejected whole (a stack frame each). */
#define RESEND_DEPTH_MAX 32

static int reject_part(influx_sink *s, const char *part, size_t n, const char *why, bool retry,
                       uint64_t deadline_ns, influx_left *left, int depth);

/* The lines of a refused request that InfluxDB did not name as bad, sent
 * once more.  Where InfluxDB is unreachable or denying now they are good
 * all the same: they go back to the caller for the spool, not to the
 * rejected file.  Refused again, the answer is read as the first one was
 * (reject_part): it may name more lines and say that it stored the others,
 * which rejecting them all would have saved as rejected too. */
static int resend_good(influx_sink *s, const dlg_sbuf *good, bool retry, uint64_t deadline_ns, influx_left *left,
                       int depth)
{
    char why[512];
    influx_send r = post_retrying(s, good->p, good->len, retry, deadline_ns, why, sizeof why);
    if (r == INFLUX_SENT)
        return 0;
    if (r == INFLUX_REJECTED && depth < RESEND_DEPTH_MAX)
        return reject_part(s, good->p, good->len, why, retry, deadline_ns, left, depth + 1);
    if (r != INFLUX_RETRY && r != INFLUX_DENIED)
        return reject(s, good->p, good->len, why, false);
    left->why = r;
    if (sbuf_add(&left->keep, good->p, good->len) != 0)
        return s->h->error(s->h, DLG_ENOMEM, "out of memory");
    return 0;
}

/* A rejection that names no line, of progress points and journaled
 * ones (a result row) together: the progress points are rejected, the
 * others sent once more alone, so that their own answer says whether
 * InfluxDB has them (a type conflict in a progress point failed the row
 * InfluxDB stored beside it).  Sending a stored point again is harmless.
 * *done: whether the part was both. */
static int reject_unnamed(influx_sink *s, const char *part, size_t n, const char *why, bool retry,
                          uint64_t deadline_ns, influx_left *left, int depth, bool *done)
{
    const char *err = influx_http_error(s->http);
    dlg_sbuf progress = {0}, journaled = {0};
    int rc = influx_split_journaled(part, n, &progress, &journaled);
    *done = rc != 0 || (progress.len > 0 && journaled.len > 0);
    if (rc != 0)
        rc = s->h->error(s->h, DLG_ENOMEM, "out of memory");
    else if (*done) {
        rc = reject(s, progress.p, progress.len, why,
                    stored_some(err, part, n, influx_count_lines(progress.p, progress.len)));
        influx_keep_first(&rc, resend_good(s, &journaled, retry, deadline_ns, left, depth));
    }
    sbuf_free(&progress);
    sbuf_free(&journaled);
    return rc;
}

/* A rejection that names unparseable lines costs only those lines: the
 * others were stored (1.x "partial write") or, where InfluxDB refused the
 * whole request (2.x), are sent once more without them.  depth: how many
 * times these lines have been sent again (resend_good). */
static int reject_part(influx_sink *s, const char *part, size_t n, const char *why, bool retry,
                       uint64_t deadline_ns, influx_left *left, int depth)
{
    const char *err = influx_http_error(s->http);
    dlg_sbuf bad = {0}, good = {0};
    int rc = split_named(err, part, n, &bad, &good);
    if (rc != 0 || bad.len == 0 || good.len == 0) {
        bool named = bad.len > 0, done = false;
        sbuf_free(&bad);
        sbuf_free(&good);
        if (rc != 0)
            return s->h->error(s->h, DLG_ENOMEM, "out of memory");
        if (named)
            return reject(s, part, n, why, false);
        rc = reject_unnamed(s, part, n, why, retry, deadline_ns, left, depth, &done);
        /* one kind of line alone: a type conflict may have stored some */
        return done ? rc : reject(s, part, n, why, stored_some(err, part, n, influx_count_lines(part, n)));
    }
    bool stored = stored_some(err, part, n, influx_count_lines(part, n));
    rc = reject(s, bad.p, bad.len, why, false);
    if (!stored)
        influx_keep_first(&rc, resend_good(s, &good, retry, deadline_ns, left, depth));
    sbuf_free(&bad);
    sbuf_free(&good);
    return rc;
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

int influx_deliver(influx_sink *s, const char *body, size_t len, bool retry, uint64_t deadline_ns,
                   influx_left *left)
{
    char why[512];
    int rc = 0;
    size_t off = 0;
    left->why = INFLUX_SENT;
    while (off < len && left->why == INFLUX_SENT) {
        size_t end = cut_lines(body, off, len, s->max_body ? s->max_body : len);
        influx_send r = post_retrying(s, body + off, end - off, retry, deadline_ns, why, sizeof why);
        if (r == INFLUX_TOO_LARGE && shrink_parts(s, body + off, end - off))
            continue;
        if (r == INFLUX_RETRY || r == INFLUX_DENIED) {
            left->why = r;
            break;
        }
        if (r == INFLUX_REJECTED)
            influx_keep_first(&rc, reject_part(s, body + off, end - off, why, retry, deadline_ns, left, 0));
        else if (r != INFLUX_SENT)
            influx_keep_first(&rc, reject(s, body + off, end - off, why, false));
        off = end;
    }
    left->done = off;
    return rc;
}
