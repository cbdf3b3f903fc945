#include "config_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

/* What st is when it cannot be a configuration file, or NULL.  fd: open
 * on it, or -1.  An anonymous pipe (stdin, <(...)) has a writer already;
 * only a named FIFO waits for one. */
static const char *not_a_file(const struct stat *st, int fd)
{
    struct statfs sf;
    if (S_ISDIR(st->st_mode))
        return "it is a directory";
    if (S_ISSOCK(st->st_mode))
        return "it is a socket, not a file";
    if (S_ISFIFO(st->st_mode) && !(fd >= 0 && fstatfs(fd, &sf) == 0 && sf.f_type == PIPEFS_MAGIC))
        return "it is a FIFO (named pipe), not a file: reading it would wait for a writer, and a run "
               "reads its file again before each cell";
    return NULL;
}

FILE *dlg_config_fopen(const char *path, const char *what, struct stat *st, char *err, size_t errlen)
{
    /* O_NONBLOCK: opening a FIFO returns at once instead of waiting */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == EWOULDBLOCK) /* a file lease, which O_NONBLOCK will not wait out */
        fd = open(path, O_RDONLY | O_CLOEXEC);
    int e = errno;
    const char *why = NULL;
    if (fd >= 0 ? fstat(fd, st) != 0 : stat(path, st) != 0) /* a socket refuses open: ENXIO */
        why = strerror(fd >= 0 ? errno : e);
    else if (!(why = not_a_file(st, fd)) && fd < 0)
        why = strerror(e);
    int fl = why ? -1 : fcntl(fd, F_GETFL);
    if (!why && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)) /* reads must wait */
        why = strerror(errno);
    FILE *fp = why ? NULL : fdopen(fd, "r");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", what, why ? why : strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return fp;
}
