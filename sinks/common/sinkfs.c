#define _GNU_SOURCE
#include "sinkfs.h"

#include <dlgauge/plugin.h>

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int sink_fsync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash == path ? strdup("/") : slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    if (!dir)
        return ENOMEM;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0 && fsync(fd) != 0 && errno != EINVAL)
        e = errno;
    if (fd >= 0)
        close(fd);
    free(dir);
    return e;
}

int sink_open_durable(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT)
        return fd;
    fd = open(path, flags | O_CREAT | O_CLOEXEC, 0666);
    int e = fd < 0 ? 0 : sink_fsync_dir(path);
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int sink_mkdir_p(const char *dir)
{
    size_t n = strlen(dir);
    char *p = malloc(n + 1);
    if (!p)
        return ENOMEM;
    memcpy(p, dir, n + 1);
    int rc = 0;
    for (char *s = p + 1; ; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0777) == 0)
            rc = sink_fsync_dir(p); /* the new directory's entry in its parent */
        else if (errno != EEXIST)
            rc = errno;
        if (rc)
            break;
        *s = saved;
        if (saved == '\0')
            break;
    }
    free(p);
    return rc;
}

int sink_mkdir_parents(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    size_t n = (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (!dir)
        return ENOMEM;
    memcpy(dir, path, n);
    dir[n] = '\0';
    int rc = sink_mkdir_p(dir);
    free(dir);
    return rc;
}

int sink_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return ENOSPC;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int sink_read_at(int fd, void *buf, size_t n, off_t off)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? errno : EIO; /* shorter than the caller knew: not ours to guess */
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

int sink_read_file(const char *path, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return e;
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return ENOMEM;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return e;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return 0;
}

int sink_fsync(const struct dlg_host *h, int fd, const char *path)
{
    if (fsync(fd) != 0 && errno != EINVAL)
        return h->error(h, DLG_EIO, "%s: fsync failed: %s", path, strerror(errno));
    return 0;
}

/* An unset or empty `path`: -DLG_EINVAL after saying so (the empty one
 * starts "path = " so that the message names its line), else 0. */
static int path_missing(const struct dlg_host *h, const struct dlg_value *path_opt)
{
    if (!path_opt->set || !path_opt->text)
        return h->error(h, DLG_EINVAL, "path is required");
    if (!*path_opt->text)
        return h->error(h, DLG_EINVAL, "path = (empty): name the file to write");
    return 0;
}

int sink_open_append(const struct dlg_host *h, const struct dlg_value *path_opt, int access, int *fd,
                     char **path_copy)
{
    int rc = path_missing(h, path_opt);
    if (rc < 0)
        return rc;
    const char *path = path_opt->text;
    int e = sink_mkdir_parents(path);
    if (e)
        return h->error(h, DLG_EIO, "path = %s: cannot create its directory: %s", path, strerror(e));
    if (!(*path_copy = strdup(path)))
        return h->error(h, DLG_ENOMEM, "out of memory");
    *fd = sink_open_durable(path, access | O_APPEND);
    if (*fd < 0) {
        e = errno;
        free(*path_copy);
        *path_copy = NULL;
        return h->error(h, DLG_EIO, "path = %s: cannot open for writing: %s", path, strerror(e));
    }
    return 0;
}

void sink_lock(int fd)
{
    while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
        ;
}

void sink_unlock(int fd) { flock(fd, LOCK_UN); }

int sink_append(int fd, const void *buf, size_t n)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    int e = sink_write_all(fd, buf, n);
    /* undo the torn record; where even that fails, the reader skips it */
    if (e && S_ISREG(st.st_mode))
        (void)!ftruncate(fd, st.st_size);
    return e;
}

int sink_append_durable(int fd, const void *buf, size_t n, int *sync_failed)
{
    *sync_failed = 0;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    int e = sink_append(fd, buf, n);
    if (e)
        return e;
    if (fdatasync(fd) == 0 || errno == EINVAL)
        return 0;
    e = errno;
    *sync_failed = 1;
    if (S_ISREG(st.st_mode)) /* not journaled: the row must not stay either */
        (void)!ftruncate(fd, st.st_size);
    return e;
}

int sink_last_line_start(int fd, off_t *start)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    char chunk[4096];
    off_t end = st.st_size;
    *start = end;
    while (end > 0) {
        size_t n = end < (off_t)sizeof chunk ? (size_t)end : sizeof chunk;
        ssize_t r = pread(fd, chunk, n, end - (off_t)n);
        if (r != (ssize_t)n)
            return r < 0 ? errno : EIO;
        char *nl = memrchr(chunk, '\n', n);
        if (nl && end == st.st_size && nl == chunk + n - 1)
            return 0; /* ends with a line end: nothing cut */
        if (nl) {
            *start = end - (off_t)n + (nl - chunk) + 1;
            return 0;
        }
        end -= (off_t)n;
    }
    *start = 0;
    return 0;
}

