/* Per-image work of a loader worker.  Buffers grow only when an image needs
 * more than any before it, so the steady state allocates nothing. */
#include "loader_work.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int dlg_ld_grow(void **p, size_t *cap, size_t need, size_t elem, dlg_data_err *err)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    void *q = malloc(n * elem);
    if (!q)
        return dlg_data_fail(err, DLG_ENOMEM, "loader: out of memory (%zu bytes)", n * elem);
    free(*p);
    *p = q;
    *cap = n;
    return 0;
}

int dlg_ld_scratch_init(dlg_ld_scratch *sc, int crop, dlg_data_err *err)
{
    memset(sc, 0, sizeof *sc);
    int rc = dlg_jpeg_new(&sc->jpeg, err);
    if (rc < 0)
        return rc;
    sc->hwc = malloc((size_t)crop * crop * 3 * sizeof *sc->hwc);
    sc->first = malloc((size_t)crop * 2 * sizeof *sc->first);
    sc->count = malloc((size_t)crop * 2 * sizeof *sc->count);
    if (!sc->hwc || !sc->first || !sc->count) {
        dlg_ld_scratch_free(sc);
        return dlg_data_fail(err, DLG_ENOMEM, "loader: out of memory");
    }
    return 0;
}

void dlg_ld_scratch_free(dlg_ld_scratch *sc)
{
    dlg_jpeg_free(sc->jpeg);
    free(sc->rgb);
    free(sc->tmp);
    free(sc->hwc);
    free(sc->first);
    free(sc->count);
    free(sc->w);
    for (int i = 0; i < 4; i++)
        free(sc->aug[i]);
    memset(sc, 0, sizeof *sc);
}

/* Raw Datum (uint8 CHW, BGR or gray) to packed RGB. */
static void raw_to_rgb(const dlg_ld_item *it, uint8_t *rgb)
{
    size_t plane = (size_t)it->w * it->h;
    for (size_t i = 0; i < plane; i++) {
        if (it->channels == 1) {
            rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = it->pixels[i];
        } else {
            rgb[3 * i] = it->pixels[2 * plane + i];
            rgb[3 * i + 1] = it->pixels[plane + i];
            rgb[3 * i + 2] = it->pixels[i];
        }
    }
}

/* The 8-bit paths (torchvision's resample, MXNet's augmenters) have no
 * float input; Caffe's DataTransformer does (process_caffe). */
static int floats_need_caffe(const dlg_ld_item *it, dlg_data_err *err)
{
    return dlg_data_fail(err, DLG_EINVAL,
                         "%s: a float_data Datum is read with transform = caffe only (Caffe's "
                         "DataTransformer); the other transforms work on 8-bit pixels",
                         it->what);
}

int dlg_ld_decode_full(dlg_ld_scratch *sc, const dlg_ld_item *it, int *w, int *h,
                       dlg_data_err *err)
{
    int rc;
    if (it->fpixels)
        return floats_need_caffe(it, err);
    if (it->pixels) {
        *w = it->w;
        *h = it->h;
        if ((rc = dlg_ld_grow((void **)&sc->rgb, &sc->rgb_cap, (size_t)*w * *h * 3, 1, err)) < 0)
            return rc;
        raw_to_rgb(it, sc->rgb);
        return 0;
    }
    dlg_jpeg_info info;
    if ((rc = dlg_jpeg_header(sc->jpeg, it->bytes, it->len, it->what, &info, err)) < 0)
        return rc;
    size_t need = (size_t)info.width * info.height * 3;
    if ((rc = dlg_ld_grow((void **)&sc->rgb, &sc->rgb_cap, need, 1, err)) < 0)
        return rc;
    return dlg_jpeg_decode(sc->jpeg, it->bytes, it->len, it->what, (dlg_jpeg_scale){1, 1}, sc->rgb,
                           sc->rgb_cap, w, h, err);
}

/* The image a worker resamples from: full-resolution size W x H, decoded
 * size sw x sh at DCT scale f. */
typedef struct src_img {
    int W, H, sw, sh;
    double f;
} src_img;

/* The stored size's rules: the mean image's size (mean_file), else at
 * least the crop under caffe (exactly it with crop = 0); torchvision takes
 * any size. */
static int check_size(const dlg_loader_config *cfg, const dlg_mean_image *mean, int W, int H,
                      int channels, const char *what, dlg_data_err *err)
{
    int rc = mean ? dlg_ld_mean_check(mean, W, H, channels, what, err) : 0;
    if (rc == 0 && dlg_ld_caffe(cfg) && (!mean || cfg->whole))
        rc = dlg_ld_caffe_fits(W, H, cfg->crop, cfg->whole, what, err);
    return rc;
}

