/* preprocess's Caffe flow through the mock host: convert_imageset's exact
 * resize (--resize_width/--resize_height, aspect not kept) and
 * compute_image_mean's mean image (mean_output), checked against an
 * independent computation: the stored Datums read back with the core/data
 * LMDB reader, decoded with TurboJPEG straight to BGR and summed in float
 * in LMDB order exactly as compute_image_mean does, then divided by the
 * count.  The mean must not depend on the thread count or the pass.
 * mean_output replaces only an empty file or a BlobProto, never the input,
 * one of output's names or a file beside it that preprocess did not make. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "binaryproto.h"
#include "jpeg_fixture.h"
#include "lmdb_dataset.h"
#include "prep_testutil.h"
#include "workload_run.h"

enum { W = 16, H = 12, NIMG = 4 }; /* image 2 is truncated: skipped */

typedef struct fx {
    char dir[512], list[600];
} fx;

static int setup_fx(void **st)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/prepmean-%d", TOOLS_TEST_DIR, (int)getpid());
    if (fx_fresh_dir(f->dir, 1) != 0)
        return -1;
    const int sizes[NIMG][2] = {{30, 20}, {17, 33}, {50, 50}, {40, 24}};
    snprintf(f->list, sizeof f->list, "%s/list.txt", f->dir);
    FILE *l = fopen(f->list, "w");
    if (!l)
        return -1;
    for (int i = 0; i < NIMG; i++) {
        uint8_t *j;
        size_t len;
        if (fx_jpeg(sizes[i][0], sizes[i][1], 100 + (uint64_t)i, &j, &len) != 0)
            return -1;
        char p[700];
        snprintf(p, sizeof p, "%s/img%d.jpg", f->dir, i);
        int rc = fx_write(p, j, i == 2 ? len / 2 : len); /* cut in half: no EOI */
        free(j);
        if (rc != 0)
            return -1;
        fprintf(l, "img%d.jpg %d\n", i, i % 2);
    }
    fclose(l);
    *st = f;
    return 0;
}

static int teardown_fx(void **st)
{
    fx *f = *st;
    int rc = fx_fresh_dir(f->dir, 0);
    free(f);
    return rc;
}

/* Converts the list to lmdb:DIR/<db> at W x H with a mean, on `threads`. */
static void convert(fx *f, const char *db, const char *mean, int threads, int steps, wr_result *r)
{
    kv k = {0};
    kv_add(&k, "input=%s", f->list);
    kv_add(&k, "output=lmdb:%s/%s", f->dir, db);
    kv_add(&k, "resize_width=%d", W);
    kv_add(&k, "resize_height=%d", H);
    kv_add(&k, "mean_output=%s/%s", f->dir, mean);
    kv_add(&k, "threads=%d", threads);
    kv_add(&k, "skip_corrupt=true");
    wr_run("tools.so", "preprocess", k.ptr, steps, r);
    assert_int_equal(r->setup_rc, 0);
    if (r->step_rc != 0)
        fail_msg("%s", r->error);
}

/* compute_image_mean over the LMDB: decode every Datum (BGR), sum in float
 * in cursor order, divide by the count; the Datums must be W x H. */
static int caffe_mean(const char *db, float *mean)
{
    dlg_data_err err;
    dlg_lmdb *l;
    if (dlg_lmdb_open(&l, db, &err) != 0)
        fail_msg("%s", err.msg);
    dlg_lmdb_cursor *c;
    assert_int_equal(dlg_lmdb_cursor_open(l, &c, &err), 0);
    tjhandle tj = tjInitDecompress();
    memset(mean, 0, sizeof(float) * 3 * W * H);
    uint8_t bgr[W * H * 3];
    dlg_lmdb_record rec;
    int count = 0;
    while (dlg_lmdb_next(c, &rec, &err) == 1) {
        int w, h, sub, cs;
        assert_true(rec.datum->encoded);
        assert_int_equal(tjDecompressHeader3(tj, rec.datum->data, rec.datum->data_len, &w, &h, &sub, &cs), 0);
        assert_int_equal(w, W); /* every image at exactly W x H, whatever its aspect */
        assert_int_equal(h, H);
        assert_int_equal(tjDecompress2(tj, rec.datum->data, rec.datum->data_len, bgr, W, 0, H, TJPF_BGR, 0), 0);
        for (int ch = 0; ch < 3; ch++)
            for (int i = 0; i < W * H; i++)
                mean[ch * W * H + i] = mean[ch * W * H + i] + (float)bgr[i * 3 + ch];
        count++;
    }
    for (int i = 0; i < 3 * W * H; i++)
        mean[i] = mean[i] / (float)count;
    tjDestroy(tj);
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(l);
    return count;
}

