/* Points the spool cannot take (a full disk, a file size limit) while
 * InfluxDB does not take them either: rather than lose them, the sink
 * holds them in memory, behind the spool, and spools or sends them at the
 * next chance (the next batch, the 10 s resend, the flush).
 *
 * Only progress points count on that: a write carrying a result row or
 * the run's dlgauge_host point (journaled points: the host journals them
 * as sent when write returns 0, and --resume never sends them again) that
 * the spool does not take returns an error, so that the journal keeps the
 * row for `dlgauge run --resume`.  They are held all the same, in their
 * place among the progress points (the order of the spool is kept): should
 * the spool or InfluxDB take them later in the run, --resume sends them
 * once more, which stores nothing twice (InfluxDB keeps one point per
 * series and time). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "influx.h"

/* Most bytes held in memory: hours of progress points, yet bounded. */
#define HOLD_MAX ((size_t)64 << 20)

/* Whether line p[0..len) is a point of measurement m (which needs no
 * escaping: the sink wrote it). */
static bool is_point_of(const char *p, size_t len, const char *m)
{
    size_t n = strlen(m);
    return len > n && memcmp(p, m, n) == 0 && (p[n] == ',' || p[n] == ' ');
}

size_t influx_journaled_lines(const char *body, size_t len, bool *host)
{
    size_t n = 0;
    *host = false;
    for (const char *p = body, *e = body + len; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(e - p);
        if (l > 0 && !is_point_of(p, l, "dlgauge_progress")) {
            n++;
            *host = *host || is_point_of(p, l, "dlgauge_host");
        }
        p += nl ? l + 1 : l;
    }
    return n;
}

int influx_split_journaled(const char *body, size_t len, dlg_sbuf *progress, dlg_sbuf *journaled)
{
    for (const char *p = body, *e = body + len; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t l = nl ? (size_t)(nl - p) + 1 : (size_t)(e - p);
        if (sbuf_add(is_point_of(p, l, "dlgauge_progress") ? progress : journaled, p, l) != 0)
            return -DLG_ENOMEM;
        p += l;
    }
    return 0;
}

/* Adds body behind what is held; e: why the spool refused it.  NULL, or
 * why it could not be held (then it is not). */
static const char *hold(influx_sink *s, const char *body, size_t len, int e)
{
    if (s->held.len + len > HOLD_MAX)
        return "64 MiB of them already wait in memory";
    if (sbuf_add(&s->held, body, len) != 0)
        return "out of memory holding them";
    s->held_errno = e;
    return NULL;
}

/* body, which the spool refused (e: why), is held in memory, or lost
 * when lost_why says why not.  fresh: a write hands it over now (not the
 * held points sent again): a journaled point among it makes that write
 * fail, in one line naming the spool, the reason and the journal (the
 * same line each time, so the host says it once). */
static int not_spooled(influx_sink *s, const char *body, size_t len, int e, bool fresh, const char *lost_why)
{
    bool host = false;
    size_t journaled = influx_journaled_lines(body, len, &host);
    bool progress = journaled < influx_count_lines(body, len);
    const char *what = host && journaled == 1 ? "the run's dlgauge_host point" : "a result row";
    if (fresh && journaled > 0)
        return s->h->error(s->h, DLG_EIO, "%s: cannot spool %s that InfluxDB at %s did not take: %s%s%s; the "
                           "run's journal keeps it: `dlgauge run --resume` sends it again", s->spool_path, what,
                           s->target, influx_spool_strerror(e),
                           lost_why && progress ? "; the progress points with it are lost: " : "",
                           lost_why && progress ? lost_why : "");
    if (lost_why)
        return s->h->error(s->h, DLG_EIO, "%s: cannot spool points that InfluxDB at %s did not take: %s; %s, so "
                           "those points are lost", s->spool_path, s->target, influx_spool_strerror(e), lost_why);
    if (!s->held_warned && progress) {
        s->held_warned = true; /* until the spool takes points again */
        s->h->log(s->h, DLG_LOG_WARN, "%s: cannot spool points that InfluxDB at %s did not take: %s; progress "
                  "points wait in memory (lost if the process dies) and are spooled or sent later", s->spool_path,
                  s->target, influx_spool_strerror(e));
    }
    return 0;
}

