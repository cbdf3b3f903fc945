/* The input pipeline: reads image records through the job's storage backend,
 * decodes JPEG (libjpeg-turbo, DCT-domain scaling), crops/resizes/mirrors/
 * normalises into K reusable batch buffers on N worker threads, so that
 * I/O and decode overlap the consumer's compute.
 *
 * Data specs (cfg.data):
 *   recordio:FILE     MXNet .rec; index FILE.idx, or FILE with .rec -> .idx
 *   lmdb:PATH         Caffe LMDB of Datum (encoded or raw BGR): its folder, or
 *                     the one file of an MDB_NOSUBDIR LMDB.  LMDB reads
 *                     through its OWN mmap: this path never goes through
 *                     the job's storage backend.
 *   files:LIST|DIR    a convert_imageset list file ("relpath label", paths
 *                     relative to the list's folder), an im2rec .lst (by
 *                     its .lst suffix: index, label, path by tabs) or an
 *                     ImageNet-style class-folder tree (labels = sorted
 *                     class names)
 *   synthetic[:N]     no I/O and no decode: deterministic noise images,
 *                     N per epoch (default 1281167), labels i % 1000
 * Everything but lmdb and synthetic reads through host->file_open/file_read
 * with storage name NULL (the job's storage).
 *
 * The sample stream: epoch e visits every record once, in a permutation
 * seeded by (seed, e) when shuffle is on, else in dataset order; epochs follow
 * each other without a gap, so a batch may span two epochs.  Batch k holds
 * stream items [k*batch, (k+1)*batch).  Every random choice for an item
 * (crop window, mirror) is a pure function of (seed, epoch, position), so
 * the batches are identical for any thread count and storage backend.
 *
 * With parts > 1 (cfg.part, cfg.parts: a run's ranks) the stream is the
 * run's and this loader's item k is its item k * parts + part.
 *
 * Geometry (train = RandomResizedCrop(crop, scale=(0.08,1), ratio=(3/4,4/3))
 * + 50% horizontal mirror; infer = resize shorter side to `resize`, then
 * center crop `crop`), exactly as torchvision computes the windows:
 *   train: up to 10 tries: area = W*H*U(0.08,1), logr = U(ln 3/4, ln 4/3),
 *          w = round(sqrt(area*exp(logr))), h = round(sqrt(area/exp(logr)));
 *          accepted if 0 < w <= W and 0 < h <= H, x0 = U{0..W-w},
 *          y0 = U{0..H-h}; else the center crop of the ratio-clamped whole
 *          image.  The window is then resized to crop x crop.
 *   infer: the image is (conceptually) resized so its shorter side is
 *          `resize`, the center crop x crop window of that is taken; we
 *          compute the matching source window (fractional) and resize it
 *          directly.
 * Resize (dlg_resample_*): separable, PIL-style BILINEAR with antialiasing:
 *   for an input span [x0, x0+w) mapped to n outputs, scale = w/n,
 *   support = max(scale,1); output j is centred at c = x0 + (j+0.5)*scale;
 *   taps i in [floor(c - support + 0.5), floor(c + support + 0.5)) clamped to
 *   the image (infer: torchvision resizes it whole, then crops) or to the
 *   window (train: torchvision crops, then resizes the crop); weight(i) = max(0, 1 - |(i + 0.5 - c) / max(scale,1)|),
 *   normalised to sum 1.  Rows first (horizontal), then columns, in float.
 *   When the decoder scaled by s = num/8 (cfg.jpeg_full false and the
 *   output at most half the window: dlg_jpeg_pick_scale) the window is
 *   mapped into the scaled image by multiplying by s (scaled pixel i covers
 *   source pixels [i/s, (i+1)/s); libjpeg rounds the scaled size up, so it
 *   is not s*W): faster, but not PIL's pixels (0.7-2.5 levels on average).
 * Normalisation: out[c] = (v[c] * pixel_range/255 - mean[c]) / std[c] for
 * the output channels c in channel_order (R,G,B or B,G,R: the channels are
 * picked in the store step, no extra pass), then mirrored if chosen, stored
 * as NCHW or NHWC in fp32 or fp16 (IEEE half, round to nearest even).
 * torchvision: rgb, pixel_range 1, ImageNet mean/std (the defaults).
 * Caffe (transform_param mean_value 104,117,123, scale s): bgr,
 * pixel_range 255, mean 104,117,123, std 1/s for each channel (s = 1: 1,1,1),
 * so out = v - mean exactly.
 * Transform (cfg.transform): torchvision is the geometry above; caffe is
 * Caffe's DataTransformer (and MXNet ImageRecordIter's crop without
 * `resize`): no resize, a crop x crop window copied from the image as
 * stored at offset (x0, y0) -- train: y0 = U{0..H-crop}, x0 = U{0..W-crop},
 * mirror with probability 1/2 when cfg.mirror; infer: x0 = (W-crop)/2,
 * y0 = (H-crop)/2 in integers -- then out = (v - mean) / std as above
 * (Caffe: (v - mean_value) * scale).  An image smaller than the crop is an
 * error naming the record, as Caffe's CHECK_GE refuses it.  auto is caffe
 * with a mean_file or with Caffe's normalisation (bgr, pixel_range 255: a
 * mean_value), else torchvision.  cfg.mirror = false never mirrors (either
 * transform); nor does cfg.train = false (augment center: infer's default;
 * augment random takes train's mirror in infer too).  auto never picks mxnet.
 * crop = 0 (caffe only: Caffe's crop_size 0): no crop; the first record's
 * size (dataset order; skip_corrupt: the first readable record's; it must
 * be square) becomes the crop at open
 * (dlg_loader_input_size tells it before), and every image must be that
 * size as stored (else an error naming the record, as Caffe's CHECK_EQ).
 * mxnet is MXNet ImageRecordIter's default augmenter as MXNet 1.3+ has it
 * (image_aug_default.cc, cfg.mx by MXNet's names; loader_mxnet.c):
 * full-size decode; resize
 * (shorter side to `resize`, cv::resize bilinear); train only: one affine
 * warp of the whole image (angle a whole degree in [-max_rotate_angle,
 * max_rotate_angle] or `rotate`, shear in [-max_shear_ratio, ...], scale
 * in [min_random_scale, max_random_scale], aspect in [1 - max_aspect_ratio,
 * 1 + ...] -- MXNet's matrix, output (int)(scale W) x (int)(scale H),
 * bilinear at 1/32 pixel, fill_value border; min/max_img_size bound the
 * output's sides); pad (fill_value); the crop: random_resized_crop's or
 * min/max_crop_size's window (train) resized to crop x crop, else a
 * crop x crop window at a uniform offset (train) or the centre rounded
 * down, of the image enlarged first if smaller than the crop (cv::resize
 * of the height to crop, width in proportion, then the width likewise);
 * train only: colour jitter (brightness, contrast, saturation in a
 * random order, on bytes: loader_color.h), HLS jitter (random_h/s/l,
 * OpenCV's 8-bit units, clamped not wrapped), PCA lighting (pca_noise);
 * then mirror and normalise as above.  An image smaller than
 * max_crop_size for min/max_crop_size's window is an error naming the
 * record, as MXNet's CHECK.  Its draws are keyed, not MXNet's one stream,
 * and listed in loader_image.h (dlg_mx_draw).
 * Caffe mean_file (a BlobProto mean image, 3 x H x W in the Datum's BGR
 * order, at the stored image size) needs the caffe transform: out =
 * (v - mean[c][y0+y][x0+x]) / std[c], mirrored at the output position
 * only.  Every image must be stored at the mean's size (else an error
 * naming the record, as Caffe refuses it); pixel_range must be 255, and
 * `mean` stays unset.
 *
 * Steady state allocates nothing: batch buffers are allocated (and touched)
 * at open; per-worker decode buffers grow only when a larger image than any
 * before arrives. */
