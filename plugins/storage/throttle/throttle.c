/* throttle: a shim that makes another backend behave like a cloud disk —
 * bandwidth and IOPS caps (token buckets) plus per-I/O latency — the way
 * SQLite's vfsstat wraps the real VFS.  Limits come from options and/or a
 * disk profile (conf/disks/X.ini); the inner backend does the real I/O. */
#define _GNU_SOURCE
#include <dlgauge/plugin.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "throttle_file.h"
#include "throttle_profile.h"
#include "throttle_units.h"

static int merge_options(const dlg_host *h, const dlg_value *opts, thr_profile *prof,
                         dlg_value *out)
{
    const char *path = opts[THR_PROFILE].set ? opts[THR_PROFILE].text : NULL;
    memset(prof, 0, sizeof *prof);
    if (path && *path) {
        int rc = thr_profile_load(h, path, prof);
        if (rc < 0)
            return rc;
    }
    char why[256];
    for (int i = 0; i < THR_OPT_COUNT; i++) {
        out[i] = opts[i].set ? opts[i] : prof->v[i];
        /* The core checks bounds; a host that does not must not get past us. */
        if (opts[i].set && thr_check_range(&thr_options[i], &opts[i], why, sizeof why) != 0)
            return h->error(h, DLG_EINVAL, "%s", why);
    }
    return 0;
}

void thr_warn_slow(thr_file *tf, size_t n, bool write, double bandwidth)
{
    if (atomic_exchange(&tf->ti->slow_said, true))
        return;
    tf->h->log(tf->h, DLG_LOG_WARN,
               "throttle: one %zu-byte %s of %s takes %.0f s at %sbandwidth = %.0f B/s (over %.0f s "
               "per I/O: bandwidth is bytes per second, e.g. 150MB; 0 = unlimited)",
               n, write ? "write" : "read", tf->path ? tf->path : "?", (double)n / bandwidth,
               write && tf->ti->shaper->lim.write_own_bw ? "write_" : "", bandwidth, THR_SLOW_S);
}

static int resolve_inner(const dlg_host *h, thr_inst *ti, const char *name)
{
    if (h->struct_size < offsetof(dlg_host, storage_lookup) + sizeof h->storage_lookup ||
        !h->storage_lookup)
        return h->error(h, DLG_ENOTSUP, "inner = %s: this dlgauge host has no storage lookup",
                        name);
    const dlg_storage_ops *ops = NULL;
    void *inst = NULL;
    int rc = h->storage_lookup(h, name, &ops, &inst);
    if (rc < 0 && (ops || rc == -DLG_ENOMEM)) /* could not be made, or no memory: the host's line says why */
        return rc;
    if (rc < 0) /* no such storage (the host may not say so): name the key and both meanings */
        return h->error(h, rc < -DLG_EINTERNAL ? DLG_EINVAL : -rc,
                        "inner = %s: no [storage %s] section and no storage backend type '%s' "
                        "(try inner = posix)",
                        name, name, name);
    if (!ops || ops->version < 1 || !ops->open || !ops->read || !ops->close || ops->file_size <
                                                                                   sizeof(dlg_file))
        return h->error(h, DLG_EINVAL, "inner = %s: not a usable storage backend", name);
    ti->inner_ops = ops;
    ti->inner_inst = inst;
    return 0;
}

/* "80 B/s, shared IOPS": each write limit, or "shared" where writes draw
 * on the read bucket (one combined read+write limit, as EBS); with
 * write_budget = shared, the limits are one budget with the reads'. */
static void describe_writes(const thr_limits *lim, char *buf, size_t len)
{
    char bw[40] = "shared B/s", io[40] = "shared IOPS";
    if (lim->write_own_bw)
        snprintf(bw, sizeof bw, "%.0f B/s", lim->write_bandwidth);
    if (lim->write_own_iops)
        snprintf(io, sizeof io, "%.0f IOPS", lim->write_iops);
    snprintf(buf, len, "%s, %s%s", bw, io,
             lim->write_shared && (lim->write_own_bw || lim->write_own_iops) ? ", one budget with reads" : "");
}

/* The disk this instance's I/O goes through: its own, or, where several
 * ranks of the run share this node, the one disk they all read. */
