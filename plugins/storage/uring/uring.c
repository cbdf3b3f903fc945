/* uring: asynchronous reads through io_uring (liburing), one ring per
 * dlg_file.  submit() queues a batch of SQEs and enters the kernel once;
 * reap() harvests completions, transparently resubmitting the remainder of
 * short reads so that callers only ever see full reads or EOF. */
#define _GNU_SOURCE
#include <dlgauge/plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dio.h"
#include "fileio.h"
#include "fileopen.h"
#include "uring_queue.h"

enum { OPT_DEPTH, OPT_BATCH, OPT_DIRECT, OPT_FIXED, OPT_FIXED_BUFS, OPT_COUNT };

static const dlg_option uring_options[] = {
    [OPT_DEPTH] = {"depth", DLG_OPT_INT, "32", "1", "4096", NULL,
                   "most reads in flight per file (ring size)", 0},
    /* fio's iodepth_batch_submit.  The kernel plugs one io_uring_enter's
     * reads and the device gets them at once; on a virtio disk, 32 4 KiB
     * reads entered together ran at 0.85x the IOPS of entering them 1-4 at
     * a time (docs/benchmarks.md), since the device then works while the
     * rest are queued. */
    [OPT_BATCH] = {"submit_batch", DLG_OPT_INT, "4", "1", "4096", NULL,
                   "most reads handed to the kernel per io_uring_enter (over depth it acts as depth)", 0},
    [OPT_DIRECT] = {"direct", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
                    "open with O_DIRECT (async reads must then be aligned to the file's align)", 0},
    [OPT_FIXED] = {"fixed_files", DLG_OPT_BOOL, "true", NULL, NULL, NULL,
                   "register the file with the ring (saves an fget per read)", 0},
    [OPT_FIXED_BUFS] = {"fixed_buffers", DLG_OPT_BOOL, "true", NULL, NULL, NULL,
                        "register the buffer a workload reads into, where it names one (saves pinning "
                        "its pages per read)", 0},
    [OPT_COUNT] = {0},
};

#define URING_BOUNCE_MAX (16u << 20)

typedef struct uring_inst {
    uint32_t depth;
    uint32_t batch;
    bool direct;
    bool fixed;
    bool fixed_bufs;
    atomic_bool tmpfs_warned;
} uring_inst;

typedef struct uring_file {
    dlg_file base;
    const dlg_host *h;
    int fd;
    bool fixed_bufs;
    bool direct;
    bool ring_up;
    stg_bounce bounce;
    char *path;
    uring_queue q;
} uring_file;

static int uring_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    int64_t depth = opts[OPT_DEPTH].set ? opts[OPT_DEPTH].i : 32;
    if (depth < 1 || depth > 4096)
        return h->error(h, DLG_EINVAL, "depth: %s is out of range [1, 4096]",
                        opts[OPT_DEPTH].text ? opts[OPT_DEPTH].text : "?");
    int64_t batch = opts[OPT_BATCH].set ? opts[OPT_BATCH].i : 4;
    if (batch < 1 || batch > 4096)
        return h->error(h, DLG_EINVAL, "submit_batch: %s is out of range [1, 4096]",
                        opts[OPT_BATCH].text ? opts[OPT_BATCH].text : "?");
    /* At most depth reads are queued at once: a bigger batch never fills.
     * The default (4) over a small depth is what the help promises
     * (default values read as set: the value tells them apart). */
    if (batch > depth && batch != 4)
        h->log(h, DLG_LOG_WARN,
               "uring: submit_batch = %lld is over depth = %lld: at most depth reads wait at once, "
               "so they go to the kernel %lld at a time (set submit_batch <= depth)",
               (long long)batch, (long long)depth, (long long)depth);
    uring_inst *u = calloc(1, sizeof *u);
    if (!u)
        return h->error(h, DLG_ENOMEM, "uring: out of memory");
    u->depth = (uint32_t)depth;
    u->batch = (uint32_t)batch;
    u->direct = opts[OPT_DIRECT].set && opts[OPT_DIRECT].i;
    u->fixed = !opts[OPT_FIXED].set || opts[OPT_FIXED].i;
    u->fixed_bufs = !opts[OPT_FIXED_BUFS].set || opts[OPT_FIXED_BUFS].i;
    *inst = u;
    return 0;
}

static void uring_destroy(void *inst) { free(inst); }

/* Frees the file's ring and buffers and closes it; close's errno, or 0. */
static int release(uring_file *uf)
{
    if (uf->ring_up)
        uq_fini(&uf->q);
    uf->ring_up = false;
    int err = uf->fd >= 0 && close(uf->fd) != 0 ? errno : 0;
    uf->fd = -1;
    stg_bounce_free(&uf->bounce);
    free(uf->path);
    uf->path = NULL;
    return err;
}

