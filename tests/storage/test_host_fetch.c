/* The runtime host's fetch for a backend without zero-copy: it lends a
 * private copy, and a read that fails or comes back short must give one
 * error line naming the file and the offset (a workload reading many
 * shards cannot tell otherwise which one is bad). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "host.h"

#define FILE_BYTES 100
#define PATH "/data/train/shard-0007.bin"

/* A backend over a 100-byte file of 'x' (no zero-copy).  Reads at offset
 * 200 fail without a message of its own, as a third-party one may. */
typedef struct fake_file {
    dlg_file base;
} fake_file;

static int fake_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst, (void)h, (void)path, (void)flags, (void)f;
    return 0;
}

static int fake_close(dlg_file *f)
{
    (void)f;
    return 0;
}

static int fake_size(dlg_file *f, uint64_t *out)
{
    (void)f;
    *out = FILE_BYTES;
    return 0;
}

static int64_t fake_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)f;
    if (off == 200)
        return -DLG_EIO;
    size_t k = off >= FILE_BYTES ? 0 : FILE_BYTES - off < n ? FILE_BYTES - off : n;
    memset(buf, 'x', k);
    return (int64_t)k;
}

static int fake_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    (void)h, (void)opts, (void)inst;
    return 0;
}

static void fake_destroy(void *inst) { (void)inst; }

static const dlg_storage_ops fake_ops = {
    .version = 1,
    .file_size = sizeof(fake_file),
    .create = fake_create,
    .destroy = fake_destroy,
    .open = fake_open,
    .close = fake_close,
    .size = fake_size,
    .read = fake_read,
};

static const dlg_plugin_desc fake_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "fake",
    .ops = &fake_ops,
};

typedef struct fixture {
    dlg_services svc;
    dlg_instance_spec spec;
    dlg_host_impl *wl; /* the workload's host */
    dlg_file *f;
    int inst;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    dlg_services_init(&fx->svc, NULL, "fake", 0);
    /* the storage as a cell would have created it */
    fx->spec = (dlg_instance_spec){.name = "fake", .desc = &fake_desc};
    fx->svc.storages = calloc(1, sizeof *fx->svc.storages);
    assert_non_null(fx->svc.storages);
    fx->svc.nstorages = 1;
    fx->svc.storages[0] = (dlg_storage_live){&fx->spec, dlg_host_new(&fx->svc, "[storage fake] fake"), &fx->inst,
                                             false};
    fx->wl = dlg_host_new(&fx->svc, "[job j] workload w");
    assert_non_null(fx->wl);
    const dlg_host *h = &fx->wl->pub;
    assert_int_equal(h->file_open(h, NULL, PATH, &fx->f), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    fx->wl->pub.file_close(&fx->wl->pub, fx->f);
    dlg_host_free(fx->wl);
    dlg_services_fini(&fx->svc);
    free(fx);
    return 0;
}

static void test_whole_fetch_lends_a_copy(void **state)
{
    fixture *fx = *state;
    const dlg_host *h = &fx->wl->pub;
    const void *p = NULL;
    assert_int_equal(h->file_fetch(h, fx->f, 10, 50, &p), 0);
    assert_non_null(p);
    assert_int_equal(((const char *)p)[49], 'x');
    h->file_unfetch(h, fx->f, p, 50);
}

static void test_short_fetch_names_file_and_offset(void **state)
{
    fixture *fx = *state;
    const dlg_host *h = &fx->wl->pub;
    const void *p = NULL;
    assert_int_equal(h->file_fetch(h, fx->f, 80, 50, &p), -DLG_EIO);
    const char *err = dlg_services_error(&fx->svc);
    assert_non_null(strstr(err, PATH));
    assert_non_null(strstr(err, "offset 80"));
    assert_null(strchr(err, '\n'));
}

static void test_failed_fetch_names_file_and_offset(void **state)
{
    fixture *fx = *state;
    const dlg_host *h = &fx->wl->pub;
    const void *p = NULL;
    assert_int_equal(h->file_fetch(h, fx->f, 200, 8, &p), -DLG_EIO);
    const char *err = dlg_services_error(&fx->svc);
    assert_non_null(strstr(err, PATH));
    assert_non_null(strstr(err, "offset 200"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_whole_fetch_lends_a_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_fetch_names_file_and_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_fetch_names_file_and_offset, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