static void read_mean(const char *path, dlg_blobproto *b)
{
    dlg_data_err err;
    if (dlg_blobproto_read(b, path, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(b->num, 1);
    assert_int_equal(b->channels, 3);
    assert_int_equal(b->height, H);
    assert_int_equal(b->width, W);
    assert_int_equal(b->count, 3 * W * H);
}

static void test_mean_known_answer(void **st)
{
    fx *f = *st;
    wr_result r;
    convert(f, "db1", "m1.binaryproto", 1, NIMG, &r);
    assert_int_equal(wr_int(&r, "passes"), 1);
    assert_int_equal(wr_int(&r, "skipped"), 1);
    char db[700], path[700];
    snprintf(db, sizeof db, "%s/db1", f->dir);
    float want[3 * W * H];
    assert_int_equal(caffe_mean(db, want), NIMG - 1); /* the mean of the 3 stored */
    snprintf(path, sizeof path, "%s/m1.binaryproto", f->dir);
    dlg_blobproto b;
    read_mean(path, &b);
    assert_memory_equal(b.data, want, sizeof want); /* bit for bit */
    dlg_blobproto_free(&b);
    char part[720];
    snprintf(part, sizeof part, "%s.part", path);
    assert_int_not_equal(access(part, F_OK), 0);
}

/* 3 threads and a list shorter than the ring (12 slots): workers run up to a
 * pass ahead while the mean of each is summed; three passes, then part of a
 * fourth.  Same bytes as one thread, one pass. */
static void test_mean_threads_passes(void **st)
{
    fx *f = *st;
    wr_result r;
    convert(f, "db1", "m1.binaryproto", 1, NIMG, &r);
    convert(f, "db3", "m3.binaryproto", 3, 3 * NIMG + 2, &r);
    assert_int_equal(wr_int(&r, "passes"), 3);
    char p1[700], p3[700];
    snprintf(p1, sizeof p1, "%s/m1.binaryproto", f->dir);
    snprintf(p3, sizeof p3, "%s/m3.binaryproto", f->dir);
    size_t n1, n3;
    uint8_t *b1 = fx_slurp(p1, &n1), *b3 = fx_slurp(p3, &n3);
    assert_non_null(b1);
    assert_non_null(b3);
    assert_int_equal(n1, n3);
    assert_memory_equal(b1, b3, n1);
    free(b1);
    free(b3);
}

/* Aspect not kept: a 64 x 16 image, left half black and right half white,
 * stored at 8 x 8 keeps the halves side by side (the shorter-side resize
 * would make it 32 x 8). */
static void test_exact_resize(void **st)
{
    fx *f = *st;
    enum { SW = 64, SH = 16 };
    uint8_t rgb[SW * SH * 3];
    for (int y = 0; y < SH; y++)
        for (int x = 0; x < SW; x++)
            memset(rgb + (y * SW + x) * 3, x < SW / 2 ? 0 : 255, 3);
    tjhandle tc = tjInitCompress();
    unsigned char *jpg = NULL;
    unsigned long jlen = 0;
    assert_int_equal(tjCompress2(tc, rgb, SW, 0, SH, TJPF_RGB, &jpg, &jlen, TJSAMP_444, 100, 0), 0);
    char dir[700], img[720];
    snprintf(dir, sizeof dir, "%s/halves/c0", f->dir);
    assert_int_equal(fx_fresh_dir(dir, 1), 0);
    snprintf(img, sizeof img, "%s/a.jpg", dir);
    assert_int_equal(fx_write(img, jpg, jlen), 0);
    tjFree(jpg);
    tjDestroy(tc);
    kv k = {0};
    kv_add(&k, "input=%s/halves", f->dir);
    kv_add(&k, "output=lmdb:%s/hdb", f->dir);
    kv_add(&k, "resize_width=8");
    kv_add(&k, "resize_height=8");
    kv_add(&k, "quality=100");
    kv_add(&k, "threads=1");
    wr_result r;
    wr_run("tools.so", "preprocess", k.ptr, 1, &r);
    assert_int_equal(r.setup_rc, 0);
    assert_int_equal(r.step_rc, 0);
    char db[700];
    snprintf(db, sizeof db, "%s/hdb", f->dir);
    dlg_data_err err;
    dlg_lmdb *l;
    assert_int_equal(dlg_lmdb_open(&l, db, &err), 0);
    dlg_lmdb_cursor *c;
    assert_int_equal(dlg_lmdb_cursor_open(l, &c, &err), 0);
    dlg_lmdb_record rec;
    assert_int_equal(dlg_lmdb_next(c, &rec, &err), 1);
    tjhandle td = tjInitDecompress();
    int w, h, sub, cs;
    assert_int_equal(tjDecompressHeader3(td, rec.datum->data, rec.datum->data_len, &w, &h, &sub, &cs), 0);
    assert_int_equal(w, 8);
    assert_int_equal(h, 8);
    uint8_t out[8 * 8 * 3];
    assert_int_equal(tjDecompress2(td, rec.datum->data, rec.datum->data_len, out, 8, 0, 8, TJPF_RGB, 0), 0);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) {
            int v = out[(y * 8 + x) * 3 + 1];
            if (x < 3)
                assert_in_range(v, 0, 12);
            else if (x > 4)
                assert_in_range(v, 243, 255);
        }
    tjDestroy(td);
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(l);
}

/* One error line each, naming the keys, at setup. */
static void refused(fx *f, const char *const *extra, const char *want)
{
    kv k = {0};
    kv_add(&k, "input=%s", f->list);
    kv_add(&k, "output=lmdb:%s/never", f->dir);
    for (int i = 0; extra[i]; i++)
        kv_add(&k, "%s", extra[i]);
    wr_result r;
    wr_run("tools.so", "preprocess", k.ptr, 1, &r);
    assert_int_equal(r.setup_rc, -DLG_EINVAL);
    assert_int_equal(r.errors, 1);
    if (!strstr(r.error, want))
        fail_msg("error '%s' lacks '%s'", r.error, want);
}

static void test_refused(void **st)
{
    fx *f = *st;
    char m[700], bad[700];
    snprintf(m, sizeof m, "mean_output=%s/m.binaryproto", f->dir);
    snprintf(bad, sizeof bad, "mean_output=%s/no/such/dir/m.binaryproto", f->dir);
    const char *no_size[] = {m, NULL};
    refused(f, no_size, "needs resize_width and resize_height");
    const char *shorter[] = {m, "resize=32", NULL};
    refused(f, shorter, "needs resize_width and resize_height");
    const char *one[] = {"resize_width=16", NULL};
    refused(f, one, "give both");
    const char *both[] = {"resize=32", "resize_width=16", "resize_height=16", NULL};
    refused(f, both, "give one");
    const char *unwritable[] = {bad, "resize_width=16", "resize_height=16", NULL};
    refused(f, unwritable, "no/such/dir/m.binaryproto");
    char isdir[700];
    snprintf(isdir, sizeof isdir, "mean_output=%s", f->dir);
    const char *dir[] = {isdir, "resize_width=16", "resize_height=16", NULL};
    refused(f, dir, "is a directory");
}

/* A run at W x H of the list, one pass, into output with mean_output. */
static void mean_run(fx *f, const char *output, const char *mean, wr_result *r)
{
    kv k = {0};
    kv_add(&k, "input=%s", f->list);
    kv_add(&k, "output=%s", output);
    kv_add(&k, "resize_width=%d", W);
    kv_add(&k, "resize_height=%d", H);
    kv_add(&k, "mean_output=%s", mean);
    kv_add(&k, "threads=1");
    kv_add(&k, "skip_corrupt=true");
    wr_run("tools.so", "preprocess", k.ptr, NIMG, r);
}

static bool holds(const char *path, const char *text)
{
    size_t n;
    uint8_t *b = fx_slurp(path, &n);
    bool same = b && n == strlen(text) && memcmp(b, text, n) == 0;
    free(b);
    return same;
}

/* mean_output on the input, on a name of the output or in its LMDB
 * folder, or on a file that is not a BlobProto: one line at setup (and at
 * the check before any cell), nothing written, every file kept (the mean
 * was renamed over whatever stood there). */
static void test_mean_target_refused(void **st)
{
    fx *f = *st;
    size_t n0;
    uint8_t *list0 = fx_slurp(f->list, &n0);
    char out[4][720], mean[4][720], notes[720];
    snprintf(notes, sizeof notes, "%s/notes.txt", f->dir);
    assert_int_equal(fx_write(notes, "my notes\n", 9), 0);
    snprintf(out[0], 720, "lmdb:%s/t0", f->dir);
    snprintf(mean[0], 720, "%s", f->list);
    snprintf(out[1], 720, "recordio:%s/t1.rec", f->dir);
    snprintf(mean[1], 720, "%s/t1.idx", f->dir);
    snprintf(out[2], 720, "lmdb:%s/t2", f->dir);
    snprintf(mean[2], 720, "%s/t2/mean.binaryproto", f->dir);
    snprintf(out[3], 720, "lmdb:%s/t3", f->dir);
    snprintf(mean[3], 720, "%s", notes);
    wr_result r0; /* an LMDB t2 to put the mean in */
    char m0[720];
    snprintf(m0, sizeof m0, "%s/t2.binaryproto", f->dir);
    mean_run(f, out[2], m0, &r0);
    assert_int_equal(r0.setup_rc + r0.step_rc, 0);
    static const char *const want[4] = {"is the input", "a name written by output", "is in ",
                                        "exists and is not a BlobProto"};
    for (int i = 0; i < 4; i++) {
        wr_result r;
        mean_run(f, out[i], mean[i], &r);
        assert_int_equal(r.setup_rc, -DLG_EINVAL);
        assert_int_equal(r.errors, 1);
        if (!strstr(r.error, want[i]) || !strstr(r.error, "mean_output = "))
            fail_msg("case %d: error '%s' lacks '%s'", i, r.error, want[i]);
        const char *ov[] = {NULL, NULL, "resize_width=16", "resize_height=12", NULL, NULL};
        char in[720], o[740], m[740];
        snprintf(in, sizeof in, "input=%s", f->list);
        snprintf(o, sizeof o, "output=%s", out[i]);
        snprintf(m, sizeof m, "mean_output=%s", mean[i]);
        ov[0] = in;
        ov[1] = o;
        ov[4] = m;
        int rc = 0;
        char err[512];
        assert_true(wr_check("tools.so", "preprocess", ov, &rc, err, sizeof err));
        if (rc != -DLG_EINVAL || !strstr(err, want[i]))
            fail_msg("case %d: check %d '%s'", i, rc, err);
    }
    size_t n1;
    uint8_t *list1 = fx_slurp(f->list, &n1);
    assert_true(n0 == n1 && memcmp(list0, list1, n0) == 0);
    free(list0);
    free(list1);
    assert_true(holds(notes, "my notes\n"));
    char p[740];
    snprintf(p, sizeof p, "%s/t1.rec", f->dir);
    assert_int_not_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/t2/mean.binaryproto", f->dir);
    assert_int_not_equal(access(p, F_OK), 0);
}

/* Files named *.part beside the mean that preprocess did not make are
 * kept (the probe unlinked PATH.part, the write overwrote it), and none of
 * its own is left; an empty file and a BlobProto at PATH are replaced. */
static void test_mean_beside_kept(void **st)
{
    fx *f = *st;
    char mean[700], part[720], out[720];
    snprintf(mean, sizeof mean, "%s/m5.binaryproto", f->dir);
    snprintf(part, sizeof part, "%s.part", mean);
    snprintf(out, sizeof out, "lmdb:%s/db5", f->dir);
    assert_int_equal(fx_write(part, "mine\n", 5), 0);
    assert_int_equal(fx_write(mean, "", 0), 0);
    for (int run = 0; run < 2; run++) { /* over the empty file, then over its own mean */
        wr_result r;
        mean_run(f, out, mean, &r);
        assert_int_equal(r.setup_rc, 0);
        if (r.step_rc != 0)
            fail_msg("%s", r.error);
        dlg_blobproto b;
        read_mean(mean, &b);
        dlg_blobproto_free(&b);
        assert_true(holds(part, "mine\n"));
    }
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    struct dirent *e;
    int parts = 0;
    while ((e = readdir(d)))
        parts += strncmp(e->d_name, "m5.binaryproto.", 15) == 0;
    closedir(d);
    assert_int_equal(parts, 1); /* the user's m5.binaryproto.part alone */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean_known_answer),
        cmocka_unit_test(test_mean_threads_passes),
        cmocka_unit_test(test_exact_resize),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_mean_target_refused),
        cmocka_unit_test(test_mean_beside_kept),
    };
    return cmocka_run_group_tests(tests, setup_fx, teardown_fx);
}
