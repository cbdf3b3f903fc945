/* What a preprocess output may replace (prep_output.h): its names, and a
 * check that each holds only what preprocess writes, run before any work
 * (check, setup) and again before a commit renames anything; the same for
 * mean_output's file. */
#define _GNU_SOURCE
#include "prep_output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binaryproto.h"
#include "recordio.h"

/* What may stand at a name before preprocess writes it. */
typedef enum kind { KIND_REC, KIND_IDX, KIND_LMDB } kind;

#define IDX_PEEK 65536 /* bytes of an .idx read to tell it from another file */

/* The .idx beside a .rec, as im2rec names it: train.rec -> train.idx. */
static char *idx_name(const char *rec)
{
    size_t n = strlen(rec);
    if (n > 4 && strcmp(rec + n - 4, ".rec") == 0) {
        char *s = strdup(rec);
        if (s)
            memcpy(s + n - 4, ".idx", 4);
        return s;
    }
    return tools_concat(rec, ".idx");
}

void prep_names_free(prep_names *n)
{
    free(n->path);
    free(n->part);
    free(n->old);
    free(n->idx);
    free(n->idx_part);
    *n = (prep_names){0};
}

int prep_names_make(prep_names *n, prep_format fmt, const char *path)
{
    *n = (prep_names){.path = strdup(path), .part = tools_concat(path, ".part")};
    bool ok = n->path && n->part;
    if (fmt == PREP_RECORDIO) {
        n->idx = idx_name(path);
        n->idx_part = n->idx ? tools_concat(n->idx, ".part") : NULL;
        n->old = n->idx ? tools_concat(n->idx, ".old.part") : NULL;
        ok = ok && n->idx_part && n->old;
    } else {
        n->old = tools_concat(path, ".old.part");
        ok = ok && n->old;
    }
    if (!ok) {
        prep_names_free(n);
        return -DLG_ENOMEM;
    }
    return 0;
}

static const char *fmt_name(prep_format fmt) { return fmt == PREP_RECORDIO ? "recordio" : "lmdb"; }

/* The refusal: "output = FMT:PATH: NAME exists and WHAT; refusing ...". */
static int refuse(prep_format fmt, const char *path, const char *name, const char *what, dlg_data_err *err)
{
    bool self = strcmp(name, path) == 0;
    return dlg_data_fail(err, DLG_EINVAL,
                         "output = %s:%s: %s%sexists and %s; refusing to replace it (remove it yourself, or "
                         "choose another output)",
                         fmt_name(fmt), path, self ? "" : name, self ? "" : " ", what);
}

/* A RecordIO file starts with the magic; an empty one holds nothing. */
static int check_rec(prep_format fmt, const char *path, const char *name, int fd, const struct stat *st,
                     dlg_data_err *err)
{
    uint32_t magic = 0;
    if (st->st_size == 0)
        return 0;
    if (pread(fd, &magic, sizeof magic, 0) != (ssize_t)sizeof magic || magic != DLG_REC_MAGIC)
        return refuse(fmt, path, name, "is not a RecordIO file (it does not start with RecordIO's magic)", err);
    return 0;
}

/* Digits, a tab, digits: im2rec's "key<TAB>offset". */
static bool idx_line(const char *s, size_t n)
{
    size_t i = 0, d1 = 0, d2 = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        d1++;
    if (i == n || s[i++] != '\t')
        return false;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        d2++;
    return d1 && d2 && i == n;
}

/* The first IDX_PEEK bytes are .idx lines (the last one, cut there or by
 * a crash, only digits and tabs so far). */
static int check_idx(prep_format fmt, const char *path, const char *name, int fd, dlg_data_err *err)
{
    char *buf = malloc(IDX_PEEK);
    if (!buf)
        return dlg_data_fail(err, DLG_ENOMEM, "output = %s:%s: out of memory", fmt_name(fmt), path);
    ssize_t got = pread(fd, buf, IDX_PEEK, 0);
    size_t n = got > 0 ? (size_t)got : 0, start = 0, line = 1;
    bool ok = got >= 0;
    for (size_t i = 0; ok && i < n; i++)
        if (buf[i] == '\n') {
            ok = idx_line(buf + start, i - start);
            start = i + 1;
            line += ok;
        }
    for (size_t i = start; ok && i < n; i++)
        ok = buf[i] == '\t' || (buf[i] >= '0' && buf[i] <= '9');
    free(buf);
    if (ok)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "is not an im2rec index (line %zu is not KEY<TAB>OFFSET)", line);
    return refuse(fmt, path, name, what, err);
}

