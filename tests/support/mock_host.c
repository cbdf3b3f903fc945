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
    if (lvl == DLG_LOG_WARN)
        from(h)->warnings++;
}

static int m_error(const dlg_host *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(from(h)->last_error, sizeof from(h)->last_error, fmt, ap);
    va_end(ap);
    from(h)->last_code = code;
    from(h)->errors++;
    return -code;
}

static uint64_t m_now(const dlg_host *h)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool m_stopping(const dlg_host *h) { return from(h)->stop; }

struct dlg_file_plain { dlg_file base; int fd; };

static int m_open(const dlg_host *h, const char *storage, const char *path, dlg_file **out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return h->error(h, DLG_EIO, "%s: %s", path, strerror(errno));
    struct dlg_file_plain *f = calloc(1, sizeof *f);
    if (!f) {
        close(fd);
        return -DLG_ENOMEM;
    }
    f->fd = fd;
    *out = &f->base;
    return 0;
}

static int64_t m_read(const dlg_host *h, dlg_file *f, void *buf, size_t n, uint64_t off)
{
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
    struct stat st;
    if (fstat(((struct dlg_file_plain *)f)->fd, &st) != 0)
        return h->error(h, DLG_EIO, "stat: %s", strerror(errno));
    *size = (uint64_t)st.st_size;
    return 0;
}

static void m_close(const dlg_host *h, dlg_file *f)
{
    if (!f)
        return;
    close(((struct dlg_file_plain *)f)->fd);
    free(f);
}

void mock_host_init(mock_host *m)
{
    memset(m, 0, sizeof *m);
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