static int uring_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    uring_inst *u = inst;
    uring_file *uf = (uring_file *)f;
    bool writing = flags == DLG_OPEN_WRITE;
    memset((char *)uf + sizeof(dlg_file), 0, sizeof *uf - sizeof(dlg_file));
    uf->h = h;
    uf->fd = -1;
    uf->direct = u->direct && !writing;
    uf->fixed_bufs = u->fixed_bufs;
    uf->path = strdup(path);
    if (!uf->path)
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    int fd = stg_open(h, path, flags, u->direct ? O_DIRECT : 0, "set direct = false or use type = posix");
    uf->fd = fd < 0 ? -1 : fd;
    int rc = fd < 0 ? fd : uq_init(&uf->q, h, uf->path, fd, u->depth, u->batch, u->fixed);
    if (rc < 0) {
        release(uf);
        return rc;
    }
    uf->ring_up = true;
    const char *how = "";
    uint32_t align = uf->direct ? stg_dio_align(uf->fd, &how) : 1;
    if (uf->direct)
        stg_warn_direct_tmpfs(h, uf->fd, path, &u->tmpfs_warned);
    stg_bounce_init(&uf->bounce, align, URING_BOUNCE_MAX);
    f->align = align;
    return 0;
}

static int uring_close(dlg_file *f)
{
    uring_file *uf = (uring_file *)f;
    const dlg_host *h = uf->h;
    char *path = uf->path;
    uf->path = NULL; /* kept for the message */
    /* a network filesystem may report a failed write only here */
    int err = release(uf);
    int rc = err ? h->error(h, DLG_EIO, "%s: close: %s", path, strerror(err)) : 0;
    free(path);
    return rc;
}

static int uring_size(dlg_file *f, uint64_t *out)
{
    uring_file *uf = (uring_file *)f;
    int rc = stg_fd_size(uf->fd, out);
    if (rc < 0)
        return uf->h->error(uf->h, DLG_EIO, "%s: stat: %s", uf->path, strerror(-rc));
    return 0;
}

static int uring_submit(dlg_file *f, const dlg_io *ios, size_t n)
{
    uring_file *uf = (uring_file *)f;
    for (size_t i = 0; i < n; i++)
        if (uf->direct && !stg_aligned(ios[i].buf, ios[i].len, ios[i].off, uf->base.align))
            return uf->h->error(uf->h, DLG_EINVAL,
                                "%s: direct = true needs buffer, length and offset aligned to %u "
                                "(read %zu bytes at offset %llu)",
                                uf->path, uf->base.align, ios[i].len, (unsigned long long)ios[i].off);
    return uq_submit(&uf->q, ios, n);
}

static int uring_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    return uq_reap(&((uring_file *)f)->q, done, max, min_done);
}

/* One read through the ring, waited for: read() works without submit(). */
static int64_t ring_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    uring_file *uf = ctx;
    if (uf->q.inflight > 0 || uf->q.nfree == 0) {
        /* async reads are pending: keep their completions for reap() */
        int64_t r = stg_pread_full(uf->fd, buf, n, off);
        return r < 0 ? uf->h->error(uf->h, DLG_EIO, "%s: read at offset %llu: %s", uf->path,
                                    (unsigned long long)off, strerror((int)-r))
                     : r;
    }
    dlg_io io = {buf, n, off, 0};
    int rc = uring_submit(&uf->base, &io, 1);
    if (rc < 0)
        return rc;
    dlg_io_done d;
    rc = uring_reap(&uf->base, &d, 1, 1);
    if (rc < 0)
        return rc;
    return d.result;
}

static int64_t uring_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    uring_file *uf = (uring_file *)f;
    if (!uf->direct || stg_aligned(buf, n, off, f->align))
        return ring_read(uf, buf, n, off);
    int64_t r = stg_bounce_read(&uf->bounce, ring_read, uf, buf, n, off);
    if (r == -DLG_ENOMEM)
        return uf->h->error(uf->h, DLG_ENOMEM, "%s: no memory for a bounce buffer", uf->path);
    return r;
}

static int uring_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    uring_file *uf = (uring_file *)f;
    return stg_write(uf->h, uf->fd, uf->path, buf, n, off);
}

static uint32_t uring_depth(dlg_file *f)
{
    return ((uring_file *)f)->q.depth;
}

/* Registers the caller's read buffer as fixed buffer 0: the kernel pins its
 * pages once instead of per read (fio's --fixedbufs).  Not possible here
 * (memlock limit, an old kernel): reads go on unregistered. */
static int uring_register_buffer(dlg_file *f, void *buf, size_t len)
{
    uring_file *uf = (uring_file *)f;
    return uq_register(&uf->q, buf, len, uf->fixed_bufs);
}

static const dlg_storage_ops uring_ops = {
    .version = 2,
    .caps = DLG_CAP_ASYNC | DLG_CAP_DIRECT,
    .file_size = sizeof(uring_file),
    .create = uring_create,
    .destroy = uring_destroy,
    .open = uring_open,
    .close = uring_close,
    .size = uring_size,
    .read = uring_read,
    .submit = uring_submit,
    .reap = uring_reap,
    .write = uring_write,
    .depth = uring_depth,
    .register_buffer = uring_register_buffer,
};

static const dlg_plugin_desc uring_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "uring",
    .version = "1.0",
    .summary = "asynchronous reads through io_uring, one ring per file (depth in flight)",
    .options = uring_options,
    .ops = &uring_ops,
};

DLG_PLUGIN("uring", &uring_desc)
