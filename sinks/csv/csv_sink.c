/* CSV result sink: one row per dlgauge_result point, header from the
 * run's schema, appending to an existing file only when its header holds
 * all of the run's columns (rows then follow its order); otherwise the
 * rows go to PATH.2.csv (.3, ...), never under another header.  Rows go straight
 * to the file descriptor (no stdio buffering) and are synced (fdatasync), so
 * every measured row is on stable storage as soon as write() returns.
 * write_again skips a row the file holds already (a resumed run's). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

#include "csv_header.h"
#include "csv_rotate.h"
#include "csv_row.h"
#include "sbuf.h"
#include "sinkfs.h"
#include "sinkline.h"

enum { OPT_PATH };

static const dlg_option csv_options[] = {
    {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
     "CSV file to write; parent directories are created; an existing file is "
     "appended to when its header has every column of this run",
     DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

typedef struct csv_sink {
    const dlg_host *h;
    char *path;
    int fd;
    char **cols;       /* tag keys then field names, owned copies */
    size_t ntags, nfields;
    bool have_header;
    bool warned_field;
    char misfit[1024]; /* why the last file's header did not fit this run */
    size_t rows;
    dlg_sbuf row;
} csv_sink;

static void free_cols(csv_sink *s)
{
    for (size_t i = 0; i < s->ntags + s->nfields; i++)
        free(s->cols[i]);
    free(s->cols);
    s->cols = NULL;
    s->ntags = s->nfields = 0;
}

static void csv_close(void *state)
{
    csv_sink *s = state;
    if (!s)
        return;
    if (s->fd >= 0) {
        fsync(s->fd);
        close(s->fd);
    }
    free_cols(s);
    sbuf_free(&s->row);
    free(s->path);
    free(s);
}

static int csv_open(const dlg_host *h, const dlg_value *opts, const char *name, void **state)
{
    (void)name; /* the host's context names the sink */
    csv_sink *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    int rc = sink_open_append(h, &opts[OPT_PATH], O_RDWR, &s->fd, &s->path);
    if (rc < 0) {
        free(s);
        return rc;
    }
    *state = s;
    return 0;
}

/* Appends s->row (hold the lock): whole, or not at all.  A result row is
 * also synced (fdatasync): the host journals it as written once write()
 * returns, so it must survive a power loss from then on. */
static int write_out(csv_sink *s, const char *what, bool durable)
{
    int sync_failed = 0;
    int e = durable ? sink_append_durable(s->fd, s->row.p, s->row.len, &sync_failed)
                    : sink_append(s->fd, s->row.p, s->row.len);
    const char *how = sync_failed ? "syncing (fdatasync)" : "writing";
    if (e == ENOSPC)
        return s->h->error(s->h, DLG_EIO, "%s: disk full (ENOSPC) %s the %s; %zu rows were written before",
                           s->path, how, what, s->rows);
    if (e && sync_failed)
        return s->h->error(s->h, DLG_EIO, "%s: cannot sync (fdatasync) the %s: %s; it was taken back, %zu rows "
                           "were written before", s->path, what, strerror(e), s->rows);
    if (e)
        return s->h->error(s->h, DLG_EIO, "%s: cannot write the %s: %s", s->path, what, strerror(e));
    return 0;
}

/* First line of the file (without its line end) into out. */
static int read_first_line(csv_sink *s, dlg_sbuf *out)
{
    char chunk[4096];
    for (off_t off = 0;; off += (off_t)sizeof chunk) {
        ssize_t r = pread(s->fd, chunk, sizeof chunk, off);
        if (r < 0)
            return s->h->error(s->h, DLG_EIO, "%s: cannot read its header: %s", s->path, strerror(errno));
        char *nl = memchr(chunk, '\n', (size_t)r);
        size_t n = nl ? (size_t)(nl - chunk) : (size_t)r;
        if (sbuf_add(out, chunk, n) != 0)
            return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory reading its header", s->path);
        if (nl || r < (ssize_t)sizeof chunk)
            break;
    }
    if (out->len > 0 && out->p[out->len - 1] == '\r')
        sbuf_truncate(out, out->len - 1);
    return 0;
}

