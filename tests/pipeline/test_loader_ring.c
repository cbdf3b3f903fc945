/* The consumer's side of the ring: an error in a later batch does not cost
 * the batches before it, and a batch held out of order (or released twice)
 * is an error, never a stale or doubly refilled buffer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_util.h"

typedef struct ring {
    pu_dataset d;
    char spec[700];
    mock_host m;
    dlg_loader_config cfg;
    dlg_loader *l;
} ring;

/* n small images, batches of 2 in dataset order. */
static void ring_make(ring *r, const char *tag, int n, int classes)
{
    pu_make_images(&r->d, tag, n, classes, 40, 30, 5);
    snprintf(r->spec, sizeof r->spec, "files:%s", r->d.list);
    dlg_loader_config_defaults(&r->cfg);
    r->cfg.data = r->spec;
    r->cfg.batch = 2;
    r->cfg.crop = 24;
    r->cfg.threads = 2;
    r->cfg.shuffle = false;
}

static void ring_open(ring *r)
{
    mock_host_init(&r->m);
    assert_int_equal(dlg_loader_open(&r->l, &r->cfg, &r->m.host), 0);
}

static void ring_close(ring *r)
{
    dlg_loader_close(r->l);
    mock_host_fini(&r->m);
}

/* Image 0 takes long to decode, image 3 (batch 1) is not a JPEG: whichever
 * worker fails first, batch 0 is still handed out, then the error. */
static void test_error_after_earlier_batches(void **st)
{
    (void)st;
    ring r;
    ring_make(&r, "late", 6, 2);
    int W = 1600, H = 1200;
    uint8_t *rgb = malloc((size_t)W * H * 3);
    for (size_t i = 0; i < (size_t)W * H * 3; i++) /* noise: a slow decode */
        rgb[i] = (uint8_t)((i * 2654435761u) >> 24);
    pu_write_jpeg(r.d.paths[0], rgb, W, H);
    free(rgb);
    FILE *f = fopen(r.d.paths[3], "wb");
    assert_non_null(f);
    fputs("garbage", f);
    fclose(f);
    for (int threads = 1; threads <= 4; threads++) {
        r.cfg.threads = threads;
        ring_open(&r);
        dlg_batch *b;
        int rc, got = 0;
        while ((rc = dlg_loader_next(r.l, &b)) == 0 && got < 4) {
            assert_int_equal(b->seq, (uint64_t)got);
            got++;
            dlg_loader_release(r.l, b);
        }
        assert_int_equal(got, 1); /* batch 0, then batch 1's error */
        assert_int_equal(rc, -DLG_ECORRUPT);
        assert_non_null(strstr(r.m.last_error, "img03.jpg"));
        assert_int_equal(dlg_loader_next(r.l, &b), -DLG_ECORRUPT); /* it stays */
        ring_close(&r);
    }
}

/* Holding batch 0 while asking for batch 3 (prefetch 3: the same slot). */
static void test_release_out_of_order(void **st)
{
    (void)st;
    ring r;
    ring_make(&r, "ooo", 8, 4);
    r.cfg.prefetch = 3;
    ring_open(&r);
    dlg_batch *b0, *b;
    assert_int_equal(dlg_loader_next(r.l, &b0), 0);
    for (int i = 1; i <= 2; i++) {
        assert_int_equal(dlg_loader_next(r.l, &b), 0);
        assert_int_equal(b->seq, (uint64_t)i);
        dlg_loader_release(r.l, b);
    }
    assert_int_equal(dlg_loader_next(r.l, &b), -DLG_EINVAL);
    assert_non_null(strstr(r.m.last_error, "batch 0 is still held"));
    assert_int_equal(b0->seq, 0); /* untouched */
    assert_int_equal(b0->labels[1], r.d.labels[1]);
    dlg_loader_release(r.l, b0);
    assert_int_equal(dlg_loader_next(r.l, &b), 0); /* and on it goes */
    assert_int_equal(b->seq, 3);
    assert_int_equal(b->labels[0], r.d.labels[6]);
    dlg_loader_release(r.l, b);
    ring_close(&r);
}

/* A second release of the same batch is ignored: the stream stays whole. */
static void test_release_twice(void **st)
{
    (void)st;
    ring r;
    ring_make(&r, "twice", 8, 8);
    r.cfg.prefetch = 2;
    ring_open(&r);
    dlg_batch *b;
    for (int i = 0; i < 8; i++) { /* two epochs */
        assert_int_equal(dlg_loader_next(r.l, &b), 0);
        assert_int_equal(b->seq, (uint64_t)i);
        assert_int_equal(b->labels[0], r.d.labels[(2 * i) % 8]);
        dlg_loader_release(r.l, b);
        if (i == 1) {
            int warnings = r.m.warnings;
            dlg_loader_release(r.l, b);
            assert_int_equal(r.m.warnings, warnings + 1);
        }
    }
    ring_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_after_earlier_batches),
        cmocka_unit_test(test_release_out_of_order),
        cmocka_unit_test(test_release_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