/* Decodes an encoded record at the scale its window allows (caffe: a
 * window of crop x crop, so scale 1; jpeg_full: always 1). */
static int jpeg_source(const dlg_loader_config *cfg, const dlg_mean_image *mean,
                       dlg_ld_scratch *sc, const dlg_ld_item *it, uint64_t epoch, uint64_t pos,
                       dlg_crop_window *win, src_img *im, dlg_data_err *err)
{
    dlg_jpeg_info info;
    int rc = dlg_jpeg_header(sc->jpeg, it->bytes, it->len, it->what, &info, err);
    if (rc < 0)
        return rc;
    im->W = info.width;
    im->H = info.height;
    if ((rc = check_size(cfg, mean, im->W, im->H, 0, it->what, err)) < 0)
        return rc;
    dlg_ld_window(cfg, epoch, pos, im->W, im->H, win);
    dlg_jpeg_scale s = cfg->jpeg_full ? (dlg_jpeg_scale){1, 1}
                                      : dlg_jpeg_pick_scale(win->w, win->h, cfg->crop, cfg->crop);
    size_t need = (size_t)dlg_jpeg_scaled(im->W, s) * dlg_jpeg_scaled(im->H, s) * 3;
    if ((rc = dlg_ld_grow((void **)&sc->rgb, &sc->rgb_cap, need, 1, err)) < 0)
        return rc;
    im->f = (double)s.num / s.denom;
    return dlg_jpeg_decode(sc->jpeg, it->bytes, it->len, it->what, s, sc->rgb, sc->rgb_cap,
                           &im->sw, &im->sh, err);
}

/* Decodes (or converts) the source at the scale the window allows. */
static int source_rgb(const dlg_loader_config *cfg, dlg_ld_scratch *sc, const dlg_ld_item *it,
                      uint64_t epoch, uint64_t pos, dlg_crop_window *win, src_img *im,
                      dlg_data_err *err)
{
    im->f = 1.0;
    if (!it->pixels) /* an empty encoded record has bytes NULL, not pixels */
        return jpeg_source(cfg, NULL, sc, it, epoch, pos, win, im, err);
    im->W = im->sw = it->w;
    im->H = im->sh = it->h;
    dlg_ld_window(cfg, epoch, pos, im->W, im->H, win);
    int rc = dlg_ld_grow((void **)&sc->rgb, &sc->rgb_cap, (size_t)im->W * im->H * 3, 1, err);
    if (rc < 0)
        return rc;
    raw_to_rgb(it, sc->rgb);
    return 0;
}

/* Copies the s x s window at (x0, y0) of 8-bit channels ch[0..2] (R, G, B;
 * px bytes from pixel to pixel, row bytes from row to row) into hwc. */
static void crop_copy(const uint8_t *const ch[3], size_t px, size_t row, int x0, int y0, int s,
                      float *hwc)
{
    for (int y = 0; y < s; y++) {
        size_t at = (size_t)(y0 + y) * row + (size_t)x0 * px;
        float *o = hwc + (size_t)y * s * 3;
        for (int x = 0; x < s; x++, at += px, o += 3) {
            o[0] = ch[0][at];
            o[1] = ch[1][at];
            o[2] = ch[2][at];
        }
    }
}

/* crop_copy for a float_data Datum's planes (px 1). */
static void crop_copy_f(const float *const ch[3], size_t row, int x0, int y0, int s, float *hwc)
{
    for (int y = 0; y < s; y++) {
        size_t at = (size_t)(y0 + y) * row + (size_t)x0;
        float *o = hwc + (size_t)y * s * 3;
        for (int x = 0; x < s; x++, at++, o += 3) {
            o[0] = ch[0][at];
            o[1] = ch[1][at];
            o[2] = ch[2][at];
        }
    }
}

/* Caffe's DataTransformer: the window of the image as stored, copied
 * without a resample (a raw Datum straight from its planes), the mean
 * image subtracted at the source pixel, then normalise and mirror. */