/* Says in s->misfit how the file's header differs from ours. */
static void describe_misfit(csv_sink *s, const char *old, const char *ours, const char *missing)
{
    dlg_sbuf a = {0}, b = {0};
    snprintf(s->misfit, sizeof s->misfit, "%s: has a different header", s->path);
    for (size_t col = 0;; col++) {
        int ha = csv_column(old, col, &a), hb = csv_column(ours, col, &b);
        if (ha < 0 || hb < 0)
            break;
        if (ha && hb && strcmp(a.p, b.p) == 0)
            continue;
        snprintf(s->misfit, sizeof s->misfit,
                 "%s: has a different header%s%s%s; first difference at column %zu: the file has %s%s%s, "
                 "this run writes %s%s%s", s->path, missing ? ", without this run's column \"" : "",
                 missing ? missing : "", missing ? "\"" : "", col + 1, ha ? "\"" : "", ha ? a.p : "no such column",
                 ha ? "\"" : "", hb ? "\"" : "", hb ? b.p : "no such column", hb ? "\"" : "");
        break;
    }
    sbuf_free(&a);
    sbuf_free(&b);
}

/* Another header holding all of this run's columns: rows are written in
 * its order, its other columns left empty.  1 (s->misfit says why) when
 * it does not hold them. */
static int fit_header(csv_sink *s, const char *old, const char *ours)
{
    char **cols;
    size_t n, ntags;
    const char *missing;
    int rc = csv_header_fit(old, (const char *const *)s->cols, s->ntags, s->nfields, &cols, &n, &ntags, &missing);
    if (rc < 0)
        return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
    if (rc > 0) {
        describe_misfit(s, old, ours, missing);
        return 1;
    }
    size_t extra = n - s->ntags - s->nfields;
    free_cols(s);
    s->cols = cols;
    s->ntags = ntags;
    s->nfields = n - ntags;
    s->h->log(s->h, DLG_LOG_INFO, "%s: its header has this run's columns in another order or among others; "
              "rows follow its order, %zu of its columns left empty", s->path, extra);
    return 0;
}

/* Where a record cut short by an earlier crash starts (the file size when
 * the file ends with a whole record).  Quote-aware: a cut quoted field
 * would swallow every later row, and a row cut in its last column would
 * read back with the right column count and a wrong value. */
static int cut_record_start(csv_sink *s, off_t *start)
{
    struct stat st;
    if (fstat(s->fd, &st) != 0)
        return s->h->error(s->h, DLG_EIO, "%s: %s", s->path, strerror(errno));
    char chunk[65536];
    csv_scan c = {0};
    ssize_t r = 1;
    /* up to the size only: a device such as /dev/full reads without end */
    while (c.len < (uint64_t)st.st_size && (r = pread(s->fd, chunk, sizeof chunk, (off_t)c.len)) > 0)
        csv_scan_add(&c, chunk, (size_t)r);
    if (r < 0)
        return s->h->error(s->h, DLG_EIO, "%s: cannot read it: %s", s->path, strerror(errno));
    *start = c.quoted || c.start < c.len ? (off_t)c.start : (off_t)c.len;
    return 0;
}

/* Checks the header of a non-empty file against ours (s->row, '\n' ended). */
static int check_header(csv_sink *s)
{
    dlg_sbuf old = {0};
    int rc = read_first_line(s, &old);
    s->row.p[s->row.len - 1] = '\0'; /* compare without '\n' */
    if (rc == 0 && strcmp(old.p ? old.p : "", s->row.p) != 0)
        rc = fit_header(s, old.p ? old.p : "", s->row.p);
    s->row.p[s->row.len - 1] = '\n';
    sbuf_free(&old);
    return rc;
}

/* Writes the header into an empty file, or checks that of a non-empty one;
 * a cut last record is moved away.  Hold the lock.  1 when the file's
 * header does not fit (the file is left as it is). */
static int start_locked(csv_sink *s)
{
    off_t cut;
    int rc = cut_record_start(s, &cut);
    if (rc == 0 && cut == 0) /* empty, or only a cut header */
        rc = sink_set_aside(s->h, s->fd, s->path, 0);
    if (rc != 0)
        return rc;
    struct stat st;
    if (fstat(s->fd, &st) != 0)
        return s->h->error(s->h, DLG_EIO, "%s: %s", s->path, strerror(errno));
    if (st.st_size == 0)
        return write_out(s, "header", false);
    if ((rc = check_header(s)) != 0)
        return rc;
    return sink_set_aside(s->h, s->fd, s->path, cut);
}

