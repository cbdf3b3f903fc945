#define _GNU_SOURCE
#include "host.h"
#include "host_comm.h"

#include "comm.h"
#include "host_error.h"
#include "signals.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static dlg_host_impl *impl(const dlg_host *h) { return (dlg_host_impl *)h; }

/* "dlgauge: CONTEXT LEVEL: MSG" (context: its first ctx_len bytes), unless
 * it repeats hi's last line (each repetition's setup, say): noise. */
static void emit(dlg_host_impl *hi, const char *ctx, size_t ctx_len, const char *level, const char *msg)
{
    pthread_mutex_lock(&hi->svc->lock);
    bool repeat = strcmp(msg, hi->last_log) == 0;
    if (!repeat)
        snprintf(hi->last_log, sizeof hi->last_log, "%s", msg);
    pthread_mutex_unlock(&hi->svc->lock);
    if (!repeat)
        fprintf(stderr, "dlgauge: %.*s%s%s: %s\n", (int)ctx_len, ctx, ctx_len ? " " : "", level, msg);
}

static void h_log(const dlg_host *h, dlg_log_level lvl, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    dlg_host_impl *hi = impl(h);
    if ((int)lvl > hi->svc->verbosity && lvl != DLG_LOG_ERROR && lvl != DLG_LOG_WARN)
        return;
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    emit(hi, hi->context, strlen(hi->context), names[lvl <= DLG_LOG_DEBUG ? lvl : DLG_LOG_DEBUG], msg);
}

/* An error as a warning line, at the context of the host that raised it. */
static void warn_error(dlg_host_impl *hi, const dlg_error *e, const char *why)
{
    size_t head = e->head && e->text[e->head] == ':' ? e->head : 0;
    char msg[sizeof e->text + 64];
    snprintf(msg, sizeof msg, "%s%s", e->text + (head ? head + 2 : 0), why);
    emit(hi, e->text, head, "warning", msg);
}

static int h_error(const dlg_host *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dlg_services_vraise(impl(h)->svc, code, impl(h)->context, fmt, ap);
    va_end(ap);
    return -(code > 0 ? code : DLG_EINTERNAL);
}

