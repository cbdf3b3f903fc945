/* dlg_net_copy_blob, dlg_net_zero_blob and dlg_net_read_async/_wait on
 * the host backends (ref; cpu where oneDNN is built): the copies and the
 * read are done at return (ticket 0), and misuse is one non-sticky error.
 * A copy or a zeroing replaces a pending asynchronous write of its
 * destination: on ref that write is a plain write, so that is checked on
 * a copy of ref's vtable with host-memory stand-ins for a device's input
 * staging and copy hooks, where the write really waits for the next step.
 * (The device path: tests/cuda/test_fakegpu_step.c.) */
#include "net.h"
#include "nn_testutil.h"

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void check_backend(const char *backend)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "ops"), 0);
    int x = dlg_input(net, "x", 2, 3, 1, 1), z = dlg_input(net, "z", 2, 3, 1, 1);
    int other = dlg_input(net, "other", 1, 5, 1, 1);
    int sum = dlg_add(net, "add", x, z);
    dlg_relu(net, "relu", other);
    dlg_net_keep(net, sum);
    dlg_plan_opts o = {.backend = backend, .seed = 1};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s: %s", backend, dlg_net_error(net));
    float a[6] = {1, -2, 3, -4, 5, -6}, b[6] = {9, 9, 9, 9, 9, 9}, got[6];
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, a, 6), 0);
    assert_int_equal(dlg_net_write(net, z, DLG_DATA, b, 6), 0);
    assert_int_equal(dlg_net_copy_blob(net, x, z), 0);
    assert_int_equal(dlg_net_read(net, z, DLG_DATA, got, 6), 0);
    assert_memory_equal(got, a, sizeof a);
    assert_int_equal(dlg_net_forward(net), 0);
    float *host = dlg_net_host_alloc(net, 6 * sizeof(float));
    assert_non_null(host);
    uint64_t t = 99;
    assert_int_equal(dlg_net_read_async(net, sum, host, 6, &t), 0);
    assert_int_equal(t, 0); /* done at return on the host */
    assert_int_equal(dlg_net_read_wait(net, t), 0);
    for (int i = 0; i < 6; i++)
        assert_true(host[i] == 2 * a[i]);
    assert_int_equal(dlg_net_zero_blob(net, x), 0);
    assert_int_equal(dlg_net_read(net, x, DLG_DATA, got, 6), 0);
    for (int i = 0; i < 6; i++)
        assert_true(got[i] == 0.f);
    /* misuse: one error line each, nothing sticky */
    assert_int_equal(dlg_net_copy_blob(net, x, other), -DLG_EINVAL);
    assert_non_null(strstr(dlg_net_error(net), "'x' (6 floats) into 'other' (5 floats)"));
    assert_int_equal(dlg_net_copy_blob(net, x, 999), -DLG_EINVAL);
    assert_int_equal(dlg_net_zero_blob(net, -1), -DLG_EINVAL);
    assert_int_equal(dlg_net_read_async(net, sum, host, 5, &t), -DLG_EINVAL);
    assert_int_equal(dlg_net_read_wait(net, 7), -DLG_EINVAL);
    assert_int_equal(dlg_net_status(net), 0);
    dlg_net_host_free(net, host);
    dlg_net_destroy(net);
}

static void test_blob_ops_ref(void **st)
{
    (void)st;
    check_backend("ref");
}

static void test_blob_ops_cpu(void **st)
{
    (void)st;
    tu_on_cpu(check_backend);
}

/* A device's input path and copy on host memory: an asynchronous write
 * lands in a staging buffer and reaches its blob only when the next step
 * takes it (ref's context is NULL and unused). */
static int st_slot_open(void *ctx, void **slot)
{
    static char mark; /* the slots carry no state here */
    *slot = &mark;
    return 0;
}

static void st_slot_close(void *ctx, void *slot) {}

static int st_copy(void *ctx, void *slot, void *stage, const void *src, size_t bytes,
                   bool after_read)
{
    memcpy(stage, src, bytes);
    return 0;
}

static int st_take(void *ctx, void *const *slot, void *const *dst, void *const *stage,
                   const size_t *bytes, int n)
{
    for (int i = 0; i < n; i++)
        memcpy(dst[i], stage[i], bytes[i]);
    return 0;
}

static int st_none(void *ctx) { return 0; }

static int st_stall(void *ctx, uint64_t *ns)
{
    *ns = 0;
    return 0;
}

static int st_dev_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return 0;
}

/* sum = x + z after a forward, with z written asynchronously (b), then
 * replaced by `replace` (copy x into z, or zero z) before the step. */
static void pending_write_replaced(bool zero)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "staged"), 0);
    int x = dlg_input(net, "x", 2, 3, 1, 1), z = dlg_input(net, "z", 2, 3, 1, 1);
    int sum = dlg_add(net, "add", x, z);
    dlg_net_keep(net, sum);
    dlg_plan_opts o = {.backend = "ref", .seed = 1};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    dlg_backend staged = *net->bk;
    staged.in_slot_open = st_slot_open;
    staged.in_slot_close = st_slot_close;
    staged.in_copy = st_copy;
    staged.in_take = st_take;
    staged.in_mark = staged.in_wait = st_none;
    staged.in_stall = st_stall;
    staged.copy = st_dev_copy;
    assert_null(net->ctx);
    net->bk = &staged; /* kept to the end: destroy frees the staging through it */
    float a[6] = {1, -2, 3, -4, 5, -6}, b[6] = {9, 9, 9, 9, 9, 9}, got[6];
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, a, 6), 0);
    /* the stand-ins do stage: the write lands with the step, not before */
    assert_int_equal(dlg_net_write(net, z, DLG_DATA, a, 6), 0);
    assert_int_equal(dlg_net_write_async(net, z, b, 6), 0);
    assert_int_equal(dlg_net_read(net, z, DLG_DATA, got, 6), 0);
    assert_memory_equal(got, a, sizeof a);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, z, DLG_DATA, got, 6), 0);
    assert_memory_equal(got, b, sizeof b);
    /* the copy (zeroing) is the last write: the pending one is dropped */
    assert_int_equal(dlg_net_write_async(net, z, b, 6), 0);
    assert_int_equal(zero ? dlg_net_zero_blob(net, z) : dlg_net_copy_blob(net, x, z), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, sum, DLG_DATA, got, 6), 0);
    for (int i = 0; i < 6; i++)
        assert_true(got[i] == (zero ? a[i] : 2 * a[i]));
    assert_int_equal(dlg_net_status(net), 0);
    dlg_net_destroy(net);
}

static void test_copy_replaces_pending_write(void **st) { pending_write_replaced(false); }

static void test_zero_replaces_pending_write(void **st) { pending_write_replaced(true); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob_ops_ref),
        cmocka_unit_test(test_blob_ops_cpu),
        cmocka_unit_test(test_copy_replaces_pending_write),
        cmocka_unit_test(test_zero_replaces_pending_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
