/* Two threads of a cell (loader workers) whose backend calls fail at the
 * same moment: each backend says why on its own line, naming its file,
 * and the host adds no line of its own for either.  The host used to ask
 * the shared error slot whether the backend had said why; holding the
 * other thread's later line, it answered no for the first thread, which
 * then raised its generic "read of N bytes at offset X failed" over the
 * backend's reason.  Here both backends raise their line, then wait for
 * each other (a barrier) before failing, so that the slot always holds
 * the other thread's line when the first one's failure is judged. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define NTHREADS 2
static const char *const paths[NTHREADS] = {"/data/train/shard-0001.bin", "/data/train/shard-0002.bin"};

typedef struct race_inst {
    const dlg_host *h; /* the storage's host, for its own lines */
    pthread_barrier_t both_said;
} race_inst;

typedef struct race_file {
    dlg_file base;
    char path[64];
} race_file;

static int race_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst, (void)h, (void)flags;
    snprintf(((race_file *)f)->path, sizeof ((race_file *)f)->path, "%s", path);
    return 0;
}

/* The backend's line, then the other thread's, then the failure. */
static int race_fail(dlg_file *f, const char *what)
{
    race_inst *ri = f->inst;
    int rc = ri->h->error(ri->h, DLG_EIO, "%s: %s: disk on fire", ((race_file *)f)->path, what);
    pthread_barrier_wait(&ri->both_said);
    return rc;
}

static int race_close(dlg_file *f)
{
    (void)f;
    return 0;
}

static int race_size(dlg_file *f, uint64_t *out)
{
    (void)out;
    return race_fail(f, "fstat");
}

static int64_t race_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)buf, (void)n, (void)off;
    return race_fail(f, "pread");
}

static int race_write(dlg_file *f, const void *buf, size_t n, uint64_t off)
{
    (void)buf, (void)n, (void)off;
    return race_fail(f, "pwrite");
}

static int race_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    (void)h, (void)opts, (void)inst;
    return 0;
}

static void race_destroy(void *inst) { (void)inst; }

static const dlg_storage_ops race_ops = {
    .version = 1,
    .file_size = sizeof(race_file),
    .create = race_create,
    .destroy = race_destroy,
    .open = race_open,
    .close = race_close,
    .size = race_size,
    .read = race_read,
    .write = race_write,
};

static const dlg_plugin_desc race_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_STORAGE,
    .name = "race",
    .ops = &race_ops,
};

typedef enum { OP_READ, OP_WRITE, OP_SIZE } op_kind;

typedef struct fixture {
    dlg_services svc;
    dlg_instance_spec spec;
    dlg_host_impl *wl; /* the workload's host, shared by its threads */
    race_inst inst;
} fixture;

/* One worker: its own file, one failing call of the kind under test. */
typedef struct worker {
    fixture *fx;
    op_kind op;
    const char *path;
    dlg_file *f;
    int64_t rc;
} worker;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    dlg_services_init(&fx->svc, NULL, "race", 0);
    dlg_services_set_context(&fx->svc, "st.ini:8: [job checksum]");
    /* the storage as a cell would have created it */
    fx->spec = (dlg_instance_spec){.name = "race", .desc = &race_desc};
    fx->svc.storages = calloc(1, sizeof *fx->svc.storages);
    assert_non_null(fx->svc.storages);
    fx->svc.nstorages = 1;
    dlg_host_impl *sh = dlg_host_new(&fx->svc, "st.ini:8: [job checksum] [storage race] race");
    assert_non_null(sh);
    fx->inst.h = &sh->pub;
    assert_int_equal(pthread_barrier_init(&fx->inst.both_said, NULL, NTHREADS), 0);
    fx->svc.storages[0] = (dlg_storage_live){&fx->spec, sh, &fx->inst, false};
    fx->wl = dlg_host_new(&fx->svc, "st.ini:8: [job checksum] checksum");
    assert_non_null(fx->wl);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    pthread_barrier_destroy(&fx->inst.both_said);
    dlg_host_free(fx->wl);
    dlg_services_fini(&fx->svc);
    free(fx);
    return 0;
}

static void *work(void *arg)
{
    worker *w = arg;
    const dlg_host *h = &w->fx->wl->pub;
    char buf[16] = "";
    uint64_t size;
    switch (w->op) {
    case OP_READ:
        w->rc = h->file_read(h, w->f, buf, sizeof buf, 4096);
        break;
    case OP_WRITE:
        w->rc = dlg_host_file_write(h, w->f, buf, sizeof buf, 4096);
        break;
    case OP_SIZE:
        w->rc = h->file_size(h, w->f, &size);
        break;
    }
    return NULL;
}

/* Both threads fail at once: two errors raised, both the backends'. */
static void both_fail(fixture *fx, op_kind op)
{
    const dlg_host *h = &fx->wl->pub;
    worker w[NTHREADS];
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (worker){.fx = fx, .op = op, .path = paths[i]};
        int rc = op == OP_WRITE ? dlg_host_file_create(h, NULL, paths[i], &w[i].f)
                                : h->file_open(h, NULL, paths[i], &w[i].f);
        assert_int_equal(rc, 0);
    }
    uint64_t before = dlg_services_mark(&fx->svc);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < NTHREADS; i++) {
        assert_int_equal(w[i].rc, -DLG_EIO);
        h->file_close(h, w[i].f);
    }
    char err[2048], want[2][256];
    int code = dlg_services_error_copy(&fx->svc, err, sizeof err);
    const char *what = op == OP_READ ? "pread" : op == OP_WRITE ? "pwrite" : "fstat";
    for (int i = 0; i < NTHREADS; i++)
        snprintf(want[i], sizeof want[i], "st.ini:8: [job checksum] [storage race] race: %s: %s: disk on fire",
                 paths[i], what);
    if (dlg_services_mark(&fx->svc) - before != NTHREADS || code != DLG_EIO ||
        (strcmp(err, want[0]) != 0 && strcmp(err, want[1]) != 0))
        fail_msg("%llu errors raised, the last (code %d): \"%s\"; expected the 2 backends' lines only",
                 (unsigned long long)(dlg_services_mark(&fx->svc) - before), code, err);
}

static void reads_fail_at_once(void **state) { both_fail(*state, OP_READ); }
static void writes_fail_at_once(void **state) { both_fail(*state, OP_WRITE); }
static void sizes_fail_at_once(void **state) { both_fail(*state, OP_SIZE); }

/* The copy-out of the slot: truncated to the buffer, "" and 0 when clear. */
static void error_copy_is_bounded(void **state)
{
    fixture *fx = *state;
    char small[8], buf[64];
    assert_int_equal(dlg_services_error_copy(&fx->svc, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(dlg_services_fail(&fx->svc, DLG_ENOMEM, "%s: out of memory", paths[0]), -DLG_ENOMEM);
    assert_int_equal(dlg_services_error_copy(&fx->svc, small, sizeof small), DLG_ENOMEM);
    assert_string_equal(small, "/data/t");
    dlg_services_clear_error(&fx->svc);
    assert_int_equal(dlg_services_error_copy(&fx->svc, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reads_fail_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(writes_fail_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(sizes_fail_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(error_copy_is_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
