/* preprocess and libjpeg warnings, through the mock host: images decoded
 * (resize) despite a harmless warning (extraneous bytes before EOI) are
 * stored and counted in jpeg_warnings once per pass, as the loaders count
 * them per epoch; the count comes at teardown naming the first; an image
 * whose harmless first warning hides a lost scan is corrupt (skipped with
 * skip_corrupt); a pass-through decodes nothing and counts nothing. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jpeg_fixture.h"
#include "prep_testutil.h"
#include "workload_run.h"

enum { CLASSES = 2, PER_CLASS = 3, N = CLASSES * PER_CLASS, EXTRA = 16 };

typedef struct fx {
    char dir[512], images[600];
} fx;

static void image_path(const fx *f, int i, char *p, size_t cap)
{
    snprintf(p, cap, "%s/c%d/img_%d.jpg", f->images, i / PER_CLASS, i % PER_CLASS);
}

/* Rewrites image i with EXTRA stray bytes before its EOI ("N extraneous
 * bytes before marker 0xd9": every pixel as stored). */
static void add_extraneous(const fx *f, int i)
{
    char p[700];
    image_path(f, i, p, sizeof p);
    size_t len;
    uint8_t *b = fx_slurp(p, &len);
    assert_non_null(b);
    uint8_t *x = malloc(len + EXTRA);
    memcpy(x, b, len - 2);
    for (int k = 0; k < EXTRA; k++)
        x[len - 2 + k] = (uint8_t)(0x12 + k);
    x[len - 2 + EXTRA] = 0xFF;
    x[len - 1 + EXTRA] = 0xD9;
    assert_int_equal(fx_write(p, x, len + EXTRA), 0);
    free(b);
    free(x);
}

/* Rewrites image i with stray bytes before its SOS (a harmless warning,
 * the first) and an EOI marker 40 bytes into the scan (data lost). */
static void add_junk_and_cut(const fx *f, int i)
{
    char p[700];
    image_path(f, i, p, sizeof p);
    size_t len, sos = 0;
    uint8_t *b = fx_slurp(p, &len);
    assert_non_null(b);
    for (size_t k = 2; k + 1 < len && !sos; k++)
        if (b[k] == 0xFF && b[k + 1] == 0xDA)
            sos = k;
    assert_true(sos > 0 && sos + 50 < len);
    uint8_t *x = malloc(len + 4);
    memcpy(x, b, sos);
    memcpy(x + sos, "\x12\x34\x56\x78", 4);
    memcpy(x + sos + 4, b + sos, len - sos);
    x[sos + 4 + 40] = 0xFF;
    x[sos + 4 + 41] = 0xD9;
    assert_int_equal(fx_write(p, x, len + 4), 0);
    free(b);
    free(x);
}

static int setup_fx(void **st)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/prepwarn-%d", TOOLS_TEST_DIR, (int)getpid());
    snprintf(f->images, sizeof f->images, "%s/images", f->dir);
    if (fx_fresh_dir(f->dir, 1) != 0 || fx_make_images(f->images, CLASSES, PER_CLASS, 7) != 0)
        return -1;
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

static void run(const fx *f, int resize, bool skip, int steps, wr_result *r)
{
    kv k = {0};
    kv_add(&k, "input=%s", f->images);
    kv_add(&k, "output=recordio:%s/out.rec", f->dir);
    kv_add(&k, "resize=%d", resize);
    kv_add(&k, "threads=2");
    if (skip)
        kv_add(&k, "skip_corrupt=true");
    wr_run("tools.so", "preprocess", k.ptr, steps, r);
    assert_int_equal(r->setup_rc, 0);
    if (r->step_rc != 0)
        fail_msg("%s", r->error);
}

static void test_warned_counted(void **st)
{
    fx *f = *st;
    add_extraneous(f, 1);
    add_extraneous(f, 4);
    wr_result r;
    run(f, 24, false, N, &r); /* one pass */
    assert_int_equal(wr_int(&r, "images_written"), N);
    assert_int_equal(wr_int(&r, "jpeg_warnings"), 2);
    assert_non_null(strstr(r.log, "preprocess: 2 images stored despite a libjpeg warning (the first: "));
    assert_non_null(strstr(r.log, "/c0/img_1.jpg: Corrupt JPEG data: "));
    assert_non_null(strstr(r.log, "extraneous bytes before marker 0xd9)"));

    run(f, 24, false, 2 * N, &r); /* two passes decode them twice */
    assert_int_equal(wr_int(&r, "passes"), 2);
    assert_int_equal(wr_int(&r, "jpeg_warnings"), 4);

    run(f, 0, false, N, &r); /* pass-through: nothing decoded */
    assert_int_equal(wr_int(&r, "images_written"), N);
    assert_int_equal(wr_int(&r, "jpeg_warnings"), 0);
}

static void test_hidden_loss_skipped(void **st)
{
    fx *f = *st;
    add_junk_and_cut(f, 3);
    wr_result r;
    run(f, 24, true, N, &r);
    assert_int_equal(wr_int(&r, "skipped"), 1);
    assert_int_equal(wr_int(&r, "images_written"), N - 1);
    assert_int_equal(wr_int(&r, "jpeg_warnings"), 2); /* images 1 and 4, from the test before */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warned_counted),
        cmocka_unit_test(test_hidden_loss_skipped),
    };
    return cmocka_run_group_tests(tests, setup_fx, teardown_fx);
}