#ifndef DLG_LOADER_H
#define DLG_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlgauge/plugin.h>

#include "data_error.h"

typedef enum dlg_layout { DLG_LAYOUT_NCHW = 0, DLG_LAYOUT_NHWC = 1 } dlg_layout;
typedef enum dlg_channel_order { DLG_RGB = 0, DLG_BGR = 1 } dlg_channel_order;
typedef enum dlg_loader_dtype { DLG_LOADER_FP32 = 0, DLG_LOADER_FP16 = 1 } dlg_loader_dtype;
/* Crop geometry (see above); auto resolves by dlg_ld_caffe(). */
typedef enum dlg_transform {
    DLG_TRANSFORM_AUTO = 0,
    DLG_TRANSFORM_TORCHVISION = 1,
    DLG_TRANSFORM_CAFFE = 2,
    DLG_TRANSFORM_MXNET = 3
} dlg_transform;

/* MXNet ImageRecordIter's default augmenter (transform = mxnet), its
 * parameters by their MXNet names (src/io/image_aug_default.cc).  Every
 * random one acts only in train (augment random), as MXNet's validation
 * iterator sets none of them; `resize` and `pad` act in both. */
typedef struct dlg_mxnet_aug {
    int max_rotate_angle;          /* angle: a whole number of degrees in [-v, v] */
    int rotate;                    /* > 0: this angle instead (MXNet's rotate), else -1 */
    float max_shear_ratio;         /* shear m in [-v, v]: (x, y) -> (x + m y, y) */
    float min_random_scale, max_random_scale; /* scale s: output s*W x s*H */
    float max_aspect_ratio;        /* ratio in [1 - v, 1 + v] (or [min, v]) */
    float min_aspect_ratio;        /* <= 0: unset (1 - max_aspect_ratio) */
    bool random_resized_crop;      /* MXNet 1.3+'s random area + ratio crop, resized */
    float min_random_area, max_random_area; /* its area share range */
    int random_h, random_s, random_l; /* HLS jitter, OpenCV 8-bit units (H 0..180) */
    int fill_value;                /* border of the warp and of pad, 0..255 */
    int pad;                       /* border added on every side before the crop */
    int min_crop_size, max_crop_size; /* > 0: a square window of side U{min..max}, resized */
    float min_img_size, max_img_size; /* the warp's output sides, clamped (0 and 1e10: off) */
    float brightness, contrast, saturation; /* colour jitter factors 1 + U(-v, v) */
    float pca_noise;               /* AlexNet's PCA lighting, alpha ~ N(0, v) */
    int inter_method;              /* OpenCV's 0..4, or MXNet's 9 auto, 10 random */
} dlg_mxnet_aug;
typedef enum dlg_cache_mode {
    DLG_CACHE_NONE = 0, /* leave the page cache alone */
    DLG_CACHE_COLD = 1, /* evict every dataset file before the first batch */
    DLG_CACHE_WARM = 2  /* read every dataset file once before the first batch */
} dlg_cache_mode;

