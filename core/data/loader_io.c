/* Reading through the host's storage services: aligned buffers for direct
 * I/O backends, a dlg_source over a host file, and the page-cache modes. */
#include "loader_src.h"

#include <dlgauge/iobuf.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_ALIGN 4096

int dlg_ld_buf_reserve(dlg_ld_buf *b, size_t n, dlg_data_err *err)
{
    if (n <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256 * 1024;
    while (cap < n)
        cap *= 2;
    void *p = dlg_iobuf_alloc(cap, BUF_ALIGN); /* huge pages from 64 KiB (iobuf.h) */
    if (!p)
        return dlg_data_fail(err, DLG_ENOMEM, "loader: out of memory for a %zu-byte buffer", cap);
    dlg_iobuf_free(b->p, b->cap);
    b->p = p;
    b->cap = cap;
    return 0;
}

void dlg_ld_buf_free(dlg_ld_buf *b)
{
    dlg_iobuf_free(b->p, b->cap);
    b->p = NULL;
    b->cap = 0;
}

/* A failed host read: the storage's line (host->error_said) says why (an
 * injected EIO, a backend that returned more than asked) and stands when
 * it names the file, as the host's do; else its reason follows ours. */
static int read_failed(const dlg_host *h, const char *name, size_t len, uint64_t off, int code,
                       dlg_data_err *err)
{
    char said[400];
    if (!DLG_HOST_HAS(h, error_said) || !h->error_said(h, said, sizeof said))
        return dlg_data_fail(err, code, "%s: read of %zu bytes at offset %llu failed", name, len,
                             (unsigned long long)off);
    if (strstr(said, name))
        return dlg_data_fail(err, code, "%s", said);
    return dlg_data_fail(err, code, "%s: read of %zu bytes at offset %llu failed: %s", name, len,
                         (unsigned long long)off, said);
}

int64_t dlg_ld_read(const dlg_host *h, dlg_file *f, const char *name, dlg_ld_buf *b, uint64_t off,
                    size_t n, const uint8_t **data, uint64_t *io, dlg_data_err *err)
{
    uint32_t align = 1;
    uint32_t caps = h->file_caps ? h->file_caps(h, f, &align) : 0;
    if (!(caps & DLG_CAP_DIRECT) || align < 1)
        align = 1;
    uint64_t a0 = off / align * align;
    uint64_t a1 = (off + n + align - 1) / align * align;
    size_t len = (size_t)(a1 - a0);
    int rc = dlg_ld_buf_reserve(b, len, err);
    if (rc < 0)
        return rc;
    int64_t got = h->file_read(h, f, b->p, len, a0);
    if (got < 0)
        return read_failed(h, name, len, a0, (int)-got, err);
    *io = (uint64_t)got;
    uint64_t skip = off - a0;
    int64_t avail = got > (int64_t)skip ? got - (int64_t)skip : 0;
    if (avail > (int64_t)n)
        avail = (int64_t)n;
    *data = b->p + skip;
    return avail;
}

/* The storage reports only a code: say why when the file system knows,
 * by opening the file itself (a missing file, no free descriptor). */
int dlg_ld_open_failed(const dlg_host *h, const char *path, const char *what, const char *missing, int rc,
                       dlg_data_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return dlg_data_fail(err, -rc, "%s: cannot open: %s%s", what, strerror(errno),
                             missing);
    int fd = open(path, O_RDONLY | O_CLOEXEC), e = fd < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    if (e == EMFILE || e == ENFILE) {
        struct rlimit rl;
        char lim[32] = "?";
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
            snprintf(lim, sizeof lim, "%llu", (unsigned long long)rl.rlim_cur);
        return dlg_data_fail(err, -rc, "%s: cannot open: %s (the open-file limit, ulimit -n, is %s: each "
                             "loader thread holds a dataset file open, the storage may hold more)", what,
                             strerror(e), lim);
    }
    if (e)
        return dlg_data_fail(err, -rc, "%s: cannot open: %s", what, strerror(e));
    char said[400];
    if (DLG_HOST_HAS(h, error_said) && h->error_said(h, said, sizeof said))
        return dlg_data_fail(err, -rc, "%s: cannot open through the job's storage: %s", what, said);
    return dlg_data_fail(err, -rc, "%s: cannot open through the job's storage", what);
}

static int64_t host_pread(void *ctx, void *buf, size_t n, uint64_t off)
{
    dlg_ld_hostfile *hf = ctx;
    const uint8_t *p;
    uint64_t io;
    int64_t got = dlg_ld_read(hf->h, hf->f, hf->name, &hf->buf, off, n, &p, &io, &hf->why);
    if (got > 0)
        memcpy(buf, p, (size_t)got);
    return got;
}

int dlg_ld_source_host(dlg_source *s, dlg_ld_hostfile *hf, const dlg_host *h, const char *path,
                       dlg_data_err *err)
{
    memset(hf, 0, sizeof *hf);
    hf->h = h;
    hf->name = path;
    int rc = h->file_open(h, NULL, path, &hf->f);
    if (rc < 0)
        return dlg_ld_open_failed(h, path, path, "", rc, err);
    uint64_t size = DLG_SIZE_UNKNOWN;
    rc = h->file_size(h, hf->f, &size);
    if (rc < 0) {
        dlg_ld_source_host_close(hf);
        return dlg_data_fail(err, -rc, "%s: cannot get its size", path);
    }
    s->pread = host_pread;
    s->ctx = hf;
    s->size = size;
    s->name = path;
    s->why = &hf->why;
    return 0;
}

void dlg_ld_source_host_close(dlg_ld_hostfile *hf)
{
    if (hf->f)
        hf->h->file_close(hf->h, hf->f);
    hf->f = NULL;
    dlg_ld_buf_free(&hf->buf);
}

/* Since Linux 5.0 mincore() tells the page cache of a file only to its
 * owner, root or a user who may write it: to others it says every page is
 * resident (CVE-2019-5489), which would read as a failed eviction. */
static bool mincore_tells(int fd)
{
    struct stat st;
    char self[64];
    uid_t me = geteuid();
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    return me == 0 || (fstat(fd, &st) == 0 && st.st_uid == me) || faccessat(AT_FDCWD, self, W_OK, AT_EACCESS) == 0;
}

int64_t dlg_cache_resident(int fd, uint64_t size)
{
    enum { WINDOW_PAGES = 16384 }; /* 64 MiB of 4 KiB pages a mapping: a small vector */
    unsigned char vec[WINDOW_PAGES];
    long psz = sysconf(_SC_PAGESIZE);
    if (psz <= 0 || !mincore_tells(fd))
        return -1;
    uint64_t page = (uint64_t)psz, window = page * WINDOW_PAGES, resident = 0;
    for (uint64_t off = 0; off < size; off += window) {
        size_t len = (size_t)(size - off < window ? size - off : window);
        void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
        if (p == MAP_FAILED)
            return -1;
        int rc = mincore(p, len, vec);
        munmap(p, len);
        if (rc != 0)
            return -1;
        size_t pages = (len + page - 1) / page;
        for (size_t i = 0; i < pages; i++)
            if (vec[i] & 1)
                resident += i + 1 < pages ? page : len - i * page; /* the last page: the file's part */
    }
    return (int64_t)resident;
}

/* Adds a file's size to r->bytes and what of it is cached to r->resident,
 * or to r->unknown where mincore will not tell. */
static void add_resident(int fd, uint64_t size, dlg_cache_result *r)
{
    int64_t cached = dlg_cache_resident(fd, size);
    r->bytes += size;
    if (cached >= 0)
        r->resident += (uint64_t)cached;
    else
        r->unknown += size;
}

/* fdatasync first: DONTNEED skips dirty pages, so a file just written
 * (a dataset a job made moments ago) would stay cached.  Adds the file's
 * size to r->bytes, and when resident, what stayed cached to r->resident. */
static int evict(const char *path, dlg_cache_result *r, dlg_data_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open to evict it from the page cache: %s",
                             path, strerror(errno));
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? 0 : errno;
    if (rc == 0 && fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS) /* EINVAL: cannot sync (a pipe) */
        rc = errno;
    if (rc == 0)
        rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (rc == 0)
        add_resident(fd, (uint64_t)st.st_size, r);
    close(fd);
    if (rc != 0)
        return dlg_data_fail(err, DLG_EIO, "%s: fdatasync or posix_fadvise(DONTNEED) failed: %s", path,
                             strerror(rc));
    return 0;
}

