/* transform = mxnet's options: defaults (MXNet's), the fragment's values,
 * and their rules, each broken one reported in one line. */
#include <stdio.h>
#include <string.h>

#include "loader_image.h"

void dlg_ld_mx_defaults(dlg_mxnet_aug *mx)
{
    *mx = (dlg_mxnet_aug){.rotate = -1,
                          .min_random_scale = 1,
                          .max_random_scale = 1,
                          .min_random_area = 1,
                          .max_random_area = 1,
                          .fill_value = 255,
                          .inter_method = 1,
                          .min_crop_size = -1,
                          .max_crop_size = -1,
                          .max_img_size = 1e10f};
}

void dlg_ld_mx_from_opts(dlg_mxnet_aug *mx, const dlg_value *v)
{
    dlg_ld_mx_defaults(mx);
    mx->max_rotate_angle = (int)v[DLG_LOPT_MAX_ROTATE_ANGLE].i;
    mx->rotate = (int)v[DLG_LOPT_ROTATE].i;
    mx->max_shear_ratio = (float)v[DLG_LOPT_MAX_SHEAR_RATIO].d;
    mx->min_random_scale = (float)v[DLG_LOPT_MIN_RANDOM_SCALE].d;
    mx->max_random_scale = (float)v[DLG_LOPT_MAX_RANDOM_SCALE].d;
    mx->max_aspect_ratio = (float)v[DLG_LOPT_MAX_ASPECT_RATIO].d;
    if (v[DLG_LOPT_MIN_ASPECT_RATIO].set)
        mx->min_aspect_ratio = (float)v[DLG_LOPT_MIN_ASPECT_RATIO].d;
    mx->random_resized_crop = v[DLG_LOPT_RANDOM_RESIZED_CROP].i != 0;
    mx->min_random_area = (float)v[DLG_LOPT_MIN_RANDOM_AREA].d;
    mx->max_random_area = (float)v[DLG_LOPT_MAX_RANDOM_AREA].d;
    mx->random_h = (int)v[DLG_LOPT_RANDOM_H].i;
    mx->random_s = (int)v[DLG_LOPT_RANDOM_S].i;
    mx->random_l = (int)v[DLG_LOPT_RANDOM_L].i;
    mx->fill_value = (int)v[DLG_LOPT_FILL_VALUE].i;
    mx->pad = (int)v[DLG_LOPT_PAD].i;
    mx->min_crop_size = (int)v[DLG_LOPT_MIN_CROP_SIZE].i;
    mx->max_crop_size = (int)v[DLG_LOPT_MAX_CROP_SIZE].i;
    mx->min_img_size = (float)v[DLG_LOPT_MIN_IMG_SIZE].d;
    mx->max_img_size = (float)v[DLG_LOPT_MAX_IMG_SIZE].d;
    mx->brightness = (float)v[DLG_LOPT_BRIGHTNESS].d;
    mx->contrast = (float)v[DLG_LOPT_CONTRAST].d;
    mx->saturation = (float)v[DLG_LOPT_SATURATION].d;
    mx->pca_noise = (float)v[DLG_LOPT_PCA_NOISE].d;
    mx->inter_method = (int)v[DLG_LOPT_INTER_METHOD].i;
}

/* The first option that differs from MXNet's default, as "name = value",
 * or "" when none does. */
