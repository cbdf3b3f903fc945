/* Caffe LMDB datasets: convert_imageset key format, commit batching,
 * map growth, ordered and random access, and the error cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lmdb_dataset.h"
#include "tmpdir.h"

#define N 2500
#define C 3
#define H 4
#define W 5

static void pixels(uint8_t *px, int i)
{
    for (int k = 0; k < C * H * W; k++)
        px[k] = (uint8_t)(i * 7 + k);
}

static void check_record(const dlg_lmdb_record *rec, int i)
{
    char key[64];
    int n = snprintf(key, sizeof key, "%08d_cls%d/img %d.JPEG", i, i % 10, i);
    assert_int_equal(rec->index, i);
    assert_int_equal(rec->key_len, n);
    assert_memory_equal(rec->key, key, n);
    const dlg_datum *d = rec->datum;
    if (i % 2 == 0) {
        uint8_t px[C * H * W];
        pixels(px, i);
        assert_false(d->encoded);
        assert_int_equal(d->channels, C);
        assert_int_equal(d->height, H);
        assert_int_equal(d->width, W);
        assert_int_equal(d->data_len, C * H * W);
        assert_memory_equal(d->data, px, sizeof px);
    } else {
        char file[32];
        n = snprintf(file, sizeof file, "\xff\xd8 jpeg %d", i);
        assert_true(d->encoded);
        assert_int_equal(d->data_len, n);
        assert_memory_equal(d->data, file, n);
    }
    assert_int_equal(d->label, i % 1000);
}

static void test_round_trip(void **state)
{
    char dir[64], path[80];
    tmpdir_make(dir, "lmdb");
    snprintf(path, sizeof path, "%s/train_lmdb", dir);
    dlg_lmdb_writer *w;
    dlg_data_err err;
    assert_int_equal(dlg_lmdb_writer_open(&w, path, &err), 0);
    for (int i = 0; i < N; i++) {
        char rel[32], file[32];
        snprintf(rel, sizeof rel, "cls%d/img %d.JPEG", i % 10, i);
        dlg_datum d;
        dlg_datum_init(&d);
        uint8_t px[C * H * W];
        if (i % 2 == 0) {
            pixels(px, i);
            dlg_datum_set_raw(&d, C, H, W, px, sizeof px, i % 1000);
        } else {
            int n = snprintf(file, sizeof file, "\xff\xd8 jpeg %d", i);
            dlg_datum_set_encoded(&d, file, (size_t)n, i % 1000);
        }
        assert_int_equal(dlg_lmdb_writer_put(w, i, rel, &d, &err), 0);
        if (i == 998)
            assert_int_equal(dlg_lmdb_writer_commits(w), 0);
        if (i == 999)
            assert_int_equal(dlg_lmdb_writer_commits(w), 1);
    }
    assert_int_equal(dlg_lmdb_writer_commits(w), 2);
    assert_int_equal(dlg_lmdb_writer_count(w), N);
    assert_int_equal(dlg_lmdb_writer_close(w, &err), 0);

    /* Refuses to overwrite. */
    assert_int_equal(dlg_lmdb_writer_open(&w, path, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "already exists and is not empty"));

    dlg_lmdb *db;
    assert_int_equal(dlg_lmdb_open(&db, path, &err), 0);
    assert_int_equal(dlg_lmdb_count(db), N);
    dlg_lmdb_cursor *c;
    assert_int_equal(dlg_lmdb_cursor_open(db, &c, &err), 0);
    dlg_lmdb_record rec;
    for (int i = 0; i < N; i++) {
        assert_int_equal(dlg_lmdb_next(c, &rec, &err), 1);
        check_record(&rec, i);
    }
    assert_int_equal(dlg_lmdb_next(c, &rec, &err), 0);
    dlg_lmdb_rewind(c);
    assert_int_equal(dlg_lmdb_next(c, &rec, &err), 1);
    check_record(&rec, 0);

    /* Random access: backwards, jumps, neighbours, checkpoint boundaries. */
    static const int order[] = {2499, 0, 256, 255, 257, 1000, 1001, 1003, 999, 2048, 7, 7, 2498};
    for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
        assert_int_equal(dlg_lmdb_seek(c, (uint64_t)order[k], &rec, &err), 0);
        check_record(&rec, order[k]);
    }
    uint32_t s = 1;
    for (int k = 0; k < 300; k++) {
        int i = (int)((s = s * 1103515245u + 12345u) >> 8) % N;
        assert_int_equal(dlg_lmdb_seek(c, (uint64_t)i, &rec, &err), 0);
        check_record(&rec, i);
    }
    assert_int_equal(dlg_lmdb_next(c, &rec, &err), 1); /* continues after the seek */
    assert_int_equal(dlg_lmdb_seek(c, N, &rec, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "record 2500 out of range (2500 records)"));

    /* A second cursor (another thread's) works independently. */
    dlg_lmdb_cursor *c2;
    assert_int_equal(dlg_lmdb_cursor_open(db, &c2, &err), 0);
    assert_int_equal(dlg_lmdb_seek(c2, 1234, &rec, &err), 0);
    check_record(&rec, 1234);
    dlg_lmdb_cursor_close(c2);
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(db);
    tmpdir_rmrf(dir);
}

