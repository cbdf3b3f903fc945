/* convert_imageset list files: "relative/path label", split at the last
 * space like Caffe's `line.find_last_of(' ')`, so paths may hold spaces. */
#include "listfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text_lines.h"

#define LIST_MAX_BYTES (1u << 30)

static bool parse_i32(const char *s, int32_t *out)
{
    char *end;
    if (!*s || *s == ' ' || *s == '\t')
        return false;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < INT32_MIN || v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    return true;
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
                                                  "format, not a convert_imageset list"
                                                : "");
    *sp = '\0';
    int32_t label;
    if (!parse_i32(sp + 1, &label))
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: label '%.40s' is not an integer", name,
                             lineno, sp + 1);
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

int dlg_filelist_load(dlg_filelist *out, const dlg_source *src, dlg_data_err *err)
{
    char *text;
    size_t len;
    int rc = dlg_source_slurp(src, LIST_MAX_BYTES, &text, &len, err);
    if (rc < 0)
        return rc;
    rc = dlg_filelist_parse(out, text, len, src->name, err);
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
