/* Loader output against the independent reference in pipe_util.c: center
 * crop (infer), random crop + mirror (train), the DCT-scaled path, layouts
 * and dtypes, recordio/lmdb/files giving the same batches, synthetic. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "datum.h"
#include "jpeg.h"
#include "lmdb_dataset.h"
#include "loader_image.h"
#include "pipe_util.h"
#include "recordio.h"

/* Images mirrored among the first n windows of a config (over: its
 * options) in mode train or infer. */
static int mirrored_of(const char *const *over, bool train, int n)
{
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    assert_int_equal(pu_loader_config(&m, over, train, &cfg), 0);
    int k = 0;
    for (int i = 0; i < n; i++) {
        dlg_crop_window w;
        dlg_ld_window(&cfg, 0, (uint64_t)i, 300, 200, &w);
        k += w.mirror;
    }
    mock_host_fini(&m);
    return k;
}

/* mirror acts with augment random, in infer too, as augment's help says
 * (its help once said "infer never mirrors"); augment center never does. */
static void test_mirror_follows_augment(void **st)
{
    (void)st;
    const char *rnd[] = {"augment=random", NULL}, *rnd_off[] = {"augment=random", "mirror=false", NULL},
               *ctr[] = {"augment=center", NULL}, *none[] = {NULL},
               *caffe[] = {"augment=random", "transform=caffe", "crop=100", NULL};
    int n = 400;
    assert_true(abs(mirrored_of(rnd, false, n) - n / 2) < n / 8);
    assert_true(abs(mirrored_of(caffe, false, n) - n / 2) < n / 8);
    assert_true(abs(mirrored_of(none, true, n) - n / 2) < n / 8);
    assert_int_equal(mirrored_of(none, false, n), 0);
    assert_int_equal(mirrored_of(ctr, true, n), 0);
    assert_int_equal(mirrored_of(rnd_off, false, n), 0);
    static const dlg_option table[] = {DLG_LOADER_OPTIONS, {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};
    for (const dlg_option *o = table; o->name; o++)
        if (strcmp(o->name, "mirror") == 0) {
            assert_null(strstr(o->help, "infer never"));
            assert_non_null(strstr(o->help, "augment random"));
        }
}

static void cfg_small(dlg_loader_config *cfg, const char *data, int batch, bool train)
{
    dlg_loader_config_defaults(cfg);
    cfg->data = data;
    cfg->batch = batch;
    cfg->crop = 32;
    cfg->resize = 40;
    cfg->train = train;
    cfg->shuffle = false;
    cfg->threads = 2;
    cfg->seed = 5;
}

/* pu_make_images' n JPEGs (tag, classes, w x h, seed) and their "files:"
 * data spec in spec. */
static void files_dataset(pu_dataset *d, char *spec, size_t cap, const char *tag, int n,
                          int classes, int w, int h, uint64_t seed)
{
    pu_make_images(d, tag, n, classes, w, h, seed);
    snprintf(spec, cap, "files:%s", d->list);
}

/* The loader of cfg, which must open. */
static dlg_loader *open_ok(const dlg_loader_config *cfg, mock_host *m)
{
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, cfg, &m->host), 0);
    return l;
}

/* Compares image i of a batch to the reference; returns max abs diff. */
static double diff_ref(const dlg_loader_config *cfg, const dlg_batch *b, int i, const char *path,
                       double x, double y, double w, double h, bool mirror, double *mean)
{
    size_t len;
    uint8_t *jpg = pu_slurp(path, &len);
    int s = cfg->crop;
    float *ref = malloc(sizeof(float) * 3 * s * s);
    pu_reference(cfg, jpg, len, x, y, w, h, mirror, ref);
    double mx = 0, sum = 0;
    for (int c = 0; c < 3; c++)
        for (int yy = 0; yy < s; yy++)
            for (int xx = 0; xx < s; xx++) {
                double d = fabs(pu_at(cfg, b->data, i, c, yy, xx) - ref[((size_t)c * s + yy) * s + xx]);
                mx = d > mx ? d : mx;
                sum += d;
            }
    if (mean)
        *mean = sum / (3.0 * s * s);
    free(ref);
    free(jpg);
    return mx;
}

