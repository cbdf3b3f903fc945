/* preprocess output: im2rec-layout RecordIO (.rec + .idx) or a
 * convert_imageset-layout LMDB of encoded Datums, and compute_image_mean's
 * mean image.  Each pass writes to a .part name that replaces PATH only once
 * the pass is complete.  RecordIO goes through the host's file_write (the
 * job's storage backend): an emulated disk shapes it by its write limits
 * and the row counts it.  liblmdb does its own I/O, so LMDB output is
 * neither shaped nor counted there (the report reads write_mb_per_s). */
#define _GNU_SOURCE
#include "prep_output.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binaryproto.h"
#include "datum.h"
#include "lmdb_dataset.h"
#include "recordio.h"

/* One file written through the host, in HOST_OUT_BUF-byte writes as the
 * page cache's writeback issues them (a .idx line per write would be an
 * I/O per image to an emulated disk). */
#define HOST_OUT_BUF ((size_t)1 << 20)
typedef struct host_out {
    const dlg_host *h;
    dlg_file *f;
    uint64_t off;   /* of buf[0] in the file */
    uint8_t *buf;   /* HOST_OUT_BUF bytes, kept for the output's life */
    size_t used;
    bool *failed;   /* the output's: the host has raised the error */
} host_out;

struct prep_output {
    prep_format fmt;
    prep_names n;              /* .rec or LMDB dir, its .part, .idx ... */
    const dlg_host *h;
    host_out rec_out, idx_file;
    bool host_failed;
    dlg_rec_writer *rec;
    dlg_output idx_out;
    dlg_lmdb_writer *db;
    uint8_t *scratch;          /* one packed record */
    size_t scratch_cap;
    uint64_t bytes;            /* put, the open pass's included */
    uint64_t committed;        /* of those, the passes renamed into place */
    bool open;
};

int prep_output_parse(const char *spec, prep_format *fmt, const char **path)
{
    if ((*path = tools_after_prefix(spec, "recordio")) != NULL)
        *fmt = PREP_RECORDIO;
    else if ((*path = tools_after_prefix(spec, "lmdb")) != NULL)
        *fmt = PREP_LMDB;
    else
        return -DLG_EINVAL;
    return **path ? 0 : -DLG_EINVAL;
}

static int host_out_flush(host_out *w)
{
    if (w->used == 0)
        return 0;
    int rc = w->h->file_write(w->h, w->f, w->buf, w->used, w->off);
    if (rc < 0) {
        *w->failed = true;
        return rc;
    }
    w->off += w->used;
    w->used = 0;
    return 0;
}

static int64_t host_out_write(void *ctx, const void *p, size_t n)
{
    host_out *w = ctx;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < HOST_OUT_BUF - w->used ? n - done : HOST_OUT_BUF - w->used;
        memcpy(w->buf + w->used, (const uint8_t *)p + done, k);
        w->used += k;
        done += k;
        int rc = w->used == HOST_OUT_BUF ? host_out_flush(w) : 0;
        if (rc < 0)
            return rc;
    }
    return (int64_t)n;
}

static int host_out_create(host_out *w, const char *path, dlg_data_err *err)
{
    w->off = w->used = 0;
    int rc = w->h->file_create(w->h, NULL, path, &w->f);
    if (rc < 0) {
        w->f = NULL;
        *w->failed = true;
        return dlg_data_fail(err, -rc, "%s: cannot create", path); /* the host said why */
    }
    return 0;
}

/* Writes what is buffered (unless an error came first: its line stands)
 * and closes. */
static int host_out_close(host_out *w, bool flush)
{
    if (!w->f)
        return 0;
    int rc = flush ? host_out_flush(w) : 0;
    /* a write the file system deferred to close fails the output too */
    int r = 0;
    if (DLG_HOST_HAS(w->h, file_close_written))
        r = w->h->file_close_written(w->h, w->f);
    else
        w->h->file_close(w->h, w->f);
    if (r < 0 && rc == 0) {
        *w->failed = true;
        rc = r;
    }
    w->f = NULL;
    w->used = 0;
    return rc;
}