/* start_locked on the file at fd, under its lock. */
static int start_fd(csv_sink *s)
{
    sink_lock(s->fd);
    int rc = start_locked(s);
    sink_unlock(s->fd);
    return rc;
}

/* Makes alt (open at fd) the sink's file if its header fits; else puts
 * the old one back.  Returns what start_fd did. */
static int try_file(csv_sink *s, char *alt, int fd)
{
    int old_fd = s->fd;
    char *old_path = s->path;
    s->fd = fd;
    s->path = alt;
    int rc = start_fd(s);
    if (rc != 0) {
        s->fd = old_fd;
        s->path = old_path;
        close(fd);
        free(alt);
        return rc;
    }
    s->h->log(s->h, DLG_LOG_WARN, "%s; this run's rows go to %s instead", s->misfit, alt);
    if (DLG_HOST_HAS(s->h, file_kept)) /* the run's last line names it */
        s->h->file_kept(s->h, alt);
    close(old_fd);
    free(old_path);
    return 0;
}

/* Most alternatives tried: PATH.2.csv ... PATH.99.csv. */
#define ROTATE_MAX 99

/* The file's header does not fit this run (a new swept key or metric): a
 * row is never written under another header, nor is the file rewritten
 * (other runs may be appending to it), so the rows go to the first of
 * PATH.2.csv, PATH.3.csv, ... that is new or whose header fits: a sweep
 * that gained a column keeps appending to one file. */
static int rotate(csv_sink *s)
{
    char why[sizeof s->misfit];
    snprintf(why, sizeof why, "%s", s->misfit); /* a misfit of an alternative overwrites it */
    for (int n = 2; n <= ROTATE_MAX; n++) {
        char *alt = csv_rotated_path(s->path, n);
        if (!alt)
            return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
        int fd = sink_open_durable(alt, O_RDWR | O_APPEND);
        if (fd < 0) {
            int e = errno;
            s->h->error(s->h, DLG_EIO, "%s; %s: cannot open for writing: %s", why, alt, strerror(e));
            free(alt);
            return -DLG_EIO;
        }
        int rc = try_file(s, alt, fd);
        if (rc <= 0)
            return rc;
        snprintf(s->misfit, sizeof s->misfit, "%s", why);
    }
    return s->h->error(s->h, DLG_EINVAL, "%s; nor do those of the files its rows would go to instead (.2 to "
                       ".%d before the extension); choose another path or move the files away", why, ROTATE_MAX);
}

static int start_file(csv_sink *s)
{
    sbuf_truncate(&s->row, 0);
    if (csv_add_header(&s->row, (const char *const *)s->cols, s->ntags,
                       (const char *const *)s->cols + s->ntags, s->nfields) != 0)
        return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
    int rc = start_fd(s);
    if (rc > 0)
        rc = rotate(s);
    s->have_header = rc == 0;
    return rc;
}

static int set_columns(csv_sink *s, const char *const *tags, size_t ntags, const char *const *fields,
                       size_t nfields)
{
    free_cols(s);
    s->cols = calloc(ntags + nfields + 1, sizeof *s->cols);
    if (!s->cols)
        return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
    for (size_t i = 0; i < ntags + nfields; i++) {
        const char *c = i < ntags ? tags[i] : fields[i - ntags];
        if (!(s->cols[i] = strdup(c ? c : ""))) {
            while (i > 0)
                free(s->cols[--i]);
            free(s->cols);
            s->cols = NULL;
            return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
        }
    }
    s->ntags = ntags;
    s->nfields = nfields;
    return 0;
}

static int csv_begin(void *state, const dlg_schema *schema)
{
    csv_sink *s = state;
    const char **names = calloc(schema->nfields + 1, sizeof *names);
    if (!names)
        return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
    for (size_t i = 0; i < schema->nfields; i++)
        names[i] = schema->fields[i].name;
    int rc = set_columns(s, schema->tags, schema->ntags, names, schema->nfields);
    free(names);
    return rc ? rc : start_file(s);
}