static void first_set(const dlg_mxnet_aug *mx, char *buf, size_t cap)
{
    dlg_mxnet_aug d;
    dlg_ld_mx_defaults(&d);
    buf[0] = '\0';
#define MX_INT(f)                                                                                  \
    if (!buf[0] && mx->f != d.f)                                                                   \
        snprintf(buf, cap, #f " = %d", (int)mx->f);
#define MX_FLT(f)                                                                                  \
    if (!buf[0] && mx->f != d.f)                                                                   \
        snprintf(buf, cap, #f " = %g", (double)mx->f);
    MX_INT(max_rotate_angle) MX_INT(rotate) MX_FLT(max_shear_ratio) MX_FLT(min_random_scale)
    MX_FLT(max_random_scale) MX_FLT(max_aspect_ratio) MX_FLT(min_aspect_ratio)
    MX_INT(random_resized_crop) MX_FLT(min_random_area) MX_FLT(max_random_area)
    MX_INT(random_h) MX_INT(random_s) MX_INT(random_l) MX_INT(fill_value) MX_INT(pad)
    MX_INT(min_crop_size) MX_INT(max_crop_size) MX_FLT(min_img_size) MX_FLT(max_img_size)
    MX_FLT(brightness) MX_FLT(contrast) MX_FLT(saturation) MX_FLT(pca_noise)
    MX_INT(inter_method)
#undef MX_INT
#undef MX_FLT
}

static int check_inter(int m, const dlg_host *h)
{
    if ((m >= 0 && m <= 4) || m == 9 || m == 10)
        return 0;
    return h->error(h, DLG_EINVAL, "inter_method = %d: MXNet's are 0 (nearest), 1 (bilinear), "
                    "2 (cubic), 3 (area), 4 (lanczos4), 9 (auto) and 10 (random)", m);
}

/* The ranges MXNet draws from must be ranges (it CHECKs some, and draws
 * nonsense from the others). */
static int check_ranges(const dlg_mxnet_aug *mx, const dlg_host *h)
{
    if (mx->min_random_scale > mx->max_random_scale)
        return h->error(h, DLG_EINVAL, "min_random_scale = %g is above max_random_scale = %g",
                        (double)mx->min_random_scale, (double)mx->max_random_scale);
    if (mx->min_random_area > mx->max_random_area)
        return h->error(h, DLG_EINVAL, "min_random_area = %g is above max_random_area = %g",
                        (double)mx->min_random_area, (double)mx->max_random_area);
    if (mx->min_aspect_ratio > 0 && mx->min_aspect_ratio > mx->max_aspect_ratio)
        return h->error(h, DLG_EINVAL, "min_aspect_ratio = %g is above max_aspect_ratio = %g "
                        "(with min_aspect_ratio set, max_aspect_ratio is the ratio's upper "
                        "bound, not a change around 1)",
                        (double)mx->min_aspect_ratio, (double)mx->max_aspect_ratio);
    if (mx->min_aspect_ratio <= 0 && mx->max_aspect_ratio >= 1)
        return h->error(h, DLG_EINVAL, "max_aspect_ratio = %g without min_aspect_ratio draws "
                        "ratios in [1 - %g, 1 + %g], down to 0 or below: keep it under 1, or "
                        "set min_aspect_ratio",
                        (double)mx->max_aspect_ratio, (double)mx->max_aspect_ratio,
                        (double)mx->max_aspect_ratio);
    return 0;
}

/* random_resized_crop's partners, as MXNet 1.3+ CHECKs them (and what it
 * would silently ignore). */
static int check_area_crop(const dlg_mxnet_aug *mx, const dlg_host *h)
{
    if (mx->random_resized_crop && (mx->min_random_scale != 1 || mx->max_random_scale != 1))
        return h->error(h, DLG_EINVAL, "random_resized_crop = true with min_random_scale = %g, "
                        "max_random_scale = %g: MXNet refuses the two together; leave the "
                        "scales at 1", (double)mx->min_random_scale, (double)mx->max_random_scale);
    if (!mx->random_resized_crop && (mx->min_random_area != 1 || mx->max_random_area != 1))
        return h->error(h, DLG_EINVAL, "min_random_area = %g, max_random_area = %g act only with "
                        "random_resized_crop = true (MXNet ignores them without it)",
                        (double)mx->min_random_area, (double)mx->max_random_area);
    return 0;
}

/* min/max_crop_size: both set or neither (MXNet would draw a side of -1
 * or 0 from the other), a range, and not with random_resized_crop (MXNet
 * CHECKs that); min/max_img_size: a range. */
static int check_sizes(const dlg_mxnet_aug *mx, const dlg_host *h)
{
    int lo = mx->min_crop_size, hi = mx->max_crop_size;
    if ((lo != -1 || hi != -1) && (lo < 1 || hi < 1))
        return h->error(h, DLG_EINVAL, "min_crop_size = %d, max_crop_size = %d: set both to a "
                        "side of at least 1 pixel (or both to -1: off)", lo, hi);
    if (lo > hi)
        return h->error(h, DLG_EINVAL, "min_crop_size = %d is above max_crop_size = %d", lo, hi);
    if (lo > 0 && mx->random_resized_crop)
        return h->error(h, DLG_EINVAL, "random_resized_crop = true with min_crop_size = %d, "
                        "max_crop_size = %d: MXNet refuses the two together", lo, hi);
    if (mx->min_img_size > mx->max_img_size)
        return h->error(h, DLG_EINVAL, "min_img_size = %g is above max_img_size = %g",
                        (double)mx->min_img_size, (double)mx->max_img_size);
    return 0;
}

int dlg_ld_mx_check(const dlg_loader_config *cfg, const dlg_host *h)
{
    const dlg_mxnet_aug *mx = &cfg->mx;
    if (cfg->transform != DLG_TRANSFORM_MXNET) {
        char set[96];
        first_set(mx, set, sizeof set);
        if (!set[0])
            return 0;
        return h->error(h, DLG_EINVAL, "%s is an option of MXNet's augmenter: set transform = "
                        "mxnet (transform is %s)", set,
                        cfg->transform == DLG_TRANSFORM_AUTO ? "auto"
                        : dlg_ld_caffe(cfg)                ? "caffe"
                                                           : "torchvision");
    }
    if (cfg->mean_file)
        return h->error(h, DLG_EINVAL, "mean_file = %s with transform = mxnet: MXNet's mean_img "
                        "is not supported; give mean (mean_r, mean_g, mean_b) instead",
                        cfg->mean_file);
    int rc = check_inter(mx->inter_method, h);
    if (rc == 0)
        rc = check_ranges(mx, h);
    if (rc == 0)
        rc = check_area_crop(mx, h);
    if (rc == 0)
        rc = check_sizes(mx, h);
    return rc;
}
