/* Counter-based randomness, the per-epoch permutation and crop windows.
 * Everything here is a pure function of (seed, epoch, position), which is
 * what makes batches independent of thread count and timing. */
#include "loader_image.h"

#include <math.h>
#include <string.h>

#include <dlgauge/splitmix.h>

uint64_t dlg_ld_hash(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = dlg_splitmix_mix(seed + DLG_SPLITMIX_GAMMA);
    h = dlg_splitmix_mix(h ^ a);
    h = dlg_splitmix_mix(h ^ (b + 0x632be59bd9b4e019ULL));
    return dlg_splitmix_mix(h ^ (c + 0x85157af5ULL));
}

double dlg_ld_uniform(uint64_t key, uint32_t k)
{
    return (double)(dlg_splitmix_mix(key ^ dlg_splitmix_mix(k + 1ULL)) >> 11) * 0x1.0p-53;
}

/* One pass of a 4-round balanced Feistel network on 2*half bits. */
static uint64_t feistel(uint64_t x, unsigned half, uint64_t key)
{
    uint64_t mask = (1ULL << half) - 1;
    uint64_t l = x >> half, r = x & mask;
    for (uint64_t round = 0; round < 4; round++) {
        uint64_t f = dlg_splitmix_mix(key ^ dlg_splitmix_mix(r + round * DLG_SPLITMIX_GAMMA)) & mask;
        uint64_t t = r;
        r = l ^ f;
        l = t;
    }
    return l << half | r;
}

uint64_t dlg_ld_permute(uint64_t pos, uint64_t n, uint64_t seed, uint64_t epoch, bool shuffle)
{
    if (!shuffle || n <= 1)
        return pos;
    unsigned bits = 1;
    while (bits < 64 && (1ULL << bits) < n)
        bits++;
    unsigned half = (bits + 1) / 2;
    uint64_t key = dlg_ld_hash(seed, epoch, 0x7065726dULL, 0);
    uint64_t x = pos;
    do /* cycle walking: the domain is < 4n, so a few passes on average */
        x = feistel(x, half, key);
    while (x >= n);
    return x;
}

/* torchvision RandomResizedCrop.get_params with scale (0.08, 1) and ratio
 * (3/4, 4/3); Python's round() is round-half-even, hence nearbyint. */
static void random_window(uint64_t key, int W, int H, dlg_crop_window *win)
{
    const double lo = log(3.0 / 4.0), hi = log(4.0 / 3.0);
    double area = (double)W * H;
    uint32_t k = 0;
    for (int t = 0; t < 10; t++) {
        double target = area * (0.08 + dlg_ld_uniform(key, k++) * 0.92);
        double ar = exp(lo + dlg_ld_uniform(key, k++) * (hi - lo));
        double w = nearbyint(sqrt(target * ar)), h = nearbyint(sqrt(target / ar));
        if (w > 0 && w <= W && h > 0 && h <= H) {
            win->y = floor(dlg_ld_uniform(key, k++) * (H - h + 1));
            win->x = floor(dlg_ld_uniform(key, k++) * (W - w + 1));
            win->w = w;
            win->h = h;
            return;
        }
    }
    double in_ratio = (double)W / H, w = W, h = H;
    if (in_ratio < 3.0 / 4.0)
        h = nearbyint(w / (3.0 / 4.0));
    else if (in_ratio > 4.0 / 3.0)
        w = nearbyint(h * (4.0 / 3.0));
    win->w = w;
    win->h = h;
    win->x = floor((W - w) / 2);
    win->y = floor((H - h) / 2);
}

/* torchvision Resize(R) (shorter side to R, longer int(R*long/short)) then
 * CenterCrop(crop), expressed as a window of the source image. */
static void center_window(const dlg_loader_config *cfg, int W, int H, dlg_crop_window *win)
{
    int R = cfg->resize > 0 ? cfg->resize : cfg->crop * 256 / 224;
    int nw, nh;
    if (W <= H) {
        nw = R;
        nh = (int)((int64_t)R * H / W);
    } else {
        nh = R;
        nw = (int)((int64_t)R * W / H);
    }
    double top = nearbyint((nh - cfg->crop) / 2.0), left = nearbyint((nw - cfg->crop) / 2.0);
    double sx = (double)W / nw, sy = (double)H / nh;
    win->x = left * sx;
    win->y = top * sy;
    win->w = cfg->crop * sx;
    win->h = cfg->crop * sy;
}

/* Caffe's DataTransformer: a crop x crop window of the image as stored,
 * at a uniform offset (train) or the center, rounded down (infer). */
