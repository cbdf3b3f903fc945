/* transform = mxnet's ImageRecordIter options beyond the warp, crop and
 * HLS (test_loader_mxnet.c): brightness, contrast, saturation, pca_noise,
 * min/max_crop_size and min/max_img_size, end to end through the option
 * fragment on RecordIO, each batch checked against the decoded image put
 * through MXNet's formula here, in double, with the draws loader_image.h
 * documents (dlg_mx_draw).  Batches are 1 image of the 1-record dataset,
 * so batch k is stream item (k, 0); pixel_range 255, mean 0, std 1: a batch
 * value is the pixel value.  Then the options' rules, one line each. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "loader_affine.h"
#include "loader_image.h"
#include "options.h"
#include "pipe_util.h"

#define RAW "transform=mxnet", "pixel_range=255", "mean=0,0,0", "std=1,1,1", "mirror=false"

typedef struct img {
    uint8_t *px; /* packed RGB */
    int w, h;
} img;

/* One generated w x h JPEG as RecordIO; its decoded pixels in *dec. */
static void make_rec(pu_dataset *d, char *spec, size_t cap, const char *tag, int w, int h, img *dec)
{
    pu_make_images(d, tag, 1, 1, w, h, 7);
    pu_make_rec(d);
    snprintf(spec, cap, "data=recordio:%s", d->rec);
    size_t len;
    uint8_t *jpg = pu_slurp(d->paths[0], &len);
    tjhandle tj = tjInitDecompress();
    int ss, cs;
    assert_int_equal(tjDecompressHeader3(tj, jpg, (unsigned long)len, &dec->w, &dec->h, &ss, &cs),
                     0);
    dec->px = malloc((size_t)dec->w * dec->h * 3);
    assert_int_equal(tjDecompress2(tj, jpg, (unsigned long)len, dec->px, dec->w, dec->w * 3, dec->h,
                                   TJPF_RGB, 0),
                     0);
    tjDestroy(tj);
    free(jpg);
}

static double u(const dlg_loader_config *cfg, uint64_t epoch, uint32_t k)
{
    return dlg_ld_uniform(dlg_ld_item_key(cfg, epoch, 0), k);
}

/* ---- the colour reference ------------------------------------------------ */

/* MXNet's grey: RGB2GRAY (OpenCV 4's 15-bit weights) on its BGR bytes. */
static double grey(const double *p)
{
    return (double)(((int)p[2] * 9798 + (int)p[1] * 19235 + (int)p[0] * 3735 + 16384) >> 15);
}

