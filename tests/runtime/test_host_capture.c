/* A close's failure that was only warned about (the ABI's void
 * file_close keeps it out of the error slot) does not count, once that
 * close is over, as the backend having said why a later call of the same
 * thread failed.  A backend's open that first closes another file (whose
 * close fails, with its own line) and then fails without a word must get
 * the host's "open failed" line in the slot, not nothing: the workload
 * would read an empty or stale error and blame itself. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define CLOSE_FAILS "/data/train/shard-0001.bin"
#define OPEN_FAILS "/data/train/shard-0002.bin"

typedef struct cap_inst {
    const dlg_host *h; /* the storage's host, for its own lines */
    dlg_file *pending; /* closed by the next open, whose close fails */
} cap_inst;

typedef struct cap_file {
    dlg_file base;
    char path[64];
} cap_file;

/* OPEN_FAILS: closes the pending file first (a failing close, warned
 * about), then fails without saying why. */
static int cap_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)flags;
    cap_inst *ci = inst;
    if (strcmp(path, OPEN_FAILS) == 0) {
        h->file_close(h, ci->pending);
        ci->pending = NULL;
        return -DLG_EIO;
    }
    snprintf(((cap_file *)f)->path, sizeof ((cap_file *)f)->path, "%s", path);
    return 0;
}

static int cap_close(dlg_file *f)
{
    const cap_inst *ci = f->inst;
    return ci->h->error(ci->h, DLG_EIO, "%s: close: disk gone", ((cap_file *)f)->path);
}

static int cap_size(dlg_file *f, uint64_t *out)
{
    (void)f;
    *out = 0;
    return 0;
}

static int64_t cap_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)f, (void)buf, (void)n, (void)off;
    return 0;
}

static int cap_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    (void)h, (void)opts, (void)inst;
    return 0;
}

static void cap_destroy(void *inst) { (void)inst; }

static const dlg_storage_ops cap_ops = {
    .version = 1,
    .file_size = sizeof(cap_file),
    .create = cap_create,
    .destroy = cap_destroy,
    .open = cap_open,
    .close = cap_close,
    .size = cap_size,
    .read = cap_read,
};

static const dlg_plugin_desc cap_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "cap",
    .ops = &cap_ops,
};

typedef struct fixture {
    dlg_services svc;
    dlg_instance_spec spec;
    dlg_host_impl *wl; /* the workload's host */
    cap_inst inst;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    dlg_services_init(&fx->svc, NULL, "cap", 0);
    dlg_services_set_context(&fx->svc, "st.ini:8: [job checksum]");
    /* the storage as a cell would have created it */
    fx->spec = (dlg_instance_spec){.name = "cap", .desc = &cap_desc};
    fx->svc.storages = calloc(1, sizeof *fx->svc.storages);
    assert_non_null(fx->svc.storages);
    fx->svc.nstorages = 1;
    dlg_host_impl *sh = dlg_host_new(&fx->svc, "st.ini:8: [job checksum] [storage cap] cap");
    assert_non_null(sh);
    fx->inst.h = &sh->pub;
    fx->svc.storages[0] = (dlg_storage_live){&fx->spec, sh, &fx->inst, false};
    fx->wl = dlg_host_new(&fx->svc, "st.ini:8: [job checksum] checksum");
    assert_non_null(fx->wl);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    dlg_host_free(fx->wl);
    dlg_services_fini(&fx->svc);
    free(fx);
    return 0;
}

/* The open fails silently after a warned-about close: the slot says the
 * open failed, naming its file, with the backend's code. */
static void warned_close_is_no_reason(void **state)
{
    fixture *fx = *state;
    const dlg_host *h = &fx->wl->pub;
    assert_int_equal(h->file_open(h, NULL, CLOSE_FAILS, &fx->inst.pending), 0);
    dlg_file *f = NULL;
    assert_int_equal(h->file_open(h, NULL, OPEN_FAILS, &f), -DLG_EIO);
    assert_null(f);
    char err[2048], want[256];
    int code = dlg_services_error_copy(&fx->svc, err, sizeof err);
    snprintf(want, sizeof want, "st.ini:8: [job checksum] checksum: %s: open failed (code %d)", OPEN_FAILS,
             -DLG_EIO);
    if (code != DLG_EIO || strcmp(err, want) != 0)
        fail_msg("the slot holds (code %d) \"%s\"; expected \"%s\"", code, err, want);
}

/* While the close runs, its own line is what the host judges by: the
 * warning names the backend's reason, not a generic "close failed". */
static void close_keeps_its_line(void **state)
{
    fixture *fx = *state;
    const dlg_host *h = &fx->wl->pub;
    dlg_file *f = NULL;
    assert_int_equal(h->file_open(h, NULL, CLOSE_FAILS, &f), 0);
    uint64_t before = dlg_services_mark(&fx->svc);
    h->file_close(h, f);
    /* one error raised (the backend's, captured), none added by the host */
    assert_int_equal(dlg_services_mark(&fx->svc) - before, 1);
    char err[64];
    assert_int_equal(dlg_services_error_copy(&fx->svc, err, sizeof err), 0);
    assert_string_equal(err, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(warned_close_is_no_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(close_keeps_its_line, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
