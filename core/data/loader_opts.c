/* Loader configuration: defaults, the shared option fragment's values, and
 * batch sizes. */
#include "loader.h"
#include "loader_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ImageNet statistics in R,G,B order and 0..1 units (torchvision's). */
static const float imagenet_mean[3] = {0.485f, 0.456f, 0.406f};
static const float imagenet_std[3] = {0.229f, 0.224f, 0.225f};

void dlg_loader_config_defaults(dlg_loader_config *cfg)
{
    *cfg = (dlg_loader_config){
        .data = NULL,
        .batch = 32,
        .crop = 224,
        .resize = 0,
        .train = true,
        .transform = DLG_TRANSFORM_AUTO,
        .mirror = true,
        .order = DLG_RGB,
        .pixel_range = 1,
        .layout = DLG_LAYOUT_NCHW,
        .dtype = DLG_LOADER_FP32,
        .threads = 1,
        .prefetch = 4,
        .seed = 0,
        .shuffle = true,
        .skip_corrupt = false,
        .decode = true,
        .cache = DLG_CACHE_NONE,
        .alloc = NULL,
    };
    memcpy(cfg->mean, imagenet_mean, sizeof cfg->mean);
    memcpy(cfg->std, imagenet_std, sizeof cfg->std);
    dlg_ld_mx_defaults(&cfg->mx);
}

/* "a,b,c" -> three floats in [0, range] (positive: in (0, range]), or
 * "imagenet" -> rgb scaled to range and put in channel order.  The bound
 * catches values in other units: Caffe's 104,117,123 read as 0..1 units
 * would make every input about -450. */
static int parse3(const char *text, float out[3], const float rgb[3], dlg_channel_order order,
                  int range, bool positive)
{
    if (strcmp(text, "imagenet") == 0) {
        for (int c = 0; c < 3; c++)
            out[c] = rgb[order == DLG_BGR ? 2 - c : c] * (float)range;
        return 0;
    }
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v <= range) || (positive ? !(v > 0) : !(v >= 0)))
            return -1;
        out[i] = (float)v;
        while (*end == ' ')
            end++;
        if (i < 2 && *end++ != ',')
            return -1;
        p = end;
    }
    return *p == '\0' ? 0 : -1;
}

/* Under pixel_range = 255, means all in (0, 1] are 0..1 units: subtracting
 * them would leave the inputs un-centred at about 0..255/std. */
static bool unit_means(const float m[3], int range)
{
    return range == 255 && m[0] > 0 && m[0] <= 1 && m[1] > 0 && m[1] <= 1 && m[2] > 0 && m[2] <= 1;
}

/* mean's table default is unset (so that one written beside mean_file is
 * seen): unset means imagenet, which mean_file then replaces. */
static const char *mean_text(const dlg_value *v)
{
    const dlg_value *m = &v[DLG_LOPT_MEAN];
    return m->set && m->text ? m->text : "imagenet";
}

static int parse_norm(dlg_loader_config *cfg, const dlg_value *v, const dlg_host *h)
{
    const char *mean = mean_text(v), *std = v[DLG_LOPT_STD].text;
    int r = cfg->pixel_range;
    const char *order = cfg->order == DLG_BGR ? "BGR" : "RGB";
    if (parse3(mean, cfg->mean, imagenet_mean, cfg->order, r, false) < 0)
        return h->error(h, DLG_EINVAL,
                        r == 1 ? "mean = '%s': expected three numbers in 0..1 like "
                                 "0.485,0.456,0.406 (%s), or imagenet (0..255 means like "
                                 "Caffe's 104,117,123 need pixel_range = 255)"
                               : "mean = '%s': expected three numbers in 0..255 like "
                                 "123.7,116.3,103.5 (%s), or imagenet",
                        mean, order);
    if (unit_means(cfg->mean, r))
        return h->error(h, DLG_EINVAL,
                        "mean = '%s' with pixel_range = 255: these look like 0..1 units; give "
                        "0..255 values (multiply by 255) or set pixel_range = 1",
                        mean);
    if (parse3(std, cfg->std, imagenet_std, cfg->order, r, true) < 0)
        return h->error(h, DLG_EINVAL,
                        r == 1 ? "std = '%s': expected three numbers in (0, 1] like "
                                 "0.229,0.224,0.225 (%s), or imagenet (0..255 values, and "
                                 "Caffe's std 1 for scale 1, need pixel_range = 255)"
                               : "std = '%s': expected three numbers in (0, 255] like "
                                 "58.4,57.1,57.4 (%s; Caffe's scale s is 1/s), or imagenet",
                        std, order);
    return 0;
}