static void caffe_window(const dlg_loader_config *cfg, uint64_t key, int W, int H,
                         dlg_crop_window *win)
{
    int c = cfg->crop;
    win->w = win->h = c;
    if (cfg->train) { /* Caffe draws h_off, then w_off */
        win->y = floor(dlg_ld_uniform(key, 0) * (H - c + 1));
        win->x = floor(dlg_ld_uniform(key, 1) * (W - c + 1));
    } else {
        win->y = (H - c) / 2;
        win->x = (W - c) / 2;
    }
}

bool dlg_ld_caffe(const dlg_loader_config *cfg)
{
    if (cfg->transform != DLG_TRANSFORM_AUTO)
        return cfg->transform == DLG_TRANSFORM_CAFFE;
    return cfg->mean_file || (cfg->order == DLG_BGR && cfg->pixel_range == 255);
}

/* Why caffe was chosen, for errors: auto's reason, or nothing. */
static const char *caffe_why(const dlg_loader_config *cfg)
{
    if (cfg->transform == DLG_TRANSFORM_CAFFE)
        return "";
    return cfg->mean_file ? " (auto: mean_file is set)"
                          : " (auto: channel_order = bgr with pixel_range = 255 is Caffe's)";
}

/* crop = 0 is Caffe's crop_size 0: only the caffe transform has it, and
 * it takes its size from the records. */
static int whole_check(const dlg_loader_config *cfg, const dlg_host *h)
{
    if (cfg->crop >= 8)
        return 0;
    if (cfg->crop != 0)
        return h->error(h, DLG_EINVAL, "crop = %d: at least 8 (or 0: no crop, Caffe's crop_size "
                        "0, with transform = caffe)", cfg->crop);
    if (!dlg_ld_caffe(cfg))
        return h->error(h, DLG_EINVAL, "crop = 0 (no crop, Caffe's crop_size 0) needs transform = "
                        "caffe (transform is %s): the other transforms resample to crop x crop",
                        cfg->transform == DLG_TRANSFORM_MXNET ? "mxnet" : "torchvision");
    if (cfg->data && !strncmp(cfg->data, "synthetic", 9))
        return h->error(h, DLG_EINVAL, "crop = 0 takes the input size from the records as "
                        "stored; data = %s has none: set crop", cfg->data);
    return 0;
}

int dlg_ld_geom_check(const dlg_loader_config *cfg, const dlg_host *h)
{
    int rc = dlg_ld_mx_check(cfg, h);
    if (rc == 0)
        rc = whole_check(cfg, h);
    if (rc < 0)
        return rc;
    if (cfg->mean_file && !dlg_ld_caffe(cfg))
        return h->error(h, DLG_EINVAL, "mean_file = %s with transform = torchvision: Caffe's "
                        "mean image lines up only with the image as stored; use transform = "
                        "caffe (or auto)", cfg->mean_file);
    rc = dlg_ld_mean_cfg_check(cfg, h);
    if (rc < 0 || !dlg_ld_caffe(cfg) || cfg->resize == 0)
        return rc;
    return h->error(h, DLG_EINVAL, "resize = %d with transform = caffe%s: Caffe crops the image "
                    "as stored, without a resize; unset resize, or set transform = torchvision",
                    cfg->resize, caffe_why(cfg));
}

int dlg_ld_caffe_fits(int W, int H, int crop, bool whole, const char *what, dlg_data_err *err)
{
    if (whole && (W != crop || H != crop))
        return dlg_data_fail(err, DLG_EINVAL, "%s: image is %dx%d but crop = 0 (Caffe's "
                             "crop_size 0: no crop) takes every image whole at the network's "
                             "input size, %dx%d (the first record's): store every image at that "
                             "size (convert_imageset --resize_width/--resize_height), or set crop",
                             what, W, H, crop, crop);
    if (W >= crop && H >= crop)
        return 0;
    return dlg_data_fail(err, DLG_EINVAL, "%s: image is %dx%d, smaller than the %dx%d crop of "
                         "transform = caffe (Caffe refuses it too): store the images at least "
                         "that large (convert_imageset --resize_width/--resize_height), lower "
                         "crop, or set transform = torchvision", what, W, H, crop, crop);
}

uint64_t dlg_ld_item_key(const dlg_loader_config *cfg, uint64_t epoch, uint64_t pos)
{
    return dlg_ld_hash(cfg->seed, epoch, pos, 0x63726f70ULL);
}

void dlg_ld_window(const dlg_loader_config *cfg, uint64_t epoch, uint64_t pos, int W, int H,
                   dlg_crop_window *win)
{
    win->mirror = false;
    uint64_t key = dlg_ld_item_key(cfg, epoch, pos);
    if (dlg_ld_caffe(cfg))
        caffe_window(cfg, key, W, H, win);
    else if (cfg->train)
        random_window(key, W, H, win);
    else
        center_window(cfg, W, H, win);
    /* the same draw under either transform, so mirror = false changes
     * nothing else */
    win->mirror = cfg->train && cfg->mirror && dlg_ld_uniform(key, 1000) < 0.5;
}
