#include "data_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int64_t mem_pread(void *ctx, void *buf, size_t n, uint64_t off)
{
    const dlg_mem_file *m = ctx;
    if (off >= m->len)
        return 0;
    size_t avail = m->len - (size_t)off;
    size_t k = n < avail ? n : avail;
    memcpy(buf, (const uint8_t *)m->data + off, k);
    return (int64_t)k;
}

void dlg_source_mem(dlg_source *s, dlg_mem_file *mem, const void *data, size_t len,
                    const char *name)
{
    mem->data = data;
    mem->len = len;
    s->pread = mem_pread;
    s->ctx = mem;
    s->size = len;
    s->name = name ? name : "<memory>";
    s->why = NULL;
}

static int64_t fd_pread(void *ctx, void *buf, size_t n, uint64_t off)
{
    int fd = (int)(intptr_t)ctx;
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (uint8_t *)buf + done, n - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -DLG_EIO;
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (int64_t)done;
}

int dlg_source_fd(dlg_source *s, int fd, const char *name, dlg_data_err *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return dlg_data_fail(err, DLG_EIO, "%s: fstat: %s", name, strerror(errno));
    s->pread = fd_pread;
    s->ctx = (void *)(intptr_t)fd;
    s->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : DLG_SIZE_UNKNOWN;
    s->name = name;
    s->why = NULL;
    return 0;
}

int dlg_source_open_path(dlg_source *s, const char *path, dlg_data_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dlg_data_fail(err, errno == ENOENT ? DLG_EINVAL : DLG_EIO, "%s: cannot open: %s",
                             path, strerror(errno));
    int rc = dlg_source_fd(s, fd, path, err);
    if (rc < 0)
        close(fd);
    return rc;
}

void dlg_source_close_fd(dlg_source *s)
{
    if (s->pread == fd_pread)
        close((int)(intptr_t)s->ctx);
    s->pread = NULL;
}

int64_t dlg_source_read(const dlg_source *s, void *buf, size_t n, uint64_t off,
                        dlg_data_err *err)
{
    size_t done = 0;
    while (done < n) {
        int64_t r = s->pread(s->ctx, (uint8_t *)buf + done, n - done, off + done);
        if (r < 0 && s->why && s->why->code)
            return dlg_data_fail(err, (int)-r, "%s", s->why->msg);
        if (r < 0)
            return dlg_data_fail(err, (int)-r, "%s: read of %zu bytes at byte %llu failed",
                                 s->name, n - done, (unsigned long long)(off + done));
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (int64_t)done;
}

int dlg_source_slurp(const dlg_source *s, size_t max_len, char **out, size_t *len,
                     dlg_data_err *err)
{
    size_t cap = max_len < 4096 ? max_len : 4096, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", s->name);
    for (;;) {
        int64_t r = dlg_source_read(s, buf + n, cap - n, n, err);
        if (r < 0) {
            free(buf);
            return (int)r;
        }
        n += (size_t)r;
        if (n < cap)
            break;
        if (cap >= max_len) {
            char probe;
            r = dlg_source_read(s, &probe, 1, n, err);
            if (r == 0)
                break; /* exactly max_len bytes */
            free(buf);
            if (r < 0)
                return (int)r;
            return dlg_data_fail(err, DLG_EINVAL, "%s: larger than %zu bytes", s->name, max_len);
        }
        size_t ncap = cap > max_len / 2 ? max_len : cap * 2;
        char *nb = realloc(buf, ncap + 1);
        if (!nb) {
            free(buf);
            return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", s->name);
        }
        buf = nb;
        cap = ncap;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static int64_t fd_write(void *ctx, const void *buf, size_t n)
{
    int fd = (int)(intptr_t)ctx;
    size_t done = 0;
    while (done < n) {
        ssize_t r = write(fd, (const uint8_t *)buf + done, n - done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -DLG_EIO;
        }
        done += (size_t)r;
    }
    return (int64_t)n;
}

void dlg_output_fd(dlg_output *o, int fd, const char *name)
{
    o->write = fd_write;
    o->ctx = (void *)(intptr_t)fd;
    o->name = name;
}
