/* Hand-written protobuf wire format for caffe.Datum.  Why by hand: one
 * 7-field message does not justify protoc + libprotobuf in a C project, and
 * the decoder must be allocation-free and tell exactly where input is bad. */
#include "datum.h"
#include "pbwire.h"

#include <stdlib.h>
#include <string.h>

void dlg_datum_init(dlg_datum *d) { memset(d, 0, sizeof *d); }

void dlg_datum_free(dlg_datum *d)
{
    free(d->float_data);
    memset(d, 0, sizeof *d);
}

static void clear_fields(dlg_datum *d)
{
    d->has = 0;
    d->channels = d->height = d->width = d->label = 0;
    d->data = NULL;
    d->data_len = 0;
    d->encoded = false;
    d->n_float = 0;
}

void dlg_datum_set_raw(dlg_datum *d, int32_t channels, int32_t height, int32_t width,
                       const void *data, size_t data_len, int32_t label)
{
    clear_fields(d);
    d->has = DLG_DATUM_HAS_CHANNELS | DLG_DATUM_HAS_HEIGHT | DLG_DATUM_HAS_WIDTH |
             DLG_DATUM_HAS_DATA | DLG_DATUM_HAS_LABEL | DLG_DATUM_HAS_ENCODED;
    d->channels = channels;
    d->height = height;
    d->width = width;
    d->data = data;
    d->data_len = data_len;
    d->label = label;
}

void dlg_datum_set_encoded(dlg_datum *d, const void *file, size_t len, int32_t label)
{
    clear_fields(d);
    d->has = DLG_DATUM_HAS_DATA | DLG_DATUM_HAS_LABEL | DLG_DATUM_HAS_ENCODED;
    d->data = file;
    d->data_len = len;
    d->label = label;
    d->encoded = true;
}

/* ---- encoding ---------------------------------------------------------------- */

/* int32 fields are sign-extended to 64 bits on the wire (negatives take 10 bytes). */
static uint64_t int32_wire(int32_t v) { return (uint64_t)(int64_t)v; }

size_t dlg_datum_encoded_size(const dlg_datum *d)
{
    size_t n = 0;
    if (d->has & DLG_DATUM_HAS_CHANNELS)
        n += 1 + dlg_pb_varint_size(int32_wire(d->channels));
    if (d->has & DLG_DATUM_HAS_HEIGHT)
        n += 1 + dlg_pb_varint_size(int32_wire(d->height));
    if (d->has & DLG_DATUM_HAS_WIDTH)
        n += 1 + dlg_pb_varint_size(int32_wire(d->width));
    if (d->has & DLG_DATUM_HAS_DATA)
        n += 1 + dlg_pb_varint_size(d->data_len) + d->data_len;
    if (d->has & DLG_DATUM_HAS_LABEL)
        n += 1 + dlg_pb_varint_size(int32_wire(d->label));
    n += 5 * d->n_float;
    if (d->has & DLG_DATUM_HAS_ENCODED)
        n += 2;
    return n;
}

int64_t dlg_datum_encode(const dlg_datum *d, void *out, size_t cap, dlg_data_err *err)
{
    size_t need = dlg_datum_encoded_size(d);
    if (need > cap)
        return dlg_data_fail(err, DLG_EINVAL, "Datum needs %zu bytes, buffer has %zu", need, cap);
    uint8_t *p = out;
    if (d->has & DLG_DATUM_HAS_CHANNELS)
        p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x08), int32_wire(d->channels));
    if (d->has & DLG_DATUM_HAS_HEIGHT)
        p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x10), int32_wire(d->height));
    if (d->has & DLG_DATUM_HAS_WIDTH)
        p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x18), int32_wire(d->width));
    if (d->has & DLG_DATUM_HAS_DATA) {
        p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x22), d->data_len);
        if (d->data_len)
            memcpy(p, d->data, d->data_len);
        p += d->data_len;
    }
    if (d->has & DLG_DATUM_HAS_LABEL)
        p = dlg_pb_put_varint(dlg_pb_put_varint(p, 0x28), int32_wire(d->label));
    for (size_t i = 0; i < d->n_float; i++) {
        uint32_t bits;
        memcpy(&bits, &d->float_data[i], 4);
        *p++ = 0x35;
        p = dlg_pb_put_fixed32(p, bits);
    }
    if (d->has & DLG_DATUM_HAS_ENCODED) {
        *p++ = 0x38;
        *p++ = d->encoded ? 1 : 0;
    }
    return (int64_t)(p - (uint8_t *)out);
}

/* ---- decoding ---------------------------------------------------------------- */

static int push_float(dlg_datum *d, const dlg_pb_rd *r, uint32_t bits)
{
    if (d->n_float == d->float_cap_) {
        size_t cap = d->float_cap_ ? d->float_cap_ * 2 : 64;
        float *p = realloc(d->float_data, cap * sizeof *p);
        if (!p)
            return dlg_data_fail(r->err, DLG_ENOMEM, "%s: out of memory", r->what);
        d->float_data = p;
        d->float_cap_ = cap;
    }
    memcpy(&d->float_data[d->n_float++], &bits, 4);
    return 0;
}

