/* Generated datasets on disk: an ImageNet-layout JPEG tree with its list
 * files (rendered and encoded on N threads), and PTB-like text files. */
#include "jpeg.h"
#include "synth.h"
#include "synth_out.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct tree_job {
    const dlg_synth_images_cfg *cfg;
    _Atomic uint64_t next;
    _Atomic uint64_t bytes, sum_w, sum_h, min_b, max_b;
    atomic_int failed;
    pthread_mutex_t mu;
    dlg_data_err err; /* first failure, under mu */
} tree_job;

static int mkdir_p1(const char *path, dlg_data_err *err)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return 0;
    return dlg_data_fail(err, DLG_EIO, "%s: cannot create folder: %s", path, strerror(errno));
}

/* mkdir -p for the output root (images) or the output's folder (text). */
static int mkdir_p(const char *path, dlg_data_err *err)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return dlg_data_fail(err, DLG_EIO, "%s: cannot create folder: %s", buf,
                                     strerror(errno));
            *p = '/';
        }
    return mkdir_p1(buf, err);
}

/* split/nCCCCCCCC/nCCCCCCCC_I.JPEG; with suffix ".part", where it is made. */
static void rel_path(char *buf, size_t cap, const dlg_synth_images_cfg *c, uint64_t i,
                     const char *suffix)
{
    int label = (int)(i % (uint64_t)c->classes);
    snprintf(buf, cap, "%s%s/n%08d/n%08d_%llu.JPEG", c->split, suffix, label, label,
             (unsigned long long)(i / (uint64_t)c->classes));
}

static int write_file(const char *path, const void *p, size_t n, dlg_data_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot create: %s", path, strerror(errno));
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = errno;
            close(fd);
            return dlg_data_fail(err, DLG_EIO, "%s: write failed: %s", path, strerror(e));
        }
        b += k;
        n -= (size_t)k;
    }
    if (close(fd) != 0)
        return dlg_data_fail(err, DLG_EIO, "%s: close failed: %s", path, strerror(errno));
    return 0;
}