static void test_key_format(void **state)
{
    char k[64];
    assert_int_equal(dlg_lmdb_key(k, sizeof k, 42, "n01440764/img.JPEG"), 27);
    assert_string_equal(k, "00000042_n01440764/img.JPEG");
    assert_int_equal(dlg_lmdb_key(k, sizeof k, 123456789, "a"), 11);
    assert_string_equal(k, "123456789_a");
    assert_int_equal(dlg_lmdb_key(k, 8, 1, "a"), -1);
}

static void test_map_grows(void **state)
{
    char dir[64], path[80];
    tmpdir_make(dir, "lmdb");
    snprintf(path, sizeof path, "%s/big", dir);
    dlg_lmdb_writer *w;
    dlg_data_err err;
    size_t vlen = 80 * 1024; /* 1100 x 80 KiB > the initial 64 MiB map */
    uint8_t *val = malloc(vlen);
    assert_int_equal(dlg_lmdb_writer_open(&w, path, &err), 0);
    for (int i = 0; i < 1100; i++) {
        char key[32];
        int n = dlg_lmdb_key(key, sizeof key, i, "x");
        memset(val, i & 0xff, vlen);
        size_t dlen = vlen - 6; /* an encoded Datum: data (3-byte length), encoded=true */
        val[0] = 0x22;
        val[1] = (uint8_t)((dlen & 0x7f) | 0x80);
        val[2] = (uint8_t)(((dlen >> 7) & 0x7f) | 0x80);
        val[3] = (uint8_t)(dlen >> 14);
        val[vlen - 2] = 0x38;
        val[vlen - 1] = 0x01;
        assert_int_equal(dlg_lmdb_writer_put_raw(w, key, (size_t)n, val, vlen, &err), 0);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, &err), 0);
    dlg_lmdb *db;
    assert_int_equal(dlg_lmdb_open(&db, path, &err), 0);
    assert_int_equal(dlg_lmdb_count(db), 1100);
    dlg_lmdb_cursor *c;
    dlg_lmdb_record rec;
    assert_int_equal(dlg_lmdb_cursor_open(db, &c, &err), 0);
    assert_int_equal(dlg_lmdb_seek(c, 1099, &rec, &err), 0);
    assert_true(rec.datum->encoded);
    assert_int_equal(rec.datum->data_len, vlen - 6);
    assert_int_equal(rec.value_len, vlen);
    assert_int_equal(rec.datum->data[vlen - 7], 1099 & 0xff);
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(db);
    free(val);
    struct stat st;
    char data[100];
    snprintf(data, sizeof data, "%s/data.mdb", path);
    assert_int_equal(stat(data, &st), 0);
    assert_true(st.st_size > (64 << 20));
    tmpdir_rmrf(dir);
}

