/* preprocess through the mock host: a generated image set converted to
 * RecordIO and LMDB and read back with the core/data readers (count,
 * labels, ids, keys, byte-identical JPEGs in pass-through mode, sizes after
 * resize), list inputs, several passes, corrupt and missing input. */
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
#include <turbojpeg.h>
#include <unistd.h>

#include "jpeg_fixture.h"
#include "lmdb_dataset.h"
#include "prep_testutil.h"
#include "recordio.h"
#include "workload_run.h"

#define CLASSES 3
#define PER_CLASS 4
#define N (CLASSES * PER_CLASS)

typedef struct fx {
    char dir[512], images[600];
    uint8_t *jpeg[N]; /* in scan order: c0/img_0.. c2/img_3 */
    size_t len[N];
} fx;

static int setup_fx(void **st)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/prep-%d", TOOLS_TEST_DIR, (int)getpid());
    if (fx_fresh_dir(f->dir, 1) != 0)
        return -1;
    snprintf(f->images, sizeof f->images, "%s/images", f->dir);
    if (fx_make_images(f->images, CLASSES, PER_CLASS, 42) != 0)
        return -1;
    for (int i = 0; i < N; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/c%d/img_%d.jpg", f->images, i / PER_CLASS, i % PER_CLASS);
        f->jpeg[i] = fx_slurp(p, &f->len[i]);
        if (!f->jpeg[i])
            return -1;
    }
    *st = f;
    return 0;
}

static int teardown_fx(void **st)
{
    fx *f = *st;
    if (fx_fresh_dir(f->dir, 0) != 0)
        return -1;
    for (int i = 0; i < N; i++)
        free(f->jpeg[i]);
    free(f);
    return 0;
}

typedef struct rec_read {
    int n;
    float label[N + 4];
    uint64_t id[N + 4];
    char key[N + 4][16];
    uint8_t *img[N + 4];
    size_t len[N + 4];
} rec_read;

/* Reads a .rec through its .idx with the core/data readers. */
static void read_rec(const char *rec, const char *idx, rec_read *out)
{
    memset(out, 0, sizeof *out);
    dlg_data_err err;
    dlg_source src, isrc;
    assert_int_equal(dlg_source_open_path(&src, rec, &err), 0);
    assert_int_equal(dlg_source_open_path(&isrc, idx, &err), 0);
    dlg_rec_idx ix;
    int rc = dlg_rec_idx_load(&ix, &isrc, src.size, rec, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    dlg_rec_reader *r;
    assert_int_equal(dlg_rec_reader_open(&r, &src, 0, &err), 0);
    assert_true(ix.n <= N + 4);
    for (size_t i = 0; i < ix.n; i++) {
        assert_int_equal(dlg_rec_reader_seek(r, ix.entries[i].offset, &err), 0);
        dlg_rec rr;
        assert_int_equal(dlg_rec_next(r, &rr, &err), 1);
        dlg_im2rec_view v;
        assert_int_equal(dlg_im2rec_unpack(rr.data, rr.len, rec, rr.offset, &v, &err), 0);
        out->label[i] = dlg_im2rec_label(&v, 0);
        out->id[i] = v.h.id;
        snprintf(out->key[i], sizeof out->key[i], "%s", ix.entries[i].key);
        out->img[i] = malloc(v.image_len);
        memcpy(out->img[i], v.image, v.image_len);
        out->len[i] = v.image_len;
        out->n++;
    }
    /* and the .rec holds nothing but these records */
    dlg_rec rr;
    assert_int_equal(dlg_rec_reader_seek(r, 0, &err), 0);
    int count = 0;
    while (dlg_rec_next(r, &rr, &err) == 1)
        count++;
    assert_int_equal(count, (int)ix.n);
    dlg_rec_reader_close(r);
    dlg_rec_idx_free(&ix);
    dlg_source_close_fd(&src);
    dlg_source_close_fd(&isrc);
}

static void free_rec(rec_read *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->img[i]);
}

