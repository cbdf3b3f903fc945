/* RecordIO corruption: every malformed file gives -DLG_ECORRUPT and a
 * message that names the byte offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "memout.h"
#include "recordio.h"

/* "hello" at 0, a split record at 16 (parts at 16 and 28), "xyz" at 44; 56 bytes. */
static uint8_t *make_file(size_t *len)
{
    memout m;
    dlg_output o;
    memout_init(&m, &o, "c.rec");
    dlg_rec_writer *w;
    dlg_data_err err;
    uint8_t split[14] = {'A', 'B', 'C', 'D', 0x0a, 0x23, 0xd7, 0xce, 'E', 'F', 'G', 'H', 'I', 'J'};
    assert_int_equal(dlg_rec_writer_open(&w, &o, 0, &err), 0);
    assert_int_equal(dlg_rec_write(w, "hello", 5, NULL, &err), 0);
    assert_int_equal(dlg_rec_write(w, split, sizeof split, NULL, &err), 0);
    assert_int_equal(dlg_rec_write(w, "xyz", 3, NULL, &err), 0);
    assert_int_equal(dlg_rec_writer_splits(w), 1);
    assert_int_equal(dlg_rec_writer_close(w, &err), 0);
    assert_int_equal(m.len, 56);
    *len = m.len;
    return m.buf;
}

/* Reads the whole buffer; returns the first error (0 if none) and its text. */
static int read_through(const uint8_t *buf, size_t len, bool size_known, int *records,
                        dlg_data_err *err)
{
    dlg_source src;
    dlg_mem_file mf;
    dlg_source_mem(&src, &mf, buf, len, "c.rec");
    if (!size_known)
        src.size = DLG_SIZE_UNKNOWN;
    dlg_rec_reader *r;
    assert_int_equal(dlg_rec_reader_open(&r, &src, 16, err), 0);
    dlg_rec rec;
    int rc;
    *records = 0;
    while ((rc = dlg_rec_next(r, &rec, err)) == 1)
        (*records)++;
    dlg_rec_reader_close(r);
    return rc;
}

static void expect(const uint8_t *buf, size_t len, int good_records, const char *msg)
{
    for (int known = 0; known < 2; known++) {
        dlg_data_err err = {0};
        int n;
        assert_int_equal(read_through(buf, len, known, &n, &err), -DLG_ECORRUPT);
        assert_int_equal(n, good_records);
        assert_int_equal(err.code, DLG_ECORRUPT);
        if (strcmp(err.msg, msg) != 0)
            fail_msg("got  '%s'\nwant '%s'", err.msg, msg);
    }
}

static void test_intact(void **state)
{
    size_t len;
    uint8_t *f = make_file(&len);
    dlg_data_err err;
    int n;
    assert_int_equal(read_through(f, len, true, &n, &err), 0);
    assert_int_equal(n, 3);
    free(f);
}

static void test_bad_magic(void **state)
{
    size_t len;
    uint8_t *f = make_file(&len);
    f[16] ^= 0xff;
    expect(f, len, 1, "c.rec: bad magic 0xced723f5 at byte 16 (expected 0xced7230a)");
    free(f);
}

static void test_length_past_eof(void **state)
{
    size_t len;
    uint8_t *f = make_file(&len);
    expect(f, 54, 2, "c.rec: record part at byte 44: length 3 (padded 4) runs past the end of the file");
    /* A length field that is simply huge. */
    f[4] = 0xff;
    f[5] = 0xff;
    f[6] = 0x0f;
    expect(f, len, 0,
           "c.rec: record part at byte 0: length 1048575 (padded 1048576) runs past the end of "
           "the file");
    free(f);
}

static void test_bad_cflag_sequence(void **state)
{
    size_t len;
    uint8_t *f = make_file(&len);
    f[16 + 7] = 0x40; /* first part claims to be a middle part */
    expect(f, len, 1,
           "c.rec: bad cflag sequence: part with cflag 2 at byte 16 without a first part "
           "(cflag 1) before it");
    free(f);
    f = make_file(&len);
    f[28 + 7] = 0x00; /* second part claims to be a whole record */
    expect(f, len, 1,
           "c.rec: bad cflag sequence: cflag 0 at byte 28 inside the multi-part record starting "
           "at byte 16");
    free(f);
    f = make_file(&len);
    f[16 + 7] = 0xa0; /* cflag 5: no such part; it used to start a multi-part record */
    expect(f, len, 1, "c.rec: bad cflag 5 at byte 16 (RecordIO's are 0..3)");
    free(f);
}

