/* Replacing a generated dataset safely (see synth_out.h). */
#define _GNU_SOURCE /* memrchr */
#include "synth_out.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "n" + 8 digits, then (files only) "_" + digits + ".JPEG". */
static bool generated_name(const char *s, bool file)
{
    if (s[0] != 'n')
        return false;
    for (int i = 1; i <= 8; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    if (!file)
        return s[9] == '\0';
    if (s[9] != '_' || s[10] < '0' || s[10] > '9')
        return false;
    const char *p = s + 10;
    while (*p >= '0' && *p <= '9')
        p++;
    return strcmp(p, ".JPEG") == 0;
}

static bool dot_entry(const char *s) { return !strcmp(s, ".") || !strcmp(s, ".."); }

static int foreign(const char *top, const char *path, dlg_data_err *err)
{
    return dlg_data_fail(err, DLG_EINVAL,
                         "%s: exists and holds %s, which mkdata did not write; refusing to "
                         "replace it (remove it, or choose another --out or --split)",
                         top, path);
}

/* Checks (remove = false) or removes (remove = true) dir, a level of the
 * tree under top: class folders at depth 0, image files at depth 1. */
static int walk_dir(const char *top, const char *dir, int depth, bool remove, dlg_data_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open: %s", dir, strerror(errno));
    char path[4096];
    int rc = 0;
    bool files = depth == 1;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (dot_entry(e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !(files ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode)) ||
            !generated_name(e->d_name, files))
            rc = foreign(top, path, err);
        else if (!files)
            rc = walk_dir(top, path, 1, remove, err);
        else if (remove && unlink(path) != 0)
            rc = dlg_data_fail(err, DLG_EIO, "%s: cannot remove: %s", path, strerror(errno));
    }
    closedir(d);
    if (rc == 0 && remove && rmdir(dir) != 0)
        rc = dlg_data_fail(err, DLG_EIO, "%s: cannot remove: %s", dir, strerror(errno));
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
    return walk_dir(top, top, 0, remove, err);
}

int dlg_synth_tree_check(const char *dir, dlg_data_err *err) { return walk(dir, false, err); }

int dlg_synth_tree_remove(const char *dir, dlg_data_err *err)
{
    int rc = walk(dir, false, err); /* all or nothing: never half-delete a foreign tree */
    return rc < 0 ? rc : walk(dir, true, err);
}

/* "split/nDDDDDDDD/nDDDDDDDD_N.JPEG" up to `end`: a path mkdata writes. */
static bool generated_path(const char *p, const char *end, const char *split)
{
    size_t ns = strlen(split);
    char dir[10], file[64];
    if ((size_t)(end - p) <= ns + 10 || strncmp(p, split, ns) != 0 || p[ns] != '/' ||
        p[ns + 10] != '/' || (size_t)(end - p) - ns - 11 >= sizeof file)
        return false;
    memcpy(dir, p + ns + 1, 9);
    dir[9] = '\0';
    memcpy(file, p + ns + 11, (size_t)(end - p) - ns - 11);
    file[(size_t)(end - p) - ns - 11] = '\0';
    return generated_name(dir, false) && generated_name(file, true) && !strncmp(dir, file, 9);
}

/* digits, then `end` */
static bool digits_to(const char *p, const char *end)
{
    if (p == end)
        return false;
    for (; p < end; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* One line (without its newline) of a list mkdata wrote: "path label" in a
 * .txt, "index<TAB>label<TAB>path" in a .lst. */
static bool generated_line(const char *s, size_t n, const char *split, bool lst)
{
    const char *end = s + n;
    if (!lst) {
        /* the last space, as Caffe splits: --split may hold spaces */
        const char *sp = memrchr(s, ' ', n);
        return sp && generated_path(s, sp, split) && digits_to(sp + 1, end);
    }
    const char *t1 = memchr(s, '\t', n), *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(end - t1 - 1)) : NULL;
    return t2 && digits_to(s, t1) && digits_to(t1 + 1, t2) && generated_path(t2 + 1, end, split);
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
    size_t cap = 0, lineno = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t len = (size_t)n - (n > 0 && line[n - 1] == '\n');
        if (!generated_line(line, len, split, lst))
            rc = dlg_data_fail(err, DLG_EINVAL,
                               "%s:%zu: exists and is not a list mkdata wrote for --split %s; "
                               "refusing to replace it (remove it, or choose another --out or "
                               "--split)",
                               path, lineno, split);
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
