/* The .idx side file of an indexed RecordIO: "key<TAB>offset<NEWLINE>" per
 * record, offset = byte position of the record's magic (MXIndexedRecordIO). */
#include "recordio.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text_lines.h"

#define IDX_MAX_BYTES (1u << 30)

/* Strict decimal u64: digits only, no sign, no overflow. */
static bool parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static int parse_line(char *line, size_t len, const char *name, size_t lineno, uint64_t rec_size,
                      const char *rec_name, dlg_rec_idx_entry *e, dlg_data_err *err)
{
    if (strlen(line) != len)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: line contains a NUL byte", name, lineno);
    /* MXNet's Python writes key<TAB>offset; dmlc's C++ reader takes any
     * blanks between the two (a key of no blanks then), and so do we */
    char *tab = strchr(line, '\t');
    if (!tab && (tab = strchr(line + strspn(line, " "), ' ')) && !tab[strspn(tab, " ")])
        tab = NULL; /* blanks only after the key: no offset */
    if (!tab)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: expected 'key<TAB>offset', no offset found",
                             name, lineno);
    if (tab == line)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: empty key", name, lineno);
    *tab = '\0';
    char *num = tab + 1;
    /* Tolerate blanks around the offset, as Python's int() does. */
    while (*num == ' ' || *num == '\t')
        num++;
    for (size_t n = strlen(num); n > 0 && (num[n - 1] == ' ' || num[n - 1] == '\t'); n--)
        num[n - 1] = '\0';
    uint64_t off;
    if (!parse_u64(num, &off))
        return dlg_data_fail(err, DLG_ECORRUPT, "%s:%zu: offset '%.40s' is not a decimal number",
                             name, lineno, num);
    /* the end first: an offset far past it is no near miss of a record start */
    if (rec_size != DLG_SIZE_UNKNOWN && (off >= rec_size || rec_size - off < DLG_REC_HEADER_SIZE))
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s:%zu: offset %" PRIu64 " is past the end of %s (%" PRIu64
                             " bytes)",
                             name, lineno, off, rec_name ? rec_name : "the .rec", rec_size);
    if (off % 4 != 0)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s:%zu: offset %" PRIu64 " is not a multiple of 4, so not a "
                             "record start",
                             name, lineno, off);
    e->key = line;
    e->offset = off;
    return 0;
}

int dlg_rec_idx_parse(dlg_rec_idx *out, const char *text, size_t len, const char *name,
                      uint64_t rec_size, const char *rec_name, dlg_data_err *err)
{
    memset(out, 0, sizeof *out);
    char *copy = malloc(len + 1);
    if (!copy)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
    memcpy(copy, text, len);
    copy[len] = '\0';
    out->text_ = copy;
    size_t cap = 0;
    text_lines t;
    text_lines_init(&t, copy, len);
    char *line;
    size_t llen;
    while (text_lines_next(&t, &line, &llen)) {
        if (llen == strlen(line) && text_is_blank(line))
            continue;
        if (out->n == cap) {
            cap = cap ? cap * 2 : 256;
            dlg_rec_idx_entry *e = realloc(out->entries, cap * sizeof *e);
            if (!e) {
                dlg_rec_idx_free(out);
                return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
            }
            out->entries = e;
        }
        int rc = parse_line(line, llen, name, t.lineno, rec_size, rec_name, &out->entries[out->n],
                            err);
        if (rc < 0) {
            dlg_rec_idx_free(out);
            return rc;
        }
        out->n++;
    }
    return 0;
}

int dlg_rec_idx_load(dlg_rec_idx *out, const dlg_source *src, uint64_t rec_size,
                     const char *rec_name, dlg_data_err *err)
{
    char *text;
    size_t len;
    int rc = dlg_source_slurp(src, IDX_MAX_BYTES, &text, &len, err);
    if (rc < 0)
        return rc;
    rc = dlg_rec_idx_parse(out, text, len, src->name, rec_size, rec_name, err);
    free(text);
    return rc;
}

void dlg_rec_idx_free(dlg_rec_idx *idx)
{
    free(idx->entries);
    free(idx->text_);
    memset(idx, 0, sizeof *idx);
}

int dlg_rec_idx_append(const dlg_output *o, const char *key, uint64_t offset, dlg_data_err *err)
{
    if (key[strcspn(key, "\t\r\n")] != '\0')
        return dlg_data_fail(err, DLG_EINVAL, "%s: .idx key '%.60s' contains a tab or newline",
                             o->name, key);
    size_t klen = strlen(key);
    char stackbuf[256];
    char *buf = klen + 32 <= sizeof stackbuf ? stackbuf : malloc(klen + 32);
    if (!buf)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", o->name);
    int n = snprintf(buf, klen + 32, "%s\t%" PRIu64 "\n", key, offset);
    errno = 0; /* an fd output leaves the write's reason (a full disk) here */
    int64_t r = o->write(o->ctx, buf, (size_t)n);
    int e = errno;
    if (buf != stackbuf)
        free(buf);
    if (r < 0)
        return dlg_data_fail(err, (int)-r, "%s: write failed%s%s", o->name, e ? ": " : "",
                             e ? strerror(e) : "");
    return 0;
}
