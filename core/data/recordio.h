/* MXNet / dmlc RecordIO (.rec, .idx) and the im2rec image record layout,
 * bit-exact with dmlc-core's RecordIOWriter/Reader (see shared/FORMATS.md):
 *
 *   record := u32 magic 0xced7230a | u32 lrec | payload | zero pad to 4 bytes
 *   lrec   := cflag << 29 | len;  cflag 0 whole, 1 first, 2 middle, 3 last
 *
 * A payload holding the magic at a 4-byte-aligned offset is split there (the
 * 4 magic bytes are dropped and re-inserted by the reader), so the magic
 * never appears at an aligned file position inside a record: that is what
 * lets a reader resynchronise from any offset.
 *
 * Implementation: recordio_writer.c, recordio_reader.c, recordio_idx.c,
 * im2rec.c, im2rec_lst.c. */
#ifndef DLG_RECORDIO_H
#define DLG_RECORDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data_error.h"
#include "data_source.h"

#define DLG_REC_MAGIC 0xced7230aU
#define DLG_REC_MAX_LEN ((1U << 29) - 1) /* per part; whole payloads must be < 2^29 too */
#define DLG_REC_HEADER_SIZE 8

static inline uint32_t dlg_rec_lrec(uint32_t cflag, uint32_t len) { return cflag << 29 | len; }
static inline uint32_t dlg_rec_cflag(uint32_t lrec) { return lrec >> 29; }
static inline uint32_t dlg_rec_len(uint32_t lrec) { return lrec & DLG_REC_MAX_LEN; }

/* ---- writer ---------------------------------------------------------------
 * Buffers output (64 KiB) and hands it to the output callback in order. */
typedef struct dlg_rec_writer dlg_rec_writer;

/* start_off: byte position of the output's end (record offsets count from
 * there); must be a multiple of 4.  *o is copied. */
int dlg_rec_writer_open(dlg_rec_writer **out, const dlg_output *o, uint64_t start_off,
                        dlg_data_err *err);
/* Appends to fd at its current end (a file whose size is not a multiple
 * of 4 is refused: it is not a .rec).  The fd stays the caller's. */
int dlg_rec_writer_open_fd(dlg_rec_writer **out, int fd, const char *name, dlg_data_err *err);
/* Writes one record; *rec_off (may be NULL) gets the offset of its first
 * magic, which is what the .idx stores.  len must be < 2^29. */
int dlg_rec_write(dlg_rec_writer *w, const void *payload, size_t len, uint64_t *rec_off,
                  dlg_data_err *err);
/* Byte position after everything written so far. */
uint64_t dlg_rec_writer_offset(const dlg_rec_writer *w);
/* How many magic occurrences were escaped by splitting (dmlc's except_counter). */
uint64_t dlg_rec_writer_splits(const dlg_rec_writer *w);
int dlg_rec_writer_flush(dlg_rec_writer *w, dlg_data_err *err);
/* Flushes and frees (frees even when the flush fails). */
int dlg_rec_writer_close(dlg_rec_writer *w, dlg_data_err *err);

/* ---- reader ---------------------------------------------------------------
 * Reads through src->pread with a read-ahead window, so sequential records
 * cost about one callback per window, not two per record. */
typedef struct dlg_rec_reader dlg_rec_reader;

typedef struct dlg_rec {
    const uint8_t *data; /* reassembled payload; valid until the next read */
    size_t len;
    uint64_t offset;     /* byte position of the record's first magic */
    uint64_t end;        /* byte position after its last part and padding */
    uint32_t parts;      /* 1 for an unsplit record */
} dlg_rec;

/* window: read-ahead bytes (0 = 256 KiB).  *src is copied. */
int dlg_rec_reader_open(dlg_rec_reader **out, const dlg_source *src, size_t window,
                        dlg_data_err *err);
void dlg_rec_reader_close(dlg_rec_reader *r);
/* Positions at a known record start (from an .idx); off must be aligned. */
int dlg_rec_reader_seek(dlg_rec_reader *r, uint64_t off, dlg_data_err *err);
/* Resynchronises: scans the 4-byte-aligned positions from off (rounded up)
 * for the magic followed by cflag 0 or 1 and positions there.  Returns 1 and
 * *found, or 0 when no record starts at or after off. */
int dlg_rec_reader_sync(dlg_rec_reader *r, uint64_t off, uint64_t *found, dlg_data_err *err);
/* Reads the record at the current position.  Returns 1 (record in *rec),
 * 0 at a clean end of file, or -DLG_ECORRUPT naming the byte offset for a
 * bad magic, a length past the end, a truncated header or a bad cflag
 * sequence (-DLG_EIO etc. for read failures). */