bool dlg_host_stop_asked(void *host)
{
    const dlg_host *h = host;
    return h->stopping && h->stopping(h);
}

static bool asked_to_stop(const dlg_stop_ask *ask) { return ask && ask->stop && ask->stop(ask->ctx); }

/* Reads path through, cap bytes at a time; a dataset of many GB takes
 * minutes, so a stop is asked every 64 chunks. */
static int warm(const char *path, char *chunk, size_t cap, const dlg_stop_ask *ask, dlg_data_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open to pre-read it: %s", path,
                             strerror(errno));
    ssize_t got;
    unsigned chunks = 0;
    while ((got = read(fd, chunk, cap)) > 0)
        if (++chunks % 64 == 0 && asked_to_stop(ask))
            break;
    int e = errno;
    close(fd);
    if (got < 0)
        return dlg_data_fail(err, DLG_EIO, "%s: pre-read failed: %s", path, strerror(e));
    if (got > 0)
        return dlg_data_fail(err, DLG_ESTOP, "cache = warm: stopped while pre-reading %s, as asked", path);
    return 0;
}

/* drop_caches also drops what other processes cached: only as root, and
 * only where fadvise (which needs no privilege) left pages cached or could
 * not tell. */
static bool drop_caches(void)
{
    const char *p = "/proc/sys/vm/drop_caches";
    if (geteuid() != 0 || access(p, W_OK) != 0)
        return false;
    sync();
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = write(fd, "1", 1) == 1;
    close(fd);
    return ok;
}