static void test_infer_matches_reference(void **st)
{
    (void)st;
    pu_dataset d;
    char spec[700];
    files_dataset(&d, spec, sizeof spec, "ref", 6, 3, 72, 56, 11);
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    cfg_small(&cfg, spec, 3, false);
    dlg_loader *l = open_ok(&cfg, &m);
    for (int bi = 0; bi < 2; bi++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        assert_int_equal(b->seq, (uint64_t)bi);
        for (int i = 0; i < 3; i++) {
            int k = bi * 3 + i;
            assert_int_equal(b->labels[i], d.labels[k]);
            double x, y, w, h;
            pu_center_window(d.w[k], d.h[k], 40, 32, &x, &y, &w, &h);
            double mx = diff_ref(&cfg, b, i, d.paths[k], x, y, w, h, false, NULL);
            assert_true(mx < 1e-4); /* float vs double: same arithmetic otherwise */
        }
        dlg_loader_release(l, b);
    }
    dlg_loader_stats s;
    dlg_loader_stats_get(l, &s);
    assert_int_equal(s.items, 6);
    assert_int_equal(s.dataset_items, 6);
    assert_string_equal(s.source, "files");
    assert_int_equal(s.nclasses, 3);
    uint64_t total = 0;
    for (int k = 0; k < 6; k++) {
        size_t len;
        free(pu_slurp(d.paths[k], &len));
        total += len;
    }
    assert_int_equal(s.bytes_read, total); /* one epoch, no read amplification */
    dlg_loader_close(l);
    mock_host_fini(&m);
}

static void test_train_matches_reference(void **st)
{
    (void)st;
    pu_dataset d;
    char spec[700]; /* windows < 64: no DCT scaling */
    files_dataset(&d, spec, sizeof spec, "train", 8, 2, 48, 40, 12);
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    cfg_small(&cfg, spec, 4, true);
    cfg.shuffle = true;
    dlg_loader *l = open_ok(&cfg, &m);
    int mirrored = 0;
    for (uint64_t bi = 0; bi < 4; bi++) { /* two epochs */
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        assert_int_equal(b->epoch, (uint32_t)(bi / 2));
        for (int i = 0; i < 4; i++) {
            uint64_t s = bi * 4 + (uint64_t)i, epoch = s / 8, pos = s % 8;
            int k = (int)dlg_ld_permute(pos, 8, cfg.seed, epoch, true);
            dlg_crop_window win;
            dlg_ld_window(&cfg, epoch, pos, d.w[k], d.h[k], &win);
            mirrored += win.mirror;
            assert_int_equal(b->labels[i], d.labels[k]);
            double mx = diff_ref(&cfg, b, i, d.paths[k], win.x, win.y, win.w, win.h, win.mirror, NULL);
            assert_true(mx < 1e-4);
        }
        dlg_loader_release(l, b);
    }
    assert_true(mirrored > 0 && mirrored < 16);
    dlg_loader_close(l);
    mock_host_fini(&m);
}

/* Caffe's preprocessing (BGR, 0..255 means, scale 1/58) with torchvision's
 * random crops and mirrors (auto would take Caffe's crop for bgr 0..255),
 * in both store paths (NCHW fp32, and NHWC), against the reference computed
 * in the same channel order and units. */
static void test_bgr_255_matches_reference(void **st)
{
    (void)st;
    pu_dataset d;
    char spec[700];
    files_dataset(&d, spec, sizeof spec, "bgr", 4, 2, 48, 40, 14);
    mock_host m;
    mock_host_init(&m);
    for (int layout = 0; layout < 2; layout++) {
        dlg_loader_config cfg;
        cfg_small(&cfg, spec, 4, true);
        cfg.order = DLG_BGR;
        cfg.pixel_range = 255;
        cfg.transform = DLG_TRANSFORM_TORCHVISION;
        const float mean[3] = {104, 117, 123}, std[3] = {58, 58, 58};
        memcpy(cfg.mean, mean, sizeof mean);
        memcpy(cfg.std, std, sizeof std);
        cfg.layout = layout ? DLG_LAYOUT_NHWC : DLG_LAYOUT_NCHW;
        dlg_loader *l = open_ok(&cfg, &m);
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        int mirrored = 0;
        for (int i = 0; i < 4; i++) {
            dlg_crop_window win;
            dlg_ld_window(&cfg, 0, (uint64_t)i, d.w[i], d.h[i], &win);
            mirrored += win.mirror;
            double mx = diff_ref(&cfg, b, i, d.paths[i], win.x, win.y, win.w, win.h, win.mirror,
                                 NULL);
            assert_true(mx < 1e-4);
        }
        assert_true(mirrored > 0);
        dlg_loader_release(l, b);
        dlg_loader_close(l);
    }
    mock_host_fini(&m);
}

