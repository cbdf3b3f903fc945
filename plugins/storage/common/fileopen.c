#define _GNU_SOURCE
#include "fileopen.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

static bool is_dir(int fd, const char *path)
{
    struct stat st;
    int rc = fd >= 0 ? fstat(fd, &st) : stat(path, &st);
    return rc == 0 && S_ISDIR(st.st_mode);
}

int stg_open(const dlg_host *h, const char *path, int flags, int extra_oflags,
             const char *no_direct_hint)
{
    bool writing = flags == DLG_OPEN_WRITE;
    int oflags = writing ? O_RDWR | O_CREAT | O_TRUNC : O_RDONLY | extra_oflags;
    int fd = open(path, oflags | O_CLOEXEC, 0644);
    int err = errno;
    if (is_dir(fd, path)) {
        if (fd >= 0)
            close(fd);
        return h->error(h, DLG_EINVAL, "%s: is a directory; storage backends read files", path);
    }
    if (fd >= 0)
        return fd;
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
