/* transform = mxnet: MXNet ImageRecordIter's default augmenter as MXNet
 * 1.3+ has it (src/io/image_aug_default.cc; checked against 1.3.0's and a
 * later 1.x copy's), in its order: decode at full size (as cv::imdecode),
 * resize the shorter side (resize), one affine warp for rotate / shear /
 * scale / aspect of the whole image (cv::warpAffine, fill_value border;
 * min/max_img_size bound its canvas), pad, crop (or random_resized_crop's
 * or min/max_crop_size's window, then a resize to crop x crop; an image
 * smaller than the crop enlarged to it first), colour jitter (brightness,
 * contrast, saturation in a random order: loader_color.c), HLS jitter, PCA
 * lighting noise, then mirror and normalise as every transform.
 * Each stage writes a whole image into its own per-worker buffer, as
 * OpenCV does, so the CPU cost is MXNet's; the JPEG is never decoded at a
 * DCT scale, since MXNet's warp samples the full-size image and a smaller
 * decode would change both the pixels and the cost. */
#include <math.h>
#include <string.h>

#include "loader_affine.h"
#include "loader_color.h"
#include "loader_hls.h"
#include "loader_work.h"

#define AREA_TRIES 10 /* MXNet's, five draws each (DLG_MXD_AREA) */

void dlg_ld_mx_aspect(const dlg_mxnet_aug *mx, float *lo, float *hi)
{
    if (mx->min_aspect_ratio > 0) {
        *lo = mx->min_aspect_ratio;
        *hi = mx->max_aspect_ratio;
    } else {
        *lo = 1 - mx->max_aspect_ratio;
        *hi = 1 + mx->max_aspect_ratio;
    }
}

/* MXNet's condition for the warp. */
bool dlg_ld_mx_warps(const dlg_mxnet_aug *mx)
{
    float lo, hi;
    dlg_ld_mx_aspect(mx, &lo, &hi);
    return mx->max_rotate_angle > 0 || mx->max_shear_ratio > 0 || mx->rotate > 0 ||
           mx->max_random_scale != 1 || mx->min_random_scale != 1 ||
           (!mx->random_resized_crop && (lo != 1 || hi != 1)) || mx->max_img_size != 1e10f ||
           mx->min_img_size != 0;
}

/* MXNet 1.3+'s condition for random_resized_crop to crop at all. */
static bool area_crops(const dlg_mxnet_aug *mx)
{
    float lo, hi;
    dlg_ld_mx_aspect(mx, &lo, &hi);
    return mx->min_random_area != 1 || mx->max_random_area != 1 || lo != 1 || hi != 1;
}

static float draw(uint64_t key, uint32_t k) { return (float)dlg_ld_uniform(key, k); }

int dlg_ld_mx_inter(const dlg_mxnet_aug *mx, uint64_t key, uint32_t k, int ow, int oh, int nw,
                    int nh)
{
    if (mx->inter_method == 9)
        return nw > ow && nh > oh ? 2 : nw < ow && nh < oh ? 3 : 1;
    if (mx->inter_method == 10) /* uniform_int_distribution<size_t>(0, 4) */
        return (int)floor(dlg_ld_uniform(key, k) * 5);
    return mx->inter_method;
}

/* OpenCV method m's sampling in cv::resize or cv::warpAffine (whose
 * bilinear steps in 1/32 pixel, not 1/2048). */
static int cv_interp(int m, bool warp)
{
    static const int code[5] = {DLG_WARP_NEAREST, DLG_WARP_RESIZE_BITS, DLG_WARP_CUBIC,
                                DLG_WARP_AREA, DLG_WARP_LANCZOS4};
    if (m < 0 || m > 4) /* dlg_ld_mx_check refuses these; a config built by hand may not */
        m = 1;
    return warp && m == 1 ? DLG_WARP_AFFINE_BITS : code[m];
}

/* cv::resize's sampling for a resize of src to nw x nh (draw k for 10). */
static int resize_interp(const dlg_mxnet_aug *mx, uint64_t key, uint32_t k, const dlg_rgb8 *src,
                         int nw, int nh)
{
    return cv_interp(dlg_ld_mx_inter(mx, key, k, src->w, src->h, nw, nh), false);
}

/* A w x h image in buffer i of the worker's scratch; no larger than the
 * decoder would take (a scale of 100 on a large photo). */