/* Batch buffer allocation hook (e.g. a CUDA backend's pinned memory).  Must
 * return memory aligned to at least 64 bytes, or NULL. */
typedef struct dlg_loader_alloc {
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p, size_t bytes);
    void *ctx;
} dlg_loader_alloc;

typedef struct dlg_loader_config {
    const char *data;     /* data spec (see above); required */
    int batch;            /* images per batch, >= 1 */
    int crop;             /* output height = width, e.g. 224 227 299; 0: whole (see above) */
    bool whole;           /* crop was 0: set in the loader's own copy, whose crop is then the
                           * first record's size (dlg_loader_stats.crop) */
    int resize;           /* infer: shorter side before the center crop; 0 = crop*256/224 */
    bool train;           /* true: random crop + mirror; false: center crop (see transform) */
    dlg_transform transform; /* torchvision, caffe, mxnet, or auto (see above) */
    dlg_mxnet_aug mx;     /* transform = mxnet's augmenter (see above) */
    bool jpeg_full;       /* torchvision: decode JPEGs at full size, never at a reduced DCT
                           * scale (jpeg_scale = full: PIL's pixels, slower) */
    bool mirror;          /* with train: mirror half the images (Caffe's transform_param mirror) */
    float mean[3];        /* in `order`, pixel_range units (ImageNet: .485 .456 .406 for rgb, 1) */
    float std[3];         /* in `order`, pixel_range units (ImageNet: .229 .224 .225 for rgb, 1) */
    const char *mean_file; /* Caffe .binaryproto mean image, or NULL; replaces mean[] (see above) */
    dlg_channel_order order; /* channel order of the batch, and of mean and std */
    int pixel_range;      /* 1: pixels are 0..1 (torchvision), 255: 0..255 (Caffe, MXNet) */
    dlg_layout layout;
    dlg_loader_dtype dtype;
    int threads;          /* worker threads, >= 1 (workloads pass the job's cpus) */
    int prefetch;         /* K: batch buffers in the ring, >= 2 */
    uint64_t seed;        /* shuffle and augmentation seed (the job's seed) */
    bool shuffle;         /* new permutation every epoch */
    /* Data-parallel shards (a run's ranks): the parts share the one stream
     * above (same seed, same permutations) and part p reads its items p,
     * p + parts, p + 2 parts, ...; each item keeps its random choices and
     * its epoch, so the parts together read every record once per epoch,
     * as PyTorch's DistributedSampler (a strided slice of one shuffled
     * order).  parts 0 or 1: the whole stream. */
    int part, parts;
    int classes;          /* > 0: a label outside 0..classes-1 is an error naming its record */
    bool skip_corrupt;    /* count and skip bad records instead of failing */
    bool decode;          /* false: only read record bytes (I/O benchmarks) */
    dlg_cache_mode cache;
    const dlg_loader_alloc *alloc; /* NULL: aligned malloc */
} dlg_loader_config;

/* Defaults: batch 32, crop 224, train, transform auto, mirror, ImageNet mean/std, rgb,
 * pixel_range 1, NCHW fp32, 1 thread, prefetch 4, shuffle, decode, cache none, data NULL. */
void dlg_loader_config_defaults(dlg_loader_config *cfg);

typedef struct dlg_batch {
    void *data;            /* n x 3 x crop x crop (layout, dtype); NULL when !decode */
    int32_t *labels;       /* n labels (im2rec: the first label) */
    int n;                 /* == cfg.batch */
    uint64_t seq;          /* 0, 1, 2, ... */
    uint32_t epoch;        /* epoch of the first item */
    /* decode == false: each item's record bytes (the image file as stored,
     * without im2rec header), valid until release. */
    const uint8_t *const *raw;
    const size_t *raw_len;
    /* measurements for this batch */
    uint64_t wait_ns;      /* how long dlg_loader_next blocked for it */
    uint64_t read_ns;      /* worker time in file reads, summed over items */
    uint64_t decode_ns;    /* worker time in decode + resize + normalise */
    uint64_t bytes_read;   /* record bytes read for it */
    uint32_t skipped;      /* corrupt records skipped while filling it */
    uint32_t jpeg_warnings; /* images in it kept despite a libjpeg warning (jpeg.h) */
} dlg_batch;

