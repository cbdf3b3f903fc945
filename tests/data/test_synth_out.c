/* mkdata's outputs on disk: a regenerated image tree holds exactly the new
 * dataset, a folder or list mkdata did not make is refused (an ImageNet
 * tree, a tree without mkdata's marker or with entries past what the marker
 * says, a list that is not exactly mkdata's), an interrupted run's
 * .part is cleared (also one stopped before its marker had its line), a failed text run keeps the old corpus, and a full disk
 * is named as such (also by the RecordIO and .idx writers).  What appears
 * at the tree or a list during a run is refused at its commit and kept,
 * the old lists too; only a refusal is reported as one (res.refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recordio.h"
#include "synth.h"
#include "synth_out.h"
#include "tmpdir.h"

static bool exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

static void touch(const char *p)
{
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("x\n", f);
    fclose(f);
}

static void touch_empty(const char *p)
{
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

/* Entries of dir (no . and .., nor mkdata's marker); with files, the files
 * of every entry. */
static size_t count(const char *dir, bool files)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    char sub[1024];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, DLG_SYNTH_MARKER)) {
            snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
            n += files ? count(sub, false) : 1;
        }
    closedir(d);
    return n;
}

static char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    char *b = malloc(1 << 20);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static int images(const char *out, int classes, uint64_t n, dlg_data_err *err)
{
    dlg_synth_images_cfg c = {out, "train", classes, n, 1, 50, 2};
    dlg_synth_images_result r;
    return dlg_synth_images_write(&c, &r, err);
}

/* A smaller dataset over a larger one: no image of the old one stays. */
static void test_regenerate_replaces(void **st)
{
    (void)st;
    char dir[64], p[256];
    tmpdir_make(dir, "synth");
    assert_int_equal(images(dir, 3, 12, NULL), 0);
    assert_int_equal(images(dir, 2, 4, NULL), 0);
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(count(p, false), 2); /* classes */
    assert_int_equal(count(p, true), 4);  /* images */
    snprintf(p, sizeof p, "%s/train.part", dir);
    assert_false(exists(p));
    tmpdir_rmrf(dir);
}

/* A file mkdata did not write: refused, named, and nothing is changed. */
static void test_foreign_refused(void **st)
{
    (void)st;
    char dir[64], p[256], lst[256];
    tmpdir_make(dir, "synth");
    assert_int_equal(images(dir, 2, 4, NULL), 0);
    snprintf(p, sizeof p, "%s/train/n00000001/notes.txt", dir);
    touch(p);
    snprintf(lst, sizeof lst, "%s/train.lst", dir);
    size_t n0, n1;
    free(slurp(lst, &n0));
    dlg_data_err err = {0};
    assert_int_equal(images(dir, 2, 6, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "notes.txt"));
    assert_true(exists(p));
    free(slurp(lst, &n1));
    assert_int_equal(n0, n1); /* still the 4-image list */
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(count(p, true), 5);
    tmpdir_rmrf(dir);
}

/* A list of the split's name that mkdata did not write (Caffe's own
 * ilsvrc12 train.txt, a corpus): refused before any work and kept intact;
 * mkdata's own lists, and an empty file, are replaced. */