static int stage_buf(dlg_ld_scratch *sc, int i, int w, int h, const char *what, dlg_rgb8 *out,
                     dlg_data_err *err)
{
    if ((uint64_t)w * (uint64_t)h > DLG_JPEG_MAX_PIXELS)
        return dlg_data_fail(err, DLG_EINVAL, "%s: %dx%d after transform = mxnet's resize/warp/pad "
                             "is more than %llu pixels (lower max_random_scale or resize)", what,
                             w, h, (unsigned long long)DLG_JPEG_MAX_PIXELS);
    int rc = dlg_ld_grow((void **)&sc->aug[i], &sc->aug_cap[i], (size_t)w * h * 3, 1, err);
    *out = (dlg_rgb8){sc->aug[i], w, h, (size_t)w * 3};
    return rc;
}

/* MXNet's resize: the shorter side to `resize`, the longer in proportion
 * (integer arithmetic), by cv::resize. */
static int mx_resize(const dlg_loader_config *cfg, dlg_ld_scratch *sc, uint64_t key,
                     dlg_rgb8 *img, const char *what, dlg_data_err *err)
{
    int r = cfg->resize, nw, nh;
    if (img->h > img->w) {
        nw = r;
        nh = (int)((int64_t)r * img->h / img->w);
    } else {
        nh = r;
        nw = (int)((int64_t)r * img->w / img->h);
    }
    if (nw < 1 || nh < 1)
        return dlg_data_fail(err, DLG_EINVAL, "%s: image is %dx%d: resize = %d leaves its longer "
                             "side nothing", what, img->w, img->h, r);
    dlg_rgb8 out;
    int rc = stage_buf(sc, 0, nw, nh, what, &out, err);
    if (rc < 0)
        return rc;
    dlg_resize_rgb(img, &out, resize_interp(&cfg->mx, key, DLG_MXD_INTER, img, nw, nh));
    *img = out;
    return 0;
}

/* The one affine warp, with MXNet's draws. */
static int mx_warp(const dlg_loader_config *cfg, dlg_ld_scratch *sc, uint64_t key, dlg_rgb8 *img,
                   const char *what, dlg_data_err *err)
{
    const dlg_mxnet_aug *mx = &cfg->mx;
    float shear = draw(key, DLG_MXD_SHEAR) * mx->max_shear_ratio * 2 - mx->max_shear_ratio;
    int m = mx->max_rotate_angle;
    int angle = (int)floor(dlg_ld_uniform(key, DLG_MXD_ANGLE) * (2 * m + 1)) - m;
    if (mx->rotate > 0)
        angle = mx->rotate;
    float scale = 1, ratio = 1, lo, hi;
    if (!mx->random_resized_crop) {
        dlg_ld_mx_aspect(mx, &lo, &hi);
        scale = draw(key, DLG_MXD_SCALE) * (mx->max_random_scale - mx->min_random_scale) +
                mx->min_random_scale;
        ratio = draw(key, DLG_MXD_RATIO) * (hi - lo) + lo;
    }
    dlg_affine fwd, inv;
    int nw, nh;
    dlg_mx_affine_sized(shear, angle, scale, ratio, img->w, img->h, mx->min_img_size,
                        mx->max_img_size, &fwd, &nw, &nh);
    if (nw < 1 || nh < 1)
        return dlg_data_fail(err, DLG_EINVAL, "%s: image is %dx%d: scaled by %g it has no pixels "
                             "left (transform = mxnet; raise min_random_scale or max_img_size)",
                             what, img->w, img->h, (double)scale);
    dlg_rgb8 out;
    int rc = stage_buf(sc, 1, nw, nh, what, &out, err);
    if (rc < 0)
        return rc;
    dlg_affine_invert(&fwd, &inv);
    dlg_warp_rgb(img, &out, &inv, mx->fill_value,
                 cv_interp(dlg_ld_mx_inter(mx, key, DLG_MXD_INTER + 1, img->w, img->h, nw, nh),
                           true));
    *img = out;
    return 0;
}

