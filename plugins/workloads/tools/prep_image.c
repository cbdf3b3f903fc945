/* preprocess, per thread: pass the file bytes through (checked) or decode,
 * resize the shorter side (im2rec's --resize: the other side scales by
 * integer division) or to an exact W x H (convert_imageset's
 * --resize_width/--resize_height: cv::resize, INTER_LINEAR) with the
 * loader's bilinear resample (antialiased when shrinking, as the loader's
 * resize; OpenCV's INTER_LINEAR is not), and re-encode.  With a mean, the
 * stored bytes are decoded back and summed per thread.  Buffers grow only
 * when a larger image than any before comes. */
#define _GNU_SOURCE
#include "prep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jpeg.h"
#include "loader_image.h"

struct prep_worker {
    prep_params p;
    dlg_jpeg *jpeg;
    uint8_t *rgb;   /* decoded */
    float *tmp;     /* horizontal pass */
    float *hwc;     /* resized, float */
    uint8_t *out8;  /* resized, bytes */
    int *tap_i;     /* first/count for both axes */
    float *tap_w;
    size_t rgb_cap, tmp_cap, hwc_cap, out8_cap, tap_i_cap, tap_w_cap;
    uint64_t *sum[2]; /* mean: 3 x height x width, BGR, per pass parity */
    bool stored;      /* mean: out8 holds the last stored image, decoded */
    char warning[320]; /* the libjpeg warning the last image was kept despite, or "" */
};

