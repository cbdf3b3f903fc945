/* The loader's dataset sources: each turns "record i" into encoded image
 * bytes (or raw pixels) and a label, reading through the job's storage
 * backend (lmdb: through its own mmap).  One worker context per thread. */
#ifndef DLG_LOADER_SRC_H
#define DLG_LOADER_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data_error.h"
#include "data_source.h"
#include "loader.h"

typedef struct dlg_ld_item {
    const uint8_t *bytes; /* encoded image (JPEG); may be NULL when len is 0 */
    size_t len;
    const uint8_t *pixels; /* raw Datum: uint8 CHW, BGR (channels 1 or 3); NULL when encoded */
    const float *fpixels;  /* a Datum of float_data instead: float CHW, BGR; else NULL */
    int w, h, channels;
    int32_t label;
    uint64_t bytes_read;   /* bytes the storage delivered for this record */
    char what[320];        /* "file@offset" / "db key 'k'": names it in errors */
} dlg_ld_item;

typedef struct dlg_ld_src dlg_ld_src;

typedef struct dlg_ld_src_ops {
    const char *name; /* "recordio", "lmdb", "files" */
    int (*worker_open)(dlg_ld_src *s, void **w, dlg_data_err *err);
    void (*worker_close)(dlg_ld_src *s, void *w);
    /* Record `index` (< s->n); the item's pointers stay valid until the
     * next read on the same worker. */
    int (*read)(dlg_ld_src *s, void *w, uint64_t index, dlg_ld_item *it, dlg_data_err *err);
    /* Path of dataset file i (< s->nfiles) into buf, for the cache modes. */
    const char *(*file_path)(const dlg_ld_src *s, size_t i, char *buf, size_t cap);
    void (*close)(dlg_ld_src *s);
} dlg_ld_src_ops;

struct dlg_ld_src {
    const dlg_ld_src_ops *ops;
    const dlg_host *h;
    uint64_t n;          /* records */
    size_t nfiles;       /* files the dataset consists of */
    uint64_t bytes;      /* their total size */
    int nclasses;        /* 0 when unknown */
};

int dlg_ld_src_recordio(dlg_ld_src **out, const char *path, const dlg_host *h, dlg_data_err *err);
int dlg_ld_src_files(dlg_ld_src **out, const char *path, const dlg_host *h, dlg_data_err *err);
int dlg_ld_src_lmdb(dlg_ld_src **out, const char *path, const dlg_host *h, dlg_data_err *err);
/* The source a data spec names (recordio:, lmdb:, files:; not synthetic). */
int dlg_ld_src_open(dlg_ld_src **out, const char *spec, const dlg_host *h, dlg_data_err *err);

/* skip_corrupt: how many records stand in for a corrupt one, and which
 * failures it skips (not running out of memory, a stop, or a bug). */
#define DLG_LD_SKIP_TRIES 64
static inline bool dlg_ld_skippable(int code)
{
    return code != DLG_ENOMEM && code != DLG_ESTOP && code != DLG_EINTERNAL;
}

/* crop = 0 (loader_whole.c): the size of the source's first record (with
 * skip_corrupt, of the first readable one, as the stream skips to it),
 * which must be square; errors name the record. */
int dlg_ld_whole_size(dlg_ld_src *src, bool skip_corrupt, int *size, dlg_data_err *err);

/* ---- shared helpers (loader_io.c) --------------------------------------- */

/* A growable read buffer that honours a DLG_CAP_DIRECT file's alignment. */
typedef struct dlg_ld_buf {
    uint8_t *p;
    size_t cap;
} dlg_ld_buf;

int dlg_ld_buf_reserve(dlg_ld_buf *b, size_t n, dlg_data_err *err);
void dlg_ld_buf_free(dlg_ld_buf *b);

/* Reads [off, off+n) of f through the host into b; *data points at byte off
 * (inside b, which is aligned and padded as the backend requires).  Returns
 * bytes available at *data (short only at end of file) or -code (err's
 * line with the storage's reason); *io gets the bytes it transferred. */
int64_t dlg_ld_read(const dlg_host *h, dlg_file *f, const char *name, dlg_ld_buf *b, uint64_t off,
                    size_t n, const uint8_t **data, uint64_t *io, dlg_data_err *err);

/* For a file the storage would not open (h->file_open's rc): one error
 * line "WHAT: cannot open: REASON" with the file system's reason when it
 * has one (a missing file + `missing`, no free descriptor: the limit),
 * else the storage's own (host->error_said: O_DIRECT on a tmpfs). */
int dlg_ld_open_failed(const dlg_host *h, const char *path, const char *what, const char *missing, int rc,
                       dlg_data_err *err);

/* A dlg_source reading through an open host file (for .idx/.lst parsers). */
typedef struct dlg_ld_hostfile {
    const dlg_host *h;
    dlg_file *f;
    dlg_ld_buf buf;
    const char *name;
    dlg_data_err why; /* the last failed read's line (the source's why) */
} dlg_ld_hostfile;
int dlg_ld_source_host(dlg_source *s, dlg_ld_hostfile *hf, const dlg_host *h, const char *path,
                       dlg_data_err *err);
void dlg_ld_source_host_close(dlg_ld_hostfile *hf);

/* Applies cache mode to every dataset file; out says what was done. */
int dlg_ld_cache(const dlg_ld_src *s, dlg_cache_mode mode, const dlg_stop_ask *ask, dlg_cache_result *out,
                 dlg_data_err *err);

#endif
