/* uring: asynchronous reads through io_uring (liburing), one ring per
 * dlg_file.  submit() queues a batch of SQEs and enters the kernel once;
 * reap() harvests completions, transparently resubmitting the remainder of
 * short reads so that callers only ever see full reads or EOF. */
#define _GNU_SOURCE
#include <dlgauge/plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dio.h"
#include "fileio.h"
#include "fileopen.h"

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
                   "most reads handed to the kernel per io_uring_enter", 0},
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
#define URING_SQE_MAX (1u << 30) /* one SQE reads at most this; the rest is resubmitted */

typedef struct uring_inst {
    uint32_t depth;
    uint32_t batch;
    bool direct;
    bool fixed;
    bool fixed_bufs;
} uring_inst;

typedef struct uring_slot {
    char *buf;
    size_t len;
    uint64_t off;
    uint64_t user;
    size_t done;
} uring_slot;

typedef struct uring_file {
    dlg_file base;
    const dlg_host *h;
    int fd;
    bool fixed;
    bool fixed_bufs;
    bool direct;
    uint32_t depth;
    uint32_t batch;
    uint32_t inflight;
    uint32_t nfree;
    uint32_t *free_slots;
    uring_slot *slots;
    struct io_uring ring;
    stg_bounce bounce;
    char *path;
    char *reg;      /* the registered buffer (fixed buffer 0), or NULL */
    size_t reg_len;
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

static void release(uring_file *uf)
{
    if (uf->fd >= 0)
        close(uf->fd);
    uf->fd = -1;
    free(uf->slots);
    free(uf->free_slots);
    stg_bounce_free(&uf->bounce);
    free(uf->path);
    uf->slots = NULL;
    uf->free_slots = NULL;
    uf->path = NULL;
}

static int setup_ring(uring_file *uf, bool fixed)
{
    const dlg_host *h = uf->h;
    /* CQ twice the SQ: completions can never overflow with depth in flight. */
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = 2 * uf->depth;
    int rc = io_uring_queue_init_params(uf->depth, &uf->ring, &p);
    if (rc == -ENOSYS || rc == -EPERM || rc == -EACCES)
        return h->error(h, DLG_ENOTSUP,
                        "%s: io_uring is unavailable here (io_uring_setup: %s; the kernel or a "
                        "seccomp policy refuses it); use type = posix",
                        uf->path, strerror(-rc));
    if (rc < 0)
        return h->error(h, rc == -ENOMEM ? DLG_ENOMEM : DLG_EIO,
                        "%s: io_uring_setup with depth %u: %s%s", uf->path, uf->depth,
                        strerror(-rc), rc == -ENOMEM ? " (try a smaller depth or raise ulimit -l)" : "");
    uf->fixed = fixed && io_uring_register_files(&uf->ring, &uf->fd, 1) == 0;
    return 0;
}

static int uring_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    uring_inst *u = inst;
    uring_file *uf = (uring_file *)f;
    bool writing = flags == DLG_OPEN_WRITE;
    memset((char *)uf + sizeof(dlg_file), 0, sizeof *uf - sizeof(dlg_file));
    uf->h = h;
    uf->fd = -1;
    uf->depth = u->depth;
    uf->batch = u->batch;
    uf->direct = u->direct && !writing;
    uf->fixed_bufs = u->fixed_bufs;
    uf->path = strdup(path);
    uf->slots = calloc(u->depth, sizeof *uf->slots);
    uf->free_slots = calloc(u->depth, sizeof *uf->free_slots);
    if (!uf->path || !uf->slots || !uf->free_slots) {
        release(uf);
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    }
    for (uint32_t i = 0; i < u->depth; i++)
        uf->free_slots[i] = u->depth - 1 - i;
    uf->nfree = u->depth;
    int fd = stg_open(h, path, flags, u->direct ? O_DIRECT : 0, "set direct = false or use type = posix");
    uf->fd = fd < 0 ? -1 : fd;
    int rc = fd < 0 ? fd : 0;
    if (rc == 0)
        rc = setup_ring(uf, u->fixed);
    if (rc < 0) {
        release(uf);
        return rc;
    }
    const char *how = "";
    uint32_t align = uf->direct ? stg_dio_align(uf->fd, &how) : 1;
    stg_bounce_init(&uf->bounce, align, URING_BOUNCE_MAX);
    f->align = align;
    return 0;
}

