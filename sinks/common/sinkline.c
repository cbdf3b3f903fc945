#define _GNU_SOURCE
#include "sinkline.h"

#include "sinkfs.h"

#include <dlgauge/plugin.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes a match may start in per read, from the end backwards. */
enum { STEP = 1 << 16 };

/* Whether buf (its first byte at file offset from) holds line starting
 * in [first, first + span) at a line start. */
static bool line_in(const char *buf, size_t n, off_t from, size_t first, size_t span, const char *line,
                    size_t len)
{
    for (const char *p = buf + first; p + len <= buf + n && p < buf + first + span; p++) {
        if (!(p = memmem(p, (size_t)(buf + n - p), line, len)) || p >= buf + first + span)
            return false;
        if ((from == 0 && p == buf) || (p > buf && p[-1] == '\n'))
            return true;
    }
    return false;
}

int sink_holds_line(int fd, const char *line, size_t len, bool *found)
{
    *found = false;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    if (len == 0 || line[len - 1] != '\n' || (off_t)len > st.st_size)
        return 0;
    char *buf = malloc(STEP + len + 1);
    if (!buf)
        return ENOMEM;
    int e = 0;
    /* each pass looks for matches starting in [start, end): with the byte
     * before (the line start) and len - 1 bytes after (the match's rest) */
    for (off_t end = st.st_size - (off_t)len + 1; end > 0 && !*found && !e; end -= STEP) {
        off_t start = end > STEP ? end - STEP : 0;
        off_t from = start > 0 ? start - 1 : 0;
        off_t to = end - 1 + (off_t)len;
        size_t n = (size_t)(to - from);
        if (!(e = sink_read_at(fd, buf, n, from)))
            *found = line_in(buf, n, from, (size_t)(start - from), (size_t)(end - start), line, len);
    }
    free(buf);
    return e;
}

int sink_skip_held(const struct dlg_host *h, int fd, const char *path, const char *line, size_t len)
{
    bool held = false;
    int e = sink_holds_line(fd, line, len, &held);
    if (e)
        return h->error(h, DLG_EIO, "%s: cannot read it to find a point written before: %s", path, strerror(e));
    if (held)
        h->log(h, DLG_LOG_INFO, "%s: has this point already; not written again", path);
    return held;
}
