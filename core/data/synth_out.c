/* Replacing a generated dataset safely (see synth_out.h). */
#include "synth_out.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
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