static void atomic_min(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load(a);
    while (v < cur && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

static void atomic_max(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load(a);
    while (v > cur && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

static int one_image(tree_job *j, dlg_jpeg *jp, uint8_t *rgb, uint64_t i, dlg_data_err *err)
{
    const dlg_synth_images_cfg *c = j->cfg;
    int w, h;
    dlg_synth_image_size(c->seed, i, &w, &h);
    dlg_synth_image_render(c->seed, i, (int)(i % (uint64_t)c->classes), w, h, rgb);
    const uint8_t *jpg;
    size_t len;
    int rc = dlg_jpeg_encode(jp, rgb, w, h, c->quality, &jpg, &len, err);
    if (rc < 0)
        return rc;
    char rel[256], path[4096];
    rel_path(rel, sizeof rel, c, i, DLG_SYNTH_PART);
    snprintf(path, sizeof path, "%s/%s", c->out, rel);
    if ((rc = write_file(path, jpg, len, err)) < 0)
        return rc;
    atomic_fetch_add(&j->bytes, len);
    atomic_fetch_add(&j->sum_w, (uint64_t)w);
    atomic_fetch_add(&j->sum_h, (uint64_t)h);
    atomic_min(&j->min_b, len);
    atomic_max(&j->max_b, len);
    return 0;
}

static void *tree_worker(void *arg)
{
    tree_job *j = arg;
    dlg_data_err err = {0};
    dlg_jpeg *jp = NULL;
    uint8_t *rgb = malloc((size_t)DLG_SYNTH_MAX_SIDE * DLG_SYNTH_MAX_SIDE * 3);
    int rc = rgb ? dlg_jpeg_new(&jp, &err) : dlg_data_fail(&err, DLG_ENOMEM, "out of memory");
    for (uint64_t i; rc == 0 && !atomic_load(&j->failed) &&
                     (i = atomic_fetch_add(&j->next, 1)) < j->cfg->images;)
        rc = one_image(j, jp, rgb, i, &err);
    if (rc < 0) {
        pthread_mutex_lock(&j->mu);
        if (!atomic_exchange(&j->failed, 1))
            j->err = err;
        pthread_mutex_unlock(&j->mu);
    }
    dlg_jpeg_free(jp);
    free(rgb);
    return NULL;
}

static const char *const list_ext[2] = {"txt", "lst"};

/* out/split.txt or .lst, plus suffix. */
static void list_path(char *buf, size_t cap, const dlg_synth_images_cfg *c, int k,
                      const char *suffix)
{
    snprintf(buf, cap, "%s/%s.%s%s", c->out, c->split, list_ext[k], suffix);
}

/* fclose of a written f with one line naming path and, when known, why. */
static int close_checked(FILE *f, const char *path, dlg_data_err *err)
{
    bool bad = ferror(f) != 0;
    int e = bad ? errno : 0; /* still the failed write's */
    if (fclose(f) != 0) {
        bad = true;
        e = errno;
    }
    if (!bad)
        return 0;
    char why[128];
    return dlg_data_fail(err, DLG_EIO, "%s: write failed%s", path,
                         dlg_synth_reason(e, why, sizeof why));
}

/* The lists, as .part files; paths in them name the final tree. */
static int write_lists(const dlg_synth_images_cfg *c, dlg_data_err *err)
{
    char path[2][4096], rel[256];
    FILE *f[2] = {NULL, NULL};
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        list_path(path[k], sizeof path[k], c, k, DLG_SYNTH_PART);
        if (!(f[k] = fopen(path[k], "w")))
            rc = dlg_data_fail(err, DLG_EIO, "%s: cannot create: %s", path[k], strerror(errno));
    }
    for (uint64_t i = 0; rc == 0 && i < c->images; i++) {
        rel_path(rel, sizeof rel, c, i, "");
        int label = (int)(i % (uint64_t)c->classes);
        fprintf(f[0], "%s %d\n", rel, label);
        fprintf(f[1], "%llu\t%d\t%s\n", (unsigned long long)i, label, rel);
    }
    for (int k = 0; k < 2; k++)
        if (f[k]) {
            int r = close_checked(f[k], path[k], rc < 0 ? NULL : err);
            rc = rc < 0 ? rc : r;
        }
    return rc;
}

static void remove_parts(const dlg_synth_images_cfg *c, const char *part)
{
    char path[4096];
    dlg_synth_tree_remove(part, NULL);
    for (int k = 0; k < 2; k++) {
        list_path(path, sizeof path, c, k, DLG_SYNTH_PART);
        unlink(path);
    }
}

/* The complete .part tree and lists replace the old ones.  The old lists go
 * first and the new ones come last, so a crash in between leaves no list
 * that names a tree which is not there or not whole. */
static int commit_images(const dlg_synth_images_cfg *c, const char *final, const char *part,
                         dlg_data_err *err)
{
    char from[4096], to[4096];
    for (int k = 0; k < 2; k++) {
        list_path(to, sizeof to, c, k, "");
        if (unlink(to) != 0 && errno != ENOENT)
            return dlg_data_fail(err, DLG_EIO, "%s: cannot replace: %s", to, strerror(errno));
    }
    int rc = dlg_synth_tree_remove(final, err);
    if (rc == 0)
        rc = dlg_synth_rename(part, final, err);
    for (int k = 0; k < 2 && rc == 0; k++) {
        list_path(from, sizeof from, c, k, DLG_SYNTH_PART);
        list_path(to, sizeof to, c, k, "");
        rc = dlg_synth_rename(from, to, err);
    }
    return rc;
}

/* An empty out/split.part with one folder per class. */
static int make_part_tree(const dlg_synth_images_cfg *c, const char *part, dlg_data_err *err)
{
    int rc = mkdir_p1(part, err);
    for (int k = 0; rc == 0 && k < c->classes; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/n%08d", part, k);
        rc = mkdir_p1(path, err);
    }
    return rc;
}

/* Renders and encodes every image on c->threads threads. */
static int render_all(const dlg_synth_images_cfg *c, tree_job *j, dlg_data_err *err)
{
    atomic_init(&j->min_b, UINT64_MAX);
    pthread_mutex_init(&j->mu, NULL);
    pthread_t *tids = calloc((size_t)c->threads, sizeof *tids);
    int started = 0;
    for (; tids && started < c->threads; started++)
        if (pthread_create(&tids[started], NULL, tree_worker, j) != 0)
            break;
    if (started == 0)
        tree_worker(j); /* no threads to be had: do it here */
    for (int t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    free(tids);
    pthread_mutex_destroy(&j->mu);
    if (atomic_load(&j->failed)) {
        *err = j->err;
        return -j->err.code;
    }
    return 0;
}

bool dlg_synth_split_ok(const char *split)
{
    return split[0] && strlen(split) <= DLG_SYNTH_SPLIT_MAX && strcmp(split, ".") && strcmp(split, "..") &&
           !strpbrk(split, "/\t\r\n");
}

int dlg_synth_images_write(const dlg_synth_images_cfg *c, dlg_synth_images_result *res,
                           dlg_data_err *err)
{
    if (c->classes < 1 || c->images < 1 || c->quality < 1 || c->quality > 100 || c->threads < 1 ||
        !dlg_synth_split_ok(c->split))
        return dlg_data_fail(err, DLG_EINVAL, "mkdata images: bad arguments");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char final[4096], part[4096 + sizeof DLG_SYNTH_PART];
    snprintf(final, sizeof final, "%s/%s", c->out, c->split);
    snprintf(part, sizeof part, "%s%s", final, DLG_SYNTH_PART);
    /* refuse a foreign folder or list before any work; a .part is an interrupted run's */
    int rc = mkdir_p(c->out, err);
    if (rc == 0)
        rc = dlg_synth_tree_check(final, err);
    for (int k = 0; k < 2 && rc == 0; k++) { /* and a list of that name the user wrote */
        char list[4096];
        list_path(list, sizeof list, c, k, "");
        rc = dlg_synth_list_check(list, c->split, k == 1, err);
    }
    if (rc == 0)
        rc = dlg_synth_tree_remove(part, err);
    if (rc < 0)
        return rc;
    tree_job j = {.cfg = c};
    rc = make_part_tree(c, part, err);
    if (rc == 0)
        rc = render_all(c, &j, err);
    if (rc == 0)
        rc = write_lists(c, err);
    if (rc == 0)
        rc = commit_images(c, final, part, err);
    if (rc < 0) {
        remove_parts(c, part);
        return rc;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->images = c->images;
    res->bytes = atomic_load(&j.bytes);
    res->min_bytes = atomic_load(&j.min_b);
    res->max_bytes = atomic_load(&j.max_b);
    res->mean_w = (double)atomic_load(&j.sum_w) / (double)c->images;
    res->mean_h = (double)atomic_load(&j.sum_h) / (double)c->images;
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return 0;
}

static int64_t file_write(void *ctx, const void *buf, size_t n)
{
    return fwrite(buf, 1, n, ctx) == n ? (int64_t)n : -DLG_EIO;
}

/* Writes n tokens to part (name's .part file, or name itself); errors
 * name `name`, the file the user asked for. */
static int text_file(dlg_synth_text *t, const char *name, const char *part, uint64_t n, dlg_data_err *err)
{
    FILE *f = fopen(part, "w");
    if (!f)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot create: %s", name, strerror(errno));
    dlg_output o = {file_write, f, name};
    int64_t got = n ? dlg_synth_text_write(t, n, &o, err) : 0;
    int rc = close_checked(f, name, got < 0 ? NULL : err);
    return got < 0 ? (int)got : rc;
}

/* The folder the text files go to, made as mkdata images makes its DIR. */
static int make_parent(const char *path, dlg_data_err *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) /* the current folder, or / */
        return 0;
    *slash = '\0';
    return mkdir_p(dir, err);
}

int dlg_synth_text_files(const char *path, uint64_t words, int vocab, uint64_t seed, int splits,
                         dlg_data_err *err)
{
    static const char *const names[3] = {"train", "valid", "test"};
    static const double share[3] = {0.856, 0.068, 0.076};
    dlg_synth_text *t;
    int rc = make_parent(path, err);
    if (rc == 0)
        rc = dlg_synth_text_new(&t, vocab, seed, err);
    if (rc < 0)
        return rc;
    int files = splits ? 3 : 1;
    char name[3][4096], part[3][4096 + sizeof DLG_SYNTH_PART];
    uint64_t left = words;
    for (int k = 0; k < files; k++) {
        uint64_t n = !splits ? words : k == 2 ? left : (uint64_t)(words * share[k]);
        left -= n < left ? n : left;
        if (splits)
            snprintf(name[k], sizeof name[k], "%s.%s.txt", path, names[k]);
        else
            snprintf(name[k], sizeof name[k], "%s", path);
        /* a device, pipe or link (/dev/stdout) is written in place */
        struct stat st;
        bool in_place = lstat(name[k], &st) == 0 && !S_ISREG(st.st_mode);
        snprintf(part[k], sizeof part[k], "%s%s", name[k], in_place ? "" : DLG_SYNTH_PART);
        if (rc == 0)
            rc = text_file(t, name[k], part[k], n, err);
    }
    dlg_synth_text_free(t);
    /* only a complete corpus replaces the old files */
    for (int k = 0; k < files && rc == 0; k++)
        if (strcmp(part[k], name[k]) != 0)
            rc = dlg_synth_rename(part[k], name[k], err);
    if (rc < 0)
        for (int k = 0; k < files; k++)
            if (strcmp(part[k], name[k]) != 0)
                unlink(part[k]);
    return rc;
}