typedef struct dlg_loader_stats {
    uint64_t batches, items;   /* handed to the consumer */
    uint64_t bytes_read;
    uint64_t wait_ns, read_ns, decode_ns; /* sums over batches */
    uint64_t skipped;          /* corrupt records skipped (skip_corrupt) */
    uint64_t jpeg_warnings;    /* images kept despite a libjpeg warning (jpeg.h) */
    uint64_t dataset_items;    /* records per epoch */
    uint64_t dataset_bytes;    /* total size of the dataset files */
    uint32_t epoch;            /* epoch of the last batch handed out */
    int nclasses;              /* folder scan: class count; else max label + 1 if known, else 0 */
    int crop;                  /* the batch's image size (crop = 0: the first record's) */
    const char *cache_method;  /* "none", "fadvise", "fadvise+drop_caches", "read", "n/a (lmdb)"... (dlg_cache_result) */
    const char *source;        /* "recordio", "lmdb", "files", "synthetic" */
} dlg_loader_stats;

typedef struct dlg_loader dlg_loader;

/* Validates cfg, opens the dataset (errors name the file), applies the cache
 * mode, allocates the ring and starts the workers.  Returns 0 or -DLG_E*
 * after reporting through h->error().  An empty dataset is an error. */
int dlg_loader_open(dlg_loader **out, const dlg_loader_config *cfg, const dlg_host *h);

/* Blocks until the next batch in stream order is complete.  Returns 0 with
 * *b, or -code: a worker's error (corrupt record without skip_corrupt: the
 * message names the file and offset/key; it comes when the stream reaches
 * that record's batch, after every batch before it, for any thread count),
 * or -DLG_ESTOP when the host is stopping.  Each batch must be released
 * before it can be refilled; at most prefetch - 1 batches may be held at
 * once, and they are released in the order they were handed out (asking for
 * a batch whose buffer is still held is -DLG_EINVAL; a second release of a
 * batch is ignored with a warning). */
int dlg_loader_next(dlg_loader *l, dlg_batch **b);
void dlg_loader_release(dlg_loader *l, dlg_batch *b);

void dlg_loader_stats_get(const dlg_loader *l, dlg_loader_stats *s);
/* Stops the workers and frees everything (any state, any thread). */
void dlg_loader_close(dlg_loader *l);

/* ---- the option fragment every data-consuming workload declares -----------
 * Put DLG_LOADER_OPTIONS at some index BASE of the workload's option table,
 * then call dlg_loader_config_from_opts(&cfg, &vals[BASE], job, train).
 * The workload sets cfg.batch (its own `batch` key) and may override more. */