static void test_errors(void **state)
{
    char dir[64], path[80];
    tmpdir_make(dir, "lmdb");
    dlg_lmdb *db;
    dlg_data_err err;
    /* A directory with no data.mdb. */
    assert_int_equal(dlg_lmdb_open(&db, dir, &err), -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "not an LMDB"));
    /* A file that is not an LMDB. */
    snprintf(path, sizeof path, "%s/junk", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 3000; i++)
        fputs("not an lmdb ", f);
    fclose(f);
    assert_int_equal(dlg_lmdb_open(&db, path, &err), -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "junk: not an LMDB"));
    /* Missing path. */
    snprintf(path, sizeof path, "%s/nothere", dir);
    assert_int_equal(dlg_lmdb_open(&db, path, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "nothere: cannot open LMDB"));
    /* Empty database. */
    dlg_lmdb_writer *w;
    snprintf(path, sizeof path, "%s/empty", dir);
    assert_int_equal(dlg_lmdb_writer_open(&w, path, &err), 0);
    assert_int_equal(dlg_lmdb_writer_close(w, &err), 0);
    assert_int_equal(dlg_lmdb_open(&db, path, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "empty: LMDB dataset is empty (0 records)"));
    /* A value that is not a Datum names its key. */
    snprintf(path, sizeof path, "%s/bad", dir);
    assert_int_equal(dlg_lmdb_writer_open(&w, path, &err), 0);
    assert_int_equal(dlg_lmdb_writer_put_raw(w, "00000000_ok", 11, "\x28\x01", 2, &err), 0);
    assert_int_equal(dlg_lmdb_writer_put_raw(w, "00000001_bad.jpg", 16, "\x22\x09zz", 4, &err), 0);
    assert_int_equal(dlg_lmdb_writer_put_raw(w, "", 0, "x", 1, &err), -DLG_EINVAL);
    assert_int_equal(dlg_lmdb_writer_close(w, &err), 0);
    assert_int_equal(dlg_lmdb_open(&db, path, &err), 0);
    dlg_lmdb_cursor *c;
    dlg_lmdb_record rec;
    assert_int_equal(dlg_lmdb_cursor_open(db, &c, &err), 0);
    assert_int_equal(dlg_lmdb_next(c, &rec, &err), 1);
    assert_int_equal(rec.datum->label, 1);
    assert_int_equal(dlg_lmdb_next(c, &rec, &err), -DLG_ECORRUPT);
    char want[200];
    snprintf(want, sizeof want,
             "%s: key '00000001_bad.jpg' (record 1): value: not a valid Caffe Datum: length runs "
             "past the end of the message at byte 1",
             path);
    assert_string_equal(err.msg, want);
    assert_int_equal(dlg_lmdb_seek(c, 1, &rec, &err), -DLG_ECORRUPT);
    assert_string_equal(err.msg, want);
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(db);
    tmpdir_rmrf(dir);
}

/* Copies the first n bytes of from into to (n past the end copies it all and
 * pads with zeros: a file longer than its LMDB needs). */
