/* JPEG codec: round trip, DCT-scaled decode against full decode + area
 * downscale, scale choice, corrupt and truncated input, CMYK sources, and
 * progressive images too large to decode. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "jpeg.h"

#define W 320
#define H 240

/* Smooth content (the noisy synthetic photos are a worst case for JPEG):
 * gradients, a disc and a soft ring. */
static uint8_t *image(void)
{
    uint8_t *rgb = malloc(W * H * 3);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double r2 = (x - 150.0) * (x - 150.0) + (y - 110.0) * (y - 110.0);
            uint8_t *p = rgb + ((size_t)y * W + x) * 3;
            p[0] = (uint8_t)(x * 255 / W);
            p[1] = (uint8_t)(r2 < 60 * 60 ? 220 : y * 255 / H);
            p[2] = (uint8_t)(128 + 100 * sin(sqrt(r2) / 9.0));
        }
    return rgb;
}

static void test_round_trip(void **st)
{
    (void)st;
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    uint8_t *rgb = image(), *back = malloc(W * H * 3);
    const uint8_t *jpg;
    size_t len;
    assert_int_equal(dlg_jpeg_encode(j, rgb, W, H, 95, &jpg, &len, NULL), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, jpg, len);
    dlg_jpeg_info info;
    assert_int_equal(dlg_jpeg_header(j, copy, len, "rt", &info, NULL), 0);
    assert_int_equal(info.width, W);
    assert_int_equal(info.height, H);
    int w, h;
    dlg_jpeg_scale one = {1, 1};
    assert_int_equal(dlg_jpeg_decode(j, copy, len, "rt", one, back, W * H * 3, &w, &h, NULL), 0);
    assert_int_equal(w, W);
    assert_int_equal(h, H);
    /* The synthetic images are noisy (that is what makes them ~110 KB), so
     * q95 keeps a PSNR around 30 dB; a broken codec path gives < 15. */
    double se = 0;
    for (size_t i = 0; i < W * H * 3; i++)
        se += ((double)rgb[i] - back[i]) * ((double)rgb[i] - back[i]);
    double psnr = 10 * log10(255.0 * 255.0 / (se / (W * H * 3)));
    print_message("round trip PSNR %.1f dB, %zu bytes\n", psnr, len);
    assert_true(psnr > 35.0);
    /* too small a buffer is refused, not overrun */
    dlg_data_err err = {0};
    assert_int_equal(dlg_jpeg_decode(j, copy, len, "rt", one, back, 100, &w, &h, &err), -DLG_EINVAL);
    free(copy);
    free(back);
    free(rgb);
    dlg_jpeg_free(j);
}

/* Scaled decode at 1/2 and 1/4 against full decode + k x k box average. */
static void test_scaled_matches_downscale(void **st)
{
    (void)st;
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    uint8_t *rgb = image();
    const uint8_t *jpg;
    size_t len;
    assert_int_equal(dlg_jpeg_encode(j, rgb, W, H, 90, &jpg, &len, NULL), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, jpg, len);
    uint8_t *full = malloc(W * H * 3), *small = malloc(W * H * 3);
    int w, h;
    assert_int_equal(dlg_jpeg_decode(j, copy, len, "x", (dlg_jpeg_scale){1, 1}, full, W * H * 3, &w, &h, NULL), 0);
    for (int k = 2; k <= 4; k *= 2) {
        dlg_jpeg_scale s = {1, k};
        assert_int_equal(dlg_jpeg_decode(j, copy, len, "x", s, small, W * H * 3, &w, &h, NULL), 0);
        assert_int_equal(w, W / k);
        assert_int_equal(h, H / k);
        double sum = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int c = 0; c < 3; c++) {
                    double box = 0;
                    for (int dy = 0; dy < k; dy++)
                        for (int dx = 0; dx < k; dx++)
                            box += full[(((size_t)y * k + dy) * W + x * k + dx) * 3 + c];
                    sum += fabs(box / (k * k) - small[((size_t)y * w + x) * 3 + c]);
                }
        double mad = sum / (w * h * 3);
        print_message("1/%d scaled decode vs full + box: mean abs diff %.2f levels\n", k, mad);
        assert_true(mad < 2.0);
    }
    free(full);
    free(small);
    free(copy);
    free(rgb);
    dlg_jpeg_free(j);
}

static void test_pick_scale(void **st)
{
    (void)st;
    dlg_jpeg_scale s = dlg_jpeg_pick_scale(500, 375, 224, 224); /* not <= half */
    assert_int_equal(s.num * 1, s.denom);
    s = dlg_jpeg_pick_scale(1000, 800, 224, 224); /* 1/2 covers, 3/8 does not (300 < 224? no: 300) */
    assert_true(800.0 * s.num / s.denom >= 224 && 1000.0 * s.num / s.denom >= 224);
    assert_true((double)s.num / s.denom <= 0.5);
    assert_int_equal(s.num * 8, 3 * s.denom); /* 3/8: 375x300, 1/4 would be 250x200 */
    s = dlg_jpeg_pick_scale(2000, 2000, 224, 224);
    assert_int_equal(s.num * 8, s.denom); /* 1/8: 250 >= 224 */
    assert_int_equal(dlg_jpeg_scaled(375, (dlg_jpeg_scale){1, 8}), 47); /* rounds up */
}