#define DLG_LOADER_OPTIONS                                                                          \
    {"data", DLG_OPT_STRING, "synthetic", NULL, NULL, NULL,                                        \
     "dataset: recordio:FILE | lmdb:PATH (its folder, or its one file) | "                         \
     "files:LIST_OR_DIR (a list, an im2rec .lst, class folders; JPEG images only) | "              \
     "synthetic[:N]",                                                                              \
     DLG_OPT_NOSWEEP | DLG_OPT_PATH_IN},                                                           \
    {"threads", DLG_OPT_INT, "0", "0", "1024", NULL,                                                \
     "loader worker threads (0 = the job's cpus)", 0},                                             \
    {"prefetch", DLG_OPT_INT, "4", "2", "64", NULL, "batch buffers in the loader's ring", 0},       \
    {"crop", DLG_OPT_INT, "224", "0", "4096", NULL,                                                 \
     "network input size (224, 227, 299), at least 8; 0 (transform caffe, Caffe's crop_size 0): "  \
     "no crop, every image is used whole at its stored size, which must be square and the same "   \
     "for all (the first record's: the network's input size)", 0},                                 \
    {"resize", DLG_OPT_INT, "0", "0", "8192", NULL,                                                 \
     "torchvision, infer: shorter side before the center crop (0 = crop*256/224); mxnet: "         \
     "MXNet's resize, the shorter side to this before every other augmentation (0: none)", 0},     \
    {"augment", DLG_OPT_ENUM, "auto", NULL, NULL, "auto|random|center",                             \
     "random crop + mirror, or center crop, as transform takes them (auto: random in train, "      \
     "center in infer)", 0},                                                                       \
    {"transform", DLG_OPT_ENUM, "auto", NULL, NULL, "auto|torchvision|caffe|mxnet",                 \
     "crop geometry: torchvision (train: RandomResizedCrop(crop); infer: resize shorter side to "  \
     "resize, center crop), caffe (Caffe's DataTransformer, MXNet ImageRecordIter's crop: a "      \
     "crop x crop window of the image as stored, no resample; train: uniform offset, infer: "      \
     "((W-crop)/2, (H-crop)/2); every image must be at least crop x crop) or mxnet (MXNet "        \
     "ImageRecordIter's default augmenter: resize, one affine warp (max_rotate_angle, "            \
     "max_shear_ratio, min/max_random_scale, max_aspect_ratio), pad, crop (of the image "          \
     "enlarged to the crop if smaller, as MXNet 1.3+; or random_resized_crop or "                  \
     "min/max_crop_size), colour jitter (brightness, contrast, "                                   \
     "saturation), HLS jitter (random_h/s/l), PCA noise (pca_noise), mirror). auto: caffe "        \
     "with mean_file or "                                                                          \
     "with channel_order = bgr and pixel_range = 255 (Caffe's mean_value), else torchvision. "    \
     "torchvision's pixels are PIL's (full decode, antialiased bilinear resize) with jpeg_scale = " \
     "full; the default jpeg_scale = auto decodes a large JPEG at a reduced DCT scale first, "     \
     "which differs from them by a few levels (see jpeg_scale)", 0},                              \
    {"jpeg_scale", DLG_OPT_ENUM, "auto", NULL, NULL, "auto|full",                                   \
     "torchvision: auto decodes a JPEG at libjpeg's reduced DCT scale (1/2, 3/8, 1/4, 1/8: the "   \
     "smallest that still covers the output) when the output is at most half its window, then "   \
     "resamples, as a fast loader does (PIL's draft mode): its pixels then differ from "         \
     "torchvision/PIL's by 0.7 to 2.5 levels of 255 on average, up to ~20 at sharp edges; full "   \
     "decodes at full size, within 1 level of torchvision (slower on large images).  caffe and "   \
     "mxnet always decode at full size", 0},                                                       \
    {"mirror", DLG_OPT_BOOL, "true", NULL, NULL, NULL,                                              \
     "with augment random (train's default, or set): mirror each image with probability 1/2 "     \
     "(Caffe's transform_param mirror, MXNet's rand_mirror; Caffe's default is false, BVLC's "    \
     "train_val sets true); augment center (infer's default) never mirrors", 0},                  \
    {"layout", DLG_OPT_ENUM, "nchw", NULL, NULL, "nchw|nhwc", "batch memory layout", 0},            \
    {"input_dtype", DLG_OPT_ENUM, "fp32", NULL, NULL, "fp32|fp16", "batch element type", 0},        \
    /* no table default, so that a mean written beside mean_file is seen */                      \
    {"mean", DLG_OPT_STRING, NULL, NULL, NULL, NULL,                                                \
     "per-channel mean in channel_order and pixel_range units, or imagenet (0.485,0.456,0.406 "    \
     "in RGB x pixel_range; unset: imagenet, or none with mean_file); Caffe's mean_value: "       \
     "104,117,123 with bgr and pixel_range = 255 (transform auto then takes caffe)",               \
     DLG_OPT_NOSWEEP},                                                                             \
    {"mean_file", DLG_OPT_STRING, NULL, NULL, NULL, NULL,                                           \
     "FILE: the Caffe mean image (.binaryproto, as compute_image_mean writes): "                 \
     "subtracted per pixel at the crop offset as Caffe's transform_param mean_file; needs "        \
     "transform caffe (auto picks it), images stored at the mean's size, pixel_range = 255, and "  \
     "no mean", DLG_OPT_NOSWEEP | DLG_OPT_PATH_IN},                                                \
    {"std", DLG_OPT_STRING, "imagenet", NULL, NULL, NULL,                                           \
     "per-channel std, same order and units, or imagenet (0.229,0.224,0.225 in RGB x "             \
     "pixel_range); Caffe's scale s is std 1/s (scale 1: 1,1,1)", DLG_OPT_NOSWEEP},                \
    {"channel_order", DLG_OPT_ENUM, "rgb", NULL, NULL, "rgb|bgr",                                   \
     "channel order of the batch and of mean/std: rgb (torchvision, MXNet) or bgr (Caffe)", 0},    \
    {"pixel_range", DLG_OPT_ENUM, "1", NULL, NULL, "1|255",                                         \
     "pixel values and mean/std are in 0..1 units (torchvision) or 0..255 (Caffe, MXNet)", 0},     \
    {"shuffle", DLG_OPT_BOOL, "true", NULL, NULL, NULL, "new seeded permutation every epoch", 0},   \
    {"skip_corrupt", DLG_OPT_BOOL, "false", NULL, NULL, NULL,                                       \
     "count and skip corrupt records instead of failing.  A JPEG is corrupt when it cannot be "     \
     "decoded, is cut short, or libjpeg says part of its data was lost (premature end of data "    \
     "segment, bad Huffman code...: part of the image would be made up); one with another "        \
     "libjpeg warning (extraneous bytes before a marker, as a few ImageNet files have) is kept "   \
     "and counted, the first named in a warning (io-pipeline: jpeg_warnings)", 0},                 \
    {"cache", DLG_OPT_ENUM, "auto", NULL, NULL, "none|cold|warm|auto",                              \
     "page cache before the cell: leave, evict the dataset (fadvise; as root, where pages stay "    \
     "cached, drop_caches: the machine's whole clean cache), or pre-read it (auto: cold when the " \
     "job sets memory, which pages cached before the cell would escape, else none)", 0},          \
    {"decode", DLG_OPT_BOOL, "true", NULL, NULL, NULL, "decode images (false: read bytes only)", 0}, \
    DLG_LOADER_MXNET_OPTIONS

