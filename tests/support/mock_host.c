#define _GNU_SOURCE
#include "mock_host.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static mock_host *from(const dlg_host *h) { return (mock_host *)h; }

static void m_log(const dlg_host *h, dlg_log_level lvl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(from(h)->last_log, sizeof from(h)->last_log, fmt, ap);
    va_end(ap);
    if (lvl == DLG_LOG_WARN) {
        from(h)->warnings++;
        snprintf(from(h)->last_warning, sizeof from(h)->last_warning, "%s", from(h)->last_log);
    }
}

static int m_error(const dlg_host *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(from(h)->last_error, sizeof from(h)->last_error, fmt, ap);
    va_end(ap);
    if (pthread_equal(pthread_self(), from(h)->owner)) {
        va_start(ap, fmt);
        vsnprintf(from(h)->own_error, sizeof from(h)->own_error, fmt, ap);
        va_end(ap);
    }
    from(h)->last_code = code;
    from(h)->errors++;
    return -code;
}

/* Sums what an emulated disk says it charged (threads share a disk). */
static void m_disk_charged(const dlg_host *h, uint64_t bytes, double ios)
{
    mock_host *m = h->ctx;
    __atomic_add_fetch(&m->disk_bytes, bytes, __ATOMIC_RELAXED);
    __atomic_add_fetch(&m->disk_calls, 1, __ATOMIC_RELAXED);
    double old;
    __atomic_load(&m->disk_ios, &old, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange(&m->disk_ios, &old, &(double){old + ios}, false, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED))
        ;
}

/* The last error() of any thread: the mock keeps one (loader tests read
 * it after the failure). */
static bool m_error_said(const dlg_host *h, char *buf, size_t len)
{
    if (!from(h)->errors || !len)
        return false;
    snprintf(buf, len, "%s", from(h)->last_error);
    return true;
}

static uint64_t m_now(const dlg_host *h)
{
    (void)h;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool m_stopping(const dlg_host *h) { return from(h)->stop; }

struct dlg_file_plain { dlg_file base; int fd; };

static mock_storage *find_storage(mock_host *m, const char *name)
{
    for (int i = 0; i < m->nstorages; i++)
        if (!name || strcmp(m->storages[i].name, name) == 0)
            return &m->storages[i];
    return NULL;
}

static int open_plain(const dlg_host *h, const char *path, int flags, dlg_file **out)
{
    int fd = flags == DLG_OPEN_WRITE ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                                     : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return h->error(h, DLG_EIO, "%s: %s", path, strerror(errno));
    struct dlg_file_plain *f = calloc(1, sizeof *f);
    if (!f) {
        close(fd);
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path); /* as the real host says it */
    }
    f->fd = fd;
    *out = &f->base;
    return 0;
}

