/* CSV results (RFC 4180, parsed by libcsv): the header is `time`, the tags
 * (sorted), then the fields starting with `throughput`, as the csv sink
 * writes it.  Empty cells are absent values.  Records are counted as libcsv
 * reports them, the header being record 1 (blank lines are not records);
 * a row also keeps the line it starts on, for messages. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <dlgauge/plugin.h>

#include "config_line.h"
#include "rows.h"

typedef struct csv_state {
    rep_rows *rs;
    const char *src;
    char **cells; /* the record being assembled */
    size_t ncells, cap;
    char **head;
    size_t nhead;
    size_t first_field;  /* index of `throughput` in head */
    long record;         /* 1-based record number */
    long lines;          /* lines fed to libcsv before the current one */
    long cell_lines;     /* newlines inside the record's (quoted) cells */
    size_t nrows;        /* rows taken */
    long nskipped;       /* rows whose column count is not the header's */
    long skipped;        /* the first of them: its record number, */
    size_t skipped_cols; /* and its column count */
    size_t rec_start;    /* byte where the record being read starts */
    bool quoted;         /* the bytes so far end inside quotes */
    int rc;
    char *err;
    size_t errlen;
} csv_state;

static void clear_cells(csv_state *s)
{
    for (size_t i = 0; i < s->ncells; i++)
        free(s->cells[i]);
    s->ncells = 0;
}

static void on_cell(void *p, size_t len, void *data)
{
    csv_state *s = data;
    if (s->rc)
        return;
    if (s->ncells == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **nc = realloc(s->cells, cap * sizeof *nc);
        if (!nc)
            goto oom;
        s->cells = nc;
        s->cap = cap;
    }
    char *c = strndup(p ? p : "", p ? len : 0);
    if (!c)
        goto oom;
    s->cells[s->ncells++] = c;
    for (size_t i = 0; p && i < len; i++)
        s->cell_lines += ((const char *)p)[i] == '\n';
    return;
oom:
    snprintf(s->err, s->errlen, "%s: out of memory at record %ld", s->src, s->record + 1); /* not counted yet */
    s->rc = -DLG_ENOMEM;
}

static int take_header(csv_state *s)
{
    s->head = s->cells;
    s->nhead = s->ncells;
    s->cells = NULL;
    s->ncells = s->cap = 0;
    if (s->nhead) /* a spreadsheet saving "CSV UTF-8" starts the file with a byte-order mark */
        dlg_ini_strip_bom(s->head[0]);
    if (s->nhead == 0 || strcmp(s->head[0], "time") != 0) {
        snprintf(s->err, s->errlen, "%s:1: not a dlgauge results file: the header must start with 'time'", s->src);
        return -DLG_EINVAL;
    }
    for (size_t i = 1; i < s->nhead; i++)
        if (strcmp(s->head[i], "throughput") == 0) {
            s->first_field = i;
            return 0;
        }
    snprintf(s->err, s->errlen, "%s:1: missing column 'throughput' (needed for the scaling curves)", s->src);
    return -DLG_EINVAL;
}

static int take_row(csv_state *s)
{
    if (s->ncells == 1 && !*s->cells[0])
        return 0; /* a blank line */
    if (s->ncells != s->nhead) {
        /* the csv sink ends a line cut short by a crash and appends after
         * it: one short row in the middle must not cost the whole file */
        if (s->nskipped++ == 0) {
            s->skipped = s->record;
            s->skipped_cols = s->ncells;
        }
        return 0;
    }
    /* the record ends on the current line; blank lines before it and
     * newlines in quoted cells make its record number no line number */
    rep_row *r = rep_rows_add(s->rs, s->src, s->lines + 1 - s->cell_lines);
    if (!r)
        return -DLG_ENOMEM;
    s->nrows++;
    for (size_t i = 1; i < s->nhead; i++)
        if (*s->cells[i] && rep_row_put(r, i < s->first_field, s->head[i], s->cells[i]) != 0)
            return -DLG_ENOMEM;
    return 0;
}

static void on_record(int term, void *data)
{
    csv_state *s = data;
    if (s->rc)
        return;
    s->record++;
    int rc = s->record == 1 ? take_header(s) : take_row(s);
    clear_cells(s);
    s->cell_lines = 0;
    if (rc == -DLG_ENOMEM)
        snprintf(s->err, s->errlen, "%s: out of memory at record %ld", s->src, s->record);
    s->rc = rc;
}

