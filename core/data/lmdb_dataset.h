/* Caffe LMDB datasets (convert_imageset layout): keys "%08d_<relative path>"
 * (so key order is list order), values serialised caffe.Datum.
 *
 * LMDB reads through its own mmap, so this path never goes through a dlgauge
 * storage backend.  One dlg_lmdb per database per process (LMDB forbids
 * opening the same environment twice in one process); each thread opens its
 * own dlg_lmdb_cursor from it. */
#ifndef DLG_LMDB_DATASET_H
#define DLG_LMDB_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "data_error.h"
#include "datum.h"

/* ---- writer (like convert_imageset) ---------------------------------------- */
typedef struct dlg_lmdb_writer dlg_lmdb_writer;

#define DLG_LMDB_COMMIT_EVERY 1000 /* puts per transaction, as convert_imageset */

/* Creates the database directory `path` (it must not exist yet, or be an
 * empty directory).  The map starts at 64 MiB and doubles whenever a commit
 * finds it full (the batch is replayed), so no size needs to be guessed. */
int dlg_lmdb_writer_open(dlg_lmdb_writer **out, const char *path, dlg_data_err *err);
/* Stores datum under key "%08d_%s" (line_id, relpath); commits every
 * DLG_LMDB_COMMIT_EVERY puts.  Keys longer than LMDB's limit (511) are refused. */
int dlg_lmdb_writer_put(dlg_lmdb_writer *w, int64_t line_id, const char *relpath,
                        const dlg_datum *datum, dlg_data_err *err);
/* Stores an arbitrary key/value (tests, foreign layouts). */
int dlg_lmdb_writer_put_raw(dlg_lmdb_writer *w, const void *key, size_t key_len,
                            const void *val, size_t val_len, dlg_data_err *err);
/* Puts so far (committed or pending). */
uint64_t dlg_lmdb_writer_count(const dlg_lmdb_writer *w);
/* Transactions committed so far. */
uint64_t dlg_lmdb_writer_commits(const dlg_lmdb_writer *w);
/* Commits what is pending, syncs and frees (frees even on error). */
int dlg_lmdb_writer_close(dlg_lmdb_writer *w, dlg_data_err *err);

/* Formats the convert_imageset key into buf; returns its length or -1 when
 * cap is too small. */
int dlg_lmdb_key(char *buf, size_t cap, int64_t line_id, const char *relpath);

/* ---- reader -------------------------------------------------------------------- */
typedef struct dlg_lmdb dlg_lmdb;
typedef struct dlg_lmdb_cursor dlg_lmdb_cursor;

typedef struct dlg_lmdb_record {
    uint64_t index;        /* position in key order */
    const char *key;       /* NOT NUL-terminated; valid until the next cursor call */
    size_t key_len;
    const uint8_t *value;  /* the serialised Datum, inside the map */
    size_t value_len;
    const dlg_datum *datum; /* decoded; its data points into the map */
} dlg_lmdb_record;

/* Opens read-only (a directory as Caffe makes, or a single LMDB file).  If the
 * lock file cannot be created (read-only media) it opens without locking.
 * Errors: not an LMDB, no such path, an empty database, a data file
 * shorter than its meta page says (-DLG_ECORRUPT with the byte counts:
 * LMDB maps the file, so reading a missing page would be a SIGBUS), meta
 * pages whose page size liblmdb would divide by or read past the file
 * with, a record count the file cannot hold, and any corrupt branch or
 * leaf page (dlg_lmdb_check, one pass over the key pages: liblmdb would
 * abort or fault on it); -DLG_ECORRUPT naming the byte offset. */
int dlg_lmdb_open(dlg_lmdb **out, const char *path, dlg_data_err *err);
uint64_t dlg_lmdb_count(const dlg_lmdb *db);
void dlg_lmdb_close(dlg_lmdb *db);

/* A read transaction + cursor for one thread at a time (any thread).
 * -DLG_EINVAL if a writer changed the database since open (its new pages
 * were not checked). */
int dlg_lmdb_cursor_open(dlg_lmdb *db, dlg_lmdb_cursor **out, dlg_data_err *err);
void dlg_lmdb_cursor_close(dlg_lmdb_cursor *c);
/* Next record in key order (the first after open or rewind): returns 1, or
 * 0 after the last.  A value that is not a Datum is -DLG_ECORRUPT naming
 * the key. */
int dlg_lmdb_next(dlg_lmdb_cursor *c, dlg_lmdb_record *rec, dlg_data_err *err);
void dlg_lmdb_rewind(dlg_lmdb_cursor *c);
/* Random access by position in key order.  LMDB has no rank lookup, so the
 * cost is: open's check keeps every 256th key (its pass over the leaf
 * pages); each access is one B-tree lookup plus at most 255 cursor steps.
 * Sequential access (index = previous + 1) is a single step.
 * Returns 0 with *rec filled, or -code (out of range: -DLG_EINVAL). */
int dlg_lmdb_seek(dlg_lmdb_cursor *c, uint64_t index, dlg_lmdb_record *rec, dlg_data_err *err);

#endif
