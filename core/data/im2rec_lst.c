/* im2rec's .lst input: "index<TAB>label[<TAB>label...]<TAB>path".  Fields
 * are whitespace-trimmed as im2rec.py does; the path is the last field. */
#include "recordio.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text_lines.h"

#define LST_MAX_BYTES (1u << 30)

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

static char *trim(char *s)
{
    while (is_ws(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && is_ws(s[n - 1]))
        s[--n] = '\0';
    return s;
}

static bool parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!*s || is_ws(*s))
        return false;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

/* 0, or why s is no label: NOT_NUMBER, or TOO_BIG for float32. */
enum { NOT_NUMBER = 1, TOO_BIG = 2 };

static int parse_float(const char *s, float *out)
{
    char *end;
    if (!*s || is_ws(*s))
        return NOT_NUMBER;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || (errno == ERANGE && isinf(v)))
        return NOT_NUMBER;
    /* im2rec.py parses a double, then packs float32: struct.pack refuses
     * a finite value that rounds to infinity (it would train on inf) */
    *out = (float)v;
    return isinf(*out) && !isinf(v) ? TOO_BIG : 0;
}

typedef struct lst_build {
    size_t cap_items, n_labels, cap_labels;
    size_t *label_start; /* per item, an index into labels_ until fix-up */
} lst_build;

static int push_label(dlg_lst *l, lst_build *b, float v)
{
    if (b->n_labels == b->cap_labels) {
        size_t cap = b->cap_labels ? b->cap_labels * 2 : 256;
        float *p = realloc(l->labels_, cap * sizeof *p);
        if (!p)
            return -1;
        l->labels_ = p;
        b->cap_labels = cap;
    }
    l->labels_[b->n_labels++] = v;
    return 0;
}

static int push_item(dlg_lst *l, lst_build *b)
{
    if (l->n < b->cap_items)
        return 0;
    size_t cap = b->cap_items ? b->cap_items * 2 : 256;
    dlg_lst_item *it = realloc(l->items, cap * sizeof *it);
    if (!it)
        return -1;
    l->items = it;
    size_t *ls = realloc(b->label_start, cap * sizeof *ls);
    if (!ls)
        return -1;
    b->label_start = ls;
    b->cap_items = cap;
    return 0;
}

static int parse_line(dlg_lst *l, lst_build *b, char *line, const char *name, size_t lineno,
                      dlg_data_err *err)
{
    char *fields[3];
    line = trim(line); /* im2rec.py strips the line before splitting at tabs */
    char *first_tab = strchr(line, '\t'), *last_tab = strrchr(line, '\t');
    if (!first_tab || first_tab == last_tab)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s:%zu: expected 'index<TAB>label<TAB>path' (at least 3 "
                             "tab-separated fields)",
                             name, lineno);
    *first_tab = '\0';
    *last_tab = '\0';
    fields[0] = trim(line);
    fields[1] = first_tab + 1;
    fields[2] = trim(last_tab + 1);
    int64_t index;
    if (!parse_i64(fields[0], &index))
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: index '%.40s' is not an integer", name,
                             lineno, fields[0]);
    if (!*fields[2])
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: empty path", name, lineno);
    if (push_item(l, b) < 0)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
    b->label_start[l->n] = b->n_labels;
    size_t nlab = 0;
    for (char *f = fields[1], *next; f; f = next) {
        char *tab = strchr(f, '\t');
        next = tab ? tab + 1 : NULL;
        if (tab)
            *tab = '\0';
        f = trim(f);
        float v;
        int why = parse_float(f, &v);
        if (why)
            return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: label %zu '%.40s' is %s", name,
                                 lineno, nlab + 1, f,
                                 why == TOO_BIG ? "outside the float32 range" : "not a number");
        if (push_label(l, b, v) < 0)
            return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
        nlab++;
    }
    l->items[l->n] = (dlg_lst_item){.index = index, .path = fields[2], .nlabels = nlab};
    l->n++;
    return 0;
}

int dlg_lst_parse(dlg_lst *out, const char *text, size_t len, const char *name,
                  dlg_data_err *err)
{
    memset(out, 0, sizeof *out);
    lst_build b = {0};
    out->text_ = malloc(len + 1);
    if (!out->text_)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
    memcpy(out->text_, text, len);
    out->text_[len] = '\0';
    text_lines t;
    text_lines_init(&t, out->text_, len);
    char *line;
    size_t llen;
    int rc = 0;
    while (rc == 0 && text_lines_next(&t, &line, &llen)) {
        if (strlen(line) != llen)
            rc = dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: line contains a NUL byte", name,
                               t.lineno);
        else if (!text_is_blank(line))
            rc = parse_line(out, &b, line, name, t.lineno, err);
    }
    if (rc == 0)
        for (size_t i = 0; i < out->n; i++)
            out->items[i].labels = out->labels_ + b.label_start[i];
    free(b.label_start);
    if (rc < 0)
        dlg_lst_free(out);
    return rc;
}

int dlg_lst_load(dlg_lst *out, const dlg_source *src, dlg_data_err *err)
{
    char *text;
    size_t len;
    int rc = dlg_source_slurp(src, LST_MAX_BYTES, &text, &len, err);
    if (rc < 0)
        return rc;
    rc = dlg_lst_parse(out, text, len, src->name, err);
    free(text);
    return rc;
}

void dlg_lst_free(dlg_lst *l)
{
    free(l->items);
    free(l->labels_);
    free(l->text_);
    memset(l, 0, sizeof *l);
}