/* An LMDB folder: nothing in it but regular files data.mdb and lock.mdb. */
static int check_lmdb(prep_format fmt, const char *path, const char *dir, dlg_data_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return dlg_data_fail(err, DLG_EINVAL, "output = %s:%s: %s: cannot list: %s", fmt_name(fmt), path, dir,
                             strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat st;
        bool mdb = !strcmp(e->d_name, "data.mdb") || !strcmp(e->d_name, "lock.mdb");
        if (!mdb || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
            char what[400];
            snprintf(what, sizeof what, "holds %.300s, which is not an LMDB's (only data.mdb and lock.mdb are)",
                     e->d_name);
            rc = refuse(fmt, path, dir, what, err);
        }
    }
    closedir(d);
    return rc;
}

/* name, if it exists, holds what preprocess may replace as k. */
static int check_kind(prep_format fmt, const char *path, const char *name, kind k, dlg_data_err *err)
{
    struct stat st;
    if (lstat(name, &st) != 0)
        return errno == ENOENT ? 0
                               : dlg_data_fail(err, DLG_EINVAL, "output = %s:%s: %s: %s", fmt_name(fmt), path,
                                               name, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return refuse(fmt, path, name, "is a symbolic link", err);
    if (k == KIND_LMDB)
        return S_ISDIR(st.st_mode) ? check_lmdb(fmt, path, name, err)
                                   : refuse(fmt, path, name, "is not a directory (an LMDB is one)", err);
    if (!S_ISREG(st.st_mode))
        return refuse(fmt, path, name, S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file", err);
    int fd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return dlg_data_fail(err, DLG_EINVAL, "output = %s:%s: %s: cannot read it to see what it is: %s",
                             fmt_name(fmt), path, name, strerror(errno));
    int rc = k == KIND_REC ? check_rec(fmt, path, name, fd, &st, err) : check_idx(fmt, path, name, fd, err);
    close(fd);
    return rc;
}

/* name is not the input itself (the same file or folder, by any path). */
static int not_input(prep_format fmt, const char *path, const char *name, const char *input,
                     const struct stat *in, dlg_data_err *err)
{
    struct stat st;
    if (stat(name, &st) != 0 || st.st_dev != in->st_dev || st.st_ino != in->st_ino)
        return 0;
    return dlg_data_fail(err, DLG_EINVAL,
                         "output = %s:%s: %s%sis the input (input = %s); refusing to overwrite it (choose "
                         "another output)",
                         fmt_name(fmt), path, strcmp(name, path) ? name : "", strcmp(name, path) ? " " : "", input);
}

/* The names and their kinds, in the order they are checked: those a
 * commit replaces, then (all) the pass's own, which it writes anew. */
typedef struct named {
    const char *name[5];
    kind kind[5];
    size_t n;
} named;

static void add(named *t, const char *name, kind k)
{
    if (name) {
        t->name[t->n] = name;
        t->kind[t->n++] = k;
    }
}

static named names_kinds(const prep_names *n, prep_format fmt, bool all)
{
    bool rec = fmt == PREP_RECORDIO;
    named t = {.n = 0};
    add(&t, n->path, rec ? KIND_REC : KIND_LMDB);
    add(&t, n->idx, KIND_IDX);
    add(&t, n->old, rec ? KIND_IDX : KIND_LMDB); /* the replaced .idx or LMDB waits there */
    if (all) {
        add(&t, n->part, rec ? KIND_REC : KIND_LMDB);
        add(&t, n->idx_part, KIND_IDX);
    }
    return t;
}

int prep_names_check_replace(const prep_names *n, prep_format fmt, dlg_data_err *err)
{
    named t = names_kinds(n, fmt, false);
    int rc = 0;
    for (size_t i = 0; i < t.n && rc == 0; i++)
        rc = check_kind(fmt, n->path, t.name[i], t.kind[i], err);
    return rc;
}

int prep_output_check_targets(prep_format fmt, const char *path, const char *input, dlg_data_err *err)
{
    prep_names n;
    if (prep_names_make(&n, fmt, path) < 0)
        return dlg_data_fail(err, DLG_ENOMEM, "output = %s:%s: out of memory", fmt_name(fmt), path);
    named t = names_kinds(&n, fmt, true);
    struct stat in;
    bool have_in = input && stat(input, &in) == 0;
    int rc = 0;
    for (size_t i = 0; i < t.n && rc == 0 && have_in; i++)
        rc = not_input(fmt, path, t.name[i], input, &in, err);
    for (size_t i = 0; i < t.n && rc == 0; i++)
        rc = check_kind(fmt, path, t.name[i], t.kind[i], err);
    prep_names_free(&n);
    return rc;
}

int prep_lmdb_dir_remove(const char *spec_path, const char *dir, dlg_data_err *err)
{
    int rc = check_kind(PREP_LMDB, spec_path, dir, KIND_LMDB, err);
    if (rc < 0)
        return rc;
    char *data = tools_concat(dir, "/data.mdb"), *lock = tools_concat(dir, "/lock.mdb");
    if (data)
        unlink(data);
    if (lock)
        unlink(lock);
    free(data);
    free(lock);
    if (rmdir(dir) != 0 && errno != ENOENT)
        return dlg_data_fail(err, DLG_EIO, "output = lmdb:%s: cannot remove %s: %s", spec_path, dir,
                             strerror(errno));
    return 0;
}

/* ---- mean_output ------------------------------------------------------------ */

static int mean_refuse(const char *mean, const char *what, dlg_data_err *err)
{
    return dlg_data_fail(err, DLG_EINVAL,
                         "mean_output = %s: exists and %s; refusing to replace it (remove it yourself, or "
                         "choose another mean_output)",
                         mean, what);
}

/* Caffe parses no protobuf message past INT_MAX bytes (its
 * ReadProtoFromBinaryFile limit): a larger file is no mean image, and is
 * refused unread. */
#define BLOBPROTO_MAX ((size_t)INT_MAX)

/* The file's first size bytes into buf, with pread: 0, or -1 with *got
 * the bytes read (errno 0 where the file ended there: cut short). */
static int read_whole(int fd, uint8_t *buf, size_t size, size_t *got)
{
    *got = 0;
    while (*got < size) {
        ssize_t r = pread(fd, buf + *got, size - *got, (off_t)*got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = 0;
            return -1;
        }
        *got += (size_t)r;
    }
    return 0;
}

/* A BlobProto?  Read, not mapped: a file cut short while it is looked at
 * (another process truncating it) is then a short read, said with its
 * offset, where a mapping raised SIGBUS and killed the run. */
static int check_blobproto(const char *mean, int fd, size_t size, dlg_data_err *err)
{
    if (size > BLOBPROTO_MAX)
        return mean_refuse(mean, "is larger than a BlobProto can be (2 GiB)", err);
    uint8_t *buf = malloc(size);
    if (!buf)
        return dlg_data_fail(err, DLG_ENOMEM, "mean_output = %s: out of memory reading it", mean);
    size_t got;
    if (read_whole(fd, buf, size, &got) != 0) {
        int e = errno;
        free(buf);
        if (e)
            return dlg_data_fail(err, DLG_EIO, "mean_output = %s: cannot read it to see what it is: at byte %zu: %s",
                                 mean, got, strerror(e));
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "mean_output = %s: corrupt: it ends at byte %zu of the %zu it had a moment before "
                             "(truncated while it was read?); refusing to replace it", mean, got, size);
    }
    dlg_blobproto b;
    dlg_data_err why;
    dlg_data_err_clear(&why);
    memset(&b, 0, sizeof b);
    int rc = dlg_blobproto_decode(&b, buf, size, mean, &why);
    dlg_blobproto_free(&b);
    free(buf);
    if (rc == -DLG_ENOMEM)
        return dlg_data_fail(err, DLG_ENOMEM, "mean_output = %s: out of memory reading it", mean);
    return rc < 0 ? mean_refuse(mean, "is not a BlobProto (a mean image preprocess writes)", err) : 0;
}

int prep_mean_check_file(const char *mean, dlg_data_err *err)
{
    struct stat st;
    if (lstat(mean, &st) != 0)
        return errno == ENOENT ? 0 : dlg_data_fail(err, DLG_EINVAL, "mean_output = %s: %s", mean, strerror(errno));
    if (S_ISDIR(st.st_mode)) /* the user's folder, or a typo for a file in it */
        return dlg_data_fail(err, DLG_EINVAL, "mean_output = %s: is a directory", mean);
    if (S_ISLNK(st.st_mode))
        return mean_refuse(mean, "is a symbolic link", err);
    if (!S_ISREG(st.st_mode))
        return mean_refuse(mean, "is not a regular file", err);
    if (st.st_size == 0)
        return 0;
    int fd = open(mean, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return dlg_data_fail(err, DLG_EINVAL, "mean_output = %s: cannot read it to see what it is: %s", mean,
                             strerror(errno));
    int rc = check_blobproto(mean, fd, (size_t)st.st_size, err);
    close(fd);
    return rc;
}

/* realpath of p's folder and p's last component, malloc'd (p as given
 * when its folder does not resolve): two spellings of one name compare
 * equal before either exists. */
static char *canon(const char *p)
{
    const char *slash = strrchr(p, '/');
    char *dir = slash ? strndup(p, slash == p ? 1 : (size_t)(slash - p)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL, *s = NULL;
    if (real && asprintf(&s, "%s/%s", strcmp(real, "/") ? real : "", slash ? slash + 1 : p) < 0)
        s = NULL;
    free(dir);
    free(real);
    return s ? s : strdup(p);
}

/* a and b are one name: the same string once canonical, or the same file. */
static bool same_name(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *ca = canon(a), *cb = canon(b);
    bool same = ca && cb && strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    return same;
}

/* mean is none of the output's names, nor (LMDB) in one of its folders,
 * which preprocess replaces whole. */
static int mean_not_output(const char *mean, prep_format fmt, const char *path, dlg_data_err *err)
{
    prep_names n;
    if (prep_names_make(&n, fmt, path) < 0)
        return dlg_data_fail(err, DLG_ENOMEM, "mean_output = %s: out of memory", mean);
    named t = names_kinds(&n, fmt, true);
    const char *slash = strrchr(mean, '/');
    char *parent = slash ? strndup(mean, slash == mean ? 1 : (size_t)(slash - mean)) : strdup(".");
    int rc = parent ? 0 : dlg_data_fail(err, DLG_ENOMEM, "mean_output = %s: out of memory", mean);
    for (size_t i = 0; i < t.n && rc == 0; i++) {
        bool inside = t.kind[i] == KIND_LMDB && same_name(parent, t.name[i]);
        if (inside || same_name(mean, t.name[i]))
            rc = dlg_data_fail(err, DLG_EINVAL,
                               "mean_output = %s: is %s%s, %s output = %s:%s; refusing to write the mean there "
                               "(choose another mean_output)",
                               mean, inside ? "in " : "", t.name[i],
                               inside ? "a folder replaced whole by" : "a name written by", fmt_name(fmt), path);
    }
    free(parent);
    prep_names_free(&n);
    return rc;
}

int prep_mean_check_target(const char *mean, prep_format fmt, const char *path, const char *input,
                           dlg_data_err *err)
{
    struct stat in, st;
    if (input && stat(input, &in) == 0 && stat(mean, &st) == 0 && st.st_dev == in.st_dev &&
        st.st_ino == in.st_ino)
        return dlg_data_fail(err, DLG_EINVAL,
                             "mean_output = %s: is the input (input = %s); refusing to overwrite it (choose "
                             "another mean_output)",
                             mean, input);
    int rc = mean_not_output(mean, fmt, path, err);
    return rc < 0 ? rc : prep_mean_check_file(mean, err);
}