/* Windows at most half the crop's size take the DCT-scaled decode path. */
static void test_scaled_decode_path(void **st)
{
    (void)st;
    pu_dataset d;
    char spec[700];
    files_dataset(&d, spec, sizeof spec, "big", 2, 2, 400, 300, 13);
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    cfg_small(&cfg, spec, 2, false);
    dlg_loader *l = open_ok(&cfg, &m);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    for (int k = 0; k < 2; k++) {
        double x, y, w, h, mean;
        pu_center_window(d.w[k], d.h[k], 40, 32, &x, &y, &w, &h);
        dlg_jpeg_scale sc = dlg_jpeg_pick_scale(w, h, 32, 32);
        assert_true(sc.num * 2 <= sc.denom); /* really scaled */
        double mx = diff_ref(&cfg, b, k, d.paths[k], x, y, w, h, false, &mean);
        print_message("scaled %d/%d: max %.3f mean %.4f (normalised units)\n", sc.num, sc.denom,
                      mx, mean);
        assert_true(mean < 0.05); /* ~2.5 levels of 255 */
        assert_true(mx < 2.0); /* single noisy pixels differ most */
    }
    dlg_loader_release(l, b);
    dlg_loader_close(l);
    mock_host_fini(&m);
}

/* jpeg_scale = full decodes the same large images at full size: within 1
 * level of 255 of the full-decode reference (torchvision/PIL), where the
 * default's DCT-scaled decode is not. */
static void test_full_decode_matches(void **st)
{
    (void)st;
    pu_dataset d;
    char spec[700];
    files_dataset(&d, spec, sizeof spec, "full", 2, 2, 400, 300, 13);
    double level = 1.0 / (255 * 0.229); /* one level in the widest channel's units */
    for (int full = 0; full < 2; full++) {
        mock_host m;
        mock_host_init(&m);
        char data[720];
        snprintf(data, sizeof data, "data=%s", spec);
        const char *over[] = {data, "crop=32", "resize=40", "shuffle=false", full ? "jpeg_scale=full" : NULL,
                              NULL};
        dlg_loader_config cfg;
        assert_int_equal(pu_loader_config(&m, over, false, &cfg), 0);
        assert_int_equal(cfg.jpeg_full, full);
        cfg.batch = 2;
        dlg_loader *l = open_ok(&cfg, &m);
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        double worst = 0;
        for (int k = 0; k < 2; k++) {
            double x, y, w, h, mean;
            pu_center_window(d.w[k], d.h[k], 40, 32, &x, &y, &w, &h);
            double mx = diff_ref(&cfg, b, k, d.paths[k], x, y, w, h, false, &mean);
            print_message("jpeg_scale %s: max %.2f mean %.3f levels\n", full ? "full" : "auto", mx / level,
                          mean / level);
            worst = mx > worst ? mx : worst;
        }
        if (full)
            assert_true(worst < level);
        else
            assert_true(worst > level);
        dlg_loader_release(l, b);
        dlg_loader_close(l);
        mock_host_fini(&m);
    }
}

/* A 1001x801 image decoded at 1/8 is 126x101, not 125.125x100.125: the
 * window must map into it by 1/8, not by 126/1001 (which put the far side
 * of the window 6 source pixels off).  Triangle-wave ramps in R (along x)
 * and G (along y) show any shift; the scaled decode itself is near exact
 * on them. */
