/* transform = caffe: Caffe's DataTransformer, checked on the batches alone.
 * Every stored pixel value is unique per channel, so the output's first
 * pixel says which window was taken: the window must be crop x crop pixels
 * of the image as stored (no resample), at y0 in 0..H-crop, x0 in 0..W-crop
 * (train, each offset about equally often) or ((W-crop)/2, (H-crop)/2) in
 * integers (infer), out = v - mean_value in Caffe's BGR order, mirrored
 * only when mirror is on.  Everything goes through the option fragment, as
 * a workload's configuration does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "datum.h"
#include "lmdb_dataset.h"
#include "loader_image.h"
#include "pipe_util.h"

enum { W = 13, H = 11, CROP = 8, NREC = 3 };
/* Caffe's ImageNet mean_value, B, G, R */
static const float mean_bgr[3] = {104, 117, 123};

/* Stored value of record r, Datum plane p (0 B, 1 G, 2 R), row y, column
 * x: y*W + x < 143 tells the position, p and r shift it apart. */
static int pix(int r, int p, int y, int x) { return y * W + x + 37 * p + 3 * r; }

/* An LMDB of raw BGR Datums: NREC records of W x H, then `extra` records
 * of ew x eh (key "small.png"). */
static void make_db(char *spec, size_t cap, const char *tag, int extra, int ew, int eh)
{
    char dir[512];
    pu_tmpdir(dir, sizeof dir, tag);
    snprintf(spec, cap, "data=lmdb:%s/db", dir);
    dlg_lmdb_writer *w;
    assert_int_equal(dlg_lmdb_writer_open(&w, spec + 10, NULL), 0);
    for (int r = 0; r < NREC + extra; r++) {
        int rw = r < NREC ? W : ew, rh = r < NREC ? H : eh;
        uint8_t chw[3 * W * H];
        for (int p = 0; p < 3; p++)
            for (int y = 0; y < rh; y++)
                for (int x = 0; x < rw; x++)
                    chw[(p * rh + y) * rw + x] = (uint8_t)pix(r, p, y, x);
        dlg_datum dt;
        dlg_datum_init(&dt);
        dlg_datum_set_raw(&dt, 3, rh, rw, chw, (size_t)3 * rw * rh, r);
        char key[32];
        snprintf(key, sizeof key, r < NREC ? "img%d.png" : "small.png", r);
        assert_int_equal(dlg_lmdb_writer_put(w, r, key, &dt, NULL), 0);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
}

typedef struct seen_crop {
    int x0, y0;
    bool mirrored;
} seen_crop;

/* Finds the window batch item 0 (record r; bgr, std 1, crop CROP) was cut
 * from, and checks every value is exactly its stored pixel minus the
 * channel's mean_value, unmirrored or mirrored as a whole. */
static seen_crop check_crop(const dlg_loader_config *cfg, const void *data, int r)
{
    seen_crop s = {0, 0, false};
    /* plane 0 is B in bgr order: the first pixel or, mirrored, the last of row 0 */
    int v0 = (int)(pu_at(cfg, data, 0, 0, 0, 0) + mean_bgr[0]) - 3 * r;
    int vl = (int)(pu_at(cfg, data, 0, 0, 0, CROP - 1) + mean_bgr[0]) - 3 * r;
    s.mirrored = vl + CROP - 1 == v0;
    int first = s.mirrored ? vl : v0;
    s.x0 = first % W;
    s.y0 = first / W;
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < CROP; y++)
            for (int x = 0; x < CROP; x++) {
                int ox = s.mirrored ? CROP - 1 - x : x;
                float want = (float)pix(r, p, s.y0 + y, s.x0 + x) - mean_bgr[p];
                float got = pu_at(cfg, data, 0, p, y, ox);
                if (got != want)
                    fail_msg("record %d plane %d (%d,%d) of the window at (%d,%d)%s: got %g, "
                             "want %g (a resample, or another window)",
                             r, p, y, x, s.x0, s.y0, s.mirrored ? " mirrored" : "", got, want);
            }
    assert_true(s.x0 >= 0 && s.x0 <= W - CROP && s.y0 >= 0 && s.y0 <= H - CROP);
    return s;
}