static void copy_prefix(const char *from, const char *to, long n)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    for (long i = 0; i < n; i++) {
        int ch = fgetc(in);
        fputc(ch == EOF ? 0 : ch, out);
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* Opens dir (or a single file) expecting the one error line want. */
static void open_fails(const char *path, const char *want)
{
    dlg_lmdb *db = NULL;
    dlg_data_err err;
    dlg_data_err_clear(&err);
    int rc = dlg_lmdb_open(&db, path, &err);
    assert_string_equal(err.msg, want);
    assert_int_equal(rc, -DLG_ECORRUPT);
    assert_null(db);
}

/* A truncated data.mdb: LMDB maps the whole file and trusts its meta page, so
 * without a size check the first read of a missing page is a SIGBUS.  Every
 * cut is refused at open with the byte counts; the whole file still reads. */
/* val (vlen bytes, 133..16388) as a serialised encoded Datum: data of
 * vlen - 5 bytes filled with fill (its length a 2-byte varint), then
 * encoded = true. */
static void encoded_datum(uint8_t *val, size_t vlen, int fill)
{
    size_t dlen = vlen - 5;
    memset(val, fill, vlen);
    val[0] = 0x22;
    val[1] = (uint8_t)((dlen & 0x7f) | 0x80);
    val[2] = (uint8_t)(dlen >> 7);
    val[vlen - 2] = 0x38;
    val[vlen - 1] = 0x01;
}

static void test_truncated(void **state)
{
    char dir[64], src[80], file[100], cut[80], cutfile[100], want[400];
    tmpdir_make(dir, "lmdb");
    snprintf(src, sizeof src, "%s/src", dir);
    snprintf(file, sizeof file, "%s/data.mdb", src);
    snprintf(cut, sizeof cut, "%s/cut", dir);
    snprintf(cutfile, sizeof cutfile, "%s/data.mdb", cut);
    dlg_lmdb_writer *w;
    dlg_data_err err;
    assert_int_equal(dlg_lmdb_writer_open(&w, src, &err), 0);
    uint8_t val[5000];
    for (int i = 0; i < 260; i++) { /* 700-byte values fill leaf pages; 5000-byte */
        size_t vlen = i < 200 ? 700 : sizeof val; /* ones take overflow pages */
        char key[32];
        int n = dlg_lmdb_key(key, sizeof key, i, "x.jpg");
        encoded_datum(val, vlen, i);
        assert_int_equal(dlg_lmdb_writer_put_raw(w, key, (size_t)n, val, vlen, &err), 0);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, &err), 0);

    /* The writer leaves the file exactly as long as its pages: that length
     * and the OS page size are the expected numbers, not LMDB's own. */
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    long ps = sysconf(_SC_PAGESIZE), full = (long)st.st_size;
    if (ps > 32768)
        ps = 32768; /* LMDB's largest page */
    assert_int_equal(full % ps, 0);
    long last = full / ps - 1;
    assert_true(last > 100);

    /* One page short, mid-page, one byte, just the meta pages, the audit's
     * half + 123, and inside the second meta page past its header. */
    const long cuts[] = {full - ps,      full - ps - ps / 2, full - 1,
                         2 * ps,         full / 2 + 123,     ps + ps / 2};
    assert_int_equal(mkdir(cut, 0755), 0);
    for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
        copy_prefix(file, cutfile, cuts[k]);
        snprintf(want, sizeof want,
                 "%s: truncated at byte %ld (its LMDB needs %ld: last page %ld of size %ld)",
                 cutfile, cuts[k], full, last, ps);
        open_fails(cut, want);
        /* A single-file LMDB (MDB_NOSUBDIR) names the file itself. */
        open_fails(cutfile, want);
    }
    /* Inside the second meta page LMDB itself refuses the file; the first
     * meta page (the writer's initial one: no data pages yet) still says
     * it is an LMDB of two pages. */
    copy_prefix(file, cutfile, ps + 100);
    snprintf(want, sizeof want,
             "%s: truncated at byte %ld (its LMDB needs %ld: last page 1 of size %ld)", cutfile,
             ps + 100, 2 * ps, ps);
    open_fails(cut, want);
    copy_prefix(file, cutfile, 100);
    snprintf(want, sizeof want, "%s: truncated at byte 100, inside its first LMDB meta page",
             cutfile);
    open_fails(cut, want);
    copy_prefix(file, cutfile, 0);
    snprintf(want, sizeof want, "%s: not an LMDB: the file is empty", cutfile);
    open_fails(cut, want);

    /* Whole, or longer than it needs (LMDB files only grow): every record reads. */
    const long fine[] = {full, full + 3 * ps + 5};
    for (size_t k = 0; k < sizeof fine / sizeof *fine; k++) {
        copy_prefix(file, cutfile, fine[k]);
        dlg_lmdb *db;
        assert_int_equal(dlg_lmdb_open(&db, cut, &err), 0);
        assert_int_equal(dlg_lmdb_count(db), 260);
        dlg_lmdb_cursor *c;
        dlg_lmdb_record rec;
        assert_int_equal(dlg_lmdb_cursor_open(db, &c, &err), 0);
        for (int i = 0; i < 260; i++) {
            assert_int_equal(dlg_lmdb_next(c, &rec, &err), 1);
            assert_true(rec.datum->encoded);
            assert_int_equal(rec.datum->data_len, (i < 200 ? 700 : sizeof val) - 5);
            assert_int_equal(rec.datum->data[rec.datum->data_len - 1], i & 0xff);
        }
        assert_int_equal(dlg_lmdb_next(c, &rec, &err), 0);
        dlg_lmdb_cursor_close(c);
        dlg_lmdb_close(db);
    }
    tmpdir_rmrf(dir);
}

/* Writes n records to path: key dlg_lmdb_key(i, "x.jpg"), value an encoded
 * Datum of vlen bytes filled with i, or value special (its length sp_len)
 * for record sp. */
