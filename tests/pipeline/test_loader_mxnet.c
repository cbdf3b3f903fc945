/* transform = mxnet end to end: RecordIO of generated JPEGs (im2rec
 * records), through the option fragment as a workload configures it, each
 * batch checked against the decoded image (TurboJPEG here) put through a
 * plain double-precision reference of MXNet's augmenter (its matrix, the
 * bilinear warp with the fill_value border, the crop, OpenCV's HLS as its
 * sector table defines it, the mirror) with the draws the loader documents
 * (loader_image.h: dlg_mx_draw).  Batches are 1 image, pixel_range 255,
 * mean 0 and std 1, so a batch value is the pixel value. */
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
#include "loader_hls.h"
#include "loader_image.h"
#include "pipe_util.h"

/* The common part of every configuration here: the batch is the pixels. */
#define RAW "transform=mxnet", "pixel_range=255", "mean=0,0,0", "std=1,1,1"

typedef struct img {
    uint8_t *px; /* packed RGB */
    int w, h;
} img;

/* n images of about w x h (image 0 exactly), labels 0..n-1, as RecordIO;
 * the decoded pixels of each in dec[]. */
static void make_rec(pu_dataset *d, char *spec, size_t cap, const char *tag, int n, int w, int h,
                     img *dec)
{
    pu_make_images(d, tag, n, n, w, h, 7);
    pu_make_rec(d);
    snprintf(spec, cap, "data=recordio:%s", d->rec);
    tjhandle tj = tjInitDecompress();
    for (int i = 0; i < n; i++) {
        size_t len;
        uint8_t *jpg = pu_slurp(d->paths[i], &len);
        int ss, cs;
        assert_int_equal(tjDecompressHeader3(tj, jpg, (unsigned long)len, &dec[i].w, &dec[i].h,
                                             &ss, &cs), 0);
        dec[i].px = malloc((size_t)dec[i].w * dec[i].h * 3);
        assert_int_equal(tjDecompress2(tj, jpg, (unsigned long)len, dec[i].px, dec[i].w,
                                       dec[i].w * 3, dec[i].h, TJPF_RGB, 0), 0);
        free(jpg);
    }
    tjDestroy(tj);
}

static void free_imgs(img *dec, int n)
{
    for (int i = 0; i < n; i++)
        free(dec[i].px);
}

static int px(const img *im, int x, int y, int c) { return im->px[((size_t)y * im->w + x) * 3 + c]; }

/* ---- the reference ------------------------------------------------------ */

/* OpenCV's bilinear sample with a constant border, in double, at source
 * (X, Y) in 1/32 pixel. */
static double sample(const img *im, long X, long Y, int c, int fill)
{
    int x0 = (int)(X >> 5), y0 = (int)(Y >> 5);
    double fx = (X & 31) / 32.0, fy = (Y & 31) / 32.0, v[2][2];
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            int x = x0 + i, y = y0 + j;
            v[j][i] = x < 0 || y < 0 || x >= im->w || y >= im->h ? fill : px(im, x, y, c);
        }
    return (v[0][0] * (1 - fx) + v[0][1] * fx) * (1 - fy) + (v[1][0] * (1 - fx) + v[1][1] * fx) * fy;
}

/* cv::warpAffine's source coordinate of output (x, y) for the inverse map
 * sx = a x + b y + c, in 1/32 pixel: the column term and the row term each
 * rounded to 1/1024 pixel (imgwarp.cpp), their sum shifted down. */
static long cv_coord(double a, double b, double c, int x, int y)
{
    return (lrint(a * x * 1024) + lrint((b * y + c) * 1024) + 16) >> 5;
}