/* Caffe's TEST phase: the center window, rounded down ((13-8)/2 = 2,
 * (11-8)/2 = 1), never mirrored.  The mean_value config alone (bgr, 0..255)
 * picks the caffe transform. */
static void test_infer_center_window(void **st)
{
    (void)st;
    char data[600];
    make_db(data, sizeof data, "cfinf", 0, 0, 0);
    mock_host m;
    mock_host_init(&m);
    const char *over[] = {data, "crop=8", "channel_order=bgr", "pixel_range=255",
                          "mean=104,117,123", "std=1,1,1", "shuffle=false", NULL};
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, over, false, &cfg);
    for (int k = 0; k < 2 * NREC; k++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        seen_crop s = check_crop(&cfg, b->data, b->labels[0]);
        assert_int_equal(s.x0, (W - CROP) / 2);
        assert_int_equal(s.y0, (H - CROP) / 2);
        assert_false(s.mirrored);
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
    mock_host_fini(&m);
}

/* Counts the train windows over `draws` items; returns how many mirrored. */
static int train_draws(const char *const *over, int draws, int counts[H - CROP + 1][W - CROP + 1])
{
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, over, true, &cfg);
    int mirrored = 0;
    for (int k = 0; k < draws; k++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        seen_crop s = check_crop(&cfg, b->data, b->labels[0]);
        counts[s.y0][s.x0]++;
        mirrored += s.mirrored;
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
    mock_host_fini(&m);
    return mirrored;
}

/* Caffe's TRAIN phase: every offset 0..H-crop x 0..W-crop about equally
 * often (24 of them, 1200 draws: 50 each expected), mirror half the time
 * by default and never with mirror = false. */
static void test_train_offsets_and_mirror(void **st)
{
    (void)st;
    char data[600];
    make_db(data, sizeof data, "cftrain", 0, 0, 0);
    enum { DRAWS = 1200, CELLS = (H - CROP + 1) * (W - CROP + 1) };
    const char *on[] = {data, "crop=8", "transform=caffe", "channel_order=bgr",
                        "pixel_range=255", "mean=104,117,123", "std=1,1,1", NULL};
    int counts[H - CROP + 1][W - CROP + 1];
    memset(counts, 0, sizeof counts);
    int mirrored = train_draws(on, DRAWS, counts);
    assert_true(mirrored > DRAWS * 2 / 5 && mirrored < DRAWS * 3 / 5);
    for (int y = 0; y <= H - CROP; y++)
        for (int x = 0; x <= W - CROP; x++)
            if (counts[y][x] < DRAWS / CELLS / 2 || counts[y][x] > DRAWS / CELLS * 2)
                fail_msg("offset (%d,%d) taken %d times of %d (expected about %d)", x, y,
                         counts[y][x], DRAWS, DRAWS / CELLS);
    const char *off[] = {data, "crop=8", "transform=caffe", "mirror=false", "channel_order=bgr",
                         "pixel_range=255", "mean=104,117,123", "std=1,1,1", NULL};
    memset(counts, 0, sizeof counts);
    assert_int_equal(train_draws(off, DRAWS / 2, counts), 0);
}

/* A stored 256 x 256 JPEG (an encoded Datum, as convert_imageset
 * --encoded writes) at crop 227: the batch is its decoded pixels at
 * (14, 14) minus the mean, exactly, so nothing was resampled. */