/* transform = mxnet's augmenter, by MXNet's names (train only but pad). */
#define DLG_LOADER_MXNET_OPTIONS                                                                    \
    {"max_rotate_angle", DLG_OPT_INT, "0", "0", "360", NULL,                                        \
     "mxnet, train: rotate by a whole number of degrees drawn in [-v, v]", 0},                     \
    {"rotate", DLG_OPT_INT, "-1", "-1", "360", NULL,                                                \
     "mxnet, train: rotate by this angle (> 0) instead of max_rotate_angle's draw", 0},            \
    {"max_shear_ratio", DLG_OPT_DOUBLE, "0", "0", "10", NULL,                                       \
     "mxnet, train: shear (x, y) -> (x + m y, y), m drawn in [-v, v]", 0},                         \
    {"min_random_scale", DLG_OPT_DOUBLE, "1", "0.01", "100", NULL,                                  \
     "mxnet, train: scale the image by s drawn in [min_random_scale, max_random_scale] (the "      \
     "warp's output is s*W x s*H)", 0},                                                            \
    {"max_random_scale", DLG_OPT_DOUBLE, "1", "0.01", "100", NULL,                                  \
     "mxnet, train: see min_random_scale", 0},                                                     \
    {"max_aspect_ratio", DLG_OPT_DOUBLE, "0", "0", "100", NULL,                                     \
     "mxnet, train: aspect ratio drawn in [1 - v, 1 + v] (v < 1), or in [min_aspect_ratio, v] "    \
     "when that is set", 0},                                                                       \
    {"min_aspect_ratio", DLG_OPT_DOUBLE, NULL, "0.01", "100", NULL,                                 \
     "mxnet, train: the aspect ratio's lower bound (unset: 1 - max_aspect_ratio)", 0},             \
    {"random_resized_crop", DLG_OPT_BOOL, "false", NULL, NULL, NULL,                                \
     "mxnet, train: crop a window of area share in [min_random_area, max_random_area] and ratio "  \
     "in the aspect range (sides swapped half the time; 10 tries, else the center crop), resized " \
     "to crop x crop (MXNet 1.3+'s; aspect then shapes this crop, not the warp)", 0},              \
    {"min_random_area", DLG_OPT_DOUBLE, "1", "0.01", "1", NULL,                                     \
     "mxnet, train: random_resized_crop's smallest area share", 0},                                \
    {"max_random_area", DLG_OPT_DOUBLE, "1", "0.01", "1", NULL,                                     \
     "mxnet, train: random_resized_crop's largest area share", 0},                                 \
    {"random_h", DLG_OPT_INT, "0", "0", "180", NULL,                                                \
     "mxnet, train: add int(2 u v - v) to every pixel's hue (HLS, OpenCV's 0..180), u = (u1 + "    \
     "4 u2) / 5 of two uniform draws (MXNet 1.3+'s, so 0 is likelier than +-v)", 0},               \
    {"random_s", DLG_OPT_INT, "0", "0", "255", NULL,                                                \
     "mxnet, train: the same for saturation (0..255)", 0},                                         \
    {"random_l", DLG_OPT_INT, "0", "0", "255", NULL,                                                \
     "mxnet, train: the same for lightness (0..255)", 0},                                          \
    {"fill_value", DLG_OPT_INT, "255", "0", "255", NULL,                                            \
     "mxnet: the value of pixels the warp or pad brings in from outside the image (MXNet's "       \
     "default 255; example/image-classification passes 127)", 0},                                  \
    {"pad", DLG_OPT_INT, "0", "0", "1024", NULL,                                                    \
     "mxnet: add this many fill_value pixels on every side before the crop", 0},                   \
    {"min_crop_size", DLG_OPT_INT, "-1", "-1", "8192", NULL,                                       \
     "mxnet, train: crop a square window of side drawn in [min_crop_size, max_crop_size] (both "   \
     "set, -1: off) at a uniform offset and resize it to crop x crop (MXNet's, not with "          \
     "random_resized_crop; every image must be at least max_crop_size on both sides)", 0},        \
    {"max_crop_size", DLG_OPT_INT, "-1", "-1", "8192", NULL,                                       \
     "mxnet, train: see min_crop_size", 0},                                                        \
    {"min_img_size", DLG_OPT_DOUBLE, "0", "0", "65536", NULL,                                       \
     "mxnet, train: the warp's output sides are at least this (MXNet's: the canvas grows around "  \
     "the centred image, filled with fill_value, and is not rescaled; setting it turns the warp " \
     "on)", 0},                                                                                    \
    {"max_img_size", DLG_OPT_DOUBLE, "1e10", "0", "1e10", NULL,                                     \
     "mxnet, train: the warp's output sides are at most this (MXNet's: the canvas is cut around "  \
     "the centre, not rescaled; 1e10: off)", 0},                                                   \
    {"brightness", DLG_OPT_DOUBLE, "0", "0", "1", NULL,                                             \
     "mxnet, train: multiply every byte by 1 + b, b drawn in [-v, v] (MXNet 1.3+'s jitter, "       \
     "after the crop: brightness, contrast and saturation in a random order, each rounded and "   \
     "clamped to a byte as OpenCV's convertTo/addWeighted)", 0},                                   \
    {"contrast", DLG_OPT_DOUBLE, "0", "0", "1", NULL,                                               \
     "mxnet, train: v -> a v + (1 - a) m, a = 1 + U(-v, v), m the crop's mean grey (MXNet's grey " \
     "is OpenCV's RGB2GRAY on its BGR bytes: 0.114 R + 0.587 G + 0.299 B)", 0},                    \
    {"saturation", DLG_OPT_DOUBLE, "0", "0", "1", NULL,                                             \
     "mxnet, train: v -> a v + (1 - a) g, g the pixel's grey (as contrast's), a = 1 + U(-v, v)",   \
     0},                                                                                           \
    {"pca_noise", DLG_OPT_DOUBLE, "0", "0", "10", NULL,                                             \
     "mxnet, train: AlexNet's PCA lighting (MXNet 1.3+, last, after random_h/s/l): a_i drawn "     \
     "from N(0, v), every pixel's channel c gets sum_i a_i l_i e_ci added (ImageNet's "            \
     "eigenvalues l = 55.46, 4.794, 1.148 and eigenvectors, 0..255 units; l_i e_ci rounded to "    \
     "float as in the later 1.x), truncated toward 0 and clamped", 0},                             \
    {"inter_method", DLG_OPT_INT, "1", "0", "10", NULL,                                             \
     "mxnet: interpolation of the warp and resizes, as OpenCV's: 0 nearest, 1 bilinear (MXNet's "  \
     "default), 2 cubic, 3 area (the warp: bilinear), 4 lanczos4; 9 auto (per resize or warp: "    \
     "cubic if both sides grow, area if both shrink, else bilinear), 10 random (one of 0..4 "      \
     "each time)", 0}