/* Appends the bytes [from, size) of fd, '\n' ended, to the file `to`. */
static int copy_tail(int fd, off_t from, off_t size, const char *to)
{
    size_t n = (size_t)(size - from);
    char *buf = malloc(n + 1);
    if (!buf)
        return ENOMEM;
    int e = pread(fd, buf, n, from) == (ssize_t)n ? 0 : EIO;
    buf[n] = '\n';
    int out = e ? -1 : sink_open_durable(to, O_WRONLY | O_APPEND);
    if (!e && out < 0)
        e = errno;
    if (!e)
        e = sink_append(out, buf, n + 1);
    if (!e && fsync(out) != 0 && errno != EINVAL)
        e = errno;
    if (out >= 0)
        close(out);
    free(buf);
    return e;
}

int sink_set_aside(const struct dlg_host *h, int fd, const char *path, off_t from)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return h->error(h, DLG_EIO, "%s: %s", path, strerror(errno));
    if (from >= st.st_size)
        return 0;
    char *to = NULL;
    if (asprintf(&to, "%s.cut", path) < 0)
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    int e = copy_tail(fd, from, st.st_size, to);
    if (e) {
        h->error(h, DLG_EIO, "%s: its last record was cut short by an earlier crash, and moving it to %s failed: %s",
                 path, to, strerror(e));
    } else if (ftruncate(fd, from) != 0) {
        e = errno;
        h->error(h, DLG_EIO, "%s: cannot remove its last record, cut short by an earlier crash (a copy is in %s): "
                 "%s", path, to, strerror(e));
    } else {
        h->log(h, DLG_LOG_WARN, "%s: its last record was cut short by an earlier crash (%lld bytes at byte %lld); "
               "moved to %s", path, (long long)(st.st_size - from), (long long)from, to);
    }
    free(to);
    return e ? -DLG_EIO : 0;
}

int sink_set_aside_cut_line(const struct dlg_host *h, int fd, const char *path)
{
    sink_lock(fd);
    off_t start;
    int e = sink_last_line_start(fd, &start);
    int rc = e ? h->error(h, DLG_EIO, "%s: cannot read it: %s", path, strerror(e))
               : sink_set_aside(h, fd, path, start);
    sink_unlock(fd);
    return rc;
}

enum { PATH_SAME, PATH_DELETED, PATH_MOVED };

/* How the file open at fd stands to path: still it, deleted (no link
 * left), or renamed away or replaced (path names another file or none).
 * A pipe or device is not followed. */
static int path_change(int fd, const char *path)
{
    struct stat a, b;
    if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode))
        return PATH_SAME;
    if (a.st_nlink == 0)
        return PATH_DELETED;
    if (stat(path, &b) != 0)
        return errno == ENOENT || errno == ENOTDIR ? PATH_MOVED : PATH_SAME; /* else cannot tell */
    return a.st_ino != b.st_ino || a.st_dev != b.st_dev ? PATH_MOVED : PATH_SAME;
}

/* Copies all of `from` (a deleted file still open) to the end of `to`,
 * synced.  0 or an errno value. */
static int copy_all(int from, int to)
{
    struct stat st;
    if (fstat(from, &st) != 0)
        return errno;
    char buf[65536];
    for (off_t off = 0; off < st.st_size;) {
        size_t n = st.st_size - off < (off_t)sizeof buf ? (size_t)(st.st_size - off) : sizeof buf;
        int e = sink_read_at(from, buf, n, off);
        if (!e)
            e = sink_write_all(to, buf, n);
        if (e)
            return e;
        off += (off_t)n;
    }
    return fdatasync(to) != 0 && errno != EINVAL ? errno : 0;
}

/* Opens the file at path for appending, creating it and its directories;
 * *made says whether this call created it.  The fd, or -1 with errno. */
