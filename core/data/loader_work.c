/* Per-image work of a loader worker.  Buffers grow only when an image needs
 * more than any before it, so the steady state allocates nothing. */
#include "loader_work.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t *cap, size_t need, size_t elem, dlg_data_err *err)
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

/* The image a worker resamples from: full-resolution size W x H, decoded
 * size sw x sh at DCT scale f. */
typedef struct src_img {
    int W, H, sw, sh;
    double f;
} src_img;

/* Decodes (or converts) the source at the scale the window allows. */
static int source_rgb(const dlg_loader_config *cfg, const dlg_mean_image *mean,
                      dlg_ld_scratch *sc, const dlg_ld_item *it, uint64_t epoch, uint64_t pos,
                      dlg_crop_window *win, src_img *im, dlg_data_err *err)
{
    im->f = 1.0;
    if (it->pixels) { /* raw Datum; an empty encoded record has bytes NULL, not this */
        im->W = im->sw = it->w;
        im->H = im->sh = it->h;
        int rc = mean ? dlg_ld_mean_check(mean, im->W, im->H, it->channels, it->what, err) : 0;
        if (rc < 0)
            return rc;
        dlg_ld_window(cfg, epoch, pos, im->W, im->H, win);
        rc = grow((void **)&sc->rgb, &sc->rgb_cap, (size_t)im->W * im->H * 3, 1, err);
        if (rc < 0)
            return rc;
        raw_to_rgb(it, sc->rgb);
        return 0;
    }
    dlg_jpeg_info info;
    int rc = dlg_jpeg_header(sc->jpeg, it->bytes, it->len, it->what, &info, err);
    if (rc < 0)
        return rc;
    im->W = info.width;
    im->H = info.height;
    if (mean && (rc = dlg_ld_mean_check(mean, im->W, im->H, 0, it->what, err)) < 0)
        return rc;
    dlg_ld_window(cfg, epoch, pos, im->W, im->H, win);
    dlg_jpeg_scale s = dlg_jpeg_pick_scale(win->w, win->h, cfg->crop, cfg->crop);
    size_t need = (size_t)dlg_jpeg_scaled(im->W, s) * dlg_jpeg_scaled(im->H, s) * 3;
    if ((rc = grow((void **)&sc->rgb, &sc->rgb_cap, need, 1, err)) < 0)
        return rc;
    im->f = (double)s.num / s.denom;
    return dlg_jpeg_decode(sc->jpeg, it->bytes, it->len, it->what, s, sc->rgb, sc->rgb_cap,
                           &im->sw, &im->sh, err);
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
    dlg_crop_window win;
    src_img im;
    int n = cfg->crop;
    int rc = source_rgb(cfg, mean, sc, it, epoch, pos, &win, &im, err);
    if (rc < 0)
        return rc;
    /* Scaled pixel i covers source pixels [i/f, (i+1)/f): the map is x*f.
     * sw/W is not f when W*f is not whole (libjpeg rounds sw up), and would
     * shift the far side of the window by up to 7 source pixels. */
    double spanx = win.w * im.f, spany = win.h * im.f;
    int kx = dlg_taps_max(spanx, n), ky = dlg_taps_max(spany, n);
    if ((rc = grow((void **)&sc->w, &sc->w_cap, (size_t)n * (kx + ky), sizeof(float), err)) < 0)
        return rc;
    dlg_taps tx = {n, kx, sc->first, sc->count, sc->w};
    dlg_taps ty = {n, ky, sc->first + n, sc->count + n, sc->w + (size_t)n * kx};
    int bx0, bx1, by0, by1;
    tap_bounds(cfg, win.x * im.f, spanx, im.sw, &bx0, &bx1);
    tap_bounds(cfg, win.y * im.f, spany, im.sh, &by0, &by1);
    dlg_taps_fill_within(&tx, win.x * im.f, spanx, n, bx0, bx1);
    dlg_taps_fill_within(&ty, win.y * im.f, spany, n, by0, by1);
    size_t rows = (size_t)dlg_taps_rows(&ty);
    if ((rc = grow((void **)&sc->tmp, &sc->tmp_cap, rows * n * 3, sizeof(float), err)) < 0)
        return rc;
    dlg_resample_rgb(sc->rgb, (size_t)im.sw * 3, &tx, &ty, sc->tmp, sc->hwc);
    if (mean) /* a Caffe window is whole pixels at scale 1: the resample copied it */
        dlg_ld_sub_mean(mean, sc->hwc, n, (int)win.x, (int)win.y);
    dlg_ld_store(cfg, sc->hwc, n, win.mirror, batch, index);
    return 0;
}
