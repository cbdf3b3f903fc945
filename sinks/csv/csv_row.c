#include "csv_row.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "sinkfmt.h"

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* Readers trim blanks around unquoted fields (libcsv, and so `dlgauge
 * report`, does): a value that starts or ends with one is quoted. */
static bool needs_quotes(const char *s)
{
    size_t n = strlen(s);
    return s[strcspn(s, ",\"\r\n")] || (n && (is_blank(s[0]) || is_blank(s[n - 1])));
}

int csv_add_field(dlg_sbuf *b, const char *s)
{
    if (!needs_quotes(s))
        return sbuf_adds(b, s);
    int rc = sbuf_addc(b, '"');
    for (const char *q; rc == 0 && (q = strchr(s, '"')); s = q + 1) {
        rc = sbuf_add(b, s, (size_t)(q - s) + 1);
        if (rc == 0)
            rc = sbuf_addc(b, '"');
    }
    if (rc == 0)
        rc = sbuf_adds(b, s);
    return rc ? rc : sbuf_addc(b, '"');
}

int csv_add_header(dlg_sbuf *b, const char *const *tags, size_t ntags,
                   const char *const *fields, size_t nfields)
{
    int rc = sbuf_adds(b, "time");
    for (size_t i = 0; i < ntags && rc == 0; i++) {
        rc = sbuf_addc(b, ',');
        if (rc == 0)
            rc = csv_add_field(b, tags[i]);
    }
    for (size_t i = 0; i < nfields && rc == 0; i++) {
        rc = sbuf_addc(b, ',');
        if (rc == 0)
            rc = csv_add_field(b, fields[i]);
    }
    return rc ? rc : sbuf_addc(b, '\n');
}

static int add_value(dlg_sbuf *b, const dlg_field *f)
{
    char num[32];
    switch (f->type) {
    case DLG_FIELD_DOUBLE:
        if (!isfinite(f->v.d))
            return 0; /* no measurement: an empty cell, like a missing one */
        sink_fmt_double(f->v.d, num);
        return sbuf_adds(b, num);
    case DLG_FIELD_INT:
        return sbuf_printf(b, "%" PRId64, f->v.i);
    case DLG_FIELD_UINT:
        return sbuf_printf(b, "%" PRIu64, f->v.u);
    case DLG_FIELD_STRING:
        return csv_add_field(b, f->v.s ? f->v.s : "");
    case DLG_FIELD_BOOL:
        return sbuf_adds(b, f->v.b ? "true" : "false");
    }
    return 0;
}

static const dlg_tag *find_tag(const dlg_point *p, const char *key)
{
    for (size_t i = 0; i < p->ntags; i++)
        if (strcmp(p->tags[i].key, key) == 0)
            return &p->tags[i];
    return NULL;
}

static const dlg_field *find_field(const dlg_point *p, const char *key)
{
    for (size_t i = 0; i < p->nfields; i++)
        if (strcmp(p->fields[i].key, key) == 0)
            return &p->fields[i];
    return NULL;
}

int csv_add_row(dlg_sbuf *b, const dlg_point *p, const char *const *tags, size_t ntags,
                const char *const *fields, size_t nfields)
{
    char when[40];
    sink_fmt_rfc3339(p->time_ns, when);
    int rc = sbuf_adds(b, when);
    for (size_t i = 0; i < ntags && rc == 0; i++) {
        const dlg_tag *t = find_tag(p, tags[i]);
        rc = sbuf_addc(b, ',');
        if (rc == 0 && t && t->value)
            rc = csv_add_field(b, t->value);
    }
    for (size_t i = 0; i < nfields && rc == 0; i++) {
        const dlg_field *f = find_field(p, fields[i]);
        rc = sbuf_addc(b, ',');
        if (rc == 0 && f)
            rc = add_value(b, f);
    }
    return rc ? rc : sbuf_addc(b, '\n');
}

int csv_column(const char *line, size_t index, dlg_sbuf *out)
{
    const char *s = line;
    for (size_t col = 0;; col++) {
        sbuf_truncate(out, 0);
        int rc = sbuf_reserve(out, 0);
        bool quoted = *s == '"';
        if (quoted)
            s++;
        for (; *s; s++) {
            if (quoted && s[0] == '"' && s[1] == '"') {
                s++;
            } else if (quoted && *s == '"') {
                quoted = false;
                continue;
            } else if (!quoted && *s == ',') {
                break;
            }
            if (rc == 0)
                rc = sbuf_addc(out, *s);
        }
        if (rc != 0)
            return rc;
        if (col == index)
            return 1;
        if (*s != ',')
            return 0;
        s++;
    }
}

void csv_scan_add(csv_scan *c, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '"')
            c->quoted = !c->quoted; /* a doubled quote toggles twice */
        else if (buf[i] == '\n' && !c->quoted)
            c->start = c->len + i + 1;
    }
    c->len += n;
}
