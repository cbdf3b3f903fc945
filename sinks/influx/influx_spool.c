/* The spool of the InfluxDB sink: line protocol that could not be sent is
 * appended to <spool_dir>/<name>.lp and replayed later, in order.
 *
 * Exactly once: during a replay the byte offset of what InfluxDB accepted
 * is kept in <name>.lp.sent after every batch, so a replay interrupted even
 * by a crash resumes after the last accepted batch.  When the replay stops,
 * the unsent tail replaces the spool (temp file + rename) and the offset
 * file goes; it is removed first, because an offset applied to the new,
 * shorter spool would skip points, while its absence at worst resends a
 * batch (which InfluxDB stores once anyway: same series and timestamp). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "influx.h"
#include "sinkfs.h"

static int append_to(influx_sink *s, const char *path, const char *body, size_t len)
{
    int e = sink_mkdir_p(s->spool_dir);
    if (e)
        return e;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0)
        return errno;
    e = sink_write_all(fd, body, len);
    if (!e && fsync(fd) != 0)
        e = errno;
    close(fd);
    return e;
}

int influx_spool_append(influx_sink *s, const char *body, size_t len)
{
    int e = append_to(s, s->spool_path, body, len);
    if (e)
        return s->h->error(s->h, DLG_EIO, "%s: cannot spool points that InfluxDB at %s did not take: %s; "
                           "those points are lost", s->spool_path, s->target, strerror(e));
    return 0;
}

int influx_spool_reject(influx_sink *s, const char *body, size_t len)
{
    int e = append_to(s, s->rejected_path, body, len);
    if (e)
        return s->h->error(s->h, DLG_EIO, "%s: cannot save the points InfluxDB rejected: %s",
                           s->rejected_path, strerror(e));
    return 0;
}

static void sent_path(const influx_sink *s, char *out, size_t n)
{
    snprintf(out, n, "%s.sent", s->spool_path);
}

static size_t read_sent_offset(const influx_sink *s, size_t len)
{
    char path[4096], text[32] = {0};
    sent_path(s, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, text, sizeof text - 1);
    close(fd);
    unsigned long long off = r > 0 ? strtoull(text, NULL, 10) : 0;
    /* an offset past the end, or not at a line start, is not ours: ignore it */
    return off <= len ? (size_t)off : 0;
}

static void write_sent_offset(const influx_sink *s, size_t off)
{
    char path[4096], text[32];
    sent_path(s, path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return; /* without it a crash can only cause a resend */
    int n = snprintf(text, sizeof text, "%zu\n", off);
    sink_write_all(fd, text, (size_t)n);
    close(fd);
}

/* The spool becomes data[off..len). */
static int rewrite_tail(influx_sink *s, const char *data, size_t off, size_t len)
{
    char path[4096];
    sent_path(s, path, sizeof path);
    unlink(path);
    if (off == 0)
        return 0;
    if (off == len) {
        if (truncate(s->spool_path, 0) != 0)
            return s->h->error(s->h, DLG_EIO, "%s: cannot truncate the replayed spool: %s", s->spool_path,
                               strerror(errno));
        return 0;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->spool_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    int e = fd < 0 ? errno : sink_write_all(fd, data + off, len - off);
    if (fd >= 0 && !e && fsync(fd) != 0)
        e = errno;
    if (fd >= 0)
        close(fd);
    if (!e && rename(tmp, s->spool_path) != 0)
        e = errno;
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

size_t influx_spool_points(const influx_sink *s)
{
    char *data = NULL;
    size_t len = 0;
    if (sink_read_file(s->spool_path, &data, &len) != 0)
        return 0;
    size_t off = read_sent_offset(s, len), n = 0;
    for (const char *p = data + off, *e = data + len; p < e; n++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    free(data);
    return n;
}

int influx_spool_replay(influx_sink *s, bool retry, uint64_t deadline_ns)
{
    char *data = NULL;
    size_t len = 0;
    int e = sink_read_file(s->spool_path, &data, &len);
    if (e == ENOENT)
        return 0;
    if (e)
        return s->h->error(s->h, DLG_EIO, "%s: cannot read the spool: %s", s->spool_path, strerror(e));
    size_t off = read_sent_offset(s, len), start = off;
    int rc = 0;
    bool unreachable = false;
    while (off < len) {
        size_t end = chunk_end(data, off, len, s->batch);
        int r = influx_deliver(s, data + off, end - off, retry, deadline_ns);
        if (r == INFLUX_RETRY) {
            unreachable = true;
            break;
        }
        if (r < 0 && rc == 0)
            rc = r; /* rejected: saved to .rejected.lp and reported; go on */
        off = end;
        if (off < len)
            write_sent_offset(s, off);
    }
    if (off > start)
        s->h->log(s->h, DLG_LOG_INFO, "%s: resent %zu bytes of spooled points to %s", s->spool_path,
                  off - start, s->target);
    int wrc = rewrite_tail(s, data, off, len);
    free(data);
    if (wrc != 0)
        return wrc;
    if (rc != 0)
        return rc;
    return unreachable ? 1 : 0;
}