/* Skipped rows: one warning, or the error when no row was left. */
static int report_skipped(const csv_state *s)
{
    if (s->nskipped == 0)
        return 0;
    if (s->nrows == 0) {
        snprintf(s->err, s->errlen, "%s: record %ld has %zu columns, the header has %zu; no row matches the header",
                 s->src, s->skipped, s->skipped_cols, s->nhead);
        return -DLG_EINVAL;
    }
    if (rep_rows_warn(s->rs, "%s: record %ld: %zu columns, the header has %zu (a line cut short by a crash?); "
                             "%ld row%s skipped",
                      s->src, s->skipped, s->skipped_cols, s->nhead, s->nskipped, s->nskipped > 1 ? "s" : "") != 0) {
        snprintf(s->err, s->errlen, "%s: out of memory", s->src);
        return -DLG_ENOMEM;
    }
    return 0;
}

/* Moves s->rec_start past each line end outside quotes in buf (at byte
 * off): a last record that never gets one was cut short ("" inside
 * quotes toggles twice, as it should). */
static void scan(csv_state *s, const char *buf, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '"')
            s->quoted = !s->quoted;
        else if (buf[i] == '\n' && !s->quoted)
            s->rec_start = off + i + 1;
    }
}

/* Whether bytes [from, end) of the file hold more than blanks: a record
 * with no line end after it. */
static bool cut_at_end(FILE *f, size_t from, size_t end)
{
    if (from >= end || fseeko(f, (off_t)from, SEEK_SET) != 0)
        return false;
    for (int c; (c = getc(f)) != EOF;)
        if (c != ' ' && c != '\t' && c != '\r')
            return true;
    return false;
}

/* The csv sink's rule: a last record without a line end was cut short by
 * a crash (cut in a quoted field it would fail the whole file, cut in its
 * last column it would read with a wrong value): skipped with one
 * warning, or the error when no row is left. */
static int skip_cut(csv_state *s)
{
    long rec = s->record + 1; /* libcsv never ended it */
    if (s->record == 0) {
        snprintf(s->err, s->errlen, "%s: byte 0: the header has no line end (cut short by a crash?); no rows",
                 s->src);
        return -DLG_EINVAL;
    }
    if (s->nrows == 0) {
        snprintf(s->err, s->errlen, "%s: record %ld, at byte %zu, has no line end (cut short by a crash?); no "
                 "complete row", s->src, rec, s->rec_start);
        return -DLG_EINVAL;
    }
    if (rep_rows_warn(s->rs, "%s: record %ld, at byte %zu, has no line end (cut short by a crash?); skipped",
                      s->src, rec, s->rec_start) != 0) {
        snprintf(s->err, s->errlen, "%s: out of memory", s->src);
        return -DLG_ENOMEM;
    }
    return 0;
}

/* buf (at byte off of path) to libcsv a line at a time, so that the
 * callbacks know the line they are on. */
static void feed(struct csv_parser *p, csv_state *s, const char *path, const char *buf, size_t n, size_t off)
{
    for (size_t i = 0, k; i < n && !s->rc; i += k) {
        const char *nl = memchr(buf + i, '\n', n - i);
        k = nl ? (size_t)(nl - buf) + 1 - i : n - i;
        size_t used = csv_parse(p, buf + i, k, on_cell, on_record, s);
        if (used != k && !s->rc) {
            snprintf(s->err, s->errlen, "%s: byte %zu: CSV error: %s", path, off + i + used,
                     csv_strerror(csv_error(p)));
            s->rc = -DLG_ECORRUPT;
        }
        s->lines += nl != NULL;
    }
}

int rep_read_csv(rep_rows *rs, const char *path, const char *src, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -DLG_EIO;
    }
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return -DLG_ENOMEM;
    }
    csv_state s = {.rs = rs, .src = src, .err = err, .errlen = errlen};
    char buf[65536];
    size_t n, off = 0;
    while (!s.rc && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        scan(&s, buf, n, off);
        feed(&p, &s, path, buf, n, off);
        off += n;
    }
    if (!s.rc && ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
        s.rc = -DLG_EIO;
    }
    bool cut = !s.rc && cut_at_end(f, s.rec_start, off);
    if (cut) /* not to libcsv's end, which would take it as a record */
        s.rc = skip_cut(&s);
    else if (!s.rc && csv_fini(&p, on_cell, on_record, &s) != 0 && !s.rc) {
        snprintf(err, errlen, "%s: byte %zu: CSV error at the end: %s", path, off, csv_strerror(csv_error(&p)));
        s.rc = -DLG_ECORRUPT;
    }
    if (!s.rc && s.record == 0) {
        snprintf(err, errlen, "%s: empty file (no header, no rows)", path);
        s.rc = -DLG_EINVAL;
    }
    if (!s.rc)
        s.rc = report_skipped(&s);
    csv_free(&p);
    fclose(f);
    clear_cells(&s);
    free(s.cells);
    for (size_t i = 0; i < s.nhead; i++)
        free(s.head[i]);
    free(s.head);
    return s.rc;
}
