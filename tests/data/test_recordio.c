/* RecordIO: known-answer bytes (dmlc layout), splitting at aligned magic,
 * round trips and resynchronisation from every offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "memout.h"
#include "recordio.h"

static const uint8_t MAGIC[4] = {0x0a, 0x23, 0xd7, 0xce};

/* Encodes payloads into memory; returns the bytes (caller frees). */
static uint8_t *encode(const void *const *pl, const size_t *len, size_t n, size_t *out_len,
                       uint64_t *offs)
{
    memout m;
    dlg_output o;
    memout_init(&m, &o, "mem.rec");
    dlg_rec_writer *w;
    dlg_data_err err;
    assert_int_equal(dlg_rec_writer_open(&w, &o, 0, &err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(dlg_rec_write(w, pl[i], len[i], offs ? &offs[i] : NULL, &err), 0);
    assert_int_equal(dlg_rec_writer_close(w, &err), 0);
    *out_len = m.len;
    return m.buf;
}

static uint8_t *encode1(const void *p, size_t len, size_t *out_len)
{
    return encode(&p, &len, 1, out_len, NULL);
}

static void test_small_record_bytes(void **state)
{
    size_t n;
    uint8_t *b = encode1("abcde", 5, &n);
    static const uint8_t want[] = {0x0a, 0x23, 0xd7, 0xce, 0x05, 0x00, 0x00, 0x00, 'a', 'b',
                                   'c',  'd',  'e',  0x00, 0x00, 0x00};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(b, want, sizeof want);
    free(b);
}

static void test_aligned_magic_splits(void **state)
{
    uint8_t pl[14];
    memcpy(pl, "ABCD", 4);
    memcpy(pl + 4, MAGIC, 4);
    memcpy(pl + 8, "EFGHIJ", 6);
    size_t n;
    uint8_t *b = encode1(pl, sizeof pl, &n);
    static const uint8_t want[] = {
        0x0a, 0x23, 0xd7, 0xce, 0x04, 0x00, 0x00, 0x20, 'A', 'B', 'C', 'D',        /* cflag 1 */
        0x0a, 0x23, 0xd7, 0xce, 0x06, 0x00, 0x00, 0x60, 'E', 'F', 'G', 'H', 'I', 'J', /* cflag 3 */
        0x00, 0x00};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(b, want, sizeof want);
    free(b);

    /* Magic at 0 and 4: empty first and middle parts. */
    uint8_t pl2[10];
    memcpy(pl2, MAGIC, 4);
    memcpy(pl2 + 4, MAGIC, 4);
    memcpy(pl2 + 8, "xy", 2);
    b = encode1(pl2, sizeof pl2, &n);
    static const uint8_t want2[] = {0x0a, 0x23, 0xd7, 0xce, 0x00, 0x00, 0x00, 0x20,
                                    0x0a, 0x23, 0xd7, 0xce, 0x00, 0x00, 0x00, 0x40,
                                    0x0a, 0x23, 0xd7, 0xce, 0x02, 0x00, 0x00, 0x60,
                                    'x',  'y',  0x00, 0x00};
    assert_int_equal(n, sizeof want2);
    assert_memory_equal(b, want2, sizeof want2);
    free(b);
}

static void test_unaligned_magic_no_split(void **state)
{
    uint8_t pl[8] = {'A', 0x0a, 0x23, 0xd7, 0xce, 'B', 'C', 'D'};
    size_t n;
    uint8_t *b = encode1(pl, sizeof pl, &n);
    static const uint8_t want[] = {0x0a, 0x23, 0xd7, 0xce, 0x08, 0x00, 0x00, 0x00,
                                   'A',  0x0a, 0x23, 0xd7, 0xce, 'B',  'C',  'D'};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(b, want, sizeof want);
    free(b);
    /* The magic in the unaligned tail (last len % 4 bytes) is not split either. */
    uint8_t pl2[7] = {'a', 'b', 'c', 0x0a, 0x23, 0xd7, 0xce};
    b = encode1(pl2, sizeof pl2, &n);
    assert_int_equal(n, 16);
    assert_int_equal(b[7], 0x00); /* cflag 0 */
    free(b);
}

/* Deterministic payloads: random bytes with the magic planted at many
 * aligned offsets (every 7th record: unaligned ones), plus the edge sizes:
 * empty, all-magic and exactly 4 bytes. */
#define NREC 40
static uint32_t lcg(uint32_t *s) { return (*s = *s * 1103515245u + 12345u) >> 16; }

static void make_payloads(uint8_t *pl[NREC], size_t len[NREC])
{
    uint32_t s = 12345;
    for (int i = 0; i < NREC; i++) {
        size_t n = i == 0 ? 0 : i == 1 ? 64 : i == 2 ? 4 : i == 4 ? 1000 : lcg(&s) % 3000;
        pl[i] = malloc(n ? n : 1);
        for (size_t k = 0; k < n; k++)
            pl[i][k] = (uint8_t)lcg(&s);
        size_t shift = i % 7 == 3 ? 1 : 0;
        for (size_t k = 0; k + shift + 4 <= n; k += 4)
            if (i == 1 || i == 2 || lcg(&s) % 5 == 0)
                memcpy(pl[i] + k + shift, MAGIC, 4);
        len[i] = n;
    }
}

static void read_all_and_compare(const uint8_t *file, size_t flen, uint8_t *pl[NREC],
                                 size_t len[NREC], const uint64_t *offs, size_t window)
{
    dlg_source src;
    dlg_mem_file mf;
    dlg_source_mem(&src, &mf, file, flen, "mem.rec");
    dlg_rec_reader *r;
    dlg_data_err err;
    assert_int_equal(dlg_rec_reader_open(&r, &src, window, &err), 0);
    dlg_rec rec;
    for (int i = 0; i < NREC; i++) {
        assert_int_equal(dlg_rec_next(r, &rec, &err), 1);
        assert_int_equal(rec.len, len[i]);
        if (len[i])
            assert_memory_equal(rec.data, pl[i], len[i]);
        assert_int_equal(rec.offset, offs[i]);
    }
    assert_int_equal(dlg_rec_next(r, &rec, &err), 0);
    assert_int_equal(dlg_rec_reader_tell(r), flen);
    /* Random access by offset (what an .idx gives). */
    for (int i = NREC - 1; i >= 0; i -= 3) {
        assert_int_equal(dlg_rec_reader_seek(r, offs[i], &err), 0);
        assert_int_equal(dlg_rec_next(r, &rec, &err), 1);
        assert_int_equal(rec.len, len[i]);
        if (len[i])
            assert_memory_equal(rec.data, pl[i], len[i]);
    }
    dlg_rec_reader_close(r);
}

static void test_round_trip(void **state)
{
    uint8_t *pl[NREC];
    size_t len[NREC], flen;
    uint64_t offs[NREC];
    make_payloads(pl, len);
    uint8_t *file = encode((const void *const *)pl, len, NREC, &flen, offs);
    assert_int_equal(flen % 4, 0);
    read_all_and_compare(file, flen, pl, len, offs, 0);
    read_all_and_compare(file, flen, pl, len, offs, 64); /* window smaller than records */
    read_all_and_compare(file, flen, pl, len, offs, 12);
    /* Splits really happened and every magic in the file is a header. */
    int splits = 0;
    for (size_t k = 0; k + 8 <= flen; k += 4)
        if (!memcmp(file + k, MAGIC, 4) && (file[k + 7] >> 5) >= 1)
            splits++;
    assert_true(splits > 50);
    free(file);
    for (int i = 0; i < NREC; i++)
        free(pl[i]);
}

static void test_resync_every_offset(void **state)
{
    uint8_t *pl[NREC];
    size_t len[NREC], flen;
    uint64_t offs[NREC];
    make_payloads(pl, len);
    uint8_t *file = encode((const void *const *)pl, len, 12, &flen, offs);
    dlg_source src;
    dlg_mem_file mf;
    dlg_source_mem(&src, &mf, file, flen, "mem.rec");
    dlg_rec_reader *r;
    dlg_data_err err;
    assert_int_equal(dlg_rec_reader_open(&r, &src, 100, &err), 0);
    int next = 0;
    for (uint64_t off = 0; off < flen; off++) {
        while (next < 12 && offs[next] < off)
            next++;
        uint64_t found = 0;
        int rc = dlg_rec_reader_sync(r, off, &found, &err);
        if (next == 12) {
            assert_int_equal(rc, 0);
            continue;
        }
        assert_int_equal(rc, 1);
        assert_int_equal(found, offs[next]);
        dlg_rec rec;
        assert_int_equal(dlg_rec_next(r, &rec, &err), 1);
        assert_int_equal(rec.len, len[next]);
        if (len[next])
            assert_memory_equal(rec.data, pl[next], len[next]);
    }
    dlg_rec_reader_close(r);
    free(file);
    for (int i = 0; i < NREC; i++)
        free(pl[i]);
}

static void test_fd_append(void **state)
{
    char path[] = "/tmp/dlg_rec_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    dlg_rec_writer *w;
    dlg_data_err err;
    uint64_t off;
    assert_int_equal(dlg_rec_writer_open_fd(&w, fd, path, &err), 0);
    assert_int_equal(dlg_rec_write(w, "hello", 5, &off, &err), 0);
    assert_int_equal(off, 0);
    assert_int_equal(dlg_rec_writer_close(w, &err), 0);
    assert_int_equal(dlg_rec_writer_open_fd(&w, fd, path, &err), 0); /* append */
    assert_int_equal(dlg_rec_write(w, "world!", 6, &off, &err), 0);
    assert_int_equal(off, 16);
    assert_int_equal(dlg_rec_writer_offset(w), 32);
    assert_int_equal(dlg_rec_writer_close(w, &err), 0);

    dlg_source src;
    assert_int_equal(dlg_source_open_path(&src, path, &err), 0);
    assert_int_equal(src.size, 32);
    dlg_rec_reader *r;
    dlg_rec rec;
    assert_int_equal(dlg_rec_reader_open(&r, &src, 0, &err), 0);
    assert_int_equal(dlg_rec_next(r, &rec, &err), 1);
    assert_memory_equal(rec.data, "hello", 5);
    assert_int_equal(dlg_rec_next(r, &rec, &err), 1);
    assert_memory_equal(rec.data, "world!", 6);
    assert_int_equal(rec.offset, 16);
    assert_int_equal(dlg_rec_next(r, &rec, &err), 0);
    dlg_rec_reader_close(r);
    dlg_source_close_fd(&src);

    /* A file whose size is not a multiple of 4 is not a .rec to append to. */
    assert_int_equal(write(fd, "x", 1), 1);
    assert_int_equal(dlg_rec_writer_open_fd(&w, fd, path, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "byte 33: not a multiple of 4"));
    close(fd);
    unlink(path);
}

static void test_too_large(void **state)
{
    memout m;
    dlg_output o;
    memout_init(&m, &o, "big.rec");
    dlg_rec_writer *w;
    dlg_data_err err;
    assert_int_equal(dlg_rec_writer_open(&w, &o, 0, &err), 0);
    uint8_t x = 0;
    assert_int_equal(dlg_rec_write(w, &x, 1u << 29, NULL, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "too large"));
    assert_int_equal(dlg_rec_writer_splits(w), 0);
    dlg_rec_writer_close(w, &err);
    free(m.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_record_bytes),  cmocka_unit_test(test_aligned_magic_splits),
        cmocka_unit_test(test_unaligned_magic_no_split), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_resync_every_offset), cmocka_unit_test(test_fd_append),
        cmocka_unit_test(test_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