static int use_disk(const dlg_host *h, thr_inst *ti, const thr_limits *lim)
{
    dlg_rank_info ri = {.struct_size = sizeof ri}; /* local_size 0: a host that does not say */
    if (DLG_HOST_HAS(h, comm_info))
        h->comm_info(h, &ri);
    if (!DLG_RANK_HAS(&ri, node_key) || ri.local_size < 2) {
        thr_shaper_init(&ti->own, lim);
        ti->shaper = &ti->own;
        return 0;
    }
    char why[512];
    if (thr_shm_attach(ri.node_key, ri.local_rank, lim, &ti->shm, &ti->shaper, why, sizeof why) != 0)
        return h->error(h, DLG_EIO, "%s", why);
    h->log(h, DLG_LOG_DEBUG, "throttle: local rank %d of %d shares emulated disk %d of %s", ri.local_rank,
           ri.local_size, ti->shm.disk, ti->shm.name);
    return 0;
}

static int thr_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    thr_profile *prof = malloc(sizeof *prof);
    dlg_value merged[THR_OPT_COUNT];
    thr_inst *ti = calloc(1, sizeof *ti);
    if (!prof || !ti) {
        free(prof);
        free(ti);
        return h->error(h, DLG_ENOMEM, "throttle: out of memory");
    }
    thr_limits lim;
    memset(&lim, 0, sizeof lim);
    int rc = merge_options(h, opts, prof, merged);
    if (rc == 0) {
        char origin[512] = "";
        if (opts[THR_PROFILE].set && opts[THR_PROFILE].text && *opts[THR_PROFILE].text)
            snprintf(origin, sizeof origin, "profile %s: ", opts[THR_PROFILE].text);
        rc = thr_resolve(h, merged, origin, &lim);
    }
    const char *inner = opts[THR_INNER].set && opts[THR_INNER].text ? opts[THR_INNER].text : "posix";
    if (rc == 0)
        rc = resolve_inner(h, ti, inner);
    free(prof);
    if (rc == 0 && !(ti->inner_name = strdup(inner)))
        rc = h->error(h, DLG_ENOMEM, "throttle: out of memory");
    if (rc < 0) {
        free(ti);
        return rc;
    }
    ti->h = h;
    atomic_init(&ti->slow_said, false);
    atomic_init(&ti->cache_said, false);
    ti->model_cache = merged[THR_PAGE_CACHE].set && merged[THR_PAGE_CACHE].i == THR_CACHE_MODEL;
    if ((rc = use_disk(h, ti, &lim)) < 0) {
        free(ti->inner_name);
        free(ti);
        return rc;
    }
    char writes[128];
    describe_writes(&lim, writes, sizeof writes);
    h->log(h, DLG_LOG_DEBUG,
           "throttle over %s: %.0f B/s (burst %.0f B), %.0f IOPS (burst %.0f), latency %.3f ms; "
           "writes %s",
           inner, lim.bandwidth, lim.burst, lim.iops, lim.burst_iops, (double)lim.latency / 1e6, writes);
    *inst = ti;
    return 0;
}

static void thr_destroy(void *inst)
{
    thr_inst *ti = inst;
    if (!ti)
        return;
    if (ti->shm.seg)
        thr_shm_detach(&ti->shm);
    else
        thr_shaper_fini(&ti->own);
    free(ti->inner_name);
    free(ti); /* the inner instance belongs to the host */
}

/* page_cache = model on a file opened to read, where it can be: not over
 * an O_DIRECT inner backend (its reads bypass the page cache: every one
 * reaches the disk), and not where mincore cannot see the file's cache;
 * there every read is charged, said once per storage. */
static void model_cache(thr_file *tf)
{
    char why[600] = "";
    bool blind = false;
    if (tf->base.align > 1) /* the inner file is open O_DIRECT (a backend that may be, is) */
        snprintf(why, sizeof why, "inner = %s reads past the page cache (O_DIRECT)", tf->ti->inner_name);
    else if (thr_cache_open(&tf->cache, tf->path, &blind, why, sizeof why) == 0 && blind) {
        thr_cache_close(&tf->cache);
        snprintf(why, sizeof why, "mincore cannot see the page cache of %s (neither owned nor writable by "
                 "this user)", tf->path);
    }
    if (!tf->cache.live && !atomic_exchange(&tf->ti->cache_said, true))
        tf->h->log(tf->h, DLG_LOG_WARN, "throttle: page_cache = model: %s; every read is charged", why);
}

/* The bytes of one of readahead's large I/Os: iops_unit's, or the
 * kernel's default 128 KiB window where any size is one I/O. */
static double ahead_io_bytes(const thr_file *tf)
{
    const thr_limits *lim = &tf->ti->shaper->lim;
    return lim->iops_unit > 0 ? lim->iops_unit : 131072.0;
}

