/* The loader's per-image arithmetic, exposed so tests can check it against
 * an independent reference: counter-based randomness, the per-epoch
 * permutation, crop windows (torchvision or Caffe), the PIL-style bilinear
 * resample and the normalise/store step.  See loader.h for the definitions. */
#ifndef DLG_LOADER_IMAGE_H
#define DLG_LOADER_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader.h"

/* ---- randomness: pure functions of their arguments ---------------------- */
uint64_t dlg_ld_hash(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);
/* Uniform in [0,1) from the k-th draw of the stream `key`. */
double dlg_ld_uniform(uint64_t key, uint32_t k);

/* Position pos (< n) of epoch `epoch` -> record index: a bijection on
 * [0,n) (keyed Feistel network with cycle walking), or identity when
 * shuffle is off. */
uint64_t dlg_ld_permute(uint64_t pos, uint64_t n, uint64_t seed, uint64_t epoch, bool shuffle);

/* ---- crop windows ------------------------------------------------------- */
typedef struct dlg_crop_window {
    double x, y, w, h; /* in source pixels; train windows are whole pixels */
    bool mirror;
} dlg_crop_window;

/* The key of stream item (epoch, pos)'s draws under every transform. */
uint64_t dlg_ld_item_key(const dlg_loader_config *cfg, uint64_t epoch, uint64_t pos);

/* Whether cfg takes Caffe's crop: transform caffe, or auto with a
 * mean_file or Caffe's normalisation (bgr, pixel_range 255). */
bool dlg_ld_caffe(const dlg_loader_config *cfg);
/* The transform's rules on cfg (mean_file's included), reported through
 * h->error: mean_file needs caffe, caffe takes no resize. */
int dlg_ld_geom_check(const dlg_loader_config *cfg, const dlg_host *h);

/* The window for stream item (epoch, pos) of a W x H source image; under
 * caffe, W and H must be at least cfg->crop (dlg_ld_caffe_fits). */
void dlg_ld_window(const dlg_loader_config *cfg, uint64_t epoch, uint64_t pos, int W, int H,
                   dlg_crop_window *win);
/* A W x H image (what names the record) takes a Caffe crop of crop x crop:
 * else an error, as Caffe's CHECK_GE(datum_height, crop_size).  whole
 * (crop = 0, Caffe's crop_size 0): it must be exactly crop x crop, the
 * size of the first record, as Caffe's CHECK_EQ against the blob's shape. */
int dlg_ld_caffe_fits(int W, int H, int crop, bool whole, const char *what, dlg_data_err *err);

/* ---- transform = mxnet (loader_mxnet_opts.c, loader_mxnet.c) ------------ */
/* Which draw k of an item's stream (dlg_ld_uniform(dlg_ld_item_key(..),
 * k)) each of MXNet's random choices takes; the mirror is draw 1000 under
 * every transform.  random_resized_crop's try t takes DLG_MXD_AREA + 5t ..
 * + 5t + 4: area share, ratio, swap, y, x.  The colour jitter's order is
 * one of the 6 orders, floor(6 u); pca_noise's three normals are
 * Box-Muller pairs from DLG_MXD_PCA .. + 3 (a_r and a_g from the first
 * pair, a_b the cosine of the second). */
enum dlg_mx_draw {
    DLG_MXD_SHEAR = 0,
    DLG_MXD_ANGLE,
    DLG_MXD_SCALE,
    DLG_MXD_RATIO,
    DLG_MXD_CROP_Y,
    DLG_MXD_CROP_X,
    DLG_MXD_H,
    DLG_MXD_S,
    DLG_MXD_L,
    DLG_MXD_CROP_SIZE,  /* min/max_crop_size's side */
    DLG_MXD_BRIGHTNESS,
    DLG_MXD_CONTRAST,
    DLG_MXD_SATURATION,
    DLG_MXD_ORDER,      /* the order of those three */
    DLG_MXD_AREA = 16,
    DLG_MXD_PCA = 66,   /* after the area tries' 16 .. 65 */
    DLG_MXD_INTER = 70, /* inter_method = 10's picks: + 0 resize, + 1 warp, + 2 crop's resize,
                           + 3 the enlargement of an image smaller than the crop */
    DLG_MXD_HLS2 = 74   /* the HLS shift's second uniforms: + 0 H, + 1 S, + 2 L */
};

void dlg_ld_mx_defaults(dlg_mxnet_aug *mx);
/* The fragment's mxnet options into mx (v: the fragment's values). */
void dlg_ld_mx_from_opts(dlg_mxnet_aug *mx, const dlg_value *v);
/* cfg->mx's rules: only under transform = mxnet, ranges that are ranges,
 * the interpolations implemented, MXNet's CHECKs; one line through h. */
