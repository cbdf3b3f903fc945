/* The loader's Caffe mean_file: known answers against Caffe's
 * DataTransformer -- out[c][y][x'] = v[c][y0+y][x0+x] - mean[c][y0+y][x0+x]
 * with x' = crop-1-x when mirrored, the crop taken from the image as stored
 * (no resize) -- and the combinations Caffe refuses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binaryproto.h"
#include "datum.h"
#include "lmdb_dataset.h"
#include "loader_image.h"
#include "mock_host.h"
#include "tmpdir.h"

enum { S = 10, CROP = 8, N = 2 };

static const dlg_option table[] = {{"batch", DLG_OPT_INT, "1", "1", NULL, NULL, "b", 0},
                                   DLG_LOADER_OPTIONS,
                                   {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};

/* Pixel value (0..255) of image i, BGR plane c, row y, column x. */
static int pix(int i, int c, int y, int x) { return 20 + 70 * c + 7 * y + x + 3 * i; }
/* The mean image: different at every position, with fractions. */
static float mean_at(int c, int y, int x) { return 5.0f * c + 2.5f * y + 0.25f * x; }

typedef struct fixture {
    char dir[64], data[128], mean[128], small[128];
} fixture;

static void make(fixture *fx)
{
    tmpdir_make(fx->dir, "meanf");
    snprintf(fx->data, sizeof fx->data, "data=lmdb:%s/db", fx->dir);
    dlg_lmdb_writer *w;
    char db[100];
    snprintf(db, sizeof db, "%s/db", fx->dir);
    assert_int_equal(dlg_lmdb_writer_open(&w, db, NULL), 0);
    for (int i = 0; i < N; i++) {
        uint8_t chw[3 * S * S];
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < S; y++)
                for (int x = 0; x < S; x++)
                    chw[(c * S + y) * S + x] = (uint8_t)pix(i, c, y, x);
        dlg_datum dt;
        dlg_datum_init(&dt);
        dlg_datum_set_raw(&dt, 3, S, S, chw, sizeof chw, i);
        char key[16];
        snprintf(key, sizeof key, "img%d.png", i);
        assert_int_equal(dlg_lmdb_writer_put(w, (uint64_t)i, key, &dt, NULL), 0);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
    float m[3 * S * S];
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < S; y++)
            for (int x = 0; x < S; x++)
                m[(c * S + y) * S + x] = mean_at(c, y, x);
    snprintf(fx->mean, sizeof fx->mean, "%s/mean.binaryproto", fx->dir);
    assert_int_equal(dlg_blobproto_write(fx->mean, 3, S, S, m, NULL), 0);
    snprintf(fx->small, sizeof fx->small, "%s/m5.binaryproto", fx->dir); /* 9 rows, not 10 */
    assert_int_equal(dlg_blobproto_write(fx->small, 3, S - 1, S, m, NULL), 0);
}

static int config_of(mock_host *m, const char *const *over, bool train, dlg_loader_config *cfg)
{
    dlg_value v[64];
    assert_int_equal(mock_options(table, v, over), 0);
    dlg_loader_config_defaults(cfg);
    int rc = dlg_loader_config_from_opts(cfg, v + 1, NULL, train, &m->host);
    cfg->batch = 1;
    return rc;
}

/* Checks batch item 0 (record rec) against Caffe's formula for the window
 * (x0, y0, mirror); channel_order bgr, std 1. */
static void check_item(const float *out, int rec, int x0, int y0, bool mirror)
{
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < CROP; y++)
            for (int x = 0; x < CROP; x++) {
                int ox = mirror ? CROP - 1 - x : x;
                float want = (float)pix(rec, c, y0 + y, x0 + x) - mean_at(c, y0 + y, x0 + x);
                float got = out[(c * CROP + y) * CROP + ox];
                if (got != want)
                    fail_msg("rec %d c %d y %d x %d (window %d,%d%s): got %g, want %g", rec, c, y,
                             x, x0, y0, mirror ? " mirrored" : "", got, want);
            }
}

/* A Caffe-style loader over the fixture: BGR, 0..255, scale 1, in order. */
static dlg_loader *open_caffe(const fixture *fx, mock_host *m, bool train, dlg_loader_config *cfg)
{
    char mf[160];
    snprintf(mf, sizeof mf, "mean_file=%s", fx->mean);
    const char *over[] = {fx->data, mf, "crop=8", "channel_order=bgr", "pixel_range=255",
                          "std=1,1,1", "shuffle=false", NULL};
    assert_int_equal(config_of(m, over, train, cfg), 0);
    dlg_loader *l;
    if (dlg_loader_open(&l, cfg, &m->host) != 0)
        fail_msg("%s", m->last_error);
    return l;
}

