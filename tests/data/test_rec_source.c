/* The loader's RecordIO source on a .rec/.idx pair laid out byte by byte as
 * MXNet writes them (dmlc RecordIOWriter, mx.recordio.pack, im2rec's .idx),
 * independent of the project's writer: float label arrays (flag > 0), a
 * record split at an aligned magic, keys with a gap; and the pairs a crash
 * or a wrong copy leaves, which must be named at open, not minutes later. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "loader_src.h"
#include "mock_host.h"
#include "tmpdir.h"

#define MAGIC 0x0a, 0x23, 0xd7, 0xce
#define U32(v) (v) & 0xff, ((v) >> 8) & 0xff, ((v) >> 16) & 0xff, ((v) >> 24) & 0xff
#define ZERO8 0, 0, 0, 0, 0, 0, 0, 0

/* 128 bytes: key 0 at byte 0, key 2 at 36 (split in two parts at 36 and
 * 76), key 3 at 88; key 1 was skipped (im2rec drops unreadable images). */
static const uint8_t REC[] = {
    /* key 0: flag 0, label 2.0, image "JPGa"; 28-byte payload */
    MAGIC, U32(28u), U32(0u), U32(0x40000000u), ZERO8, ZERO8, 'J', 'P', 'G', 'a',
    /* key 2: flag 2, labels {5.0, 7.5}, image = the magic + "xy" (38 bytes):
     * the aligned magic at payload byte 32 splits it (cflag 1, then 3) */
    MAGIC, U32(1u << 29 | 32u), U32(2u), U32(0u), U32(2u), U32(0u), ZERO8, U32(0x40a00000u),
    U32(0x40f00000u),
    MAGIC, U32(3u << 29 | 2u), 'x', 'y', 0, 0,
    /* key 3: flag 1, label {1.0}, image "Z"; 29 bytes + 3 of padding */
    MAGIC, U32(29u), U32(1u), U32(0u), U32(3u), U32(0u), ZERO8, U32(0x3f800000u), 'Z', 0, 0, 0};

typedef struct fixture {
    char dir[32], rec[64], idx[64];
    mock_host m;
} fixture;

static void put(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **st)
{
    static fixture fx;
    memset(&fx, 0, sizeof fx);
    tmpdir_make(fx.dir, "recsrc");
    snprintf(fx.rec, sizeof fx.rec, "%s/t.rec", fx.dir);
    snprintf(fx.idx, sizeof fx.idx, "%s/t.idx", fx.dir);
    put(fx.rec, REC, sizeof REC);
    mock_host_init(&fx.m);
    *st = &fx;
    return 0;
}

static int teardown(void **st)
{
    fixture *fx = *st;
    mock_host_fini(&fx->m);
    tmpdir_rmrf(fx->dir);
    return 0;
}

/* Opens fx->rec with idx_text as its .idx (NULL: none, the .rec is scanned). */
static int open_src(fixture *fx, const char *idx_text, dlg_ld_src **s, dlg_data_err *err)
{
    unlink(fx->idx);
    if (idx_text)
        put(fx->idx, idx_text, strlen(idx_text));
    memset(err, 0, sizeof *err);
    return dlg_ld_src_recordio(s, fx->rec, &fx->m.host, err);
}

static void expect_records(dlg_ld_src *s)
{
    static const struct {
        int32_t label;
        const char *image;
        size_t len;
    } want[] = {{2, "JPGa", 4}, {5, "\x0a\x23\xd7\xcexy", 6}, {1, "Z", 1}};
    assert_int_equal(s->n, 3);
    assert_int_equal(s->bytes, sizeof REC);
    void *w;
    dlg_data_err err = {0};
    assert_int_equal(s->ops->worker_open(s, &w, &err), 0);
    for (uint64_t i = 0; i < 3; i++) {
        dlg_ld_item it;
        memset(&it, 0, sizeof it);
        assert_int_equal(s->ops->read(s, w, i, &it, &err), 0);
        assert_int_equal(it.label, want[i].label);
        assert_int_equal(it.len, want[i].len);
        assert_memory_equal(it.bytes, want[i].image, want[i].len);
    }
    s->ops->worker_close(s, w);
}

static void test_mxnet_layout(void **st)
{
    fixture *fx = *st;
    dlg_ld_src *s;
    dlg_data_err err;
    assert_int_equal(open_src(fx, "0\t0\n2\t36\n3\t88\n", &s, &err), 0);
    expect_records(s);
    s->ops->close(s);
    assert_int_equal(open_src(fx, NULL, &s, &err), 0); /* no .idx: scanned */
    expect_records(s);
    s->ops->close(s);
}

/* The storage says only "no"; the file system says why. */
static void test_missing_rec_says_why(void **st)
{
    fixture *fx = *st;
    char path[96];
    snprintf(path, sizeof path, "%s/gone.rec", fx->dir);
    dlg_ld_src *s;
    dlg_data_err err = {0};
    assert_true(dlg_ld_src_recordio(&s, path, &fx->m.host, &err) < 0);
    assert_non_null(strstr(err.msg, "gone.rec: cannot open: No such file or directory"));
}

/* A .idx that does not belong to the .rec fails at open, naming the .idx. */
static void test_stale_idx_at_open(void **st)
{
    fixture *fx = *st;
    dlg_ld_src *s;
    dlg_data_err err;
    /* an older, shorter .rec's .idx: its last record is not the .rec's last */
    assert_int_equal(open_src(fx, "0\t0\n2\t36\n", &s, &err), -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "t.idx puts record 1 at byte 36) ends at byte 88, but the "
                                    ".rec goes on to byte 128"));
    /* another .rec's .idx: its last offset is inside a record here */
    assert_int_equal(open_src(fx, "0\t0\n2\t40\n", &s, &err), -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "no record starts at byte 40, where"));
    assert_non_null(strstr(err.msg, "t.idx puts record 1"));
    /* ... or at a middle part's header (a magic, but cflag 3) */
    assert_int_equal(open_src(fx, "0\t0\n2\t76\n", &s, &err), -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "no record starts at byte 76"));
}

/* An offset that cuts a record short names the .idx, not only the bytes. */
static void test_idx_cuts_record(void **st)
{
    fixture *fx = *st;
    dlg_ld_src *s;
    dlg_data_err err;
    assert_int_equal(open_src(fx, "0\t0\n2\t36\n9\t76\n3\t88\n", &s, &err), 0);
    void *w;
    assert_int_equal(s->ops->worker_open(s, &w, &err), 0);
    dlg_ld_item it;
    assert_int_equal(s->ops->read(s, w, 1, &it, &err), -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "record 1 at byte 36 needs 48 bytes, but "));
    assert_non_null(strstr(err.msg, "t.idx puts the next record 40 bytes on"));
    s->ops->worker_close(s, w);
    s->ops->close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mxnet_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_rec_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_idx_at_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idx_cuts_record, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
