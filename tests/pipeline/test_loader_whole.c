/* crop = 0, Caffe's crop_size 0: no crop.  The first record's size is the
 * input size (dlg_loader_input_size, and the batch's); every image is
 * used whole, exactly (raw Datums and JPEG records), mirrored as a whole in
 * train; an image of another size is one error line naming it, after the
 * batches before it; the other transforms, a bad crop and synthetic data
 * are refused in one line. */
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

enum { S = 16, NREC = 3 };
static const float mean_bgr[3] = {104, 117, 123};

#define CAFFE "channel_order=bgr", "pixel_range=255", "mean=104,117,123", "std=1,1,1"

/* Stored value of record r, Datum plane p, row y, column x: unique. */
static int pix(int r, int p, int y, int x) { return (y * S + x + 37 * p + 5 * r) % 256; }

/* NREC raw BGR Datums of S x S, then one of ew x eh when ew > 0; or,
 * with first_w > 0, a first record of first_w x S; first_w < 0: a first
 * record whose pixels are cut short (corrupt). */
static void make_db(char *spec, size_t cap, const char *tag, int ew, int eh, int first_w)
{
    char dir[512];
    pu_tmpdir(dir, sizeof dir, tag);
    snprintf(spec, cap, "data=lmdb:%s/db", dir);
    dlg_lmdb_writer *w;
    assert_int_equal(dlg_lmdb_writer_open(&w, spec + 10, NULL), 0);
    for (int r = 0; r < NREC + (ew > 0); r++) {
        int rw = r < NREC ? (r == 0 && first_w > 0 ? first_w : S) : ew, rh = r < NREC ? S : eh;
        uint8_t chw[3 * 64 * 64];
        for (int p = 0; p < 3; p++)
            for (int y = 0; y < rh; y++)
                for (int x = 0; x < rw; x++)
                    chw[(p * rh + y) * rw + x] = (uint8_t)pix(r, p, y, x);
        dlg_datum dt;
        dlg_datum_init(&dt);
        size_t len = r == 0 && first_w < 0 ? 10 : (size_t)3 * rw * rh;
        dlg_datum_set_raw(&dt, 3, rh, rw, chw, len, r);
        char key[32];
        snprintf(key, sizeof key, r < NREC ? "img%d.png" : "odd.png", r);
        assert_int_equal(dlg_lmdb_writer_put(w, r, key, &dt, NULL), 0);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
}

/* The batch (bgr planes, S x S) is record r as stored minus the mean,
 * exactly; returns whether it is mirrored as a whole. */
static bool check_whole(const dlg_loader_config *opened, const void *data, int r)
{
    dlg_loader_config at = *opened; /* the configuration keeps crop = 0 */
    const dlg_loader_config *cfg = &at;
    at.crop = S;
    bool mirrored = pu_at(cfg, data, 0, 0, 0, 0) + mean_bgr[0] == (float)pix(r, 0, 0, S - 1);
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < S; y++)
            for (int x = 0; x < S; x++) {
                float want = (float)pix(r, p, y, mirrored ? S - 1 - x : x) - mean_bgr[p];
                if (pu_at(cfg, data, 0, p, y, x) != want)
                    fail_msg("record %d plane %d (%d,%d): %g, want %g", r, p, y, x,
                             (double)pu_at(cfg, data, 0, p, y, x), (double)want);
            }
    return mirrored;
}

