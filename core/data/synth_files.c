/* Generated datasets on disk: an ImageNet-layout JPEG tree with its list
 * files (rendered and encoded on N threads), and PTB-like text files. */
#include "jpeg.h"
#include "synth.h"
#include "synth_out.h"
#include "synth_vocab.h"

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
#include <dlgauge/fnv1a.h>

typedef struct tree_job {
    const dlg_synth_images_cfg *cfg;
    uint64_t seed; /* the split's (dlg_synth_split_seed) */
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

uint64_t dlg_synth_split_seed(uint64_t seed, const char *split)
{
    if (strcmp(split, "train") == 0) /* the images train has always had */
        return seed;
    uint64_t h = dlg_fnv1a_str(DLG_FNV1A_INIT, split); /* then mixed */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return seed ^ (h ^ (h >> 33));
}

static int one_image(tree_job *j, dlg_jpeg *jp, uint8_t *rgb, uint64_t i, dlg_data_err *err)
{
    const dlg_synth_images_cfg *c = j->cfg;
    uint64_t seed = j->seed;
    int w, h;
    dlg_synth_image_size(seed, i, &w, &h);
    dlg_synth_image_render(seed, i, (int)(i % (uint64_t)c->classes), w, h, rgb);
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

/* What stands at the tree and the lists is mkdata's to replace (or is
 * not there): 0, or -DLG_EINVAL (a refusal) naming the first foreign entry
 * or line, or -DLG_EIO. */
static int check_targets(const dlg_synth_images_cfg *c, const char *final, dlg_data_err *err)
{
    int rc = dlg_synth_tree_check(final, err);
    for (int k = 0; k < 2 && rc == 0; k++) {
        char list[4096];
        list_path(list, sizeof list, c, k, "");
        rc = dlg_synth_list_check(list, c->split, k == 1, err);
    }
    return rc;
}

/* The complete .part tree and lists replace the old ones, once all of
 * those are checked again (the render took its time: what appeared there
 * meanwhile is the user's, and nothing is removed then).  The old lists go
 * first and the new ones come last, so a crash in between leaves no list
 * that names a tree which is not there or not whole. */
static int commit_images(const dlg_synth_images_cfg *c, const char *final, const char *part, bool *refused,
                         dlg_data_err *err)
{
    char from[4096], to[4096];
    int rc = check_targets(c, final, err);
    for (int k = 0; k < 2 && rc == 0; k++) {
        list_path(to, sizeof to, c, k, "");
        if (unlink(to) != 0 && errno != ENOENT)
            rc = dlg_data_fail(err, DLG_EIO, "%s: cannot replace: %s", to, strerror(errno));
    }
    if (rc == 0)
        rc = dlg_synth_tree_remove(final, err);
    if (rc == 0)
        rc = dlg_synth_rename(part, final, err);
    for (int k = 0; k < 2 && rc == 0; k++) {
        list_path(from, sizeof from, c, k, DLG_SYNTH_PART);
        list_path(to, sizeof to, c, k, "");
        rc = dlg_synth_rename(from, to, err);
    }
    *refused = rc == -DLG_EINVAL; /* only the checks say that */
    return rc;
}

/* An empty out/split.part with one folder per class. */
static int make_part_tree(const dlg_synth_images_cfg *c, const char *part, dlg_data_err *err)
{
    int rc = mkdir_p1(part, err);
    if (rc == 0) /* first: what it makes is known to be mkdata's from the start */
        rc = dlg_synth_marker_write(part, c->classes, c->images, err);
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
    *res = (dlg_synth_images_result){.refused = false};
    if (c->classes < 1 || c->images < 1 || c->quality < 1 || c->quality > 100 || c->threads < 1 ||
        !dlg_synth_split_ok(c->split))
        return dlg_data_fail(err, DLG_EINVAL, "mkdata images: bad arguments"); /* the caller's checks missed it */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char final[4096], part[4096 + sizeof DLG_SYNTH_PART];
    snprintf(final, sizeof final, "%s/%s", c->out, c->split);
    snprintf(part, sizeof part, "%s%s", final, DLG_SYNTH_PART);
    /* refuse a foreign folder or list before any work; a .part is an interrupted run's */
    int rc = mkdir_p(c->out, err);
    if (rc == 0)
        rc = check_targets(c, final, err);
    if (rc == 0)
        rc = dlg_synth_tree_remove(part, err);
    if (rc < 0) {
        res->refused = rc == -DLG_EINVAL; /* only the checks say that */
        return rc;
    }
    tree_job j = {.cfg = c, .seed = dlg_synth_split_seed(c->seed, c->split)};
    rc = make_part_tree(c, part, err);
    if (rc == 0)
        rc = render_all(c, &j, err);
    if (rc == 0)
        rc = write_lists(c, err);
    if (rc == 0)
        rc = commit_images(c, final, part, &res->refused, err);
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

/* A text file being written: counts what goes out and, through the
 * vocabulary index, marks train's words or keeps valid/test to them. */
typedef struct text_sink {
    FILE *f;
    dlg_synth_vocab *v; /* train's words (the one file's without splits) */
    bool train;         /* mark the words; else write unseen ones as <unk> */
    bool need_unk;      /* train of splits: on until it holds <unk> */
    uint64_t words, bytes;
    char line[4096];    /* a rewritten sentence (<= 120 words of <= 24 bytes) */
} text_sink;

/* One call per whole sentence (" w1 w2 ... wn \n", dlg_synth_text_write). */
static int64_t sink_write(void *ctx, const void *buf, size_t n)
{
    text_sink *k = ctx; /* v is always set; train marks, valid/test check */
    const char *p = buf, *end = p + n;
    size_t out = 0;
    while (p < end) {
        const char *w = p;
        while (p < end && *p != ' ' && *p != '\n')
            p++;
        if (p > w) {
            int r = dlg_synth_vocab_rank(k->v, w, (size_t)(p - w));
            if (k->train && r >= 0)
                dlg_synth_vocab_mark(k->v, r);
            bool unk = !k->train && (r < 0 || !dlg_synth_vocab_seen(k->v, r));
            const char *tok = unk ? "<unk>" : w;
            size_t len = unk ? 5 : (size_t)(p - w);
            if (out + len + 1 >= sizeof k->line)
                return -DLG_EINTERNAL; /* longer than any sentence the generator makes */
            memcpy(k->line + out, tok, len);
            out += len;
            k->words++;
        }
        if (p < end)
            k->line[out++] = *p++;
    }
    if (fwrite(k->line, 1, out, k->f) != out)
        return -DLG_EIO;
    k->bytes += out;
    return (int64_t)n;
}

/* Writes n tokens to part (name's .part file, or name itself), and a
 * train file on until it holds <unk> (valid and test write what train
 * lacks as <unk>); errors name `name`, the file the user asked for. */
static int text_file(dlg_synth_text *t, const char *name, const char *part, uint64_t n,
                     text_sink *k, dlg_data_err *err)
{
    if (!(k->f = fopen(part, "w")))
        return dlg_data_fail(err, DLG_EIO, "%s: cannot create: %s", name, strerror(errno));
    dlg_output o = {sink_write, k, name};
    int64_t got = dlg_synth_text_write(t, n, &o, err);
    while (got >= 0 && k->need_unk && !dlg_synth_vocab_seen(k->v, 1))
        got = dlg_synth_text_write(t, 1, &o, err); /* rank 1 is <unk> */
    int rc = close_checked(k->f, name, got < 0 ? NULL : err);
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

/* Tokens of split k of `words` (PTB's shares), at least one sentence's. */
static uint64_t split_words(uint64_t words, int k, uint64_t left)
{
    static const double share[3] = {0.856, 0.068, 0.076};
    uint64_t n = k == 2 ? left : (uint64_t)((double)words * share[k]);
    return n > 0 ? n : 1;
}

/* Writes the files as .part (or in place: a device, pipe or link such as
 * /dev/stdout), filling res; part[k] gets each file's written name. */
static int write_texts(dlg_synth_text *t, dlg_synth_vocab *v, const char *path, uint64_t words,
                       int splits, char name[][4096], char part[][4096 + sizeof DLG_SYNTH_PART],
                       dlg_synth_text_result *res, dlg_data_err *err)
{
    static const char *const names[3] = {"train", "valid", "test"};
    text_sink *k = malloc(sizeof *k);
    if (!k)
        return dlg_data_fail(err, DLG_ENOMEM, "text: out of memory");
    int rc = 0;
    uint64_t left = words;
    for (int i = 0; i < (splits ? 3 : 1); i++) {
        uint64_t n = splits ? split_words(words, i, left) : words;
        left -= n < left ? n : left;
        if (splits)
            snprintf(name[i], 4096, "%s.%s.txt", path, names[i]);
        else
            snprintf(name[i], 4096, "%s", path);
        struct stat st;
        bool in_place = lstat(name[i], &st) == 0 && !S_ISREG(st.st_mode);
        snprintf(part[i], 4096 + sizeof DLG_SYNTH_PART, "%s%s", name[i], in_place ? "" : DLG_SYNTH_PART);
        if (rc < 0)
            continue; /* names only, for the clean-up */
        *k = (text_sink){.v = v, .train = i == 0, .need_unk = splits && i == 0};
        rc = text_file(t, name[i], part[i], n, k, err);
        res->words[i] = k->words;
        res->bytes[i] = k->bytes;
    }
    free(k);
    return rc;
}

int dlg_synth_text_files_res(const char *path, uint64_t words, int vocab, uint64_t seed,
                             int splits, dlg_synth_text_result *res, dlg_data_err *err)
{
    dlg_synth_text_result local;
    res = res ? res : &local;
    memset(res, 0, sizeof *res);
    dlg_synth_text *t = NULL;
    dlg_synth_vocab *v = NULL;
    int rc = make_parent(path, err);
    if (rc == 0)
        rc = dlg_synth_text_new(&t, vocab, seed, err);
    if (rc == 0)
        rc = dlg_synth_vocab_new(&v, t, vocab, err);
    if (rc < 0) {
        dlg_synth_text_free(t);
        return rc;
    }
    int files = splits ? 3 : 1;
    char name[3][4096], part[3][4096 + sizeof DLG_SYNTH_PART];
    rc = write_texts(t, v, path, words, splits, name, part, res, err);
    res->vocab_used = dlg_synth_vocab_count(v);
    dlg_synth_vocab_free(v);
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

int dlg_synth_text_files(const char *path, uint64_t words, int vocab, uint64_t seed, int splits,
                         dlg_data_err *err)
{
    return dlg_synth_text_files_res(path, words, vocab, seed, splits, NULL, err);
}