/* method: how, and the share of of bytes that r->resident is. */
static void say_stayed(dlg_cache_result *r, const char *how, uint64_t of)
{
    if (r->resident * 100 < of)
        snprintf(r->method, sizeof r->method, "%s (<1%% stayed cached)", how);
    else
        snprintf(r->method, sizeof r->method, "%s (%d%% stayed cached)", how, (int)(r->resident * 100 / of));
}

typedef const char *(*path_fn)(const void *, size_t, char *, size_t);

/* Evicts n files, counting what stays cached (again after drop_caches). */
static int evict_files(size_t n, path_fn path_of, const void *ctx, dlg_cache_result *r, dlg_data_err *err)
{
    char path[4096];
    r->bytes = r->resident = r->unknown = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = evict(path_of(ctx, i, path, sizeof path), r, err);
    return rc;
}

static int cold(size_t n, path_fn path_of, const void *ctx, dlg_cache_result *r, dlg_data_err *err)
{
    int rc = evict_files(n, path_of, ctx, r, err);
    if (rc < 0)
        return rc;
    bool dropped = (r->resident > 0 || r->unknown > 0) && drop_caches();
    if (dropped && r->resident > 0 && (rc = evict_files(n, path_of, ctx, r, err)) < 0)
        return rc;
    const char *how = dropped ? "fadvise+drop_caches" : "fadvise";
    if (!r->resident && r->unknown)
        snprintf(r->method, sizeof r->method, "%s (unverified)", how);
    else if (!r->resident)
        snprintf(r->method, sizeof r->method, "%s", how);
    else
        say_stayed(r, how, r->bytes);
    return 0;
}

/* Counts what of n files is in the page cache (into r's bytes, resident
 * and unknown), as cold's eviction counts what stayed. */
static int count_resident(size_t n, path_fn path_of, const void *ctx, dlg_cache_result *r, dlg_data_err *err)
{
    char path[4096];
    for (size_t i = 0; i < n; i++) {
        const char *p = path_of(ctx, i, path, sizeof path);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return dlg_data_fail(err, DLG_EIO, "%s: cannot open to count its cached pages: %s", p, strerror(e));
        }
        add_resident(fd, (uint64_t)st.st_size, r);
        close(fd);
    }
    return 0;
}

/* Whether warm's pre-read left less than 99% of what mincore could count
 * cached: a memory limit smaller than the data (a cgroup charges it the
 * page cache) pushes the first pages out while the last are read. */
static bool warm_fell_short(const dlg_cache_result *r)
{
    uint64_t known = r->bytes - r->unknown;
    return r->mode == DLG_CACHE_WARM && known > 0 && r->resident * 100 < known * 99;
}

