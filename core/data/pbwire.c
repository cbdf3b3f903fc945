/* Protobuf wire-format primitives (see pbwire.h).  By hand because a few
 * small Caffe messages do not justify protoc + libprotobuf in a C project,
 * and the readers must say exactly where input is bad. */
#include "pbwire.h"

#define MAX_GROUP_DEPTH 64

int dlg_pb_bad(const dlg_pb_rd *r, size_t off, const char *why)
{
    return dlg_data_fail(r->err, DLG_ECORRUPT, "%s: not a valid %s: %s at byte %zu", r->what,
                         r->msg, why, off);
}

int dlg_pb_wrong_type(const dlg_pb_rd *r, size_t off, uint32_t field, uint32_t wt)
{
    return dlg_data_fail(r->err, DLG_ECORRUPT, "%s: not a valid %s: field %u has wire type %u at byte %zu",
                         r->what, r->msg, field, wt, off);
}

int dlg_pb_varint(dlg_pb_rd *r, uint64_t *out)
{
    size_t start = dlg_pb_at(r);
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (r->p >= r->end)
            return dlg_pb_bad(r, start, "truncated varint");
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return dlg_pb_bad(r, start, "varint longer than 10 bytes");
}

int dlg_pb_len(dlg_pb_rd *r, size_t *len)
{
    size_t start = dlg_pb_at(r);
    uint64_t v = 0; /* set on success; -O3 cannot tell */
    int rc = dlg_pb_varint(r, &v);
    if (rc < 0)
        return rc;
    if (v > (uint64_t)(r->end - r->p) || v > INT32_MAX)
        return dlg_pb_bad(r, start, "length runs past the end of the message");
    *len = (size_t)v;
    return 0;
}

int dlg_pb_fixed(dlg_pb_rd *r, size_t n, uint32_t *out)
{
    if ((size_t)(r->end - r->p) < n)
        return dlg_pb_bad(r, dlg_pb_at(r), n == 4 ? "truncated fixed32" : "truncated fixed64");
    if (out) {
        uint32_t v = 0;
        for (int b = 0; b < 4; b++)
            v |= (uint32_t)r->p[b] << (8 * b);
        *out = v;
    }
    r->p += n;
    return 0;
}

int dlg_pb_fixed64(dlg_pb_rd *r, uint64_t *out)
{
    const uint8_t *p = r->p;
    int rc = dlg_pb_fixed(r, 8, NULL);
    if (rc < 0)
        return rc;
    uint64_t v = 0;
    for (int b = 0; b < 8; b++)
        v |= (uint64_t)p[b] << (8 * b);
    *out = v;
    return 0;
}

int dlg_pb_tag(dlg_pb_rd *r, uint32_t *field, uint32_t *wt)
{
    size_t start = dlg_pb_at(r);
    uint64_t tag = 0;
    int rc = dlg_pb_varint(r, &tag);
    if (rc < 0)
        return rc;
    if (tag > UINT32_MAX || (tag >> 3) == 0)
        return dlg_pb_bad(r, start, "invalid tag");
    *field = (uint32_t)(tag >> 3);
    *wt = (uint32_t)(tag & 7);
    if (*wt > DLG_WT_I32)
        return dlg_pb_bad(r, start, "invalid wire type");
    return 0;
}

static int skip_value(dlg_pb_rd *r, uint32_t field, uint32_t wt, int depth)
{
    uint64_t v;
    size_t len;
    int rc;
    switch (wt) {
    case DLG_WT_VARINT:
        return dlg_pb_varint(r, &v);
    case DLG_WT_I64:
        return dlg_pb_fixed(r, 8, NULL);
    case DLG_WT_I32:
        return dlg_pb_fixed(r, 4, NULL);
    case DLG_WT_LEN:
        rc = dlg_pb_len(r, &len);
        if (rc == 0)
            r->p += len;
        return rc;
    case DLG_WT_SGROUP:
        if (depth >= MAX_GROUP_DEPTH)
            return dlg_pb_bad(r, dlg_pb_at(r), "groups nested too deeply");
        for (;;) {
            uint32_t f, w;
            size_t start = dlg_pb_at(r);
            if (r->p >= r->end)
                return dlg_pb_bad(r, start, "unterminated group");
            if ((rc = dlg_pb_tag(r, &f, &w)) < 0)
                return rc;
            if (w == DLG_WT_EGROUP)
                return f == field ? 0 : dlg_pb_bad(r, start, "mismatched end-group tag");
            if ((rc = skip_value(r, f, w, depth + 1)) < 0)
                return rc;
        }
    default:
        return dlg_pb_bad(r, dlg_pb_at(r), "end-group tag without a start-group");
    }
}

int dlg_pb_skip(dlg_pb_rd *r, uint32_t field, uint32_t wt) { return skip_value(r, field, wt, 0); }

size_t dlg_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

uint8_t *dlg_pb_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

uint8_t *dlg_pb_put_fixed32(uint8_t *p, uint32_t v)
{
    for (int b = 0; b < 4; b++) /* fixed32 is little-endian on the wire */
        *p++ = (uint8_t)(v >> (8 * b));
    return p;
}
