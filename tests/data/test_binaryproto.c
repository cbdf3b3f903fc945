/* Caffe BlobProto (mean_file) reader and writer: round trip, the encodings
 * Caffe and pycaffe write (legacy dims + packed data, BlobShape dims,
 * unpacked floats, double_data), and one-line errors that name the file and
 * byte offset of truncated or corrupt input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binaryproto.h"
#include "tmpdir.h"

static void test_round_trip(void **st)
{
    (void)st;
    float img[3 * 2 * 5];
    for (int i = 0; i < 30; i++)
        img[i] = 100.25f + (float)i * 1.5f;
    char dir[64], path[128];
    tmpdir_make(dir, "blob");
    snprintf(path, sizeof path, "%s/mean.binaryproto", dir);
    assert_int_equal(dlg_blobproto_write(path, 3, 2, 5, img, NULL), 0);
    dlg_blobproto b;
    assert_int_equal(dlg_blobproto_read(&b, path, NULL), 0);
    assert_int_equal(b.num, 1);
    assert_int_equal(b.channels, 3);
    assert_int_equal(b.height, 2);
    assert_int_equal(b.width, 5);
    assert_int_equal(b.count, 30);
    assert_memory_equal(b.data, img, sizeof img);
    dlg_blobproto_free(&b);
    /* the bytes protobuf writes: num, channels, height, width, packed data */
    size_t n = dlg_blobproto_size(3, 2, 5);
    uint8_t *buf = malloc(n);
    assert_int_equal(dlg_blobproto_encode(3, 2, 5, img, buf, n), n);
    static const uint8_t head[] = {0x08, 1, 0x10, 3, 0x18, 2, 0x20, 5, 0x2a, 120};
    assert_memory_equal(buf, head, sizeof head);
    assert_int_equal(n, sizeof head + 120);
    assert_int_equal(dlg_blobproto_encode(3, 2, 5, img, buf, n - 1), 0);
    free(buf);
    tmpdir_rmrf(dir);
}

static void put_f(uint8_t **p, float f)
{
    memcpy(*p, &f, 4); /* little-endian hosts only, as the project */
    *p += 4;
}

/* pycaffe's array_to_blobproto: shape { dim: 1 dim: 3 dim: 1 dim: 2 },
 * here unpacked dims, unpacked data, a diff to skip and an unknown field. */
static void test_shape_and_unpacked(void **st)
{
    (void)st;
    uint8_t buf[256], *p = buf;
    *p++ = 0x3a; /* shape, length-delimited */
    *p++ = 8;
    for (int d = 0; d < 4; d++) {
        *p++ = 0x08;
        *p++ = (uint8_t)(d == 1 ? 3 : d == 3 ? 2 : 1);
    }
    for (int i = 0; i < 6; i++) {
        *p++ = 0x2d; /* data, one fixed32 each */
        put_f(&p, (float)i + 0.5f);
    }
    *p++ = 0x32; /* diff, packed: skipped */
    *p++ = 4;
    put_f(&p, 9.0f);
    *p++ = 0x50; /* field 10, varint: unknown, skipped */
    *p++ = 7;
    dlg_blobproto b;
    assert_int_equal(dlg_blobproto_decode(&b, buf, (size_t)(p - buf), "m", NULL), 0);
    assert_int_equal(b.num, 1);
    assert_int_equal(b.channels, 3);
    assert_int_equal(b.height, 1);
    assert_int_equal(b.width, 2);
    assert_int_equal(b.count, 6);
    assert_true(b.data[5] == 5.5f);
    dlg_blobproto_free(&b);
    /* double_data wins over data, as in Blob::FromProto */
    p = buf;
    uint8_t legacy[] = {0x08, 1, 0x10, 1, 0x18, 1, 0x20, 2, 0x42, 16};
    memcpy(p, legacy, sizeof legacy);
    p += sizeof legacy;
    double dv[2] = {1.25, -3.5};
    memcpy(p, dv, 16);
    p += 16;
    assert_int_equal(dlg_blobproto_decode(&b, buf, (size_t)(p - buf), "m", NULL), 0);
    assert_int_equal(b.count, 2);
    assert_true(b.data[0] == 1.25f && b.data[1] == -3.5f);
    dlg_blobproto_free(&b);
}

static void expect_err(const uint8_t *buf, size_t len, int code, const char *want)
{
    dlg_blobproto b;
    dlg_data_err err = {0};
    assert_int_equal(dlg_blobproto_decode(&b, buf, len, "m.binaryproto", &err), -code);
    if (!strstr(err.msg, want))
        fail_msg("got '%s', want '%s'", err.msg, want);
    assert_null(strchr(err.msg, '\n'));
    assert_null(b.data);
}

static void test_corrupt(void **st)
{
    (void)st;
    float img[4] = {1, 2, 3, 4};
    uint8_t good[64];
    size_t n = dlg_blobproto_encode(1, 2, 2, img, good, sizeof good);
    assert_int_equal(n, 8 + 2 + 16);
    /* cut inside the packed data: its length runs past the end (at byte 9) */
    expect_err(good, n - 3, DLG_ECORRUPT,
               "m.binaryproto: not a valid BlobProto: length runs past the end of the message at byte 9");
    /* cut inside a varint */
    uint8_t v[] = {0x08, 0x81};
    expect_err(v, 2, DLG_ECORRUPT, "truncated varint at byte 1");
    /* wrong wire type for width */
    uint8_t wt[] = {0x08, 1, 0x25, 0, 0, 0, 0};
    expect_err(wt, sizeof wt, DLG_ECORRUPT, "field 4 has wire type 5 at byte 2");
    /* packed data not a multiple of 4 */
    uint8_t pk[] = {0x08, 1, 0x2a, 3, 0, 0, 0};
    expect_err(pk, sizeof pk, DLG_ECORRUPT, "packed data length not a multiple of 4 at byte 2");
    /* too few values for the shape */
    expect_err(good, 8, DLG_ECORRUPT, "BlobProto has 0 data values but its shape 1 x 1 x 2 x 2 needs 4");
    /* a packed dim that runs past its run, and a negative dim */
    uint8_t sh[] = {0x3a, 3, 0x0a, 1, 0x80, 0x01};
    expect_err(sh, sizeof sh, DLG_ECORRUPT, "at byte 4");
    /* shape 4 x 2^62: the product wraps to 0 in 64 bits, which 0 values
     * would match; Caffe refuses it (count > INT_MAX), so must we */
    uint8_t wrap[] = {0x3a, 12, 0x08, 4, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
    expect_err(wrap, sizeof wrap, DLG_ECORRUPT, "BlobProto shape holds more than 2147483647 values");
    uint8_t neg[] = {0x10, 0xff, 0xff, 0xff, 0xff, 0x0f};
    expect_err(neg, sizeof neg, DLG_ECORRUPT, "negative num/channels/height/width at byte 0");
    /* a file: empty, missing */
    char dir[64], path[128];
    tmpdir_make(dir, "blob");
    snprintf(path, sizeof path, "%s/empty.binaryproto", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fclose(f);
    dlg_blobproto b;
    dlg_data_err err = {0};
    assert_int_equal(dlg_blobproto_read(&b, path, &err), -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "empty.binaryproto: empty file"));
    snprintf(path, sizeof path, "%s/none.binaryproto", dir);
    assert_int_equal(dlg_blobproto_read(&b, path, &err), -DLG_EIO);
    assert_non_null(strstr(err.msg, "none.binaryproto: cannot open"));
    tmpdir_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_shape_and_unpacked),
        cmocka_unit_test(test_corrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
