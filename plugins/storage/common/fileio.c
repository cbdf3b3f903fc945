#define _GNU_SOURCE
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

int64_t stg_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (int64_t)got;
}

int stg_pwrite_full(int fd, const void *buf, size_t n, uint64_t off, size_t *done)
{
    size_t put = 0;
    int rc = 0;
    while (put < n && rc == 0) {
        ssize_t r = pwrite(fd, (const char *)buf + put, n - put, (off_t)(off + put));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rc = -errno;
        else if (r == 0)
            rc = -EIO; /* no progress: never spin */
        else
            put += (size_t)r;
    }
    *done = put;
    return rc;
}

int stg_write(const dlg_host *h, int fd, const char *path, const void *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    int rc = stg_pwrite_full(fd, buf, n, off, &done);
    if (rc == 0)
        return 0;
    /* pwrite's EBADF ("Bad file descriptor") hides the caller's mistake */
    int mode = rc == -EBADF ? fcntl(fd, F_GETFL) : -1;
    if (mode >= 0 && (mode & O_ACCMODE) == O_RDONLY)
        return h->error(h, DLG_EINVAL, "%s: opened for reading, cannot write", path);
    char where[48] = "";
    if (done > 0)
        snprintf(where, sizeof where, " stopped at offset %llu", (unsigned long long)(off + done));
    return h->error(h, DLG_EIO, "%s: write of %zu bytes at offset %llu%s: %s", path, n, (unsigned long long)off,
                    where, strerror(-rc));
}

int stg_fd_size(int fd, uint64_t *out)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    if (S_ISBLK(st.st_mode)) {
        uint64_t bytes = 0;
        if (ioctl(fd, BLKGETSIZE64, &bytes) != 0)
            return -errno;
        *out = bytes;
        return 0;
    }
    *out = (uint64_t)st.st_size;
    return 0;
}