static void test_truncated_header(void **state)
{
    size_t len;
    uint8_t *f = make_file(&len);
    expect(f, 48, 2, "c.rec: truncated record header at byte 44 (4 of 8 bytes)");
    expect(f, 28, 1, "c.rec: file ends at byte 28 inside the multi-part record starting at byte 16");
    free(f);
}

static void expect_idx(const char *text, const char *msg)
{
    dlg_rec_idx idx;
    dlg_data_err err = {0};
    assert_int_equal(dlg_rec_idx_parse(&idx, text, strlen(text), "c.idx", 56, "c.rec", &err),
                     -DLG_ECORRUPT);
    if (strcmp(err.msg, msg) != 0)
        fail_msg("got  '%s'\nwant '%s'", err.msg, msg);
    assert_null(idx.entries);
}

static void test_idx(void **state)
{
    memout m;
    dlg_output o;
    memout_init(&m, &o, "c.idx");
    dlg_data_err err;
    assert_int_equal(dlg_rec_idx_append(&o, "0", 0, &err), 0);
    assert_int_equal(dlg_rec_idx_append(&o, "1", 16, &err), 0);
    assert_int_equal(dlg_rec_idx_append(&o, "2", 44, &err), 0);
    assert_int_equal(dlg_rec_idx_append(&o, "a\tb", 44, &err), -DLG_EINVAL);
    assert_int_equal(m.len, 14);
    assert_memory_equal(m.buf, "0\t0\n1\t16\n2\t44\n", 14);
    dlg_rec_idx idx;
    assert_int_equal(dlg_rec_idx_parse(&idx, (char *)m.buf, m.len, "c.idx", 56, "c.rec", &err), 0);
    assert_int_equal(idx.n, 3);
    assert_string_equal(idx.entries[1].key, "1");
    assert_int_equal(idx.entries[2].offset, 44);
    dlg_rec_idx_free(&idx);
    free(m.buf);
    /* CRLF and a trailing blank line are tolerated. */
    assert_int_equal(dlg_rec_idx_parse(&idx, "7\t16\r\n\n", 7, "c.idx", 56, "c.rec", &err), 0);
    assert_int_equal(idx.n, 1);
    assert_string_equal(idx.entries[0].key, "7");
    dlg_rec_idx_free(&idx);

    expect_idx("0\t0\n1\t16\n2\t60\n", "c.idx:3: offset 60 is past the end of c.rec (56 bytes)");
    expect_idx("0\t56\n", "c.idx:1: offset 56 is past the end of c.rec (56 bytes)");
    expect_idx("0\t0\n1\t17\n", "c.idx:2: offset 17 is not a multiple of 4, so not a record start");
    /* far past the end and unaligned: the end is what is wrong with it */
    expect_idx("0\t0\n1\t999999\n", "c.idx:2: offset 999999 is past the end of c.rec (56 bytes)");
    /* blanks for the tab, as dmlc's C++ reader takes them */
    assert_int_equal(dlg_rec_idx_parse(&idx, "0 0\n3   16  \n", 13, "c.idx", 56, "c.rec", &err), 0);
    assert_int_equal(idx.n, 2);
    assert_string_equal(idx.entries[1].key, "3");
    assert_int_equal(idx.entries[1].offset, 16);
    dlg_rec_idx_free(&idx);
    expect_idx("0\n", "c.idx:1: expected 'key<TAB>offset', no offset found");
    expect_idx("7   \n", "c.idx:1: expected 'key<TAB>offset', no offset found");
    expect_idx("0\t-4\n", "c.idx:1: offset '-4' is not a decimal number");
    expect_idx("0\t99999999999999999999\n",
               "c.idx:1: offset '99999999999999999999' is not a decimal number");
    expect_idx("\t4\n", "c.idx:1: empty key");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intact),           cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_length_past_eof),  cmocka_unit_test(test_bad_cflag_sequence),
        cmocka_unit_test(test_truncated_header), cmocka_unit_test(test_idx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