/* Waits out the reads still in flight (one CQE each; short reads are not
 * resubmitted): the kernel tears a ring down asynchronously, and a read
 * under way then still lands in a buffer the caller frees after close. */
static void drain(uring_file *uf)
{
    if (uf->inflight && io_uring_submit(&uf->ring) < 0)
        return; /* SQEs a failed submit left queued would never complete */
    while (uf->inflight > 0) {
        struct io_uring_cqe *cqe;
        int rc = io_uring_wait_cqe(&uf->ring, &cqe);
        if (rc == -EINTR || rc == -EAGAIN)
            continue;
        if (rc < 0)
            return;
        io_uring_cqe_seen(&uf->ring, cqe);
        uf->inflight--;
    }
}

static int uring_close(dlg_file *f)
{
    uring_file *uf = (uring_file *)f;
    drain(uf);
    io_uring_queue_exit(&uf->ring);
    release(uf);
    return 0;
}

static int uring_size(dlg_file *f, uint64_t *out)
{
    uring_file *uf = (uring_file *)f;
    int rc = stg_fd_size(uf->fd, out);
    if (rc < 0)
        return uf->h->error(uf->h, DLG_EIO, "%s: stat: %s", uf->path, strerror(-rc));
    return 0;
}

static int queue_read(uring_file *uf, uint32_t idx)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&uf->ring);
    if (!sqe) /* cannot happen with at most depth slots, but never crash */
        return uf->h->error(uf->h, DLG_EINTERNAL, "%s: io_uring submission queue full", uf->path);
    uring_slot *s = &uf->slots[idx];
    size_t left = s->len - s->done;
    unsigned len = left > URING_SQE_MAX ? URING_SQE_MAX : (unsigned)left;
    char *dst = s->buf + s->done;
    if (uf->reg && dst >= uf->reg && len <= uf->reg_len && (size_t)(dst - uf->reg) <= uf->reg_len - len)
        io_uring_prep_read_fixed(sqe, uf->fixed ? 0 : uf->fd, dst, len, s->off + s->done, 0);
    else
        io_uring_prep_read(sqe, uf->fixed ? 0 : uf->fd, dst, len, s->off + s->done);
    if (uf->fixed)
        sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, idx);
    return 0;
}

static int submit_all(uring_file *uf)
{
    for (;;) {
        int rc = io_uring_submit(&uf->ring);
        if (rc >= 0 || (rc != -EINTR && rc != -EAGAIN))
            return rc < 0 ? uf->h->error(uf->h, DLG_EIO, "%s: io_uring_submit: %s", uf->path,
                                         strerror(-rc))
                          : 0;
    }
}

static int uring_submit(dlg_file *f, const dlg_io *ios, size_t n)
{
    uring_file *uf = (uring_file *)f;
    if (n > uf->nfree)
        return uf->h->error(uf->h, DLG_EINVAL,
                            "%s: %zu more reads would exceed depth %u (%u in flight); reap first",
                            uf->path, n, uf->depth, uf->inflight);
    for (size_t i = 0; i < n; i++)
        if (uf->direct && !stg_aligned(ios[i].buf, ios[i].len, ios[i].off, uf->base.align))
            return uf->h->error(uf->h, DLG_EINVAL,
                                "%s: direct = true needs buffer, length and offset aligned to %u "
                                "(read %zu bytes at offset %llu)",
                                uf->path, uf->base.align, ios[i].len, (unsigned long long)ios[i].off);
    for (size_t i = 0; i < n; i++) {
        uint32_t idx = uf->free_slots[--uf->nfree];
        uf->slots[idx] = (uring_slot){ios[i].buf, ios[i].len, ios[i].off, ios[i].user, 0};
        uf->inflight++;
        int rc = queue_read(uf, idx);
        if (rc == 0 && ((i + 1) % uf->batch == 0 || i + 1 == n))
            rc = submit_all(uf);
        if (rc < 0)
            return rc;
    }
    return (int)n;
}