int prep_output_new(prep_output **out, const dlg_host *h, prep_format fmt, const char *path,
                    dlg_data_err *err)
{
    prep_output *o = calloc(1, sizeof *o);
    if (!o)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    o->fmt = fmt;
    o->h = h;
    bool bufs = prep_names_make(&o->n, fmt, path) == 0;
    if (fmt == PREP_RECORDIO) {
        host_out *w[2] = {&o->rec_out, &o->idx_file};
        for (int i = 0; i < 2; i++) {
            *w[i] = (host_out){.h = h, .failed = &o->host_failed, .buf = malloc(HOST_OUT_BUF)};
            bufs = bufs && w[i]->buf;
        }
    }
    if (!bufs) {
        prep_output_free(o);
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    }
    *out = o;
    return 0;
}

int prep_output_check_labels(const prep_output *o, const prep_input *in, dlg_data_err *err)
{
    if (o->fmt != PREP_LMDB)
        return 0; /* im2rec keeps any number of float labels */
    for (size_t i = 0; i < in->n; i++) {
        const prep_item *it = &in->items[i];
        float l = it->labels[0];
        if (it->nlabels != 1)
            return dlg_data_fail(err, DLG_EINVAL,
                                 "output = lmdb:%s: %s has %u labels, a Caffe Datum holds one "
                                 "(write recordio: for a multi-label list)",
                                 o->n.path, it->rel, it->nlabels);
        if (!it->int_label &&
            (!(l >= -2147483648.0f && l < 2147483648.0f) || l != (float)(int32_t)l))
            return dlg_data_fail(err, DLG_EINVAL,
                                 "output = lmdb:%s: %s has label %g, a Caffe Datum label is a "
                                 "whole number (int32)",
                                 o->n.path, it->rel, (double)l);
    }
    return 0;
}

static int begin_recordio(prep_output *o, dlg_data_err *err)
{
    int rc = host_out_create(&o->rec_out, o->n.part, err);
    if (rc == 0)
        rc = host_out_create(&o->idx_file, o->n.idx_part, err);
    if (rc < 0)
        return rc;
    o->idx_out = (dlg_output){host_out_write, &o->idx_file, o->n.idx_part};
    dlg_output rec = {host_out_write, &o->rec_out, o->n.part};
    return dlg_rec_writer_open(&o->rec, &rec, 0, err);
}

/* An error the host has raised (a backend's write failure, with its
 * reason: a full disk) stands; the writers' own line would hide it. */
static int host_said(prep_output *o, dlg_data_err *err, int rc)
{
    if (rc < 0 && o->host_failed && err)
        err->msg[0] = '\0';
    return rc;
}

int prep_output_begin(prep_output *o, dlg_data_err *err)
{
    o->open = true;
    o->host_failed = false;
    if (o->fmt == PREP_RECORDIO)
        return host_said(o, err, begin_recordio(o, err));
    int rc = prep_lmdb_dir_remove(o->n.path, o->n.part, err); /* left by a crashed run */
    return rc < 0 ? rc : dlg_lmdb_writer_open(&o->db, o->n.part, err);
}

/* Length of the .idx line dlg_rec_idx_append writes for key at off. */
static uint64_t idx_line_bytes(const char *key, uint64_t off)
{
    char digits[24];
    return strlen(key) + (uint64_t)snprintf(digits, sizeof digits, "%" PRIu64, off) + 2;
}

static int put_recordio(prep_output *o, const prep_item *it, const void *img, size_t len,
                        dlg_data_err *err)
{
    bool multi = it->nlabels > 1;
    size_t need = dlg_im2rec_size(multi ? it->nlabels : 0, len);
    if (need > o->scratch_cap) {
        uint8_t *p = realloc(o->scratch, need);
        if (!p)
            return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory for a %zu-byte record", it->rel, need);
        o->scratch = p;
        o->scratch_cap = need;
    }
    /* im2rec: one label in the header, several as a float array (flag = n) */
    dlg_im2rec_header h = {multi ? it->nlabels : 0, multi ? 0.0f : it->labels[0], (uint64_t)it->index, 0};
    int64_t n = dlg_im2rec_pack(o->scratch, o->scratch_cap, &h, multi ? it->labels : NULL, img, len, err);
    if (n < 0)
        return (int)n;
    uint64_t off = 0;
    int rc = dlg_rec_write(o->rec, o->scratch, (size_t)n, &off, err);
    if (rc < 0)
        return rc;
    char key[24];
    snprintf(key, sizeof key, "%" PRId64, it->index);
    rc = dlg_rec_idx_append(&o->idx_out, key, off, err);
    if (rc < 0)
        return rc;
    /* what the files grew by: the record's framing, split parts and padding
     * (the writer's offset), and the .idx line "key\toffset\n" */
    o->bytes += dlg_rec_writer_offset(o->rec) - off + idx_line_bytes(key, off);
    return 0;
}

