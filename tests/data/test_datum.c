/* caffe.Datum wire format: known-answer bytes hand-computed from the
 * protobuf encoding rules, both directions; malformed input rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "data_error.h"
#include "datum.h"

static void check_encode(const dlg_datum *d, const uint8_t *want, size_t n)
{
    uint8_t buf[256];
    dlg_data_err err;
    assert_int_equal(dlg_datum_encoded_size(d), n);
    assert_int_equal(dlg_datum_encode(d, buf, sizeof buf, &err), (int64_t)n);
    assert_memory_equal(buf, want, n);
    assert_int_equal(dlg_datum_encode(d, buf, n - 1, &err), -DLG_EINVAL);
}

/* convert_imageset, raw: CVMatToDatum sets channels/height/width, data,
 * encoded=false, then set_label; proto2 writes them in field order. */
static const uint8_t RAW[] = {0x08, 0x03, 0x10, 0x02, 0x18, 0x02, 0x22, 0x0c, 0,    1,   2, 3,
                              4,    5,    6,    7,    8,    9,    10,   11,   0x28, 0x07, 0x38, 0x00};

static void test_raw_known_answer(void **state)
{
    uint8_t px[12];
    for (int i = 0; i < 12; i++)
        px[i] = (uint8_t)i;
    dlg_datum d;
    dlg_datum_init(&d);
    dlg_datum_set_raw(&d, 3, 2, 2, px, 12, 7);
    check_encode(&d, RAW, sizeof RAW);

    dlg_datum e;
    dlg_data_err err;
    dlg_datum_init(&e);
    assert_int_equal(dlg_datum_decode(&e, RAW, sizeof RAW, "raw", &err), 0);
    assert_int_equal(e.has, d.has);
    assert_int_equal(e.channels, 3);
    assert_int_equal(e.height, 2);
    assert_int_equal(e.width, 2);
    assert_int_equal(e.label, 7);
    assert_false(e.encoded);
    assert_int_equal(e.data_len, 12);
    assert_ptr_equal(e.data, RAW + 8); /* zero copy */
    assert_int_equal(e.n_float, 0);
    dlg_datum_free(&e);
}

static void test_encoded_known_answer(void **state)
{
    /* --encoded: data, label, encoded=true; a negative int32 takes 10 bytes. */
    static const uint8_t want[] = {0x22, 0x05, 'J',  'P',  'E',  'G',  '!',  0x28, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                                   0x38, 0x01};
    dlg_datum d;
    dlg_datum_init(&d);
    dlg_datum_set_encoded(&d, "JPEG!", 5, -1);
    check_encode(&d, want, sizeof want);
    dlg_data_err err;
    dlg_datum e;
    dlg_datum_init(&e);
    assert_int_equal(dlg_datum_decode(&e, want, sizeof want, "enc", &err), 0);
    assert_int_equal(e.label, -1);
    assert_true(e.encoded);
    assert_int_equal(e.has, DLG_DATUM_HAS_DATA | DLG_DATUM_HAS_LABEL | DLG_DATUM_HAS_ENCODED);
    assert_int_equal(e.data_len, 5);
    assert_memory_equal(e.data, "JPEG!", 5);
    /* A multi-byte varint: label 300 = 0xac 0x02. */
    static const uint8_t l300[] = {0x28, 0xac, 0x02};
    assert_int_equal(dlg_datum_decode(&e, l300, sizeof l300, "l300", &err), 0);
    assert_int_equal(e.label, 300);
    assert_int_equal(e.has, DLG_DATUM_HAS_LABEL);
    dlg_datum_free(&e);
}