static void test_recordio_passthrough(void **st)
{
    fx *f = *st;
    kv k = {0};
    kv_add(&k, "input=%s", f->images);
    kv_add(&k, "output=recordio:%s/a.rec", f->dir);
    kv_add(&k, "threads=3");
    wr_result r;
    wr_run("tools.so", "preprocess", k.ptr, N, &r);
    assert_int_equal(r.setup_rc, 0);
    if (r.step_rc != 0)
        fail_msg("%s", r.error);
    assert_int_equal(r.items, N);
    assert_int_equal(wr_int(&r, "passes"), 1);
    assert_int_equal(wr_int(&r, "images_written"), N);
    char rec[700], idx[700];
    snprintf(rec, sizeof rec, "%s/a.rec", f->dir);
    snprintf(idx, sizeof idx, "%s/a.idx", f->dir);
    rec_read rr;
    read_rec(rec, idx, &rr);
    assert_int_equal(rr.n, N);
    size_t in_bytes = 0;
    for (int i = 0; i < N; i++) {
        assert_true(rr.label[i] == (float)(i / PER_CLASS));
        assert_int_equal(rr.id[i], i);
        char want[16];
        snprintf(want, sizeof want, "%d", i);
        assert_string_equal(rr.key[i], want);
        assert_int_equal(rr.len[i], f->len[i]);
        assert_memory_equal(rr.img[i], f->jpeg[i], f->len[i]);
        in_bytes += f->len[i];
    }
    assert_int_equal(wr_int(&r, "input_bytes"), (long long)in_bytes);
    assert_int_equal(r.bytes_read, in_bytes);
    /* output_bytes is what landed on disk: the .rec (framing and padding
     * included) plus the .idx lines */
    struct stat rs, is;
    assert_int_equal(stat(rec, &rs), 0);
    assert_int_equal(stat(idx, &is), 0);
    assert_int_equal(wr_int(&r, "output_bytes"), (long long)(rs.st_size + is.st_size));
    /* written through the host (the job's storage backend), in 1 MiB
     * writes as writeback would, not one I/O per record or .idx line */
    assert_int_equal(r.bytes_written, (uint64_t)(rs.st_size + is.st_size));
    assert_true(r.write_ios >= 2 && r.write_ios <= 2 + (r.bytes_written >> 20));
    free_rec(&rr);
    /* no .part left behind */
    char part[720];
    snprintf(part, sizeof part, "%s.part", rec);
    assert_int_not_equal(access(part, F_OK), 0);
}

/* A storage backend whose disk is full: reads as files do, every write
 * fails with the reason, as posix's would on ENOSPC. */
typedef struct full_file {
    dlg_file base;
    const dlg_host *h;
    int fd;
    char path[700];
} full_file;

static int full_create(const dlg_host *h, const dlg_value *o, void **inst)
{
    (void)h;
    (void)o;
    *inst = NULL;
    return 0;
}
static void full_destroy(void *inst) { (void)inst; }
static int full_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst;
    full_file *ff = (full_file *)f;
    ff->h = h;
    snprintf(ff->path, sizeof ff->path, "%s", path);
    ff->fd = flags == DLG_OPEN_WRITE ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(path, O_RDONLY);
    return ff->fd < 0 ? h->error(h, DLG_EIO, "%s: cannot open", path) : 0;
}
static int full_close(dlg_file *f)
{
    close(((full_file *)f)->fd);
    return 0;
}
static int full_size(dlg_file *f, uint64_t *out)
{
    struct stat sb;
    if (fstat(((full_file *)f)->fd, &sb) != 0)
        return -DLG_EIO;
    *out = (uint64_t)sb.st_size;
    return 0;
}
static int64_t full_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    ssize_t r = pread(((full_file *)f)->fd, buf, n, (off_t)off);
    return r < 0 ? -DLG_EIO : r;
}
static int full_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    (void)buf;
    full_file *ff = (full_file *)f;
    return ff->h->error(ff->h, DLG_EIO, "%s: write of %zu bytes at offset %llu: No space left on device",
                        ff->path, n, (unsigned long long)off);
}
static const dlg_storage_ops full_ops = {.version = 1, .file_size = sizeof(full_file), .create = full_create,
                                         .destroy = full_destroy, .open = full_open, .close = full_close,
                                         .size = full_size, .read = full_read, .write = full_write};