static uint64_t h_now(const dlg_host *h)
{
    (void)h;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool h_stopping(const dlg_host *h)
{
    /* under several ranks a step is never cut short: its peers may wait
     * for it in a collective; the ranks stop together between steps
     * (runner_ranks.h).  A setup may end early (it has no collective):
     * the ranks agree after it (dlg_ranks_all_set_up). */
    const dlg_host_impl *hi = h->ctx;
    if (dlg_comm_size(hi->svc->comm) > 1 && !__atomic_load_n(&hi->in_setup, __ATOMIC_ACQUIRE))
        return false;
    return dlg_stop_signal() != 0;
}

/* What separates the cell's context from a storage message. */
static const char *sep(const dlg_services *s) { return s->context[0] ? " " : ""; }

/* The spec of storage `name`, or NULL (said) with *code -DLG_ENOMEM when
 * out of memory, else -DLG_EINVAL. */
static const dlg_instance_spec *find_spec(dlg_services *s, const char *name, int *code)
{
    const dlg_instance_spec *spec = dlg_plan_storage(s->plan, name);
    for (size_t i = 0; !spec && i < s->nextra; i++)
        if (strcmp(s->extra_specs[i].name, name) == 0)
            spec = &s->extra_specs[i];
    if (spec)
        return spec;
    dlg_instance_spec tmp;
    char err[2048];
    if (dlg_plan_instance(s->plan, DLG_KIND_STORAGE, name, &tmp, err, sizeof err) != 0) {
        *code = strcmp(err, "out of memory") == 0 ? -DLG_ENOMEM : -DLG_EINVAL;
        dlg_services_fail(s, -*code, "%s%sstorage '%s': %s", s->context, sep(s), name, err);
        return NULL;
    }
    dlg_instance_spec *arr = realloc(s->extra_specs, (s->nextra + 1) * sizeof *arr);
    if (!arr) {
        free(tmp.vals);
        *code = -DLG_ENOMEM;
        dlg_services_fail(s, DLG_ENOMEM, "%s%sstorage '%s': out of memory", s->context, sep(s), name);
        return NULL;
    }
    tmp.name = tmp.desc->name;
    arr[s->nextra] = tmp;
    s->extra_specs = arr;
    return &s->extra_specs[s->nextra++];
}

/* Keeps what this thread said since mark (create()'s failure) as why
 * storage l failed. */
static void keep_why(dlg_services *s, uint64_t mark, dlg_storage_live *l)
{
    dlg_error why;
    if (!l->host || !dlg_services_said_here(s, mark, &why) || !(l->host->failed = malloc(sizeof why)))
        return;
    *l->host->failed = why;
}

/* Creates (once) and returns the live instance of storage `name`; NULL
 * with *code -DLG_ENOMEM when out of memory, else -DLG_EINVAL. */
static dlg_storage_live *live_storage(dlg_services *s, const char *name, int *code)
{
    *code = -DLG_EINVAL;
    for (size_t i = 0; i < s->nstorages; i++) {
        dlg_storage_live *l = &s->storages[i];
        if (strcmp(l->spec->name, name) != 0)
            continue;
        if (l->creating) {
            dlg_services_fail(s, DLG_EINVAL, "%s%sstorage '%s' wraps itself (check its 'inner')", s->context,
                              sep(s), name);
            return NULL;
        }
        if (!l->inst && l->host && l->host->failed) { /* each caller that needs it hears why */
            dlg_services_raise(s, l->host->failed);
            *code = l->host->failed->code == DLG_ENOMEM ? -DLG_ENOMEM : -DLG_EINVAL;
        }
        return l->inst ? l : NULL;
    }
    const dlg_instance_spec *spec = find_spec(s, name, code);
    if (!spec)
        return NULL;
    dlg_storage_live *arr = realloc(s->storages, (s->nstorages + 1) * sizeof *arr);
    if (!arr) {
        *code = -DLG_ENOMEM;
        dlg_services_fail(s, DLG_ENOMEM, "%s%s[storage %s] %s: out of memory", s->context, sep(s), spec->name,
                          spec->desc->name);
        return NULL;
    }
    s->storages = arr;
    size_t idx = s->nstorages++;
    dlg_storage_live *l = &s->storages[idx];
    memset(l, 0, sizeof *l);
    l->spec = spec;
    l->host = dlg_host_new(s, "%s%s[storage %s] %s", s->context, sep(s), spec->name, spec->desc->name);
    l->creating = true;
    const dlg_storage_ops *ops = spec->desc->ops;
    void *inst = NULL;
    uint64_t mark = dlg_services_mark(s);
    int rc = l->host ? ops->create(&l->host->pub, spec->vals, &inst) : -DLG_ENOMEM;
    /* create() may have added storages (a shim's inner): re-find our slot */
    l = &s->storages[idx];
    l->creating = false;
    if (rc < 0) {
        *code = rc == -DLG_ENOMEM ? -DLG_ENOMEM : -DLG_EINVAL;
        char who[sizeof s->context + 320], line[sizeof who + 80];
        snprintf(who, sizeof who, "%s%s[storage %s] %s", s->context, sep(s), spec->name, spec->desc->name);
        if (!l->host) {
            *code = -DLG_ENOMEM;
            dlg_services_fail(s, DLG_ENOMEM, "%s: out of memory", who);
        } else if (!dlg_services_said_here(s, mark, NULL)) { /* as the runner says a silent workload's */
            dlg_said_nothing(line, sizeof line, who, "create", rc);
            dlg_services_fail(s, -rc, "%s", line);
        }
        keep_why(s, mark, l);
        return NULL;
    }
    l->inst = inst;
    /* keep creation order = destruction order reversed: move us last */
    if (idx != s->nstorages - 1) {
        dlg_storage_live me = *l;
        memmove(&s->storages[idx], &s->storages[idx + 1], (s->nstorages - idx - 1) * sizeof *l);
        s->storages[s->nstorages - 1] = me;
        l = &s->storages[s->nstorages - 1];
    }
    return l;
}

/* live_storage() under the storage lock; the entry's fields are stable
 * once created (the array may move, so copy them out while locked). */
static int live_storage_locked(dlg_services *s, const char *name, const dlg_storage_ops **ops, void **inst,
                               dlg_host_impl **host)
{
    pthread_mutex_lock(&s->storage_lock);
    int code;
    dlg_storage_live *l = live_storage(s, name, &code);
    if (l) {
        *ops = l->spec->desc->ops;
        *inst = l->inst;
        *host = l->host;
    }
    pthread_mutex_unlock(&s->storage_lock);
    return l ? 0 : code < 0 ? code : -DLG_EINVAL;
}

/* The backend of storage `name` if it was ever made or tried (its failure
 * then has the host's line), else NULL; under the storage lock. */
static const dlg_storage_ops *tried_storage(dlg_services *s, const char *name)
{
    const dlg_storage_ops *ops = NULL;
    pthread_mutex_lock(&s->storage_lock);
    for (size_t i = 0; i < s->nstorages && !ops; i++)
        if (strcmp(s->storages[i].spec->name, name) == 0)
            ops = s->storages[i].spec->desc->ops;
    pthread_mutex_unlock(&s->storage_lock);
    return ops;
}

static int h_storage_lookup(const dlg_host *h, const char *name, const dlg_storage_ops **ops, void **inst)
{
    dlg_host_impl *sh;
    int rc = live_storage_locked(impl(h)->svc, name, ops, inst, &sh);
    if (rc < 0) /* a known storage that failed: *ops tells the caller our line says why */
        *ops = tried_storage(impl(h)->svc, name);
    return rc;
}

/* A file opened through the host: its path and the host of the storage
 * instance that opened it (for the host's own messages about it: a failure
 * of the backend is said at "[storage NAME]", not at the workload that
 * called) before the backend's dlg_file and state. */
typedef struct host_file {
    char *path;
    const dlg_host *storage;
    int flags; /* DLG_OPEN_* */
    _Alignas(max_align_t) dlg_file f;
} host_file;

static host_file *host_file_of(dlg_file *f) { return (host_file *)((char *)f - offsetof(host_file, f)); }

/* The host whose context names f's storage instance. */
static const dlg_host *storage_of(dlg_file *f) { return host_file_of(f)->storage; }

static int open_file(const dlg_host *h, const char *storage, const char *path, int flags, dlg_file **out)
{
    dlg_services *s = impl(h)->svc;
    const dlg_storage_ops *ops;
    void *inst;
    dlg_host_impl *sh;
    int code = live_storage_locked(s, storage ? storage : s->default_storage, &ops, &inst, &sh);
    if (code != 0)
        return code;
    host_file *hf = calloc(1, offsetof(host_file, f) + ops->file_size);
    if (hf && !(hf->path = strdup(path))) {
        free(hf);
        hf = NULL;
    }
    if (!hf)
        return h->error(h, DLG_ENOMEM, "%s: out of memory opening file", path);
    hf->flags = flags;
    hf->storage = &sh->pub;
    dlg_file *f = &hf->f;
    f->ops = ops;
    f->inst = inst;
    f->align = 1;
    uint64_t mark = dlg_services_mark(s);
    int rc = ops->open(inst, &sh->pub, path, flags, f);
    if (rc < 0) {
        free(hf->path);
        free(hf);
        char cn[48];
        if (!dlg_services_said_here(s, mark, NULL))
            return sh->pub.error(&sh->pub, -rc, "%s: open failed (%s)", path, dlg_code_name(rc, cn, sizeof cn));
        return rc;
    }
    if (!(flags & DLG_OPEN_WRITE))
        dlg_file_set_add_path(&s->files, path);
    *out = f;
    return 0;
}

/* What the backend said during a failed call made since mark (on this
 * thread): 0 nothing, 1 a line naming the file, which stands; 2 a line
 * that does not, whose reason *e holds. */
static int backend_said(const dlg_host *h, uint64_t mark, const char *path, dlg_error *e)
{
    if (!dlg_services_said_here(impl(h)->svc, mark, e))
        return 0;
    return strstr(e->text + e->head, path) ? 1 : 2;
}

/* The DLG_E* code of a backend's -code result. */
static int code_of(int64_t rc) { return rc >= -DLG_EINTERNAL ? (int)-rc : DLG_EIO; }

/* The backend's line e, which does not name the file, said again at its
 * context with what the host knows in front of its reason: "CONTEXT:
 * PATH: WHAT failed: REASON".  Returns -rc's code as io_failed. */
static int with_reason(const dlg_host *h, const dlg_error *e, const char *what, int64_t rc)
{
    const char *reason = e->text + e->head;
    if (e->head && reason[0] == ':' && reason[1] == ' ')
        reason += 2;
    dlg_error ne;
    memset(&ne, 0, sizeof ne);
    int n = snprintf(ne.text, sizeof ne.text, "%.*s%s%s failed: %s", (int)e->head, e->text, e->head ? ": " : "",
                     what, reason);
    if (n < 0)
        ne.text[0] = '\0';
    ne.head = e->head;
    ne.code = e->code > 0 ? e->code : DLG_EIO;
    dlg_services_raise(impl(h)->svc, &ne);
    return -code_of(rc);
}

/* A failed read or write of the backend (rc < 0): its own line naming the
 * file stands; one that does not gets the file and offset in front of its
 * reason; none gets ours, with the offset, at the storage's context. */
static int io_failed(const dlg_host *h, uint64_t mark, dlg_file *f, const char *what, size_t n, uint64_t off,
                     int64_t rc)
{
    const char *path = host_file_of(f)->path;
    dlg_error e;
    char op[PATH_MAX + 128];
    snprintf(op, sizeof op, "%s: %s of %zu bytes at offset %llu", path, what, n, (unsigned long long)off);
    switch (backend_said(h, mark, path, &e)) {
    case 1: return -code_of(rc); /* not (int)rc: -2^32 would be 0, success */
    case 2: return with_reason(h, &e, op, rc);
    }
    char cn[48];
    return storage_of(f)->error(storage_of(f), code_of(rc), "%s failed (%s)", op, dlg_code_name(rc, cn, sizeof cn));
}

/* A failed size() or close() of the backend, as io_failed. */
static int op_failed(const dlg_host *h, uint64_t mark, dlg_file *f, const char *what, int rc)
{
    const char *path = host_file_of(f)->path;
    dlg_error e;
    char op[PATH_MAX + 64];
    snprintf(op, sizeof op, "%s: %s", path, what);
    switch (backend_said(h, mark, path, &e)) {
    case 1: return -code_of(rc);
    case 2: return with_reason(h, &e, op, rc);
    }
    char cn[48];
    return storage_of(f)->error(storage_of(f), code_of(rc), "%s failed (%s)", op, dlg_code_name(rc, cn, sizeof cn));
}

static bool h_error_said(const dlg_host *h, char *buf, size_t len)
{
    dlg_error e;
    if (!len || !dlg_services_said_here(impl(h)->svc, 0, &e))
        return false;
    const char *msg = e.text + e.head;
    if (e.head && msg[0] == ':' && msg[1] == ' ') /* "CONTEXT: MSG" */
        msg += 2;
    snprintf(buf, len, "%s", msg);
    return true;
}

static void h_disk_charged(const dlg_host *h, uint64_t bytes, double ios)
{
    dlg_services *s = impl(h)->svc;
    __atomic_store_n(&s->disk_counted, true, __ATOMIC_RELAXED);
    if (bytes)
        __atomic_add_fetch(&s->disk_bytes, bytes, __ATOMIC_RELAXED);
    if (ios > 0)
        __atomic_add_fetch(&s->disk_ios_fx, (uint64_t)(ios * DLG_DISK_IOS_ONE + 0.5), __ATOMIC_RELAXED);
}

static void h_file_kept(const dlg_host *h, const char *path)
{
    if (path && *path)
        dlg_file_set_keep(&impl(h)->svc->files, path);
}

static int h_file_open(const dlg_host *h, const char *storage, const char *path, dlg_file **out)
{
    return open_file(h, storage, path, DLG_OPEN_READ, out);
}

int dlg_host_file_create(const dlg_host *h, const char *storage, const char *path, dlg_file **out)
{
    return open_file(h, storage, path, DLG_OPEN_WRITE, out);
}

int dlg_host_file_write(const dlg_host *h, dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    const char *path = host_file_of(f)->path;
    if (f->ops->version < 1 || !f->ops->write)
        return h->error(h, DLG_ENOTSUP, "%s: this storage backend cannot write", path);
    uint64_t mark = dlg_services_mark(impl(h)->svc);
    int rc = f->ops->write(f, buf, n, off);
    if (rc < 0)
        return io_failed(h, mark, f, "write", n, off, rc);
    __atomic_add_fetch(&impl(h)->svc->bytes_written, (uint64_t)n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&impl(h)->svc->write_ios, 1, __ATOMIC_RELAXED);
    return 0;
}

/* Does a read that ended at off stop short of the end of the file?  Asked
 * only after a short read, so a file's end costs one size() call; a size
 * that cannot be had counts as the end (the read stands as it came). */
static bool before_end(dlg_file *f, uint64_t off)
{
    uint64_t size = 0;
    return f->ops->size(f, &size) == 0 && off < size;
}

/* The backend's read, held to the storage contract: never more bytes than
 * asked (more would have written past buf), short only at the end of the
 * file.  A short read before the end is continued, as read(2) callers do
 * (a network file system may return one), except on a DLG_CAP_DIRECT file
 * at an offset its alignment forbids: there it is an error. */
static int64_t h_file_read(const dlg_host *h, dlg_file *f, void *buf, size_t n, uint64_t off)
{
    const char *path = host_file_of(f)->path;
    uint64_t mark = dlg_services_mark(impl(h)->svc);
    size_t got = 0;
    while (got < n) {
        int64_t r = f->ops->read(f, (char *)buf + got, n - got, off + got);
        if (r < 0) /* else the workload's "failed without saying why" blames itself */
            return io_failed(h, mark, f, "read", n - got, off + got, r);
        if ((uint64_t)r > n - got)
            return storage_of(f)->error(storage_of(f), DLG_EIO, "%s: the storage backend returned %lld bytes for a "
                                        "read of %zu at offset %llu (more than asked: a broken backend)",
                                        path, (long long)r, n - got, (unsigned long long)(off + got));
        if (r == 0)
            break;
        __atomic_add_fetch(&impl(h)->svc->bytes_read, (uint64_t)r, __ATOMIC_RELAXED);
        __atomic_add_fetch(&impl(h)->svc->ios, 1, __ATOMIC_RELAXED);
        got += (size_t)r;
        if (got == n || !before_end(f, off + got))
            break;
        uint32_t align = (f->ops->caps & DLG_CAP_DIRECT) && f->align ? f->align : 1;
        if ((off + got) % align != 0)
            return storage_of(f)->error(storage_of(f), DLG_EIO, "%s: the storage backend returned %zu of %zu bytes "
                                        "at offset %llu, short of the end of the file (a direct read cannot go "
                                        "on from there)", path, got, n, (unsigned long long)off);
    }
    return (int64_t)got;
}

static int h_file_size(const dlg_host *h, dlg_file *f, uint64_t *size)
{
    uint64_t mark = dlg_services_mark(impl(h)->svc);
    int rc = f->ops->size(f, size);
    return rc < 0 ? op_failed(h, mark, f, "size", rc) : rc;
}

/* Closes f and frees the host's part: 0, or the backend's -code with the
 * error naming the file (a deferred write error: NFS's EIO, ENOSPC). */
static int close_file(const dlg_host *h, dlg_file *f)
{
    host_file *hf = host_file_of(f);
    uint64_t mark = dlg_services_mark(impl(h)->svc);
    int rc = f->ops->close(f);
    if (rc < 0)
        rc = op_failed(h, mark, f, "close", rc);
    free(hf->path);
    free(hf);
    return rc;
}

int dlg_host_file_close_written(const dlg_host *h, dlg_file *f) { return f ? close_file(h, f) : 0; }

/* The ABI's close returns nothing: a failure is a warning, and what it
 * raised is kept out of the error slot (a capture), so that a later
 * failure is not blamed on it and other threads' errors stand. */
static void h_file_close(const dlg_host *h, dlg_file *f)
{
    if (!f)
        return;
    dlg_services *s = impl(h)->svc;
    bool written = host_file_of(f)->flags & DLG_OPEN_WRITE;
    dlg_error_capture c;
    dlg_services_capture_begin(s, &c);
    int rc = close_file(h, f);
    dlg_services_capture_end(s, &c);
    if (rc < 0)
        warn_error(impl(h), &c.said, written ? " (what was written there may be lost)" : "");
}

static uint32_t h_file_caps(const dlg_host *h, dlg_file *f, uint32_t *align)
{
    (void)h;
    if (align)
        *align = (f->ops->caps & DLG_CAP_DIRECT) && f->align ? f->align : 1;
    return f->ops->caps;
}

static uint32_t h_file_depth(const dlg_host *h, dlg_file *f)
{
    (void)h;
    return dlg_storage_async_v2(f->ops) && f->ops->depth ? f->ops->depth(f) : 0;
}

static int h_file_register(const dlg_host *h, dlg_file *f, void *buf, size_t len)
{
    (void)h;
    return dlg_storage_async_v2(f->ops) && f->ops->register_buffer ? f->ops->register_buffer(f, buf, len)
                                                                    : -DLG_ENOTSUP;
}

static int h_file_fetch(const dlg_host *h, dlg_file *f, uint64_t off, size_t n, const void **ptr)
{
    uint64_t mark = dlg_services_mark(impl(h)->svc);
    if (f->ops->caps & DLG_CAP_ZERO_COPY) {
        *ptr = NULL;
        int rc = f->ops->fetch(f, off, n, ptr);
        if (rc < 0) /* else the workload's "failed without saying why" blames itself */
            return io_failed(h, mark, f, "fetch", n, off, rc);
        /* else the workload takes a count for success, or reads NULL */
        if (rc > 0)
            return storage_of(f)->error(storage_of(f), DLG_EIO, "%s: fetch of %zu bytes at offset %llu returned %d, "
                                        "neither 0 nor -code (a broken backend)", host_file_of(f)->path, n,
                                        (unsigned long long)off, rc);
        if (n > 0 && !*ptr)
            return storage_of(f)->error(storage_of(f), DLG_EIO, "%s: fetch of %zu bytes at offset %llu lent no "
                                        "bytes (a broken backend)", host_file_of(f)->path, n,
                                        (unsigned long long)off);
        if (n > 0) {
            __atomic_add_fetch(&impl(h)->svc->bytes_read, n, __ATOMIC_RELAXED);
            __atomic_add_fetch(&impl(h)->svc->ios, 1, __ATOMIC_RELAXED);
        }
        return rc;
    }
    /* No zero-copy: lend a private copy (the fallback, not a fast path). */
    const char *path = host_file_of(f)->path;
    void *buf = malloc(n ? n : 1);
    if (!buf)
        return h->error(h, DLG_ENOMEM, "%s: out of memory fetching %zu bytes at offset %llu", path, n,
                        (unsigned long long)off);
    int64_t r = h_file_read(h, f, buf, n, off);
    if (r >= 0 && (size_t)r == n) {
        *ptr = buf;
        return 0;
    }
    free(buf);
    if (r >= 0)
        return h->error(h, DLG_EIO, "%s: fetch of %zu bytes at offset %llu passes the end of the file "
                        "(only %lld bytes there)", path, n, (unsigned long long)off, (long long)r);
    return io_failed(h, mark, f, "fetch", n, off, r);
}

static void h_file_unfetch(const dlg_host *h, dlg_file *f, const void *ptr, size_t n)
{
    (void)h;
    if (f->ops->caps & DLG_CAP_ZERO_COPY)
        f->ops->unfetch(f, ptr, n);
    else
        free((void *)ptr);
}

static int h_file_submit(const dlg_host *h, dlg_file *f, const dlg_io *ios, size_t n)
{
    if (!(f->ops->caps & DLG_CAP_ASYNC))
        return h->error(h, DLG_ENOTSUP, "this storage backend has no asynchronous reads (use uring)");
    return f->ops->submit(f, ios, n);
}

static int h_file_reap(const dlg_host *h, dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    if (!(f->ops->caps & DLG_CAP_ASYNC))
        return h->error(h, DLG_ENOTSUP, "this storage backend has no asynchronous reads (use uring)");
    int n = f->ops->reap(f, done, max, min_done);
    if (n > 0 && (size_t)n > max) /* it wrote past done[]: what lies there is not ours to read */
        return storage_of(f)->error(storage_of(f), DLG_EIO, "%s: the storage backend reaped %d completions into "
                                    "room for %zu (a broken backend)", host_file_of(f)->path, n, max);
    /* as h_file_read: reads at EOF (0) and failed ones (< 0) are no I/O */
    uint64_t bytes = 0, ios = 0;
    for (int i = 0; i < n; i++)
        if (done[i].result < 0)
            done[i].result = -code_of(done[i].result); /* a workload's (int) cut of -2^32 is 0 */
        else if (done[i].result > 0) {
            bytes += (uint64_t)done[i].result;
            ios++;
        }
    if (ios) {
        __atomic_add_fetch(&impl(h)->svc->bytes_read, bytes, __ATOMIC_RELAXED);
        __atomic_add_fetch(&impl(h)->svc->ios, ios, __ATOMIC_RELAXED);
    }
    return n;
}

const dlg_entry *dlg_msg_entry(const dlg_section *sec, const char *msg)
{
    size_t n = dlg_msg_key_len(msg);
    for (size_t i = 0; n && sec && i < sec->n; i++) {
        const dlg_entry *e = &sec->entries[i];
        if (strlen(e->key) == n && strncmp(e->key, msg, n) == 0)
            return e;
    }
    return NULL;
}

/* The storage whose host said err (a shim's inner, say), else NULL; *msg:
 * err past that host's context. */
static const dlg_storage_live *storage_that_said(const dlg_services *s, const char *err, const char **msg)
{
    for (size_t i = 0; i < s->nstorages; i++) {
        const dlg_host_impl *h = s->storages[i].host;
        size_t n = h ? strlen(h->context) : 0;
        if (n && strncmp(err, h->context, n) == 0 && strncmp(err + n, ": ", 2) == 0) {
            *msg = err + n + 2;
            return &s->storages[i];
        }
    }
    return NULL;
}

/* Puts "file:line: " before the error of storage top's creation: the line
 * of the key the message starts with ("inner = x: ..."), as workloads' and
 * sinks' messages get, else of the section of the storage that said it
 * (top's for a bare type's). */
static void place_storage_error(dlg_services *s, uint64_t mark, const dlg_instance_spec *top)
{
    char err[sizeof s->error.text], where[600];
    int code = dlg_services_said(s, mark, mark, err, sizeof err);
    const char *msg = NULL;
    const dlg_storage_live *l = storage_that_said(s, err, &msg);
    const dlg_section *sec = l && l->spec->sec ? l->spec->sec : top->sec;
    dlg_plan_where(l && l->spec->sec ? dlg_msg_entry(sec, msg) : NULL, sec, where, sizeof where);
    dlg_error e = {.head = 0, .code = code ? code : DLG_EINVAL};
    snprintf(e.text, sizeof e.text, "%s%s", where, err[0] ? err : "cannot create this storage");
    dlg_services_raise(s, &e);
}

int dlg_services_storage_check(dlg_services *s, const char *name)
{
    const dlg_storage_ops *ops;
    void *inst;
    dlg_host_impl *h;
    uint64_t mark = dlg_services_mark(s);
    int rc = live_storage_locked(s, name, &ops, &inst, &h);
    const dlg_instance_spec *top = rc < 0 ? dlg_plan_storage(s->plan, name) : NULL;
    if (top)
        place_storage_error(s, mark, top);
    return rc;
}

void dlg_services_init(dlg_services *s, dlg_plan *plan, const char *default_storage, int verbosity)
{
    memset(s, 0, sizeof *s);
    s->plan = plan;
    s->default_storage = default_storage ? default_storage : "posix";
    s->verbosity = verbosity;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->storage_lock, &attr);
    pthread_mutexattr_destroy(&attr);
    dlg_file_set_init(&s->files);
}