int dlg_ld_mx_check(const dlg_loader_config *cfg, const dlg_host *h);
/* The aspect ratio's range: [min, max] when min_aspect_ratio is set, else
 * [1 - max, 1 + max]. */
void dlg_ld_mx_aspect(const dlg_mxnet_aug *mx, float *lo, float *hi);
/* Whether MXNet would warp (rotate, shear, scale or aspect asked for). */
bool dlg_ld_mx_warps(const dlg_mxnet_aug *mx);
/* MXNet 1.3+'s HLS shift for key (H, L, S, in its units): per channel
 * u = (u1 + 4 u2) / 5 in float, then int(u * 2 v - v), v = random_h,
 * random_l, random_s. */
void dlg_ld_mx_hls_shift(const dlg_mxnet_aug *mx, uint64_t key, int shift[3]);
/* OpenCV's method (0 nearest .. 4 lanczos4) for a resize or warp from
 * ow x oh to nw x nh, as MXNet's GetInterMethod picks it: inter_method 9
 * cubic when both sides grow, area when both shrink, else bilinear; 10
 * one of 0..4 uniformly by draw k of key; else inter_method itself. */
int dlg_ld_mx_inter(const dlg_mxnet_aug *mx, uint64_t key, uint32_t k, int ow, int oh, int nw,
                    int nh);

/* ---- resample ------------------------------------------------------------ */
typedef struct dlg_taps {
    int n;       /* outputs */
    int maxk;    /* taps stored per output */
    int *first;  /* n: first input index */
    int *count;  /* n: taps used */
    float *w;    /* n * maxk weights */
} dlg_taps;

/* Taps needed per output for a span of `span` inputs mapped to n outputs. */
int dlg_taps_max(double span, int n);
/* Fills t (storage provided by the caller: first/count n ints, w n*maxk
 * floats, maxk >= dlg_taps_max) for the span [x0, x0+span) of an axis of
 * `insize` pixels. */
void dlg_taps_fill(dlg_taps *t, double x0, double span, int n, int insize);
/* The same with taps only on pixels [lo_bound, hi_bound): the whole axis
 * when the image is resized before the crop (infer), the window's own
 * pixels when it is cropped first (train: torchvision resizes the cropped
 * image, so its edge outputs never see pixels outside the window). */
void dlg_taps_fill_within(dlg_taps *t, double x0, double span, int n, int lo_bound, int hi_bound);

/* Resamples packed 8-bit RGB (stride bytes per row) through the taps:
 * rows first into tmp (rows [ty->first[0], last needed) x tx->n x 3 floats),
 * then columns into out (ty->n x tx->n x 3 floats, HWC). */
void dlg_resample_rgb(const uint8_t *src, size_t stride, const dlg_taps *tx, const dlg_taps *ty,
                      float *tmp, float *out);
/* Rows of tmp dlg_resample_rgb needs for ty. */
int dlg_taps_rows(const dlg_taps *ty);

/* Normalises an HWC float image (values 0..255) of size s x s, mirrors it if
 * asked, and stores it as image `index` of a batch buffer in cfg's layout
 * and dtype. */
void dlg_ld_store(const dlg_loader_config *cfg, const float *hwc, int s, bool mirror,
                  void *batch, int index);

/* ---- Caffe's mean image (mean_file) -------------------------------------- */
typedef struct dlg_mean_image {
    char *path;  /* the mean_file, as given */
    int w, h;    /* the size every image must have as stored */
    float *bgr;  /* 3 planes of h x w, B, G, R (the Datum's order) */
} dlg_mean_image;

/* The settings Caffe's semantics need with a mean_file (pixel_range 255,
 * no resize), reported through h->error; 0 without a mean_file. */
int dlg_ld_mean_cfg_check(const dlg_loader_config *cfg, const dlg_host *h);
/* Reads cfg->mean_file and checks it against cfg: 3 channels (the batch's;
 * Caffe compares to the Datum's), num >= 1 (Caffe uses the first image),
 * at least crop x crop.  Errors name the file. */
int dlg_ld_mean_load(dlg_mean_image *m, const dlg_loader_config *cfg, dlg_data_err *err);
void dlg_ld_mean_free(dlg_mean_image *m);
/* An image of W x H with `channels` (0: decoded to RGB) must be the mean's
 * size, as Caffe's DataTransformer requires. */
int dlg_ld_mean_check(const dlg_mean_image *m, int W, int H, int channels, const char *what,
                      dlg_data_err *err);
/* Subtracts mean[c][y0 + y][x0 + x] from the s x s RGB HWC crop taken at
 * (x0, y0) of the stored image, before any mirror, as Caffe does. */
void dlg_ld_sub_mean(const dlg_mean_image *m, float *hwc, int s, int x0, int y0);

/* IEEE half from float, round to nearest even. */
uint16_t dlg_fp16(float f);

#endif