static void add_full_disk(mock_host *m, void *arg)
{
    (void)arg;
    mock_add_storage(m, "full", &full_ops, NULL);
}

/* The output goes through the job's storage backend: a full disk there
 * fails the pass with the backend's own line (which file, which offset,
 * why), and no .part is left. */
static void test_output_full_disk(void **st)
{
    fx *f = *st;
    kv k = {0};
    kv_add(&k, "input=%s", f->images);
    kv_add(&k, "output=recordio:%s/full.rec", f->dir);
    kv_add(&k, "threads=1");
    wr_result r;
    wr_run_with("tools.so", "preprocess", k.ptr, N, &r, add_full_disk, NULL);
    assert_int_equal(r.setup_rc, 0);
    printf("  %s\n", r.error);
    assert_true(r.step_rc < 0);
    assert_non_null(strstr(r.error, "full.rec.part: write of"));
    assert_non_null(strstr(r.error, "No space left on device"));
    assert_int_equal(r.bytes_written, 0);
}

/* A network file system that takes the writes and reports their failure
 * at close (NFS's deferred EIO), without a message of its own. */
static int nfs_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    return pwrite(((full_file *)f)->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -DLG_EIO;
}
static int nfs_close(dlg_file *f)
{
    close(((full_file *)f)->fd);
    return -DLG_EIO;
}
static const dlg_storage_ops nfs_ops = {.version = 1, .file_size = sizeof(full_file), .create = full_create,
                                        .destroy = full_destroy, .open = full_open, .close = nfs_close,
                                        .size = full_size, .read = full_read, .write = nfs_write};

static void add_nfs(mock_host *m, void *arg)
{
    (void)arg;
    mock_add_storage(m, "nfs", &nfs_ops, NULL);
}

/* A close that fails fails the pass, and the output is not renamed into
 * place as if it were whole (before, the step succeeded). */
static void test_output_failed_close(void **st)
{
    fx *f = *st;
    kv k = {0};
    kv_add(&k, "input=%s", f->images);
    kv_add(&k, "output=recordio:%s/nfs.rec", f->dir);
    kv_add(&k, "threads=1");
    wr_result r;
    wr_run_with("tools.so", "preprocess", k.ptr, N, &r, add_nfs, NULL);
    assert_int_equal(r.setup_rc, 0);
    printf("  %s\n", r.error);
    assert_true(r.step_rc < 0);
    assert_non_null(strstr(r.error, "close failed"));
    char rec[700];
    snprintf(rec, sizeof rec, "%s/nfs.rec", f->dir);
    assert_int_not_equal(access(rec, F_OK), 0);
}

