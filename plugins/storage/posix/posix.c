/* posix: the baseline backend — pread/pwrite through the page cache, with
 * an optional posix_fadvise access-pattern hint. */
#define _GNU_SOURCE
#include <dlgauge/plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "fileopen.h"

enum { OPT_ADVICE, OPT_COUNT };

static const dlg_option posix_options[] = {
    [OPT_ADVICE] = {"advice", DLG_OPT_ENUM, "normal", NULL, NULL, "normal|sequential|random",
                    "posix_fadvise hint given at open", 0},
    [OPT_COUNT] = {0},
};

static const int advice_flags[] = {POSIX_FADV_NORMAL, POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM};

typedef struct posix_inst {
    const dlg_host *h;
    int advice;
} posix_inst;

typedef struct posix_file {
    dlg_file base;
    const dlg_host *h;
    int fd;
    char *path; /* for error messages */
} posix_file;

static int posix_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    int64_t adv = opts[OPT_ADVICE].set ? opts[OPT_ADVICE].i : 0;
    if (adv < 0 || adv > 2)
        return h->error(h, DLG_EINVAL, "advice: '%s' is not one of normal|sequential|random",
                        opts[OPT_ADVICE].text ? opts[OPT_ADVICE].text : "");
    posix_inst *p = calloc(1, sizeof *p);
    if (!p)
        return h->error(h, DLG_ENOMEM, "posix: out of memory");
    p->h = h;
    p->advice = advice_flags[adv];
    *inst = p;
    return 0;
}

static void posix_destroy(void *inst) { free(inst); }

static int posix_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    posix_inst *p = inst;
    posix_file *pf = (posix_file *)f;
    int fd = stg_open(h, path, flags, 0, "");
    if (fd < 0)
        return fd;
    pf->path = strdup(path);
    if (!pf->path) {
        close(fd);
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    }
    /* A hint only: a filesystem that ignores it is not an error. */
    if (flags != DLG_OPEN_WRITE && p->advice != POSIX_FADV_NORMAL)
        (void)posix_fadvise(fd, 0, 0, p->advice);
    pf->h = h;
    pf->fd = fd;
    f->align = 1;
    return 0;
}

static int posix_close(dlg_file *f)
{
    posix_file *pf = (posix_file *)f;
    int rc = 0;
    if (close(pf->fd) != 0)
        rc = pf->h->error(pf->h, DLG_EIO, "%s: close: %s", pf->path, strerror(errno));
    free(pf->path);
    pf->path = NULL;
    pf->fd = -1;
    return rc;
}

static int posix_size(dlg_file *f, uint64_t *out)
{
    posix_file *pf = (posix_file *)f;
    int rc = stg_fd_size(pf->fd, out);
    if (rc < 0)
        return pf->h->error(pf->h, DLG_EIO, "%s: stat: %s", pf->path, strerror(-rc));
    return 0;
}

static int64_t posix_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    posix_file *pf = (posix_file *)f;
    int64_t r = stg_pread_full(pf->fd, buf, n, off);
    if (r < 0)
        return pf->h->error(pf->h, DLG_EIO, "%s: read of %zu bytes at offset %llu: %s", pf->path, n,
                            (unsigned long long)off, strerror((int)-r));
    return r;
}

static int posix_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    posix_file *pf = (posix_file *)f;
    return stg_write(pf->h, pf->fd, pf->path, buf, n, off);
}

static const dlg_storage_ops posix_ops = {
    .version = 1,
    .caps = 0,
    .file_size = sizeof(posix_file),
    .create = posix_create,
    .destroy = posix_destroy,
    .open = posix_open,
    .close = posix_close,
    .size = posix_size,
    .read = posix_read,
    .write = posix_write,
};

static const dlg_plugin_desc posix_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "posix",
    .version = "1.0",
    .summary = "pread/pwrite through the page cache, with posix_fadvise hints",
    .options = posix_options,
    .ops = &posix_ops,
};

DLG_PLUGIN("posix", &posix_desc)