/* The colour step: OpenCV's RGB2HLS, MXNet's shift and clamp on the bytes,
 * HLS2RGB, by dlgauge's byte conversions -- test_mxnet_aug pins those to
 * cv2's bytes (and they matched cv2 on all 2^24 colours in rows of 1, 7,
 * 13, 299, 300 and 4096 pixels in a one-off check).  One pixel at a time
 * they take OpenCV's scalar loop, which the loader's rows take only for
 * their last pixels: a level apart on a few colours, within the tolerance.
 * In double they cannot be followed: L = (max + min) / 2 is often a tie,
 * which OpenCV's float arithmetic rounds either way, moving a colour by
 * several levels after the shift. */
static void ref_jitter(double rgb[3], int dh, int dl, int ds)
{
    uint8_t in[3] = {(uint8_t)rgb[0], (uint8_t)rgb[1], (uint8_t)rgb[2]}, hls[3], out[3];
    dlg_rgb_to_hls8(in, 1, hls);
    int h = hls[0] + dh, l = hls[1] + dl, s = hls[2] + ds;
    hls[0] = (uint8_t)(h < 0 ? 0 : h > 180 ? 180 : h);
    hls[1] = (uint8_t)(l < 0 ? 0 : l > 255 ? 255 : l);
    hls[2] = (uint8_t)(s < 0 ? 0 : s > 255 ? 255 : s);
    dlg_hls8_to_rgb(hls, 1, out);
    for (int k = 0; k < 3; k++)
        rgb[k] = out[k];
}

/* MXNet 1.3+'s HLS shift: u = (u1 + 4 u2) / 5 in float, then int(u 2v - v). */
static int ref_shift(uint64_t key, uint32_t k1, uint32_t k2, int v)
{
    float u = (float)dlg_ld_uniform(key, k1);
    u += 4 * (float)dlg_ld_uniform(key, k2);
    u = u / 5;
    return (int)(u * (float)v * 2 - (float)v);
}

typedef struct ref_aug {
    int max_angle, fill, rh, rs, rl;
    double max_shear, max_aspect;
} ref_aug;

/* MXNet's augmenter on src for stream item (epoch, 0), crop c: out is
 * c x c x 3 (HWC), in double. */
static void reference(const dlg_loader_config *cfg, const ref_aug *a, const img *src, uint64_t epoch,
                      double *out)
{
    uint64_t key = dlg_ld_item_key(cfg, epoch, 0);
    double shear = dlg_ld_uniform(key, DLG_MXD_SHEAR) * a->max_shear * 2 - a->max_shear;
    int angle = (int)floor(dlg_ld_uniform(key, DLG_MXD_ANGLE) * (2 * a->max_angle + 1)) - a->max_angle;
    double ratio = dlg_ld_uniform(key, DLG_MXD_RATIO) * 2 * a->max_aspect + 1 - a->max_aspect;
    double ca = cos(angle * M_PI / 180), sa = sin(angle * M_PI / 180);
    double hs = 2.0 / (1 + ratio), ws = ratio * hs; /* scale 1 */
    double m00 = hs * ca - shear * sa * ws, m01 = hs * sa + shear * ca * ws;
    double m10 = -sa * ws, m11 = ca * ws, det = m00 * m11 - m01 * m10;
    double tx = (src->w - (m00 * src->w + m01 * src->h)) / 2;
    double ty = (src->h - (m10 * src->w + m11 * src->h)) / 2;
    int c = cfg->crop;
    int oy = (int)floor(dlg_ld_uniform(key, DLG_MXD_CROP_Y) * (src->h - c + 1));
    int ox = (int)floor(dlg_ld_uniform(key, DLG_MXD_CROP_X) * (src->w - c + 1));
    int dh = ref_shift(key, DLG_MXD_H, DLG_MXD_HLS2, a->rh);
    int ds = ref_shift(key, DLG_MXD_S, DLG_MXD_HLS2 + 1, a->rs);
    int dl = ref_shift(key, DLG_MXD_L, DLG_MXD_HLS2 + 2, a->rl);
    bool mirror = dlg_ld_uniform(key, 1000) < 0.5;
    for (int y = 0; y < c; y++)
        for (int x = 0; x < c; x++) {
            double rgb[3]; /* M (sx, sy) + t = (ox + x, oy + y), solved */
            long X = cv_coord(m11 / det, -m01 / det, (-m11 * tx + m01 * ty) / det, ox + x, oy + y);
            long Y = cv_coord(-m10 / det, m00 / det, (m10 * tx - m00 * ty) / det, ox + x, oy + y);
            for (int k = 0; k < 3; k++) /* the warp's result is bytes */
                rgb[k] = floor(sample(src, X, Y, k, a->fill) + 0.5);
            ref_jitter(rgb, dh, dl, ds);
            int at = mirror ? c - 1 - x : x;
            for (int k = 0; k < 3; k++)
                out[((size_t)y * c + at) * 3 + k] = rgb[k];
        }
}