static void write_db(const char *path, int n, size_t vlen, int sp, const void *special,
                     size_t sp_len)
{
    dlg_lmdb_writer *w;
    dlg_data_err err;
    uint8_t val[1000];
    assert_true(vlen <= sizeof val && vlen > 5 && vlen < 16000);
    assert_int_equal(dlg_lmdb_writer_open(&w, path, &err), 0);
    for (int i = 0; i < n; i++) {
        char key[32];
        int kn = dlg_lmdb_key(key, sizeof key, i, "x.jpg");
        encoded_datum(val, vlen, i);
        const void *v = i == sp ? special : val;
        assert_int_equal(dlg_lmdb_writer_put_raw(w, key, (size_t)kn, v, i == sp ? sp_len : vlen,
                                                 &err),
                         0);
    }
    assert_int_equal(dlg_lmdb_writer_close(w, &err), 0);
}

/* The data.mdb of dir read into memory; *len its size, *at the offset of
 * the one copy of mark (-1: none). */
static uint8_t *read_marked(const char *file, long *len, const char *mark, long *at)
{
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    uint8_t *b = malloc((size_t)*len);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)*len, f), (size_t)*len);
    fclose(f);
    *at = -1;
    size_t ml = strlen(mark);
    for (long i = 0; i + (long)ml <= *len; i++)
        if (memcmp(b + i, mark, ml) == 0) {
            assert_int_equal(*at, -1);
            *at = i;
        }
    return b;
}

static void write_file(const char *file, const uint8_t *b, long len)
{
    FILE *f = fopen(file, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, (size_t)len, f), (size_t)len);
    assert_int_equal(fclose(f), 0);
}

/* Sets the 16-bit field at off of the leaf node whose value starts at val
 * (key of klen bytes): liblmdb's MDB_node is data size lo, hi, flags, key
 * size, then the key and the value (little-endian x86). */
static void set_node_u16(uint8_t *b, long val, size_t klen, int off, uint16_t x)
{
    uint8_t *node = b + val - (long)klen - 8;
    memcpy(node + off, &x, sizeof x);
}

#define MARK "MARKED-VALUE"

/* A corrupt leaf node whose key or value runs past its page (up to the end
 * of data.mdb and beyond: in liblmdb's map, which is larger, but not backed
 * by the file): liblmdb returns it as it is, and reading it was a SIGBUS
 * (the audit's busdb).  Now the check at open refuses it in one line
 * naming the file and the node's byte offset. */
static void test_outside_file(void **state)
{
    char dir[64], path[80], file[100], want[400], key[32];
    tmpdir_make(dir, "lmdb");
    snprintf(path, sizeof path, "%s/db", dir);
    snprintf(file, sizeof file, "%s/data.mdb", path);
    /* Record 1: a Datum whose data field (400000 bytes) the decoder skips
     * over to read the next tag: inside the patched size, past the file. */
    const uint8_t special[] = {0x22, 0x80, 0xb5, 0x18, 'M', 'A', 'R', 'K', 'E', 'D',
                               '-',  'V',  'A',  'L',  'U', 'E'};
    write_db(path, 3, 50, 1, special, sizeof special);
    size_t klen = (size_t)dlg_lmdb_key(key, sizeof key, 1, "x.jpg");
    long len, at;
    uint8_t *orig = read_marked(file, &len, MARK, &at);
    assert_true(at > 4);
    long val = at - 4, node = val - (long)klen - 8;
    assert_true(len < 400000);
    uint8_t *b = malloc((size_t)len);
    assert_non_null(b);

    for (int which = 0; which < 2; which++) {
        memcpy(b, orig, (size_t)len);
        if (which == 0) { /* value size 1000000 */
            set_node_u16(b, val, klen, 0, 1000000 & 0xffff);
            set_node_u16(b, val, klen, 2, 1000000 >> 16);
            snprintf(want, sizeof want,
                     "%s: corrupt LMDB at byte %ld (page %ld): record 1's 1000000-byte value "
                     "runs past its page",
                     file, node, node / sysconf(_SC_PAGESIZE));
        } else { /* key size 65535 */
            set_node_u16(b, val, klen, 6, 0xffff);
            snprintf(want, sizeof want,
                     "%s: corrupt LMDB at byte %ld (page %ld): node 1's 65535-byte key runs "
                     "past the page",
                     file, node + 6, node / sysconf(_SC_PAGESIZE));
        }
        write_file(file, b, len);
        open_fails(path, want);
    }
    free(b);
    free(orig);
    tmpdir_rmrf(dir);
}