static int open_again(const char *path, bool *made)
{
    int e = sink_mkdir_parents(path);
    if (e) {
        errno = e;
        return -1;
    }
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    *made = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (*made && (e = sink_fsync_dir(path)) != 0) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Fills a new empty file at nfd with what the deleted one at fd held,
 * under the lock (another run appending to it may have started it). 1
 * when copied, 0 when the file was not empty, or an errno value negated. */
static int restore(int fd, int nfd)
{
    struct stat st;
    sink_lock(nfd);
    int rc = fstat(nfd, &st) != 0 ? -errno : st.st_size > 0 ? 0 : 1;
    if (rc == 1) {
        int e = copy_all(fd, nfd);
        if (e) {
            (void)!ftruncate(nfd, 0);
            rc = -e;
        }
    }
    sink_unlock(nfd);
    return rc;
}

int sink_follow_path(const struct dlg_host *h, int *fd, const char *path, const char *what, size_t n,
                     const char *whose)
{
    int change = path_change(*fd, path);
    if (change == PATH_SAME)
        return 0;
    const char *how = change == PATH_DELETED ? "deleted" : "renamed or replaced";
    bool made = false;
    int nfd = open_again(path, &made);
    int copied = nfd >= 0 && change == PATH_DELETED ? restore(*fd, nfd) : 0;
    if (nfd < 0 || copied < 0) {
        int e = nfd < 0 ? errno : -copied;
        if (nfd >= 0)
            close(nfd);
        return h->error(h, DLG_EIO, "%s was %s during the run, and making it again failed: %s; the %zu %s%s %s "
                        "before are %s; this one and later ones are kept in the journal: dlgauge run --resume "
                        "writes them", path, how, strerror(e), n, what, n == 1 ? "" : "s", whose,
                        change == PATH_DELETED ? "gone with it" : "in the moved file");
    }
    close(*fd);
    *fd = nfd;
    if (copied)
        h->log(h, DLG_LOG_WARN, "%s was deleted during the run: made again from the copy still open, with the %zu "
               "%s%s %s before; later ones follow", path, n, what, n == 1 ? "" : "s", whose);
    else if (change == PATH_DELETED)
        h->log(h, DLG_LOG_WARN, "%s was deleted during the run and another file is there now: the %zu %s%s %s "
               "before are gone with the deleted one; later ones go to the new file", path, n, what,
               n == 1 ? "" : "s", whose);
    else
        h->log(h, DLG_LOG_WARN, "%s was %s during the run: the %zu %s%s %s before stay in the moved "
               "file; later ones go to %s %s", path, how, n, what, n == 1 ? "" : "s", whose,
               made ? "a new" : "the file now at", path);
    return 1;
}

/* The nearest existing ancestor directory of path's directory into dir
 * (at least "." or "/"); st describes it. */
static int nearest_existing(const char *path, char *dir, size_t dirlen, struct stat *st)
{
    snprintf(dir, dirlen, "%s", path);
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            snprintf(dir, dirlen, ".");
        else if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
        if (stat(dir, st) == 0)
            return 0;
        if (!slash || slash == dir)
            return errno;
    }
}

/* key = dir: a directory one can write in, or one that can be made under
 * its nearest existing ancestor. */
int sink_check_dir(const struct dlg_host *h, const char *key, const char *dir)
{
    struct stat st;
    char up[4096];
    if (strlen(dir) >= sizeof up - 2)
        return h->error(h, DLG_EINVAL, "%s = %s: too long", key, dir);
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return h->error(h, DLG_EIO, "%s = %s: not a directory", key, dir);
        if (access(dir, W_OK | X_OK) != 0)
            return h->error(h, DLG_EIO, "%s = %s: cannot write in it: %s", key, dir, strerror(errno));
        return 0;
    }
    char inside[4096]; /* a name in dir: its nearest existing ancestor is dir's */
    snprintf(inside, sizeof inside, "%s/x", dir);
    int e = nearest_existing(inside, up, sizeof up, &st);
    if (e)
        return h->error(h, DLG_EIO, "%s = %s: cannot create it: %s", key, dir, strerror(e));
    if (!S_ISDIR(st.st_mode))
        return h->error(h, DLG_EIO, "%s = %s: cannot create it: %s is not a directory", key, dir, up);
    if (access(up, W_OK | X_OK) != 0)
        return h->error(h, DLG_EIO, "%s = %s: cannot create it in %s: %s", key, dir, up, strerror(errno));
    return 0;
}

int sink_check_path(const struct dlg_host *h, const struct dlg_value *path_opt)
{
    int rc = path_missing(h, path_opt);
    if (rc < 0)
        return rc;
    const char *path = path_opt->text;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return h->error(h, DLG_EIO, "path = %s: cannot open for writing: %s", path, strerror(EISDIR));
        if (access(path, W_OK) != 0)
            return h->error(h, DLG_EIO, "path = %s: cannot open for writing: %s", path, strerror(errno));
        return 0;
    }
    char dir[4096];
    if (strlen(path) >= sizeof dir)
        return h->error(h, DLG_EINVAL, "path = %s: too long", path);
    int e = nearest_existing(path, dir, sizeof dir, &st);
    if (e)
        return h->error(h, DLG_EIO, "path = %s: cannot create its directory: %s", path, strerror(e));
    if (!S_ISDIR(st.st_mode))
        return h->error(h, DLG_EIO, "path = %s: cannot create its directory: %s is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return h->error(h, DLG_EIO, "path = %s: cannot create it in %s: %s", path, dir, strerror(errno));
    return 0;
}