static void test_jpeg_crop_is_exact(void **st)
{
    (void)st;
    enum { S = 256, C = 227 };
    char dir[512], spec[600], jpg_path[600];
    pu_tmpdir(dir, sizeof dir, "cfjpeg");
    uint8_t *rgb = malloc((size_t)S * S * 3);
    for (int i = 0; i < S * S * 3; i++)
        rgb[i] = (uint8_t)((i * 2654435761u) >> 24); /* noise: a resample would show */
    snprintf(jpg_path, sizeof jpg_path, "%s/a.jpg", dir);
    pu_write_jpeg(jpg_path, rgb, S, S);
    size_t len;
    uint8_t *jpg = pu_slurp(jpg_path, &len);
    snprintf(spec, sizeof spec, "data=lmdb:%s/db", dir);
    dlg_lmdb_writer *w;
    assert_int_equal(dlg_lmdb_writer_open(&w, spec + 10, NULL), 0);
    dlg_datum dt;
    dlg_datum_init(&dt);
    dlg_datum_set_encoded(&dt, jpg, len, 0);
    assert_int_equal(dlg_lmdb_writer_put(w, 0, "a.jpg", &dt, NULL), 0);
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
    tjhandle tj = tjInitDecompress();
    assert_int_equal(tjDecompress2(tj, jpg, (unsigned long)len, rgb, S, S * 3, S, TJPF_RGB, 0), 0);
    tjDestroy(tj);
    mock_host m;
    mock_host_init(&m);
    const char *over[] = {spec, "crop=227", "channel_order=bgr", "pixel_range=255",
                          "mean=104,117,123", "std=1,1,1", NULL};
    dlg_loader_config cfg;
    dlg_loader *l = pu_loader_open(&m, over, false, &cfg);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    int off = (S - C) / 2, bad = 0;
    for (int c = 0; c < 3; c++) /* batch plane c is B, G, R: RGB channel 2 - c */
        for (int y = 0; y < C; y++)
            for (int x = 0; x < C; x++)
                bad += pu_at(&cfg, b->data, 0, c, y, x) !=
                       (float)rgb[((size_t)(off + y) * S + off + x) * 3 + 2 - c] - mean_bgr[c];
    assert_int_equal(bad, 0);
    dlg_loader_release(l, b);
    dlg_loader_close(l);
    mock_host_fini(&m);
    free(jpg);
    free(rgb);
}

/* The infer loader over data (a "data=..." line) in Caffe's bgr, 0..255,
 * unshuffled, cropping 8: the record-naming error tests' set-up. */
static dlg_loader *open_bgr(mock_host *m, const char *data, dlg_loader_config *cfg)
{
    mock_host_init(m);
    const char *over[] = {data, "crop=8", "channel_order=bgr", "pixel_range=255",
                          "shuffle=false", NULL};
    return pu_loader_open(m, over, false, cfg);
}

/* An image smaller than the crop: one error naming the record, at the
 * batch that holds it (Caffe's CHECK_GE aborts); skip_corrupt skips it. */
