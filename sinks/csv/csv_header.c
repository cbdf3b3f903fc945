#include "csv_header.h"

#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "csv_row.h"

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Every column of a header line, unquoted. */
static int split(const char *line, char ***out, size_t *n)
{
    dlg_sbuf cell = {0};
    char **v = NULL;
    size_t len = 0;
    int rc;
    while ((rc = csv_column(line, len, &cell)) == 1) {
        char **nv = realloc(v, (len + 1) * sizeof *nv);
        if (!nv || !(nv[len] = strdup(cell.p))) {
            v = nv ? nv : v;
            rc = -DLG_ENOMEM;
            break;
        }
        v = nv;
        len++;
    }
    sbuf_free(&cell);
    if (rc < 0) {
        free_list(v, len);
        return rc;
    }
    *out = v;
    *n = len;
    return 0;
}

/* Position of name among v[0..n), or n when it is not there or is there
 * more than once (ambiguous). */
static size_t position(char *const *v, size_t n, const char *name)
{
    size_t at = n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], name) == 0) {
            if (at != n)
                return n;
            at = i;
        }
    return at;
}

/* 1 and *missing, or 0 and *first_field when our tags all come before our
 * fields among the file's columns v[0..n). */
static int place(char *const *v, size_t n, const char *const *cols, size_t ntags, size_t nfields,
                 size_t *first_field, const char **missing)
{
    size_t last_tag = 0, first = n;
    *missing = NULL;
    for (size_t i = 0; i < ntags + nfields; i++) {
        size_t at = position(v, n, cols[i]);
        if (at == n) {
            *missing = cols[i];
            return 1;
        }
        if (i < ntags && at + 1 > last_tag)
            last_tag = at + 1;
        if (i >= ntags && at < first)
            first = at;
    }
    *first_field = first;
    return last_tag <= first ? 0 : 1;
}

int csv_header_fit(const char *line, const char *const *cols, size_t ntags, size_t nfields, char ***file_cols,
                   size_t *nfile, size_t *file_ntags, const char **missing)
{
    char **v;
    size_t n;
    if (split(line, &v, &n) != 0)
        return -DLG_ENOMEM;
    *missing = NULL;
    size_t first = 0;
    int rc = n == 0 || strcmp(v[0], "time") != 0 ? 1 : place(v + 1, n - 1, cols, ntags, nfields, &first, missing);
    if (rc != 0) {
        free_list(v, n);
        return rc;
    }
    free(v[0]);
    memmove(v, v + 1, (n - 1) * sizeof *v);
    *file_cols = v;
    *nfile = n - 1;
    *file_ntags = first;
    return 0;
}
