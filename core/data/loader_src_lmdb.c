/* Caffe LMDB source.  LMDB reads through its own mmap, so this source never
 * goes through the job's storage backend (a job that names one is refused:
 * dlg_loader_storage_check); bytes_read counts the Datum values touched.
 * One cursor per worker. */
#include "lmdb_dataset.h"
#include "loader_src.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct lmdb_src {
    dlg_ld_src base;
    char *path;
    dlg_lmdb *db;
} lmdb_src;

static const char *lmdb_file_path(const dlg_ld_src *base, size_t i, char *buf, size_t cap)
{
    const lmdb_src *s = (const lmdb_src *)base;
    struct stat st;
    if (stat(s->path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(buf, cap, "%s/data.mdb", s->path);
    else
        snprintf(buf, cap, "%s", s->path);
    return buf;
}

static int lmdb_worker_open(dlg_ld_src *base, void **w, dlg_data_err *err)
{
    lmdb_src *s = (lmdb_src *)base;
    dlg_lmdb_cursor *c;
    int rc = dlg_lmdb_cursor_open(s->db, &c, err);
    if (rc < 0)
        return rc;
    *w = c;
    return 0;
}

static void lmdb_worker_close(dlg_ld_src *base, void *w)
{
    if (w)
        dlg_lmdb_cursor_close(w);
}

/* Why a decoded Datum is not an image the loader can use, in words. */
static int bad_raw(const dlg_datum *d, bool floats, const char *what, dlg_data_err *err)
{
    if (!(d->has & DLG_DATUM_HAS_DATA) && !floats)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: Datum has no image data (not an LMDB of Caffe image Datums?)",
                             what);
    if (d->channels != 1 && d->channels != 3)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: raw Datum has %d channels; only 1 (gray) or 3 (BGR) are images",
                             what, d->channels);
    if (floats)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: raw Datum %dx%dx%d with %zu float_data values",
                             what, d->channels, d->height, d->width, d->n_float);
    return dlg_data_fail(err, DLG_ECORRUPT, "%s: raw Datum %dx%dx%d with %zu data bytes", what,
                         d->channels, d->height, d->width, d->data_len);
}

static int lmdb_read(dlg_ld_src *base, void *w, uint64_t index, dlg_ld_item *it, dlg_data_err *err)
{
    lmdb_src *s = (lmdb_src *)base;
    dlg_lmdb_record rec;
    int rc = dlg_lmdb_seek(w, index, &rec, err);
    if (rc < 0)
        return rc;
    const dlg_datum *d = rec.datum;
    char key[204];
    snprintf(it->what, sizeof it->what, "%s: key '%s'", s->path,
             dlg_data_printable(key, sizeof key, rec.key, rec.key_len));
    it->bytes_read = rec.value_len;
    it->label = d->label;
    it->fpixels = NULL;
    if (d->encoded && !(d->has & DLG_DATUM_HAS_DATA))
        return bad_raw(d, false, it->what, err);
    if (d->encoded) {
        it->bytes = d->data;
        it->len = d->data_len;
        it->pixels = NULL;
        return 0;
    }
    /* Caffe's DataTransformer takes float_data when data is empty. */
    bool floats = d->data_len == 0 && d->n_float > 0;
    size_t n = floats ? d->n_float : d->data_len;
    if ((d->channels != 1 && d->channels != 3) || d->height <= 0 || d->width <= 0 ||
        (size_t)d->channels * d->height * d->width != n)
        return bad_raw(d, floats, it->what, err);
    it->bytes = NULL;
    it->len = floats ? n * sizeof(float) : n;
    it->pixels = floats ? NULL : d->data;
    it->fpixels = floats ? d->float_data : NULL;
    it->w = d->width;
    it->h = d->height;
    it->channels = d->channels;
    return 0;
}

static void lmdb_close(dlg_ld_src *base)
{
    lmdb_src *s = (lmdb_src *)base;
    if (s->db)
        dlg_lmdb_close(s->db);
    free(s->path);
    free(s);
}

static const dlg_ld_src_ops lmdb_ops = {"lmdb",    lmdb_worker_open, lmdb_worker_close,
                                        lmdb_read, lmdb_file_path,   lmdb_close};

int dlg_ld_src_lmdb(dlg_ld_src **out, const char *path, const dlg_host *h, dlg_data_err *err)
{
    lmdb_src *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    }
    s->base.ops = &lmdb_ops;
    s->base.h = h;
    s->base.nfiles = 1;
    int rc = dlg_lmdb_open(&s->db, path, err);
    if (rc < 0) {
        lmdb_close(&s->base);
        return rc;
    }
    s->base.n = dlg_lmdb_count(s->db);
    char p[4096];
    struct stat st;
    if (stat(lmdb_file_path(&s->base, 0, p, sizeof p), &st) == 0)
        s->base.bytes = (uint64_t)st.st_size;
    *out = &s->base;
    return 0;
}

int dlg_loader_storage_check(const dlg_host *h, const char *data, const dlg_job_info *job)
{
    if (!data || strncmp(data, "lmdb:", 5) != 0 || !DLG_JOB_HAS(job, storage) || !job->storage ||
        strcmp(job->storage, "posix") == 0)
        return 0;
    return h->error(h, DLG_EINVAL,
                    "storage = %s: data = %s is read by LMDB through its own mmap, which no storage "
                    "backend sees (its limits and counters would not apply: the row would measure the "
                    "page cache); read a recordio: or files: dataset through this storage instead "
                    "(dlgauge mkdata, or a preprocess job, converts), or leave storage unset",
                    job->storage, data);
}