static void test_float_data(void **state)
{
    /* 1.0f = 0x3f800000, -2.5f = 0xc0200000, little-endian fixed32. */
    static const uint8_t unpacked[] = {0x08, 0x01, 0x10, 0x01, 0x18, 0x02, 0x35, 0x00, 0x00,
                                       0x80, 0x3f, 0x35, 0x00, 0x00, 0x20, 0xc0};
    static const uint8_t packed[] = {0x08, 0x01, 0x10, 0x01, 0x18, 0x02, 0x32, 0x08, 0x00,
                                     0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0};
    float vals[2] = {1.0f, -2.5f};
    dlg_datum d;
    dlg_datum_init(&d);
    d.has = DLG_DATUM_HAS_CHANNELS | DLG_DATUM_HAS_HEIGHT | DLG_DATUM_HAS_WIDTH;
    d.channels = 1;
    d.height = 1;
    d.width = 2;
    d.float_data = vals;
    d.n_float = 2;
    check_encode(&d, unpacked, sizeof unpacked); /* proto2 writes unpacked */

    dlg_data_err err;
    dlg_datum e;
    dlg_datum_init(&e);
    assert_int_equal(dlg_datum_decode(&e, unpacked, sizeof unpacked, "u", &err), 0);
    assert_int_equal(e.n_float, 2);
    assert_true(e.float_data[0] == 1.0f && e.float_data[1] == -2.5f);
    float *storage = e.float_data;
    assert_int_equal(dlg_datum_decode(&e, packed, sizeof packed, "p", &err), 0);
    assert_int_equal(e.n_float, 2);
    assert_true(e.float_data[0] == 1.0f && e.float_data[1] == -2.5f);
    assert_ptr_equal(e.float_data, storage); /* storage reused, not reallocated */
    /* Wrong count for the shape. */
    static const uint8_t short_f[] = {0x08, 0x01, 0x10, 0x01, 0x18, 0x03, 0x35, 0, 0, 0x80, 0x3f};
    assert_int_equal(dlg_datum_decode(&e, short_f, sizeof short_f, "f", &err), -DLG_ECORRUPT);
    assert_string_equal(err.msg, "f: raw Datum has 1 float_data values, but channels*height*width "
                                 "= 1*1*3 = 3");
    /* An empty data field beside float_data (a writer that set data = ""):
     * Caffe's DataTransformer then reads float_data, so the shape is checked
     * against the floats, not the 0 data bytes. */
    static const uint8_t empty_data[] = {0x08, 0x01, 0x10, 0x01, 0x18, 0x02, 0x22, 0x00, 0x32,
                                         0x08, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0};
    assert_int_equal(dlg_datum_decode(&e, empty_data, sizeof empty_data, "e", &err), 0);
    assert_int_equal(e.data_len, 0);
    assert_int_equal(e.n_float, 2);
    dlg_datum_free(&e);
}

static void test_unknown_fields_skipped(void **state)
{
    static const uint8_t msg[] = {
        0x78, 0x05,                                     /* field 15 varint */
        0x82, 0x01, 0x02, 0xaa, 0xbb,                   /* field 16 length-delimited */
        0x49, 1,    2,    3,    4,    5,    6,    7, 8, /* field 9 fixed64 */
        0x55, 1,    2,    3,    4,                      /* field 10 fixed32 */
        0x5b, 0x08, 0x01, 0x63, 0x64, 0x5c,             /* group 11 holding a nested group 12 */
        0x28, 0x09};                                    /* label 9 */
    dlg_datum e;
    dlg_data_err err;
    dlg_datum_init(&e);
    assert_int_equal(dlg_datum_decode(&e, msg, sizeof msg, "u", &err), 0);
    assert_int_equal(e.has, DLG_DATUM_HAS_LABEL);
    assert_int_equal(e.label, 9);
    assert_int_equal(e.channels, 0); /* the 0x08 inside the group is not channels */
    dlg_datum_free(&e);
}

static void expect_bad(const uint8_t *buf, size_t n, const char *msg)
{
    dlg_datum e;
    dlg_data_err err = {0};
    dlg_datum_init(&e);
    assert_int_equal(dlg_datum_decode(&e, buf, n, "db: key 'k'", &err), -DLG_ECORRUPT);
    if (strcmp(err.msg, msg) != 0)
        fail_msg("got  '%s'\nwant '%s'", err.msg, msg);
    dlg_datum_free(&e);
}