/* cv::copyMakeBorder with fill_value on every side. */
static int mx_pad(const dlg_mxnet_aug *mx, dlg_ld_scratch *sc, dlg_rgb8 *img, const char *what,
                  dlg_data_err *err)
{
    int p = mx->pad;
    dlg_rgb8 out;
    int rc = stage_buf(sc, 2, img->w + 2 * p, img->h + 2 * p, what, &out, err);
    if (rc < 0)
        return rc;
    memset(out.px, mx->fill_value, out.stride * (size_t)out.h);
    for (int y = 0; y < img->h; y++)
        memcpy(out.px + (size_t)(y + p) * out.stride + (size_t)p * 3,
               img->px + (size_t)y * img->stride, (size_t)img->w * 3);
    *img = out;
    return 0;
}

static dlg_rgb8 view(const dlg_rgb8 *img, int x, int y, int w, int h)
{
    return (dlg_rgb8){img->px + (size_t)y * img->stride + (size_t)x * 3, w, h, img->stride};
}

/* MXNet 1.3+'s random_resized_crop: up to 10 windows of random area share
 * and aspect (sides swapped half the time); the first that fits is
 * resized to crop x crop.  Returns 1 when one fit. */
static int area_crop(const dlg_loader_config *cfg, dlg_ld_scratch *sc, uint64_t key,
                     const dlg_rgb8 *img, dlg_rgb8 *out, const char *what, dlg_data_err *err)
{
    const dlg_mxnet_aug *mx = &cfg->mx;
    float lo, hi, area = (float)img->w * (float)img->h;
    dlg_ld_mx_aspect(mx, &lo, &hi);
    for (uint32_t t = 0, k = DLG_MXD_AREA; t < AREA_TRIES; t++, k += 5) {
        float share = draw(key, k) * (mx->max_random_area - mx->min_random_area) +
                      mx->min_random_area;
        float ratio = draw(key, k + 1) * (hi - lo) + lo, target = area * share;
        int ya = (int)roundf(sqrtf(target / ratio)), xa = (int)roundf(sqrtf(target * ratio));
        if (draw(key, k + 2) > 0.5f) {
            int s = ya;
            ya = xa;
            xa = s;
        }
        if (ya < 1 || xa < 1 || ya > img->h || xa > img->w)
            continue;
        int y = (int)floor(dlg_ld_uniform(key, k + 3) * (img->h - ya + 1));
        int x = (int)floor(dlg_ld_uniform(key, k + 4) * (img->w - xa + 1));
        dlg_rgb8 roi = view(img, x, y, xa, ya);
        int rc = stage_buf(sc, 3, cfg->crop, cfg->crop, what, out, err);
        if (rc < 0)
            return rc;
        dlg_resize_rgb(&roi, out, resize_interp(mx, key, DLG_MXD_INTER + 2, &roi, cfg->crop,
                                                cfg->crop));
        return 1;
    }
    return 0;
}

/* min/max_crop_size's window: a side drawn in [min, max], then y, then x
 * at uniform offsets, as MXNet draws them; resized to crop x crop. */
static int size_crop(const dlg_loader_config *cfg, dlg_ld_scratch *sc, uint64_t key,
                     const dlg_rgb8 *img, dlg_rgb8 *out, const char *what, dlg_data_err *err)
{
    const dlg_mxnet_aug *mx = &cfg->mx;
    int lo = mx->min_crop_size, hi = mx->max_crop_size;
    if (img->w < hi || img->h < hi)
        return dlg_data_fail(err, DLG_EINVAL,
                             "%s: image is %dx%d after transform = mxnet's resize/warp/pad, "
                             "smaller than max_crop_size = %d (MXNet stops on it too: input "
                             "image size smaller than max_crop_size)", what, img->w, img->h, hi);
    int s = lo + (int)floor(dlg_ld_uniform(key, DLG_MXD_CROP_SIZE) * (hi - lo + 1));
    int y = (int)floor(dlg_ld_uniform(key, DLG_MXD_CROP_Y) * (img->h - s + 1));
    int x = (int)floor(dlg_ld_uniform(key, DLG_MXD_CROP_X) * (img->w - s + 1));
    dlg_rgb8 roi = view(img, x, y, s, s);
    int rc = stage_buf(sc, 3, cfg->crop, cfg->crop, what, out, err);
    if (rc == 0)
        dlg_resize_rgb(&roi, out, resize_interp(mx, key, DLG_MXD_INTER + 2, &roi, cfg->crop,
                                                cfg->crop));
    return rc;
}

/* One cv::resize of *img to nw x nh into a stage buffer other than its own
 * (3, else 0: neither holds anything needed later). */
