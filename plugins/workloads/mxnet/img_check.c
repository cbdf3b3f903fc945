/* The RecordIO image-size check (see img_check.h). */
#include "img_check.h"

#include <string.h>

#include "jpeg.h"
#include "recordio.h"

typedef struct host_src {
    const dlg_host *h;
    dlg_file *f;
} host_src;

static int64_t host_pread(void *ctx, void *buf, size_t n, uint64_t off)
{
    host_src *s = ctx;
    return s->h->file_read(s->h, s->f, buf, n, off);
}

static int check_records(const dlg_host *h, dlg_rec_reader *r, dlg_jpeg *j, const char *path,
                         int side, const char *name, int records)
{
    dlg_data_err err = {0};
    for (int i = 0; i < records; i++) {
        dlg_rec rec;
        dlg_im2rec_view v;
        dlg_jpeg_info info;
        int rc = dlg_rec_next(r, &rec, &err);
        if (rc == 0)
            return 0;
        if (rc < 0 || dlg_im2rec_unpack(rec.data, rec.len, path, rec.offset, &v, &err) < 0)
            return h->error(h, err.code ? err.code : DLG_ECORRUPT, "%s", err.msg);
        if (!dlg_jpeg_is_jpeg(v.image, v.image_len))
            continue; /* PNG and others: the loader reports them */
        if (dlg_jpeg_header(j, v.image, v.image_len, path, &info, &err) < 0)
            return h->error(h, err.code ? err.code : DLG_ECORRUPT, "%s", err.msg);
        if ((info.width < side || info.height < side) && strcmp(name, "crop") == 0)
            return h->error(h, DLG_EINVAL,
                            "data = recordio:%s: the image at byte offset %llu is %dx%d, smaller "
                            "than the %dx%d crop (pack larger images, e.g. im2rec --resize %d, "
                            "or lower crop)",
                            path, (unsigned long long)rec.offset, info.width, info.height, side,
                            side, side * 8 / 7);
        if (info.width < side || info.height < side)
            return h->error(h, DLG_EINVAL,
                            "data = recordio:%s: the image at byte offset %llu is %dx%d, smaller "
                            "than %s = %d, which MXNet refuses too (input image size smaller "
                            "than max_crop_size): pack larger images or lower %s",
                            path, (unsigned long long)rec.offset, info.width, info.height, name,
                            side, name);
    }
    return 0;
}

int img_check_recordio(const dlg_host *h, const char *data, int side, const char *name,
                       int records)
{
    if (strncmp(data, "recordio:", 9) != 0)
        return 0;
    const char *path = data + 9;
    host_src hs = {h, NULL};
    uint64_t size = 0;
    int rc = h->file_open(h, NULL, path, &hs.f);
    if (rc < 0) /* the loader names the problem when it opens the file */
        return 0;
    dlg_data_err err = {0};
    dlg_rec_reader *r = NULL;
    dlg_jpeg *j = NULL;
    if (h->file_size(h, hs.f, &size) < 0)
        size = DLG_SIZE_UNKNOWN;
    dlg_source src = {host_pread, &hs, size, path, NULL};
    if (dlg_rec_reader_open(&r, &src, 0, &err) < 0 || dlg_jpeg_new(&j, &err) < 0)
        rc = h->error(h, err.code ? err.code : DLG_ENOMEM, "%s", err.msg);
    else
        rc = check_records(h, r, j, path, side, name, records);
    dlg_jpeg_free(j);
    if (r)
        dlg_rec_reader_close(r);
    h->file_close(h, hs.f);
    return rc;
}