/* Files of a registered backend have f->ops set; plain files do not. */
static int open_any(const dlg_host *h, const char *storage, const char *path, int flags, dlg_file **out)
{
    mock_host *m = from(h);
    if (m->nstorages == 0)
        return open_plain(h, path, flags, out);
    mock_storage *s = find_storage(m, storage);
    if (!s)
        return h->error(h, DLG_EINVAL, "no [storage %s] registered in the mock host", storage);
    dlg_file *f = calloc(1, s->ops->file_size);
    if (!f)
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    f->ops = s->ops;
    f->inst = s->inst;
    f->align = 1;
    int rc = s->ops->open(s->inst, h, path, flags, f);
    if (rc < 0) {
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

static int m_open(const dlg_host *h, const char *storage, const char *path, dlg_file **out)
{
    return open_any(h, storage, path, DLG_OPEN_READ, out);
}

static int m_create(const dlg_host *h, const char *storage, const char *path, dlg_file **out)
{
    return open_any(h, storage, path, DLG_OPEN_WRITE, out);
}

/* As the real host's: the backend's write, counted; plain files pwrite. */
static int m_write(const dlg_host *h, dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    mock_host *m = from(h);
    int rc = 0;
    if (f->ops)
        rc = f->ops->write ? f->ops->write(f, buf, n, off)
                           : h->error(h, DLG_ENOTSUP, "this storage backend cannot write");
    for (size_t done = 0; !f->ops && done < n;) {
        ssize_t r = pwrite(((struct dlg_file_plain *)f)->fd, (const char *)buf + done, n - done,
                           (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return h->error(h, DLG_EIO, "write of %zu bytes at offset %llu: %s", n, (unsigned long long)off,
                            strerror(errno));
        done += (size_t)r;
    }
    if (rc == 0) {
        m->bytes_written += n;
        m->write_ios++;
    }
    return rc;
}

static int64_t m_read(const dlg_host *h, dlg_file *f, void *buf, size_t n, uint64_t off)
{
    if (f->ops)
        return f->ops->read(f, buf, n, off);
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(((struct dlg_file_plain *)f)->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return h->error(h, DLG_EIO, "read: %s", strerror(errno));
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (int64_t)got;
}

static int m_size(const dlg_host *h, dlg_file *f, uint64_t *size)
{
    if (f->ops)
        return f->ops->size(f, size);
    struct stat st;
    if (fstat(((struct dlg_file_plain *)f)->fd, &st) != 0)
        return h->error(h, DLG_EIO, "stat: %s", strerror(errno));
    *size = (uint64_t)st.st_size;
    return 0;
}

static void m_close(const dlg_host *h, dlg_file *f)
{
    (void)h;
    if (!f)
        return;
    if (f->ops)
        f->ops->close(f);
    else
        close(((struct dlg_file_plain *)f)->fd);
    free(f);
}

/* As the real host's: the backend's close result, said. */
static int m_close_written(const dlg_host *h, dlg_file *f)
{
    int rc = f && f->ops ? f->ops->close(f) : 0;
    if (f && !f->ops && close(((struct dlg_file_plain *)f)->fd) != 0)
        rc = h->error(h, DLG_EIO, "close: %s", strerror(errno));
    else if (rc < 0)
        rc = h->error(h, -rc, "close failed (code %d)", rc);
    free(f);
    return rc;
}

static uint32_t m_caps(const dlg_host *h, dlg_file *f, uint32_t *align)
{
    (void)h;
    uint32_t caps = f->ops ? f->ops->caps : 0;
    if (align)
        *align = (caps & DLG_CAP_DIRECT) && f->align ? f->align : 1;
    return caps;
}

/* Without zero copy, lend a private copy, as the real host does. */
static int m_fetch(const dlg_host *h, dlg_file *f, uint64_t off, size_t n, const void **ptr)
{
    if (f->ops && (f->ops->caps & DLG_CAP_ZERO_COPY))
        return f->ops->fetch(f, off, n, ptr);
    void *buf = malloc(n ? n : 1);
    if (!buf)
        return h->error(h, DLG_ENOMEM, "out of memory fetching %zu bytes", n);
    int64_t r = m_read(h, f, buf, n, off);
    if (r < 0 || (size_t)r != n) {
        free(buf);
        return r < 0 ? (int)r : h->error(h, DLG_EIO, "fetch of %zu bytes at offset %llu passes end of file",
                                         n, (unsigned long long)off);
    }
    *ptr = buf;
    return 0;
}

static void m_unfetch(const dlg_host *h, dlg_file *f, const void *ptr, size_t n)
{
    (void)h;
    if (f->ops && (f->ops->caps & DLG_CAP_ZERO_COPY))
        f->ops->unfetch(f, ptr, n);
    else
        free((void *)ptr);
}

static int m_submit(const dlg_host *h, dlg_file *f, const dlg_io *ios, size_t n)
{
    if (!f->ops || !(f->ops->caps & DLG_CAP_ASYNC))
        return h->error(h, DLG_ENOTSUP, "this storage backend has no asynchronous reads");
    return f->ops->submit(f, ios, n);
}

static int m_reap(const dlg_host *h, dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    if (!f->ops || !(f->ops->caps & DLG_CAP_ASYNC))
        return h->error(h, DLG_ENOTSUP, "this storage backend has no asynchronous reads");
    return f->ops->reap(f, done, max, min_done);
}

/* As the real host's (core/runtime/host.c). */
static uint32_t m_depth(const dlg_host *h, dlg_file *f)
{
    (void)h;
    return dlg_storage_async_v2(f->ops) && f->ops->depth ? f->ops->depth(f) : 0;
}

static int m_register(const dlg_host *h, dlg_file *f, void *buf, size_t len)
{
    (void)h;
    return dlg_storage_async_v2(f->ops) && f->ops->register_buffer ? f->ops->register_buffer(f, buf, len)
                                                                    : -DLG_ENOTSUP;
}

int mock_add_storage(mock_host *m, const char *name, const dlg_storage_ops *ops, void *inst)
{
    if (m->nstorages >= MOCK_MAX_STORAGES || strlen(name) >= sizeof m->storages[0].name)
        return -1;
    mock_storage *s = &m->storages[m->nstorages++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->ops = ops;
    s->inst = inst;
    return 0;
}

/* A registered name, else a backend type loaded from <name>.so with its
 * default options (owned by the mock host until mock_host_fini). */
static int m_storage_lookup(const dlg_host *h, const char *name, const dlg_storage_ops **ops, void **inst)
{
    mock_host *m = from(h);
    mock_storage *s = name ? find_storage(m, name) : NULL;
    if (!s && name && m->nstorages < MOCK_MAX_STORAGES && strlen(name) < sizeof s->name) {
        char so[96];
        snprintf(so, sizeof so, "%s.so", name);
        char path[4096];
        const char *dirs = getenv("DLGAUGE_PLUGIN_PATH");
        snprintf(path, sizeof path, "%s/%s", dirs ? dirs : ".", so);
        const dlg_plugin_desc *d = access(path, R_OK) == 0 ? mock_load_plugin(so, DLG_KIND_STORAGE, name) : NULL;
        if (d) {
            size_t nopt = 0;
            while (d->options && d->options[nopt].name)
                nopt++;
            dlg_value *vals = calloc(nopt + 1, sizeof *vals);
            void *in = NULL;
            const dlg_storage_ops *o = d->ops;
            if (!vals || (d->options && mock_options(d->options, vals, NULL) != 0) || o->create(h, vals, &in) < 0) {
                free(vals);
                return -DLG_EINVAL;
            }
            mock_add_storage(m, name, o, in);
            s = &m->storages[m->nstorages - 1];
            s->vals = vals;
            s->owned = true;
        }
    }
    if (!s)
        return -DLG_EINVAL; /* like the real host: the caller names what it wanted */
    *ops = s->ops;
    *inst = s->inst;
    return 0;
}

void mock_host_fini(mock_host *m)
{
    for (int i = m->nstorages - 1; i >= 0; i--) {
        mock_storage *s = &m->storages[i];
        if (s->owned && s->ops->destroy)
            s->ops->destroy(s->inst);
        free(s->vals);
    }
    m->nstorages = 0;
}

void mock_host_init(mock_host *m)
{
    memset(m, 0, sizeof *m);
    m->owner = pthread_self();
    m->host.struct_size = sizeof(dlg_host);
    m->host.abi_minor = DLG_ABI_MINOR;
    m->host.ctx = m;
    m->host.log = m_log;
    m->host.error = m_error;
    m->host.now_ns = m_now;
    m->host.stopping = m_stopping;
    m->host.file_open = m_open;
    m->host.file_read = m_read;
    m->host.file_size = m_size;
    m->host.file_close = m_close;
    m->host.file_caps = m_caps;
    m->host.file_fetch = m_fetch;
    m->host.file_unfetch = m_unfetch;
    m->host.file_submit = m_submit;
    m->host.file_reap = m_reap;
    m->host.storage_lookup = m_storage_lookup;
    m->host.file_depth = m_depth;
    m->host.file_register = m_register;
    m->host.file_create = m_create;
    m->host.file_write = m_write;
    m->host.file_close_written = m_close_written;
    m->host.error_said = m_error_said;
    m->host.disk_charged = m_disk_charged;
}

const dlg_plugin_desc *mock_load_plugin(const char *so_name, dlg_kind kind, const char *name)
{
    const char *dirs = getenv("DLGAUGE_PLUGIN_PATH");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dirs ? dirs : ".", so_name);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "mock_load_plugin: %s\n", dlerror());
        return NULL;
    }
    dlg_plugin_entry_fn entry = (dlg_plugin_entry_fn)dlsym(dl, DLG_PLUGIN_ENTRY_SYMBOL);
    if (!entry) {
        fprintf(stderr, "mock_load_plugin: %s has no entry\n", path);
        return NULL;
    }
    const dlg_plugin_info *info = entry();
    for (const dlg_plugin_desc *const *d = info->items; *d; d++)
        if ((*d)->kind == kind && strcmp((*d)->name, name) == 0)
            return *d;
    fprintf(stderr, "mock_load_plugin: %s has no %s\n", path, name);
    return NULL;
}

static int parse_scaled(const char *s, dlg_opt_type t, dlg_value *v)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s)
        return -1;
    double mul = 1;
    if (t == DLG_OPT_SIZE) {
        if (*end == 'K' || *end == 'k') mul = 1024.0;
        else if (*end == 'M') mul = 1024.0 * 1024;
        else if (*end == 'G') mul = 1024.0 * 1024 * 1024;
    } else if (t == DLG_OPT_DURATION) {
        mul = 1e9;
        if (!strncmp(end, "ns", 2)) mul = 1;
        else if (!strncmp(end, "us", 2)) mul = 1e3;
        else if (!strncmp(end, "ms", 2)) mul = 1e6;
        else if (*end == 'm') mul = 60e9;
    }
    v->i = (int64_t)(x * mul);
    v->d = t == DLG_OPT_DURATION ? x * mul / 1e9 : x;
    return 0;
}

static int parse_one(const dlg_option *o, const char *text, dlg_value *v)
{
    v->text = text;
    v->set = true;
    switch (o->type) {
    case DLG_OPT_STRING: return 0;
    case DLG_OPT_DOUBLE: v->d = strtod(text, NULL); return 0;
    case DLG_OPT_INT: v->i = strtoll(text, NULL, 0); v->d = (double)v->i; return 0;
    case DLG_OPT_BOOL:
        v->i = !strcasecmp(text, "true") || !strcasecmp(text, "yes") || !strcmp(text, "1") || !strcasecmp(text, "on");
        return 0;
    case DLG_OPT_SIZE:
    case DLG_OPT_DURATION: return parse_scaled(text, o->type, v);
    case DLG_OPT_ENUM: {
        size_t len = strlen(text);
        int idx = 0;
        for (const char *c = o->choices; c && *c; idx++) {
            const char *bar = strchr(c, '|');
            size_t n = bar ? (size_t)(bar - c) : strlen(c);
            if (n == len && !strncmp(c, text, n)) {
                v->i = idx;
                return 0;
            }
            c = bar ? bar + 1 : c + n;
        }
        return -1;
    }
    }
    return -1;
}

int mock_options(const dlg_option *opts, dlg_value *vals, const char *const *overrides)
{
    size_t n = 0;
    for (; opts[n].name; n++) {
        memset(&vals[n], 0, sizeof vals[n]);
        if (opts[n].def && parse_one(&opts[n], opts[n].def, &vals[n]) != 0)
            return -1;
    }
    for (const char *const *kv = overrides; kv && *kv; kv++) {
        const char *eq = strchr(*kv, '=');
        if (!eq)
            return -1;
        size_t klen = (size_t)(eq - *kv);
        size_t i = 0;
        while (i < n && !(strlen(opts[i].name) == klen && !strncmp(opts[i].name, *kv, klen)))
            i++;
        if (i == n || parse_one(&opts[i], eq + 1, &vals[i]) != 0)
            return -1;
    }
    return 0;
}
