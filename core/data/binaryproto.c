/* Caffe BlobProto reader and writer (see binaryproto.h). */
#include "binaryproto.h"
#include "pbwire.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AXES 32 /* Caffe's kMaxBlobAxes */

typedef struct fvec {
    float *v;
    size_t n, cap;
} fvec;

typedef struct parse {
    bool legacy;
    int64_t legacy_dim[4];
    int axes;
    int64_t dim[MAX_AXES];
    fvec data, ddata; /* data (5) and double_data (8), both as float */
} parse;

static int push(fvec *f, const dlg_pb_rd *r, float x)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 1024;
        float *p = realloc(f->v, cap * sizeof *p);
        if (!p)
            return dlg_data_fail(r->err, DLG_ENOMEM, "%s: out of memory", r->what);
        f->v = p;
        f->cap = cap;
    }
    f->v[f->n++] = x;
    return 0;
}

static int one_value(dlg_pb_rd *r, fvec *f, bool dbl)
{
    if (dbl) {
        uint64_t bits = 0;
        double d;
        int rc = dlg_pb_fixed64(r, &bits);
        memcpy(&d, &bits, sizeof d);
        return rc < 0 ? rc : push(f, r, (float)d); /* Blob<float>::FromProto casts */
    }
    uint32_t bits = 0;
    float x;
    int rc = dlg_pb_fixed(r, 4, &bits);
    memcpy(&x, &bits, sizeof x);
    return rc < 0 ? rc : push(f, r, x);
}

/* repeated float (5) or double (8): packed, or one value per tag */
static int get_values(dlg_pb_rd *r, fvec *f, uint32_t field, uint32_t wt, size_t off)
{
    bool dbl = field == 8;
    size_t w = dbl ? 8 : 4, len;
    if (wt == (dbl ? DLG_WT_I64 : DLG_WT_I32))
        return one_value(r, f, dbl);
    if (wt != DLG_WT_LEN)
        return dlg_pb_wrong_type(r, off, field, wt);
    int rc = dlg_pb_len(r, &len);
    if (rc < 0)
        return rc;
    if (len % w != 0)
        return dlg_pb_bad(r, off, dbl ? "packed double_data length not a multiple of 8"
                                      : "packed data length not a multiple of 4");
    for (size_t i = 0; i < len / w; i++)
        if ((rc = one_value(r, f, dbl)) < 0)
            return rc;
    return 0;
}

static int push_dim(parse *ps, const dlg_pb_rd *r, size_t off, uint64_t v)
{
    if (ps->axes >= MAX_AXES)
        return dlg_pb_bad(r, off, "shape has more than 32 axes");
    if ((int64_t)v < 0)
        return dlg_pb_bad(r, off, "negative shape dimension");
    ps->dim[ps->axes++] = (int64_t)v;
    return 0;
}

/* BlobShape: dim = 1, repeated int64, packed or not; other fields skipped. */
static int get_shape(dlg_pb_rd *r, parse *ps)
{
    size_t len;
    int rc = dlg_pb_len(r, &len);
    if (rc < 0)
        return rc;
    const uint8_t *end = r->p + len, *outer = r->end;
    r->end = end; /* errors inside still count bytes from the file's start */
    while (rc == 0 && r->p < end) {
        size_t off = dlg_pb_at(r);
        uint32_t field = 0, wt = 0;
        uint64_t v = 0;
        if ((rc = dlg_pb_tag(r, &field, &wt)) < 0)
            break;
        if (field != 1) {
            rc = dlg_pb_skip(r, field, wt);
        } else if (wt == DLG_WT_VARINT) {
            if ((rc = dlg_pb_varint(r, &v)) == 0)
                rc = push_dim(ps, r, off, v);
        } else if (wt == DLG_WT_LEN) {
            size_t n;
            if ((rc = dlg_pb_len(r, &n)) < 0)
                break;
            const uint8_t *stop = r->p + n;
            while (rc == 0 && r->p < stop) {
                size_t at = dlg_pb_at(r);
                const uint8_t *e = r->end;
                r->end = stop; /* a varint may not run past its packed run */
                rc = dlg_pb_varint(r, &v);
                r->end = e;
                if (rc == 0)
                    rc = push_dim(ps, r, at, v);
            }
        } else {
            rc = dlg_pb_wrong_type(r, off, field, wt);
        }
    }
    r->end = outer;
    return rc;
}

static int get_field(dlg_pb_rd *r, parse *ps, uint32_t field, uint32_t wt, size_t off)
{
    uint64_t v = 0;
    int rc;
    switch (field) {
    case 1: case 2: case 3: case 4:
        if (wt != DLG_WT_VARINT)
            return dlg_pb_wrong_type(r, off, field, wt);
        if ((rc = dlg_pb_varint(r, &v)) < 0)
            return rc;
        ps->legacy = true;
        ps->legacy_dim[field - 1] = (int32_t)(uint32_t)v; /* int32: the low 32 bits */
        if (ps->legacy_dim[field - 1] < 0)
            return dlg_pb_bad(r, off, "negative num/channels/height/width");
        return 0;
    case 5: case 8:
        return get_values(r, field == 5 ? &ps->data : &ps->ddata, field, wt, off);
    case 7:
        if (wt != DLG_WT_LEN)
            return dlg_pb_wrong_type(r, off, field, wt);
        return get_shape(r, ps);
    default: /* diff, double_diff and unknown fields */
        return dlg_pb_skip(r, field, wt);
    }
}