/* ---- the tests ---------------------------------------------------------- */

/* example/image-classification's level 3 (train_imagenet.py): rotate 10,
 * shear 0.1, aspect 0.25, HLS 36/50/50 (S 40 here, to tell S from L),
 * fill 127, random crop, mirror --
 * every item against the reference.  A warp pixel rounded the other way
 * (float against double) may move a colour a level or two through HLS. */
static void test_level3_against_reference(void **st)
{
    (void)st;
    enum { C = 32, ITEMS = 12 };
    pu_dataset d;
    img dec[1];
    char data[700];
    make_rec(&d, data, sizeof data, "mxl3", 1, 48, 40, dec);
    const char *over[] = {data, RAW, "crop=32", "max_rotate_angle=10", "max_shear_ratio=0.1",
                          "max_aspect_ratio=0.25", "random_h=36", "random_s=40", "random_l=50",
                          "fill_value=127", NULL};
    const ref_aug a = {10, 127, 36, 40, 50, 0.1, 0.25};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, over, true, &cfg);
    double *want = malloc(sizeof(double) * C * C * 3);
    int mirrored = 0;
    for (uint64_t e = 0; e < ITEMS; e++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        reference(&cfg, &a, &dec[0], e, want);
        mirrored += dlg_ld_uniform(dlg_ld_item_key(&cfg, e, 0), 1000) < 0.5;
        long far = 0;
        for (int y = 0; y < C; y++)
            for (int x = 0; x < C; x++)
                for (int k = 0; k < 3; k++) {
                    double got = pu_at(&cfg, b->data, 0, k, y, x), w = want[((size_t)y * C + x) * 3 + k];
                    if (fabs(got - w) > 2)
                        fail_msg("item %llu (%d,%d,%d): %g, reference %.2f", (unsigned long long)e,
                                 x, y, k, got, w);
                    far += fabs(got - w) > 1.0 + 1e-6;
                }
        if (far > C * C * 3 / 100)
            fail_msg("item %llu: %ld of %d values more than a level from the reference",
                     (unsigned long long)e, far, C * C * 3);
        dlg_loader_release(l, b);
    }
    assert_true(mirrored > 0 && mirrored < ITEMS);
    free(want);
    dlg_loader_close(l);
    mock_host_fini(&m);
    free_imgs(dec, 1);
}

/* Without augmentation the batch is a crop x crop window of the decoded
 * image, exactly: at a uniform offset in train (several seen), at the
 * centre rounded down in infer, where the train-only options do nothing. */
