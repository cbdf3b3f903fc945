/* The spool of the InfluxDB sink: line protocol that could not be sent is
 * appended to <spool_dir>/<name>.lp and replayed later, in order.
 *
 * Exactly once: during a replay the byte offset of what InfluxDB accepted
 * is kept in <name>.lp.sent after every batch, so a replay interrupted even
 * by a crash resumes after the last accepted batch.  When the replay stops,
 * the unsent tail replaces the spool (temp file + rename) and the offset
 * file goes; it is removed first, because an offset applied to the new,
 * shorter spool would skip points, while its absence at worst resends a
 * batch (which InfluxDB stores once anyway: same series and timestamp).
 *
 * One process at a time: a replay (a run's, or `dlgauge flush` from cron
 * while a run spools) holds <name>.lp.lock from reading the spool to
 * rewriting it, and an append takes that lock too.  Otherwise the rewrite
 * would drop what another process appended meanwhile, and a second replay
 * would send the same points again and write offsets of a spool that is
 * gone.  An append that finds the lock taken does not wait (the run must
 * not stall): the sink holds its lines in memory meanwhile. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "influx.h"
#include "sinkfs.h"

/* The spool's lock (see the top), taken by the returned fd; waits for
 * another process to release it until wait_until_ns (0: not at all).
 * Returns the fd, or -1 with errno (EWOULDBLOCK: still taken). */
static int spool_lock(influx_sink *s, uint64_t wait_until_ns)
{
    int e = sink_mkdir_p(s->spool_dir);
    char path[4096];
    snprintf(path, sizeof path, "%s.lock", s->spool_path);
    int fd = e ? -1 : open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        errno = e ? e : errno;
        return -1;
    }
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        e = errno;
        if (e != EWOULDBLOCK && e != EINTR)
            return fd; /* a filesystem without flock: unlocked, as sink_lock goes on */
        if (s->h->now_ns(s->h) >= wait_until_ns || s->h->stopping(s->h)) {
            close(fd);
            errno = EWOULDBLOCK;
            return -1;
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    return fd;
}

const char *influx_spool_strerror(int e)
{
    return e == EWOULDBLOCK ? "another dlgauge process is sending the spool" : strerror(e);
}

/* Offset just past the last '\n' among the first size bytes of fd (0
 * when there is none). */
static int last_line_end(int fd, off_t size, off_t *end)
{
    char buf[4096];
    for (off_t hi = size; hi > 0;) {
        off_t lo = hi > (off_t)sizeof buf ? hi - (off_t)sizeof buf : 0;
        ssize_t r = pread(fd, buf, (size_t)(hi - lo), lo);
        if (r != hi - lo)
            return r < 0 ? errno : EIO;
        for (ssize_t i = r; i > 0; i--)
            if (buf[i - 1] == '\n') {
                *end = lo + i;
                return 0;
            }
        hi = lo;
    }
    *end = 0;
    return 0;
}

/* A spool line cut short (a crash or a full disk in the middle of an
 * append) is not sent: cut, it can still parse as a point with a wrong
 * value or time.  It is kept in the rejected file for inspection. */
static void save_fragment(influx_sink *s, const char *frag, size_t n)
{
    s->h->log(s->h, DLG_LOG_WARN, "%s: its last line (%zu bytes) was cut short by an earlier crash or full "
              "disk; it is not sent but moved to %s", s->spool_path, n, s->rejected_path);
    int fd = sink_open_durable(s->rejected_path, O_WRONLY | O_APPEND);
    if (fd < 0)
        return;
    if (sink_write_all(fd, frag, n) == 0 && sink_write_all(fd, "\n", 1) == 0)
        fsync(fd);
    close(fd);
}

/* Cuts a spool's unterminated last line, so new lines do not glue onto it. */
static int cut_fragment(influx_sink *s, int fd, off_t *size)
{
    off_t end;
    int e = last_line_end(fd, *size, &end);
    if (e || end == *size)
        return e;
    size_t n = (size_t)(*size - end);
    char *frag = malloc(n);
    if (frag && pread(fd, frag, n, end) == (ssize_t)n)
        save_fragment(s, frag, n);
    free(frag);
    if (ftruncate(fd, end) != 0)
        return errno;
    *size = end;
    return 0;
}