/* liblmdb's on-disk layout (x86-64), as the corruptions below need it. */
static uint64_t le_at(const uint8_t *p, int n)
{
    uint64_t v = 0;
    memcpy(&v, p, (size_t)n);
    return v;
}

static void le_put(uint8_t *p, uint64_t v, int n) { memcpy(p, &v, (size_t)n); }

/* The main tree's root page, from the newer of the two meta pages. */
static long root_page(const uint8_t *b, long ps)
{
    const uint8_t *m = le_at(b + ps + 144, 8) > le_at(b + 144, 8) ? b + ps : b;
    return (long)le_at(m + 88 + 40, 8);
}

/* Byte offset of node i of page pg (its u16 offset follows the 16-byte header). */
static long node_at(const uint8_t *b, long ps, long pg, int i)
{
    return pg * ps + (long)le_at(b + pg * ps + 16 + 2 * i, 2);
}

/* A corrupt page makes liblmdb assert (abort()) or fault, which no error
 * path can catch: the audit's leaf marked a branch aborted the whole run,
 * a duplicate-data flag was a SIGSEGV.  Each corruption is now refused at
 * open with one line naming data.mdb and the byte that is wrong (without
 * the check, the first three kill this test). */
static void test_corrupt_pages(void **state)
{
    char dir[64], path[80], file[100], want[400], key[32];
    tmpdir_make(dir, "lmdb");
    snprintf(path, sizeof path, "%s/db", dir);
    snprintf(file, sizeof file, "%s/data.mdb", path);
    uint8_t big[5000];
    encoded_datum(big, sizeof big, 7);
    memcpy(big + 10, MARK, strlen(MARK));
    write_db(path, 60, 700, 59, big, sizeof big); /* 5 per 4 KiB leaf; record 59 overflows */
    long len, at, ps = sysconf(_SC_PAGESIZE);
    int klen = dlg_lmdb_key(key, sizeof key, 1, "x.jpg");
    uint8_t *orig = read_marked(file, &len, key, &at); /* record 1: first leaf, not a separator */
    free(orig);
    long k59;
    dlg_lmdb_key(key, sizeof key, 59, "x.jpg");
    orig = read_marked(file, &len, key, &k59);
    assert_true(at > 0 && k59 > 0);
    long root = root_page(orig, ps);
    long n0 = node_at(orig, ps, root, 0);
    long leaf = (long)(le_at(orig + n0, 2) | le_at(orig + n0 + 2, 2) << 16);
    assert_int_equal(le_at(orig + root * ps + 10, 2), 0x01); /* P_BRANCH */
    assert_int_equal(le_at(orig + leaf * ps + 10, 2), 0x02); /* P_LEAF */
    long l0 = node_at(orig, ps, leaf, 0), l1 = at - 8;
    uint8_t *b = malloc((size_t)len);
    assert_non_null(b);

    for (int which = 0; which < 7; which++) {
        memcpy(b, orig, (size_t)len);
        long off = 0;
        const char *what = "";
        char msg[200];
        switch (which) {
        case 0: /* a leaf marked a branch: liblmdb asserted IS_LEAF and aborted */
            le_put(b + leaf * ps + 10, 0x01, 2);
            off = leaf * ps + 10;
            what = "page flags 0x1 where a leaf page belongs";
            break;
        case 1: /* a branch of one child: liblmdb asserted NUMKEYS > 1 */
            le_put(b + root * ps + 12, 18, 2);
            off = root * ps + 12;
            what = "a branch page holding 1 key(s)";
            break;
        case 2: /* a sorted-duplicates node in a plain database: SIGSEGV */
            le_put(b + l0 + 4, 0x04, 2);
            off = l0 + 4;
            what = "record 0 has node flags 0x4 (not a plain key/value record)";
            break;
        case 3: /* a child page past the end of the file */
            le_put(b + n0, 0xffff, 2);
            le_put(b + n0 + 2, 0x00ff, 2);
            off = n0;
            snprintf(msg, sizeof msg, "refers to page 16777215, not a data page of the %ld-page "
                     "file", len / ps);
            what = msg;
            break;
        case 4: /* an overflow value past the end of the file */
            le_put(b + k59 + klen, 0xffffff, 8);
            off = k59 + klen;
            snprintf(msg, sizeof msg, "record 59's 5000-byte value on overflow page 16777215 is "
                     "not inside the %ld-byte file", len);
            what = msg;
            break;
        case 5: /* a node offset out of its page */
            le_put(b + leaf * ps + 16, 0xfffc, 2);
            off = leaf * ps + 16;
            what = "node 0 at offset 65532 outside the page's nodes";
            break;
        default: /* record 1's key made equal to record 0's */
            b[at + 7] = '0';
            off = l1;
            what = "record 1's key is not after the one before it";
            break;
        }
        write_file(file, b, len);
        snprintf(want, sizeof want, "%s: corrupt LMDB at byte %ld (page %ld): %s", file, off,
                 off / ps, what);
        open_fails(path, want);
    }
    /* The intact file opens, and its last (overflow) record reads. */
    write_file(file, orig, len);
    dlg_lmdb *db;
    dlg_lmdb_cursor *c;
    dlg_lmdb_record rec;
    dlg_data_err err;
    assert_int_equal(dlg_lmdb_open(&db, path, &err), 0);
    assert_int_equal(dlg_lmdb_cursor_open(db, &c, &err), 0);
    assert_int_equal(dlg_lmdb_seek(c, 59, &rec, &err), 0);
    assert_int_equal(rec.value_len, sizeof big);
    assert_memory_equal(rec.value + 10, MARK, strlen(MARK));
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(db);
    free(b);
    free(orig);
    tmpdir_rmrf(dir);
}