int influx_spool_or_hold(influx_sink *s, const char *body, size_t len, bool fresh)
{
    int e;
    const char *lost_why;
    if (s->held.len == 0) {
        e = influx_spool_write(s, body, len);
        if (e == 0)
            return 0;
        lost_why = hold(s, body, len, e);
    } else {
        /* behind what is held, to keep the order: both go to the spool, or both wait */
        e = s->held_errno;
        lost_why = hold(s, body, len, e);
        if (!lost_why && (e = influx_spool_write(s, s->held.p, s->held.len)) == 0) {
            s->h->log(s->h, DLG_LOG_INFO, "%s: the spool takes points again; those held in memory are spooled",
                      s->spool_path);
            sbuf_truncate(&s->held, 0);
            s->held_errno = 0;
            s->held_warned = false;
            return 0;
        }
        if (!lost_why)
            s->held_errno = e;
    }
    return not_spooled(s, body, len, e, fresh, lost_why);
}

int influx_held_send(influx_sink *s, bool retry, uint64_t deadline_ns, bool *kept, size_t *sent)
{
    *kept = false;
    if (s->held.len == 0)
        return 0;
    dlg_sbuf body = s->held; /* what is not taken now is held again */
    s->held = (dlg_sbuf){0};
    influx_left left = {0};
    int rc = influx_deliver(s, body.p, body.len, retry, deadline_ns, &left);
    *sent += left.done - left.keep.len;
    if (left.why != INFLUX_SENT) {
        *kept = true;
        influx_keep_first(&rc, influx_spool_left(s, &left, body.p, body.len, false));
    }
    if (s->held.len == 0) {
        s->held_errno = 0;
        s->held_warned = false;
    }
    sbuf_free(&left.keep);
    sbuf_free(&body);
    return rc;
}

/* "the 2 result rows", "the run's dlgauge_host point", "the result row and
 * the run's dlgauge_host point": the n journaled points held, host among
 * them or not. */
static const char *journaled_words(size_t n, bool host, char *buf, size_t len)
{
    size_t rows = host ? n - 1 : n;
    int k = 0;
    if (rows == 1)
        k = snprintf(buf, len, "the result row");
    else if (rows > 1)
        k = snprintf(buf, len, "the %zu result rows", rows);
    if (host)
        snprintf(buf + k, len - (size_t)k, "%sthe run's dlgauge_host point", rows ? " and " : "");
    return buf;
}

int influx_held_lost(influx_sink *s)
{
    if (s->held.len == 0)
        return 0;
    bool host;
    size_t n = influx_count_lines(s->held.p, s->held.len), j = influx_journaled_lines(s->held.p, s->held.len, &host);
    const char *spool = s->spool_path, *why = influx_spool_strerror(s->held_errno);
    char what[128], kept[256] = "";
    /* their writes failed, so the journal keeps them: not lost */
    if (j > 0)
        snprintf(kept, sizeof kept, "%s held in memory stay%s in the run's journal: `dlgauge run --resume` sends %s",
                 journaled_words(j, host, what, sizeof what), j == 1 ? "s" : "", j == 1 ? "it" : "them");
    if (n == j) /* nothing lost, not everything delivered */
        return s->h->error(s->h, DLG_EAGAIN, "%s: cannot spool points that InfluxDB at %s did not take: %s; %s",
                           spool, s->target, why, kept);
    size_t p = n - j;
    return s->h->error(s->h, DLG_EIO, "%s: cannot spool points that InfluxDB at %s did not take: %s; %zu progress "
                       "point%s held in memory %s lost when the run ends%s%s", spool, s->target, why, p,
                       p == 1 ? "" : "s", p == 1 ? "is" : "are", j > 0 ? "; " : "", kept);
}