uint64_t thr_reserve_cost(thr_file *tf, uint64_t off, thr_cache_cost cost)
{
    uint64_t done = cost.miss ? thr_reserve(tf, off, cost.miss, false) : 0;
    if (cost.ahead) { /* readahead read these pages in large I/Os */
        uint64_t t = thr_shaper_reserve_ahead(tf->ti->shaper, cost.ahead, (double)cost.ahead / ahead_io_bytes(tf));
        done = t > done ? t : done;
    }
    return done;
}

/* Tells the host what reached the disk (the row's emulated_disk_read_*),
 * once the read is done, when the host counts it too. */
static void count_charged(thr_file *tf, uint64_t bytes, double ios)
{
    if (DLG_HOST_HAS(tf->h, disk_charged))
        tf->h->disk_charged(tf->h, bytes, ios);
}

void thr_count_cost(thr_file *tf, thr_cache_cost cost)
{
    if (cost.miss || cost.ahead)
        count_charged(tf, cost.miss + cost.ahead, (cost.miss ? 1 : 0) + (double)cost.ahead / ahead_io_bytes(tf));
}

static int thr_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    thr_inst *ti = inst;
    thr_file *tf = (thr_file *)f;
    memset((char *)tf + sizeof(dlg_file), 0, sizeof *tf - sizeof(dlg_file));
    dlg_file *in = calloc(1, ti->inner_ops->file_size);
    char *name = strdup(path);
    if (!in || !name) {
        free(in);
        free(name);
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    }
    in->ops = ti->inner_ops;
    in->inst = ti->inner_inst;
    int rc = ti->inner_ops->open(ti->inner_inst, h, path, flags, in);
    if (rc < 0) {
        free(in);
        free(name);
        return rc;
    }
    tf->h = h;
    tf->path = name;
    tf->ti = ti;
    tf->inner = in;
    tf->inner_caps = ti->inner_ops->caps;
    f->align = (tf->inner_caps & DLG_CAP_DIRECT) && in->align ? in->align : 1;
    tf->size = UINT64_MAX;
    if (flags == DLG_OPEN_READ && ti->inner_ops->size(in, &tf->size) != 0)
        tf->size = UINT64_MAX;
    if (flags == DLG_OPEN_READ && ti->model_cache)
        model_cache(tf);
    if (flags == DLG_OPEN_READ) /* the row counts this disk's reads from now: 0 is "all hits" */
        count_charged(tf, 0, 0);
    return 0;
}

static int thr_close(dlg_file *f)
{
    thr_file *tf = (thr_file *)f;
    int rc = tf->inner->ops->close(tf->inner);
    free(tf->inner);
    tf->inner = NULL;
    thr_async_free(tf);
    for (size_t i = 0; i < tf->nfbufs; i++)
        free(tf->fbufs[i].p);
    free(tf->fbufs);
    tf->fbufs = NULL;
    tf->nfbufs = 0;
    thr_cache_close(&tf->cache);
    free(tf->path);
    tf->path = NULL;
    return rc;
}

static int thr_size(dlg_file *f, uint64_t *out)
{
    thr_file *tf = (thr_file *)f;
    return tf->inner->ops->size(tf->inner, out);
}

static int64_t thr_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    thr_file *tf = (thr_file *)f;
    thr_cache_cost cost = thr_look_read(tf, off, n);
    uint64_t deadline = thr_reserve_cost(tf, off, cost);
    int64_t r = tf->inner->ops->read(tf->inner, buf, n, off);
    int rc = thr_sleep_until(tf->ti->shaper, tf->h, deadline);
    thr_count_cost(tf, cost);
    return r < 0 ? r : rc < 0 ? rc : r;
}

static int thr_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    thr_file *tf = (thr_file *)f;
    if (tf->inner->ops->version < 1 || !tf->inner->ops->write)
        return tf->h->error(tf->h, DLG_ENOTSUP, "%s: inner = %s cannot write", tf->path, tf->ti->inner_name);
    uint64_t deadline = thr_reserve(tf, off, n, true);
    int rc = tf->inner->ops->write(tf->inner, buf, n, off);
    int rs = thr_sleep_until(tf->ti->shaper, tf->h, deadline);
    return rc < 0 ? rc : rs;
}

/* A free lending buffer of at least n bytes: grown only when a larger fetch
 * comes, so a steady stream of fetches does not allocate. */
