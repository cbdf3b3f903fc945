/* A result sink: one tab-separated line per result, under a header that
 * begin() writes from the run's schema (every tag and field of the run is
 * known before the first point).  It shows what a sink needs: options as
 * data, a check() that --dry-run calls, points copied out during write()
 * (the host owns them), errors through the host, and a file that is
 * appended to, never replaced: open() runs again for `dlgauge run
 * --resume`, whose earlier rows are in the file already. */
#include <dlgauge/plugin.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PATH };
static const dlg_option tsv_options[] = {
    [OPT_PATH] = {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "file to append to (the header written when it is empty)",
                  DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},
    {0},
};

typedef struct tsv {
    const dlg_host *h;
    FILE *out;
    char *path;
    const char **cols; /* tag keys, then field names: the header's order */
    size_t ncols;
} tsv;

static void tsv_close(void *state)
{
    tsv *t = state;
    if (t->out && fclose(t->out) != 0)
        t->h->log(t->h, DLG_LOG_WARN, "%s: close: %s", t->path, strerror(errno));
    free(t->cols);
    free(t->path);
    free(t);
}

static int tsv_open(const dlg_host *h, const dlg_value *opts, const char *name, void **state)
{
    (void)name; /* the host's messages name the [sink] already */
    tsv *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(opts[OPT_PATH].text))) {
        free(t);
        return h->error(h, DLG_ENOMEM, "out of memory");
    }
    t->h = h;
    if (!(t->out = fopen(t->path, "a+"))) {
        /* starting with the key: the host names path's file:line */
        int rc = h->error(h, DLG_EIO, "path = %s: %s", t->path, strerror(errno));
        tsv_close(t);
        return rc;
    }
    *state = t;
    return 0;
}

/* The header line of cols, tab-separated, into a new string. */
static char *header_of(const char **cols, size_t n)
{
    size_t len = 2;
    for (size_t i = 0; i < n; i++)
        len += strlen(cols[i]) + 1;
    char *line = malloc(len), *p = line;
    for (size_t i = 0; line && i < n; i++)
        p += sprintf(p, "%s%s", i ? "\t" : "", cols[i]);
    if (line)
        strcpy(p, "\n");
    return line;
}

/* Writes header into an empty file; a file that has rows must start with
 * it (a run of other columns would put its rows under the wrong names). */
static int start_file(tsv *t, const char *header)
{
    if (fseek(t->out, 0, SEEK_END) != 0)
        return t->h->error(t->h, DLG_EIO, "%s: %s", t->path, strerror(errno));
    if (ftell(t->out) == 0) {
        fputs(header, t->out);
        return fflush(t->out) == 0 ? 0 : t->h->error(t->h, DLG_EIO, "%s: cannot write: %s", t->path, strerror(errno));
    }
    char first[4096] = "";
    rewind(t->out);
    if (!fgets(first, sizeof first, t->out) || strcmp(first, header) != 0)
        return t->h->error(t->h, DLG_EINVAL, "path = %s: its header is not this run's columns; choose another "
                           "file", t->path);
    /* output after input needs a seek between (C11 7.21.5.3) */
    return fseek(t->out, 0, SEEK_END) == 0 ? 0 : t->h->error(t->h, DLG_EIO, "%s: %s", t->path, strerror(errno));
}

/* The header, and the columns' order for write() (the schema's names
 * stay valid until close(): plugin.h). */
static int tsv_begin(void *state, const dlg_schema *s)
{
    tsv *t = state;
    free(t->cols);
    t->ncols = s->ntags + s->nfields;
    if (!(t->cols = calloc(t->ncols ? t->ncols : 1, sizeof *t->cols)))
        return t->h->error(t->h, DLG_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->ntags; i++)
        t->cols[i] = s->tags[i];
    for (size_t i = 0; i < s->nfields; i++)
        t->cols[s->ntags + i] = s->fields[i].name;
    char *header = header_of(t->cols, t->ncols);
    if (!header)
        return t->h->error(t->h, DLG_ENOMEM, "out of memory");
    int rc = start_file(t, header);
    free(header);
    return rc;
}

static void put_field(FILE *out, const dlg_field *f)
{
    switch (f->type) {
    case DLG_FIELD_DOUBLE: fprintf(out, "%.17g", f->v.d); break;
    case DLG_FIELD_INT: fprintf(out, "%" PRId64, f->v.i); break;
    case DLG_FIELD_UINT: fprintf(out, "%" PRIu64, f->v.u); break;
    case DLG_FIELD_BOOL: fputs(f->v.b ? "true" : "false", out); break;
    case DLG_FIELD_STRING: /* a tab or newline would shift the columns */
        for (const char *c = f->v.s; c && *c; c++)
            fputc(*c == '\t' || *c == '\n' ? ' ' : *c, out);
        break;
    }
}

/* One column's value in a point: a tag, a field, or empty. */
static void put_column(FILE *out, const dlg_point *p, const char *col)
{
    for (size_t i = 0; i < p->ntags; i++)
        if (strcmp(p->tags[i].key, col) == 0) {
            fputs(p->tags[i].value, out);
            return;
        }
    for (size_t i = 0; i < p->nfields; i++)
        if (strcmp(p->fields[i].key, col) == 0) {
            put_field(out, &p->fields[i]);
            return;
        }
}

static int tsv_write(void *state, const dlg_point *pts, size_t n)
{
    tsv *t = state;
    for (size_t k = 0; k < n; k++) {
        if (strcmp(pts[k].measurement, "dlgauge_result") != 0)
            continue; /* per-second progress points */
        for (size_t i = 0; i < t->ncols; i++) {
            if (i)
                fputc('\t', t->out);
            put_column(t->out, &pts[k], t->cols[i]);
        }
        fputc('\n', t->out);
    }
    /* results are written as they are measured: a crash later loses none */
    if (fflush(t->out) != 0 || ferror(t->out))
        return t->h->error(t->h, DLG_EIO, "%s: cannot write: %s", t->path, strerror(errno));
    return 0;
}

static int tsv_flush(void *state, uint64_t timeout_ns)
{
    (void)timeout_ns; /* a local file never waits */
    tsv *t = state;
    return fflush(t->out) == 0 ? 0 : t->h->error(t->h, DLG_EIO, "%s: %s", t->path, strerror(errno));
}

/* --dry-run: what open() would refuse, without creating anything. */
static int tsv_check(const dlg_host *h, const dlg_value *opts, const char *name)
{
    (void)name;
    const char *path = opts[OPT_PATH].text, *slash = strrchr(path, '/');
    if (path[0] == '\0' || (slash && slash[1] == '\0'))
        return h->error(h, DLG_EINVAL, "path = %s: names a folder, not a file", path);
    return 0;
}

/* version 3 with no spools op: it delivers as it writes, so `dlgauge
 * flush` leaves it closed (and creates no file). */
static const dlg_sink_ops tsv_ops = {
    .version = 3,
    .open = tsv_open,
    .begin = tsv_begin,
    .write = tsv_write,
    .flush = tsv_flush,
    .close = tsv_close,
    .check = tsv_check,
};

static const dlg_plugin_desc tsv_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_SINK,
    .name = "tsv",
    .version = "1.0",
    .summary = "results as tab-separated lines under a header",
    .options = tsv_options,
    .ops = &tsv_ops,
};

DLG_PLUGIN("tsv", &tsv_desc)