static void test_small_image_names_record(void **st)
{
    (void)st;
    char data[600];
    make_db(data, sizeof data, "cfsmall", 1, CROP + 2, CROP - 1);
    mock_host m;
    dlg_loader_config cfg;
    dlg_loader *l = open_bgr(&m, data, &cfg);
    dlg_batch *b;
    for (int k = 0; k < NREC; k++) { /* the records before it still come */
        assert_int_equal(dlg_loader_next(l, &b), 0);
        dlg_loader_release(l, b);
    }
    assert_int_equal(dlg_loader_next(l, &b), -DLG_EINVAL);
    print_message("%s\n", m.last_error);
    assert_non_null(strstr(m.last_error, "small.png"));
    assert_non_null(strstr(m.last_error, "10x7, smaller than the 8x8 crop"));
    assert_null(strchr(m.last_error, '\n'));
    dlg_loader_close(l);
    const char *skip[] = {data, "crop=8", "transform=caffe", "skip_corrupt=true",
                          "shuffle=false", NULL};
    l = pu_loader_open(&m, skip, false, &cfg);
    for (int k = 0; k < NREC + 1; k++) {
        assert_int_equal(dlg_loader_next(l, &b), 0);
        assert_int_equal(b->labels[0], k % (NREC + 1) == NREC ? 0 : k % (NREC + 1));
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
    mock_host_fini(&m);
}

/* Whether cfg's infer window of a 300 x 200 image is Caffe's crop x crop
 * (torchvision's is a resized window's footprint: 175 x 175 at crop 224). */
static bool caffe_window_of(const dlg_loader_config *cfg)
{
    dlg_crop_window win;
    dlg_ld_window(cfg, 0, 0, 300, 200, &win);
    return win.w == cfg->crop && win.h == cfg->crop;
}

/* The transform's rules: caffe takes no resize (naming why auto chose it),
 * a mean image needs caffe; torchvision keeps today's geometry. */
static void test_transform_rules(void **st)
{
    (void)st;
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    const char *auto_resize[] = {"channel_order=bgr", "pixel_range=255", "resize=256", NULL};
    assert_int_equal(pu_loader_config(&m, auto_resize, false, &cfg), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "resize = 256 with transform = caffe (auto: "
                                         "channel_order = bgr with pixel_range = 255"));
    assert_non_null(strstr(m.last_error, "transform = torchvision"));
    const char *tv[] = {"channel_order=bgr", "pixel_range=255", "resize=256",
                        "transform=torchvision", NULL};
    assert_int_equal(pu_loader_config(&m, tv, false, &cfg), 0);
    assert_false(caffe_window_of(&cfg));
    const char *cf[] = {"transform=caffe", NULL}; /* torchvision's normalisation, Caffe's crop */
    assert_int_equal(pu_loader_config(&m, cf, false, &cfg), 0);
    assert_true(caffe_window_of(&cfg));
    const char *mf[] = {"mean_file=/nonexistent.binaryproto", "pixel_range=255",
                        "transform=torchvision", NULL};
    assert_int_equal(pu_loader_config(&m, mf, false, &cfg), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "mean_file = /nonexistent.binaryproto with transform = "
                                         "torchvision"));
    /* auto: the defaults (rgb, 0..1) and MXNet's rgb 0..255 stay torchvision */
    const char *deflt[] = {NULL};
    assert_int_equal(pu_loader_config(&m, deflt, false, &cfg), 0);
    assert_false(caffe_window_of(&cfg));
    const char *mx[] = {"pixel_range=255", "mean=123.68,116.78,103.94", "std=1,1,1", NULL};
    assert_int_equal(pu_loader_config(&m, mx, false, &cfg), 0);
    assert_false(caffe_window_of(&cfg));
    const char *bgr[] = {"channel_order=bgr", "pixel_range=255", NULL};
    assert_int_equal(pu_loader_config(&m, bgr, false, &cfg), 0);
    assert_true(caffe_window_of(&cfg));
    mock_host_fini(&m);
}

/* A float_data value of record r: pix's, spread past 0..255 with a fraction,
 * so no 8-bit path could carry it (exact in float). */
static float fval(int r, int p, int y, int x) { return (float)pix(r, p, y, x) * 2.5f - 100.25f; }

/* An LMDB of float_data Datums (no data field), C x H x W; record `bad`
 * (-1: none) has one value too few. */