static thr_fbuf *lend_buffer(thr_file *tf, size_t n)
{
    thr_fbuf *best = NULL;
    for (size_t i = 0; i < tf->nfbufs; i++)
        if (!tf->fbufs[i].busy && (!best || tf->fbufs[i].cap > best->cap))
            best = &tf->fbufs[i];
    if (!best) {
        thr_fbuf *nb = realloc(tf->fbufs, (tf->nfbufs + 1) * sizeof *nb);
        if (!nb)
            return NULL;
        tf->fbufs = nb;
        best = &tf->fbufs[tf->nfbufs++];
        *best = (thr_fbuf){0};
    }
    if (best->cap < n) {
        void *p = realloc(best->p, n);
        if (!p)
            return NULL;
        best->p = p;
        best->cap = n;
    }
    return best;
}

/* The inner backend's read into lent buffer b, lent to the caller at *ptr
 * once it holds all n bytes. */
static int fetch_copy(thr_file *tf, thr_fbuf *b, uint64_t off, size_t n, const void **ptr)
{
    int64_t r = tf->inner->ops->read(tf->inner, b->p, n, off);
    if (r >= 0 && (size_t)r < n)
        r = tf->h->error(tf->h, DLG_EINVAL, "%s: fetch of [%llu, %llu) is past the end of the file (%llu bytes)",
                         tf->path, (unsigned long long)off, (unsigned long long)(off + n),
                         (unsigned long long)tf->size);
    if (r < 0)
        return (int)r;
    b->busy = true;
    *ptr = b->p;
    return 0;
}

static int thr_fetch(dlg_file *f, uint64_t off, size_t n, const void **ptr)
{
    thr_file *tf = (thr_file *)f;
    bool lends = (tf->inner_caps & DLG_CAP_ZERO_COPY) && tf->inner->ops->fetch;
    thr_fbuf *b = NULL;
    /* The buffer before the disk: a fetch that gets none does no I/O, and
     * charged, its time fell on the reads after it. */
    if (!lends && !(b = lend_buffer(tf, n ? n : 1)))
        return tf->h->error(tf->h, DLG_ENOMEM, "%s: fetch: no memory for %zu bytes", tf->path, n);
    /* as a read: nothing to fetch at the end of the file is no I/O */
    thr_cache_cost cost = thr_look_read(tf, off, n);
    uint64_t deadline = thr_reserve_cost(tf, off, cost);
    int rc = lends ? tf->inner->ops->fetch(tf->inner, off, n, ptr) : fetch_copy(tf, b, off, n, ptr);
    int rs = thr_sleep_until(tf->ti->shaper, tf->h, deadline);
    thr_count_cost(tf, cost);
    return rc < 0 ? rc : rs;
}

static void thr_unfetch(dlg_file *f, const void *ptr, size_t n)
{
    thr_file *tf = (thr_file *)f;
    if ((tf->inner_caps & DLG_CAP_ZERO_COPY) && tf->inner->ops->unfetch) {
        tf->inner->ops->unfetch(tf->inner, ptr, n);
        return;
    }
    for (size_t i = 0; i < tf->nfbufs; i++)
        if (tf->fbufs[i].p == ptr && tf->fbufs[i].busy) {
            tf->fbufs[i].busy = false;
            return;
        }
}

/* Capabilities are per backend type, so throttle offers all of them and
 * emulates what the inner backend lacks: fetch copies into lent buffers,
 * submit/reap run the inner reads synchronously but complete them at the
 * emulated disk's pace (so queue depth still overlaps latency). */
static const dlg_storage_ops thr_ops = {
    .version = 2,
    .caps = DLG_CAP_ZERO_COPY | DLG_CAP_ASYNC | DLG_CAP_DIRECT,
    .file_size = sizeof(thr_file),
    .create = thr_create,
    .destroy = thr_destroy,
    .open = thr_open,
    .close = thr_close,
    .size = thr_size,
    .read = thr_read,
    .fetch = thr_fetch,
    .unfetch = thr_unfetch,
    .submit = thr_submit,
    .reap = thr_reap,
    .write = thr_write,
    .depth = thr_depth,
    .register_buffer = thr_register,
};

static const dlg_plugin_desc thr_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "throttle",
    .version = "1.0",
    .summary = "emulates a cloud disk (bandwidth, IOPS, latency) over another backend; a node's ranks share one",
    .options = thr_options,
    .ops = &thr_ops,
};

DLG_PLUGIN("throttle", &thr_desc)