static void test_foreign_list_refused(void **st)
{
    (void)st;
    static const char *const foreign[2][2] = {
        {"train.txt", "n01440764/n01440764_10026.JPEG 0\n"},
        {"train.lst", "0\t0\ttrain/n00000000/n00000000_0.JPEG\n1\t3.5\tmine/cat.jpg\n"}};
    for (int k = 0; k < 2; k++) {
        char dir[64], p[256], tree[256];
        tmpdir_make(dir, "synth");
        snprintf(p, sizeof p, "%s/%s", dir, foreign[k][0]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs(foreign[k][1], f);
        fclose(f);
        dlg_data_err err = {0};
        assert_int_equal(images(dir, 2, 4, &err), -DLG_EINVAL);
        assert_non_null(strstr(err.msg, p));
        assert_non_null(strstr(err.msg, k ? ":2:" : ":1:")); /* the first foreign line */
        size_t n;
        char *b = slurp(p, &n);
        assert_int_equal(n, strlen(foreign[k][1]));
        assert_memory_equal(b, foreign[k][1], n);
        free(b);
        snprintf(tree, sizeof tree, "%s/train", dir);
        assert_false(exists(tree)); /* refused before any work */
        f = fopen(p, "w"); /* empty: nothing to lose */
        fclose(f);
        assert_int_equal(images(dir, 2, 4, NULL), 0);
        assert_int_equal(images(dir, 2, 6, NULL), 0); /* mkdata's own list is replaced */
        b = slurp(p, &n);
        char last[64];
        snprintf(last, sizeof last, k ? "5\t1\ttrain/n00000001/n00000001_2.JPEG\n"
                                      : "train/n00000001/n00000001_2.JPEG 1\n");
        assert_true(n >= strlen(last) && !memcmp(b + n - strlen(last), last, strlen(last)));
        free(b);
        tmpdir_rmrf(dir);
    }
}

/* A --split with a space (which mkdata accepts): its own lists, whose
 * paths hold that space, are replaced on the next run like any other. */
static void test_split_with_space_regenerates(void **st)
{
    (void)st;
    char dir[64], p[256];
    tmpdir_make(dir, "synth");
    dlg_synth_images_cfg c = {dir, "my train", 2, 4, 1, 50, 2};
    dlg_synth_images_result r;
    assert_int_equal(dlg_synth_images_write(&c, &r, NULL), 0);
    c.images = 6;
    dlg_data_err err = {0};
    int rc = dlg_synth_images_write(&c, &r, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    snprintf(p, sizeof p, "%s/my train.txt", dir);
    size_t n;
    char *b = slurp(p, &n);
    static const char last[] = "my train/n00000001/n00000001_2.JPEG 1\n";
    assert_true(n >= strlen(last) && !memcmp(b + n - strlen(last), last, strlen(last)));
    free(b);
    tmpdir_rmrf(dir);
}

/* What an interrupted run left in train.part (its marker and some of its
 * images) is not carried over; an empty train folder is replaced too. */
static void test_stale_part_cleared(void **st)
{
    (void)st;
    char dir[64], p[256];
    tmpdir_make(dir, "synth");
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/train.part", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_equal(dlg_synth_marker_write(p, 8, 16, NULL), 0);
    snprintf(p, sizeof p, "%s/train.part/n00000007", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/train.part/n00000007/n00000007_0.JPEG", dir);
    touch(p);
    assert_int_equal(images(dir, 2, 4, NULL), 0);
    snprintf(p, sizeof p, "%s/train.part", dir);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(count(p, false), 2);
    tmpdir_rmrf(dir);
}

static void write_text(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool holds(const char *p, const char *text)
{
    size_t n;
    char *b = slurp(p, &n);
    bool same = n == strlen(text) && memcmp(b, text, n) == 0;
    free(b);
    return same;
}

/* A real ImageNet-layout train folder (WordNet ids, n..._<digits>.JPEG)
 * is the user's: refused before any work, naming an entry, every file kept
 * (mkdata took any nDDDDDDDD folder of nDDDDDDDD_N.JPEG as its own and
 * deleted it). */
static void test_imagenet_tree_refused(void **st)
{
    (void)st;
    static const char *const files[2] = {"n01440764/n01440764_10026.JPEG", "n01443537/n01443537_2.JPEG"};
    char dir[64], p[256];
    tmpdir_make(dir, "synth");
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/train/%.9s", dir, files[k]);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/train/%s", dir, files[k]);
        write_text(p, "precious\n");
    }
    dlg_data_err err = {0};
    assert_int_equal(images(dir, 2, 4, &err), -DLG_EINVAL);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "/train/n0144"));
    assert_non_null(strstr(err.msg, DLG_SYNTH_MARKER));
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/train/%s", dir, files[k]);
        assert_true(holds(p, "precious\n"));
    }
    snprintf(p, sizeof p, "%s/train.part", dir);
    assert_false(exists(p)); /* refused before any work */
    snprintf(p, sizeof p, "%s/train.txt", dir);
    assert_false(exists(p));
    /* nor is it removed as a stale .part */
    char part[256];
    snprintf(p, sizeof p, "%s/train", dir);
    snprintf(part, sizeof part, "%s/train.part", dir);
    assert_int_equal(rename(p, part), 0);
    assert_int_equal(images(dir, 2, 4, &err), -DLG_EINVAL);
    snprintf(p, sizeof p, "%s/train.part/%s", dir, files[1]);
    assert_true(holds(p, "precious\n"));
    tmpdir_rmrf(dir);
}