int dlg_rec_next(dlg_rec_reader *r, dlg_rec *rec, dlg_data_err *err);
/* Current position (where dlg_rec_next will read). */
uint64_t dlg_rec_reader_tell(const dlg_rec_reader *r);

/* ---- .idx: "key<TAB>offset<NEWLINE>" per record --------------------------- */
typedef struct dlg_rec_idx_entry {
    const char *key; /* as written (im2rec writes the integer index) */
    uint64_t offset;
} dlg_rec_idx_entry;

typedef struct dlg_rec_idx {
    dlg_rec_idx_entry *entries; /* in file order */
    size_t n;
    char *text_; /* owns the key strings */
} dlg_rec_idx;

/* Parses .idx text.  rec_size: size of the .rec (DLG_SIZE_UNKNOWN skips the
 * check); an offset past its end, a missing tab, a bad or unaligned offset
 * are errors naming name:line. */
int dlg_rec_idx_parse(dlg_rec_idx *out, const char *text, size_t len, const char *name,
                      uint64_t rec_size, const char *rec_name, dlg_data_err *err);
/* Reads src (at most 1 GiB) and parses it. */
int dlg_rec_idx_load(dlg_rec_idx *out, const dlg_source *src, uint64_t rec_size,
                     const char *rec_name, dlg_data_err *err);
void dlg_rec_idx_free(dlg_rec_idx *idx);
/* Appends one line; a key containing a tab or newline is refused. */
int dlg_rec_idx_append(const dlg_output *o, const char *key, uint64_t offset, dlg_data_err *err);

/* ---- im2rec image records --------------------------------------------------
 * payload := u32 flag | f32 label | u64 id | u64 id2 | flag x f32 | image.
 * With flag > 0 the labels are the array and `label` is 0 (im2rec packs it
 * so).  Native byte order, as MXNet writes it. */
#define DLG_IM2REC_HEADER_SIZE 24

typedef struct dlg_im2rec_header {
    uint32_t flag; /* number of float labels that follow (0: use label) */
    float label;
    uint64_t id;   /* im2rec: the .lst index */
    uint64_t id2;
} dlg_im2rec_header;

typedef struct dlg_im2rec_view {
    dlg_im2rec_header h;
    const uint8_t *labels; /* h.flag float32s, possibly unaligned: use dlg_im2rec_label */
    const uint8_t *image;  /* encoded JPEG/PNG */
    size_t image_len;
} dlg_im2rec_view;

/* Splits a record payload; name/rec_off only label the error message. */
int dlg_im2rec_unpack(const void *payload, size_t len, const char *name, uint64_t rec_off,
                      dlg_im2rec_view *v, dlg_data_err *err);
/* Number of labels: flag, or 1 when flag == 0. */
size_t dlg_im2rec_nlabels(const dlg_im2rec_view *v);
/* Label i (< dlg_im2rec_nlabels): the array when flag > 0, else `label`. */
float dlg_im2rec_label(const dlg_im2rec_view *v, size_t i);
/* Bytes a packed record takes. */
size_t dlg_im2rec_size(uint32_t nlabels, size_t image_len);
/* Packs header, h->flag labels (NULL when flag is 0) and image into out.
 * Returns the bytes written or -DLG_EINVAL when cap is too small. */
int64_t dlg_im2rec_pack(void *out, size_t cap, const dlg_im2rec_header *h, const float *labels,
                        const void *image, size_t image_len, dlg_data_err *err);

/* ---- .lst (im2rec input): "index<TAB>label[<TAB>label...]<TAB>path" -------- */
typedef struct dlg_lst_item {
    int64_t index;
    const char *path;     /* relative path, as written (fields are trimmed) */
    const float *labels;  /* nlabels >= 1 */
    size_t nlabels;
} dlg_lst_item;

typedef struct dlg_lst {
    dlg_lst_item *items; /* in file order */
    size_t n;
    float *labels_;      /* storage */
    char *text_;
} dlg_lst;

/* Blank lines are skipped; anything else malformed is an error naming name:line. */
int dlg_lst_parse(dlg_lst *out, const char *text, size_t len, const char *name,
                  dlg_data_err *err);
int dlg_lst_load(dlg_lst *out, const dlg_source *src, dlg_data_err *err);
void dlg_lst_free(dlg_lst *l);

#endif
