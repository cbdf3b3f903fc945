/* preprocess never destroys what it did not write: an output that is the
 * input, a file that is not a RecordIO (or .idx), a folder that holds more
 * than an LMDB is refused at check and setup, before any work, and kept
 * byte for byte; what appears at the output during a pass is refused at
 * commit, the pass's .part dropped; and output_bytes counts only what
 * complete passes wrote (the mock host; files read back). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jpeg_fixture.h"
#include "lmdb_dataset.h"
#include "prep_testutil.h"
#include "workload_run.h"

#define CLASSES 3
#define PER_CLASS 4
#define N (CLASSES * PER_CLASS)

typedef struct fx {
    char dir[512], images[600], list[600];
} fx;

static int setup_fx(void **st)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/prep-out-%d", TOOLS_TEST_DIR, (int)getpid());
    if (fx_fresh_dir(f->dir, 1) != 0)
        return -1;
    snprintf(f->images, sizeof f->images, "%s/images", f->dir);
    if (fx_make_images(f->images, CLASSES, PER_CLASS, 7) != 0)
        return -1;
    /* an im2rec .lst of the same images, relative to its own folder */
    snprintf(f->list, sizeof f->list, "%s/trap.lst", f->dir);
    FILE *l = fopen(f->list, "w");
    if (!l)
        return -1;
    for (int i = 0; i < N; i++)
        fprintf(l, "%d\t%d\timages/c%d/img_%d.jpg\n", i, i / PER_CLASS, i / PER_CLASS, i % PER_CLASS);
    fclose(l);
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

static bool exists(const char *p)
{
    struct stat sb;
    return lstat(p, &sb) == 0;
}

/* path holds exactly want[0..n) */
static bool holds(const char *path, const void *want, size_t n)
{
    size_t len = 0;
    uint8_t *b = fx_slurp(path, &len);
    bool same = b && len == n && memcmp(b, want, n) == 0;
    free(b);
    return same;
}

/* preprocess input -> output over `steps` steps */
static void prep(const char *input, const char *output, int steps, wr_result *r)
{
    kv k = {0};
    kv_add(&k, "input=%s", input);
    kv_add(&k, "output=%s", output);
    kv_add(&k, "threads=2");
    wr_run("tools.so", "preprocess", k.ptr, steps, r);
}

/* The workload's check (as the planner and --dry-run ask it) refuses too. */
static void check_refuses(const char *input, const char *output, const char *named)
{
    kv k = {0};
    kv_add(&k, "input=%s", input);
    kv_add(&k, "output=%s", output);
    int rc = 0;
    char err[1024];
    assert_true(wr_check("tools.so", "preprocess", k.ptr, &rc, err, sizeof err));
    if (rc != -DLG_EINVAL || !strstr(err, named) || strncmp(err, "output = ", 9) != 0)
        fail_msg("check of output=%s: rc %d, '%s' (expected a refusal naming %s)", output, rc, err, named);
}

/* The audit's case: a copy of an LMDB plus the user's README in one folder.
 * preprocess deleted data.mdb and lock.mdb at commit, then refused, and
 * left the new database in .part.  Now: refused before any work, all kept.
 * Its own LMDB it still replaces, leaving nothing aside. */
static void test_lmdb_with_more_kept(void **st)
{
    fx *f = *st;
    char db[700], out[720], p[760];
    snprintf(db, sizeof db, "%s/userlmdb", f->dir);
    snprintf(out, sizeof out, "lmdb:%s", db);
    wr_result r;
    for (int run = 0; run < 2; run++) { /* made, then replaced */
        prep(f->images, out, N, &r);
        if (r.setup_rc != 0 || r.step_rc != 0)
            fail_msg("%s", r.error);
    }
    snprintf(p, sizeof p, "%s.old.part", db);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/data.mdb", db);
    size_t n;
    uint8_t *data = fx_slurp(p, &n);
    assert_non_null(data);
    snprintf(p, sizeof p, "%s/README", db);
    assert_int_equal(fx_write(p, "mine\n", 5), 0);

    prep(f->images, out, N, &r);
    printf("  %s\n", r.error);
    assert_int_equal(r.setup_rc, -DLG_EINVAL);
    assert_non_null(strstr(r.error, "README"));
    assert_true(holds(p, "mine\n", 5));
    snprintf(p, sizeof p, "%s/data.mdb", db);
    assert_true(holds(p, data, n));
    snprintf(p, sizeof p, "%s/lock.mdb", db);
    assert_true(exists(p));
    snprintf(p, sizeof p, "%s.part", db);
    assert_false(exists(p));
    check_refuses(f->images, out, "README");
    free(data);
}