static void test_lmdb_passthrough(void **st)
{
    fx *f = *st;
    kv k = {0};
    kv_add(&k, "input=%s", f->images);
    kv_add(&k, "output=lmdb:%s/db", f->dir);
    kv_add(&k, "threads=2");
    kv_add(&k, "chunk=5");
    wr_result r;
    wr_run("tools.so", "preprocess", k.ptr, 3, &r); /* 15 >= 12: one pass, then 3 of the next */
    assert_int_equal(r.setup_rc, 0);
    if (r.step_rc != 0)
        fail_msg("%s", r.error);
    assert_int_equal(wr_int(&r, "passes"), 1);
    char db[700];
    snprintf(db, sizeof db, "%s/db", f->dir);
    dlg_data_err err;
    dlg_lmdb *l;
    if (dlg_lmdb_open(&l, db, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(dlg_lmdb_count(l), N);
    dlg_lmdb_cursor *c;
    assert_int_equal(dlg_lmdb_cursor_open(l, &c, &err), 0);
    dlg_lmdb_record rec;
    for (int i = 0; i < N; i++) {
        assert_int_equal(dlg_lmdb_next(c, &rec, &err), 1);
        char want[64];
        snprintf(want, sizeof want, "%08d_c%d/img_%d.jpg", i, i / PER_CLASS, i % PER_CLASS);
        assert_int_equal(rec.key_len, strlen(want));
        assert_memory_equal(rec.key, want, rec.key_len);
        assert_true(rec.datum->encoded);
        assert_int_equal(rec.datum->label, i / PER_CLASS);
        assert_int_equal(rec.datum->data_len, f->len[i]);
        assert_memory_equal(rec.datum->data, f->jpeg[i], f->len[i]);
    }
    assert_int_equal(dlg_lmdb_next(c, &rec, &err), 0);
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(l);
    /* the unfinished second pass was dropped */
    char part[720];
    snprintf(part, sizeof part, "%s.part", db);
    assert_int_not_equal(access(part, F_OK), 0);
}

static void test_resize(void **st)
{
    fx *f = *st;
    kv k = {0};
    kv_add(&k, "input=%s", f->images);
    kv_add(&k, "output=recordio:%s/small.rec", f->dir);
    kv_add(&k, "resize=32");
    kv_add(&k, "quality=80");
    kv_add(&k, "threads=3");
    wr_result r;
    wr_run("tools.so", "preprocess", k.ptr, N, &r);
    assert_int_equal(r.setup_rc, 0);
    if (r.step_rc != 0)
        fail_msg("%s", r.error);
    char rec[700], idx[700];
    snprintf(rec, sizeof rec, "%s/small.rec", f->dir);
    snprintf(idx, sizeof idx, "%s/small.idx", f->dir);
    rec_read rr;
    read_rec(rec, idx, &rr);
    assert_int_equal(rr.n, N);
    tjhandle tj = tjInitDecompress();
    for (int i = 0; i < N; i++) {
        int w0, h0, w, h, sub, cs;
        assert_int_equal(tjDecompressHeader3(tj, f->jpeg[i], f->len[i], &w0, &h0, &sub, &cs), 0);
        assert_int_equal(tjDecompressHeader3(tj, rr.img[i], rr.len[i], &w, &h, &sub, &cs), 0);
        int ew = w0 <= h0 ? 32 : w0 * 32 / h0, eh = w0 <= h0 ? h0 * 32 / w0 : 32;
        assert_int_equal(w, ew);
        assert_int_equal(h, eh);
        assert_true(rr.label[i] == (float)(i / PER_CLASS));
        /* and it decodes */
        uint8_t *px = malloc((size_t)w * h * 3);
        assert_int_equal(tjDecompress2(tj, rr.img[i], rr.len[i], px, w, 0, h, TJPF_RGB, 0), 0);
        free(px);
    }
    tjDestroy(tj);
    free_rec(&rr);
}

/* Writes a convert_imageset list (images/NAME.txt), converts it with
 * preprocess into the LMDB NAME.db and opens a cursor on that. */
static dlg_lmdb_cursor *list_to_lmdb(const fx *f, const char *name, const char *text, dlg_lmdb **l)
{
    char list[700], db[700];
    snprintf(list, sizeof list, "%s/images/%s.txt", f->dir, name);
    snprintf(db, sizeof db, "%s/%s.db", f->dir, name);
    assert_int_equal(fx_write(list, text, strlen(text)), 0);
    kv k = {0};
    kv_add(&k, "input=%s", list);
    kv_add(&k, "output=lmdb:%s", db);
    wr_result r;
    wr_run("tools.so", "preprocess", k.ptr, 3, &r);
    if (r.setup_rc != 0 || r.step_rc != 0)
        fail_msg("%s", r.error);
    dlg_data_err err;
    assert_int_equal(dlg_lmdb_open(l, db, &err), 0);
    dlg_lmdb_cursor *c;
    assert_int_equal(dlg_lmdb_cursor_open(*l, &c, &err), 0);
    return c;
}

static void test_list_inputs(void **st)
{
    fx *f = *st;
    /* convert_imageset list: order and labels from the list */
    char lst[700];
    const char *text = "c2/img_1.jpg 7\nc0/img_3.jpg 5\n\nc1/img_0.jpg 9\n";
    dlg_data_err err;
    dlg_lmdb *l;
    dlg_lmdb_cursor *c = list_to_lmdb(f, "train", text, &l);
    const int idx[3] = {2 * PER_CLASS + 1, 3, PER_CLASS}, lab[3] = {7, 5, 9};
    const char *keys[3] = {"00000000_c2/img_1.jpg", "00000001_c0/img_3.jpg", "00000002_c1/img_0.jpg"};
    dlg_lmdb_record lr;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dlg_lmdb_next(c, &lr, &err), 1);
        assert_memory_equal(lr.key, keys[i], strlen(keys[i]));
        assert_int_equal(lr.datum->label, lab[i]);
        assert_memory_equal(lr.datum->data, f->jpeg[idx[i]], f->len[idx[i]]);
    }
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(l);

    /* im2rec .lst: its index column and several labels (flag = 2) */
    snprintf(lst, sizeof lst, "%s/images/train.lst", f->dir);
    text = "10\t1.5\t2.5\tc0/img_0.jpg\n20\t3\t4\tc2/img_3.jpg\n";
    assert_int_equal(fx_write(lst, text, strlen(text)), 0);
    kv k2 = {0};
    kv_add(&k2, "input=%s", lst);
    kv_add(&k2, "output=recordio:%s/lst.rec", f->dir);
    wr_result r;
    wr_run("tools.so", "preprocess", k2.ptr, 2, &r);
    assert_int_equal(r.setup_rc, 0);
    assert_int_equal(r.step_rc, 0);
    char rec[700], ridx[700];
    snprintf(rec, sizeof rec, "%s/lst.rec", f->dir);
    snprintf(ridx, sizeof ridx, "%s/lst.idx", f->dir);
    rec_read rr;
    read_rec(rec, ridx, &rr);
    assert_int_equal(rr.n, 2);
    assert_string_equal(rr.key[0], "10");
    assert_string_equal(rr.key[1], "20");
    assert_int_equal(rr.id[1], 20);
    assert_true(rr.label[0] == 1.5f && rr.label[1] == 3.0f);
    assert_memory_equal(rr.img[1], f->jpeg[N - 1], f->len[N - 1]);
    free_rec(&rr);

    /* the same kind of .lst to LMDB: keyed by line, as convert_imageset
     * keys, not by the index column (a shuffled list, as im2rec --list
     * writes it, came out in index order; a repeated index overwrote) */
    text = "10\t1\tc0/img_0.jpg\n4\t2\tc2/img_3.jpg\n4\t3\tc1/img_1.jpg\n";
    assert_int_equal(fx_write(lst, text, strlen(text)), 0);
    kv k3 = {0};
    kv_add(&k3, "input=%s", lst);
    kv_add(&k3, "output=lmdb:%s/lst.db", f->dir);
    wr_run("tools.so", "preprocess", k3.ptr, 3, &r);
    if (r.setup_rc != 0 || r.step_rc != 0)
        fail_msg("%s", r.error);
    char db[700];
    snprintf(db, sizeof db, "%s/lst.db", f->dir);
    assert_int_equal(dlg_lmdb_open(&l, db, &err), 0);
    assert_int_equal(dlg_lmdb_count(l), 3);
    assert_int_equal(dlg_lmdb_cursor_open(l, &c, &err), 0);
    const char *lkeys[3] = {"00000000_c0/img_0.jpg", "00000001_c2/img_3.jpg", "00000002_c1/img_1.jpg"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dlg_lmdb_next(c, &lr, &err), 1);
        assert_memory_equal(lr.key, lkeys[i], strlen(lkeys[i]));
        assert_int_equal(lr.datum->label, i + 1);
    }
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(l);
}

