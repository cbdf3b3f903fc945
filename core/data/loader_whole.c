/* crop = 0, Caffe's crop_size 0: no crop, the images used whole.  Caffe's
 * data layer shapes its blob from the first datum and then CHECKs every
 * datum against it; here the first record's size is the crop (and so the
 * network's input size), found by reading that record once at open. */
#include "jpeg.h"
#include "loader_src.h"

#include <stdio.h>
#include <string.h>

/* Record i's size: a raw Datum's, or its JPEG header's. */
static int record_size(dlg_ld_src *src, void *ctx, uint64_t i, int *w, int *h, char *what,
                       size_t cap, dlg_data_err *err)
{
    dlg_ld_item it;
    int rc = src->ops->read(src, ctx, i, &it, err);
    if (rc < 0)
        return rc;
    snprintf(what, cap, "%s", it.what);
    if (it.pixels || it.fpixels) {
        *w = it.w;
        *h = it.h;
        return 0;
    }
    dlg_jpeg *j;
    if ((rc = dlg_jpeg_new(&j, err)) < 0)
        return rc;
    dlg_jpeg_info info = {0};
    rc = dlg_jpeg_header(j, it.bytes, it.len, it.what, &info, err);
    dlg_jpeg_free(j);
    *w = info.width;
    *h = info.height;
    return rc;
}

/* The first readable record's size: record 0's, or with skip_corrupt the
 * first of up to DLG_LD_SKIP_TRIES that reads (the stream's own rule). */
static int first_size(dlg_ld_src *src, bool skip_corrupt, int *w, int *h, char *what,
                      size_t cap, dlg_data_err *err)
{
    void *ctx = NULL;
    int rc = src->ops->worker_open(src, &ctx, err);
    if (rc < 0)
        return rc;
    uint64_t tries = skip_corrupt ? (src->n < DLG_LD_SKIP_TRIES ? src->n : DLG_LD_SKIP_TRIES) : 1;
    for (uint64_t i = 0; i < tries; i++)
        if ((rc = record_size(src, ctx, i, w, h, what, cap, err)) == 0 || !dlg_ld_skippable(-rc))
            break;
    src->ops->worker_close(src, ctx);
    if (rc == 0 || !dlg_ld_skippable(-rc))
        return rc;
    char last[sizeof err->msg]; /* err->msg is both the source and the destination */
    snprintf(last, sizeof last, "%s", err->msg);
    if (!skip_corrupt)
        return dlg_data_fail(err, -rc, "crop = 0 takes the input size from the first "
                             "record, which could not be read: %s", last);
    return dlg_data_fail(err, -rc, "crop = 0 takes the input size from the first readable "
                         "record; skip_corrupt: the first %llu could not be read; last: %s",
                         (unsigned long long)tries, last);
}

int dlg_ld_whole_size(dlg_ld_src *src, bool skip_corrupt, int *size, dlg_data_err *err)
{
    int w = 0, h = 0;
    char what[320] = "";
    int rc = first_size(src, skip_corrupt, &w, &h, what, sizeof what, err);
    if (rc < 0)
        return rc;
    if (w != h || w < 8 || w > 4096)
        return dlg_data_fail(err, DLG_EINVAL, "crop = 0 (Caffe's crop_size 0: no crop) takes the "
                             "input size from the first record, %s, which is %dx%d: the networks "
                             "here take a square input of 8..4096 pixels; store the images "
                             "square (convert_imageset --resize_width = --resize_height), or "
                             "set crop", what, w, h);
    *size = w;
    return 0;
}

int dlg_loader_input_size(const dlg_loader_config *cfg, const dlg_host *h, int *size)
{
    *size = cfg->crop;
    if (cfg->crop != 0)
        return 0;
    if (!cfg->data || !strncmp(cfg->data, "synthetic", 9))
        return h->error(h, DLG_EINVAL, "crop = 0 takes the input size from the records as "
                        "stored; data = %s has none: set crop", cfg->data ? cfg->data : "(none)");
    dlg_data_err err = {0};
    dlg_ld_src *src;
    int rc = dlg_ld_src_open(&src, cfg->data, h, &err);
    if (rc == 0) {
        rc = dlg_ld_whole_size(src, cfg->skip_corrupt, size, &err);
        src->ops->close(src);
    }
    return rc < 0 ? h->error(h, -rc, "%s", err.msg) : 0;
}
