/* RecordIO source: the .idx gives each record's offset; the span up to the
 * next record is read with one storage call and parsed in memory (a split
 * record is reassembled with its magic re-inserted, as dmlc's reader does).
 * Without an .idx the .rec is scanned once at open. */
#include "loader_src.h"
#include "recordio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIRST_READ (1u << 20) /* cap on the first read when the span is large */

typedef struct rec_item {
    uint64_t off, span;
} rec_item;

typedef struct rec_src {
    dlg_ld_src base;
    char *path;
    char *idx; /* the .idx the offsets came from, or NULL (scanned) */
    rec_item *items;
} rec_src;

typedef struct rec_worker {
    dlg_file *f;
    dlg_ld_buf buf;
    uint8_t *asm_; /* reassembled split records */
    size_t asm_cap;
} rec_worker;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* span(i) = next larger offset (or the file end) - off(i). */
static int fill_spans(rec_src *s, uint64_t size, dlg_data_err *err)
{
    uint64_t n = s->base.n;
    uint64_t *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", s->path);
    for (uint64_t i = 0; i < n; i++)
        sorted[i] = s->items[i].off;
    qsort(sorted, n, sizeof *sorted, cmp_u64);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t off = s->items[i].off, lo = 0, hi = n; /* first sorted > off */
        while (lo < hi) {
            uint64_t mid = (lo + hi) / 2;
            if (sorted[mid] <= off)
                lo = mid + 1;
            else
                hi = mid;
        }
        s->items[i].span = (lo < n ? sorted[lo] : size) - off;
    }
    free(sorted);
    return 0;
}

static int load_idx(rec_src *s, const char *idx_path, uint64_t rec_size, dlg_data_err *err)
{
    dlg_source src;
    dlg_ld_hostfile hf;
    int rc = dlg_ld_source_host(&src, &hf, s->base.h, idx_path, err);
    if (rc < 0)
        return rc;
    dlg_rec_idx idx;
    rc = dlg_rec_idx_load(&idx, &src, rec_size, s->path, err);
    dlg_ld_source_host_close(&hf);
    if (rc < 0)
        return rc;
    s->base.n = idx.n;
    s->items = idx.n ? calloc(idx.n, sizeof *s->items) : NULL;
    if (idx.n && !s->items) {
        dlg_rec_idx_free(&idx);
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", idx_path);
    }
    for (size_t i = 0; i < idx.n; i++)
        s->items[i].off = idx.entries[i].offset;
    dlg_rec_idx_free(&idx);
    return 0;
}

static int scan_rec(rec_src *s, dlg_data_err *err)
{
    dlg_source src;
    dlg_ld_hostfile hf;
    int rc = dlg_ld_source_host(&src, &hf, s->base.h, s->path, err);
    if (rc < 0)
        return rc;
    dlg_rec_reader *r = NULL; /* a failed open leaves it unset */
    rc = dlg_rec_reader_open(&r, &src, 1u << 20, err);
    size_t cap = 0;
    dlg_rec rec;
    while (rc >= 0 && (rc = dlg_rec_next(r, &rec, err)) == 1) {
        if (s->base.n == cap) {
            cap = cap ? cap * 2 : 1024;
            rec_item *p = realloc(s->items, cap * sizeof *p);
            if (!p) {
                rc = dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", s->path);
                break;
            }
            s->items = p;
        }
        s->items[s->base.n++].off = rec.offset;
    }
    if (r)
        dlg_rec_reader_close(r);
    dlg_ld_source_host_close(&hf);
    return rc < 0 ? rc : 0;
}

static int idx_path_for(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s.idx", path);
    if (access(buf, R_OK) == 0)
        return 1;
    size_t n = strlen(path);
    if (n > 4 && strcmp(path + n - 4, ".rec") == 0) {
        snprintf(buf, cap, "%.*s.idx", (int)(n - 4), path);
        if (access(buf, R_OK) == 0)
            return 1;
    }
    return 0;
}

static int rec_worker_open(dlg_ld_src *base, void **w, dlg_data_err *err)
{
    rec_src *s = (rec_src *)base;
    rec_worker *k = calloc(1, sizeof *k);
    if (!k)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", s->path);
    int rc = base->h->file_open(base->h, NULL, s->path, &k->f);
    if (rc < 0) {
        free(k);
        return dlg_ld_open_failed(base->h, s->path, s->path, "", rc, err);
    }
    *w = k;
    return 0;
}

static void rec_worker_close(dlg_ld_src *base, void *w)
{
    rec_worker *k = w;
    if (!k)
        return;
    base->h->file_close(base->h, k->f);
    dlg_ld_buf_free(&k->buf);
    free(k->asm_);
    free(k);
}

static int append(rec_worker *k, size_t at, const void *p, size_t n, const char *name,
                  dlg_data_err *err)
{
    if (at + n > k->asm_cap) {
        size_t cap = k->asm_cap ? k->asm_cap : 256 * 1024;
        while (cap < at + n)
            cap *= 2;
        uint8_t *q = realloc(k->asm_, cap);
        if (!q)
            return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", name);
        k->asm_ = q;
        k->asm_cap = cap;
    }
    memcpy(k->asm_ + at, p, n);
    return 0;
}

