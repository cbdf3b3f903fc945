/* mmap: the whole file mapped read-only at open; fetch() lends pointers
 * into the mapping (zero copy), read() copies out of it.  Files opened for
 * writing are not mapped and use pwrite.  Reading a page a shrinking file
 * no longer backs raises SIGBUS: the cell's process dies and the runner
 * says why; with isolation = none that process is dlgauge itself. */
#define _GNU_SOURCE
#include <dlgauge/plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fileio.h"
#include "fileopen.h"

enum { OPT_ADVICE, OPT_POPULATE, OPT_COUNT };

static const dlg_option mmap_options[] = {
    [OPT_ADVICE] = {"advice", DLG_OPT_ENUM, "normal", NULL, NULL,
                    "normal|sequential|random|willneed", "madvise hint for the mapping", 0},
    [OPT_POPULATE] = {"populate", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
                      "MAP_POPULATE: fault the whole file in at open", 0},
    [OPT_COUNT] = {0},
};

static const int advice_flags[] = {MADV_NORMAL, MADV_SEQUENTIAL, MADV_RANDOM, MADV_WILLNEED};

typedef struct mmap_inst {
    int advice;
    bool populate;
} mmap_inst;

typedef struct mmap_file {
    dlg_file base;
    const dlg_host *h;
    int fd;
    const unsigned char *map; /* NULL for empty or write-mode files */
    uint64_t size;
    char *path;
} mmap_file;

static int mmap_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    int64_t adv = opts[OPT_ADVICE].set ? opts[OPT_ADVICE].i : 0;
    if (adv < 0 || adv > 3)
        return h->error(h, DLG_EINVAL, "advice: '%s' is not one of normal|sequential|random|willneed",
                        opts[OPT_ADVICE].text ? opts[OPT_ADVICE].text : "");
    mmap_inst *m = calloc(1, sizeof *m);
    if (!m)
        return h->error(h, DLG_ENOMEM, "mmap: out of memory");
    m->advice = advice_flags[adv];
    m->populate = opts[OPT_POPULATE].set && opts[OPT_POPULATE].i;
    *inst = m;
    return 0;
}

static void mmap_destroy(void *inst) { free(inst); }

static int map_file(mmap_inst *m, mmap_file *mf)
{
    const dlg_host *h = mf->h;
    int rc = stg_fd_size(mf->fd, &mf->size);
    if (rc < 0)
        return h->error(h, DLG_EIO, "%s: stat: %s", mf->path, strerror(-rc));
    if (mf->size == 0)
        return 0; /* nothing to map; every read is at EOF */
    if (mf->size > (uint64_t)SIZE_MAX)
        return h->error(h, DLG_ENOTSUP, "%s: %llu bytes do not fit the address space", mf->path,
                        (unsigned long long)mf->size);
    int mflags = MAP_SHARED | (m->populate ? MAP_POPULATE : 0);
    void *p = mmap(NULL, (size_t)mf->size, PROT_READ, mflags, mf->fd, 0);
    if (p == MAP_FAILED && errno == ENODEV)
        return h->error(h, DLG_ENOTSUP,
                        "%s: this filesystem cannot map files (mmap: %s); use type = posix", mf->path,
                        strerror(errno));
    if (p == MAP_FAILED)
        return h->error(h, errno == ENOMEM ? DLG_ENOMEM : DLG_EIO, "%s: mmap of %llu bytes: %s",
                        mf->path, (unsigned long long)mf->size, strerror(errno));
    if (m->advice != MADV_NORMAL)
        (void)madvise(p, (size_t)mf->size, m->advice); /* a hint; ignoring it is fine */
    mf->map = p;
    return 0;
}

