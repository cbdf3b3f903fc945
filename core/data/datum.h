/* Caffe's Datum message (caffe.proto), encoded and decoded by hand with the
 * protobuf wire format, byte-identical to what protobuf's C++ serializer
 * writes for convert_imageset:
 *
 *   channels=1 height=2 width=3 (int32 varint), data=4 (bytes), label=5
 *   (int32), float_data=6 (repeated float, unpacked 0x35; packed 0x32 is
 *   also accepted), encoded=7 (bool).
 *
 * proto2 writes exactly the fields that were set, in field-number order, so
 * a Datum remembers which fields it has (DLG_DATUM_HAS_*). */
#ifndef DLG_DATUM_H
#define DLG_DATUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data_error.h"

enum dlg_datum_has {
    DLG_DATUM_HAS_CHANNELS = 1u << 0,
    DLG_DATUM_HAS_HEIGHT = 1u << 1,
    DLG_DATUM_HAS_WIDTH = 1u << 2,
    DLG_DATUM_HAS_DATA = 1u << 3,
    DLG_DATUM_HAS_LABEL = 1u << 4,
    DLG_DATUM_HAS_ENCODED = 1u << 6
};

typedef struct dlg_datum {
    uint32_t has; /* DLG_DATUM_HAS_* */
    int32_t channels, height, width;
    const uint8_t *data; /* decode: points into the input buffer (no copy) */
    size_t data_len;
    int32_t label;
    bool encoded;        /* data is a whole JPEG/PNG file */
    float *float_data;   /* decode: owned, reused across decodes */
    size_t n_float;
    size_t float_cap_;
} dlg_datum;

/* A zeroed Datum: no fields set (its float storage is empty). */
void dlg_datum_init(dlg_datum *d);
/* Frees the float storage a decode allocated. */
void dlg_datum_free(dlg_datum *d);

/* What convert_imageset stores for a raw image (CVMatToDatum + set_label):
 * channels, height, width, data (uint8 CHW, BGR), label, encoded=false.
 * data is not copied. */
void dlg_datum_set_raw(dlg_datum *d, int32_t channels, int32_t height, int32_t width,
                       const void *data, size_t data_len, int32_t label);
/* What convert_imageset --encoded stores: data (the file), label, encoded=true. */
void dlg_datum_set_encoded(dlg_datum *d, const void *file, size_t len, int32_t label);

/* Bytes dlg_datum_encode will write. */
size_t dlg_datum_encoded_size(const dlg_datum *d);
/* Serialises into out; returns bytes written or -DLG_EINVAL if cap is too
 * small.  float_data is written unpacked (0x35), as proto2 does. */
int64_t dlg_datum_encode(const dlg_datum *d, void *out, size_t cap, dlg_data_err *err);

/* Parses a serialised Datum into d (whose float storage is reused).  d->data
 * points into buf, so buf must outlive the use of d->data.  Unknown fields are
 * skipped per protobuf rules; a truncated varint, a length past the end, a
 * wrong wire type for a known field, a raw Datum whose data is not
 * channels*height*width bytes (or negative sizes) are -DLG_ECORRUPT errors
 * naming the byte offset.  `what` prefixes messages (e.g. "db: key 'x'"). */
int dlg_datum_decode(dlg_datum *d, const void *buf, size_t len, const char *what,
                     dlg_data_err *err);

#endif
