/* Replacing a generated dataset safely (see synth_out.h). */
#define _GNU_SOURCE /* getline */
#include "synth_out.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a marker says mkdata made. */
typedef struct made {
    uint64_t classes, images;
} made;

/* The marker's one line. */
static int marker_text(char *buf, size_t cap, uint64_t classes, uint64_t images)
{
    return snprintf(buf, cap, "dlgauge mkdata images: classes %llu, images %llu\n", (unsigned long long)classes,
                    (unsigned long long)images);
}

int dlg_synth_marker_write(const char *dir, int classes, uint64_t images, dlg_data_err *err)
{
    char path[4200], text[128];
    snprintf(path, sizeof path, "%s/%s", dir, DLG_SYNTH_MARKER);
    int n = marker_text(text, sizeof text, (uint64_t)classes, images);
    FILE *f = fopen(path, "wx");
    if (!f)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot create: %s", path, strerror(errno));
    bool ok = fwrite(text, 1, (size_t)n, f) == (size_t)n;
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    return ok ? 0 : dlg_data_fail(err, DLG_EIO, "%s: write failed: %s", path, strerror(e));
}

/* Up to max digits at p (at least one) into *v; the end, or NULL. */
static const char *digits(const char *p, int max, uint64_t *v)
{
    int n = 0;
    for (*v = 0; n < max && *p >= '0' && *p <= '9'; n++, p++)
        *v = *v * 10 + (uint64_t)(*p - '0');
    return n ? p : NULL;
}

/* "nKKKKKKKK" (a class folder) or "nKKKKKKKK_Q.JPEG" (an image), exactly as
 * mkdata writes them (no leading zeros in Q): its k and q. */
static bool parse_name(const char *s, bool file, uint64_t *k, uint64_t *q)
{
    char canon[64];
    const char *p = s[0] == 'n' ? digits(s + 1, 8, k) : NULL;
    if (!p || p - s != 9)
        return false;
    *q = 0;
    if (!file)
        return *p == '\0';
    if (*p != '_' || !(p = digits(p + 1, 19, q)) || strcmp(p, ".JPEG") != 0)
        return false;
    snprintf(canon, sizeof canon, "n%08llu_%llu.JPEG", (unsigned long long)*k, (unsigned long long)*q);
    return strcmp(canon, s) == 0;
}

static bool dot_entry(const char *s) { return !strcmp(s, ".") || !strcmp(s, ".."); }

static int foreign(const char *top, const char *path, dlg_data_err *err)
{
    return dlg_data_fail(err, DLG_EINVAL,
                         "%s: exists and holds %s, which mkdata did not write; refusing to "
                         "replace it (remove it, or choose another --out or --split)",
                         top, path);
}

/* The first entry of dir other than . and .. (and skip, unless NULL) into
 * name: 1, 0 when there is none, -DLG_EIO when dir cannot be listed. */
static int first_entry(const char *dir, const char *skip, char *name, size_t cap, dlg_data_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) && (dot_entry(e->d_name) || (skip && strcmp(e->d_name, skip) == 0)))
        ;
    if (e)
        snprintf(name, cap, "%s", e->d_name);
    closedir(d);
    return e != NULL;
}

/* top's marker into *m: 1 when there is one mkdata wrote, 0 when there is
 * none and top is empty (nothing to lose), 2 when the marker is empty and
 * alone (mkdata stopped between creating it and writing its line: nothing
 * to lose either), else -DLG_EINVAL. */