int prep_worker_new(prep_worker **out, const prep_params *p, dlg_data_err *err)
{
    prep_worker *w = calloc(1, sizeof *w);
    if (!w)
        return dlg_data_fail(err, DLG_ENOMEM, "out of memory");
    w->p = *p;
    int rc = 0;
    size_t n = (size_t)p->width * (size_t)p->height * 3;
    for (int i = 0; p->mean && i < 2 && rc == 0; i++)
        if (!(w->sum[i] = calloc(n, sizeof *w->sum[i])))
            rc = dlg_data_fail(err, DLG_ENOMEM, "out of memory for the mean's sums "
                               "(%zu bytes per thread)", 2 * n * sizeof(uint64_t));
    if (rc == 0 && (p->resize > 0 || p->width > 0))
        rc = dlg_jpeg_new(&w->jpeg, err);
    if (rc < 0) {
        prep_worker_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void prep_worker_free(prep_worker *w)
{
    if (!w)
        return;
    if (w->jpeg)
        dlg_jpeg_free(w->jpeg);
    free(w->rgb);
    free(w->tmp);
    free(w->hwc);
    free(w->out8);
    free(w->tap_i);
    free(w->tap_w);
    free(w->sum[0]);
    free(w->sum[1]);
    free(w);
}

/* Grows *buf to hold n elements of size sz. */
static int grow(void *buf, size_t *cap, size_t n, size_t sz)
{
    void **b = buf;
    if (n <= *cap)
        return 0;
    void *p = realloc(*b, n * sz);
    if (!p)
        return -1;
    *b = p;
    *cap = n;
    return 0;
}

/* Every image, whatever its name: the loader decodes JPEG only, so a PNG,
 * BMP... stored as it is (im2rec --pass-through would) makes a dataset
 * that cannot be read back. */
static int check_passthrough(prep_worker *w, const prep_item *it, const uint8_t *file, size_t len,
                             dlg_data_err *err)
{
    (void)w;
    int rc = dlg_jpeg_require(file, len, it->path, err);
    if (rc < 0)
        return rc;
    if (!dlg_jpeg_has_eoi(file, len))
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: truncated JPEG (no EOI marker near byte %zu)",
                             it->path, len);
    return 0;
}

/* The size im2rec gives: shorter side = resize, the other by integer
 * division; or convert_imageset's exact size. */
static void target_size(int W, int H, const prep_params *p, int *ow, int *oh)
{
    int resize = p->resize;
    if (p->width > 0) {
        *ow = p->width;
        *oh = p->height;
    } else if (W <= H) {
        *ow = resize;
        *oh = (int)((int64_t)H * resize / W);
    } else {
        *oh = resize;
        *ow = (int)((int64_t)W * resize / H);
    }
    if (*ow < 1)
        *ow = 1;
    if (*oh < 1)
        *oh = 1;
}

static int resample(prep_worker *w, int dw, int dh, int ow, int oh, const char *what, dlg_data_err *err)
{
    int kx = dlg_taps_max(dw, ow), ky = dlg_taps_max(dh, oh);
    if (grow(&w->tap_i, &w->tap_i_cap, 2 * ((size_t)ow + (size_t)oh), sizeof(int)) ||
        grow(&w->tap_w, &w->tap_w_cap, (size_t)ow * kx + (size_t)oh * ky, sizeof(float)))
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory for resize taps", what);
    dlg_taps tx = {ow, kx, w->tap_i, w->tap_i + ow, w->tap_w};
    dlg_taps ty = {oh, ky, w->tap_i + 2 * ow, w->tap_i + 2 * ow + oh, w->tap_w + (size_t)ow * kx};
    dlg_taps_fill(&tx, 0, dw, ow, dw);
    dlg_taps_fill(&ty, 0, dh, oh, dh);
    size_t tmp_n = (size_t)dlg_taps_rows(&ty) * (size_t)ow * 3, out_n = (size_t)ow * (size_t)oh * 3;
    if (grow(&w->tmp, &w->tmp_cap, tmp_n, sizeof(float)) || grow(&w->hwc, &w->hwc_cap, out_n, sizeof(float)) ||
        grow(&w->out8, &w->out8_cap, out_n, 1))
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory resizing to %dx%d", what, ow, oh);
    dlg_resample_rgb(w->rgb, (size_t)dw * 3, &tx, &ty, w->tmp, w->hwc);
    for (size_t i = 0; i < out_n; i++) {
        float v = w->hwc[i] + 0.5f;
        w->out8[i] = v <= 0.0f ? 0 : v >= 255.0f ? 255 : (uint8_t)v;
    }
    return 0;
}

/* The stored image as a reader decodes it (lossy JPEG: not the pixels
 * encoded), into out8, which the encoder is done with. */
static int decode_stored(prep_worker *w, const prep_item *it, const uint8_t *jpg, size_t len, int ow,
                         int oh, dlg_data_err *err)
{
    dlg_jpeg_scale one = {1, 1};
    int dw = 0, dh = 0;
    int rc = dlg_jpeg_decode(w->jpeg, jpg, len, it->path, one, w->out8, w->out8_cap, &dw, &dh, err);
    if (rc == 0 && (dw != ow || dh != oh))
        rc = dlg_data_fail(err, DLG_EIO, "%s: re-encoded image decodes as %dx%d, not %dx%d", it->path,
                           dw, dh, ow, oh);
    w->stored = rc == 0;
    return rc;
}

static int transcode(prep_worker *w, const prep_item *it, const uint8_t *file, size_t len,
                     const uint8_t **out, size_t *out_len, dlg_data_err *err)
{
    int rc = dlg_jpeg_require(file, len, it->path, err);
    if (rc < 0)
        return rc;
    dlg_jpeg_info info;
    rc = dlg_jpeg_header(w->jpeg, file, len, it->path, &info, err);
    if (rc < 0)
        return rc;
    int ow, oh;
    target_size(info.width, info.height, &w->p, &ow, &oh);
    if (ow > DLG_JPEG_MAX_SIDE || oh > DLG_JPEG_MAX_SIDE) /* a thin image's long side */
        return dlg_data_fail(err, DLG_EINVAL, "%s: resizing %dx%d to %dx%d: a JPEG side is at most "
                             "%d pixels (a smaller resize, or width and height, would fit)", it->path,
                             info.width, info.height, ow, oh, DLG_JPEG_MAX_SIDE);
    if ((uint64_t)ow * (uint64_t)oh > DLG_JPEG_MAX_PIXELS)
        return dlg_data_fail(err, DLG_EINVAL, "%s: resizing %dx%d to %dx%d is too large", it->path,
                             info.width, info.height, ow, oh);
    dlg_jpeg_scale s = dlg_jpeg_pick_scale(info.width, info.height, ow, oh);
    int sw = dlg_jpeg_scaled(info.width, s), sh = dlg_jpeg_scaled(info.height, s);
    if (grow(&w->rgb, &w->rgb_cap, (size_t)sw * (size_t)sh * 3, 1))
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory decoding %dx%d", it->path, sw, sh);
    int dw = 0, dh = 0;
    uint64_t warned0 = dlg_jpeg_warnings(w->jpeg);
    rc = dlg_jpeg_decode(w->jpeg, file, len, it->path, s, w->rgb, w->rgb_cap, &dw, &dh, err);
    if (rc == 0 && dlg_jpeg_warnings(w->jpeg) != warned0)
        snprintf(w->warning, sizeof w->warning, "%s", dlg_jpeg_last_warning(w->jpeg));
    if (rc == 0)
        rc = resample(w, dw, dh, ow, oh, it->path, err);
    if (rc == 0)
        rc = dlg_jpeg_encode(w->jpeg, w->out8, ow, oh, w->p.quality, out, out_len, err);
    if (rc == 0 && w->p.mean)
        rc = decode_stored(w, it, *out, *out_len, ow, oh, err);
    return rc;
}

int prep_worker_run(prep_worker *w, const prep_item *it, const uint8_t *file, size_t len,
                    const uint8_t **out, size_t *out_len, dlg_data_err *err)
{
    w->stored = false;
    w->warning[0] = '\0';
    if (w->p.resize <= 0 && w->p.width <= 0) {
        int rc = check_passthrough(w, it, file, len, err);
        *out = file;
        *out_len = len;
        return rc;
    }
    return transcode(w, it, file, len, out, out_len, err);
}

const char *prep_worker_warning(const prep_worker *w) { return w->warning[0] ? w->warning : NULL; }

int prep_worker_sum_last(prep_worker *w, unsigned which, dlg_data_err *err)
{
    if (!w->stored) /* only transcoded images reach here with a mean */
        return dlg_data_fail(err, DLG_EIO, "no decoded image to add to the mean");
    size_t plane = (size_t)w->p.width * (size_t)w->p.height;
    uint64_t *b = w->sum[which & 1], *g = b + plane, *r = g + plane;
    const uint8_t *px = w->out8;
    for (size_t i = 0; i < plane; i++, px += 3) { /* RGB HWC -> the Datum's BGR CHW */
        r[i] += px[0];
        g[i] += px[1];
        b[i] += px[2];
    }
    return 0;
}

void prep_worker_take_sum(prep_worker *w, unsigned which, uint64_t *dst)
{
    uint64_t *s = w->sum[which & 1];
    size_t n = (size_t)w->p.width * (size_t)w->p.height * 3;
    for (size_t i = 0; i < n; i++)
        dst[i] += s[i];
    memset(s, 0, n * sizeof *s);
}
