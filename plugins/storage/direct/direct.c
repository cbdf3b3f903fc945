/* direct: O_DIRECT reads that bypass the page cache.  Aligned requests go
 * straight to the device; unaligned ones (RecordIO records are only 4-byte
 * aligned) are rounded out to the device's block size in a per-file bounce
 * buffer that is reused, so steady-state reads never allocate. */
#define _GNU_SOURCE
#include <dlgauge/plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dio.h"
#include "fileio.h"
#include "fileopen.h"

enum { OPT_BOUNCE_MAX, OPT_COUNT };

static const dlg_option direct_options[] = {
    [OPT_BOUNCE_MAX] = {"bounce_max", DLG_OPT_SIZE, "16MiB", "64KiB", "1GiB", NULL,
                        "largest bounce buffer per file; bigger unaligned reads go in chunks", 0},
    [OPT_COUNT] = {0},
};

typedef struct direct_inst {
    size_t bounce_max;
    atomic_bool tmpfs_warned;
} direct_inst;

typedef struct direct_file {
    dlg_file base;
    const dlg_host *h;
    int fd;
    bool writing;
    stg_bounce bounce;
    char *path;
} direct_file;

static int direct_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    int64_t bmax = opts[OPT_BOUNCE_MAX].set ? opts[OPT_BOUNCE_MAX].i : 16 << 20;
    if (bmax < (64 << 10) || bmax > (1ll << 30))
        return h->error(h, DLG_EINVAL, "bounce_max: %s is out of range [64KiB, 1GiB]",
                        opts[OPT_BOUNCE_MAX].text ? opts[OPT_BOUNCE_MAX].text : "?");
    direct_inst *d = calloc(1, sizeof *d);
    if (!d)
        return h->error(h, DLG_ENOMEM, "direct: out of memory");
    d->bounce_max = (size_t)bmax;
    *inst = d;
    return 0;
}

static void direct_destroy(void *inst) { free(inst); }

static int direct_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    direct_inst *d = inst;
    direct_file *df = (direct_file *)f;
    /* Writes (preprocess output) stay buffered: O_DIRECT is about measuring
     * reads, and buffered writes need no alignment. */
    bool writing = flags == DLG_OPEN_WRITE;
    /* direct may be a throttle's inner, where type = posix would drop the
     * emulated disk: name both ways out */
    int fd = stg_open(h, path, flags, O_DIRECT,
                      "use type = posix (or mmap/uring) for files here; under a throttle, inner = posix");
    if (fd < 0)
        return fd;
    df->path = strdup(path);
    if (!df->path) {
        close(fd);
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    }
    const char *how = "";
    uint32_t align = stg_dio_align(fd, &how);
    h->log(h, DLG_LOG_DEBUG, "%s: O_DIRECT alignment %u (from %s)", path, align, how);
    if (!writing)
        stg_warn_direct_tmpfs(h, fd, path, &d->tmpfs_warned);
    df->h = h;
    df->fd = fd;
    df->writing = writing;
    stg_bounce_init(&df->bounce, align, d->bounce_max);
    f->align = writing ? 1 : align;
    return 0;
}

static int direct_close(dlg_file *f)
{
    direct_file *df = (direct_file *)f;
    int rc = 0;
    if (close(df->fd) != 0)
        rc = df->h->error(df->h, DLG_EIO, "%s: close: %s", df->path, strerror(errno));
    stg_bounce_free(&df->bounce);
    free(df->path);
    df->path = NULL;
    return rc;
}

static int direct_size(dlg_file *f, uint64_t *out)
{
    direct_file *df = (direct_file *)f;
    int rc = stg_fd_size(df->fd, out);
    if (rc < 0)
        return df->h->error(df->h, DLG_EIO, "%s: stat: %s", df->path, strerror(-rc));
    return 0;
}

static int64_t aligned_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    direct_file *df = ctx;
    int64_t r = stg_pread_full(df->fd, buf, n, off);
    if (r < 0)
        return df->h->error(df->h, DLG_EIO, "%s: O_DIRECT read of %zu bytes at offset %llu: %s",
                            df->path, n, (unsigned long long)off, strerror((int)-r));
    return r;
}

static int64_t direct_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    direct_file *df = (direct_file *)f;
    if (df->writing || stg_aligned(buf, n, off, df->bounce.align))
        return aligned_read(df, buf, n, off);
    int64_t r = stg_bounce_read(&df->bounce, aligned_read, df, buf, n, off);
    if (r == -DLG_ENOMEM)
        return df->h->error(df->h, DLG_ENOMEM, "%s: no memory for a %zu-byte bounce buffer",
                            df->path, n);
    return r;
}

static int direct_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    direct_file *df = (direct_file *)f;
    if (!df->writing)
        return df->h->error(df->h, DLG_EINVAL, "%s: opened for reading, cannot write", df->path);
    return stg_write(df->h, df->fd, df->path, buf, n, off);
}

static const dlg_storage_ops direct_ops = {
    .version = 1,
    .caps = DLG_CAP_DIRECT,
    .file_size = sizeof(direct_file),
    .create = direct_create,
    .destroy = direct_destroy,
    .open = direct_open,
    .close = direct_close,
    .size = direct_size,
    .read = direct_read,
    .write = direct_write,
};

static const dlg_plugin_desc direct_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "direct",
    .version = "1.0",
    .summary = "O_DIRECT reads that bypass the page cache; unaligned ranges via a bounce buffer",
    .options = direct_options,
    .ops = &direct_ops,
};

DLG_PLUGIN("direct", &direct_desc)