/* A tree of mkdata's names without its marker (as an older mkdata made)
 * is refused with a line that says to remove it by hand. */
/* mkdata stopped between creating its marker and writing the line (the
 * stop-signal test's TERM right after train.part appeared): an empty
 * marker alone is cleared as a .part's, and at the tree itself replaced;
 * beside anything else it is no marker, and the tree is refused. */
static void test_empty_marker_alone_cleared(void **st)
{
    (void)st;
    char dir[64], p[256];
    tmpdir_make(dir, "synth");
    snprintf(p, sizeof p, "%s/train.part", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/train.part/%s", dir, DLG_SYNTH_MARKER);
    touch_empty(p);
    snprintf(p, sizeof p, "%s/train.part", dir);
    assert_int_equal(dlg_synth_tree_remove(p, NULL), 0);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/train/%s", dir, DLG_SYNTH_MARKER);
    touch_empty(p);
    assert_int_equal(images(dir, 2, 4, NULL), 0);
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(count(p, false), 2);
    tmpdir_rmrf(dir);

    tmpdir_make(dir, "synth");
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/train/%s", dir, DLG_SYNTH_MARKER);
    touch_empty(p);
    snprintf(p, sizeof p, "%s/train/notes.txt", dir);
    touch(p);
    dlg_data_err err = {0};
    assert_int_equal(images(dir, 2, 4, &err), -DLG_EINVAL);
    assert_true(exists(p)); /* kept */
    tmpdir_rmrf(dir);
}

static void test_tree_without_marker_refused(void **st)
{
    (void)st;
    char dir[64], p[256];
    tmpdir_make(dir, "synth");
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    for (int i = 0; i < 4; i++) { /* images 0..3 of 2 classes */
        snprintf(p, sizeof p, "%s/train/n%08d", dir, i % 2);
        mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/train/n%08d/n%08d_%d.JPEG", dir, i % 2, i % 2, i / 2);
        touch(p);
    }
    dlg_data_err err = {0};
    assert_int_equal(images(dir, 2, 4, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "remove it yourself"));
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(count(p, true), 4); /* kept */
    tmpdir_rmrf(dir);
}

/* With the marker, only what it says mkdata made may be there: an image
 * past its count, a class past its classes, a name mkdata never writes
 * (leading zero), or a marker that is not mkdata's line: refused, named. */
static void test_beyond_marker_refused(void **st)
{
    (void)st;
    static const char *const extra[] = {"n00000001/n00000001_2.JPEG", "n00000002/n00000002_0.JPEG",
                                        "n00000000/n00000000_01.JPEG", "n00000000/n00000000_0.jpeg"};
    for (size_t k = 0; k <= sizeof extra / sizeof *extra; k++) {
        char dir[64], p[256];
        tmpdir_make(dir, "synth");
        assert_int_equal(images(dir, 2, 4, NULL), 0);
        if (k < sizeof extra / sizeof *extra) {
            snprintf(p, sizeof p, "%s/train/%.9s", dir, extra[k]);
            mkdir(p, 0755);
            snprintf(p, sizeof p, "%s/train/%s", dir, extra[k]);
            write_text(p, "mine\n");
        } else { /* the marker of a larger tree, hand-made */
            snprintf(p, sizeof p, "%s/train/%s", dir, DLG_SYNTH_MARKER);
            write_text(p, "dlgauge mkdata images: classes 2, images 4 \n");
        }
        dlg_data_err err = {0};
        assert_int_equal(images(dir, 2, 6, &err), -DLG_EINVAL);
        char named[256]; /* the entry: the class folder past the marker's, else the file */
        snprintf(named, sizeof named, "%s/train/%s", dir, k == 1 ? "n00000002" : k < 4 ? extra[k] : DLG_SYNTH_MARKER);
        assert_non_null(strstr(err.msg, named));
        assert_true(exists(p));
        tmpdir_rmrf(dir);
    }
}

/* A list with mkdata's path shapes that mkdata did not write (ImageNet
 * ids under the split, labels or order not mkdata's): refused and kept. */
static void test_list_not_exact_refused(void **st)
{
    (void)st;
    static const char *const lists[][2] = {
        {"train.txt", "train/n01440764/n01440764_10026.JPEG 0\n"},
        {"train.lst", "0\t0\ttrain/n01440764/n01440764_10026.JPEG\n"},
        {"train.txt", "train/n00000000/n00000000_0.JPEG 0\ntrain/n00000001/n00000001_0.JPEG 0\n"},
        {"train.lst", "0\t0\ttrain/n00000000/n00000000_0.JPEG\n0\t1\ttrain/n00000001/n00000001_0.JPEG\n"},
        {"train.txt", "train/n00000000/n00000000_0.JPEG 0\ntrain/n00000001/n00000001_0.JPEG 1\n"
                      "train/n00000000/n00000000_1.JPEG 0\ntrain/n00000000/n00000000_2.JPEG 0\n"}};
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++) {
        char dir[64], p[256];
        tmpdir_make(dir, "synth");
        snprintf(p, sizeof p, "%s/%s", dir, lists[k][0]);
        write_text(p, lists[k][1]);
        dlg_data_err err = {0};
        assert_int_equal(images(dir, 2, 4, &err), -DLG_EINVAL);
        assert_non_null(strstr(err.msg, p));
        assert_true(holds(p, lists[k][1]));
        tmpdir_rmrf(dir);
    }
}