/* The cache option's value (none|cold|warm|auto) as a mode: auto is cold
 * under a memory limit, since pages cached before the cell are not charged
 * to it and would be read at memory speed whatever the limit, else none. */
dlg_cache_mode dlg_cache_mode_of(int64_t value, const dlg_job_info *job);

/* What a cache mode did.  cold: posix_fadvise(DONTNEED) after fdatasync
 * (the kernel keeps dirty pages), plus drop_caches as root, then mincore()
 * says how much stayed cached anyway (tmpfs, pages locked or mapped
 * elsewhere): method says so ("fadvise (37% stayed cached)"), so that a
 * row never claims a cold read that was a RAM read; "(unverified)" where
 * mincore could not tell (a file the user neither owns nor may write).
 * warm: after the pre-read mincore counts what is cached; where under 99%
 * stayed (a memory limit smaller than the data: the cgroup is charged the
 * page cache) method says so ("read (22% stayed cached)") and so does the
 * warning, since the timed reads then go to the disk. */
typedef struct dlg_cache_result {
    char method[48];   /* "none", "read", "fadvise", "fadvise+drop_caches", "... (N% stayed cached)" */
    dlg_cache_mode mode; /* the mode applied (NONE where dlg_cache_passed_by says warm was passed by) */
    uint64_t bytes;    /* cold, warm: the files' size */
    uint64_t resident; /* cold: bytes still in the page cache after the eviction; warm: after the pre-read */
    uint64_t unknown;  /* cold, warm: bytes of files whose residency mincore would not tell */
} dlg_cache_result;

/* A stop request a long setup step asks between pieces of its work (the
 * host's stopping(): a Ctrl-C); stop NULL: never asked. */
typedef struct dlg_stop_ask {
    bool (*stop)(void *ctx);
    void *ctx;
} dlg_stop_ask;

/* The host's stopping() as such a request (ctx: the dlg_host), for the
 * pre-read here and the engine's plan (dlg_plan_opts.stop) alike. */
bool dlg_host_stop_asked(void *host);

/* Applies a cache mode to one file (the io workload's).  warm asks ask
 * (NULL: never) every 64 MiB pre-read: -DLG_ESTOP when it says stop. */
int dlg_cache_file(const char *path, dlg_cache_mode mode, const dlg_stop_ask *ask, dlg_cache_result *out,
                   dlg_data_err *err);

