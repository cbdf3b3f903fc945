/* ImageNet-style folder scan (as torchvision's ImageFolder): class = first
 * level folder, labels from the sorted class names, images anywhere below. */
#include "listfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define MAX_DEPTH 32 /* guards against symlink loops */

typedef struct strvec {
    char **v;
    size_t n, cap;
} strvec;

typedef struct scan {
    const char *root;
    dlg_data_err *err;
    char *pool; /* all strings, NUL-separated */
    size_t pool_len, pool_cap;
    size_t *off; /* entry paths then class names, as pool offsets */
    int32_t *label;
    size_t n, cap;
} scan;

static int oom(scan *s) { return dlg_data_fail(s->err, DLG_ENOMEM, "%s: out of memory", s->root); }

static int strvec_push(strvec *v, const char *str)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        char **p = realloc(v->v, cap * sizeof *p);
        if (!p)
            return -1;
        v->v = p;
        v->cap = cap;
    }
    if (!(v->v[v->n] = strdup(str)))
        return -1;
    v->n++;
    return 0;
}

static void strvec_free(strvec *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->v[i]);
    free(v->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Not only JPEG names: the loader (files:) and preprocess then name a PNG,
 * BMP... they cannot use (or count it, skip_corrupt), where leaving it out
 * here would shrink a dataset without a word. */
static bool is_image(const char *name)
{
    static const char *const ext[] = {"jpg", "jpeg", "png", "ppm", "pgm",
                                      "bmp", "tif", "tiff", "webp"};
    const char *dot = strrchr(name, '.');
    if (!dot)
        return false;
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++)
        if (strcasecmp(dot + 1, ext[i]) == 0)
            return true;
    return false;
}

/* Appends a string plus its label (-1 for class names) to the result. */
static int add(scan *s, const char *str, int32_t label)
{
    size_t n = strlen(str) + 1;
    if (s->pool_len + n > s->pool_cap) {
        size_t cap = s->pool_cap ? s->pool_cap : 4096;
        while (cap < s->pool_len + n)
            cap *= 2;
        char *p = realloc(s->pool, cap);
        if (!p)
            return oom(s);
        s->pool = p;
        s->pool_cap = cap;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        size_t *o = realloc(s->off, cap * sizeof *o);
        if (o)
            s->off = o;
        int32_t *l = o ? realloc(s->label, cap * sizeof *l) : NULL;
        if (!l)
            return oom(s);
        s->label = l;
        s->cap = cap;
    }
    memcpy(s->pool + s->pool_len, str, n);
    s->off[s->n] = s->pool_len;
    s->label[s->n++] = label;
    s->pool_len += n;
    return 0;
}

/* Lists rel (relative to root): sub-folders into dirs, images into files. */
static int list_dir(scan *s, const char *rel, strvec *dirs, strvec *files)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s->root, rel);
    DIR *d = opendir(path);
    if (!d)
        return dlg_data_fail(s->err, DLG_EIO, "%s: cannot list: %s", path, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char child[4096];
        int n = snprintf(child, sizeof child, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        if (n < 0 || (size_t)n >= sizeof child - strlen(s->root) - 2) {
            rc = dlg_data_fail(s->err, DLG_EINVAL, "%s: path too long under %s", e->d_name, path);
            break;
        }
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", s->root, child);
        struct stat st;
        if (stat(full, &st) != 0)
            continue; /* dangling symlink */
        if (S_ISDIR(st.st_mode) && dirs && strvec_push(dirs, child) < 0)
            rc = oom(s);
        else if (S_ISREG(st.st_mode) && files && is_image(e->d_name) && strvec_push(files, child) < 0)
            rc = oom(s);
    }
    closedir(d);
    return rc;
}

static int walk(scan *s, const char *rel, strvec *files, int depth)
{
    if (depth > MAX_DEPTH)
        return dlg_data_fail(s->err, DLG_EINVAL, "%s/%s: folders nested deeper than %d (a loop?)",
                             s->root, rel, MAX_DEPTH);
    strvec dirs = {0};
    int rc = list_dir(s, rel, &dirs, files);
    for (size_t i = 0; rc == 0 && i < dirs.n; i++)
        rc = walk(s, dirs.v[i], files, depth + 1);
    strvec_free(&dirs);
    return rc;
}

static int scan_classes(scan *s, strvec *classes)
{
    int rc = list_dir(s, "", classes, NULL);
    if (rc < 0)
        return rc;
    if (classes->n == 0)
        return dlg_data_fail(s->err, DLG_EINVAL, "%s: no class folders (expected root/<class>/<image>)",
                             s->root);
    qsort(classes->v, classes->n, sizeof *classes->v, cmp_str);
    for (size_t c = 0; c < classes->n; c++) {
        strvec files = {0};
        rc = walk(s, classes->v[c], &files, 0);
        if (rc == 0 && files.n > 1)
            qsort(files.v, files.n, sizeof *files.v, cmp_str);
        for (size_t i = 0; rc == 0 && i < files.n; i++)
            rc = add(s, files.v[i], (int32_t)c);
        strvec_free(&files);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int finish(scan *s, const strvec *classes, dlg_filelist *out)
{
    size_t nimg = s->n;
    if (nimg == 0)
        return dlg_data_fail(s->err, DLG_EINVAL, "%s: no images found in %zu class folders",
                             s->root, classes->n);
    for (size_t c = 0; c < classes->n; c++)
        if (add(s, classes->v[c], -1) < 0)
            return -DLG_ENOMEM;
    out->entries = malloc(nimg * sizeof *out->entries);
    out->classes = malloc(classes->n * sizeof *out->classes);
    if (!out->entries || !out->classes)
        return oom(s);
    for (size_t i = 0; i < nimg; i++)
        out->entries[i] = (dlg_list_entry){s->pool + s->off[i], s->label[i]};
    for (size_t c = 0; c < classes->n; c++)
        out->classes[c] = s->pool + s->off[nimg + c];
    out->n = nimg;
    out->nclasses = classes->n;
    out->pool_ = s->pool;
    out->off_ = s->off;
    s->pool = NULL;
    s->off = NULL;
    return 0;
}

int dlg_filelist_scan(dlg_filelist *out, const char *root, dlg_data_err *err)
{
    memset(out, 0, sizeof *out);
    scan s = {.root = root, .err = err};
    strvec classes = {0};
    int rc = scan_classes(&s, &classes);
    if (rc == 0)
        rc = finish(&s, &classes, out);
    strvec_free(&classes);
    free(s.pool);
    free(s.off);
    free(s.label);
    if (rc < 0)
        dlg_filelist_free(out);
    return rc;
}
