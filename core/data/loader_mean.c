/* Caffe's mean_file: a BlobProto mean image subtracted per pixel at the
 * crop's offset into the stored image (DataTransformer::Transform). */
#include "binaryproto.h"
#include "loader_image.h"

#include <stdlib.h>
#include <string.h>

int dlg_ld_mean_cfg_check(const dlg_loader_config *cfg, const dlg_host *h)
{
    if (!cfg->mean_file)
        return 0;
    if (!cfg->mean_file[0])
        return h->error(h, DLG_EINVAL, "mean_file: empty path");
    if (cfg->pixel_range != 255)
        return h->error(h, DLG_EINVAL, "mean_file = %s needs pixel_range = 255: a Caffe mean "
                        "image is in 0..255 units", cfg->mean_file);
    if (cfg->resize != 0)
        return h->error(h, DLG_EINVAL, "mean_file = %s with resize = %d: Caffe crops the image as "
                        "stored, so the mean's pixels line up; leave resize unset",
                        cfg->mean_file, cfg->resize);
    return 0;
}

int dlg_ld_mean_load(dlg_mean_image *m, const dlg_loader_config *cfg, dlg_data_err *err)
{
    memset(m, 0, sizeof *m);
    dlg_blobproto b;
    const char *path = cfg->mean_file;
    int rc = dlg_blobproto_read(&b, path, err);
    if (rc < 0)
        return rc;
    if (b.num < 1 || b.channels != 3 || b.height < cfg->crop || b.width < cfg->crop)
        rc = dlg_data_fail(err, DLG_EINVAL,
                           "mean_file = %s: mean image is %lld x %lld x %lld x %lld (num x "
                           "channels x height x width); expected 1 x 3 x H x W (BGR) with H, W "
                           ">= crop %d%s",
                           path, (long long)b.num, (long long)b.channels, (long long)b.height,
                           (long long)b.width, cfg->crop,
                           b.axes == 3 ? " (a 3-axis shape C x H x W reads as num C, channels "
                                         "H in Caffe too: write num 1 first)"
                                       : "");
    else if (!(m->path = strdup(path)))
        rc = dlg_data_fail(err, DLG_ENOMEM, "mean_file = %s: out of memory", path);
    if (rc < 0) {
        dlg_blobproto_free(&b);
        return rc;
    }
    m->w = (int)b.width;
    m->h = (int)b.height;
    m->bgr = b.data; /* the first image's planes lead: Caffe ignores the rest */
    return 0;
}

void dlg_ld_mean_free(dlg_mean_image *m)
{
    free(m->path);
    free(m->bgr);
    memset(m, 0, sizeof *m);
}

int dlg_ld_mean_check(const dlg_mean_image *m, int W, int H, int channels, const char *what,
                      dlg_data_err *err)
{
    if (W == m->w && H == m->h && (channels == 0 || channels == 3))
        return 0;
    return dlg_data_fail(err, DLG_EINVAL,
                         "%s: image is %dx%d%s but mean_file %s is %dx%d x 3: Caffe subtracts "
                         "the mean at the stored size, so every image must be stored at it "
                         "(convert_imageset --resize_width/--resize_height)",
                         what, W, H, channels == 1 ? " gray" : "", m->path, m->w, m->h);
}

void dlg_ld_sub_mean(const dlg_mean_image *m, float *hwc, int s, int x0, int y0)
{
    size_t plane = (size_t)m->w * m->h;
    for (int c = 0; c < 3; c++) {
        const float *mp = m->bgr + (size_t)(2 - c) * plane; /* RGB channel c is BGR plane 2-c */
        for (int y = 0; y < s; y++) {
            const float *mrow = mp + (size_t)(y0 + y) * m->w + x0;
            float *px = hwc + (size_t)y * s * 3 + c;
            for (int x = 0; x < s; x++)
                px[3 * x] -= mrow[x];
        }
    }
}