static int warm_files(size_t n, path_fn path_of, const void *ctx, const dlg_stop_ask *ask, dlg_cache_result *r,
                      dlg_data_err *err)
{
    char path[4096];
    size_t cap = 1u << 20;
    char *chunk = malloc(cap);
    if (!chunk)
        return dlg_data_fail(err, DLG_ENOMEM, "loader: out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = asked_to_stop(ask) ? dlg_data_fail(err, DLG_ESTOP, "cache = warm: stopped while pre-reading, as asked")
                                : warm(path_of(ctx, i, path, sizeof path), chunk, cap, ask, err);
    free(chunk);
    if (rc < 0)
        return rc;
    /* after all files: reading the last may have pushed out the first */
    if ((rc = count_resident(n, path_of, ctx, r, err)) < 0)
        return rc;
    if (warm_fell_short(r))
        say_stayed(r, "read", r->bytes - r->unknown);
    else
        snprintf(r->method, sizeof r->method, "read");
    return 0;
}

/* Applies mode to n files, path_of(ctx, i, buf) naming file i. */
static int cache_files(size_t n, path_fn path_of, const void *ctx, dlg_cache_mode mode, const dlg_stop_ask *ask,
                       dlg_cache_result *r, dlg_data_err *err)
{
    memset(r, 0, sizeof *r);
    r->mode = mode;
    snprintf(r->method, sizeof r->method, "none");
    if (mode == DLG_CACHE_NONE)
        return 0;
    if (mode == DLG_CACHE_COLD)
        return cold(n, path_of, ctx, r, err);
    return warm_files(n, path_of, ctx, ask, r, err);
}

bool dlg_cache_passed_by(dlg_cache_mode mode, uint32_t caps, uint32_t align, const char *what,
                         dlg_cache_result *out, char *buf, size_t len)
{
    if (mode != DLG_CACHE_WARM || !(caps & DLG_CAP_DIRECT) || align <= 1)
        return false;
    memset(out, 0, sizeof *out);
    snprintf(out->method, sizeof out->method, "none (O_DIRECT)");
    snprintf(buf, len, "cache = warm: the storage reads %s with O_DIRECT, past the page cache: nothing pre-read "
             "(cache_method = %s)", what, out->method);
    return true;
}

/* In MiB, as a memory limit is mostly written (memory = 64MiB). */
static void warm_warning(const dlg_cache_result *r, const char *what, char *buf, size_t len)
{
    uint64_t known = r->bytes - r->unknown;
    snprintf(buf, len, "cache = warm: only %d%% of %s (%.1f MiB of %.1f MiB) stayed in the page cache after the "
             "pre-read: the memory the cell may use (its memory limit, which the page cache counts against, or "
             "the machine's) holds less than the data; the timed reads will go to the disk (cache_method = %s)",
             (int)(r->resident * 100 / known), what, (double)r->resident / 1048576.0, (double)known / 1048576.0,
             r->method);
}

bool dlg_cache_warning(const dlg_cache_result *r, const char *what, char *buf, size_t len)
{
    if (r->mode == DLG_CACHE_WARM) {
        if (!warm_fell_short(r))
            return false;
        warm_warning(r, what, buf, len);
        return true;
    }
    if (!r->resident)
        return false;
    snprintf(buf, len, "cache = cold: %.1f MB of %s's %.1f MB stayed in the page cache after eviction "
             "(a tmpfs, pages locked or mapped by another process): reads of them come from memory, "
             "not the disk (cache_method = %s)",
             (double)r->resident / 1e6, what, (double)r->bytes / 1e6, r->method);
    return true;
}

static const char *src_path(const void *ctx, size_t i, char *buf, size_t len)
{
    const dlg_ld_src *s = ctx;
    return s->ops->file_path(s, i, buf, len);
}

int dlg_ld_cache(const dlg_ld_src *s, dlg_cache_mode mode, const dlg_stop_ask *ask, dlg_cache_result *out,
                 dlg_data_err *err)
{
    return cache_files(s->nfiles, src_path, s, mode, ask, out, err);
}

static const char *one_path(const void *ctx, size_t i, char *buf, size_t len)
{
    (void)i, (void)buf, (void)len;
    return ctx;
}

int dlg_cache_file(const char *path, dlg_cache_mode mode, const dlg_stop_ask *ask, dlg_cache_result *out,
                   dlg_data_err *err)
{
    return cache_files(1, one_path, path, mode, ask, out, err);
}

int dlg_ld_src_open(dlg_ld_src **out, const char *spec, const dlg_host *h, dlg_data_err *err)
{
    const char *colon = strchr(spec, ':');
    size_t kind = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *arg = colon ? colon + 1 : NULL;
    if (!arg || !*arg)
        return dlg_data_fail(err, DLG_EINVAL, "data = '%s': expected recordio:PATH, lmdb:PATH, "
                             "files:LIST_OR_DIR or synthetic[:N]", spec);
    if (kind == 8 && !strncmp(spec, "recordio", 8))
        return dlg_ld_src_recordio(out, arg, h, err);
    if (kind == 4 && !strncmp(spec, "lmdb", 4))
        return dlg_ld_src_lmdb(out, arg, h, err);
    if (kind == 5 && !strncmp(spec, "files", 5))
        return dlg_ld_src_files(out, arg, h, err);
    return dlg_data_fail(err, DLG_EINVAL, "data = '%s': unknown kind '%.*s' (recordio, lmdb, "
                         "files, synthetic)", spec, (int)kind, spec);
}