static void make_float_db(char *spec, size_t cap, const char *tag, int c, int bad)
{
    char dir[512];
    pu_tmpdir(dir, sizeof dir, tag);
    snprintf(spec, cap, "data=lmdb:%s/db", dir);
    dlg_lmdb_writer *w;
    assert_int_equal(dlg_lmdb_writer_open(&w, spec + 10, NULL), 0);
    for (int r = 0; r < NREC; r++) {
        float chw[3 * W * H];
        for (int p = 0; p < c; p++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    chw[(p * H + y) * W + x] = fval(r, p, y, x);
        dlg_datum dt;
        dlg_datum_init(&dt);
        dt.has = DLG_DATUM_HAS_CHANNELS | DLG_DATUM_HAS_HEIGHT | DLG_DATUM_HAS_WIDTH |
                 DLG_DATUM_HAS_LABEL;
        dt.channels = c;
        dt.height = H;
        dt.width = W;
        dt.label = r;
        dt.float_data = chw;
        dt.n_float = (size_t)c * H * W - (r == bad);
        char key[32];
        snprintf(key, sizeof key, "f%d.bin", r);
        assert_int_equal(dlg_lmdb_writer_put(w, r, key, &dt, NULL), 0);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
}

/* Whether batch item 0 (record r, c planes) is exactly the float window at
 * (x0, y0), mirrored or not, minus the BGR mean (a gray plane for all three). */
static bool float_window_is(const dlg_loader_config *cfg, const void *data, int r, int c, int x0,
                            int y0, bool mirrored)
{
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < CROP; y++)
            for (int x = 0; x < CROP; x++) {
                int ox = mirrored ? CROP - 1 - x : x;
                float want = fval(r, c == 1 ? 0 : p, y0 + y, x0 + x) - mean_bgr[p];
                if (pu_at(cfg, data, 0, p, y, ox) != want)
                    return false;
            }
    return true;
}

/* Caffe's DataTransformer reads float_data when a Datum has no data bytes:
 * the same window, mean and mirror as for bytes, on the float values as
 * they are.  Known answer: infer takes the center window (2, 1) of every
 * record, value - mean exactly (3 planes, and a gray plane for B, G, R);
 * train's windows are each one of the allowed, mirrored or not. */
static void test_float_data_datums(void **st)
{
    (void)st;
    for (int c = 3; c >= 1; c -= 2) {
        char data[600];
        make_float_db(data, sizeof data, c == 3 ? "cffloat" : "cfgray", c, -1);
        mock_host m;
        mock_host_init(&m);
        const char *over[] = {data, "crop=8", "channel_order=bgr", "pixel_range=255",
                              "mean=104,117,123", "std=1,1,1", "shuffle=false", NULL};
        dlg_loader_config cfg;
        for (int train = 0; train < 2; train++) {
            dlg_loader *l = pu_loader_open(&m, over, train, &cfg);
            int mirrored = 0;
            for (int k = 0; k < 8 * NREC; k++) {
                dlg_batch *b;
                assert_int_equal(dlg_loader_next(l, &b), 0);
                int r = b->labels[0], found = 0;
                for (int y0 = 0; y0 <= H - CROP; y0++)
                    for (int x0 = 0; x0 <= W - CROP; x0++)
                        for (int mi = 0; mi < 2; mi++)
                            if (float_window_is(&cfg, b->data, r, c, x0, y0, mi)) {
                                found++;
                                mirrored += mi;
                                if (!train)
                                    assert_true(x0 == (W - CROP) / 2 && y0 == (H - CROP) / 2 &&
                                                !mi);
                            }
                assert_int_equal(found, 1);
                dlg_loader_release(l, b);
            }
            if (train)
                assert_true(mirrored > 0 && mirrored < 8 * NREC);
            dlg_loader_close(l);
        }
        mock_host_fini(&m);
    }
}

/* A float_data Datum whose value count is not channels*height*width, or
 * one under an 8-bit transform: one line naming the record. */
static void test_float_data_refused(void **st)
{
    (void)st;
    char data[600];
    make_float_db(data, sizeof data, "cffbad", 3, 1);
    mock_host m;
    dlg_loader_config cfg;
    dlg_loader *l = open_bgr(&m, data, &cfg);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    dlg_loader_release(l, b);
    assert_true(dlg_loader_next(l, &b) < 0);
    print_message("%s\n", m.last_error);
    assert_non_null(strstr(m.last_error, "f1.bin"));
    assert_non_null(strstr(m.last_error, "raw Datum has 428 float_data values, but "
                                         "channels*height*width = 3*11*13 = 429"));
    assert_null(strchr(m.last_error, '\n'));
    dlg_loader_close(l);
    const char *tv[] = {data, "crop=8", "transform=torchvision", "shuffle=false", NULL};
    l = pu_loader_open(&m, tv, false, &cfg);
    assert_true(dlg_loader_next(l, &b) < 0);
    assert_non_null(strstr(m.last_error, "f0.bin': a float_data Datum is read with transform = "
                                         "caffe only"));
    dlg_loader_close(l);
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_infer_center_window),
        cmocka_unit_test(test_train_offsets_and_mirror),
        cmocka_unit_test(test_jpeg_crop_is_exact),
        cmocka_unit_test(test_small_image_names_record),
        cmocka_unit_test(test_transform_rules),
        cmocka_unit_test(test_float_data_datums),
        cmocka_unit_test(test_float_data_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