static int read_marker(const char *top, made *m, dlg_data_err *err)
{
    char path[4200], text[128] = "", canon[128], first[256];
    snprintf(path, sizeof path, "%s/%s", top, DLG_SYNTH_MARKER);
    struct stat st;
    if (lstat(path, &st) != 0) {
        int rc = first_entry(top, NULL, first, sizeof first, err);
        if (rc <= 0)
            return rc;
        return dlg_data_fail(err, DLG_EINVAL,
                             "%s: exists and holds %s/%s, but no %s saying mkdata made it; refusing to replace "
                             "it (remove it yourself, as for a tree an older mkdata made, or choose another "
                             "--out or --split)",
                             top, top, first, DLG_SYNTH_MARKER);
    }
    if (S_ISREG(st.st_mode) && st.st_size == 0) {
        int rc = first_entry(top, DLG_SYNTH_MARKER, first, sizeof first, err);
        if (rc <= 0) /* nothing beside it */
            return rc < 0 ? rc : 2;
    }
    FILE *f = S_ISREG(st.st_mode) ? fopen(path, "r") : NULL;
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    static const char pre[] = "dlgauge mkdata images: classes ", mid[] = ", images ";
    uint64_t c = 0, i = 0;
    const char *p = strncmp(text, pre, sizeof pre - 1) ? NULL : digits(text + sizeof pre - 1, 19, &c);
    p = p && !strncmp(p, mid, sizeof mid - 1) ? digits(p + sizeof mid - 1, 19, &i) : NULL;
    marker_text(canon, sizeof canon, c, i);
    if (!p || c == 0 || i == 0 || strcmp(canon, text) != 0) /* exactly what mkdata writes */
        return foreign(top, path, err);
    *m = (made){c, i};
    return 1;
}

/* Checks (remove = false) or removes the images of class folder dir. */
static int walk_class(const char *top, const char *dir, uint64_t k, const made *m, bool remove,
                      dlg_data_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open: %s", dir, strerror(errno));
    char path[4200];
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (dot_entry(e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        uint64_t fk, q;
        /* image I = q * C + k, I < N */
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || !parse_name(e->d_name, true, &fk, &q) || fk != k ||
            q > (m->images - 1 - k) / m->classes)
            rc = foreign(top, path, err);
        else if (remove && unlink(path) != 0)
            rc = dlg_data_fail(err, DLG_EIO, "%s: cannot remove: %s", path, strerror(errno));
    }
    closedir(d);
    if (rc == 0 && remove && rmdir(dir) != 0)
        rc = dlg_data_fail(err, DLG_EIO, "%s: cannot remove: %s", dir, strerror(errno));
    return rc;
}

/* Checks or removes the class folders of top; the marker goes last, so
 * that what a failed removal leaves is still known to be mkdata's. */
static int walk_top(const char *top, const made *m, bool remove, dlg_data_err *err)
{
    DIR *d = opendir(top);
    if (!d)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open: %s", top, strerror(errno));
    char path[4200];
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (dot_entry(e->d_name) || !strcmp(e->d_name, DLG_SYNTH_MARKER))
            continue;
        snprintf(path, sizeof path, "%s/%s", top, e->d_name);
        struct stat st;
        uint64_t k, q;
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || !parse_name(e->d_name, false, &k, &q) ||
            k >= m->classes || k >= m->images)
            rc = foreign(top, path, err);
        else
            rc = walk_class(top, path, k, m, remove, err);
    }
    closedir(d);
    snprintf(path, sizeof path, "%s/%s", top, DLG_SYNTH_MARKER);
    if (rc == 0 && remove && unlink(path) != 0)
        rc = dlg_data_fail(err, DLG_EIO, "%s: cannot remove: %s", path, strerror(errno));
    return rc;
}