/* A convert_imageset label is an int32 and a Datum's label too: it must
 * reach the LMDB exactly, not through a float (16777217 -> 16777216;
 * 2147483647 -> 2^31, then refused as "not a whole number"). */
static void test_int32_labels(void **st)
{
    const char *text = "c0/img_0.jpg 16777217\nc1/img_1.jpg 2147483647\nc2/img_2.jpg -2147483647\n";
    dlg_lmdb *l;
    dlg_lmdb_cursor *c = list_to_lmdb(*st, "big", text, &l);
    const int32_t want[3] = {16777217, 2147483647, -2147483647};
    dlg_lmdb_record lr;
    dlg_data_err err;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dlg_lmdb_next(c, &lr, &err), 1);
        assert_int_equal(lr.datum->label, want[i]);
    }
    dlg_lmdb_cursor_close(c);
    dlg_lmdb_close(l);
}

static void test_passes(void **st)
{
    fx *f = *st;
    kv k = {0};
    kv_add(&k, "input=%s", f->images);
    kv_add(&k, "output=recordio:%s/p.rec", f->dir);
    wr_result r;
    wr_run("tools.so", "preprocess", k.ptr, 2 * N + 5, &r);
    assert_int_equal(r.step_rc, 0);
    assert_int_equal(wr_int(&r, "passes"), 2);
    assert_non_null(wr_field(&r, "pass_s"));
    char rec[700], idx[700];
    snprintf(rec, sizeof rec, "%s/p.rec", f->dir);
    snprintf(idx, sizeof idx, "%s/p.idx", f->dir);
    rec_read rr;
    read_rec(rec, idx, &rr);
    assert_int_equal(rr.n, N); /* one complete pass, not 2N + 5 records */
    free_rec(&rr);
}