/* Caffe's LegacyShape(i): axis i, or 1 past the last axis. */
static int64_t legacy(const parse *ps, int i) { return i < ps->axes ? ps->dim[i] : 1; }

static int finish(dlg_blobproto *b, parse *ps, const char *what, dlg_data_err *err)
{
    if (ps->legacy) {
        ps->axes = 4;
        memcpy(ps->dim, ps->legacy_dim, sizeof ps->legacy_dim);
    }
    if (ps->axes > 4)
        return dlg_data_fail(err, DLG_EINVAL, "%s: BlobProto has %d axes; a mean image has at most 4 "
                             "(num, channels, height, width)", what, ps->axes);
    uint64_t count = 1;
    for (int i = 0; i < ps->axes; i++) {
        /* checked before multiplying (as Caffe's Reshape): an int64 dim
         * could wrap the product back under the limit */
        if (count != 0 && (uint64_t)ps->dim[i] > INT32_MAX / count) /* Caffe's limit on a blob */
            return dlg_data_fail(err, DLG_ECORRUPT, "%s: BlobProto shape holds more than %d values",
                                 what, INT32_MAX);
        count *= (uint64_t)ps->dim[i];
    }
    fvec *vals = ps->ddata.n > 0 ? &ps->ddata : &ps->data;
    if (vals->n != count)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: BlobProto has %zu %s values but its shape "
                             "%lld x %lld x %lld x %lld needs %llu", what, vals->n,
                             vals == &ps->ddata ? "double_data" : "data", (long long)legacy(ps, 0),
                             (long long)legacy(ps, 1), (long long)legacy(ps, 2),
                             (long long)legacy(ps, 3), (unsigned long long)count);
    b->num = legacy(ps, 0);
    b->channels = legacy(ps, 1);
    b->height = legacy(ps, 2);
    b->width = legacy(ps, 3);
    b->axes = ps->axes;
    b->data = vals->v;
    b->count = vals->n;
    vals->v = NULL;
    return 0;
}

int dlg_blobproto_decode(dlg_blobproto *b, const void *buf, size_t len, const char *what,
                         dlg_data_err *err)
{
    memset(b, 0, sizeof *b);
    if (!buf)
        buf = "";
    what = what ? what : "BlobProto";
    dlg_pb_rd r = {buf, buf, (const uint8_t *)buf + len, what, "BlobProto", err};
    parse ps;
    memset(&ps, 0, sizeof ps);
    int rc = 0;
    while (rc == 0 && r.p < r.end) {
        size_t off = dlg_pb_at(&r);
        uint32_t field = 0, wt = 0;
        if ((rc = dlg_pb_tag(&r, &field, &wt)) == 0)
            rc = get_field(&r, &ps, field, wt, off);
    }
    if (rc == 0)
        rc = finish(b, &ps, what, err);
    free(ps.data.v);
    free(ps.ddata.v);
    return rc;
}

void dlg_blobproto_free(dlg_blobproto *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int read_all(const char *path, uint8_t **out, size_t *len, dlg_data_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    uint8_t *p = malloc(cap);
    while (p) {
        n += fread(p + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *q = realloc(p, cap * 2);
        if (!q)
            free(p);
        p = q;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!p)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory reading it", path);
    if (bad) {
        free(p);
        return dlg_data_fail(err, DLG_EIO, "%s: read failed", path);
    }
    *out = p;
    *len = n;
    return 0;
}

int dlg_blobproto_read(dlg_blobproto *b, const char *path, dlg_data_err *err)
{
    memset(b, 0, sizeof *b);
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = read_all(path, &buf, &len, err);
    if (rc < 0)
        return rc;
    if (len == 0)
        rc = dlg_data_fail(err, DLG_ECORRUPT, "%s: empty file, not a BlobProto", path);
    else
        rc = dlg_blobproto_decode(b, buf, len, path, err);
    free(buf);
    return rc;
}

size_t dlg_blobproto_size(int c, int h, int w)
{
    size_t bytes = (size_t)c * h * w * 4;
    return 4 + dlg_pb_varint_size((uint64_t)c) + dlg_pb_varint_size((uint64_t)h) +
           dlg_pb_varint_size((uint64_t)w) + dlg_pb_varint_size(1) + 1 +
           dlg_pb_varint_size(bytes) + bytes;
}

size_t dlg_blobproto_encode(int c, int h, int w, const float *data, void *out, size_t cap)
{
    size_t need = dlg_blobproto_size(c, h, w), n = (size_t)c * h * w;
    if (need > cap)
        return 0;
    uint8_t *p = out;
    p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x08), 1); /* fields in number order, as proto2 */
    p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x10), (uint64_t)c);
    p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x18), (uint64_t)h);
    p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x20), (uint64_t)w);
    p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x2a), n * 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &data[i], 4);
        p = dlg_pb_put_fixed32(p, bits);
    }
    return (size_t)(p - (uint8_t *)out);
}

int dlg_blobproto_write(const char *path, int c, int h, int w, const float *data,
                        dlg_data_err *err)
{
    size_t cap = dlg_blobproto_size(c, h, w);
    uint8_t *buf = malloc(cap);
    if (!buf)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    size_t n = dlg_blobproto_encode(c, h, w, data, buf, cap);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(buf);
        return dlg_data_fail(err, DLG_EIO, "%s: cannot create: %s", path, strerror(errno));
    }
    bool ok = fwrite(buf, 1, n, f) == n;
    ok = fclose(f) == 0 && ok;
    free(buf);
    return ok ? 0 : dlg_data_fail(err, DLG_EIO, "%s: write failed: %s", path, strerror(errno));
}