static void test_scaled_decode_odd_size(void **st)
{
    (void)st;
    pu_dataset d;
    pu_make_images(&d, "odd", 1, 1, 40, 30, 3);
    int W = 1001, H = 801;
    uint8_t *rgb = malloc((size_t)W * H * 3);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int tx = x * 2 % 400, ty = y * 2 % 400;
            uint8_t *p = rgb + ((size_t)y * W + x) * 3;
            p[0] = (uint8_t)(tx < 200 ? tx + 20 : 420 - tx);
            p[1] = (uint8_t)(ty < 200 ? ty + 20 : 420 - ty);
            p[2] = 128;
        }
    pu_write_jpeg(d.paths[0], rgb, W, H);
    free(rgb);
    char spec[700];
    snprintf(spec, sizeof spec, "files:%s", d.list);
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    cfg_small(&cfg, spec, 1, false);
    cfg.resize = 32; /* the window is the central 801x801 */
    dlg_loader *l = open_ok(&cfg, &m);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    double x, y, w, h, mean;
    pu_center_window(W, H, 32, 32, &x, &y, &w, &h);
    dlg_jpeg_scale sc = dlg_jpeg_pick_scale(w, h, 32, 32);
    assert_int_equal(sc.num * 8, sc.denom); /* 1/8 */
    double mx = diff_ref(&cfg, b, 0, d.paths[0], x, y, w, h, false, &mean);
    print_message("1/8 of 1001x801: max %.4f mean %.4f (normalised units)\n", mx, mean);
    assert_true(mean < 0.02); /* was 0.07 */
    assert_true(mx < 0.1);    /* was 0.23 */
    dlg_loader_release(l, b);
    dlg_loader_close(l);
    mock_host_fini(&m);
}