void dlg_services_set_context(dlg_services *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->context, sizeof s->context, fmt, ap);
    va_end(ap);
}

void dlg_services_fini(dlg_services *s)
{
    for (size_t i = s->nstorages; i-- > 0;) {
        dlg_storage_live *l = &s->storages[i];
        if (l->inst)
            ((const dlg_storage_ops *)l->spec->desc->ops)->destroy(l->inst);
        dlg_host_free(l->host);
    }
    free(s->storages);
    for (size_t i = 0; i < s->nextra; i++)
        free(s->extra_specs[i].vals);
    free(s->extra_specs);
    dlg_services_errors_fini(s);
    dlg_file_set_fini(&s->files);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->storage_lock);
    s->storages = NULL;
    s->nstorages = 0;
}

dlg_host_impl *dlg_host_new(dlg_services *s, const char *context_fmt, ...)
{
    dlg_host_impl *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->svc = s;
    va_list ap;
    va_start(ap, context_fmt);
    vsnprintf(h->context, sizeof h->context, context_fmt, ap);
    va_end(ap);
    dlg_host *p = &h->pub;
    p->struct_size = sizeof *p;
    p->abi_minor = DLG_ABI_MINOR;
    p->ctx = h;
    p->log = h_log;
    p->error = h_error;
    p->now_ns = h_now;
    p->stopping = h_stopping;
    p->file_open = h_file_open;
    p->file_read = h_file_read;
    p->file_size = h_file_size;
    p->file_close = h_file_close;
    p->file_caps = h_file_caps;
    p->file_fetch = h_file_fetch;
    p->file_unfetch = h_file_unfetch;
    p->file_submit = h_file_submit;
    p->file_reap = h_file_reap;
    p->storage_lookup = h_storage_lookup;
    p->file_depth = h_file_depth;
    p->file_register = h_file_register;
    p->file_create = dlg_host_file_create;
    p->file_write = dlg_host_file_write;
    p->file_close_written = dlg_host_file_close_written;
    dlg_host_comm_fill(p);
    p->error_said = h_error_said;
    p->disk_charged = h_disk_charged;
    p->file_kept = h_file_kept;
    return h;
}

void dlg_host_free(dlg_host_impl *h)
{
    if (h)
        free(h->failed);
    free(h);
}
