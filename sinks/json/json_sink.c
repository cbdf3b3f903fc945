/* JSON Lines sink: one object per point, appended to a file.  Each write()
 * goes straight to the file descriptor; one holding a result (or host)
 * point is synced (fdatasync) before it returns, as the host journals it
 * then.  Progress points, frequent, wait for the fsync at flush.
 * write_again skips a point the file holds already (a resumed run's). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

#include "json_text.h"
#include "sbuf.h"
#include "sinkfs.h"
#include "sinkline.h"

enum { OPT_PATH, OPT_PROGRESS };

static const dlg_option json_options[] = {
    {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "JSON Lines file to append to; parent directories are created",
     DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},
    {"progress", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
     "also write the per-second dlgauge_progress points", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

typedef struct json_sink {
    const dlg_host *h;
    char *path;
    int fd;
    bool progress;
    size_t points;
    dlg_sbuf out;
} json_sink;

static void json_close(void *state)
{
    json_sink *s = state;
    if (!s)
        return;
    if (s->fd >= 0) {
        fsync(s->fd);
        close(s->fd);
    }
    sbuf_free(&s->out);
    free(s->path);
    free(s);
}

static int json_open(const dlg_host *h, const dlg_value *opts, const char *name, void **state)
{
    (void)name; /* the host's context names the sink */
    json_sink *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->progress = opts[OPT_PROGRESS].i != 0;
    int rc = sink_open_append(h, &opts[OPT_PATH], O_RDWR, &s->fd, &s->path);
    /* a line cut short by a crash is moved away, not ended: a cut object in
     * the middle would make the file invalid JSON Lines for every reader */
    if (rc == 0 && (rc = sink_set_aside_cut_line(h, s->fd, s->path)) < 0) {
        close(s->fd);
        free(s->path);
    }
    if (rc < 0) {
        free(s);
        return rc;
    }
    *state = s;
    return 0;
}

static bool is_progress(const dlg_point *p)
{
    return p->measurement && strcmp(p->measurement, "dlgauge_progress") == 0;
}

static bool wanted(const json_sink *s, const dlg_point *p)
{
    return s->progress || !is_progress(p);
}

/* Appends the wanted points of pts as lines; with again, not when the file
 * holds those very lines already (give again one point at a time). */
static int append_points(json_sink *s, const dlg_point *pts, size_t n, bool again)
{
    sbuf_truncate(&s->out, 0);
    size_t count = 0;
    bool durable = false; /* a result or host point: synced before returning */
    for (size_t i = 0; i < n; i++) {
        if (!wanted(s, &pts[i]))
            continue;
        if (json_add_point(&s->out, &pts[i]) != 0)
            return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
        count++;
        durable = durable || !is_progress(&pts[i]);
    }
    /* a file deleted or moved away: the points go to the one at the path */
    int moved = s->out.len ? sink_follow_path(s->h, &s->fd, s->path, "point", s->points, "this run wrote") : 0;
    if (moved < 0)
        return moved;
    int e = 0, sync_failed = 0, held = 0;
    if (s->out.len) {
        sink_lock(s->fd);
        held = again ? sink_skip_held(s->h, s->fd, s->path, s->out.p, s->out.len) : 0;
        if (held == 0)
            e = durable ? sink_append_durable(s->fd, s->out.p, s->out.len, &sync_failed)
                        : sink_append(s->fd, s->out.p, s->out.len);
        sink_unlock(s->fd);
    }
    if (held)
        return held < 0 ? held : 0;
    if (e == ENOSPC)
        return s->h->error(s->h, DLG_EIO, "%s: disk full (ENOSPC)%s; %zu points were written before",
                           s->path, sync_failed ? " syncing (fdatasync)" : "", s->points);
    if (e && sync_failed)
        return s->h->error(s->h, DLG_EIO, "%s: cannot sync (fdatasync): %s; these points were taken back, %zu "
                           "were written before", s->path, strerror(e), s->points);
    if (e)
        return s->h->error(s->h, DLG_EIO, "%s: cannot write: %s", s->path, strerror(e));
    s->points += count;
    return 0;
}

static int json_write(void *state, const dlg_point *pts, size_t n) { return append_points(state, pts, n, false); }

static int json_write_again(void *state, const dlg_point *pts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = append_points(state, &pts[i], 1, true);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int json_flush(void *state, uint64_t timeout_ns)
{
    json_sink *s = state;
    return sink_fsync(s->h, s->fd, s->path);
}

/* --dry-run: what open() would refuse, found without creating anything. */
static int json_check(const dlg_host *h, const dlg_value *opts, const char *name)
{
    (void)name;
    return sink_check_path(h, &opts[OPT_PATH]);
}

static const dlg_sink_ops json_ops = {
    .version = 4,
    .open = json_open,
    .begin = NULL,
    .write = json_write,
    .flush = json_flush,
    .close = json_close,
    .check = json_check,
    .spools = NULL, /* a write delivers: nothing for `dlgauge flush` to send */
    .write_again = json_write_again,
};

static const dlg_plugin_desc json_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_SINK,
    .name = "json",
    .version = "1.0",
    .summary = "points as JSON Lines, one object per line",
    .options = json_options,
    .metrics = NULL,
    .ops = &json_ops,
};

DLG_PLUGIN("json", &json_desc)