/* A corpus run that fails on its second file keeps the first file's old
 * bytes: no new train file without its valid and test files. */
static void test_text_failure_keeps_old(void **st)
{
    (void)st;
    char dir[64], base[128], train[160], valid[160];
    tmpdir_make(dir, "synth");
    snprintf(base, sizeof base, "%s/ptb", dir);
    snprintf(train, sizeof train, "%s.train.txt", base);
    snprintf(valid, sizeof valid, "%s.valid.txt", base);
    assert_int_equal(dlg_synth_text_files(base, 5000, 100, 1, 1, NULL), 0);
    size_t n0, n1;
    char *old = slurp(train, &n0);
    unlink(valid);
    assert_int_equal(mkdir(valid, 0755), 0); /* cannot be written */
    dlg_data_err err = {0};
    assert_true(dlg_synth_text_files(base, 5000, 100, 2, 1, &err) < 0);
    assert_non_null(strstr(err.msg, "ptb.valid.txt"));
    char *now = slurp(train, &n1);
    assert_true(n0 == n1 && memcmp(old, now, n0) == 0);
    snprintf(train, sizeof train, "%s.train.txt.part", base);
    assert_false(exists(train));
    free(old);
    free(now);
    tmpdir_rmrf(dir);
}

/* --out in folders that do not exist yet: made, as mkdata images makes its
 * DIR (text failed with "newdir/t.txt.part: cannot create"). */
static void test_text_folder_made(void **st)
{
    (void)st;
    char dir[64], out[160];
    tmpdir_make(dir, "synth");
    snprintf(out, sizeof out, "%s/new/sub/ptb", dir);
    assert_int_equal(dlg_synth_text_files(out, 500, 100, 1, 1, NULL), 0);
    snprintf(out, sizeof out, "%s/new/sub/ptb.test.txt", dir);
    assert_true(exists(out));
    snprintf(out, sizeof out, "%s/new2/t.txt", dir);
    assert_int_equal(dlg_synth_text_files(out, 500, 100, 1, 0, NULL), 0);
    assert_true(exists(out));
    tmpdir_rmrf(dir);
}