/* mean_file replaces the per-channel mean; Caffe refuses both at once,
 * whatever the mean (imagenet written out too). */
static int refuse_mean_with_file(const dlg_value *v, const dlg_host *h)
{
    const dlg_value *mf = &v[DLG_LOPT_MEAN_FILE];
    if (!mf->set || !mf->text || !v[DLG_LOPT_MEAN].set)
        return 0;
    return h->error(h, DLG_EINVAL, "mean = '%s' and mean_file = %s: give one (Caffe refuses "
                    "mean_value with mean_file)", mean_text(v), mf->text);
}

/* mean_file replaces the per-channel mean (its rules: dlg_ld_geom_check). */
static void parse_mean_file(dlg_loader_config *cfg, const dlg_value *v)
{
    const dlg_value *mf = &v[DLG_LOPT_MEAN_FILE];
    cfg->mean_file = mf->set && mf->text ? mf->text : NULL;
    if (cfg->mean_file)
        memset(cfg->mean, 0, sizeof cfg->mean);
}

int dlg_loader_config_from_opts(dlg_loader_config *cfg, const dlg_value *v,
                                const dlg_job_info *job, bool train_mode, const dlg_host *h)
{
    cfg->data = v[DLG_LOPT_DATA].text;
    int cpus = job && job->cpus > 0 ? job->cpus : 1;
    cfg->threads = v[DLG_LOPT_THREADS].i > 0 ? (int)v[DLG_LOPT_THREADS].i : cpus;
    cfg->prefetch = (int)v[DLG_LOPT_PREFETCH].i;
    cfg->crop = (int)v[DLG_LOPT_CROP].i;
    cfg->resize = (int)v[DLG_LOPT_RESIZE].i;
    int64_t aug = v[DLG_LOPT_AUGMENT].i; /* auto|random|center */
    cfg->train = aug == 0 ? train_mode : aug == 1;
    cfg->transform = (dlg_transform)v[DLG_LOPT_TRANSFORM].i; /* auto|torchvision|caffe|mxnet */
    dlg_ld_mx_from_opts(&cfg->mx, v);
    cfg->jpeg_full = v[DLG_LOPT_JPEG_SCALE].i == 1; /* auto|full */
    cfg->mirror = v[DLG_LOPT_MIRROR].i != 0;
    cfg->layout = v[DLG_LOPT_LAYOUT].i == 1 ? DLG_LAYOUT_NHWC : DLG_LAYOUT_NCHW;
    cfg->dtype = v[DLG_LOPT_INPUT_DTYPE].i == 1 ? DLG_LOADER_FP16 : DLG_LOADER_FP32;
    cfg->order = v[DLG_LOPT_CHANNEL_ORDER].i == 1 ? DLG_BGR : DLG_RGB;
    cfg->pixel_range = v[DLG_LOPT_PIXEL_RANGE].i == 1 ? 255 : 1;
    int rc = refuse_mean_with_file(v, h);
    if (rc == 0)
        rc = parse_norm(cfg, v, h);
    if (rc == 0) {
        parse_mean_file(cfg, v);
        rc = dlg_ld_geom_check(cfg, h);
    }
    if (rc < 0)
        return rc;
    if (cfg->transform == DLG_TRANSFORM_AUTO) /* what auto chose, for whoever reads cfg */
        cfg->transform = dlg_ld_caffe(cfg) ? DLG_TRANSFORM_CAFFE : DLG_TRANSFORM_TORCHVISION;
    cfg->shuffle = v[DLG_LOPT_SHUFFLE].i != 0;
    cfg->skip_corrupt = v[DLG_LOPT_SKIP_CORRUPT].i != 0;
    cfg->cache = dlg_cache_mode_of(v[DLG_LOPT_CACHE].i, job);
    cfg->decode = v[DLG_LOPT_DECODE].i != 0;
    cfg->seed = job ? job->seed : 0;
    return 0;
}

dlg_cache_mode dlg_cache_mode_of(int64_t value, const dlg_job_info *job)
{
    if (value == 3) /* auto */
        return DLG_JOB_HAS(job, memory_limit) && job->memory_limit > 0 ? DLG_CACHE_COLD : DLG_CACHE_NONE;
    return (dlg_cache_mode)value;
}

size_t dlg_loader_batch_bytes(const dlg_loader_config *cfg)
{
    size_t elem = cfg->dtype == DLG_LOADER_FP16 ? 2 : 4;
    return (size_t)cfg->batch * 3 * (size_t)cfg->crop * cfg->crop * elem;
}