/* Parses the record at p[0..avail) (file offset off).  Returns 1 with the
 * payload, 0 with *need = bytes required when avail is too short, or -code. */
static int parse(rec_worker *k, const uint8_t *p, size_t avail, uint64_t off, const char *name,
                 const uint8_t **pl, size_t *plen, size_t *need, dlg_data_err *err)
{
    size_t pos = 0, size = 0;
    for (bool first = true;; first = false) {
        if (pos + DLG_REC_HEADER_SIZE > avail) {
            *need = pos + DLG_REC_HEADER_SIZE;
            return 0;
        }
        uint32_t head[2];
        memcpy(head, p + pos, sizeof head);
        uint64_t at = off + pos;
        if (head[0] != DLG_REC_MAGIC)
            return dlg_data_fail(err, DLG_ECORRUPT, "%s: bad magic 0x%08x at byte %llu", name,
                                 head[0], (unsigned long long)at);
        uint32_t cflag = dlg_rec_cflag(head[1]), len = dlg_rec_len(head[1]);
        size_t padded = ((size_t)len + 3) & ~(size_t)3;
        if (cflag > 3 || (first ? (cflag == 2 || cflag == 3) : (cflag == 0 || cflag == 1)))
            return dlg_data_fail(err, DLG_ECORRUPT, "%s: bad cflag %u at byte %llu", name, cflag,
                                 (unsigned long long)at);
        if (pos + DLG_REC_HEADER_SIZE + len > avail) {
            *need = pos + DLG_REC_HEADER_SIZE + padded;
            return 0;
        }
        const uint8_t *data = p + pos + DLG_REC_HEADER_SIZE;
        if (first && cflag == 0) {
            *pl = data;
            *plen = len;
            return 1;
        }
        if (size + len + 4 > DLG_REC_MAX_LEN)
            return dlg_data_fail(err, DLG_ECORRUPT, "%s: split record at byte %llu exceeds 2^29",
                                 name, (unsigned long long)off);
        int rc = append(k, size, data, len, name, err);
        if (rc < 0)
            return rc;
        size += len;
        pos += DLG_REC_HEADER_SIZE + padded;
        if (cflag == 3)
            break;
        const uint32_t magic = DLG_REC_MAGIC; /* the writer dropped it here */
        if ((rc = append(k, size, &magic, 4, name, err)) < 0)
            return rc;
        size += 4;
    }
    *pl = k->asm_;
    *plen = size;
    return 1;
}

/* The first label as a class index.  A float outside int32 (or NaN) has
 * no int value in C: that record is corrupt, not a huge class. */
static int class_label(const dlg_im2rec_view *v, dlg_ld_item *it, dlg_data_err *err)
{
    float f = dlg_im2rec_label(v, 0);
    if (!(f >= -2147483648.0f && f < 2147483648.0f))
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: label %g is not a class index", it->what,
                             (double)f);
    it->label = (int32_t)f;
    return 0;
}

static bool starts_record(const uint8_t *p)
{
    uint32_t magic;
    memcpy(&magic, p, 4);
    return magic == DLG_REC_MAGIC;
}

/* An .idx offset that lands outside a record start: say which file is
 * probably wrong, not only that a magic is bad. */
static int stale_idx(const rec_src *s, uint64_t index, uint64_t off, dlg_data_err *err)
{
    return dlg_data_fail(err, DLG_ECORRUPT,
                         "%s: no record starts at byte %llu, where %s puts record %llu (the .rec "
                         "is damaged there, or the .idx belongs to another or an older .rec)",
                         s->path, (unsigned long long)off, s->idx, (unsigned long long)index);
}

/* A record longer than the bytes before the next indexed one or the end. */
static int cut_short(const rec_src *s, uint64_t index, size_t need, uint64_t avail,
                     dlg_data_err *err)
{
    const rec_item *ri = &s->items[index];
    if (s->idx && ri->off + avail < s->base.bytes)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: record %llu at byte %llu needs %zu bytes, but %s puts the next "
                             "record %llu bytes on (the .rec is damaged there, or the .idx "
                             "belongs to another or an older .rec)",
                             s->path, (unsigned long long)index, (unsigned long long)ri->off, need,
                             s->idx, (unsigned long long)avail);
    return dlg_data_fail(err, DLG_ECORRUPT,
                         "%s: record at byte %llu needs %zu bytes but only %llu are there before "
                         "the next record or the end of the file",
                         s->path, (unsigned long long)ri->off, need, (unsigned long long)avail);
}

/* The record the .idx puts last must end where the .rec ends: dmlc's
 * indexed reader takes it to run to the end of the file, and so do the
 * spans here.  A .idx written for another .rec (a crash between renaming
 * the pair, a copy of the wrong one) fails this almost surely: say so at
 * open, not minutes into a run (or by skipping records with skip_corrupt). */
