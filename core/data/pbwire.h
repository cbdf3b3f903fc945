/* The protobuf wire format by hand, shared by the Caffe messages we read and
 * write (Datum, BlobProto): varints, lengths, fixed32/64, tags, and skipping
 * unknown fields as protobuf does.  Every read error is one -DLG_ECORRUPT
 * line "WHAT: not a valid MSG: WHY at byte N". */
#ifndef DLG_PBWIRE_H
#define DLG_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "data_error.h"

enum { DLG_WT_VARINT = 0, DLG_WT_I64 = 1, DLG_WT_LEN = 2, DLG_WT_SGROUP = 3, DLG_WT_EGROUP = 4,
       DLG_WT_I32 = 5 };

typedef struct dlg_pb_rd {
    const uint8_t *base, *p, *end;
    const char *what; /* prefixes messages: a file name, "db: key 'x'" */
    const char *msg;  /* the message type: "Caffe Datum", "BlobProto" */
    dlg_data_err *err;
} dlg_pb_rd;

static inline size_t dlg_pb_at(const dlg_pb_rd *r) { return (size_t)(r->p - r->base); }

/* "WHAT: not a valid MSG: WHY at byte OFF" as -DLG_ECORRUPT. */
int dlg_pb_bad(const dlg_pb_rd *r, size_t off, const char *why);
/* "WHAT: not a valid MSG: field F has wire type W at byte OFF". */
int dlg_pb_wrong_type(const dlg_pb_rd *r, size_t off, uint32_t field, uint32_t wt);

int dlg_pb_varint(dlg_pb_rd *r, uint64_t *out);
/* A length-delimited field's length, checked against the bytes left. */
int dlg_pb_len(dlg_pb_rd *r, size_t *len);
/* n = 4 or 8 bytes, little-endian; out (the low 32 bits) may be NULL. */
int dlg_pb_fixed(dlg_pb_rd *r, size_t n, uint32_t *out);
int dlg_pb_fixed64(dlg_pb_rd *r, uint64_t *out);
int dlg_pb_tag(dlg_pb_rd *r, uint32_t *field, uint32_t *wt);
/* Skips an unknown field's value (groups included). */
int dlg_pb_skip(dlg_pb_rd *r, uint32_t field, uint32_t wt);

/* ---- writing ---- */
size_t dlg_pb_varint_size(uint64_t v);
uint8_t *dlg_pb_put_varint(uint8_t *p, uint64_t v);
uint8_t *dlg_pb_put_fixed32(uint8_t *p, uint32_t v);

#endif