static int resize_to(dlg_ld_scratch *sc, dlg_rgb8 *img, int nw, int nh, int interp,
                     const char *what, dlg_data_err *err)
{
    dlg_rgb8 out;
    int rc = stage_buf(sc, img->px == sc->aug[3] ? 0 : 3, nw, nh, what, &out, err);
    if (rc < 0)
        return rc;
    dlg_resize_rgb(img, &out, interp);
    *img = out;
    return 0;
}

/* MXNet 1.3+'s image smaller than the crop (its !is_cropped path): the
 * height brought to the crop, then the width, each side in proportion
 * (float arithmetic, truncated), by cv::resize with the one method picked
 * from the image's size to the crop's (draw DLG_MXD_INTER + 3 for 10). */
int dlg_ld_mx_enlarge(const dlg_loader_config *cfg, dlg_ld_scratch *sc, uint64_t key,
                      dlg_rgb8 *img, const char *what, dlg_data_err *err)
{
    int c = cfg->crop, rc = 0;
    int interp = cv_interp(dlg_ld_mx_inter(&cfg->mx, key, DLG_MXD_INTER + 3, img->w, img->h, c, c),
                           false);
    if (img->h < c)
        rc = resize_to(sc, img, (int)((float)c / (float)img->h * (float)img->w), c, interp, what,
                       err);
    if (rc == 0 && img->w < c)
        rc = resize_to(sc, img, c, (int)((float)c / (float)img->w * (float)img->h), interp, what,
                       err);
    return rc;
}

/* The crop x crop window: random_resized_crop's or min/max_crop_size's
 * (train), else a uniform offset (train: MXNet's rand_crop) or the centre
 * rounded down, of the image enlarged first if smaller than the crop. */
static int mx_crop(const dlg_loader_config *cfg, dlg_ld_scratch *sc, uint64_t key,
                   const dlg_rgb8 *src, dlg_rgb8 *out, const char *what, dlg_data_err *err)
{
    const dlg_mxnet_aug *mx = &cfg->mx;
    int c = cfg->crop, rc;
    if (cfg->train && mx->random_resized_crop && area_crops(mx) &&
        (rc = area_crop(cfg, sc, key, src, out, what, err)) != 0)
        return rc < 0 ? rc : 0;
    if (cfg->train && mx->min_crop_size > 0)
        return size_crop(cfg, sc, key, src, out, what, err);
    dlg_rgb8 img = *src;
    if ((img.w < c || img.h < c) && (rc = dlg_ld_mx_enlarge(cfg, sc, key, &img, what, err)) < 0)
        return rc;
    int y = img.h - c, x = img.w - c;
    if (cfg->train && !mx->random_resized_crop) { /* MXNet draws y, then x */
        y = (int)floor(dlg_ld_uniform(key, DLG_MXD_CROP_Y) * (y + 1));
        x = (int)floor(dlg_ld_uniform(key, DLG_MXD_CROP_X) * (x + 1));
    } else {
        y /= 2;
        x /= 2;
    }
    *out = view(&img, x, y, c, c);
    return 0;
}

/* MXNet 1.3+'s HLS shift: u = (u1 + 4 u2) / 5 in float (its "approximation
 * of gaussian", draws k and k2), then the int of u * 2v - v, truncated
 * towards 0. */
static int hls_shift(uint64_t key, uint32_t k, uint32_t k2, int v)
{
    float u = draw(key, k);
    u += 4 * draw(key, k2);
    u = u / 5;
    return (int)(u * (float)v * 2 - (float)v);
}

void dlg_ld_mx_hls_shift(const dlg_mxnet_aug *mx, uint64_t key, int shift[3])
{
    shift[0] = hls_shift(key, DLG_MXD_H, DLG_MXD_HLS2, mx->random_h);
    shift[1] = hls_shift(key, DLG_MXD_L, DLG_MXD_HLS2 + 2, mx->random_l);
    shift[2] = hls_shift(key, DLG_MXD_S, DLG_MXD_HLS2 + 1, mx->random_s);
}

/* A jitter factor 1 + U(-v, v): libstdc++'s float uniform, then MXNet's
 * 1.0 + in double. */
static float factor(uint64_t key, uint32_t k, float v)
{
    return (float)(1.0 + (double)(draw(key, k) * (v + v) - v));
}

/* MXNet's colour jitter, in place on the crop's bytes: all three factors
 * are drawn when any is on (1 leaves the bytes alone), the order is
 * std::random_shuffle's (here a keyed draw of one of the 6). */
