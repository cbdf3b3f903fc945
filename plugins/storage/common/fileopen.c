#define _GNU_SOURCE
#include "fileopen.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* Why path cannot be a backend's data file, or NULL.  Reads need a size,
 * which only regular files and block devices have (a character device's
 * is 0: "the file is empty"); a FIFO or socket would block the run. */
static const char *unusable(const struct stat *st, bool writing)
{
    if (S_ISREG(st->st_mode) || S_ISBLK(st->st_mode))
        return NULL;
    if (S_ISDIR(st->st_mode))
        return "is a directory";
    if (S_ISFIFO(st->st_mode))
        return "is a FIFO";
    if (S_ISSOCK(st->st_mode))
        return "is a socket";
    if (S_ISCHR(st->st_mode))
        return writing ? NULL : "is a character device";
    return "is not a regular file";
}

static const char *unusable_path(int fd, const char *path, bool writing)
{
    struct stat st;
    int rc = fd >= 0 ? fstat(fd, &st) : stat(path, &st);
    return rc == 0 ? unusable(&st, writing) : NULL;
}

/* Clears the O_NONBLOCK that kept opening a FIFO from waiting for a
 * writer: reads of a file must wait. 0 or -errno. */
static int set_blocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return -errno;
    return 0;
}

int stg_open(const dlg_host *h, const char *path, int flags, int extra_oflags,
             const char *no_direct_hint)
{
    bool writing = flags == DLG_OPEN_WRITE;
    int oflags = writing ? O_RDWR | O_CREAT | O_TRUNC : O_RDONLY | extra_oflags;
    int fd = open(path, oflags | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0 && errno == EWOULDBLOCK) /* a file lease, which O_NONBLOCK will not wait out */
        fd = open(path, oflags | O_CLOEXEC, 0644);
    int err = errno;
    const char *why = unusable_path(fd, path, writing);
    if (!why && fd >= 0 && (err = -set_blocking(fd)) == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    if (why)
        return h->error(h, DLG_EINVAL, "%s: %s; storage backends %s", path, why,
                        writing ? "write regular files and devices" : "read regular files and block devices");
    if (err == EINVAL && (oflags & O_DIRECT))
        return h->error(h, DLG_ENOTSUP, "%s: this filesystem refuses O_DIRECT (EINVAL); %s", path,
                        no_direct_hint);
    return h->error(h, err == ENOMEM ? DLG_ENOMEM : DLG_EIO, "%s: cannot open: %s", path,
                    strerror(err));
}

void stg_warn_direct_tmpfs(const dlg_host *h, int fd, const char *path, atomic_bool *warned)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0 || sf.f_type != TMPFS_MAGIC || atomic_exchange(warned, true))
        return;
    h->log(h, DLG_LOG_WARN,
           "%s is on tmpfs: O_DIRECT reads come from memory, not a disk (put the data on a disk "
           "to measure one)",
           path);
}
