/* Points the spool cannot take (a full disk, a file size limit) while
 * InfluxDB does not take them either: rather than lose them, the sink
 * holds them in memory, behind the spool, and spools or sends them at the
 * next chance (the next batch, the 10 s resend, the flush). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "influx.h"

/* Most bytes held in memory: hours of progress points, yet bounded. */
#define HOLD_MAX ((size_t)64 << 20)

static int lost(influx_sink *s, int e, const char *what)
{
    return s->h->error(s->h, DLG_EIO, "%s: cannot spool points that InfluxDB at %s did not take: %s; %s, so "
                       "those points are lost", s->spool_path, s->target, influx_spool_strerror(e), what);
}

/* Adds body behind what is held; e: why the spool refused it. */
static int hold(influx_sink *s, const char *body, size_t len, int e)
{
    if (s->held.len + len > HOLD_MAX)
        return lost(s, e, "64 MiB of them already wait in memory");
    if (sbuf_add(&s->held, body, len) != 0)
        return lost(s, e, "out of memory holding them");
    bool first = s->held_errno == 0; /* since the spool last took points */
    s->held_errno = e;
    if (first)
        s->h->log(s->h, DLG_LOG_WARN, "%s: cannot spool points that InfluxDB at %s did not take: %s; they wait "
                  "in memory (lost if the process dies) and are spooled or sent later", s->spool_path,
                  s->target, influx_spool_strerror(e));
    return 0;
}

int influx_spool_or_hold(influx_sink *s, const char *body, size_t len)
{
    if (s->held.len == 0) {
        int e = influx_spool_write(s, body, len);
        return e ? hold(s, body, len, e) : 0;
    }
    /* behind what is held, to keep the order: both go to the spool, or both wait */
    int rc = hold(s, body, len, s->held_errno);
    if (rc != 0)
        return rc;
    int e = influx_spool_write(s, s->held.p, s->held.len);
    if (e) {
        s->held_errno = e;
        return 0;
    }
    s->h->log(s->h, DLG_LOG_INFO, "%s: the spool takes points again; those held in memory are spooled",
              s->spool_path);
    sbuf_truncate(&s->held, 0);
    s->held_errno = 0;
    return 0;
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
        influx_keep_first(&rc, influx_spool_left(s, &left, body.p, body.len));
    }
    sbuf_free(&left.keep);
    sbuf_free(&body);
    return rc;
}

int influx_held_lost(influx_sink *s)
{
    if (s->held.len == 0)
        return 0;
    size_t n = influx_count_lines(s->held.p, s->held.len);
    return s->h->error(s->h, DLG_EIO, "%s: cannot spool points that InfluxDB at %s did not take: %s; %zu point%s "
                       "held in memory %s lost when the run ends (the CSV/JSON sinks still have them)",
                       s->spool_path, s->target, influx_spool_strerror(s->held_errno), n, n == 1 ? "" : "s",
                       n == 1 ? "is" : "are");
}
