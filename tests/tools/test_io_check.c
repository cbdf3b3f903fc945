/* io's check judges depth against the job's storage caps (dlg_job_info
 * .storage_caps), as its setup does against the file's: depth > 1 on a
 * backend without DLG_CAP_ASYNC is refused before any cell runs (it passed
 * --dry-run and then failed every cell).  A host older than the field says
 * no caps, and check leaves depth to setup. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mock_host.h"

/* io's check of "data = raw:x" and the overrides, under storage caps. */
static int io_check(mock_host *m, const char *const *overrides, uint32_t caps, uint32_t struct_size)
{
    const dlg_plugin_desc *d = mock_load_plugin("tools.so", DLG_KIND_WORKLOAD, "io");
    assert_non_null(d);
    const dlg_workload_ops *ops = d->ops;
    assert_true(dlg_workload_has_check(ops));
    dlg_value vals[64];
    memset(vals, 0, sizeof vals);
    assert_int_equal(mock_options(d->options, vals, overrides), 0);
    mock_host_init(m);
    dlg_job_info job = {.struct_size = struct_size, .job = "t", .cpus = 1, .seed = 1, .storage_caps = caps};
    int rc = ops->check(&m->host, vals, &job);
    mock_host_fini(m);
    return rc;
}

static const char *const depth4[] = {"data=raw:x", "depth=4", NULL};

static void sync_storage_refuses_depth(void **state)
{
    (void)state;
    mock_host m;
    assert_true(io_check(&m, depth4, DLG_CAP_DIRECT, sizeof(dlg_job_info)) < 0);
    assert_string_equal(m.last_error, "depth = 4: the job's storage backend reads synchronously (no DLG_CAP_ASYNC); "
                                      "use depth = 1, or storage = uring for queued reads");
}

static void async_storage_takes_depth(void **state)
{
    (void)state;
    mock_host m;
    assert_int_equal(io_check(&m, depth4, DLG_CAP_ASYNC | DLG_CAP_DIRECT, sizeof(dlg_job_info)), 0);
    assert_int_equal(m.errors, 0);
}

/* depth 1, or left unset, reads on any backend */
static void sync_storage_depth_one(void **state)
{
    (void)state;
    mock_host m;
    const char *const one[] = {"data=raw:x", "depth=1", NULL}, *const unset[] = {"data=raw:x", NULL};
    assert_int_equal(io_check(&m, one, 0, sizeof(dlg_job_info)), 0);
    assert_int_equal(io_check(&m, unset, 0, sizeof(dlg_job_info)), 0);
}

static void older_host_leaves_depth_to_setup(void **state)
{
    (void)state;
    mock_host m;
    assert_int_equal(io_check(&m, depth4, 0, (uint32_t)offsetof(dlg_job_info, storage_caps)), 0);
    assert_int_equal(m.errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sync_storage_refuses_depth),
        cmocka_unit_test(async_storage_takes_depth),
        cmocka_unit_test(sync_storage_depth_one),
        cmocka_unit_test(older_host_leaves_depth_to_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