int prep_output_put(prep_output *o, const prep_item *it, const void *img, size_t len, dlg_data_err *err)
{
    if (o->fmt == PREP_RECORDIO)
        return host_said(o, err, put_recordio(o, it, img, len, err));
    dlg_datum d;
    dlg_datum_init(&d);
    dlg_datum_set_encoded(&d, img, len, it->int_label ? it->label : (int32_t)it->labels[0]);
    int rc = dlg_lmdb_writer_put(o->db, it->line, it->rel, &d, err);
    if (rc == 0)
        o->bytes += dlg_datum_encoded_size(&d) + strlen(it->rel) + 9;
    return rc;
}

/* Closes what the pass has open; keeps the first error. */
static int close_pass(prep_output *o, dlg_data_err *err)
{
    int rc = 0;
    if (o->rec) {
        rc = dlg_rec_writer_close(o->rec, err);
        o->rec = NULL;
    }
    if (o->db) {
        int r = dlg_lmdb_writer_close(o->db, rc < 0 ? NULL : err);
        rc = rc < 0 ? rc : r;
        o->db = NULL;
    }
    host_out *w[2] = {&o->rec_out, &o->idx_file};
    for (int i = 0; i < 2; i++) {
        int r = host_out_close(w[i], rc == 0 && !o->host_failed);
        rc = rc < 0 ? rc : r;
    }
    o->open = false;
    return rc;
}

static int rename_over(const char *from, const char *to, dlg_data_err *err)
{
    if (rename(from, to) != 0)
        return dlg_data_fail(err, DLG_EIO, "rename %s -> %s: %s", from, to, strerror(errno));
    return 0;
}

/* Removes the files of an unfinished pass. */
static void drop_part(prep_output *o)
{
    if (o->fmt == PREP_RECORDIO) {
        unlink(o->n.part);
        unlink(o->n.idx_part);
    } else {
        prep_lmdb_dir_remove(o->n.path, o->n.part, NULL);
    }
}

/* The new .rec and .idx replace the old.  The old .idx waits aside (at
 * old) until the .rec is in place, and comes back if it cannot be: a crash
 * in between leaves a .rec without an index (readers scan it), never one
 * beside another .rec's, and nothing is deleted before its replacement is
 * in place. */
static int commit_recordio(prep_output *o, dlg_data_err *err)
{
    bool aside = rename(o->n.idx, o->n.old) == 0;
    if (!aside && errno != ENOENT)
        return dlg_data_fail(err, DLG_EIO, "output = recordio:%s: cannot move %s aside to %s: %s", o->n.path,
                             o->n.idx, o->n.old, strerror(errno));
    int rc = rename_over(o->n.part, o->n.path, err);
    if (rc < 0) {
        if (aside)
            rename(o->n.old, o->n.idx);
        return rc;
    }
    unlink(o->n.old); /* the old .rec's index, of no use now */
    if (rename(o->n.idx_part, o->n.idx) != 0)
        return dlg_data_fail(err, DLG_EIO, "output = recordio:%s: the new .rec is in place, but its index is "
                             "not: rename %s -> %s: %s", o->n.path, o->n.idx_part, o->n.idx, strerror(errno));
    return 0;
}

/* The new LMDB folder replaces the old, which waits aside (at old) until
 * then and is removed after. */
static int commit_lmdb(prep_output *o, dlg_data_err *err)
{
    int rc = prep_lmdb_dir_remove(o->n.path, o->n.old, err); /* a crashed commit's */
    if (rc < 0)
        return rc;
    bool aside = rename(o->n.path, o->n.old) == 0;
    if (!aside && errno != ENOENT)
        return dlg_data_fail(err, DLG_EIO, "output = lmdb:%s: cannot move it aside to %s: %s", o->n.path,
                             o->n.old, strerror(errno));
    rc = rename_over(o->n.part, o->n.path, err);
    if (rc < 0 && aside)
        rename(o->n.old, o->n.path);
    if (rc == 0 && aside)
        prep_lmdb_dir_remove(o->n.path, o->n.old, NULL);
    return rc;
}

/* A failed commit drops the pass's output and says so after its error
 * (unless the host said it, in its own words). */