/* Errors name the file the user asked for, never its .part. */
static void test_text_errors_name_out(void **st)
{
    (void)st;
    char dir[64], file[96], out[160];
    tmpdir_make(dir, "synth");
    snprintf(file, sizeof file, "%s/afile", dir);
    touch(file);
    snprintf(out, sizeof out, "%s/t.txt", file); /* under a file: cannot be created */
    dlg_data_err err = {0};
    assert_true(dlg_synth_text_files(out, 500, 100, 1, 0, &err) < 0);
    char want[300];
    snprintf(want, sizeof want, "%s: cannot create: Not a directory", out);
    assert_string_equal(err.msg, want);
    tmpdir_rmrf(dir);
}

/* A full disk says so (text, RecordIO, .idx); /dev/full stays a device. */
static void test_full_disk_named(void **st)
{
    (void)st;
    if (!exists("/dev/full"))
        skip();
    dlg_data_err err = {0};
    assert_true(dlg_synth_text_files("/dev/full", 100000, 100, 1, 0, &err) < 0);
    assert_non_null(strstr(err.msg, "/dev/full: write failed: No space left on device"));
    struct stat sb;
    assert_int_equal(stat("/dev/full", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));

    int fd = open("/dev/full", O_WRONLY);
    assert_true(fd >= 0);
    dlg_rec_writer *w;
    assert_int_equal(dlg_rec_writer_open_fd(&w, fd, "full.rec", &err), 0);
    static uint8_t rec[200000];
    dlg_data_err_clear(&err);
    assert_true(dlg_rec_write(w, rec, sizeof rec, NULL, &err) < 0);
    assert_non_null(strstr(err.msg, "full.rec: write at byte 0 failed: No space left on device"));
    dlg_data_err_clear(&err);
    assert_int_equal(dlg_rec_write(w, rec, 100, NULL, &err), 0); /* buffered */
    assert_true(dlg_rec_writer_close(w, &err) < 0);
    assert_non_null(strstr(err.msg, "No space left on device"));
    dlg_output o;
    dlg_output_fd(&o, fd, "full.idx");
    assert_true(dlg_rec_idx_append(&o, "7", 64, &err) < 0);
    assert_string_equal(err.msg, "full.idx: write failed: No space left on device");
    close(fd);
}

/* A run on its own thread (200 images on one thread: long enough to act
 * while it renders). */
typedef struct bg_run {
    dlg_synth_images_cfg c;
    dlg_synth_images_result r;
    dlg_data_err err;
    int rc;
    pthread_t t;
} bg_run;

static void *bg_main(void *arg)
{
    bg_run *b = arg;
    b->rc = dlg_synth_images_write(&b->c, &b->r, &b->err);
    return NULL;
}

/* Starts a run of dir and returns once it renders (its train.part holds
 * its marker). */
static void bg_start(bg_run *b, const char *dir)
{
    *b = (bg_run){.c = {dir, "train", 2, 200, 7, 50, 1}};
    assert_int_equal(pthread_create(&b->t, NULL, bg_main, b), 0);
    char marker[256];
    snprintf(marker, sizeof marker, "%s/train.part/%s", dir, DLG_SYNTH_MARKER);
    for (int i = 0; i < 20000 && !exists(marker); i++)
        usleep(500);
    assert_true(exists(marker));
}

/* Something of the user's put in the old tree during the run: the commit
 * refuses it, and the old tree and both old lists are kept as they were
 * (the commit deleted the lists, then refused the tree). */