static void corrupt_dir(fx *f, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/bad", f->dir);
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, f->images, dir);
    assert_int_equal(system(cmd), 0);
    char p[700];
    snprintf(p, sizeof p, "%s/c1/img_2.jpg", dir); /* cut in half: no EOI */
    assert_int_equal(fx_write(p, f->jpeg[PER_CLASS + 2], f->len[PER_CLASS + 2] / 2), 0);
}

/* preprocess of dir (its one bad image c1/img_2) into output at resize:
 * *bad stops at that image, after the ones before it; *skipped, run again
 * with skip_corrupt, skips it and writes all the others. */
static void bad_then_skipped(const char *dir, const char *output, int resize, wr_result *bad,
                             wr_result *skipped)
{
    kv k = {0};
    kv_add(&k, "input=%s", dir);
    kv_add(&k, "output=%s", output);
    kv_add(&k, "resize=%d", resize);
    wr_run("tools.so", "preprocess", k.ptr, N, bad);
    assert_int_equal(bad->setup_rc, 0);
    assert_int_equal(bad->step_rc, -DLG_ECORRUPT);
    assert_int_equal(bad->steps_done, PER_CLASS + 2);
    kv_add(&k, "skip_corrupt=true");
    wr_run("tools.so", "preprocess", k.ptr, N, skipped);
    assert_int_equal(skipped->step_rc, 0);
    assert_int_equal(wr_int(skipped, "skipped"), 1);
    assert_int_equal(wr_int(skipped, "images_written"), N - 1);
}

static void test_corrupt(void **st)
{
    fx *f = *st;
    char dir[600];
    corrupt_dir(f, dir, sizeof dir);
    char out[700];
    snprintf(out, sizeof out, "recordio:%s/bad.rec", f->dir);
    for (int resize = 0; resize <= 24; resize += 24) {
        wr_result bad, r;
        bad_then_skipped(dir, out, resize, &bad, &r);
        assert_non_null(strstr(bad.error, "c1/img_2.jpg"));
        assert_int_equal(wr_int(&r, "passes"), 1);
        char rec[700], idx[700];
        snprintf(rec, sizeof rec, "%s/bad.rec", f->dir);
        snprintf(idx, sizeof idx, "%s/bad.idx", f->dir);
        rec_read rr;
        read_rec(rec, idx, &rr);
        assert_int_equal(rr.n, N - 1);
        assert_int_equal(rr.id[PER_CLASS + 2], PER_CLASS + 3); /* the bad one is missing */
        free_rec(&rr);
    }
}