static int dropped(prep_output *o, dlg_data_err *err, int rc)
{
    drop_part(o);
    size_t n = err ? strlen(err->msg) : 0;
    if (n && n < sizeof err->msg)
        snprintf(err->msg + n, sizeof err->msg - n, "; the pass's output %s was dropped", o->n.part);
    return rc;
}

int prep_output_commit(prep_output *o, dlg_data_err *err)
{
    int rc = host_said(o, err, close_pass(o, err));
    if (rc < 0)
        return dropped(o, err, rc); /* e.g. the last LMDB commit hit a full disk */
    /* what stands there now, the pass having taken its time, is still ours to replace */
    if ((rc = prep_names_check_replace(&o->n, o->fmt, err)) < 0)
        return dropped(o, err, rc);
    rc = o->fmt == PREP_RECORDIO ? commit_recordio(o, err) : commit_lmdb(o, err);
    if (rc < 0)
        return dropped(o, err, rc);
    o->committed = o->bytes;
    /* a disk must hold the output too (storage_files_bytes) */
    if (DLG_HOST_HAS(o->h, file_kept)) {
        o->h->file_kept(o->h, o->n.path);
        if (o->fmt == PREP_RECORDIO)
            o->h->file_kept(o->h, o->n.idx);
    }
    return 0;
}

uint64_t prep_output_bytes(const prep_output *o) { return o->bytes; }

uint64_t prep_output_committed_bytes(const prep_output *o) { return o->committed; }

void prep_output_free(prep_output *o)
{
    if (!o)
        return;
    if (o->open) {
        close_pass(o, NULL);
        drop_part(o);
    }
    free(o->scratch);
    free(o->rec_out.buf);
    free(o->idx_file.buf);
    prep_names_free(&o->n);
    free(o);
}

/* A new file beside path (path.XXXXXX.part), created exclusively: what it
 * names is this process's alone.  Its fd, or -1 (errno set); *tmp gets the
 * malloc'd name (NULL when out of memory). */
static int mean_tmp(const char *path, char **tmp)
{
    *tmp = tools_concat(path, ".XXXXXX.part");
    if (!*tmp) {
        errno = ENOMEM;
        return -1;
    }
    int fd = mkostemps(*tmp, 5, O_CLOEXEC);
    if (fd >= 0)
        fchmod(fd, 0644); /* as compute_image_mean's, not mkstemp's 0600 */
    return fd;
}

int prep_mean_probe(const char *path, dlg_data_err *err)
{
    char *tmp;
    int fd = mean_tmp(path, &tmp), rc = 0;
    if (fd < 0)
        rc = dlg_data_fail(err, DLG_EINVAL, "mean_output = %s: cannot create a file beside it (%s): %s", path,
                           tmp ? tmp : "", strerror(errno));
    else {
        close(fd);
        unlink(tmp); /* created by us, O_EXCL */
    }
    free(tmp);
    return rc;
}

int prep_mean_write(const char *path, const uint64_t *sum, uint64_t count, int w, int h,
                    dlg_data_err *err)
{
    if (count == 0)
        return dlg_data_fail(err, DLG_EINVAL, "mean_output = %s: no image was stored in the pass "
                             "(all skipped): no mean to write", path);
    size_t n = (size_t)w * (size_t)h * 3;
    float *mean = malloc(n * sizeof *mean);
    char *part = NULL;
    int fd = mean ? mean_tmp(path, &part) : -1;
    int rc = 0;
    if (!mean || (fd < 0 && !part))
        rc = dlg_data_fail(err, DLG_ENOMEM, "mean_output = %s: out of memory", path);
    else if (fd < 0)
        rc = dlg_data_fail(err, DLG_EIO, "mean_output = %s: cannot create %s: %s", path, part, strerror(errno));
    else
        close(fd);
    /* compute_image_mean sums in float and divides by the count; exact
     * integer sums give its result bit for bit while its float sums are
     * exact (below 2^24: 65793 images), the true mean rounded beyond */
    for (size_t i = 0; rc == 0 && i < n; i++)
        mean[i] = (float)((double)sum[i] / (double)count);
    if (rc == 0)
        rc = dlg_blobproto_write(part, 3, h, w, mean, err); /* our own file */
    if (rc == 0) /* what stands there now, the pass having taken its time, is still ours to replace */
        rc = prep_mean_check_file(path, err);
    if (rc == 0)
        rc = rename_over(part, path, err);
    if (rc < 0 && fd >= 0)
        unlink(part);
    free(mean);
    free(part);
    return rc;
}