/* Handles one CQE; returns 1 if it completed a read into *out, 0 if the
 * remainder was queued again. */
static int handle_cqe(uring_file *uf, struct io_uring_cqe *cqe, dlg_io_done *out)
{
    uint32_t idx = (uint32_t)io_uring_cqe_get_data64(cqe);
    int res = cqe->res;
    io_uring_cqe_seen(&uf->ring, cqe);
    uring_slot *s = &uf->slots[idx];
    if (res == -EINTR || res == -EAGAIN)
        return queue_read(uf, idx) < 0 ? -1 : 0;
    if (res > 0) {
        s->done += (size_t)res;
        if (s->done < s->len)
            return queue_read(uf, idx) < 0 ? -1 : 0; /* short read: read the rest */
    }
    out->user = s->user;
    out->result = res < 0 ? uf->h->error(uf->h, DLG_EIO, "%s: read of %zu bytes at offset %llu: %s",
                                         uf->path, s->len, (unsigned long long)s->off, strerror(-res))
                          : (int64_t)s->done;
    uf->free_slots[uf->nfree++] = idx;
    uf->inflight--;
    return 1;
}

static int uring_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    uring_file *uf = (uring_file *)f;
    if (min_done > max)
        min_done = max;
    if (min_done > uf->inflight)
        min_done = uf->inflight; /* never wait for reads that were not submitted */
    size_t count = 0;
    for (;;) {
        bool resubmitted = false;
        struct io_uring_cqe *cqe;
        while (count < max && io_uring_peek_cqe(&uf->ring, &cqe) == 0) {
            int rc = handle_cqe(uf, cqe, &done[count]);
            if (rc < 0)
                return -DLG_EINTERNAL;
            count += (size_t)rc;
            resubmitted |= rc == 0;
        }
        if (resubmitted && submit_all(uf) < 0)
            return -DLG_EIO;
        if (count >= min_done)
            return (int)count;
        int rc = io_uring_wait_cqe(&uf->ring, &cqe);
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN)
            return uf->h->error(uf->h, DLG_EIO, "%s: io_uring_wait_cqe: %s", uf->path, strerror(-rc));
    }
}

/* One read through the ring, waited for: read() works without submit(). */
static int64_t ring_read(void *ctx, void *buf, size_t n, uint64_t off)
{
    uring_file *uf = ctx;
    if (uf->inflight > 0 || uf->nfree == 0) {
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
    int rc = stg_pwrite_full(uf->fd, buf, n, off);
    if (rc < 0)
        return uf->h->error(uf->h, DLG_EIO, "%s: write of %zu bytes at offset %llu: %s", uf->path,
                            n, (unsigned long long)off, strerror(-rc));
    return 0;
}

static uint32_t uring_depth(dlg_file *f)
{
    return ((uring_file *)f)->depth;
}

/* Registers the caller's read buffer as fixed buffer 0: the kernel pins its
 * pages once instead of per read (fio's --fixedbufs).  Not possible here
 * (memlock limit, an old kernel): reads go on unregistered. */
static int uring_register_buffer(dlg_file *f, void *buf, size_t len)
{
    uring_file *uf = (uring_file *)f;
    if (uf->inflight)
        return uf->h->error(uf->h, DLG_EINVAL, "%s: register a buffer before any read is in flight", uf->path);
    if (uf->reg)
        io_uring_unregister_buffers(&uf->ring);
    uf->reg = NULL;
    struct iovec iov = {buf, len};
    if (!uf->fixed_bufs || !buf || !len || io_uring_register_buffers(&uf->ring, &iov, 1) != 0)
        return -DLG_ENOTSUP;
    uf->reg = buf;
    uf->reg_len = len;
    return 0;
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
