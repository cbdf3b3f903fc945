/* The dataset writers when memory runs out: each allocation of writing
 * 1200 records (past LMDB's commit of 1000) to a RecordIO file and to a
 * Caffe LMDB fails in turn (rt_oom.h).  A write that returned 0, closed
 * with 0, must read back record for record; a failure must say "out of
 * memory".  A preprocess or mkdata that reported success over a short or
 * corrupt dataset would hand a benchmark wrong input.  And mkdata's image
 * renderer allocates nothing: its pixels are a function of the seed alone,
 * never of the memory there was (a failed malloc once left out the texture
 * of images over about 500 pixels a side, and mkdata reported success). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datum.h"
#include "lmdb_dataset.h"
#include "recordio.h"
#include "synth.h"
#include "rt_oom.h"
#include "tmpdir.h"

enum { RECORDS = 1200 };

static size_t payload(int i, char *buf, size_t cap) { return (size_t)snprintf(buf, cap, "record %d of the test", i); }

static bool says_oom(const dlg_data_err *err)
{
    return strstr(err->msg, "out of memory") || strstr(err->msg, "Cannot allocate memory");
}

/* RecordIO: every record payload(i), the n-th allocation failing; 0 when
 * every call returned 0. */
static int write_rec(const char *path, long n, dlg_data_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    dlg_rec_writer *w = NULL;
    rt_oom_arm(n);
    int rc = dlg_rec_writer_open_fd(&w, fd, path, err);
    char buf[64];
    for (int i = 0; i < RECORDS && rc == 0; i++)
        rc = dlg_rec_write(w, buf, payload(i, buf, sizeof buf), NULL, err);
    if (w) {
        int c = dlg_rec_writer_close(w, err);
        rc = rc ? rc : c;
    }
    close(fd);
    return rc;
}

static void check_rec(const char *path, long n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    dlg_source src;
    dlg_data_err err;
    assert_int_equal(dlg_source_fd(&src, fd, path, &err), 0);
    dlg_rec_reader *r = NULL;
    assert_int_equal(dlg_rec_reader_open(&r, &src, 1 << 16, &err), 0);
    dlg_rec rec;
    char want[64];
    for (int i = 0; i < RECORDS; i++) {
        size_t len = payload(i, want, sizeof want);
        if (dlg_rec_next(r, &rec, &err) != 1 || rec.len != len || memcmp(rec.data, want, len) != 0)
            fail_msg("recordio, allocation %ld failed, written whole: record %d does not read back (%s)", n, i,
                     err.msg);
    }
    if (dlg_rec_next(r, &rec, &err) != 0)
        fail_msg("recordio, allocation %ld failed: more than %d records", n, RECORDS);
    dlg_rec_reader_close(r);
    close(fd);
}

/* LMDB: record i the encoded "file" payload(i), label i % 10. */
static int write_lmdb(const char *path, long n, dlg_data_err *err)
{
    dlg_lmdb_writer *w = NULL;
    rt_oom_arm(n);
    int rc = dlg_lmdb_writer_open(&w, path, err);
    char buf[64], rel[32];
    for (int i = 0; i < RECORDS && rc == 0; i++) {
        dlg_datum d;
        dlg_datum_init(&d);
        dlg_datum_set_encoded(&d, buf, payload(i, buf, sizeof buf), i % 10);
        snprintf(rel, sizeof rel, "img%d.jpg", i);
        rc = dlg_lmdb_writer_put(w, i, rel, &d, err);
    }
    if (w) {
        int c = dlg_lmdb_writer_close(w, err);
        rc = rc ? rc : c;
    }
    return rc;
}

static void check_lmdb(const char *path, long n)
{
    dlg_lmdb *db = NULL;
    dlg_data_err err;
    if (dlg_lmdb_open(&db, path, &err) != 0)
        fail_msg("lmdb, allocation %ld failed, written whole: it does not open: %s", n, err.msg);
    assert_int_equal(dlg_lmdb_count(db), RECORDS);
    dlg_lmdb_cursor *c = NULL;
    assert_int_equal(dlg_lmdb_cursor_open(db, &c, &err), 0);
    dlg_lmdb_record rec;
    char want[64];
    for (int i = 0; i < RECORDS; i++) {
        size_t len = payload(i, want, sizeof want);
        if (dlg_lmdb_next(c, &rec, &err) != 1 || rec.datum->data_len != len ||
            memcmp(rec.datum->data, want, len) != 0 || rec.datum->label != i % 10)
            fail_msg("lmdb, allocation %ld failed, written whole: record %d does not read back (%s)", n, i, err.msg);
    }
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(db);
}

static void sweep(const char *kind, int (*write)(const char *, long, dlg_data_err *),
                  void (*check)(const char *, long))
{
    char dir[32], path[64];
    tmpdir_make(dir, "wroom");
    int failures = 0;
    long n = 1;
    for (; n < 100000; n++) {
        snprintf(path, sizeof path, "%s/%ld", dir, n);
        dlg_data_err err = {0};
        int rc = write(path, n, &err);
        long made = rt_oom_disarm();
        if (rc != 0) {
            failures++;
            if (!says_oom(&err))
                fail_msg("%s, allocation %ld failed: %d '%s'", kind, n, rc, err.msg);
        } else {
            check(path, n);
        }
        tmpdir_rmrf(path);
        if (made < n)
            break; /* nothing failed: every allocation was seen */
    }
    fprintf(stderr, "%s: %ld allocations, %d writes failed saying so\n", kind, n, failures);
    assert_true(n < 100000);
    assert_true(failures > 0);
    tmpdir_rmrf(dir);
}

static void recordio_oom(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    sweep("recordio", write_rec, check_rec);
}

static void lmdb_oom(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    sweep("lmdb", write_lmdb, check_lmdb);
}

/* The largest image and an odd one: no allocation, so none can fail. */
static void render_allocates_nothing(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    static const int sides[][2] = {{DLG_SYNTH_MAX_SIDE, DLG_SYNTH_MAX_SIDE}, {792, 611}, {DLG_SYNTH_MIN_SIDE, 97}};
    size_t cap = (size_t)DLG_SYNTH_MAX_SIDE * DLG_SYNTH_MAX_SIDE * 3;
    uint8_t *rgb = malloc(cap);
    assert_non_null(rgb);
    for (size_t k = 0; k < sizeof sides / sizeof sides[0]; k++) {
        rt_oom_arm(1);
        dlg_synth_image_render(5, k, (int)k, sides[k][0], sides[k][1], rgb);
        long made = rt_oom_disarm();
        if (made != 0)
            fail_msg("rendering %dx%d made %ld allocation(s)", sides[k][0], sides[k][1], made);
    }
    free(rgb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recordio_oom),
        cmocka_unit_test(lmdb_oom),
        cmocka_unit_test(render_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