/* What liblmdb trusts in mdb_env_open itself, before any check can read a
 * page: each corruption (found by fuzz_lmdb) killed the process there, or
 * asked for a checkpoint table the size of the record count, and is now
 * refused at open with one line naming data.mdb and the byte. */
static void test_corrupt_meta(void **state)
{
    char dir[64], path[80], file[100], want[400];
    tmpdir_make(dir, "lmdb");
    snprintf(path, sizeof path, "%s/db", dir);
    snprintf(file, sizeof file, "%s/data.mdb", path);
    write_db(path, 3, 100, -1, NULL, 0);
    long len, at;
    uint8_t *orig = read_marked(file, &len, "no such mark", &at);
    long ps = (long)le_at(orig + 40, 4);                /* the free db's pad: the page size */
    long newer = le_at(orig + ps + 144, 8) > le_at(orig + 144, 8) ? ps : 0; /* higher txnid */
    uint8_t *b = malloc((size_t)len);
    assert_non_null(b);
    for (int which = 0; which < 3; which++) {
        memcpy(b, orig, (size_t)len);
        switch (which) {
        case 0: /* a page size of 0: liblmdb divided by it (SIGFPE) */
            le_put(b + 40, 0, 4);
            snprintf(want, sizeof want, "%s: corrupt LMDB at byte 40 (page 0): page size 0", file);
            break;
        case 1: /* the second meta page newer, with a 64 KiB page: liblmdb read
                 * it through its map at 64 KiB, past the file (SIGBUS) */
            le_put(b + ps + 144, le_at(b + 144, 8) + 1, 8);
            le_put(b + ps + 40, 65536, 4);
            snprintf(want, sizeof want,
                     "%s: corrupt LMDB at byte %ld (page 1): the newer meta page's page size 65536 is "
                     "not the first meta page's %ld",
                     file, ps + 40, ps);
            break;
        default: /* 2^40 records in a 3-page file: 64 GiB of checkpoints asked for */
            le_put(b + newer + 120, (uint64_t)1 << 40, 8);
            snprintf(want, sizeof want,
                     "%s: corrupt LMDB: its meta page counts 1099511627776 records, more than its %ld "
                     "bytes can hold",
                     file, len);
            break;
        }
        write_file(file, b, len);
        open_fails(path, want);
    }
    write_file(file, orig, len);
    dlg_lmdb *db;
    dlg_data_err err;
    assert_int_equal(dlg_lmdb_open(&db, path, &err), 0);
    assert_int_equal(dlg_lmdb_count(db), 3);
    dlg_lmdb_close(db);
    free(b);
    free(orig);
    tmpdir_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_key_format),
        cmocka_unit_test(test_map_grows),  cmocka_unit_test(test_errors),
        cmocka_unit_test(test_truncated),  cmocka_unit_test(test_outside_file),
        cmocka_unit_test(test_corrupt_pages), cmocka_unit_test(test_corrupt_meta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