/* Without begin(), the first result point defines the columns. */
static int begin_from_point(csv_sink *s, const dlg_point *p)
{
    const char **names = calloc(p->ntags + p->nfields + 1, sizeof *names);
    if (!names)
        return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
    for (size_t i = 0; i < p->ntags; i++)
        names[i] = p->tags[i].key;
    for (size_t i = 0; i < p->nfields; i++)
        names[p->ntags + i] = p->fields[i].key;
    int rc = set_columns(s, names, p->ntags, names + p->ntags, p->nfields);
    free(names);
    return rc ? rc : start_file(s);
}

static bool in_schema(const csv_sink *s, const char *key, size_t from, size_t n)
{
    for (size_t i = from; i < from + n; i++)
        if (strcmp(s->cols[i], key) == 0)
            return true;
    return false;
}

static void warn_unknown(csv_sink *s, const dlg_point *p)
{
    for (size_t i = 0; i < p->nfields && !s->warned_field; i++)
        if (!in_schema(s, p->fields[i].key, s->ntags, s->nfields)) {
            s->h->log(s->h, DLG_LOG_WARN, "%s: field %s is not in this run's columns; not written",
                      s->path, p->fields[i].key);
            s->warned_field = true;
        }
}

/* Appends the row of result point p; with again, not when the file holds
 * that very row already. */
static int write_result(csv_sink *s, const dlg_point *p, bool again)
{
    int rc = s->have_header ? 0 : begin_from_point(s, p);
    if (rc != 0)
        return rc;
    /* a file deleted or moved away: the row goes to the one at the path,
     * under the header there (or a new one's) */
    rc = sink_follow_path(s->h, &s->fd, s->path, "row", s->rows, "this run wrote");
    if (rc > 0)
        rc = start_file(s);
    if (rc != 0)
        return rc;
    warn_unknown(s, p);
    sbuf_truncate(&s->row, 0);
    if (csv_add_row(&s->row, p, (const char *const *)s->cols, s->ntags, (const char *const *)s->cols + s->ntags,
                    s->nfields) != 0)
        return s->h->error(s->h, DLG_ENOMEM, "%s: out of memory", s->path);
    sink_lock(s->fd);
    int held = again ? sink_skip_held(s->h, s->fd, s->path, s->row.p, s->row.len) : 0;
    if (held == 0 && (rc = write_out(s, "row", true)) == 0)
        s->rows++;
    sink_unlock(s->fd);
    return held < 0 ? held : rc;
}

static int write_results(void *state, const dlg_point *pts, size_t n, bool again)
{
    csv_sink *s = state;
    for (size_t i = 0; i < n; i++) {
        const dlg_point *p = &pts[i];
        if (!p->measurement || strcmp(p->measurement, "dlgauge_result") != 0)
            continue; /* progress points are for live dashboards, not the table */
        int rc = write_result(s, p, again);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int csv_write(void *state, const dlg_point *pts, size_t n) { return write_results(state, pts, n, false); }

static int csv_write_again(void *state, const dlg_point *pts, size_t n)
{
    return write_results(state, pts, n, true);
}

static int csv_flush(void *state, uint64_t timeout_ns)
{
    csv_sink *s = state;
    return sink_fsync(s->h, s->fd, s->path);
}

/* --dry-run: what open() would refuse, found without creating anything. */
static int csv_check(const dlg_host *h, const dlg_value *opts, const char *name)
{
    (void)name;
    return sink_check_path(h, &opts[OPT_PATH]);
}

static const dlg_sink_ops csv_ops = {
    .version = 4,
    .open = csv_open,
    .begin = csv_begin,
    .write = csv_write,
    .flush = csv_flush,
    .close = csv_close,
    .check = csv_check,
    .spools = NULL, /* a write delivers: nothing for `dlgauge flush` to send */
    .write_again = csv_write_again,
};

static const dlg_plugin_desc csv_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_SINK,
    .name = "csv",
    .version = "1.0",
    .summary = "results as CSV rows (RFC 4180), one per measured cell",
    .options = csv_options,
    .metrics = NULL,
    .ops = &csv_ops,
};

DLG_PLUGIN("csv", &csv_desc)