static void test_whole_images(void **st)
{
    (void)st;
    char data[600];
    make_db(data, sizeof data, "whole", 0, 0, 0);
    for (int pass = 0; pass < 3; pass++) { /* train, infer, train with transform auto */
        const char *over[] = {data, "crop=0", CAFFE, pass == 2 ? "transform=auto" : "transform=caffe",
                              NULL};
        mock_host m;
        mock_host_init(&m);
        dlg_loader_config cfg;
        if (pu_loader_config(&m, over, pass != 1, &cfg) != 0)
            fail_msg("config: %s", m.last_error);
        int size = 0;
        assert_int_equal(dlg_loader_input_size(&cfg, &m.host, &size), 0);
        assert_int_equal(size, S);
        dlg_loader *l;
        if (dlg_loader_open(&l, &cfg, &m.host) != 0)
            fail_msg("open: %s", m.last_error);
        int mirrored = 0;
        for (int k = 0; k < 8 * NREC; k++) {
            dlg_batch *b;
            assert_int_equal(dlg_loader_next(l, &b), 0);
            mirrored += check_whole(&cfg, b->data, b->labels[0]);
            dlg_loader_release(l, b);
        }
        if (pass == 1)
            assert_int_equal(mirrored, 0);
        else
            assert_true(mirrored > 0 && mirrored < 8 * NREC);
        dlg_loader_stats ls;
        dlg_loader_stats_get(l, &ls);
        assert_int_equal(ls.items, 8 * NREC);
        assert_int_equal(ls.crop, S);
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
}

/* An encoded record (RecordIO of JPEGs): the decoded image, whole. */
static void test_whole_jpeg(void **st)
{
    (void)st;
    pu_dataset d;
    pu_make_images(&d, "wholejpg", 1, 1, 24, 24, 3);
    pu_make_rec(&d);
    char data[700];
    snprintf(data, sizeof data, "data=recordio:%s", d.rec);
    const char *over[] = {data, "crop=0", "transform=caffe", "pixel_range=255", "mean=0,0,0",
                          "std=1,1,1", "mirror=false", NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    assert_int_equal(pu_loader_config(&m, over, true, &cfg), 0);
    dlg_loader *l;
    if (dlg_loader_open(&l, &cfg, &m.host) != 0)
        fail_msg("open: %s", m.last_error);
    size_t len;
    uint8_t *jpg = pu_slurp(d.paths[0], &len), rgb[24 * 24 * 3];
    tjhandle tj = tjInitDecompress();
    assert_int_equal(tjDecompress2(tj, jpg, (unsigned long)len, rgb, 24, 72, 24, TJPF_RGB, 0), 0);
    tjDestroy(tj);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    dlg_loader_config at = cfg; /* the batch's size: the record's */
    at.crop = 24;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 24; y++)
            for (int x = 0; x < 24; x++)
                assert_true(pu_at(&at, b->data, 0, c, y, x) == rgb[(y * 24 + x) * 3 + c]);
    dlg_loader_release(l, b);
    dlg_loader_close(l);
    free(jpg);
    mock_host_fini(&m);
}

/* A record of another size than the first: the batches before it, then one
 * line naming it and both sizes. */
static void test_other_size_is_an_error(void **st)
{
    (void)st;
    char data[600];
    make_db(data, sizeof data, "wholebad", 20, 20, 0);
    const char *over[] = {data, "crop=0", "transform=caffe", CAFFE, "shuffle=false", NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    assert_int_equal(pu_loader_config(&m, over, false, &cfg), 0);
    dlg_loader *l;
    if (dlg_loader_open(&l, &cfg, &m.host) != 0)
        fail_msg("open: %s", m.last_error);
    for (int k = 0; k < NREC; k++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        check_whole(&cfg, b->data, k);
        dlg_loader_release(l, b);
    }
    dlg_batch *b;
    assert_true(dlg_loader_next(l, &b) < 0);
    if (!strstr(m.last_error, "odd.png") || !strstr(m.last_error, "image is 20x20 but crop = 0") ||
        !strstr(m.last_error, "16x16") || strchr(m.last_error, '\n'))
        fail_msg("error: %s", m.last_error);
    dlg_loader_close(l);
    mock_host_fini(&m);
}

/* A corrupt first record: without skip_corrupt one line naming it (no
 * size to take); with skip_corrupt the size is the first readable
 * record's, as the stream skips to that record, and batches flow. */
static void test_corrupt_first_record(void **st)
{
    (void)st;
    char data[600];
    make_db(data, sizeof data, "wholecorrupt", 0, 0, -1);
    for (int skip = 0; skip < 2; skip++) {
        const char *over[] = {data, "crop=0", "transform=caffe", CAFFE, "shuffle=false",
                              skip ? "skip_corrupt=true" : "skip_corrupt=false", NULL};
        mock_host m;
        mock_host_init(&m);
        dlg_loader_config cfg;
        assert_int_equal(pu_loader_config(&m, over, false, &cfg), 0);
        int size = -1;
        dlg_loader *l = NULL;
        if (!skip) {
            assert_true(dlg_loader_input_size(&cfg, &m.host, &size) < 0);
            assert_true(dlg_loader_open(&l, &cfg, &m.host) < 0);
            if (!strstr(m.last_error, "img0.png") || !strstr(m.last_error, "could not be read") ||
                m.errors != 2 || strchr(m.last_error, '\n'))
                fail_msg("%d error(s), last: %s", m.errors, m.last_error);
            mock_host_fini(&m);
            continue;
        }
        if (dlg_loader_input_size(&cfg, &m.host, &size) != 0)
            fail_msg("input size: %s", m.last_error);
        assert_int_equal(size, S);
        if (dlg_loader_open(&l, &cfg, &m.host) != 0)
            fail_msg("open: %s", m.last_error);
        for (int k = 0; k < 2 * NREC; k++) {
            dlg_batch *b;
            assert_int_equal(dlg_loader_next(l, &b), 0);
            assert_int_equal(b->labels[0], k % NREC == 0 ? 1 : k % NREC); /* 0 -> 1 */
            check_whole(&cfg, b->data, b->labels[0]);
            dlg_loader_release(l, b);
        }
        dlg_loader_stats ls;
        dlg_loader_stats_get(l, &ls);
        assert_int_equal(ls.crop, S);
        assert_int_equal(ls.skipped, 2);
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
}

/* Refusals, each one line: a non-square first record (at open and in
 * dlg_loader_input_size), the other transforms, crop 1..7, synthetic. */
static void test_refusals(void **st)
{
    (void)st;
    char data[600];
    make_db(data, sizeof data, "wholerect", 0, 0, 12);
    const char *rect[] = {data, "crop=0", "transform=caffe", CAFFE, NULL};
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    assert_int_equal(pu_loader_config(&m, rect, true, &cfg), 0);
    int size = -1;
    assert_true(dlg_loader_input_size(&cfg, &m.host, &size) < 0);
    assert_non_null(strstr(m.last_error, "which is 12x16"));
    dlg_loader *l;
    assert_true(dlg_loader_open(&l, &cfg, &m.host) < 0);
    if (!strstr(m.last_error, "img0.png") || !strstr(m.last_error, "which is 12x16"))
        fail_msg("error: %s", m.last_error);
    mock_host_fini(&m);
    static const struct {
        const char *over[3];
        const char *want;
    } k[] = {
        {{"crop=0", "transform=torchvision"}, "crop = 0 (no crop, Caffe's crop_size 0) needs"},
        {{"crop=0", "transform=mxnet"}, "needs transform = caffe (transform is mxnet)"},
        {{"crop=0"}, "needs transform = caffe (transform is torchvision)"},
        {{"crop=5", "transform=caffe"}, "crop = 5: at least 8"},
        {{"crop=0", "transform=caffe", "data=synthetic"}, "data = synthetic has none"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        const char *over[5] = {data};
        for (int j = 0; j < 3 && k[i].over[j]; j++)
            over[j + 1] = k[i].over[j];
        mock_host_init(&m);
        assert_int_not_equal(pu_loader_config(&m, over, true, &cfg), 0);
        if (!strstr(m.last_error, k[i].want) || m.errors != 1)
            fail_msg("case %zu: '%s', want '%s'", i, m.last_error, k[i].want);
        mock_host_fini(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_images),
        cmocka_unit_test(test_whole_jpeg),
        cmocka_unit_test(test_other_size_is_an_error),
        cmocka_unit_test(test_corrupt_first_record),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