/* A 1x1 PNG (signature, IHDR, IDAT, IEND) named .png, and the same bytes
 * named .jpg: the folder scan lists both, but the loader decodes JPEG only,
 * so preprocess refuses either by its content, naming the file and the
 * format, instead of writing a dataset it cannot read back; skip_corrupt
 * counts and skips them. */
static void test_png(void **st)
{
    static const uint8_t png[] = {
        0x89, 'P',  'N',  'G',  0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 'I',  'H',
        'D',  'R',  0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00,
        0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00, 0x0c, 'I',  'D',  'A',  'T',  0x78,
        0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92,
        0xef, 0x00, 0x00, 0x00, 0x00, 'I',  'E',  'N',  'D',  0xae, 0x42, 0x60, 0x82};
    fx *f = *st;
    const char *names[] = {"c1/img_2.png", "c1/img_2.jpg"};
    for (int n = 0; n < 2; n++) {
        char dir[600], p[700], want[800];
        corrupt_dir(f, dir, sizeof dir);
        snprintf(p, sizeof p, "%s/c1/img_2.jpg", dir);
        assert_int_equal(unlink(p), 0);
        snprintf(p, sizeof p, "%s/%s", dir, names[n]);
        assert_int_equal(fx_write(p, png, sizeof png), 0);
        snprintf(want, sizeof want, "%s: not a JPEG but a PNG image (%zu bytes): only JPEG is decoded",
                 p, sizeof png);
        char out[700];
        snprintf(out, sizeof out, "lmdb:%s/png_lmdb", f->dir);
        for (int resize = 0; resize <= 24; resize += 24) {
            wr_result bad, skipped;
            bad_then_skipped(dir, out, resize, &bad, &skipped);
            assert_string_equal(bad.error, want);
        }
    }
}

static void test_bad_input(void **st)
{
    fx *f = *st;
    wr_result r;
    kv k = {0};
    kv_add(&k, "input=%s/nope", f->dir);
    kv_add(&k, "output=recordio:%s/x.rec", f->dir);
    wr_run("tools.so", "preprocess", k.ptr, 1, &r);
    assert_int_equal(r.setup_rc, -DLG_EINVAL);
    assert_non_null(strstr(r.error, "nope"));

    char empty[700];
    snprintf(empty, sizeof empty, "%s/empty", f->dir);
    mkdir(empty, 0755);
    kv k2 = {0};
    kv_add(&k2, "input=%s", empty);
    kv_add(&k2, "output=recordio:%s/x.rec", f->dir);
    wr_run("tools.so", "preprocess", k2.ptr, 1, &r);
    assert_true(r.setup_rc < 0);
    assert_non_null(strstr(r.error, "empty"));

    kv k3 = {0};
    kv_add(&k3, "input=%s", f->images);
    kv_add(&k3, "output=tfrecord:%s/x", f->dir);
    wr_run("tools.so", "preprocess", k3.ptr, 1, &r);
    assert_int_equal(r.setup_rc, -DLG_EINVAL);
    assert_non_null(strstr(r.error, "recordio:FILE or lmdb:DIR"));

    /* a list naming a missing image: the error names it */
    char list[700];
    snprintf(list, sizeof list, "%s/missing.txt", f->dir);
    const char *text = "images/c0/img_0.jpg 0\nimages/c0/ghost.jpg 1\n";
    assert_int_equal(fx_write(list, text, strlen(text)), 0);
    kv k4 = {0};
    kv_add(&k4, "input=%s", list);
    kv_add(&k4, "output=recordio:%s/x.rec", f->dir);
    wr_run("tools.so", "preprocess", k4.ptr, 2, &r);
    assert_int_equal(r.setup_rc, 0);
    assert_true(r.step_rc < 0);
    assert_non_null(strstr(r.error, "ghost.jpg"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recordio_passthrough),
        cmocka_unit_test(test_lmdb_passthrough),
        cmocka_unit_test(test_output_full_disk),
        cmocka_unit_test(test_output_failed_close),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_list_inputs),
        cmocka_unit_test(test_int32_labels),
        cmocka_unit_test(test_passes),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_png),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, setup_fx, teardown_fx);
}