static int check_idx_tail(const rec_src *s, dlg_data_err *err)
{
    uint64_t li = 0;
    for (uint64_t i = 1; i < s->base.n; i++)
        if (s->items[i].off > s->items[li].off)
            li = i;
    uint64_t off = s->items[li].off;
    dlg_source src;
    dlg_ld_hostfile hf;
    int rc = dlg_ld_source_host(&src, &hf, s->base.h, s->path, err);
    if (rc < 0)
        return rc;
    dlg_rec_reader *r = NULL;
    uint32_t head[2];
    int64_t got = dlg_source_read(&src, head, sizeof head, off, err);
    dlg_rec rec = {0};
    if (got < 0)
        rc = (int)got;
    else if (got < (int64_t)sizeof head || head[0] != DLG_REC_MAGIC || dlg_rec_cflag(head[1]) > 1)
        rc = stale_idx(s, li, off, err);
    else if ((rc = dlg_rec_reader_open(&r, &src, 0, err)) == 0 &&
             (rc = dlg_rec_reader_seek(r, off, err)) == 0)
        rc = dlg_rec_next(r, &rec, err);
    if (rc == 1 && s->base.bytes != DLG_SIZE_UNKNOWN && rec.end != s->base.bytes)
        rc = dlg_data_fail(err, DLG_ECORRUPT,
                           "%s: its last indexed record (%s puts record %llu at byte %llu) ends "
                           "at byte %llu, but the .rec goes on to byte %llu: the .idx belongs to "
                           "another or an older .rec (delete it and the .rec is scanned)",
                           s->path, s->idx, (unsigned long long)li, (unsigned long long)off,
                           (unsigned long long)rec.end, (unsigned long long)s->base.bytes);
    dlg_rec_reader_close(r);
    dlg_ld_source_host_close(&hf);
    return rc < 0 ? rc : 0;
}

static int rec_read(dlg_ld_src *base, void *w, uint64_t index, dlg_ld_item *it, dlg_data_err *err)
{
    rec_src *s = (rec_src *)base;
    rec_worker *k = w;
    const rec_item *ri = &s->items[index];
    snprintf(it->what, sizeof it->what, "%s: record %llu at byte %llu", s->path,
             (unsigned long long)index, (unsigned long long)ri->off);
    size_t want = ri->span > FIRST_READ ? FIRST_READ : (size_t)ri->span;
    it->bytes_read = 0;
    for (;;) {
        const uint8_t *p;
        uint64_t io = 0;
        int64_t got = dlg_ld_read(base->h, k->f, s->path, &k->buf, ri->off, want, &p, &io, err);
        if (got < 0)
            return (int)got;
        it->bytes_read += io;
        const uint8_t *pl = NULL;
        size_t plen = 0, need = 0;
        if (s->idx && got >= 4 && !starts_record(p))
            return stale_idx(s, index, ri->off, err);
        int rc = parse(k, p, (size_t)got, ri->off, it->what, &pl, &plen, &need, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            dlg_im2rec_view v;
            rc = dlg_im2rec_unpack(pl, plen, s->path, ri->off, &v, err);
            if (rc < 0)
                return rc;
            it->bytes = v.image;
            it->len = v.image_len;
            it->pixels = NULL;
            it->fpixels = NULL;
            return class_label(&v, it, err);
        }
        if ((size_t)got < want || need > ri->span)
            return cut_short(s, index, need, (size_t)got < want ? (uint64_t)got : ri->span, err);
        want = need * 2 < ri->span ? need * 2 : (size_t)ri->span;
    }
}

static const char *rec_file_path(const dlg_ld_src *base, size_t i, char *buf, size_t cap)
{
    (void)i;
    snprintf(buf, cap, "%s", ((const rec_src *)base)->path);
    return buf;
}

static void rec_close(dlg_ld_src *base)
{
    rec_src *s = (rec_src *)base;
    free(s->items);
    free(s->path);
    free(s->idx);
    free(s);
}

static const dlg_ld_src_ops rec_ops = {"recordio",    rec_worker_open, rec_worker_close,
                                       rec_read,      rec_file_path,   rec_close};

int dlg_ld_src_recordio(dlg_ld_src **out, const char *path, const dlg_host *h, dlg_data_err *err)
{
    rec_src *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    }
    s->base.ops = &rec_ops;
    s->base.h = h;
    s->base.nfiles = 1;
    dlg_source src;
    dlg_ld_hostfile hf;
    int rc = dlg_ld_source_host(&src, &hf, h, path, err);
    if (rc == 0) {
        s->base.bytes = src.size;
        dlg_ld_source_host_close(&hf);
        char idx[4096];
        if (!idx_path_for(path, idx, sizeof idx))
            rc = scan_rec(s, err);
        else if (!(s->idx = strdup(idx)))
            rc = dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
        else
            rc = load_idx(s, idx, s->base.bytes, err);
    }
    if (rc == 0 && s->base.n == 0)
        rc = dlg_data_fail(err, DLG_EINVAL, "%s: the dataset has no records", path);
    if (rc == 0)
        rc = fill_spans(s, s->base.bytes, err);
    if (rc == 0 && s->idx)
        rc = check_idx_tail(s, err);
    if (rc < 0) {
        rec_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}