static int mmap_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    mmap_file *mf = (mmap_file *)f;
    bool writing = flags == DLG_OPEN_WRITE;
    int fd = stg_open(h, path, flags, 0, "");
    if (fd < 0)
        return fd;
    mf->path = strdup(path);
    if (!mf->path) {
        close(fd);
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    }
    mf->h = h;
    mf->fd = fd;
    mf->map = NULL;
    mf->size = 0;
    f->align = 1;
    int rc = writing ? 0 : map_file(inst, mf);
    if (rc < 0) {
        close(fd);
        free(mf->path);
        mf->path = NULL;
    }
    return rc;
}

static int mmap_close(dlg_file *f)
{
    mmap_file *mf = (mmap_file *)f;
    int rc = 0;
    if (mf->map && munmap((void *)mf->map, (size_t)mf->size) != 0)
        rc = mf->h->error(mf->h, DLG_EIO, "%s: munmap: %s", mf->path, strerror(errno));
    if (close(mf->fd) != 0 && rc == 0)
        rc = mf->h->error(mf->h, DLG_EIO, "%s: close: %s", mf->path, strerror(errno));
    free(mf->path);
    mf->path = NULL;
    mf->map = NULL;
    return rc;
}

static int mmap_size(dlg_file *f, uint64_t *out)
{
    mmap_file *mf = (mmap_file *)f;
    if (mf->map) {
        *out = mf->size; /* the mapping is what reads see */
        return 0;
    }
    int rc = stg_fd_size(mf->fd, out);
    if (rc < 0)
        return mf->h->error(mf->h, DLG_EIO, "%s: stat: %s", mf->path, strerror(-rc));
    return 0;
}

static int64_t mmap_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    mmap_file *mf = (mmap_file *)f;
    if (!mf->map) {
        int64_t r = stg_pread_full(mf->fd, buf, n, off);
        if (r < 0)
            return mf->h->error(mf->h, DLG_EIO, "%s: read at offset %llu: %s", mf->path,
                                (unsigned long long)off, strerror((int)-r));
        return r;
    }
    if (off >= mf->size)
        return 0;
    uint64_t avail = mf->size - off;
    size_t take = avail < n ? (size_t)avail : n;
    memcpy(buf, mf->map + off, take);
    return (int64_t)take;
}

static int mmap_fetch(dlg_file *f, uint64_t off, size_t n, const void **ptr)
{
    mmap_file *mf = (mmap_file *)f;
    if (off > mf->size || n > mf->size - off)
        return mf->h->error(mf->h, DLG_EINVAL,
                            "%s: fetch of [%llu, %llu) is past the end of the file (%llu bytes)",
                            mf->path, (unsigned long long)off, (unsigned long long)(off + n),
                            (unsigned long long)mf->size);
    static const unsigned char empty[1];
    *ptr = mf->map ? (const void *)(mf->map + off) : (const void *)empty;
    return 0;
}

/* The mapping lives until close: nothing to give back. */
static void mmap_unfetch(dlg_file *f, const void *ptr, size_t n) {}

static int mmap_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    mmap_file *mf = (mmap_file *)f;
    if (mf->map)
        return mf->h->error(mf->h, DLG_EINVAL, "%s: opened for reading, cannot write", mf->path);
    return stg_write(mf->h, mf->fd, mf->path, buf, n, off);
}

static const dlg_storage_ops mmap_ops = {
    .version = 1,
    .caps = DLG_CAP_ZERO_COPY,
    .file_size = sizeof(mmap_file),
    .create = mmap_create,
    .destroy = mmap_destroy,
    .open = mmap_open,
    .close = mmap_close,
    .size = mmap_size,
    .read = mmap_read,
    .fetch = mmap_fetch,
    .unfetch = mmap_unfetch,
    .write = mmap_write,
};

static const dlg_plugin_desc mmap_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "mmap",
    .version = "1.0",
    .summary = "whole-file read-only mapping; zero-copy fetch, madvise hints, optional MAP_POPULATE; a file "
               "that shrinks while mapped ends the cell (SIGBUS; with isolation = none, the whole run)",
    .options = mmap_options,
    .ops = &mmap_ops,
};

DLG_PLUGIN("mmap", &mmap_desc)