/* Appends and fsyncs whole lines; a failed append is undone, so it never
 * leaves a line cut short behind. */
static int append_to(influx_sink *s, const char *path, const char *body, size_t len, bool spool)
{
    int e = sink_mkdir_p(s->spool_dir);
    if (e)
        return e;
    int fd = sink_open_durable(path, O_RDWR | O_APPEND);
    if (fd < 0)
        return errno;
    off_t size = lseek(fd, 0, SEEK_END);
    e = size < 0 ? errno : 0;
    if (!e && spool)
        e = cut_fragment(s, fd, &size);
    if (!e)
        e = sink_write_all(fd, body, len);
    if (!e && fsync(fd) != 0)
        e = errno;
    if (e && size >= 0 && ftruncate(fd, size) == 0)
        fsync(fd);
    close(fd);
    return e;
}

int influx_spool_write(influx_sink *s, const char *body, size_t len)
{
    int lock = spool_lock(s, s->lock_wait_until_ns);
    if (lock < 0)
        return errno;
    int e = append_to(s, s->spool_path, body, len, true);
    close(lock);
    return e;
}

int influx_spool_left(influx_sink *s, influx_left *left, const char *body, size_t len)
{
    if (left->keep.len == 0)
        return influx_spool_or_hold(s, body + left->done, len - left->done);
    if (sbuf_add(&left->keep, body + left->done, len - left->done) != 0)
        return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory spooling points that InfluxDB at %s did not "
                           "take; those points are lost", s->spool_path, s->target);
    return influx_spool_or_hold(s, left->keep.p, left->keep.len);
}

int influx_spool_reject(influx_sink *s, const char *body, size_t len)
{
    int e = append_to(s, s->rejected_path, body, len, false);
    if (e)
        return s->h->error(s->h, DLG_EIO, "%s: cannot save the points InfluxDB rejected: %s",
                           s->rejected_path, strerror(e));
    return 0;
}

static void sent_path(const influx_sink *s, char *out, size_t n)
{
    snprintf(out, n, "%s.sent", s->spool_path);
}

static size_t read_sent_offset(const influx_sink *s, const char *data, size_t len)
{
    char path[4096], text[32] = {0};
    sent_path(s, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, text, sizeof text - 1);
    close(fd);
    unsigned long long off = r > 0 ? strtoull(text, NULL, 10) : 0;
    /* an offset past the end, or not at a line start, is not ours: ignore it
     * (resending a batch is harmless, sending half a line is not) */
    return off <= len && (off == 0 || data[off - 1] == '\n') ? (size_t)off : 0;
}

static void write_sent_offset(const influx_sink *s, size_t off)
{
    char path[4096], text[32];
    sent_path(s, path, sizeof path);
    int fd = sink_open_durable(path, O_WRONLY | O_TRUNC);
    if (fd < 0)
        return; /* without it a crash can only cause a resend */
    int n = snprintf(text, sizeof text, "%zu\n", off);
    if (sink_write_all(fd, text, (size_t)n) == 0)
        fsync(fd); /* after a crash the replay resumes here, not from the start */
    close(fd);
}

