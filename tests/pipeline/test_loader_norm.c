/* Normalisation options: channel_order (rgb|bgr), pixel_range (1|255) and
 * mean/std in those units, from the option fragment to the batch values.
 * A Caffe net's preprocessing (BGR, mean 104,117,123 in 0..255, scale 1)
 * must come out as v - mean exactly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datum.h"
#include "lmdb_dataset.h"
#include "pipe_util.h"

enum { W = 40, H = 30, B_VAL = 114, G_VAL = 137, R_VAL = 153 };

static const dlg_option table[] = {{"batch", DLG_OPT_INT, "1", "1", NULL, NULL, "b", 0},
                                   DLG_LOADER_OPTIONS,
                                   {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};

/* A one-record LMDB of a raw BGR Datum with constant channels. */
static void make_flat_db(char *spec, size_t cap)
{
    char dir[512];
    pu_tmpdir(dir, sizeof dir, "norm");
    snprintf(spec, cap, "lmdb:%s/db", dir);
    uint8_t chw[3 * W * H];
    memset(chw, B_VAL, W * H);
    memset(chw + W * H, G_VAL, W * H);
    memset(chw + 2 * W * H, R_VAL, W * H);
    dlg_lmdb_writer *w;
    assert_int_equal(dlg_lmdb_writer_open(&w, spec + 5, NULL), 0);
    dlg_datum dt;
    dlg_datum_init(&dt);
    dlg_datum_set_raw(&dt, 3, H, W, chw, sizeof chw, 0);
    assert_int_equal(dlg_lmdb_writer_put(w, 0, "flat.png", &dt, NULL), 0);
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
}

/* The config the options give, as a workload gets it. */
static int config_of(mock_host *m, const char *const *over, dlg_loader_config *cfg)
{
    dlg_value v[64];
    assert_int_equal(mock_options(table, v, over), 0);
    dlg_loader_config_defaults(cfg);
    int rc = dlg_loader_config_from_opts(cfg, v + 1, NULL, false, &m->host);
    cfg->batch = 1;
    return rc;
}

/* Channel c of the centre pixel of the first batch. */
static void first_pixel(mock_host *m, const dlg_loader_config *cfg, float out[3])
{
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, cfg, &m->host), 0);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    for (int c = 0; c < 3; c++)
        out[c] = pu_at(cfg, b->data, 0, c, 10, 10);
    dlg_loader_release(l, b);
    dlg_loader_close(l);
}

static void test_caffe_known_answer(void **st)
{
    (void)st;
    char spec[700], data[720];
    make_flat_db(spec, sizeof spec);
    snprintf(data, sizeof data, "data=%s", spec);
    mock_host m;
    mock_host_init(&m);
    const char *layouts[][2] = {{"layout=nchw", "input_dtype=fp32"},
                                {"layout=nhwc", "input_dtype=fp16"}};
    for (size_t k = 0; k < 2; k++) {
        const char *caffe[] = {data, "crop=20", "channel_order=bgr", /* Caffe's crop */
                               "pixel_range=255", "mean=104,117,123", "std=1,1,1",
                               layouts[k][0], layouts[k][1], NULL};
        dlg_loader_config cfg;
        assert_int_equal(config_of(&m, caffe, &cfg), 0);
        float px[3];
        first_pixel(&m, &cfg, px);
        /* B, G, R minus Caffe's means */
        assert_float_equal(px[0], B_VAL - 104, 1e-3);
        assert_float_equal(px[1], G_VAL - 117, 1e-3);
        assert_float_equal(px[2], R_VAL - 123, 1e-3);
    }
    /* the defaults are unchanged: RGB, torchvision's 0..1 ImageNet statistics */
    const char *deflt[] = {data, "crop=20", "resize=20", NULL};
    dlg_loader_config cfg;
    assert_int_equal(config_of(&m, deflt, &cfg), 0);
    float px[3];
    first_pixel(&m, &cfg, px);
    assert_float_equal(px[0], (R_VAL / 255.0 - 0.485) / 0.229, 1e-4);
    assert_float_equal(px[2], (B_VAL / 255.0 - 0.406) / 0.225, 1e-4);
    /* imagenet in 0..255 units and BGR order is the same normalisation */
    const char *bgr255[] = {data, "crop=20", "channel_order=bgr", "pixel_range=255", NULL};
    assert_int_equal(config_of(&m, bgr255, &cfg), 0);
    float q[3];
    first_pixel(&m, &cfg, q);
    assert_float_equal(q[0], px[2], 1e-4);
    assert_float_equal(q[2], px[0], 1e-4);
    mock_host_fini(&m);
}

static void test_norm_options(void **st)
{
    (void)st;
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    const char *bgr[] = {"channel_order=bgr", "pixel_range=255", NULL};
    assert_int_equal(config_of(&m, bgr, &cfg), 0);
    assert_int_equal(cfg.order, DLG_BGR);
    assert_int_equal(cfg.pixel_range, 255);
    assert_float_equal(cfg.mean[0], 0.406 * 255, 1e-3); /* imagenet, B first */
    assert_float_equal(cfg.std[2], 0.229 * 255, 1e-3);
    /* the bounds follow pixel_range; 0..1 means under 255 are a units mix-up
     * that would leave the inputs un-centred */
    const char *bad[][3] = {
        {"pixel_range=255", "mean=0.485,0.456,0.406", "mean = '0.485,0.456,0.406' with "
                                                      "pixel_range = 255: these look like 0..1"},
        {"pixel_range=255", "mean=104,117,256", "expected three numbers in 0..255"},
        {"pixel_range=255", "std=1,0,1", "std = '1,0,1': expected three numbers in (0, 255]"},
        {"pixel_range=1", "mean=104,117,123", "need pixel_range = 255"},
        {"pixel_range=1", "mean=image", "mean = 'image'"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        const char *over[] = {bad[k][0], bad[k][1], NULL};
        assert_int_equal(config_of(&m, over, &cfg), -DLG_EINVAL);
        assert_non_null(strstr(m.last_error, bad[k][2]));
    }
    const char *ok[] = {"pixel_range=255", "mean=0,0,0", "std=1,1,1", NULL}; /* raw 0..255 */
    assert_int_equal(config_of(&m, ok, &cfg), 0);
    /* a C caller's config is checked too */
    dlg_loader_config_defaults(&cfg);
    cfg.data = "synthetic:4";
    cfg.pixel_range = 0;
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "pixel_range 0"));
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caffe_known_answer),
        cmocka_unit_test(test_norm_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
