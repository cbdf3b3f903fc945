/* Folder-of-images source: a convert_imageset list file or an im2rec .lst
 * (paths relative to the list's folder: im2rec's --root, where mkdata
 * writes both), or an ImageNet-style class-folder scan.  Each record is one
 * file, opened and read whole through the job's storage. */
#include "listfile.h"
#include "loader_src.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct files_src {
    dlg_ld_src base;
    char *root;
    dlg_filelist list;
} files_src;

typedef struct files_worker {
    dlg_ld_buf buf;
    char path[PATH_MAX]; /* the whole path: an item's `what` is shorter */
} files_worker;

/* Length of image i's path; the path goes to buf when it fits (cap). */
static size_t path_of(const files_src *s, size_t i, char *buf, size_t cap)
{
    const char *rel = s->list.entries[i].path;
    int n = rel[0] == '/' /* an absolute path in the list stands as it is (os.path.join) */
                ? snprintf(buf, cap, "%s", rel)
                : snprintf(buf, cap, "%s/%s", s->root, rel);
    return n < 0 ? 0 : (size_t)n;
}

static const char *files_file_path(const dlg_ld_src *base, size_t i, char *buf, size_t cap)
{
    path_of((const files_src *)base, i, buf, cap);
    return buf;
}

/* Error messages name the file by its tail when the whole path is longer
 * than an item's `what`: the file name is the part that tells. */
static void name_item(dlg_ld_item *it, const char *path, size_t len)
{
    if (len < sizeof it->what)
        memcpy(it->what, path, len + 1);
    else
        snprintf(it->what, sizeof it->what, "...%s", path + len - (sizeof it->what - 4));
}

static int files_worker_open(dlg_ld_src *base, void **w, dlg_data_err *err)
{
    files_worker *k = calloc(1, sizeof *k);
    if (!k)
        return dlg_data_fail(err, DLG_ENOMEM, "loader: out of memory");
    *w = k;
    return 0;
}

static void files_worker_close(dlg_ld_src *base, void *w)
{
    files_worker *k = w;
    if (!k)
        return;
    dlg_ld_buf_free(&k->buf);
    free(k);
}

static int files_read(dlg_ld_src *base, void *w, uint64_t index, dlg_ld_item *it,
                      dlg_data_err *err)
{
    files_src *s = (files_src *)base;
    files_worker *k = w;
    const dlg_host *h = base->h;
    name_item(it, k->path, path_of(s, (size_t)index, k->path, sizeof k->path));
    it->bytes_read = 0;
    dlg_file *f;
    int rc = h->file_open(h, NULL, k->path, &f);
    if (rc < 0)
        return dlg_ld_open_failed(h, k->path, it->what, " (listed in the dataset)", rc, err);
    uint64_t size = 0;
    rc = h->file_size(h, f, &size);
    if (rc < 0) {
        h->file_close(h, f);
        return dlg_data_fail(err, -rc, "%s: cannot get its size", it->what);
    }
    if (size > (1u << 30)) {
        h->file_close(h, f);
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: %llu bytes is too large for an image",
                             it->what, (unsigned long long)size);
    }
    const uint8_t *p;
    int64_t got = dlg_ld_read(h, f, it->what, &k->buf, 0, (size_t)size, &p, &it->bytes_read, err);
    h->file_close(h, f);
    if (got < 0)
        return (int)got;
    it->bytes = p;
    it->len = (size_t)got;
    it->pixels = NULL;
    it->fpixels = NULL;
    it->label = s->list.entries[index].label;
    return 0;
}

static void files_close(dlg_ld_src *base)
{
    files_src *s = (files_src *)base;
    dlg_filelist_free(&s->list);
    free(s->root);
    free(s);
}

static const dlg_ld_src_ops files_ops = {"files",    files_worker_open, files_worker_close,
                                         files_read, files_file_path,   files_close};

static int load_list(files_src *s, const char *path, dlg_data_err *err)
{
    const char *slash = strrchr(path, '/');
    s->root = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    if (!s->root)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    if (!s->root[0]) { /* "/list.txt" */
        free(s->root);
        if (!(s->root = strdup("/")))
            return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    }
    dlg_source src;
    dlg_ld_hostfile hf;
    int rc = dlg_ld_source_host(&src, &hf, s->base.h, path, err);
    if (rc < 0)
        return rc;
    rc = dlg_filelist_load(&s->list, &src, err);
    dlg_ld_source_host_close(&hf);
    if (rc < 0)
        return rc;
    int32_t max = -1;
    for (size_t i = 0; i < s->list.n; i++)
        if (s->list.entries[i].label > max)
            max = s->list.entries[i].label;
    s->base.nclasses = max < INT32_MAX ? max + 1 : 0; /* 2^31 classes: no int, unknown */
    return 0;
}

/* Every path must fit a path buffer: a cut one would name another file. */
static int check_paths(const files_src *s, dlg_data_err *err)
{
    char p[PATH_MAX];
    for (size_t i = 0; i < s->list.n; i++)
        if (path_of(s, i, p, sizeof p) >= sizeof p)
            return dlg_data_fail(err, DLG_EINVAL,
                                 "dataset %s: image %zu's path is longer than %zu bytes "
                                 "(%.80s...)", s->root, i, sizeof p - 1, s->list.entries[i].path);
    return 0;
}

/* The dataset's size from the file system (setup, untimed): what a report
 * compares block-device reads with to see a page cache that thrashes.  A
 * file that cannot be stat'ed counts nothing here; reading it says why. */
static uint64_t total_bytes(const files_src *s)
{
    uint64_t sum = 0;
    char p[PATH_MAX];
    for (size_t i = 0; i < s->list.n; i++) {
        struct stat st;
        if (stat(files_file_path(&s->base, i, p, sizeof p), &st) == 0 && S_ISREG(st.st_mode))
            sum += (uint64_t)st.st_size;
    }
    return sum;
}

int dlg_ld_src_files(dlg_ld_src **out, const char *path, const dlg_host *h, dlg_data_err *err)
{
    files_src *s = calloc(1, sizeof *s);
    if (!s)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    s->base.ops = &files_ops;
    s->base.h = h;
    struct stat st;
    int rc;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = (s->root = strdup(path)) ? dlg_filelist_scan(&s->list, path, err)
                                      : dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
        s->base.nclasses = (int)s->list.nclasses;
    } else {
        rc = load_list(s, path, err);
    }
    if (rc == 0 && s->list.n == 0)
        rc = dlg_data_fail(err, DLG_EINVAL, "%s: the dataset has no images", path);
    if (rc == 0)
        rc = check_paths(s, err);
    if (rc < 0) {
        files_close(&s->base);
        return rc;
    }
    s->base.n = s->list.n;
    s->base.nfiles = s->list.n;
    s->base.bytes = total_bytes(s);
    *out = &s->base;
    return 0;
}
