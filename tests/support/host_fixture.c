/* The fake storage backend behind a workload's host (host_fixture.h). */
#define _GNU_SOURCE
#include "host_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *raise_meanwhile(void *arg)
{
    const hfx_backend *fi = arg;
    fi->other->error(fi->other, DLG_EIO, "%s", fi->meanwhile);
    return NULL;
}

/* Another thread's error, raised (and done) while the caller's call runs. */
static void other_thread_speaks(const hfx_backend *fi)
{
    if (!fi->meanwhile)
        return;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, raise_meanwhile, (void *)fi), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

typedef struct fake_file {
    dlg_file base;
    const dlg_host *h;
    char path[64];
} fake_file;

static int fake_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)flags;
    hfx_backend *fi = inst;
    if (fi->close_first) { /* its failure, if any, is a warning: no reason for this open's */
        h->file_close(h, fi->close_first);
        fi->close_first = NULL;
    }
    if (fi->open_fails)
        return -DLG_EIO;
    fake_file *ff = (fake_file *)f;
    ff->h = h;
    snprintf(ff->path, sizeof ff->path, "%s", path);
    return 0;
}

/* A failure, with the backend's own line naming the file when it says why. */
static int fake_fail(dlg_file *f, const char *what)
{
    fake_file *ff = (fake_file *)f;
    const hfx_backend *fi = f->inst;
    other_thread_speaks(fi);
    int rc = fi->says_why ? ff->h->error(ff->h, DLG_EIO, "%s: %s: Input/output error", ff->path, what) : -DLG_EIO;
    if (fi->said_wait)
        pthread_barrier_wait(fi->said_wait);
    return rc;
}

static int fake_close(dlg_file *f)
{
    return ((const hfx_backend *)f->inst)->close_fails ? fake_fail(f, "close") : 0;
}

static int fake_size(dlg_file *f, uint64_t *out)
{
    if (((const hfx_backend *)f->inst)->size_fails)
        return fake_fail(f, "fstat");
    *out = HFX_FILE_BYTES;
    return 0;
}

/* HFX_FILE_BYTES bytes of 'x'; reads at offset 200 fail. */
static int64_t fake_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    hfx_backend *fi = f->inst;
    fi->reads++;
    if (off == 200)
        return fake_fail(f, "pread");
    size_t k = off >= HFX_FILE_BYTES ? 0 : HFX_FILE_BYTES - off < n ? HFX_FILE_BYTES - off : n;
    if (fi->short_reads && k > 1)
        k /= 2;
    memset(buf, 'x', k);
    return fi->overrun ? (int64_t)n + 100 : (int64_t)k;
}

static int fake_fetch(dlg_file *f, uint64_t off, size_t n, const void **ptr)
{
    (void)f, (void)off, (void)n;
    static const char bytes[HFX_FILE_BYTES];
    *ptr = bytes;
    return 0;
}

static void fake_unfetch(dlg_file *f, const void *ptr, size_t n) { (void)f, (void)ptr, (void)n; }

static int fake_submit(dlg_file *f, const dlg_io *ios, size_t n)
{
    (void)f, (void)ios;
    return (int)n;
}

static int fake_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    (void)min_done;
    const hfx_backend *fi = f->inst;
    size_t n = (size_t)fi->ndone < max ? (size_t)fi->ndone : max;
    memcpy(done, fi->done, n * sizeof *done);
    return (int)n;
}

static int fake_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    (void)buf, (void)n, (void)off;
    return ((const hfx_backend *)f->inst)->write_fails ? fake_fail(f, "pwrite") : 0;
}

static int fake_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    (void)h, (void)opts, (void)inst;
    return 0;
}

static void fake_destroy(void *inst) { (void)inst; }

const dlg_storage_ops hfx_ops = {
    .version = 1,
    .caps = DLG_CAP_ZERO_COPY | DLG_CAP_ASYNC,
    .file_size = sizeof(fake_file),
    .create = fake_create,
    .destroy = fake_destroy,
    .open = fake_open,
    .close = fake_close,
    .size = fake_size,
    .read = fake_read,
    .fetch = fake_fetch,
    .unfetch = fake_unfetch,
    .submit = fake_submit,
    .reap = fake_reap,
    .write = fake_write,
};

static int setup_with_caps(void **state, uint32_t caps)
{
    hfx_fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->ops = hfx_ops;
    fx->ops.caps = caps;
    fx->desc = (dlg_plugin_desc){
        .struct_size = sizeof(dlg_plugin_desc), .kind = DLG_KIND_STORAGE, .name = "fake", .ops = &fx->ops};
    dlg_services_init(&fx->svc, NULL, "fake", 0);
    dlg_services_set_context(&fx->svc, "st.ini:8: [job checksum]");
    /* the storage as a cell would have created it */
    fx->spec = (dlg_instance_spec){.name = "fake", .desc = &fx->desc};
    fx->svc.storages = calloc(1, sizeof *fx->svc.storages);
    assert_non_null(fx->svc.storages);
    fx->svc.nstorages = 1;
    dlg_host_impl *sh = dlg_host_new(&fx->svc, "st.ini:8: [job checksum] [storage fake] fake");
    assert_non_null(sh);
    fx->inst.h = &sh->pub;
    fx->svc.storages[0] = (dlg_storage_live){&fx->spec, sh, &fx->inst, false};
    fx->wl = dlg_host_new(&fx->svc, "st.ini:8: [job checksum] checksum");
    assert_non_null(fx->wl);
    fx->h = &fx->wl->pub;
    assert_int_equal(fx->h->file_open(fx->h, NULL, HFX_PATH, &fx->f), 0);
    *state = fx;
    return 0;
}

int hfx_setup(void **state) { return setup_with_caps(state, hfx_ops.caps); }

int hfx_setup_copying(void **state) { return setup_with_caps(state, 0); }

int hfx_teardown(void **state)
{
    hfx_fixture *fx = *state;
    fx->inst.close_fails = false;
    fx->h->file_close(fx->h, fx->f);
    dlg_host_free(fx->wl);
    dlg_services_fini(&fx->svc);
    free(fx);
    return 0;
}