static int walk(const char *top, bool remove, dlg_data_err *err)
{
    struct stat st;
    if (lstat(top, &st) != 0)
        return errno == ENOENT ? 0
                               : dlg_data_fail(err, DLG_EIO, "%s: %s", top, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return dlg_data_fail(err, DLG_EINVAL,
                             "%s: exists and is %s, not a folder mkdata made; refusing to "
                             "replace it",
                             top, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a folder");
    made m = {0, 0};
    char marker[4200];
    snprintf(marker, sizeof marker, "%s/%s", top, DLG_SYNTH_MARKER);
    int rc = read_marker(top, &m, err);
    if (rc == 1)
        rc = walk_top(top, &m, remove, err);
    else if (rc == 2) /* the empty marker alone */
        rc = remove && unlink(marker) != 0 ? dlg_data_fail(err, DLG_EIO, "%s: cannot remove: %s", marker,
                                                           strerror(errno))
                                           : 0;
    if (rc == 0 && remove && rmdir(top) != 0)
        rc = dlg_data_fail(err, DLG_EIO, "%s: cannot remove: %s", top, strerror(errno));
    return rc;
}

int dlg_synth_tree_check(const char *dir, dlg_data_err *err) { return walk(dir, false, err); }

int dlg_synth_tree_remove(const char *dir, dlg_data_err *err)
{
    int rc = walk(dir, false, err); /* all or nothing: never half-delete a foreign tree */
    return rc < 0 ? rc : walk(dir, true, err);
}

/* Line i (no newline) of the list mkdata writes for `classes` classes:
 * "split/nK/nK_Q.JPEG K" (.txt), "I<TAB>K<TAB>split/nK/nK_Q.JPEG" (.lst). */
static void list_line(char *buf, size_t cap, const char *split, bool lst, uint64_t i, uint64_t classes)
{
    unsigned long long k = i % classes, q = i / classes;
    if (lst)
        snprintf(buf, cap, "%llu\t%llu\t%s/n%08llu/n%08llu_%llu.JPEG", (unsigned long long)i, k, split, k, k, q);
    else
        snprintf(buf, cap, "%s/n%08llu/n%08llu_%llu.JPEG %llu", split, k, k, q, k);
}

/* Whether line i (len bytes) is mkdata's.  *classes is 0 until a line
 * shows the class count: line C is the first of class 0 again. */
static bool own_line(const char *s, size_t len, const char *split, bool lst, uint64_t i, uint64_t *classes)
{
    char want[512];
    list_line(want, sizeof want, split, lst, i, *classes ? *classes : i + 1);
    if (strlen(want) == len && memcmp(want, s, len) == 0)
        return true;
    if (*classes || i == 0)
        return false;
    list_line(want, sizeof want, split, lst, i, i);
    *classes = i;
    return strlen(want) == len && memcmp(want, s, len) == 0;
}

int dlg_synth_list_check(const char *path, const char *split, bool lst, dlg_data_err *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : dlg_data_fail(err, DLG_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return dlg_data_fail(err, DLG_EINVAL,
                             "%s: exists and is not a list mkdata wrote (not a regular file); "
                             "refusing to replace it (remove it, or choose another --out or --split)",
                             path);
    FILE *f = fopen(path, "r");
    if (!f)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    uint64_t lineno = 0, classes = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        size_t len = (size_t)n - (n > 0 && line[n - 1] == '\n');
        if (!own_line(line, len, split, lst, lineno++, &classes))
            rc = dlg_data_fail(err, DLG_EINVAL,
                               "%s:%llu: exists and is not a list mkdata wrote for --split %s; "
                               "refusing to replace it (remove it, or choose another --out or "
                               "--split)",
                               path, (unsigned long long)lineno, split);
    }
    if (rc == 0 && ferror(f))
        rc = dlg_data_fail(err, DLG_EIO, "%s: read failed: %s", path, strerror(errno));
    free(line);
    fclose(f);
    return rc;
}

int dlg_synth_rename(const char *from, const char *to, dlg_data_err *err)
{
    if (rename(from, to) != 0)
        return dlg_data_fail(err, DLG_EIO, "rename %s -> %s: %s", from, to, strerror(errno));
    return 0;
}

const char *dlg_synth_reason(int e, char *buf, size_t cap)
{
    if (e == 0)
        return "";
    snprintf(buf, cap, ": %s", strerror(e));
    return buf;
}