/* Whether cache = warm has nothing to do because the storage reads with
 * O_DIRECT (caps has DLG_CAP_DIRECT and an alignment > 1 is asked: its
 * reads pass the page cache by, which a pre-read would only fill, and
 * cache_method "read" would claim served them).  Then *out says so
 * ("none (O_DIRECT)") and buf holds the warning to give (what: the file
 * or dataset); else false, both untouched. */
bool dlg_cache_passed_by(dlg_cache_mode mode, uint32_t caps, uint32_t align, const char *what,
                         dlg_cache_result *out, char *buf, size_t len);

/* The warning to give when cold left pages cached, or warm left under 99%
 * of them cached (what: the file or dataset): false, buf untouched, when
 * neither. */
bool dlg_cache_warning(const dlg_cache_result *r, const char *what, char *buf, size_t len);

/* Bytes of fd's first size bytes that are in the page cache (mincore over a
 * read-only mapping, a window at a time); -1 when it cannot say (no
 * mapping, or a file that mincore tells only its owner or writers of). */
int64_t dlg_cache_resident(int fd, uint64_t size);

/* lmdb: reads its file through LMDB's own mmap, past the job's storage:
 * with a storage other than the default (posix) the row would report that
 * storage while measuring the page cache.  0, or -DLG_EINVAL after one
 * host->error() line starting "storage = " (said at that key's line). */
int dlg_loader_storage_check(const dlg_host *h, const char *data, const dlg_job_info *job);

/* Indices within the fragment. */
enum dlg_loader_opt {
    DLG_LOPT_DATA = 0,
    DLG_LOPT_THREADS,
    DLG_LOPT_PREFETCH,
    DLG_LOPT_CROP,
    DLG_LOPT_RESIZE,
    DLG_LOPT_AUGMENT,
    DLG_LOPT_TRANSFORM,
    DLG_LOPT_JPEG_SCALE,
    DLG_LOPT_MIRROR,
    DLG_LOPT_LAYOUT,
    DLG_LOPT_INPUT_DTYPE,
    DLG_LOPT_MEAN,
    DLG_LOPT_MEAN_FILE,
    DLG_LOPT_STD,
    DLG_LOPT_CHANNEL_ORDER,
    DLG_LOPT_PIXEL_RANGE,
    DLG_LOPT_SHUFFLE,
    DLG_LOPT_SKIP_CORRUPT,
    DLG_LOPT_CACHE,
    DLG_LOPT_DECODE,
    DLG_LOPT_MAX_ROTATE_ANGLE,
    DLG_LOPT_ROTATE,
    DLG_LOPT_MAX_SHEAR_RATIO,
    DLG_LOPT_MIN_RANDOM_SCALE,
    DLG_LOPT_MAX_RANDOM_SCALE,
    DLG_LOPT_MAX_ASPECT_RATIO,
    DLG_LOPT_MIN_ASPECT_RATIO,
    DLG_LOPT_RANDOM_RESIZED_CROP,
    DLG_LOPT_MIN_RANDOM_AREA,
    DLG_LOPT_MAX_RANDOM_AREA,
    DLG_LOPT_RANDOM_H,
    DLG_LOPT_RANDOM_S,
    DLG_LOPT_RANDOM_L,
    DLG_LOPT_FILL_VALUE,
    DLG_LOPT_PAD,
    DLG_LOPT_MIN_CROP_SIZE,
    DLG_LOPT_MAX_CROP_SIZE,
    DLG_LOPT_MIN_IMG_SIZE,
    DLG_LOPT_MAX_IMG_SIZE,
    DLG_LOPT_BRIGHTNESS,
    DLG_LOPT_CONTRAST,
    DLG_LOPT_SATURATION,
    DLG_LOPT_PCA_NOISE,
    DLG_LOPT_INTER_METHOD,
    DLG_LOPT_COUNT
};

/* Fills cfg (after dlg_loader_config_defaults) from the fragment's values:
 * threads 0 -> job->cpus (at least 1), seed = job->seed, augment auto ->
 * train_mode, transform auto resolved (dlg_ld_caffe) with its rules
 * checked.  job may be NULL (1 thread, seed 0).  cfg.data points into
 * vals.  Bad mean/std text (not three numbers in 0..pixel_range, std > 0,
 * nor imagenet) is reported through h->error(). */
int dlg_loader_config_from_opts(dlg_loader_config *cfg, const dlg_value *vals,
                                const dlg_job_info *job, bool train_mode, const dlg_host *h);

/* The batch's image size: cfg->crop, or with crop = 0 (Caffe's crop_size
 * 0) the size of the dataset's first record (dataset order), which must be
 * square -- the network's input size, which every image must then have.
 * It reads that record through h (errors through h->error), as
 * dlg_loader_open does. */
int dlg_loader_input_size(const dlg_loader_config *cfg, const dlg_host *h, int *size);

/* Bytes of one batch's image data for cfg. */
size_t dlg_loader_batch_bytes(const dlg_loader_config *cfg);

#endif