static double byte(double v)
{
    v = nearbyint(v);
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* One jitter step on n pixels of whole bytes; raw gets the unrounded
 * values (to compare the last step within its rounding). */
static void step(int which, double a, double *px, int n, double *raw)
{
    double m = 0;
    if (which == 1) {
        for (int i = 0; i < n; i++)
            m += grey(px + 3 * i);
        m /= n;
    }
    for (int i = 0; i < n; i++) {
        double g = grey(px + 3 * i);
        for (int c = 0; c < 3; c++) {
            double *v = &px[3 * i + c];
            double r = which == 0   ? *v * a
                       : which == 1 ? *v * a + (1 - a) * m
                                    : *v * a + g * (1 - a);
            raw[3 * i + c] = r;
            *v = byte(r);
        }
    }
}

/* AlexNet's eigenvalues and eigenvectors (columns), as the literature
 * gives them. */
static const double L[3] = {55.46, 4.794, 1.148};
static const double E[3][3] = {
    {-0.5675, 0.7192, 0.4009}, {-0.5808, -0.0045, -0.8140}, {-0.5836, -0.6948, 0.4203}};

typedef struct colour_case {
    const char *over[3];
    double b, c, s, pca;
} colour_case;

/* The expected batch for item `epoch`: px (n pixels) through the jitter
 * in the drawn order and the PCA noise.  Returns the tolerance: 0.5 after
 * a jitter step (the last rounding), else 0 (PCA truncates). */
static double colour_ref(const dlg_loader_config *cfg, const colour_case *k, uint64_t epoch,
                         double *px, double *raw, int n)
{
    double tol = 0;
    if (k->b > 0 || k->c > 0 || k->s > 0) {
        double v[3] = {k->b, k->c, k->s}, a[3];
        for (int i = 0; i < 3; i++) /* 1 + U(-v, v) */
            a[i] = 1 + (u(cfg, epoch, DLG_MXD_BRIGHTNESS + (uint32_t)i) * 2 * v[i] - v[i]);
        static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                         {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        const int *o = orders[(int)floor(u(cfg, epoch, DLG_MXD_ORDER) * 6)];
        for (int i = 0; i < 3; i++)
            step(o[i], a[o[i]], px, n, raw);
        tol = 0.5;
    }
    if (k->pca > 0) {
        double z[4];
        for (int p = 0; p < 2; p++) { /* Box-Muller pairs */
            double r = sqrt(-2 * log(1 - u(cfg, epoch, DLG_MXD_PCA + 2 * p)));
            double t = 2 * M_PI * u(cfg, epoch, DLG_MXD_PCA + 2 * p + 1);
            z[2 * p] = r * cos(t);
            z[2 * p + 1] = r * sin(t);
        }
        for (int i = 0; i < n * 3; i++) {
            int c = i % 3;
            double off = 0;
            for (int j = 0; j < 3; j++)
                off += L[j] * E[c][j] * z[j] * k->pca;
            raw[i] = px[i] + off;
            double t = trunc(raw[i]);
            px[i] = t < 0 ? 0 : t > 255 ? 255 : t;
        }
        tol = 0;
    }
    return tol;
}

/* Each colour option alone, two together (the drawn order), and all with
 * the PCA noise, on a 32 x 32 image (crop 32: no offset): every value
 * within the last step's rounding of MXNet's formula, and the items
 * differ (the factors are drawn per item). */
static void test_colour_options(void **st)
{
    (void)st;
    enum { S = 32, ITEMS = 6 };
    static const colour_case k[] = {
        {{"brightness=0.4"}, 0.4, 0, 0, 0},
        {{"contrast=0.4"}, 0, 0.4, 0, 0},
        {{"saturation=0.6"}, 0, 0, 0.6, 0},
        {{"pca_noise=0.5"}, 0, 0, 0, 0.5},
        {{"brightness=0.4", "contrast=0.5"}, 0.4, 0.5, 0, 0},
        {{"brightness=0.3", "saturation=0.9", "pca_noise=0.1"}, 0.3, 0, 0.9, 0.1},
    };
    pu_dataset d;
    img dec;
    char data[700];
    make_rec(&d, data, sizeof data, "mxcolour", S, S, &dec);
    static double px[S * S * 3], raw[S * S * 3];
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        const char *over[12] = {data, RAW, "crop=32"};
        for (int j = 0; j < 3 && k[i].over[j]; j++)
            over[7 + j] = k[i].over[j];
        mock_host m;
        mock_host_init(&m);
        dlg_loader_config cfg;
        dlg_loader *l = pu_loader_open(&m, over, true, &cfg);
        float first = -1;
        bool differ = false, changed = false;
        for (uint64_t e = 0; e < ITEMS; e++) {
            dlg_batch *b;
            assert_int_equal(dlg_loader_next(l, &b), 0);
            for (int p = 0; p < S * S * 3; p++)
                px[p] = dec.px[p];
            double tol = colour_ref(&cfg, &k[i], e, px, raw, S * S);
            for (int y = 0; y < S; y++)
                for (int x = 0; x < S; x++)
                    for (int c = 0; c < 3; c++) {
                        int at = (y * S + x) * 3 + c;
                        float got = pu_at(&cfg, b->data, 0, c, y, x);
                        double r = raw[at], want = px[at];
                        changed |= got != dec.px[at];
                        if (tol > 0 && (r < 0 || r > 255)) /* clamped */
                            r = want;
                        if (tol == 0 && fabs(r - nearbyint(r)) < 1e-3)
                            continue; /* PCA at a whole number: float may land either side */
                        if (tol == 0 ? got != want : fabs(got - r) > tol + 1e-3)
                            fail_msg("%s, item %d (%d,%d,%d): %g, want %g (%.4f)", k[i].over[0],
                                     (int)e, x, y, c, (double)got, want, r);
                    }
            float v = pu_at(&cfg, b->data, 0, 0, 5, 7);
            differ |= e > 0 && v != first;
            first = e == 0 ? v : first;
            dlg_loader_release(l, b);
        }
        if (!differ || !changed)
            fail_msg("%s: items %s, pixels %s", k[i].over[0], differ ? "differ" : "all alike",
                     changed ? "changed" : "unchanged");
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
    free(dec.px);
}

/* Infer (augment center) draws nothing: the colour options and the crop
 * sizes leave the centre crop as stored. */
static void test_infer_ignores(void **st)
{
    (void)st;
    pu_dataset d;
    img dec;
    char data[700];
    make_rec(&d, data, sizeof data, "mxinfer", 40, 36, &dec);
    const char *over[] = {data, RAW, "crop=32", "brightness=0.5", "contrast=0.5", "saturation=0.5",
                          "pca_noise=1", "min_crop_size=20", "max_crop_size=30", NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, over, false, &cfg);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    for (int y = 0; y < 32; y++)
        for (int x = 0; x < 32; x++)
            for (int c = 0; c < 3; c++)
                assert_true(pu_at(&cfg, b->data, 0, c, y, x) ==
                            dec.px[((size_t)(y + 2) * 40 + x + 4) * 3 + c]);
    dlg_loader_release(l, b);
    dlg_loader_close(l);
    mock_host_fini(&m);
    free(dec.px);
}

/* min/max_crop_size: a side s in [20, 40] drawn per item, then y, x; the
 * window resized to the crop (by dlg_resize_rgb, pinned to cv::resize in
 * test_mxnet_aug).  Every item matches its window exactly, and the sides
 * spread over the range. */
static void test_crop_sizes(void **st)
{
    (void)st;
    enum { S = 64, C = 16, LO = 20, HI = 40, ITEMS = 12 };
    pu_dataset d;
    img dec;
    char data[700];
    make_rec(&d, data, sizeof data, "mxcropsize", S, S, &dec);
    const char *over[] = {data, RAW, "crop=16", "min_crop_size=20", "max_crop_size=40", NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, over, true, &cfg);
    uint8_t want[C * C * 3];
    int smin = HI, smax = LO;
    for (uint64_t e = 0; e < ITEMS; e++) {
        int s = LO + (int)floor(u(&cfg, e, DLG_MXD_CROP_SIZE) * (HI - LO + 1));
        int y = (int)floor(u(&cfg, e, DLG_MXD_CROP_Y) * (S - s + 1));
        int x = (int)floor(u(&cfg, e, DLG_MXD_CROP_X) * (S - s + 1));
        assert_true(s >= LO && s <= HI);
        smin = s < smin ? s : smin;
        smax = s > smax ? s : smax;
        dlg_rgb8 win = {dec.px + ((size_t)y * S + x) * 3, s, s, S * 3}, out = {want, C, C, C * 3};
        dlg_resize_rgb(&win, &out, DLG_WARP_RESIZE_BITS);
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        for (int i = 0; i < C * C * 3; i++)
            if (pu_at(&cfg, b->data, 0, i % 3, i / 3 / C, i / 3 % C) != want[i])
                fail_msg("item %d: side %d at (%d,%d): value %d differs", (int)e, s, x, y, i);
        dlg_loader_release(l, b);
    }
    assert_true(smax - smin >= 8);
    dlg_loader_close(l);
    mock_host_fini(&m);
    free(dec.px);
}

/* min/max_img_size bound the warp's canvas without rescaling: a 40 x 36
 * image on a 34 x 34 canvas is cut around the centre (shift 3, 1), on a
 * 50 x 50 canvas it sits at (5, 7) in fill_value.  Crop 32 at the drawn
 * offset of each. */
static void test_img_sizes(void **st)
{
    (void)st;
    enum { W = 40, H = 36, C = 32, FILL = 9 };
    pu_dataset d;
    img dec;
    char data[700];
    make_rec(&d, data, sizeof data, "mximgsize", W, H, &dec);
    static const struct {
        const char *opt;
        int side, dx, dy; /* canvas pixel (x, y) is source (x + dx, y + dy) */
    } k[] = {{"max_img_size=34", 34, 3, 1}, {"min_img_size=50", 50, -5, -7}};
    for (int i = 0; i < 2; i++) {
        const char *over[] = {data, RAW, "crop=32", "fill_value=9", k[i].opt, NULL};
        mock_host m;
        mock_host_init(&m);
        dlg_loader_config cfg;
        dlg_loader *l = pu_loader_open(&m, over, true, &cfg);
        for (uint64_t e = 0; e < 3; e++) {
            int s = k[i].side;
            int oy = (int)floor(u(&cfg, e, DLG_MXD_CROP_Y) * (s - C + 1));
            int ox = (int)floor(u(&cfg, e, DLG_MXD_CROP_X) * (s - C + 1));
            dlg_batch *b;
            assert_int_equal(dlg_loader_next(l, &b), 0);
            for (int y = 0; y < C; y++)
                for (int x = 0; x < C; x++)
                    for (int c = 0; c < 3; c++) {
                        int sx = ox + x + k[i].dx, sy = oy + y + k[i].dy;
                        int want = sx < 0 || sy < 0 || sx >= W || sy >= H
                                       ? FILL
                                       : dec.px[((size_t)sy * W + sx) * 3 + c];
                        float got = pu_at(&cfg, b->data, 0, c, y, x);
                        if (got != (float)want)
                            fail_msg("%s, item %d (%d,%d,%d): %g, want %d", k[i].opt, (int)e, x, y,
                                     c, (double)got, want);
                    }
            dlg_loader_release(l, b);
        }
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
    free(dec.px);
}

/* One clear line for each broken rule, naming the option. */
static void test_option_errors(void **st)
{
    (void)st;
    static const struct {
        const char *over[4];
        const char *want;
    } k[] = {
        {{"brightness=0.4"}, "brightness = 0.4 is an option of MXNet's augmenter"},
        {{"transform=caffe", "pca_noise=0.1"}, "pca_noise = 0.1 is an option of MXNet's"},
        {{"min_crop_size=20", "max_crop_size=30"}, "min_crop_size = 20 is an option of MXNet's"},
        {{"max_img_size=300"}, "max_img_size = 300 is an option of MXNet's"},
        {{"transform=mxnet", "min_crop_size=20"},
         "min_crop_size = 20, max_crop_size = -1: set both"},
        {{"transform=mxnet", "max_crop_size=0", "min_crop_size=0"},
         "min_crop_size = 0, max_crop_size = 0: set both"},
        {{"transform=mxnet", "min_crop_size=30", "max_crop_size=20"},
         "min_crop_size = 30 is above max_crop_size = 20"},
        {{"transform=mxnet", "random_resized_crop=true", "min_crop_size=20", "max_crop_size=30"},
         "random_resized_crop = true with min_crop_size = 20"},
        {{"transform=mxnet", "min_img_size=300", "max_img_size=200"},
         "min_img_size = 300 is above max_img_size = 200"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        const char *over[6] = {"data=recordio:/nonexistent.rec"};
        for (int j = 0; j < 4 && k[i].over[j]; j++)
            over[j + 1] = k[i].over[j];
        mock_host m;
        mock_host_init(&m);
        dlg_loader_config cfg;
        assert_int_not_equal(pu_loader_config(&m, over, true, &cfg), 0);
        if (!strstr(m.last_error, k[i].want) || m.errors != 1 || strchr(m.last_error, '\n'))
            fail_msg("case %zu: got %d error(s), last '%s'; want one line with '%s'", i, m.errors,
                     m.last_error, k[i].want);
        mock_host_fini(&m);
    }
}

/* The table's ranges: negative factors and sizes are refused by the
 * option parser (which names the key), MXNet's defaults accepted. */
static void test_option_ranges(void **st)
{
    (void)st;
    static const dlg_option table[] = {DLG_LOADER_OPTIONS,
                                       {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};
    static const struct {
        const char *key, *bad, *good;
    } k[] = {{"brightness", "-0.1", "0"},   {"contrast", "-1", "0.4"},
             {"saturation", "1.5", "0.4"},  {"pca_noise", "-0.1", "0.1"},
             {"min_crop_size", "-2", "-1"}, {"max_crop_size", "-5", "224"},
             {"min_img_size", "-1", "0"},   {"max_img_size", "-1", "1e10"}};
    char why[200];
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        size_t at;
        const dlg_option *o = dlg_opt_find(table, k[i].key, &at);
        assert_non_null(o);
        dlg_value v;
        if (dlg_opt_parse(o, k[i].bad, &v, why, sizeof why) == 0)
            fail_msg("%s = %s accepted", k[i].key, k[i].bad);
        if (dlg_opt_parse(o, k[i].good, &v, why, sizeof why) != 0)
            fail_msg("%s = %s refused: %s", k[i].key, k[i].good, why);
    }
}

/* An image smaller than max_crop_size where the crop is taken: an error
 * naming the record, as MXNet's CHECK stops. */
static void test_smaller_than_max_crop(void **st)
{
    (void)st;
    pu_dataset d;
    img dec;
    char data[700];
    make_rec(&d, data, sizeof data, "mxsmallcrop", 40, 36, &dec);
    const char *over[] = {data, RAW, "crop=16", "min_crop_size=20", "max_crop_size=38", NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, over, true, &cfg);
    dlg_batch *b;
    assert_true(dlg_loader_next(l, &b) < 0);
    if (!strstr(m.last_error, "data.rec") || !strstr(m.last_error, "is 40x36 after") ||
        !strstr(m.last_error, "smaller than max_crop_size = 38") || strchr(m.last_error, '\n'))
        fail_msg("error: %s", m.last_error);
    dlg_loader_close(l);
    mock_host_fini(&m);
    free(dec.px);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_colour_options), cmocka_unit_test(test_infer_ignores),
        cmocka_unit_test(test_crop_sizes),     cmocka_unit_test(test_img_sizes),
        cmocka_unit_test(test_option_errors),  cmocka_unit_test(test_option_ranges),
        cmocka_unit_test(test_smaller_than_max_crop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
