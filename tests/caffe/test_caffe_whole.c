/* crop = 0 (Caffe's crop_size 0) in the caffe workloads: the input size
 * is the first record's, which only setup reads, so the check passes
 * without the data (an earlier job of the run may write it) and still
 * refuses what the options alone decide; setup builds the net at the
 * records' size, and a size the model cannot take names where it came
 * from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "datum.h"
#include "lmdb_dataset.h"
#include "workload_run.h"

/* An LMDB of two raw s x s Datums under the build tree; spec gets
 * "data=lmdb:DIR". */
static void make_lmdb(char *spec, size_t cap, int s)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tmp-caffe-whole-XXXXXX", DLG_TEST_BINARY_DIR);
    assert_non_null(mkdtemp(dir));
    snprintf(spec, cap, "data=lmdb:%s/db", dir);
    dlg_lmdb_writer *w;
    assert_int_equal(dlg_lmdb_writer_open(&w, spec + 10, NULL), 0);
    static uint8_t chw[3 * 96 * 96];
    for (size_t i = 0; i < sizeof chw; i++)
        chw[i] = (uint8_t)(i * 7);
    for (int r = 0; r < 2; r++) {
        dlg_datum dt;
        dlg_datum_init(&dt);
        dlg_datum_set_raw(&dt, 3, s, s, chw, (size_t)3 * s * s, r);
        assert_int_equal(dlg_lmdb_writer_put(w, r, r ? "b.png" : "a.png", &dt, NULL), 0);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, NULL), 0);
}

/* The workload's check on the mock host: 0, or the error line in err[]. */
static int check_only(const char *model, const char *const *ov, char *err, size_t len)
{
    int rc = 0;
    if (!wr_check("caffe.so", model, ov, &rc, err, len))
        fail_msg("%s", err);
    return rc;
}

static void test_check_reads_no_data(void **st)
{
    (void)st;
    char err[1024];
    const char *later[] = {"data=lmdb:/nonexistent/written_later_lmdb", "crop=0",
                           "transform=caffe", "channel_order=bgr", "pixel_range=255",
                           "mean=104,117,123", NULL};
    for (int i = 0; i < 2; i++) {
        const char *model = i ? "googlenet" : "alexnet";
        if (check_only(model, later, err, sizeof err) != 0)
            fail_msg("%s check with crop = 0 read the data: %s", model, err);
    }
    /* setup reads it: the cell fails there, naming the data */
    wr_result r;
    wr_run("caffe.so", "alexnet", later, 1, &r);
    assert_true(r.setup_rc < 0);
    if (!strstr(r.error, "/nonexistent/written_later_lmdb") || strchr(r.error, '\n'))
        fail_msg("setup: %s", r.error);
    /* what the options alone decide stays the check's */
    const char *tv[] = {"data=lmdb:/nonexistent/written_later_lmdb", "crop=0",
                        "transform=torchvision", NULL};
    assert_true(check_only("alexnet", tv, err, sizeof err) < 0);
    assert_non_null(strstr(err, "crop = 0 (no crop, Caffe's crop_size 0) needs transform = caffe"));
    const char *syn[] = {"data=synthetic", "crop=0", "transform=caffe", NULL};
    assert_true(check_only("alexnet", syn, err, sizeof err) < 0);
    assert_non_null(strstr(err, "data = synthetic has none"));
}

/* Setup sizes the net from the records: the FLOPs of crop = 67 on 67 x 67
 * records; 16 x 16 records are too small for AlexNet, said as such. */
static void test_setup_takes_record_size(void **st)
{
    (void)st;
    char data[700], small[700];
    make_lmdb(data, sizeof data, 67);
    make_lmdb(small, sizeof small, 16);
    const char *whole[] = {data, "crop=0", "transform=caffe", "mode=infer", "batch=1",
                           "classes=10", NULL};
    const char *fixed[] = {"data=synthetic:8", "crop=67", "mode=infer", "batch=1", "classes=10",
                           NULL};
    wr_result a, b;
    wr_run("caffe.so", "alexnet", whole, 2, &a);
    if (a.setup_rc || a.step_rc)
        fail_msg("crop = 0: %s", a.error);
    wr_run("caffe.so", "alexnet", fixed, 1, &b);
    assert_int_equal(b.setup_rc, 0);
    assert_true(wr_double(&a, "flops_per_item") > 0);
    assert_true(wr_double(&a, "flops_per_item") == wr_double(&b, "flops_per_item"));
    const char *tiny[] = {small, "crop=0", "transform=caffe", "mode=infer", "batch=1", NULL};
    wr_run("caffe.so", "alexnet", tiny, 1, &a);
    assert_true(a.setup_rc < 0);
    if (!strstr(a.error, "alexnet at crop = 16 (crop = 0: the first record's size)") ||
        strchr(a.error, '\n'))
        fail_msg("setup: %s", a.error);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_check_reads_no_data),
                                       cmocka_unit_test(test_setup_takes_record_size)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