static int process_caffe(const dlg_loader_config *cfg, const dlg_mean_image *mean,
                         dlg_ld_scratch *sc, const dlg_ld_item *it, uint64_t epoch, uint64_t pos,
                         void *batch, int index, dlg_data_err *err)
{
    dlg_crop_window win;
    const uint8_t *ch[3];
    const float *fch[3];
    size_t px = 1, row;
    int rc;
    if (it->pixels || it->fpixels) {
        size_t plane = (size_t)it->w * it->h;
        if ((rc = check_size(cfg, mean, it->w, it->h, it->channels, it->what, err)) < 0)
            return rc;
        dlg_ld_window(cfg, epoch, pos, it->w, it->h, &win);
        for (int c = 0; c < 3; c++) { /* the Datum's planes are B, G, R (or one gray) */
            size_t at = it->channels == 1 ? 0 : (size_t)(2 - c) * plane;
            ch[c] = it->pixels ? it->pixels + at : NULL;
            fch[c] = it->fpixels ? it->fpixels + at : NULL;
        }
        row = (size_t)it->w;
    } else {
        src_img im;
        if ((rc = jpeg_source(cfg, mean, sc, it, epoch, pos, &win, &im, err)) < 0)
            return rc;
        for (int c = 0; c < 3; c++)
            ch[c] = sc->rgb + c;
        px = 3;
        row = (size_t)im.sw * 3;
    }
    if (it->fpixels) /* then as for bytes: Caffe's (value - mean) * scale */
        crop_copy_f(fch, row, (int)win.x, (int)win.y, cfg->crop, sc->hwc);
    else
        crop_copy(ch, px, row, (int)win.x, (int)win.y, cfg->crop, sc->hwc);
    if (mean)
        dlg_ld_sub_mean(mean, sc->hwc, cfg->crop, (int)win.x, (int)win.y);
    dlg_ld_store(cfg, sc->hwc, cfg->crop, win.mirror, batch, index);
    return 0;
}

/* The pixels of an axis of `size` (scaled) pixels that taps may use: all of
 * them in infer, where the whole image is resized before the center crop;
 * only the window's in train, where torchvision crops and then resizes the
 * crop (a window of whole source pixels; at a DCT scale, the scaled pixels
 * it touches). */
static void tap_bounds(const dlg_loader_config *cfg, double x0, double span, int size, int *lo,
                       int *hi)
{
    *lo = 0;
    *hi = size;
    if (!cfg->train)
        return;
    int a = (int)floor(x0 + 1e-9), b = (int)ceil(x0 + span - 1e-9);
    *lo = a > 0 ? a : 0;
    *hi = b < size ? b : size;
}

int dlg_ld_process(const dlg_loader_config *cfg, const dlg_mean_image *mean, dlg_ld_scratch *sc,
                   const dlg_ld_item *it, uint64_t epoch, uint64_t pos, void *batch, int index,
                   dlg_data_err *err)
{
    if (cfg->transform == DLG_TRANSFORM_MXNET)
        return dlg_ld_process_mxnet(cfg, sc, it, epoch, pos, batch, index, err);
    if (dlg_ld_caffe(cfg))
        return process_caffe(cfg, mean, sc, it, epoch, pos, batch, index, err);
    if (it->fpixels)
        return floats_need_caffe(it, err);
    dlg_crop_window win;
    src_img im;
    int n = cfg->crop;
    int rc = source_rgb(cfg, sc, it, epoch, pos, &win, &im, err);
    if (rc < 0)
        return rc;
    /* Scaled pixel i covers source pixels [i/f, (i+1)/f): the map is x*f.
     * sw/W is not f when W*f is not whole (libjpeg rounds sw up), and would
     * shift the far side of the window by up to 7 source pixels. */
    double spanx = win.w * im.f, spany = win.h * im.f;
    int kx = dlg_taps_max(spanx, n), ky = dlg_taps_max(spany, n);
    size_t taps = (size_t)n * (kx + ky);
    if ((rc = dlg_ld_grow((void **)&sc->w, &sc->w_cap, taps, sizeof(float), err)) < 0)
        return rc;
    dlg_taps tx = {n, kx, sc->first, sc->count, sc->w};
    dlg_taps ty = {n, ky, sc->first + n, sc->count + n, sc->w + (size_t)n * kx};
    int bx0, bx1, by0, by1;
    tap_bounds(cfg, win.x * im.f, spanx, im.sw, &bx0, &bx1);
    tap_bounds(cfg, win.y * im.f, spany, im.sh, &by0, &by1);
    dlg_taps_fill_within(&tx, win.x * im.f, spanx, n, bx0, bx1);
    dlg_taps_fill_within(&ty, win.y * im.f, spany, n, by0, by1);
    size_t rows = (size_t)dlg_taps_rows(&ty);
    if ((rc = dlg_ld_grow((void **)&sc->tmp, &sc->tmp_cap, rows * n * 3, sizeof(float), err)) < 0)
        return rc;
    dlg_resample_rgb(sc->rgb, (size_t)im.sw * 3, &tx, &ty, sc->tmp, sc->hwc);
    dlg_ld_store(cfg, sc->hwc, n, win.mirror, batch, index);
    return 0;
}
