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
                          .inter_method = 1};
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
    MX_INT(inter_method)
#undef MX_INT
#undef MX_FLT
}

static int check_inter(int m, const dlg_host *h)
{
    static const char *const names[] = {"nearest", "bilinear", "cubic", "area", "lanczos4"};
    if (m == 0 || m == 1)
        return 0;
    if ((m >= 2 && m <= 4) || m == 9 || m == 10)
        return h->error(h, DLG_EINVAL, "inter_method = %d (%s) is not implemented: use 0 "
                        "(nearest) or 1 (bilinear, MXNet's default)",
                        m, m <= 4 ? names[m] : m == 9 ? "auto" : "random");
    return h->error(h, DLG_EINVAL, "inter_method = %d: MXNet's are 0..4, 9 and 10, and 0 "
                    "(nearest) and 1 (bilinear) are implemented here", m);
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

/* random_resized_crop's partners, as MXNet 1.3 CHECKs them (and what it
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
    return rc;
}