static void test_center_known_answer(void **st)
{
    fixture *fx = *st;
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = open_caffe(fx, &m, false, &cfg);
    for (int k = 0; k < 2 * N; k++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        assert_int_equal(b->labels[0], k % N);
        check_item(b->data, k % N, (S - CROP) / 2, (S - CROP) / 2, false); /* Caffe's TEST crop */
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
    mock_host_fini(&m);
}

/* Train: random offsets and mirror, the mean indexed at the source pixel. */
static void test_train_mirror(void **st)
{
    fixture *fx = *st;
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader *l = open_caffe(fx, &m, true, &cfg);
    int seen[2] = {0, 0}, offsets = 0;
    for (int k = 0; k < 24; k++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        dlg_crop_window win;
        dlg_ld_window(&cfg, (uint64_t)k / N, (uint64_t)k % N, S, S, &win);
        assert_true(win.w == CROP && win.h == CROP && win.x >= 0 && win.x <= S - CROP &&
                    win.y >= 0 && win.y <= S - CROP);
        offsets |= 1 << (int)(win.y * 3 + win.x);
        seen[win.mirror]++;
        check_item(b->data, k % N, (int)win.x, (int)win.y, win.mirror);
        dlg_loader_release(l, b);
    }
    assert_true(seen[0] > 0 && seen[1] > 0);
    assert_true(__builtin_popcount((unsigned)offsets) > 2);
    dlg_loader_close(l);
    mock_host_fini(&m);
}

static void test_refused(void **st)
{
    fixture *fx = *st;
    mock_host m;
    mock_host_init(&m);
    char mf[160], small[160];
    snprintf(mf, sizeof mf, "mean_file=%s", fx->mean);
    snprintf(small, sizeof small, "mean_file=%s", fx->small);
    dlg_loader_config cfg;
    const char *both[] = {fx->data, mf, "pixel_range=255", "mean=104,117,123", NULL};
    assert_int_equal(config_of(&m, both, false, &cfg), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "Caffe refuses mean_value with mean_file"));
    const char *units[] = {fx->data, mf, NULL};
    assert_int_equal(config_of(&m, units, false, &cfg), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "needs pixel_range = 255"));
    const char *rsz[] = {fx->data, mf, "pixel_range=255", "resize=8", NULL};
    assert_int_equal(config_of(&m, rsz, false, &cfg), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "with resize = 8"));
    /* a mean smaller than the crop: at open */
    const char *big[] = {fx->data, mf, "pixel_range=255", "crop=12", NULL};
    assert_int_equal(config_of(&m, big, false, &cfg), 0);
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "mean image is 1 x 3 x 10 x 10"));
    /* a mean of another size than the stored images: the record is named */
    const char *mis[] = {fx->data, small, "pixel_range=255", "crop=8", NULL};
    assert_int_equal(config_of(&m, mis, false, &cfg), 0);
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), 0);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "img0.png"));
    assert_non_null(strstr(m.last_error, "image is 10x10 but mean_file"));
    assert_non_null(strstr(m.last_error, "m5.binaryproto is 10x9"));
    assert_null(strchr(m.last_error, '\n'));
    dlg_loader_close(l);
    /* a corrupt mean file: its byte offset, at open */
    FILE *f = fopen(fx->small, "r+b");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), 12), 0);
    fclose(f);
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), -DLG_ECORRUPT);
    assert_non_null(strstr(m.last_error, "m5.binaryproto: not a valid BlobProto: length runs "
                                         "past the end of the message at byte 9"));
    mock_host_fini(&m);
}

/* mean = imagenet written beside mean_file is refused like any other mean
 * (imagenet was also the table default, so it used to be dropped silently);
 * unset, mean is imagenet without mean_file and none with it. */
static void test_mean_beside_file(void **st)
{
    fixture *fx = *st;
    mock_host m;
    mock_host_init(&m);
    char mf[160];
    snprintf(mf, sizeof mf, "mean_file=%s", fx->mean);
    dlg_loader_config cfg;
    const char *both[] = {fx->data, mf, "pixel_range=255", "mean=imagenet", NULL};
    assert_int_equal(config_of(&m, both, false, &cfg), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "mean = 'imagenet' and mean_file = "));
    assert_non_null(strstr(m.last_error, "give one (Caffe refuses mean_value with mean_file)"));
    assert_null(strchr(m.last_error, '\n'));
    const char *file_only[] = {fx->data, mf, "pixel_range=255", NULL};
    assert_int_equal(config_of(&m, file_only, false, &cfg), 0);
    assert_string_equal(cfg.mean_file, fx->mean);
    assert_float_equal(cfg.mean[0] + cfg.mean[1] + cfg.mean[2], 0, 0);
    const char *unset[] = {fx->data, "pixel_range=255", "channel_order=bgr", NULL};
    assert_int_equal(config_of(&m, unset, false, &cfg), 0);
    assert_null(cfg.mean_file);
    assert_float_equal(cfg.mean[0], 0.406 * 255, 1e-3); /* imagenet, B first */
    assert_float_equal(cfg.mean[2], 0.485 * 255, 1e-3);
    mock_host_fini(&m);
}

static int setup(void **st)
{
    fixture *fx = calloc(1, sizeof *fx);
    make(fx);
    *st = fx;
    return 0;
}

static int teardown(void **st)
{
    fixture *fx = *st;
    tmpdir_rmrf(fx->dir);
    free(fx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_center_known_answer),
        cmocka_unit_test(test_train_mirror),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_mean_beside_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