static void test_corrupt(void **st)
{
    (void)st;
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    uint8_t *rgb = image(), *out = malloc(W * H * 3);
    const uint8_t *jpg;
    size_t len;
    assert_int_equal(dlg_jpeg_encode(j, rgb, W, H, 90, &jpg, &len, NULL), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, jpg, len);
    dlg_data_err err = {0};
    int w, h;
    dlg_jpeg_scale one = {1, 1};
    /* truncated at several points: header, mid-scan, just before EOI */
    size_t cuts[] = {2, 20, 300, len / 2, len - 2};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        dlg_data_err_clear(&err);
        int rc = dlg_jpeg_decode(j, copy, cuts[i], "cut.jpg", one, out, W * H * 3, &w, &h, &err);
        assert_int_equal(rc, -DLG_ECORRUPT);
        assert_non_null(strstr(err.msg, "cut.jpg"));
    }
    /* garbage in the entropy-coded data still decodes or fails cleanly */
    uint8_t *bad = malloc(len);
    memcpy(bad, copy, len);
    for (size_t i = len / 3; i < len / 3 + 64; i++)
        bad[i] = (uint8_t)(i * 37);
    dlg_data_err_clear(&err);
    int rc = dlg_jpeg_decode(j, bad, len, "bad.jpg", one, out, W * H * 3, &w, &h, &err);
    assert_true(rc == 0 || (rc == -DLG_ECORRUPT && strstr(err.msg, "bad.jpg")));
    /* a PNG signature / random bytes are not JPEG */
    const uint8_t png[] = {0x89, 'P', 'N', 'G', 13, 10, 26, 10, 0, 0};
    assert_int_equal(dlg_jpeg_header(j, png, sizeof png, "p.png", &(dlg_jpeg_info){0}, &err),
                     -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "not a JPEG"));
    /* a header claiming absurd dimensions: SOF with 65500 x 65500 */
    memcpy(bad, copy, len);
    for (size_t i = 0; i + 9 < len; i++)
        if (bad[i] == 0xFF && bad[i + 1] == 0xC0) {
            bad[i + 5] = bad[i + 7] = 0xFF;
            bad[i + 6] = bad[i + 8] = 0xDC;
            break;
        }
    dlg_data_err_clear(&err);
    assert_int_equal(dlg_jpeg_decode(j, bad, len, "huge.jpg", one, out, W * H * 3, &w, &h, &err),
                     -DLG_ECORRUPT);
    /* the handle still works after all those failures */
    assert_int_equal(dlg_jpeg_decode(j, copy, len, "good.jpg", one, out, W * H * 3, &w, &h, &err), 0);
    assert_int_equal(w, W);
    free(bad);
    free(copy);
    free(out);
    free(rgb);
    dlg_jpeg_free(j);
}

/* Photoshop CMYK JPEGs (a few are in ImageNet) decode to RGB as OpenCV and
 * Pillow do, on the stored (inverted) values: R = k - (255 - c) * k / 255. */
static void test_cmyk(void **st)
{
    (void)st;
    enum { CW = 24, CH = 16 };
    uint8_t px[CW * CH * 4];
    for (int i = 0; i < CW * CH * 4; i++)
        px[i] = (uint8_t)(i % 4 == 3 ? 128 + i % 97 : i * 7);
    tjhandle tc = tjInitCompress(), td = tjInitDecompress();
    unsigned char *jpg = NULL;
    unsigned long len = 0;
    assert_int_equal(tjCompress2(tc, px, CW, 0, CH, TJPF_CMYK, &jpg, &len, TJSAMP_444, 100, 0), 0);
    uint8_t cmyk[CW * CH * 4], rgb[CW * CH * 3];
    assert_int_equal(tjDecompress2(td, jpg, len, cmyk, CW, 0, CH, TJPF_CMYK, 0), 0);
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    dlg_data_err err = {0};
    int w = 0, h = 0;
    assert_int_equal(dlg_jpeg_decode(j, jpg, len, "cmyk.jpg", (dlg_jpeg_scale){1, 1}, rgb,
                                     sizeof rgb, &w, &h, &err), 0);
    assert_int_equal(w, CW);
    assert_int_equal(h, CH);
    for (int i = 0; i < CW * CH; i++)
        for (int c = 0; c < 3; c++) {
            double k = cmyk[4 * i + 3], want = k - floor((255 - cmyk[4 * i + c]) * k / 255 + 0.5);
            assert_int_equal(rgb[3 * i + c], (int)want);
        }
    /* DCT scaling works on CMYK too */
    assert_int_equal(dlg_jpeg_decode(j, jpg, len, "cmyk.jpg", (dlg_jpeg_scale){1, 2}, rgb,
                                     sizeof rgb, &w, &h, &err), 0);
    assert_int_equal(w, CW / 2);
    tjFree(jpg);
    tjDestroy(tc);
    tjDestroy(td);
    dlg_jpeg_free(j);
}

