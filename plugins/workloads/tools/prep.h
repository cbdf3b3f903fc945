/* preprocess: an image folder or list -> RecordIO (im2rec layout) or LMDB
 * (convert_imageset layout), optionally resizing (the shorter side, or to
 * an exact W x H as convert_imageset does) and re-encoding, on N threads that read through the job's storage backend and
 * hand images back in list order.
 *
 * A pass converts every image once into PATH.part (LMDB: a PATH.part
 * directory) and, when complete, renames it over PATH: PATH always holds a
 * complete conversion.  Steps past the end start the next pass, so any
 * duration or iteration count works; a partial pass is removed at teardown.
 * With mean_output each complete pass also writes compute_image_mean's
 * BlobProto of the images as stored (workers sum per thread, in integers). */
#ifndef DLG_TOOLS_PREP_H
#define DLG_TOOLS_PREP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data_error.h"
#include "tools.h"

/* ---- input: the images of one pass, in output order ------------------------ */
typedef struct prep_item {
    const char *rel;     /* path relative to the root (LMDB key, messages) */
    const char *path;    /* path opened through the storage backend */
    int64_t index;       /* .lst index, else the line/scan position: RecordIO's id and .idx key */
    int64_t line;        /* the line/scan position: LMDB's key, as convert_imageset numbers
                          * its lines (a shuffled .lst's indexes would put it back in order) */
    const float *labels; /* nlabels floats */
    uint32_t nlabels;
    bool int_label;      /* a list's or scan's int32 label: a float loses it beyond 2^24 */
    int32_t label;       /* that label, exact (a Datum's), when int_label */
} prep_item;

typedef struct prep_input {
    prep_item *items;
    size_t n;
    char *strings_;
    float *labels_;
} prep_input;

/* spec: a class-folder tree, an im2rec .lst ("index\tlabel...\tpath"), or a
 * convert_imageset list ("path label"); root: what list paths are relative
 * to (NULL = the list's folder).  Errors go to err. */
int prep_input_load(prep_input *in, const char *spec, const char *root, dlg_data_err *err);
void prep_input_free(prep_input *in);

/* ---- output ------------------------------------------------------------------ */
typedef enum prep_format { PREP_RECORDIO, PREP_LMDB } prep_format;

typedef struct prep_output prep_output;

/* Parses "recordio:PATH" / "lmdb:PATH"; 0 or -DLG_EINVAL. */
int prep_output_parse(const char *spec, prep_format *fmt, const char **path);
/* RecordIO is written through h's file_create/file_write (the job's
 * storage backend). */
int prep_output_new(prep_output **out, const dlg_host *h, prep_format fmt, const char *path,
                    dlg_data_err *err);
/* LMDB: every item has one whole-number label (a Datum's int32), else one
 * error line naming the image; nothing to check for RecordIO. */
int prep_output_check_labels(const prep_output *o, const prep_input *in, dlg_data_err *err);
/* Starts a pass: creates the .part output. */
int prep_output_begin(prep_output *o, dlg_data_err *err);
/* Appends one image (its encoded bytes). */
int prep_output_put(prep_output *o, const prep_item *it, const void *img, size_t len,
                    dlg_data_err *err);
/* Finishes the pass: closes the .part output and renames it over PATH. */
int prep_output_commit(prep_output *o, dlg_data_err *err);
/* Bytes written since creation (.rec + .idx, or LMDB values + keys). */
uint64_t prep_output_bytes(const prep_output *o);
/* Drops an unfinished pass and frees. */
void prep_output_free(prep_output *o);

/* ---- the mean image (mean_output) ---------------------------------------------- */
/* Checks at setup that a file can be created beside PATH (a new, unique
 * name, created exclusively and removed again): a long pass must not end
 * in an unwritable mean.  Nothing else is touched. */
int prep_mean_probe(const char *path, dlg_data_err *err);
/* Writes compute_image_mean's BlobProto: 1 x 3 x h x w, sum / count in
 * float, from the BGR CHW sums, to a new unique PATH.XXXXXX.part, then,
 * PATH being still absent, empty or a BlobProto (prep_mean_check_file),
 * renames it over PATH. */
int prep_mean_write(const char *path, const uint64_t *sum, uint64_t count, int w, int h,
                    dlg_data_err *err);

/* ---- per-thread image work ----------------------------------------------------- */
typedef struct prep_worker prep_worker;

typedef struct prep_params {
    int resize;          /* shorter side; 0 = pass the bytes through (unless width) */
    int width, height;   /* exact size, aspect not kept (convert_imageset); 0 = off */
    int quality;         /* re-encode quality */
    bool mean;           /* keep the decoded stored pixels for prep_worker_sum_last */
} prep_params;

int prep_worker_new(prep_worker **out, const prep_params *p, dlg_data_err *err);
void prep_worker_free(prep_worker *w);
/* Turns the file bytes of `it` into the bytes to store: a pass-through
 * (checked: a .jpg/.jpeg must be a whole JPEG) or decode, resize, encode.
 * *out stays valid until the next call.  Bad image data is -DLG_ECORRUPT. */
int prep_worker_run(prep_worker *w, const prep_item *it, const uint8_t *file, size_t len,
                    const uint8_t **out, size_t *out_len, dlg_data_err *err);
/* The libjpeg warning ("path: message") the last prep_worker_run's image
 * was decoded and kept despite, or NULL (jpeg.h says which warnings keep
 * an image; a pass-through decodes nothing). */
const char *prep_worker_warning(const prep_worker *w);
/* mean: adds the pixels of the last image stored (decoded back from its
 * bytes, as Caffe decodes a Datum) to the worker's integer sum `which`
 * (0/1: a pass's parity), BGR CHW; 0 or -DLG_ENOMEM. */
int prep_worker_sum_last(prep_worker *w, unsigned which, dlg_data_err *err);
/* dst (3 x height x width) += sum `which`, which restarts at 0. */
void prep_worker_take_sum(prep_worker *w, unsigned which, uint64_t *dst);

#endif
