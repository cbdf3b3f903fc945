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
 * rewriting it, and an append takes that lock too (the lock file holds
 * the sink's name: influx_spool_legacy_note).  Otherwise the rewrite
 * would drop what another process appended meanwhile, and a second replay
 * would send the same points again and write offsets of a spool that is
 * gone.  An append of progress points that finds the lock taken does not
 * wait (the run must not stall): the sink holds them in memory meanwhile.
 * One holding a result row or the dlgauge_host point waits for the lock
 * until its batch's retry sequence would have ended; after that its write
 * fails, and the host's journal keeps the row (influx_hold.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "influx.h"
#include "sinkfs.h"

/* Writes the sink's name into its empty lock file (best effort): the lock
 * of a spool named one-to-one tells it from one an older dlgauge shared
 * between sinks (influx_spool_legacy_note), with no file more. */
static void sign_lock(const influx_sink *s, int fd)
{
    struct stat st;
    if (s->name && fstat(fd, &st) == 0 && st.st_size == 0)
        (void)!pwrite(fd, s->name, strlen(s->name), 0);
}

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
            break; /* a filesystem without flock: unlocked, as sink_lock goes on */
        if (s->h->now_ns(s->h) >= wait_until_ns || s->h->stopping(s->h)) {
            close(fd);
            errno = EWOULDBLOCK;
            return -1;
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    sign_lock(s, fd);
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

/* Sets the bytes [end, size) of fd aside: a line cut short (save_fragment). */
static void set_aside(influx_sink *s, int fd, off_t end, off_t size)
{
    size_t n = (size_t)(size - end);
    char *frag = malloc(n);
    if (frag && pread(fd, frag, n, end) == (ssize_t)n)
        save_fragment(s, frag, n);
    free(frag);
}

/* Cuts a spool's unterminated last line, so new lines do not glue onto it. */
static int cut_fragment(influx_sink *s, int fd, off_t *size)
{
    off_t end;
    int e = last_line_end(fd, *size, &end);
    if (e || end == *size)
        return e;
    set_aside(s, fd, end, *size);
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

/* Lines (points) in the spool open at fd. */
static size_t fd_points(int fd)
{
    struct stat st;
    char buf[65536];
    size_t n = 0;
    if (fstat(fd, &st) != 0)
        return 0;
    for (off_t off = 0; off < st.st_size;) {
        size_t k = st.st_size - off < (off_t)sizeof buf ? (size_t)(st.st_size - off) : sizeof buf;
        if (sink_read_at(fd, buf, k, off) != 0)
            break;
        n += influx_count_lines(buf, k);
        off += (off_t)k;
    }
    return n;
}

/* A spool gone from its path during the run (dlgauge never deletes one)
 * would take its points with it unseen, and `dlgauge flush` would find
 * nothing: it is followed as the csv and json sinks follow their files
 * (sinkfs.h), made again from the copy still open, or said to be moved.
 * One replaced while present is another process's replay: the file there
 * is the spool.  Hold the spool's lock.  0, or -code after reporting. */
static int spool_follow(influx_sink *s)
{
    struct stat st;
    if (s->spool_fd < 0 || stat(s->spool_path, &st) == 0 || errno != ENOENT)
        return 0;
    int rc = sink_follow_path(s->h, &s->spool_fd, s->spool_path, "spooled point",
                              fd_points(s->spool_fd), "it held");
    return rc < 0 ? rc : 0;
}

/* After an append or a replay, under the lock: the spool now at the path
 * is the one spool_follow keeps. */
static void spool_watch(influx_sink *s)
{
    int fd = open(s->spool_path, O_RDONLY | O_CLOEXEC);
    if (s->spool_fd >= 0)
        close(s->spool_fd);
    s->spool_fd = fd;
}

int influx_spool_write(influx_sink *s, const char *body, size_t len)
{
    int lock = spool_lock(s, s->lock_wait_until_ns);
    if (lock < 0)
        return errno;
    int e = spool_follow(s) < 0 ? EIO : append_to(s, s->spool_path, body, len, true);
    spool_watch(s);
    close(lock);
    return e;
}

int influx_spool_left(influx_sink *s, influx_left *left, const char *body, size_t len, bool fresh)
{
    if (left->keep.len == 0)
        return influx_spool_or_hold(s, body + left->done, len - left->done, fresh);
    if (sbuf_add(&left->keep, body + left->done, len - left->done) != 0)
        return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory spooling points that InfluxDB at %s did not "
                           "take; those points are lost", s->spool_path, s->target);
    return influx_spool_or_hold(s, left->keep.p, left->keep.len, fresh);
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

/* The offset a crashed replay got to, if it is a line start within the
 * len bytes of whole lines of spool fd; else 0. */
static off_t read_sent_offset(const influx_sink *s, int spool, off_t len)
{
    char path[4096], text[32] = {0}, before = '\n';
    sent_path(s, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, text, sizeof text - 1);
    close(fd);
    unsigned long long off = r > 0 ? strtoull(text, NULL, 10) : 0;
    /* an offset past the end, or not at a line start, is not ours: ignore it
     * (resending a batch is harmless, sending half a line is not) */
    if (off == 0 || off > (unsigned long long)len || pread(spool, &before, 1, (off_t)off - 1) != 1 || before != '\n')
        return 0;
    return (off_t)off;
}

static void write_sent_offset(const influx_sink *s, off_t off)
{
    char path[4096], text[32];
    sent_path(s, path, sizeof path);
    int fd = sink_open_durable(path, O_WRONLY | O_TRUNC);
    if (fd < 0)
        return; /* without it a crash can only cause a resend */
    int n = snprintf(text, sizeof text, "%lld\n", (long long)off);
    if (sink_write_all(fd, text, (size_t)n) == 0)
        fsync(fd); /* after a crash the replay resumes here, not from the start */
    close(fd);
}

/* A window on the spool's whole lines, so that a replay holds a bounded
 * part of the spool in memory (a spool grows through a long outage). */
typedef struct spool_reader {
    int fd;
    off_t len;    /* the whole lines end here */
    off_t base;   /* file offset of buf[0] */
    char *buf;
    size_t n, cap;
} spool_reader;

/* Bytes read at a time: the window's size, unless one line is longer.
 * (The fuzz target builds with a small one, to move it often.) */
#ifndef SPOOL_WINDOW
#define SPOOL_WINDOW ((size_t)4 << 20)
#endif

/* Moves the window to start at off (<= len) and fills it: at least one
 * whole line unless at the end.  0 or an errno value. */
static int reader_fill(spool_reader *r, off_t off)
{
    size_t drop = (size_t)(off - r->base);
    if (drop >= r->n) {
        r->n = 0;
    } else if (drop > 0) {
        memmove(r->buf, r->buf + drop, r->n - drop);
        r->n -= drop;
    }
    r->base = off;
    for (;;) {
        size_t room = r->cap - r->n, rest = (size_t)(r->len - r->base) - r->n;
        size_t want = room < rest ? room : rest;
        int e = sink_read_at(r->fd, r->buf + r->n, want, r->base + (off_t)r->n);
        if (e)
            return e;
        r->n += want;
        if (r->base + (off_t)r->n == r->len || memchr(r->buf, '\n', r->n))
            return 0;
        char *p = realloc(r->buf, r->cap * 2); /* a line longer than the window */
        if (!p)
            return ENOMEM;
        r->buf = p;
        r->cap *= 2;
    }
}

/* Copies the spool's bytes [from, r->len) to fd out through the window. */
static int copy_rest(spool_reader *r, off_t from, int out)
{
    for (off_t off = from; off < r->len;) {
        size_t n = (size_t)(r->len - off) < r->cap ? (size_t)(r->len - off) : r->cap;
        int e = sink_read_at(r->fd, r->buf, n, off);
        if (!e)
            e = sink_write_all(out, r->buf, n);
        if (e)
            return e;
        off += (off_t)n;
    }
    r->n = 0; /* the window no longer holds what base says */
    return 0;
}

/* The spool becomes keep, then its bytes [off, r->len). */
static int rewrite_tail(influx_sink *s, const dlg_sbuf *keep, spool_reader *r, off_t off, bool changed)
{
    char path[4096];
    sent_path(s, path, sizeof path);
    /* gone for good before the spool changes (see the top of this file) */
    if (unlink(path) == 0)
        sink_fsync_dir(path);
    if (off == 0 && !changed && keep->len == 0)
        return 0;
    if (off == r->len && keep->len == 0) {
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
        e = copy_rest(r, off, fd);
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
                           "(%lld bytes were sent, they may be sent again): %s", s->spool_path, (long long)off,
                           strerror(e));
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

/* Opens the spool for reading: r->len is where its whole lines end, *size
 * its size.  0, ENOENT, or another errno value. */
static int reader_open(const influx_sink *s, spool_reader *r, off_t *size)
{
    *r = (spool_reader){.fd = open(s->spool_path, O_RDONLY | O_CLOEXEC)};
    struct stat st = {0};
    if (r->fd < 0)
        return errno;
    int e = fstat(r->fd, &st) != 0 ? errno : last_line_end(r->fd, st.st_size, &r->len);
    *size = st.st_size;
    r->cap = r->len < (off_t)SPOOL_WINDOW ? (size_t)r->len + 1 : SPOOL_WINDOW;
    if (!e && !(r->buf = malloc(r->cap)))
        e = ENOMEM;
    return e;
}

static void reader_close(spool_reader *r)
{
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
}

size_t influx_spool_points(const influx_sink *s)
{
    spool_reader r;
    off_t size;
    size_t n = 0;
    if (reader_open(s, &r, &size) == 0)
        for (off_t off = read_sent_offset(s, r.fd, r.len); off < r.len && reader_fill(&r, off) == 0;) {
            n += influx_count_lines(r.buf, r.n);
            off = r.base + (off_t)r.n;
        }
    reader_close(&r);
    return n;
}

/* Sends the spool from off on, a window at a time, in batches of whole
 * lines; *off ends past what was dealt with, left holds what was not sent. */
static int send_from(influx_sink *s, spool_reader *r, bool retry, uint64_t deadline_ns, off_t *off,
                     influx_left *left)
{
    int rc = 0;
    while (*off < r->len) {
        int e = reader_fill(r, *off);
        if (e)
            return s->h->error(s->h, DLG_EIO, "%s: cannot read the spool: %s", s->spool_path, strerror(e));
        size_t have = whole_lines(r->buf, r->n), end = chunk_end(r->buf, 0, have, s->batch);
        /* rejected lines are saved to .rejected.lp and reported: go on */
        influx_keep_first(&rc, influx_deliver(s, r->buf, end, retry, deadline_ns, left));
        *off += (off_t)left->done;
        if (left->why != INFLUX_SENT)
            break;
        if (*off < r->len)
            write_sent_offset(s, *off);
    }
    return rc;
}

/* Replays the spool under its lock (see the top). */
static int replay_locked(influx_sink *s, bool retry, uint64_t deadline_ns, bool *kept, size_t *sent)
{
    spool_reader r;
    off_t size;
    int e = reader_open(s, &r, &size);
    if (e) {
        reader_close(&r);
        return e == ENOENT ? 0 : s->h->error(s->h, DLG_EIO, "%s: cannot read the spool: %s", s->spool_path,
                                             strerror(e));
    }
    bool cut = r.len < size;
    if (cut)
        set_aside(s, r.fd, r.len, size);
    off_t start = read_sent_offset(s, r.fd, r.len), off = start;
    influx_left left = {0}; /* keep stays empty until the last batch */
    int rc = send_from(s, &r, retry, deadline_ns, &off, &left);
    *kept = left.why != INFLUX_SENT;
    size_t done = (size_t)(off - start) - left.keep.len;
    *sent += done;
    if (done > 0)
        s->h->log(s->h, DLG_LOG_INFO, "%s: resent %zu bytes of spooled points to %s", s->spool_path, done,
                  s->target);
    int wrc = rewrite_tail(s, &left.keep, &r, off, cut);
    sbuf_free(&left.keep);
    reader_close(&r);
    return wrc != 0 ? wrc : rc;
}

/* Whether the lock of spool file `path` names a sink (sign_lock): then a
 * dlgauge that names spools one-to-one wrote it, for that sink. */
static bool lock_signed(const char *path)
{
    char lock[4096];
    struct stat st;
    snprintf(lock, sizeof lock, "%s.lock", path);
    return stat(lock, &st) == 0 && st.st_size > 0;
}

void influx_spool_legacy_note(const influx_sink *s, const char *legacy)
{
    struct stat st;
    if (strcmp(legacy, s->spool_path) == 0 || stat(legacy, &st) != 0 || st.st_size == 0)
        return;
    if (lock_signed(legacy)) /* the spool of the sink it names ("a_b" where this is "a b") */
        return;
    s->h->log(s->h, DLG_LOG_WARN, "%s: spooled by a dlgauge older than 2026-12, which gave sinks whose names "
              "differ only in '/', ' ' or '_' this one spool; this sink's spool is now %s, so those points are "
              "not sent: if they are this sink's, append them to it (cat OLD >> NEW; rm OLD) and run `dlgauge "
              "flush`", legacy, s->spool_path);
}

int influx_spool_replay(influx_sink *s, bool retry, uint64_t deadline_ns, bool *kept, size_t *sent)
{
    *kept = false;
    if (s->spool_fd < 0 && access(s->spool_path, F_OK) != 0 && errno == ENOENT)
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
    int rc = spool_follow(s);
    *kept = rc != 0; /* a spool that could not be made again is not sent either */
    if (rc == 0)
        rc = replay_locked(s, retry, deadline_ns, kept, sent);
    spool_watch(s);
    close(lock);
    return rc;
}