static void test_malformed(void **state)
{
    expect_bad((const uint8_t *)"\x08\x03\x10\x80", 4,
               "db: key 'k': not a valid Caffe Datum: truncated varint at byte 3");
    expect_bad((const uint8_t *)"\x08\x03\x22\x05\x01\x02", 6,
               "db: key 'k': not a valid Caffe Datum: length runs past the end of the message "
               "at byte 3");
    expect_bad((const uint8_t *)"\x08\x03\x0d\x01\x02\x03\x04", 7,
               "db: key 'k': not a valid Caffe Datum: field 1 has wire type 5 at byte 2");
    expect_bad((const uint8_t *)"\x22\x00\x22\x00\x38\x01\x22\x01", 8,
               "db: key 'k': not a valid Caffe Datum: length runs past the end of the message "
               "at byte 7");
    expect_bad((const uint8_t *)"\x25\x00\x00\x00\x00", 5,
               "db: key 'k': not a valid Caffe Datum: field 4 has wire type 5 at byte 0");
    expect_bad((const uint8_t *)"\x3a\x00", 2,
               "db: key 'k': not a valid Caffe Datum: field 7 has wire type 2 at byte 0");
    expect_bad((const uint8_t *)"\x08\x01\x0e", 3,
               "db: key 'k': not a valid Caffe Datum: invalid wire type at byte 2");
    expect_bad((const uint8_t *)"\x00\x01", 2,
               "db: key 'k': not a valid Caffe Datum: invalid tag at byte 0");
    expect_bad((const uint8_t *)"\x5c", 1,
               "db: key 'k': not a valid Caffe Datum: end-group tag without a start-group at "
               "byte 1");
    expect_bad((const uint8_t *)"\x5b\x08\x01", 3,
               "db: key 'k': not a valid Caffe Datum: unterminated group at byte 3");
    expect_bad((const uint8_t *)"\x5b\x64", 2,
               "db: key 'k': not a valid Caffe Datum: mismatched end-group tag at byte 1");
    expect_bad((const uint8_t *)"\x35\x00\x00", 3,
               "db: key 'k': not a valid Caffe Datum: truncated fixed32 at byte 1");
    expect_bad((const uint8_t *)"\x32\x03\x00\x00\x00", 5,
               "db: key 'k': not a valid Caffe Datum: packed float_data length not a multiple "
               "of 4 at byte 0");
    expect_bad((const uint8_t *)"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12,
               "db: key 'k': not a valid Caffe Datum: varint longer than 10 bytes at byte 1");
    /* Raw data must match the shape. */
    expect_bad((const uint8_t *)"\x08\x03\x10\x02\x18\x02\x22\x02\xaa\xbb", 10,
               "db: key 'k': raw Datum data at byte 6 is 2 bytes, but channels*height*width = "
               "3*2*2 = 12");
    /* 2^30 * 2^30 * 16 wraps to 0 in 64 bits: no data must not match it */
    expect_bad((const uint8_t *)"\x08\x80\x80\x80\x80\x04\x10\x80\x80\x80\x80\x04\x18\x10"
                                "\x22\x00", 16,
               "db: key 'k': raw Datum size channels*height*width = 1073741824*1073741824*16 "
               "exceeds 2^64");
    expect_bad((const uint8_t *)"\x08\xff\xff\xff\xff\x0f", 6,
               "db: key 'k': Datum has a negative size (channels -1, height 0, width 0)");
}

static void test_empty_and_encoded_shape(void **state)
{
    dlg_datum e;
    dlg_data_err err;
    dlg_datum_init(&e);
    assert_int_equal(dlg_datum_decode(&e, NULL, 0, "empty", &err), 0);
    assert_int_equal(e.has, 0);
    /* Encoded data need not match channels*height*width. */
    static const uint8_t enc[] = {0x08, 0x03, 0x22, 0x01, 0xff, 0x38, 0x01};
    assert_int_equal(dlg_datum_decode(&e, enc, sizeof enc, "e", &err), 0);
    assert_true(e.encoded);
    dlg_datum_free(&e);
}

/* A key read from a dataset goes into error lines escaped: a newline or a
 * byte that is no ASCII in it split the line and put raw bytes into the
 * sinks' error field. */
static void test_key_printable(void **unused)
{
    (void)unused;
    char buf[64];
    static const char key[] = "00000007_a\nb\r\x01\xff\\c.jpg";
    assert_string_equal(dlg_data_printable(buf, sizeof buf, key, sizeof key - 1),
                        "00000007_a\\x0ab\\x0d\\x01\\xff\\x5cc.jpg");
    char small[16];
    assert_string_equal(dlg_data_printable(small, sizeof small, "abcdefghijklmnopqrstuvwxyz", 26), "abcdefghijkl...");
    assert_string_equal(dlg_data_printable(small, sizeof small, "", 0), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raw_known_answer),      cmocka_unit_test(test_encoded_known_answer),
        cmocka_unit_test(test_float_data),            cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_malformed),             cmocka_unit_test(test_empty_and_encoded_shape),
        cmocka_unit_test(test_key_printable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