static int get_floats(dlg_datum *d, dlg_pb_rd *r, uint32_t wt, size_t off)
{
    uint32_t bits = 0;
    size_t len;
    int rc;
    if (wt == DLG_WT_I32)
        return (rc = dlg_pb_fixed(r, 4, &bits)) < 0 ? rc : push_float(d, r, bits);
    if (wt != DLG_WT_LEN)
        return dlg_pb_wrong_type(r, off, 6, wt);
    if ((rc = dlg_pb_len(r, &len)) < 0)
        return rc;
    if (len % 4 != 0)
        return dlg_pb_bad(r, off, "packed float_data length not a multiple of 4");
    for (size_t i = 0; i < len / 4; i++)
        if ((rc = dlg_pb_fixed(r, 4, &bits)) < 0 || (rc = push_float(d, r, bits)) < 0)
            return rc;
    return 0;
}

static int get_field(dlg_datum *d, dlg_pb_rd *r, uint32_t field, uint32_t wt, size_t off,
                     size_t *data_off)
{
    static const uint32_t int_has[] = {0, DLG_DATUM_HAS_CHANNELS, DLG_DATUM_HAS_HEIGHT,
                                       DLG_DATUM_HAS_WIDTH, 0, DLG_DATUM_HAS_LABEL};
    uint64_t v;
    int rc;
    switch (field) {
    case 1: case 2: case 3: case 5: case 7:
        if (wt != DLG_WT_VARINT)
            return dlg_pb_wrong_type(r, off, field, wt);
        if ((rc = dlg_pb_varint(r, &v)) < 0)
            return rc;
        if (field == 7) {
            d->encoded = v != 0;
            d->has |= DLG_DATUM_HAS_ENCODED;
            return 0;
        }
        int32_t *dst[] = {NULL, &d->channels, &d->height, &d->width, NULL, &d->label};
        *dst[field] = (int32_t)(uint32_t)v; /* int32 takes the low 32 bits */
        d->has |= int_has[field];
        return 0;
    case 4:
        if (wt != DLG_WT_LEN)
            return dlg_pb_wrong_type(r, off, field, wt);
        if ((rc = dlg_pb_len(r, &d->data_len)) < 0)
            return rc;
        d->data = r->p;
        d->has |= DLG_DATUM_HAS_DATA;
        *data_off = off;
        r->p += d->data_len;
        return 0;
    case 6:
        return get_floats(d, r, wt, off);
    default:
        return dlg_pb_skip(r, field, wt);
    }
}

/* Caffe's DataTransformer needs a raw Datum's pixels to match its shape. */
static int check_shape(const dlg_datum *d, const dlg_pb_rd *r, size_t data_off)
{
    if (d->channels < 0 || d->height < 0 || d->width < 0)
        return dlg_data_fail(r->err, DLG_ECORRUPT,
                             "%s: Datum has a negative size (channels %d, height %d, width %d)",
                             r->what, d->channels, d->height, d->width);
    if (d->encoded)
        return 0;
    /* Three int32 sizes can overflow 64 bits, and a wrapped product could
     * match a short data field: such a Datum holds no real image. */
    uint64_t n = 0;
    if (__builtin_mul_overflow((uint64_t)d->channels, (uint64_t)d->height, &n) ||
        __builtin_mul_overflow(n, (uint64_t)d->width, &n))
        return dlg_data_fail(r->err, DLG_ECORRUPT,
                             "%s: raw Datum size channels*height*width = %d*%d*%d exceeds 2^64",
                             r->what, d->channels, d->height, d->width);
    /* Caffe reads float_data when data is empty (absent, or present with 0 bytes). */
    bool floats = d->data_len == 0 && d->n_float > 0;
    if ((d->has & DLG_DATUM_HAS_DATA) && !floats && d->data_len != n)
        return dlg_data_fail(r->err, DLG_ECORRUPT,
                             "%s: raw Datum data at byte %zu is %zu bytes, but channels*height*"
                             "width = %d*%d*%d = %llu",
                             r->what, data_off, d->data_len, d->channels, d->height, d->width,
                             (unsigned long long)n);
    if (floats && d->n_float != n)
        return dlg_data_fail(r->err, DLG_ECORRUPT,
                             "%s: raw Datum has %zu float_data values, but channels*height*"
                             "width = %d*%d*%d = %llu",
                             r->what, d->n_float, d->channels, d->height, d->width,
                             (unsigned long long)n);
    return 0;
}

int dlg_datum_decode(dlg_datum *d, const void *buf, size_t len, const char *what,
                     dlg_data_err *err)
{
    if (!buf)
        buf = "";
    dlg_pb_rd r = {buf, buf, (const uint8_t *)buf + len, what ? what : "Datum", "Caffe Datum", err};
    size_t data_off = 0;
    clear_fields(d);
    while (r.p < r.end) {
        size_t off = dlg_pb_at(&r);
        uint32_t field = 0, wt = 0;
        int rc = dlg_pb_tag(&r, &field, &wt);
        if (rc == 0)
            rc = get_field(d, &r, field, wt, off, &data_off);
        if (rc < 0)
            return rc;
    }
    return check_shape(d, &r, data_off);
}