/* Returns a malloc'd copy of the first `nb` batches' data and labels. */
static uint8_t *run(mock_host *m, dlg_loader_config *cfg, int nb, size_t *bytes)
{
    dlg_loader *l;
    int rc = dlg_loader_open(&l, cfg, &m->host);
    if (rc != 0)
        fail_msg("open %s: %s", cfg->data, m->last_error);
    size_t per = dlg_loader_batch_bytes(cfg), lab = sizeof(int32_t) * (size_t)cfg->batch;
    uint8_t *out = malloc((per + lab) * (size_t)nb);
    for (int i = 0; i < nb; i++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        memcpy(out + (per + lab) * (size_t)i, b->data, per);
        memcpy(out + (per + lab) * (size_t)i + per, b->labels, lab);
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
    *bytes = (per + lab) * (size_t)nb;
    return out;
}

static void test_formats_agree(void **st)
{
    (void)st;
    pu_dataset d;
    pu_make_images(&d, "fmt", 10, 3, 64, 48, 14);
    pu_make_rec(&d);
    /* LMDB with the same JPEGs (encoded Datums) in list order */
    char db[700];
    snprintf(db, sizeof db, "%s/lmdb", d.dir);
    dlg_lmdb_writer *w;
    assert_int_equal(dlg_lmdb_writer_open(&w, db, NULL), 0);
    for (int i = 0; i < d.n; i++) {
        size_t len;
        uint8_t *img = pu_slurp(d.paths[i], &len);
        dlg_datum dt;
        dlg_datum_init(&dt);
        dlg_datum_set_encoded(&dt, img, len, d.labels[i]);
        assert_int_equal(dlg_lmdb_writer_put(w, i, d.paths[i] + strlen(d.dir) + 1, &dt, NULL), 0);
        free(img);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
    char s_files[700], s_rec[700], s_rec_noidx[700], s_lmdb[700];
    snprintf(s_files, sizeof s_files, "files:%s", d.list);
    snprintf(s_rec, sizeof s_rec, "recordio:%s", d.rec);
    snprintf(s_lmdb, sizeof s_lmdb, "lmdb:%s", db);
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    cfg_small(&cfg, s_files, 4, true);
    cfg.shuffle = true;
    size_t n1, n2, n3, n4;
    uint8_t *a = run(&m, &cfg, 5, &n1); /* 20 items: two epochs */
    cfg.data = s_rec;
    uint8_t *b = run(&m, &cfg, 5, &n2);
    cfg.data = s_lmdb;
    uint8_t *c = run(&m, &cfg, 5, &n3);
    /* the .idx is optional: without it the .rec is scanned */
    char idx[700];
    snprintf(idx, sizeof idx, "%s/data.idx", d.dir);
    assert_int_equal(unlink(idx), 0);
    snprintf(s_rec_noidx, sizeof s_rec_noidx, "recordio:%s", d.rec);
    cfg.data = s_rec_noidx;
    uint8_t *e = run(&m, &cfg, 5, &n4);
    assert_memory_equal(a, b, n1);
    assert_memory_equal(a, c, n1);
    assert_memory_equal(a, e, n1);
    /* NHWC fp16 holds the same values as NCHW fp32 */
    cfg.data = s_files;
    cfg.layout = DLG_LAYOUT_NHWC;
    cfg.dtype = DLG_LOADER_FP16;
    dlg_loader *l = open_ok(&cfg, &m);
    dlg_batch *bt;
    assert_int_equal(dlg_loader_next(l, &bt), 0);
    dlg_loader_config ref = cfg;
    ref.layout = DLG_LAYOUT_NCHW;
    ref.dtype = DLG_LOADER_FP32;
    for (int i = 0; i < 4; i++)
        for (int ch = 0; ch < 3; ch++)
            for (int y = 0; y < 32; y += 3)
                for (int x = 0; x < 32; x += 5) {
                    float v32 = pu_at(&ref, a, i, ch, y, x), v16 = pu_at(&cfg, bt->data, i, ch, y, x);
                    assert_true(fabsf(v32 - v16) <= fabsf(v32) * 1e-3f + 1e-4f);
                }
    dlg_loader_release(l, bt);
    dlg_loader_close(l);
    free(a);
    free(b);
    free(c);
    free(e);
    mock_host_fini(&m);
}

static void test_raw_datum_lmdb(void **st)
{
    (void)st;
    /* a raw (not encoded) BGR Datum: a 40x30 image whose R=x*6, G=y*8, B=77 */
    char dir[512], db[600];
    pu_tmpdir(dir, sizeof dir, "raw");
    snprintf(db, sizeof db, "%s/db", dir);
    int W = 40, H = 30;
    uint8_t *chw = malloc((size_t)3 * W * H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            chw[(0 * H + y) * W + x] = 77;
            chw[(1 * H + y) * W + x] = (uint8_t)(y * 8);
            chw[(2 * H + y) * W + x] = (uint8_t)(x * 6);
        }
    dlg_lmdb_writer *w;
    assert_int_equal(dlg_lmdb_writer_open(&w, db, NULL), 0);
    dlg_datum dt;
    dlg_datum_init(&dt);
    dlg_datum_set_raw(&dt, 3, H, W, chw, (size_t)3 * W * H, 4);
    assert_int_equal(dlg_lmdb_writer_put(w, 0, "a.png", &dt, NULL), 0);
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
    char spec[700];
    snprintf(spec, sizeof spec, "lmdb:%s", db);
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    cfg_small(&cfg, spec, 1, false);
    cfg.crop = 20;
    cfg.resize = 20; /* 40x30 -> 26x20, center 20x20 from x=3 */
    dlg_loader *l = open_ok(&cfg, &m);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    assert_int_equal(b->labels[0], 4);
    /* B channel is constant 77; G (rows) and R (columns) increase */
    float bl = pu_at(&cfg, b->data, 0, 2, 10, 10);
    assert_true(fabsf(bl - (77 / 255.0f - cfg.mean[2]) / cfg.std[2]) < 1e-4f);
    assert_true(pu_at(&cfg, b->data, 0, 0, 5, 15) > pu_at(&cfg, b->data, 0, 0, 5, 4));
    assert_true(pu_at(&cfg, b->data, 0, 1, 15, 5) > pu_at(&cfg, b->data, 0, 1, 4, 5));
    dlg_loader_release(l, b);
    dlg_loader_close(l);
    mock_host_fini(&m);
    free(chw);
}

/* Records as MXNet's tools write them: payloads holding the magic at
 * aligned offsets (split into cflag 1/2/3 parts), lengths that are not a
 * multiple of 4, multi-label headers (flag > 0); an .idx in reverse order,
 * then none.  decode = false hands back each image's bytes exactly. */
static void test_mxnet_records(void **st)
{
    (void)st;
    enum { N = 6 };
    char dir[512], rec[600], idx[600], spec[700];
    pu_tmpdir(dir, sizeof dir, "mxrec");
    snprintf(rec, sizeof rec, "%s/m.rec", dir);
    snprintf(idx, sizeof idx, "%s/m.idx", dir);
    FILE *rf = fopen(rec, "wb"), *xf = fopen(idx, "w");
    assert_true(rf && xf);
    fclose(rf);
    int fd = open(rec, O_WRONLY);
    dlg_rec_writer *w;
    dlg_data_err err = {0};
    assert_int_equal(dlg_rec_writer_open_fd(&w, fd, rec, &err), 0);
    uint8_t img[N][64], payload[256];
    size_t ilen[N];
    uint64_t offs[N];
    const uint32_t magic = 0xced7230aU;
    for (int i = 0; i < N; i++) {
        ilen[i] = 41 + (size_t)i; /* odd lengths and every padding */
        for (size_t b = 0; b < ilen[i]; b++)
            img[i][b] = (uint8_t)(i * 31 + b);
        float labels[3] = {(float)(i + 10), 0.5f, 2.0f};
        dlg_im2rec_header h = {i % 2 ? 3 : 0, (float)(i + 10), (uint64_t)i, 0};
        size_t hl = dlg_im2rec_size(h.flag, 0);
        for (size_t at = 4; at + 4 <= ilen[i]; at += 12 + 4 * (size_t)i) /* payload-aligned */
            memcpy(img[i] + at + (4 - hl % 4) % 4, &magic, 4);
        int64_t plen = dlg_im2rec_pack(payload, sizeof payload, &h, h.flag ? labels : NULL, img[i],
                                       ilen[i], &err);
        assert_true(plen > 0);
        assert_int_equal(dlg_rec_write(w, payload, (size_t)plen, &offs[i], &err), 0);
    }
    assert_true(dlg_rec_writer_splits(w) >= N);
    assert_int_equal(dlg_rec_writer_close(w, &err), 0);
    close(fd);
    for (int i = N - 1; i >= 0; i--)
        fprintf(xf, "%d\t%llu\n", i, (unsigned long long)offs[i]);
    fclose(xf);
    snprintf(spec, sizeof spec, "recordio:%s", rec);
    mock_host m;
    mock_host_init(&m);
    for (int pass = 0; pass < 2; pass++) { /* with the reversed .idx, then scanning */
        dlg_loader_config cfg;
        cfg_small(&cfg, spec, N, false);
        cfg.decode = false;
        dlg_loader *l = open_ok(&cfg, &m);
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        for (int k = 0; k < N; k++) {
            int i = pass == 0 ? N - 1 - k : k;
            assert_int_equal(b->labels[k], i + 10);
            assert_int_equal(b->raw_len[k], ilen[i]);
            assert_memory_equal(b->raw[k], img[i], ilen[i]);
        }
        dlg_loader_release(l, b);
        dlg_loader_close(l);
        unlink(idx);
    }
    mock_host_fini(&m);
}

static void test_synthetic(void **st)
{
    (void)st;
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.data = "synthetic:100";
    cfg.batch = 8;
    cfg.crop = 16;
    dlg_loader *l = open_ok(&cfg, &m);
    dlg_batch *b;
    for (int i = 0; i < 30; i++) {
        assert_int_equal(dlg_loader_next(l, &b), 0);
        assert_int_equal(b->labels[0], (i * 8) % 100);
        float v = ((float *)b->data)[7];
        assert_true(v >= -2 && v <= 2);
        dlg_loader_release(l, b);
    }
    dlg_loader_stats s;
    dlg_loader_stats_get(l, &s);
    assert_int_equal(s.epoch, 29 * 8 / 100);
    assert_string_equal(s.source, "synthetic");
    dlg_loader_close(l);
    cfg.data = "synthetic:0";
    assert_true(dlg_loader_open(&l, &cfg, &m.host) < 0);
    assert_non_null(strstr(m.last_error, "synthetic"));
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_infer_matches_reference),
        cmocka_unit_test(test_train_matches_reference),
        cmocka_unit_test(test_bgr_255_matches_reference),
        cmocka_unit_test(test_scaled_decode_path),
        cmocka_unit_test(test_scaled_decode_odd_size),
        cmocka_unit_test(test_full_decode_matches),
        cmocka_unit_test(test_formats_agree),
        cmocka_unit_test(test_raw_datum_lmdb),
        cmocka_unit_test(test_mxnet_records),
        cmocka_unit_test(test_synthetic),
        cmocka_unit_test(test_mirror_follows_augment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