static void test_plain_crop_is_exact(void **st)
{
    (void)st;
    enum { N = 5, C = 24 };
    pu_dataset d;
    img dec[N];
    char data[700];
    make_rec(&d, data, sizeof data, "mxcrop", N, 30, 28, dec);
    for (int train = 0; train < 2; train++) {
        const char *over[] = {data, RAW, "crop=24", "mirror=false", "random_l=40",
                              "max_rotate_angle=30", NULL};
        const char *plain[] = {data, RAW, "crop=24", "mirror=false", NULL};
        mock_host m;
        mock_host_init(&m);
        dlg_loader_config cfg;
        dlg_loader *l = pu_loader_open(&m, train ? plain : over, train, &cfg);
        int seen[16] = {0}, distinct = 0;
        for (int k = 0; k < 4 * N; k++) {
            dlg_batch *b;
            assert_int_equal(dlg_loader_next(l, &b), 0);
            const img *im = &dec[b->labels[0]];
            int fx = -1, fy = -1;
            for (int oy = 0; oy <= im->h - C && fx < 0; oy++)
                for (int ox = 0; ox <= im->w - C && fx < 0; ox++) {
                    bool same = true;
                    for (int y = 0; y < C && same; y++)
                        for (int x = 0; x < C && same; x++)
                            for (int c = 0; c < 3 && same; c++)
                                same = pu_at(&cfg, b->data, 0, c, y, x) == px(im, ox + x, oy + y, c);
                    if (same) {
                        fx = ox;
                        fy = oy;
                    }
                }
            if (fx < 0)
                fail_msg("%s item %d: the batch is no exact window of record %d", train ? "train" : "infer",
                         k, b->labels[0]);
            if (!train) {
                assert_int_equal(fx, (im->w - C) / 2);
                assert_int_equal(fy, (im->h - C) / 2);
            } else if (!seen[(fx * 5 + fy) % 16]++) {
                distinct++;
            }
            dlg_loader_release(l, b);
        }
        if (train)
            assert_true(distinct >= 3);
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
    free_imgs(dec, N);
}

/* rotate = 180 (fixed) on an image of the crop's size: (x, y) -> (W - x,
 * H - y), so the batch is src(W - x, H - y) with row and column 0 the
 * fill_value (MXNet's half-pixel shift); then resize and pad: resize = 16
 * halves it (cv::resize: 2x2 means), pad = 4 adds a fill_value frame. */
static void test_rotate_resize_pad(void **st)
{
    (void)st;
    enum { S = 32 };
    pu_dataset d;
    img dec[1];
    char data[700];
    make_rec(&d, data, sizeof data, "mxrot", 1, S, S, dec);
    const img *im = &dec[0];
    const char *rot[] = {data, RAW, "crop=32", "rotate=180", "mirror=false", "fill_value=9", NULL};
    const char *rp[] = {data, RAW, "crop=24", "resize=16", "pad=4", "fill_value=9", NULL};
    for (int pass = 0; pass < 2; pass++) {
        mock_host m;
        mock_host_init(&m);
        dlg_loader_config cfg;
        dlg_loader *l = pu_loader_open(&m, pass ? rp : rot, pass == 0, &cfg);
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        for (int y = 0; y < cfg.crop; y++)
            for (int x = 0; x < cfg.crop; x++)
                for (int c = 0; c < 3; c++) {
                    float got = pu_at(&cfg, b->data, 0, c, y, x);
                    int want;
                    if (pass == 0)
                        want = x == 0 || y == 0 ? 9 : px(im, S - x, S - y, c);
                    else if (x < 4 || y < 4 || x >= 20 || y >= 20)
                        want = 9;
                    else {
                        int sx = 2 * (x - 4), sy = 2 * (y - 4);
                        int sum = px(im, sx, sy, c) + px(im, sx + 1, sy, c) + px(im, sx, sy + 1, c) +
                                  px(im, sx + 1, sy + 1, c);
                        want = (sum + 2) / 4;
                        if (fabsf(got - (float)sum / 4) <= 0.5f)
                            continue; /* a tie rounded either way */
                    }
                    if (got != (float)want)
                        fail_msg("%s (%d,%d,%d): %g, want %d", pass ? "resize+pad" : "rotate 180",
                                 x, y, c, (double)got, want);
                }
        dlg_loader_release(l, b);
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
    free_imgs(dec, 1);
}

/* random_resized_crop with area share 1/4 and ratio 1 on a 64 x 64 image:
 * a 32 x 32 window at a uniform offset, resized to 16 x 16 (2x2 means). */
static void test_random_resized_crop(void **st)
{
    (void)st;
    enum { S = 64, C = 16 };
    pu_dataset d;
    img dec[1];
    char data[700];
    make_rec(&d, data, sizeof data, "mxrrc", 1, S, S, dec);
    const img *im = &dec[0];
    const char *over[] = {data, RAW, "crop=16", "random_resized_crop=true", "min_random_area=0.25",
                          "max_random_area=0.25", "min_aspect_ratio=1", "max_aspect_ratio=1",
                          "mirror=false", NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, over, true, &cfg);
    int first = -1;
    bool moved = false;
    for (int k = 0; k < 6; k++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        int found = -1;
        for (int o = 0; o < 33 * 33 && found < 0; o++) {
            int ox = o % 33, oy = o / 33;
            bool same = true;
            for (int y = 0; y < C && same; y++)
                for (int x = 0; x < C && same; x++)
                    for (int c = 0; c < 3 && same; c++) {
                        int sx = ox + 2 * x, sy = oy + 2 * y;
                        float mean = (px(im, sx, sy, c) + px(im, sx + 1, sy, c) +
                                      px(im, sx, sy + 1, c) + px(im, sx + 1, sy + 1, c)) / 4.0f;
                        same = fabsf(pu_at(&cfg, b->data, 0, c, y, x) - mean) <= 0.5f;
                    }
            if (same)
                found = o;
        }
        if (found < 0)
            fail_msg("item %d: no 32x32 window of the image halves to the batch", k);
        moved |= first >= 0 && found != first;
        first = first < 0 ? found : first;
        dlg_loader_release(l, b);
    }
    assert_true(moved);
    dlg_loader_close(l);
    mock_host_fini(&m);
    free_imgs(dec, 1);
}

/* Every batch is the same for 1 and 3 worker threads (level 3 options). */
static void test_threads_agree(void **st)
{
    (void)st;
    enum { N = 4, BATCHES = 8 };
    pu_dataset d;
    img dec[N];
    char data[700];
    make_rec(&d, data, sizeof data, "mxthr", N, 40, 36, dec);
    float *first = NULL;
    for (int t = 0; t < 2; t++) {
        const char *over[] = {data, RAW, "crop=32", "max_rotate_angle=10", "max_shear_ratio=0.1",
                              "max_aspect_ratio=0.25", "random_h=36", "random_s=50", "random_l=50",
                              t ? "threads=3" : "threads=1", NULL};
        mock_host m;
        mock_host_init(&m);
        dlg_loader_config cfg;
        dlg_loader *l = pu_loader_open(&m, over, true, &cfg);
        size_t per = dlg_loader_batch_bytes(&cfg);
        if (!first)
            first = malloc(per * BATCHES);
        for (int k = 0; k < BATCHES; k++) {
            dlg_batch *b;
            assert_int_equal(dlg_loader_next(l, &b), 0);
            if (t == 0)
                memcpy((char *)first + per * k, b->data, per);
            else
                assert_memory_equal((char *)first + per * k, b->data, per);
            dlg_loader_release(l, b);
        }
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
    free(first);
    free_imgs(dec, N);
}

/* One clear line for each broken rule, naming the option. */
static void test_option_errors(void **st)
{
    (void)st;
    static const struct {
        const char *over[4];
        const char *want;
    } k[] = {
        {{"transform=mxnet", "inter_method=5"}, "inter_method = 5: MXNet's are"},
        {{"transform=mxnet", "inter_method=8"}, "inter_method = 8: MXNet's are"},
        {{"max_rotate_angle=10"}, "max_rotate_angle = 10 is an option of MXNet's augmenter"},
        {{"transform=caffe", "fill_value=127"}, "fill_value = 127 is an option of MXNet's"},
        {{"transform=mxnet", "min_random_scale=1.2"}, "min_random_scale = 1.2 is above"},
        {{"transform=mxnet", "random_resized_crop=true", "max_random_scale=1.5"},
         "random_resized_crop = true with min_random_scale"},
        {{"transform=mxnet", "min_random_area=0.08"}, "act only with random_resized_crop = true"},
        {{"transform=mxnet", "max_aspect_ratio=1.5"}, "max_aspect_ratio = 1.5 without min_aspect"},
        {{"transform=mxnet", "min_aspect_ratio=2", "max_aspect_ratio=1.5"},
         "min_aspect_ratio = 2 is above max_aspect_ratio = 1.5"},
        {{"transform=mxnet", "mean_file=/nonexistent.binaryproto", "pixel_range=255"},
         "mean_file = /nonexistent.binaryproto with transform = mxnet"},
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

/* An image smaller than the crop, stored so or left so by the warp:
 * MXNet 1.3+ enlarges it (height to the crop, width in proportion, by
 * cv::resize: 20x18 -> 35x32 for crop 32) and crops the centre, where
 * MXNet up to 1.2 stopped (as this loader did).  min/max_crop_size's
 * window still needs the image to hold max_crop_size: one line naming the
 * record, as MXNet's CHECK. */
static void test_small_images(void **st)
{
    (void)st;
    pu_dataset d;
    img dec[1];
    char data[700];
    make_rec(&d, data, sizeof data, "mxsmall", 1, 20, 18, dec);
    const char *plain[] = {data, RAW, "crop=32", NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, plain, false, &cfg);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    static uint8_t big[35 * 32 * 3];
    dlg_rgb8 src = {dec[0].px, 20, 18, 60}, dst = {big, 35, 32, 35 * 3};
    dlg_resize_rgb(&src, &dst, DLG_WARP_RESIZE_BITS); /* cv2's bytes: test_mxnet_interp.c */
    for (int y = 0; y < 32; y++)
        for (int x = 0; x < 32; x++)
            for (int c = 0; c < 3; c++)
                if (pu_at(&cfg, b->data, 0, c, y, x) != big[(y * 35 + x + 1) * 3 + c])
                    fail_msg("(%d,%d,%d): %g, the 35x32 resize's centre has %d", x, y, c,
                             (double)pu_at(&cfg, b->data, 0, c, y, x),
                             big[(y * 35 + x + 1) * 3 + c]);
    dlg_loader_release(l, b);
    dlg_loader_close(l);
    mock_host_fini(&m);
    free_imgs(dec, 1);

    make_rec(&d, data, sizeof data, "mxsmall2", 1, 40, 36, dec);
    const char *warp[] = {data, RAW, "crop=32", "min_random_scale=0.5", "max_random_scale=0.5",
                          NULL};
    const char *window[] = {data, RAW, "crop=16", "min_crop_size=20", "max_crop_size=48", NULL};
    for (int pass = 0; pass < 2; pass++) {
        mock_host_init(&m);
        l = pu_loader_open(&m, pass ? window : warp, true, &cfg);
        int rc = dlg_loader_next(l, &b);
        if (pass == 0) { /* 20x18 after the warp: enlarged, no error */
            assert_int_equal(rc, 0);
            assert_int_equal(m.errors, 0);
            dlg_loader_release(l, b);
        } else if (rc >= 0 || !strstr(m.last_error, "data.rec") ||
                   !strstr(m.last_error, "is 40x36 after") ||
                   !strstr(m.last_error, "smaller than max_crop_size = 48") ||
                   strchr(m.last_error, '\n')) {
            fail_msg("max_crop_size 48 on 40x36: rc %d, error '%s'", rc, m.last_error);
        }
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
    free_imgs(dec, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_level3_against_reference),
        cmocka_unit_test(test_plain_crop_is_exact),
        cmocka_unit_test(test_rotate_resize_pad),
        cmocka_unit_test(test_random_resized_crop),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_option_errors),
        cmocka_unit_test(test_small_images),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
