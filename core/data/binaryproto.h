/* Caffe's BlobProto (caffe.proto), the format of `mean_file` images
 * (compute_image_mean's output, "imagenet_mean.binaryproto"):
 *
 *   num=1 channels=2 height=3 width=4 (int32 varint, the legacy 4-D shape),
 *   data=5 (repeated float, packed; unpacked also accepted), diff=6,
 *   shape=7 (BlobShape: dim=1, repeated int64, packed or not),
 *   double_data=8 (repeated double), double_diff=9.
 *
 * Read as Caffe's Blob::FromProto does: any of fields 1-4 present means the
 * legacy shape (missing ones 0), else `shape`; the values are double_data
 * when there are any, else data, and must number exactly the shape's
 * count.  The legacy view of an N-axis shape (N <= 4) is Caffe's
 * LegacyShape: axis i, or 1 past the last axis -- so a 3-axis C x H x W
 * shape reads as num C, channels H, height W, width 1, as in Caffe. */
#ifndef DLG_BINARYPROTO_H
#define DLG_BINARYPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "data_error.h"

typedef struct dlg_blobproto {
    int64_t num, channels, height, width; /* the legacy 4-D view */
    int axes;                             /* 4 for the legacy fields, else shape's dims */
    float *data;                          /* count values, row-major; owned */
    size_t count;
} dlg_blobproto;

/* Parses a serialised BlobProto; `what` (a file name) prefixes errors, which
 * are one line: truncated or malformed input names the byte offset, a value
 * count that does not match the shape says both. */
int dlg_blobproto_decode(dlg_blobproto *b, const void *buf, size_t len, const char *what,
                         dlg_data_err *err);
/* Reads and parses a .binaryproto file. */
int dlg_blobproto_read(dlg_blobproto *b, const char *path, dlg_data_err *err);
void dlg_blobproto_free(dlg_blobproto *b);

/* What compute_image_mean writes for a c x h x w image: num 1, channels,
 * height, width, packed data.  Returns the bytes, or 0 when cap is too
 * small (size it with dlg_blobproto_size). */
size_t dlg_blobproto_size(int c, int h, int w);
size_t dlg_blobproto_encode(int c, int h, int w, const float *data, void *out, size_t cap);
/* Encodes and writes path (replacing it). */
int dlg_blobproto_write(const char *path, int c, int h, int w, const float *data,
                        dlg_data_err *err);

#endif
