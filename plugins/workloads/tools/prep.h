/* preprocess: an image folder or list -> RecordIO (im2rec layout) or LMDB
 * (convert_imageset layout), optionally resizing the shorter side and
 * re-encoding, on N threads that read through the job's storage backend and
 * hand images back in list order.
 *
 * A pass converts every image once into PATH.part (LMDB: a PATH.part
 * directory) and, when complete, renames it over PATH: PATH always holds a
 * complete conversion.  Steps past the end start the next pass, so any
 * duration or iteration count works; a partial pass is removed at teardown. */
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
    int64_t index;       /* .lst index, else the line/scan position */
    const float *labels; /* nlabels floats */
    uint32_t nlabels;
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
int prep_output_new(prep_output **out, prep_format fmt, const char *path, dlg_data_err *err);
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

/* ---- per-thread image work ----------------------------------------------------- */
typedef struct prep_worker prep_worker;

typedef struct prep_params {
    int resize;          /* shorter side; 0 = pass the bytes through */
    int quality;         /* re-encode quality */
} prep_params;

int prep_worker_new(prep_worker **out, const prep_params *p, dlg_data_err *err);
void prep_worker_free(prep_worker *w);
/* Turns the file bytes of `it` into the bytes to store: a pass-through
 * (checked: a .jpg/.jpeg must be a whole JPEG) or decode, resize, encode.
 * *out stays valid until the next call.  Bad image data is -DLG_ECORRUPT. */
int prep_worker_run(prep_worker *w, const prep_item *it, const uint8_t *file, size_t len,
                    const uint8_t **out, size_t *out_len, dlg_data_err *err);

#endif