/* recordio:PATH over the input list itself, over a user's text file, or
 * beside a .idx that is not an index: refused (before, the list became a
 * .rec and the others were replaced or deleted).  Its own .rec and .idx
 * it still replaces. */
static void test_recordio_foreign_kept(void **st)
{
    fx *f = *st;
    static const char list_text[] = "0\t0\timages/c0/img_0.jpg\n";
    char out[720], own[700], p[760];
    size_t n;
    uint8_t *list = fx_slurp(f->list, &n);
    assert_non_null(list);
    wr_result r;
    snprintf(out, sizeof out, "recordio:%s", f->list);
    prep(f->list, out, N, &r);
    printf("  %s\n", r.error);
    assert_int_equal(r.setup_rc, -DLG_EINVAL);
    assert_non_null(strstr(r.error, "is the input"));
    assert_true(holds(f->list, list, n));
    check_refuses(f->list, out, "is the input");

    snprintf(p, sizeof p, "%s/victim.txt", f->dir);
    assert_int_equal(fx_write(p, "my notes\n", 9), 0);
    snprintf(out, sizeof out, "recordio:%s", p);
    prep(f->images, out, N, &r);
    printf("  %s\n", r.error);
    assert_int_equal(r.setup_rc, -DLG_EINVAL);
    assert_non_null(strstr(r.error, "not a RecordIO file"));
    assert_true(holds(p, "my notes\n", 9));
    check_refuses(f->images, out, "victim.txt");

    /* own.rec replaced twice, then own.idx is a user's list */
    snprintf(own, sizeof own, "%s/own.rec", f->dir);
    snprintf(out, sizeof out, "recordio:%s", own);
    for (int run = 0; run < 2; run++) {
        prep(f->list, out, N, &r);
        if (r.setup_rc != 0 || r.step_rc != 0)
            fail_msg("%s", r.error);
    }
    snprintf(p, sizeof p, "%s/own.idx.old.part", f->dir);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/own.idx", f->dir);
    assert_int_equal(fx_write(p, list_text, strlen(list_text)), 0);
    prep(f->list, out, N, &r);
    printf("  %s\n", r.error);
    assert_int_equal(r.setup_rc, -DLG_EINVAL);
    assert_non_null(strstr(r.error, "own.idx exists and is not an im2rec index"));
    assert_true(holds(p, list_text, strlen(list_text)));
    free(list);
}

/* A storage backend over plain files whose first write to a .rec.part
 * puts a user's file at the final .rec, as someone might during a long
 * pass. */
typedef struct sneak_file {
    dlg_file base;
    int fd;
} sneak_file;