static void test_tree_changed_during_run(void **st)
{
    (void)st;
    char dir[64], p[256], txt[256], lst[256];
    tmpdir_make(dir, "synth");
    assert_int_equal(images(dir, 2, 4, NULL), 0);
    snprintf(txt, sizeof txt, "%s/train.txt", dir);
    snprintf(lst, sizeof lst, "%s/train.lst", dir);
    size_t nt, nl;
    char *t0 = slurp(txt, &nt), *l0 = slurp(lst, &nl);
    bg_run b;
    bg_start(&b, dir);
    snprintf(p, sizeof p, "%s/train/n00000001/notes.txt", dir);
    write_text(p, "mine\n");
    pthread_join(b.t, NULL);
    assert_int_equal(b.rc, -DLG_EINVAL);
    assert_true(b.r.refused);
    assert_non_null(strstr(b.err.msg, "notes.txt"));
    assert_true(holds(p, "mine\n"));
    t0[nt] = l0[nl] = '\0';
    assert_true(holds(txt, t0)); /* the 4-image lists, kept */
    assert_true(holds(lst, l0));
    snprintf(p, sizeof p, "%s/train", dir);
    assert_int_equal(count(p, true), 5); /* 4 images and the notes */
    snprintf(p, sizeof p, "%s/train.part", dir);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/train.txt.part", dir);
    assert_false(exists(p));
    free(t0);
    free(l0);
    tmpdir_rmrf(dir);
}

/* A list the user wrote during the run (none was there before): refused
 * at the commit and kept; no tree is put in place. */
static void test_list_written_during_run(void **st)
{
    (void)st;
    static const char mine[] = "n01440764/n01440764_10026.JPEG 0\n";
    char dir[64], p[256], txt[256];
    tmpdir_make(dir, "synth");
    snprintf(txt, sizeof txt, "%s/train.txt", dir);
    bg_run b;
    bg_start(&b, dir);
    write_text(txt, mine);
    pthread_join(b.t, NULL);
    assert_int_equal(b.rc, -DLG_EINVAL);
    assert_true(b.r.refused);
    assert_non_null(strstr(b.err.msg, txt));
    assert_true(holds(txt, mine));
    snprintf(p, sizeof p, "%s/train", dir);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/train.lst", dir);
    assert_false(exists(p));
    tmpdir_rmrf(dir);
}

/* res.refused says "bad input" (mkdata's exit 2) for a refusal only: not
 * for an internal DLG_EINVAL (arguments the CLI should have caught) nor
 * for a write that failed. */
static void test_refused_flag(void **st)
{
    (void)st;
    char dir[64], p[256], file[256];
    tmpdir_make(dir, "synth");
    dlg_synth_images_result r;
    dlg_data_err err = {0};
    snprintf(p, sizeof p, "%s/train.lst", dir);
    write_text(p, "0\t0\tmine/cat.jpg\n");
    dlg_synth_images_cfg c = {dir, "train", 2, 4, 1, 50, 1};
    r.refused = false; /* each call must set it, either way */
    assert_int_equal(dlg_synth_images_write(&c, &r, &err), -DLG_EINVAL);
    assert_true(r.refused);
    c.threads = 0; /* internal: not the user's output */
    assert_int_equal(dlg_synth_images_write(&c, &r, &err), -DLG_EINVAL);
    assert_false(r.refused);
    snprintf(file, sizeof file, "%s/afile", dir);
    touch(file);
    c = (dlg_synth_images_cfg){file, "train", 2, 4, 1, 50, 1}; /* --out is a file: cannot be made */
    r.refused = true;
    assert_true(dlg_synth_images_write(&c, &r, &err) < 0);
    assert_false(r.refused);
    tmpdir_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regenerate_replaces),   cmocka_unit_test(test_foreign_refused),
        cmocka_unit_test(test_stale_part_cleared),    cmocka_unit_test(test_text_failure_keeps_old),
        cmocka_unit_test(test_full_disk_named),       cmocka_unit_test(test_foreign_list_refused),
        cmocka_unit_test(test_split_with_space_regenerates),
        cmocka_unit_test(test_text_folder_made),      cmocka_unit_test(test_text_errors_name_out),
        cmocka_unit_test(test_imagenet_tree_refused), cmocka_unit_test(test_tree_without_marker_refused),
        cmocka_unit_test(test_beyond_marker_refused), cmocka_unit_test(test_list_not_exact_refused),
        cmocka_unit_test(test_tree_changed_during_run), cmocka_unit_test(test_list_written_during_run),
        cmocka_unit_test(test_refused_flag),          cmocka_unit_test(test_empty_marker_alone_cleared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