/* Sets the dimensions in the first SOF marker of a JPEG. */
static void set_sof_size(unsigned char *jpg, unsigned long len, int w, int h)
{
    for (unsigned long i = 2; i + 9 < len; i++)
        if (jpg[i] == 0xFF && (jpg[i + 1] == 0xC0 || jpg[i + 1] == 0xC2)) {
            jpg[i + 5] = (unsigned char)(h >> 8);
            jpg[i + 6] = (unsigned char)h;
            jpg[i + 7] = (unsigned char)(w >> 8);
            jpg[i + 8] = (unsigned char)w;
            return;
        }
    fail_msg("no SOF marker");
}

/* A progressive JPEG decodes from whole-image coefficient buffers: one
 * claiming 16384x16384 (4:2:0: 768 MiB of them) is refused at its header,
 * before libjpeg allocates them; a small progressive one decodes, and a
 * baseline one of that size (it streams) passes the header. */
static void test_progressive_memory_bomb(void **st)
{
    (void)st;
    uint8_t *rgb = image(), out[W * H * 3];
    tjhandle tc = tjInitCompress();
    unsigned char *jpg = NULL;
    unsigned long len = 0;
    assert_int_equal(tjCompress2(tc, rgb, W, 0, H, TJPF_RGB, &jpg, &len, TJSAMP_420, 90, TJFLAG_PROGRESSIVE), 0);
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    dlg_data_err err = {0};
    int w = 0, h = 0;
    assert_int_equal(dlg_jpeg_decode(j, jpg, len, "p.jpg", (dlg_jpeg_scale){1, 1}, out, sizeof out, &w, &h, &err), 0);
    assert_int_equal(w, W);
    set_sof_size(jpg, len, 16384, 16384);
    dlg_jpeg_info info;
    assert_int_equal(dlg_jpeg_header(j, jpg, len, "bomb.jpg", &info, &err), -DLG_ECORRUPT);
    assert_string_equal(err.msg, "bomb.jpg: progressive JPEG of 16384x16384 would need 768 MiB of coefficient "
                                 "buffers to decode (at most 512 MiB)");
    tjFree(jpg);
    jpg = NULL;
    assert_int_equal(tjCompress2(tc, rgb, W, 0, H, TJPF_RGB, &jpg, &len, TJSAMP_420, 90, 0), 0);
    set_sof_size(jpg, len, 16384, 16384);
    assert_int_equal(dlg_jpeg_header(j, jpg, len, "big.jpg", &info, &err), 0);
    assert_int_equal(info.width, 16384);
    tjFree(jpg);
    tjDestroy(tc);
    dlg_jpeg_free(j);
    free(rgb);
}

/* A camera file cut short a little after its EXIF thumbnail: the
 * thumbnail's EOI must not make the truncated image look complete. */
static void test_truncated_after_thumbnail(void **st)
{
    (void)st;
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    uint8_t *rgb = image(), *out = malloc(W * H * 3);
    const uint8_t *p;
    size_t tlen, mlen;
    assert_int_equal(dlg_jpeg_encode(j, rgb, 8, 8, 90, &p, &tlen, NULL), 0);
    uint8_t *thumb = malloc(tlen);
    memcpy(thumb, p, tlen);
    assert_int_equal(dlg_jpeg_encode(j, rgb, W, H, 90, &p, &mlen, NULL), 0);
    size_t seg = 6 + tlen, len = mlen + 4 + seg; /* SOI, APP1 "Exif\0\0" + thumbnail, rest */
    uint8_t *file = malloc(len);
    memcpy(file, p, 2);
    memcpy(file + 2, (const uint8_t[]){0xFF, 0xE1, (uint8_t)((seg + 2) >> 8), (uint8_t)(seg + 2)},
           4);
    memcpy(file + 6, "Exif\0\0", 6);
    memcpy(file + 12, thumb, tlen);
    memcpy(file + 12 + tlen, p + 2, mlen - 2);
    assert_true(mlen > 4096);
    dlg_data_err err = {0};
    int w, h;
    dlg_jpeg_scale one = {1, 1};
    assert_true(dlg_jpeg_has_eoi(file, len));
    assert_int_equal(dlg_jpeg_decode(j, file, len, "full.jpg", one, out, W * H * 3, &w, &h, &err), 0);
    size_t cut = 12 + tlen + 2000; /* the thumbnail's EOI is in the last 4 KiB */
    assert_false(dlg_jpeg_has_eoi(file, cut));
    assert_int_equal(dlg_jpeg_decode(j, file, cut, "cut.jpg", one, out, W * H * 3, &w, &h, &err),
                     -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "cut.jpg"));
    free(file);
    free(thumb);
    free(out);
    free(rgb);
    dlg_jpeg_free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_scaled_matches_downscale),
        cmocka_unit_test(test_pick_scale),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_cmyk),
        cmocka_unit_test(test_truncated_after_thumbnail),
        cmocka_unit_test(test_progressive_memory_bomb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