static int sneak_create(const dlg_host *h, const dlg_value *o, void **inst)
{
    (void)h;
    (void)o;
    *inst = NULL;
    return 0;
}
static void sneak_destroy(void *inst) { (void)inst; }
static int sneak_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst;
    sneak_file *sf = (sneak_file *)f;
    bool w = flags == DLG_OPEN_WRITE;
    sf->fd = w ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(path, O_RDONLY);
    size_t n = strlen(path);
    if (w && n > 9 && strcmp(path + n - 9, ".rec.part") == 0) {
        char final[1024];
        snprintf(final, sizeof final, "%.*s", (int)(n - 5), path);
        fx_write(final, "theirs\n", 7);
    }
    return sf->fd < 0 ? h->error(h, DLG_EIO, "%s: cannot open", path) : 0;
}
static int sneak_close(dlg_file *f)
{
    close(((sneak_file *)f)->fd);
    return 0;
}
static int sneak_size(dlg_file *f, uint64_t *out)
{
    struct stat sb;
    if (fstat(((sneak_file *)f)->fd, &sb) != 0)
        return -DLG_EIO;
    *out = (uint64_t)sb.st_size;
    return 0;
}
static int64_t sneak_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    ssize_t r = pread(((sneak_file *)f)->fd, buf, n, (off_t)off);
    return r < 0 ? -DLG_EIO : r;
}
static int sneak_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    return pwrite(((sneak_file *)f)->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -DLG_EIO;
}
static const dlg_storage_ops sneak_ops = {.version = 1, .file_size = sizeof(sneak_file), .create = sneak_create,
                                          .destroy = sneak_destroy, .open = sneak_open, .close = sneak_close,
                                          .size = sneak_size, .read = sneak_read, .write = sneak_write};

static void add_sneak(mock_host *m, void *arg)
{
    (void)arg;
    mock_add_storage(m, "sneak", &sneak_ops, NULL);
}

/* What stands at the output when the pass completes is checked again: a
 * user's file put there meanwhile is kept, the pass's .part files are
 * dropped, and the error says so (before, rename replaced the file). */
static void test_commit_checks_again(void **st)
{
    fx *f = *st;
    char rec[700], out[720], p[760];
    snprintf(rec, sizeof rec, "%s/late.rec", f->dir);
    snprintf(out, sizeof out, "recordio:%s", rec);
    kv k = {0};
    kv_add(&k, "input=%s", f->images);
    kv_add(&k, "output=%s", out);
    kv_add(&k, "threads=1");
    wr_result r;
    wr_run_with("tools.so", "preprocess", k.ptr, N, &r, add_sneak, NULL);
    printf("  %s\n", r.error);
    assert_int_equal(r.setup_rc, 0);
    assert_int_equal(r.step_rc, -DLG_EINVAL);
    assert_non_null(strstr(r.error, "late.rec: exists and is not a RecordIO file"));
    assert_non_null(strstr(r.error, "was dropped"));
    assert_true(holds(rec, "theirs\n", 7));
    snprintf(p, sizeof p, "%s.part", rec);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/late.idx.part", f->dir);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/late.idx", f->dir);
    assert_false(exists(p));
}

/* output_bytes and write_mb_per_s count what complete passes wrote: 0
 * when no pass completed (the .part was dropped; before, its bytes were
 * reported), and two whole passes' files, not the third pass's start. */
static void test_output_bytes_committed(void **st)
{
    fx *f = *st;
    char rec[700], idx[700], out[720];
    snprintf(rec, sizeof rec, "%s/bytes.rec", f->dir);
    snprintf(idx, sizeof idx, "%s/bytes.idx", f->dir);
    snprintf(out, sizeof out, "recordio:%s", rec);
    wr_result r;
    prep(f->images, out, N - 5, &r);
    assert_int_equal(r.step_rc, 0);
    assert_int_equal(wr_int(&r, "passes"), 0);
    assert_int_equal(wr_int(&r, "output_bytes"), 0);
    assert_true(!wr_field(&r, "write_mb_per_s") || wr_double(&r, "write_mb_per_s") == 0.0);
    assert_false(exists(rec));

    prep(f->images, out, 2 * N + 5, &r);
    assert_int_equal(r.step_rc, 0);
    assert_int_equal(wr_int(&r, "passes"), 2);
    struct stat rs, is;
    assert_int_equal(stat(rec, &rs), 0);
    assert_int_equal(stat(idx, &is), 0);
    assert_int_equal(wr_int(&r, "output_bytes"), 2 * (long long)(rs.st_size + is.st_size));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lmdb_with_more_kept),
        cmocka_unit_test(test_recordio_foreign_kept),
        cmocka_unit_test(test_commit_checks_again),
        cmocka_unit_test(test_output_bytes_committed),
    };
    return cmocka_run_group_tests(tests, setup_fx, teardown_fx);
}
