/* convert_imageset list files: "relative/path label", split at the last
 * space like Caffe's `line.find_last_of(' ')`, so paths may hold spaces;
 * and im2rec's .lst read as one (dlg_lst_parse's fields, the first label). */
#include "listfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "recordio.h"
#include "text_lines.h"

#define LIST_MAX_BYTES (1u << 30)

/* A label: 0, or NOT_INT / RANGE, so that 99999999999 is called out of
 * range rather than not an integer. */
enum { LABEL_OK, LABEL_NOT_INT, LABEL_RANGE };

static int parse_i32(const char *s, int32_t *out)
{
    char *end;
    if (!*s || *s == ' ' || *s == '\t')
        return LABEL_NOT_INT;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end)
        return LABEL_NOT_INT;
    if (errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
        return LABEL_RANGE;
    *out = (int32_t)v;
    return LABEL_OK;
}

/* Drops trailing blanks: "path 3 " would otherwise split at the last blank
 * into an empty label (Caffe's atoi makes that a silent label 0). */
static void trim_end(char *line)
{
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
        line[--n] = '\0';
}

static int parse_line(dlg_filelist *l, size_t *cap, char *line, const char *name, size_t lineno,
                      dlg_data_err *err)
{
    trim_end(line);
    char *sp = strrchr(line, ' ');
    if (!sp)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s:%zu: expected 'relative/path label' (no space found%s)", name,
                             lineno,
                             strchr(line, '\t') ? "; tab-separated fields are im2rec's .lst "
                                                  "format: name the file *.lst"
                                                : "");
    *sp = '\0';
    int32_t label;
    int why = parse_i32(sp + 1, &label);
    if (why == LABEL_NOT_INT)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: label '%.40s' is not an integer", name,
                             lineno, sp + 1);
    if (why == LABEL_RANGE)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: label '%.40s' is out of range (a label is "
                             "an int32: %d..%d)", name, lineno, sp + 1, INT32_MIN, INT32_MAX);
    if (sp == line)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: empty path", name, lineno);
    if (l->n == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        dlg_list_entry *e = realloc(l->entries, *cap * sizeof *e);
        if (!e)
            return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
        l->entries = e;
    }
    l->entries[l->n++] = (dlg_list_entry){line, label};
    return 0;
}

int dlg_filelist_parse(dlg_filelist *out, const char *text, size_t len, const char *name,
                       dlg_data_err *err)
{
    memset(out, 0, sizeof *out);
    out->pool_ = malloc(len + 1);
    if (!out->pool_)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
    memcpy(out->pool_, text, len);
    out->pool_[len] = '\0';
    text_lines t;
    text_lines_init(&t, out->pool_, len);
    char *line;
    size_t llen, cap = 0;
    int rc = 0;
    while (rc == 0 && text_lines_next(&t, &line, &llen)) {
        if (strlen(line) != llen)
            rc = dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: line contains a NUL byte", name,
                               t.lineno);
        else if (!text_is_blank(line))
            rc = parse_line(out, &cap, line, name, t.lineno, err);
    }
    if (rc < 0)
        dlg_filelist_free(out);
    return rc;
}

/* The line of the k-th item of .lst text: dlg_lst_parse skips blank
 * lines only.  For an error message; 0 if out of memory. */
static size_t lst_line(const char *text, size_t len, size_t k)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, text, len);
    copy[len] = '\0';
    text_lines t;
    text_lines_init(&t, copy, len);
    char *line;
    size_t llen, lineno = 0;
    while (text_lines_next(&t, &line, &llen))
        if (!text_is_blank(line) && k-- == 0) {
            lineno = t.lineno;
            break;
        }
    free(copy);
    return lineno;
}

int dlg_filelist_parse_lst(dlg_filelist *out, const char *text, size_t len, const char *name,
                           dlg_data_err *err)
{
    memset(out, 0, sizeof *out);
    dlg_lst l;
    int rc = dlg_lst_parse(&l, text, len, name, err);
    if (rc < 0)
        return rc;
    out->pool_ = l.text_; /* the items' paths point into it */
    l.text_ = NULL;
    out->entries = malloc((l.n ? l.n : 1) * sizeof *out->entries);
    if (!out->entries)
        rc = dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        /* a class index: im2rec writes "3.000000"; 2.5 is a regression target */
        float f = l.items[i].labels[0];
        if (!(f >= -2147483648.0f && f < 2147483648.0f) || f != floorf(f))
            rc = dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: label %g is not a class index (an integer)", name,
                               lst_line(text, len, i), (double)f);
        else
            out->entries[out->n++] = (dlg_list_entry){l.items[i].path, (int32_t)f};
    }
    dlg_lst_free(&l);
    if (rc < 0)
        dlg_filelist_free(out);
    return rc;
}

bool dlg_filelist_is_lst(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".lst") == 0;
}

int dlg_filelist_load(dlg_filelist *out, const dlg_source *src, dlg_data_err *err)
{
    char *text;
    size_t len;
    int rc = dlg_source_slurp(src, LIST_MAX_BYTES, &text, &len, err);
    if (rc < 0)
        return rc;
    rc = dlg_filelist_is_lst(src->name) ? dlg_filelist_parse_lst(out, text, len, src->name, err)
                                        : dlg_filelist_parse(out, text, len, src->name, err);
    free(text);
    return rc;
}

void dlg_filelist_free(dlg_filelist *l)
{
    free(l->entries);
    free(l->classes);
    free(l->pool_);
    free(l->off_);
    memset(l, 0, sizeof *l);
}
