/* A storage backend: every path a job opens is read below one folder
 * (`root`), with pread, counting the reads it served.  It shows what a
 * backend needs: options as data, a dlg_file subclass the core allocates
 * (file_size), errors through the host saved at open (read() gets none),
 * and reads that are short only at EOF. */
#define _GNU_SOURCE /* pread, O_CLOEXEC */
#include <dlgauge/plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_ROOT };
static const dlg_option rootfs_options[] = {
    [OPT_ROOT] = {"root", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                  "folder that every path is relative to", DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP},
    {0},
};

/* One per [storage] section (or job using the type), shared by every file
 * and thread of a cell: it is only read after create(). */
typedef struct rootfs {
    int dirfd;
    char *root;
} rootfs;

/* The core allocates file_size bytes; dlg_file comes first. */
typedef struct rootfs_file {
    dlg_file base;
    const dlg_host *h; /* for errors from read()/size()/close() */
    int fd;
    char path[256]; /* for messages: root/path, shortened */
} rootfs_file;

static int rootfs_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    const char *root = opts[OPT_ROOT].text;
    int dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return h->error(h, DLG_EINVAL, "root = %s: %s", root, strerror(errno));
    rootfs *r = calloc(1, sizeof *r);
    if (!r || !(r->root = strdup(root))) {
        free(r);
        close(dirfd);
        return h->error(h, DLG_ENOMEM, "out of memory");
    }
    r->dirfd = dirfd;
    *inst = r;
    return 0;
}

static void rootfs_destroy(void *inst)
{
    rootfs *r = inst;
    close(r->dirfd);
    free(r->root);
    free(r);
}

/* Whether path's ".." components climb above where it starts (openat
 * would follow them out of root).  A symlink inside root can still point
 * out: Linux's openat2(RESOLVE_BENEATH) refuses that too. */
static bool climbs_out(const char *path)
{
    int depth = 0;
    for (const char *c = path; *c;) {
        size_t len = strcspn(c, "/");
        if (len == 2 && c[0] == '.' && c[1] == '.') {
            if (--depth < 0)
                return true;
        } else if (len > 0 && !(len == 1 && c[0] == '.'))
            depth++;
        c += len + (c[len] == '/');
    }
    return false;
}

static int rootfs_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    rootfs *r = inst;
    rootfs_file *rf = (rootfs_file *)f;
    rf->h = h;
    while (*path == '/') /* below root, whatever the job wrote */
        path++;
    snprintf(rf->path, sizeof rf->path, "%s/%s", r->root, path);
    if (climbs_out(path))
        return h->error(h, DLG_EINVAL, "%s: climbs out of root = %s", path, r->root);
    int how = flags == DLG_OPEN_WRITE ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY;
    rf->fd = openat(r->dirfd, path, how | O_CLOEXEC, 0644);
    if (rf->fd < 0)
        return h->error(h, errno == ENOENT ? DLG_EINVAL : DLG_EIO, "%s: %s", rf->path, strerror(errno));
    return 0;
}

static int rootfs_close(dlg_file *f)
{
    rootfs_file *rf = (rootfs_file *)f;
    if (close(rf->fd) != 0) /* the core frees f after this either way */
        return rf->h->error(rf->h, DLG_EIO, "%s: close: %s", rf->path, strerror(errno));
    return 0;
}

static int rootfs_size(dlg_file *f, uint64_t *out)
{
    rootfs_file *rf = (rootfs_file *)f;
    struct stat st;
    if (fstat(rf->fd, &st) != 0)
        return rf->h->error(rf->h, DLG_EIO, "%s: stat: %s", rf->path, strerror(errno));
    *out = (uint64_t)st.st_size;
    return 0;
}

/* n bytes at off, short only at EOF: pread may return less on its own. */
static int64_t rootfs_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    rootfs_file *rf = (rootfs_file *)f;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(rf->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r == 0)
            break;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return rf->h->error(rf->h, DLG_EIO, "%s: read of %zu bytes at offset %llu: %s", rf->path, n,
                                (unsigned long long)off, strerror(errno));
        got += (size_t)r;
    }
    return (int64_t)got;
}

static int rootfs_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    rootfs_file *rf = (rootfs_file *)f;
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(rf->fd, (const char *)buf + done, n - done, (off_t)(off + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return rf->h->error(rf->h, DLG_EIO, "%s: write of %zu bytes at offset %llu: %s", rf->path, n,
                                (unsigned long long)off, w < 0 ? strerror(errno) : "no progress");
        done += (size_t)w;
    }
    return 0;
}

static const dlg_storage_ops rootfs_ops = {
    .version = 1,
    .caps = 0,
    .file_size = sizeof(rootfs_file),
    .create = rootfs_create,
    .destroy = rootfs_destroy,
    .open = rootfs_open,
    .close = rootfs_close,
    .size = rootfs_size,
    .read = rootfs_read,
    .write = rootfs_write,
};

static const dlg_plugin_desc rootfs_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "rootfs",
    .version = "1.0",
    .summary = "reads and writes files below one folder with pread/pwrite",
    .options = rootfs_options,
    .ops = &rootfs_ops,
};

DLG_PLUGIN("rootfs", &rootfs_desc)
