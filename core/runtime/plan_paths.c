/* Whether two paths of a configuration name the same file, for the plan's
 * checks (a job's `output` read by a later job's `data`): users write the
 * same path as ./data/x, data//x, data/x/ or /abs/data/x. */
#include "plan.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* in without "." components, repeated or trailing slashes ("." if nothing
 * is left).  ".." stays: through a symbolic link it is not the parent. */
static void lexical(const char *in, char *out, size_t len)
{
    size_t n = 0;
    if (*in == '/' && len > 1)
        out[n++] = '/';
    for (const char *p = in; *p;) {
        while (*p == '/')
            p++;
        size_t k = strcspn(p, "/");
        bool skip = k == 0 || (k == 1 && p[0] == '.');
        if (!skip && n + k + 2 <= len) {
            if (n > 0 && out[n - 1] != '/')
                out[n++] = '/';
            memcpy(out + n, p, k);
            n += k;
        }
        p += k;
    }
    if (n == 0 && len > 1)
        out[n++] = '.';
    out[n < len ? n : len - 1] = '\0';
}

/* The nearest existing directory of the lexical path (itself included) in
 * st, and in *rest the part of path below it ("" if path exists). */
static bool anchor(const char *path, struct stat *st, const char **rest)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    *rest = path + strlen(path);
    while (stat(dir, st) != 0) {
        char *slash = strrchr(dir, '/');
        if (!slash) {
            *rest = path;
            return stat(".", st) == 0;
        }
        *rest = path + (slash - dir) + 1;
        if (slash == dir)
            return stat("/", st) == 0;
        *slash = '\0';
    }
    return true;
}

bool dlg_path_same(const char *a, const char *b)
{
    char na[4096], nb[4096];
    lexical(a, na, sizeof na);
    lexical(b, nb, sizeof nb);
    if (strcmp(na, nb) == 0)
        return true;
    /* data/x and /abs/data/x, or a directory reached through a link: the
     * same existing directory, and the same names below it */
    struct stat sa, sb;
    const char *ra, *rb;
    return anchor(na, &sa, &ra) && anchor(nb, &sb, &rb) && strcmp(ra, rb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}