static void mx_color(const dlg_mxnet_aug *mx, uint64_t key, const dlg_rgb8 *crop)
{
    float alpha[3] = {factor(key, DLG_MXD_BRIGHTNESS, mx->brightness),
                      factor(key, DLG_MXD_CONTRAST, mx->contrast),
                      factor(key, DLG_MXD_SATURATION, mx->saturation)};
    int order[3];
    dlg_mx_color_order((int)floor(dlg_ld_uniform(key, DLG_MXD_ORDER) * 6), order);
    dlg_mx_color_jitter(crop, alpha, order);
}

/* Two N(0, 1) draws from the uniforms k, k + 1 (Box-Muller). */
static void normals(uint64_t key, uint32_t k, double z[2])
{
    double r = sqrt(-2 * log(1 - dlg_ld_uniform(key, k)));
    double t = 2 * M_PI * dlg_ld_uniform(key, k + 1);
    z[0] = r * cos(t);
    z[1] = r * sin(t);
}

/* MXNet's PCA noise on the crop's float bytes: a_r, a_g, a_b from
 * std::normal_distribution<float>(0, pca_noise). */
static void mx_pca(const dlg_mxnet_aug *mx, uint64_t key, float *hwc, int n)
{
    double z[4];
    normals(key, DLG_MXD_PCA, z);
    normals(key, DLG_MXD_PCA + 2, z + 2);
    float a[3], off[3];
    for (int i = 0; i < 3; i++)
        a[i] = (float)z[i] * mx->pca_noise;
    dlg_mx_pca_offsets(a, off);
    dlg_mx_pca_apply(hwc, n, off);
}

/* The crop to floats, through the HLS jitter when it is on. */
static void mx_to_float(const dlg_loader_config *cfg, uint64_t key, const dlg_rgb8 *crop,
                        float *hwc)
{
    const dlg_mxnet_aug *mx = &cfg->mx;
    int n = crop->w;
    if (cfg->train && (mx->random_h || mx->random_s || mx->random_l)) {
        int shift[3];
        dlg_ld_mx_hls_shift(mx, key, shift);
        for (int y = 0; y < crop->h; y++)
            dlg_hls_jitter_row(crop->px + (size_t)y * crop->stride, n, shift,
                               hwc + (size_t)y * n * 3);
        return;
    }
    for (int y = 0; y < crop->h; y++) {
        const uint8_t *p = crop->px + (size_t)y * crop->stride;
        float *o = hwc + (size_t)y * n * 3;
        for (int i = 0; i < 3 * n; i++)
            o[i] = p[i];
    }
}

int dlg_ld_process_mxnet(const dlg_loader_config *cfg, dlg_ld_scratch *sc, const dlg_ld_item *it,
                         uint64_t epoch, uint64_t pos, void *batch, int index, dlg_data_err *err)
{
    const dlg_mxnet_aug *mx = &cfg->mx;
    uint64_t key = dlg_ld_item_key(cfg, epoch, pos);
    int w, h, rc = dlg_ld_decode_full(sc, it, &w, &h, err);
    if (rc < 0)
        return rc;
    dlg_rgb8 img = {sc->rgb, w, h, (size_t)w * 3}, crop;
    if (cfg->resize > 0 && (rc = mx_resize(cfg, sc, key, &img, it->what, err)) < 0)
        return rc;
    if (cfg->train && dlg_ld_mx_warps(mx) && (rc = mx_warp(cfg, sc, key, &img, it->what, err)) < 0)
        return rc;
    if (mx->pad > 0 && (rc = mx_pad(mx, sc, &img, it->what, err)) < 0)
        return rc;
    if ((rc = mx_crop(cfg, sc, key, &img, &crop, it->what, err)) < 0)
        return rc;
    if (cfg->train && (mx->brightness > 0 || mx->contrast > 0 || mx->saturation > 0))
        mx_color(mx, key, &crop);
    mx_to_float(cfg, key, &crop, sc->hwc);
    if (cfg->train && mx->pca_noise > 0)
        mx_pca(mx, key, sc->hwc, cfg->crop * cfg->crop);
    bool mirror = cfg->train && cfg->mirror && dlg_ld_uniform(key, 1000) < 0.5;
    dlg_ld_store(cfg, sc->hwc, cfg->crop, mirror, batch, index);
    return 0;
}
