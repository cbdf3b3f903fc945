/* Loader arithmetic: permutation, torchvision crop windows, resample taps,
 * fp16 conversion. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loader_image.h"

static void test_permutation(void **st)
{
    (void)st;
    uint64_t ns[] = {1, 2, 3, 10, 17, 64, 1000, 4099};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        uint64_t n = ns[k];
        uint8_t *seen = calloc(n, 1);
        uint64_t fixed = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t p = dlg_ld_permute(i, n, 42, 3, true);
            assert_true(p < n);
            assert_int_equal(seen[p], 0);
            seen[p] = 1;
            fixed += p == i;
        }
        if (n >= 64) /* a shuffle, not the identity */
            assert_true(fixed < n / 8);
        free(seen);
    }
    /* other epoch / seed: another order; shuffle off: identity */
    int diff_e = 0, diff_s = 0;
    for (uint64_t i = 0; i < 100; i++) {
        diff_e += dlg_ld_permute(i, 100, 42, 3, true) != dlg_ld_permute(i, 100, 42, 4, true);
        diff_s += dlg_ld_permute(i, 100, 42, 3, true) != dlg_ld_permute(i, 100, 43, 3, true);
        assert_int_equal(dlg_ld_permute(i, 100, 42, 3, false), i);
    }
    assert_true(diff_e > 50 && diff_s > 50);
}

static void test_train_windows(void **st)
{
    (void)st;
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.seed = 9;
    int mirrors = 0, n = 4000;
    double area_sum = 0;
    for (int i = 0; i < n; i++) {
        int W = 300 + i % 200, H = 200 + i % 150;
        dlg_crop_window a, b;
        dlg_ld_window(&cfg, 0, (uint64_t)i, W, H, &a);
        dlg_ld_window(&cfg, 0, (uint64_t)i, W, H, &b);
        assert_true(a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h && a.mirror == b.mirror);
        assert_true(a.x >= 0 && a.y >= 0 && a.x + a.w <= W && a.y + a.h <= H);
        assert_true(a.w == floor(a.w) && a.h == floor(a.h) && a.x == floor(a.x));
        double frac = a.w * a.h / ((double)W * H), ratio = a.w / a.h;
        /* rounding to whole pixels can push a window a little past the bounds */
        assert_true(frac > 0.075 && frac <= 1.0);
        assert_true(ratio > 0.74 && ratio < 1.35);
        area_sum += frac;
        mirrors += a.mirror;
    }
    print_message("mean area fraction %.4f\n", area_sum / n);
    /* torchvision's own RandomResizedCrop.get_params gives 0.395 on these
     * sizes (4000 draws; large draws are often rejected, hence not 0.54) */
    assert_true(fabs(area_sum / n - 0.395) < 0.025);
    assert_true(abs(mirrors - n / 2) < n / 20);
}

static void test_center_window(void **st)
{
    (void)st;
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.train = false;
    dlg_crop_window w;
    /* 500x375 -> Resize(256): 341x256; CenterCrop(224): left round(58.5)=58, top 16 */
    dlg_ld_window(&cfg, 0, 0, 500, 375, &w);
    assert_true(fabs(w.x - 58.0 * 500 / 341) < 1e-9);
    assert_true(fabs(w.y - 16.0 * 375 / 256) < 1e-9);
    assert_true(fabs(w.w - 224.0 * 500 / 341) < 1e-9);
    assert_true(fabs(w.h - 224.0 * 375 / 256) < 1e-9);
    assert_false(w.mirror);
    /* portrait, crop 299 (resize 341): 300x400 -> 341x454, top round(77.5)=78 */
    cfg.crop = 299;
    dlg_ld_window(&cfg, 0, 0, 300, 400, &w);
    assert_true(fabs(w.y - 78.0 * 400 / 454) < 1e-9);
    assert_true(fabs(w.x - 21.0 * 300 / 341) < 1e-9);
}

static void test_taps(void **st)
{
    (void)st;
    int first[64], count[64];
    float wts[64 * 64];
    double spans[] = {10, 64, 100.5, 640};
    for (size_t k = 0; k < 4; k++) {
        dlg_taps t = {0, dlg_taps_max(spans[k], 32), first, count, wts};
        assert_true(t.maxk <= 64);
        dlg_taps_fill(&t, 3.25, spans[k], 32, 700);
        for (int j = 0; j < 32; j++) {
            double s = 0;
            for (int i = 0; i < count[j]; i++)
                s += wts[j * t.maxk + i];
            assert_true(fabs(s - 1) < 1e-5);
            assert_true(first[j] >= 0 && first[j] + count[j] <= 700);
        }
    }
    /* identity: span == n, whole pixels: each output is one input */
    dlg_taps t = {0, dlg_taps_max(32, 32), first, count, wts};
    dlg_taps_fill(&t, 5, 32, 32, 100);
    for (int j = 0; j < 32; j++) {
        double got = 0;
        for (int i = 0; i < count[j]; i++)
            got += wts[j * t.maxk + i] * (first[j] + i);
        assert_true(fabs(got - (5 + j)) < 1e-5);
    }
    /* bounded to a window [10, 50) of a 100-pixel axis, as torchvision's
     * crop-then-resize sees it: 40 -> 32 (PIL: scale 1.25, output 0 at
     * centre 10.625, taps 10 and 11 weighted 0.9 and 0.3, normalised; tap 9
     * outside it would weigh 0.1) */
    t.maxk = dlg_taps_max(40, 32);
    dlg_taps_fill_within(&t, 10, 40, 32, 10, 50);
    assert_int_equal(first[0], 10);
    assert_int_equal(count[0], 2);
    assert_true(fabs(wts[0] - 0.9 / 1.2) < 1e-6 && fabs(wts[1] - 0.3 / 1.2) < 1e-6);
    assert_int_equal(first[31] + count[31], 50);
    for (int j = 0; j < 32; j++)
        assert_true(first[j] >= 10 && first[j] + count[j] <= 50);
}

static void test_fp16(void **st)
{
    (void)st;
    assert_int_equal(dlg_fp16(0.0f), 0x0000);
    assert_int_equal(dlg_fp16(-0.0f), 0x8000);
    assert_int_equal(dlg_fp16(1.0f), 0x3c00);
    assert_int_equal(dlg_fp16(-2.0f), 0xc000);
    assert_int_equal(dlg_fp16(65504.0f), 0x7bff);
    assert_int_equal(dlg_fp16(65520.0f), 0x7c00); /* rounds to inf */
    assert_int_equal(dlg_fp16(1e9f), 0x7c00);
    assert_int_equal(dlg_fp16(0.333333343f), 0x3555);
    assert_int_equal(dlg_fp16(5.9604645e-08f), 0x0001); /* smallest subnormal */
    assert_int_equal(dlg_fp16(1.0f + 1.0f / 2048), 0x3c00); /* tie -> even */
    assert_int_equal(dlg_fp16(1.0f + 3.0f / 2048), 0x3c02);
    assert_int_equal(dlg_fp16(NAN) & 0x7c00, 0x7c00);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permutation), cmocka_unit_test(test_train_windows),
        cmocka_unit_test(test_center_window), cmocka_unit_test(test_taps),
        cmocka_unit_test(test_fp16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
