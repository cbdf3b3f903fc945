/* dlg_net_copy_blob, dlg_net_zero_blob and dlg_net_read_async/_wait on
 * the host backends (ref; cpu where oneDNN is built): the copies and the
 * read are done at return (ticket 0), a copy replaces a pending
 * asynchronous write of its destination, and misuse is one non-sticky
 * error.  (The device path: tests/cuda/test_fakegpu_step.c.) */
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
    /* the copy is the last write: it replaces a pending asynchronous one */
    assert_int_equal(dlg_net_write_async(net, z, b, 6), 0);
    assert_int_equal(dlg_net_copy_blob(net, x, z), 0);
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
#ifdef DLG_TEST_HAVE_CPU_BACKEND
    check_backend("cpu");
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob_ops_ref),
        cmocka_unit_test(test_blob_ops_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