/* The spool becomes keep, then data[off..len). */
static int rewrite_tail(influx_sink *s, const dlg_sbuf *keep, const char *data, size_t off, size_t len,
                        bool changed)
{
    char path[4096];
    sent_path(s, path, sizeof path);
    /* gone for good before the spool changes (see the top of this file) */
    if (unlink(path) == 0)
        sink_fsync_dir(path);
    if (off == 0 && !changed && keep->len == 0)
        return 0;
    if (off == len && keep->len == 0) {
        /* Not fsynced: should a crash bring the old length back, the spool
         * is resent, which stores nothing twice (same series and times),
         * and the next append's fsync makes the truncation durable anyway. */
        if (truncate(s->spool_path, 0) != 0)
            return s->h->error(s->h, DLG_EIO, "%s: cannot truncate the replayed spool: %s", s->spool_path,
                               strerror(errno));
        return 0;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->spool_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    int e = fd < 0 ? errno : sink_write_all(fd, keep->p ? keep->p : "", keep->len);
    if (!e)
        e = sink_write_all(fd, data + off, len - off);
    if (fd >= 0 && !e && fsync(fd) != 0)
        e = errno;
    if (fd >= 0)
        close(fd);
    if (!e && rename(tmp, s->spool_path) != 0)
        e = errno;
    if (!e)
        e = sink_fsync_dir(s->spool_path);
    if (e) {
        unlink(tmp);
        return s->h->error(s->h, DLG_EIO, "%s: cannot rewrite the spool after a partial replay "
                           "(%zu bytes were sent, they may be sent again): %s", s->spool_path, off, strerror(e));
    }
    return 0;
}

/* End of the chunk of at most `batch` lines that starts at off. */
static size_t chunk_end(const char *d, size_t off, size_t len, size_t batch)
{
    size_t lines = 0;
    while (off < len && lines < batch) {
        const char *nl = memchr(d + off, '\n', len - off);
        off = nl ? (size_t)(nl - d) + 1 : len;
        lines++;
    }
    return off;
}

/* Length of data up to and including its last '\n'. */
static size_t whole_lines(const char *data, size_t len)
{
    while (len > 0 && data[len - 1] != '\n')
        len--;
    return len;
}

size_t influx_spool_points(const influx_sink *s)
{
    char *data = NULL;
    size_t len = 0;
    if (sink_read_file(s->spool_path, &data, &len) != 0)
        return 0;
    len = whole_lines(data, len);
    size_t off = read_sent_offset(s, data, len), n = 0;
    for (const char *p = data + off, *e = data + len; p < e; n++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    free(data);
    return n;
}

/* Replays the spool under its lock (see the top). */
static int replay_locked(influx_sink *s, bool retry, uint64_t deadline_ns, bool *kept, size_t *sent)
{
    char *data = NULL;
    size_t len = 0;
    int e = sink_read_file(s->spool_path, &data, &len);
    if (e == ENOENT)
        return 0;
    if (e)
        return s->h->error(s->h, DLG_EIO, "%s: cannot read the spool: %s", s->spool_path, strerror(e));
    size_t whole = whole_lines(data, len);
    if (whole < len)
        save_fragment(s, data + whole, len - whole);
    size_t off = read_sent_offset(s, data, whole), start = off;
    bool cut = whole < len;
    len = whole;
    int rc = 0;
    influx_left left = {0}; /* keep stays empty until the last batch */
    while (off < len) {
        size_t end = chunk_end(data, off, len, s->batch);
        /* rejected lines are saved to .rejected.lp and reported: go on */
        influx_keep_first(&rc, influx_deliver(s, data + off, end - off, retry, deadline_ns, &left));
        off += left.done;
        if (left.why != INFLUX_SENT)
            break;
        if (off < len)
            write_sent_offset(s, off);
    }
    *kept = left.why != INFLUX_SENT;
    *sent += off - left.keep.len - start;
    if (off - left.keep.len > start)
        s->h->log(s->h, DLG_LOG_INFO, "%s: resent %zu bytes of spooled points to %s", s->spool_path,
                  off - left.keep.len - start, s->target);
    int wrc = rewrite_tail(s, &left.keep, data, off, len, cut);
    sbuf_free(&left.keep);
    free(data);
    return wrc != 0 ? wrc : rc;
}

int influx_spool_replay(influx_sink *s, bool retry, uint64_t deadline_ns, bool *kept, size_t *sent)
{
    *kept = false;
    if (access(s->spool_path, F_OK) != 0 && errno == ENOENT)
        return 0; /* nothing spooled: no lock file, nor a spool directory, made */
    /* a final flush waits for another process's replay; a resend between
     * batches tries again later */
    uint64_t cap = s->h->now_ns(s->h) + INFLUX_LOCK_WAIT_MAX_NS;
    int lock = spool_lock(s, !retry ? 0 : deadline_ns < cap ? deadline_ns : cap);
    s->spool_busy = lock < 0 && errno == EWOULDBLOCK;
    if (s->spool_busy) {
        *kept = true; /* the other process sends them, or they wait for the next try */
        return 0;
    }
    if (lock < 0)
        return s->h->error(s->h, DLG_EIO, "%s.lock: cannot lock the spool: %s", s->spool_path, strerror(errno));
    int rc = replay_locked(s, retry, deadline_ns, kept, sent);
    close(lock);
    return rc;
}
