/* allreduce and p2p on one rank, through the real host (its "self"
 * engine): known answers, nccl-tests' fields, and check()'s refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_drive.h"
#include "host_fixture.h"

#define STEPS 5

/* One rank: the check of every element passed (setup, begin_timed and
 * report all 0), the bytes count on rank 0, and the fields agree with
 * each other as nccl-tests defines them. */
static void one_rank(void **state, const char *name, const char *type, long long bytes, double factor)
{
    hfx_fixture *fx = *state;
    char b[64], t[64];
    snprintf(b, sizeof b, "bytes=%lld", bytes);
    snprintf(t, sizeof t, "type=%s", type);
    const char *ov[] = {b, t, NULL};
    cd_result r;
    assert_true(cd_run(fx->h, name, ov, STEPS, &r));
    if (r.setup_rc || r.begin_rc || r.step_rc || r.report_rc)
        fail_msg("%s %s: %d %d %d %d: %s", name, type, r.setup_rc, r.begin_rc, r.step_rc, r.report_rc,
                 dlg_services_error(&fx->svc));
    assert_int_equal(r.check_rc, 0);
    assert_int_equal(r.items, (uint64_t)bytes * STEPS);
    assert_int_equal(wr_int(&r.fields, "message_bytes"), bytes);
    assert_true(wr_double(&r.fields, "busbw_factor") == factor);
    double alg = wr_double(&r.fields, "algbw_bytes_per_s"), us = wr_double(&r.fields, "op_time_us");
    assert_true(alg > 0 && us > 0 && wr_double(&r.fields, "op_median_us") > 0);
    assert_true(fabs(alg - (double)bytes / (us / 1e6)) <= 1e-9 * alg);
    assert_true(wr_double(&r.fields, "busbw_bytes_per_s") == alg * factor);
    assert_string_equal(wr_field(&r.fields, "device"), "cpu"); /* the default: host buffers */
}

/* 2(n-1)/n is 0 on one rank: nothing crosses a link; nor does p2p's send
 * to itself, whose factor is 0 there too (1 from two ranks on). */
static void test_allreduce_f32(void **state) { one_rank(state, "allreduce", "float32", 4 * 1000, 0.0); }
static void test_allreduce_f64(void **state) { one_rank(state, "allreduce", "float64", 8 * 1001, 0.0); }
static void test_allreduce_i64(void **state) { one_rank(state, "allreduce", "int64", 1 << 20, 0.0); }
static void test_p2p_f32(void **state) { one_rank(state, "p2p", "float32", 4 * 999, 0.0); }
static void test_p2p_i64(void **state) { one_rank(state, "p2p", "int64", 8, 0.0); }

/* check() refuses, in one line starting with the key, what setup would. */
static void refused(hfx_fixture *fx, const char *name, const char *bytes, const char *type, const char *why)
{
    const char *ov[] = {bytes, type, NULL};
    int rc = 0;
    dlg_services_clear_error(&fx->svc);
    assert_true(cd_check(fx->h, name, ov, &rc));
    assert_int_equal(rc, -DLG_EINVAL);
    const char *e = dlg_services_error(&fx->svc);
    if (!strstr(e, "bytes = ") || !strstr(e, why))
        fail_msg("%s %s %s: '%s' lacks '%s'", name, bytes, type, e, why);
    cd_result r; /* and setup too, before any op */
    assert_true(cd_run(fx->h, name, ov, 1, &r));
    assert_int_equal(r.setup_rc, -DLG_EINVAL);
}

static void test_check_refuses(void **state)
{
    hfx_fixture *fx = *state;
    refused(fx, "allreduce", "bytes=0", "type=float32", "must be at least one element (4 bytes of float32)");
    refused(fx, "allreduce", "bytes=4", "type=float64", "must be at least one element (8 bytes of float64)");
    refused(fx, "p2p", "bytes=6", "type=float32", "not a whole number of float32 elements");
    refused(fx, "allreduce", "bytes=20", "type=int64", "not a whole number of int64 elements");
    refused(fx, "p2p", "bytes=2G", "type=float32", "at most 1GiB");
    int rc = -1;
    const char *ok[] = {"bytes=1G", "type=int64", NULL};
    assert_true(cd_check(fx->h, "p2p", ok, &rc));
    assert_int_equal(rc, 0);
    const char *one[] = {"bytes=4", "type=float32", NULL};
    assert_true(cd_check(fx->h, "allreduce", one, &rc));
    assert_int_equal(rc, 0);
}

/* ops_per_step = 8 through the real host: every step's 8 ops leave the
 * right recv (checked before and after the timed steps), rank 0 counts
 * 8 messages a step. */
static void test_ops_per_step(void **state)
{
    hfx_fixture *fx = *state;
    static const char *const names[] = {"allreduce", "p2p"};
    for (int i = 0; i < 2; i++) {
        const char *ov[] = {"bytes=8008", "type=float64", "ops_per_step=8", NULL};
        cd_result r;
        assert_true(cd_run(fx->h, names[i], ov, STEPS, &r));
        if (r.check_rc || r.setup_rc || r.begin_rc || r.step_rc || r.report_rc)
            fail_msg("%s: %d %d %d %d %d: %s", names[i], r.check_rc, r.setup_rc, r.begin_rc, r.step_rc,
                     r.report_rc, dlg_services_error(&fx->svc));
        assert_int_equal(r.items, 8 * 8008 * STEPS);
        double alg = wr_double(&r.fields, "algbw_bytes_per_s"), us = wr_double(&r.fields, "op_time_us");
        assert_true(us > 0 && fabs(alg - 8008 / (us / 1e6)) <= 1e-9 * alg);
    }
}

/* ops_per_step out of 1..10000: check() and setup() refuse it in one line
 * naming the key (the real host's config refuses it first; a bare driver
 * may not). */
static void test_ops_refused(void **state)
{
    hfx_fixture *fx = *state;
    static const char *const bad[] = {"ops_per_step=0", "ops_per_step=-1", "ops_per_step=10001"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *ov[] = {"bytes=4KiB", bad[i], NULL};
        int rc = 0;
        dlg_services_clear_error(&fx->svc);
        assert_true(cd_check(fx->h, i % 2 ? "p2p" : "allreduce", ov, &rc));
        assert_int_equal(rc, -DLG_EINVAL);
        char want[64];
        snprintf(want, sizeof want, "ops_per_step = %s: must be 1 to 10000", strchr(bad[i], '=') + 1);
        if (!strstr(dlg_services_error(&fx->svc), want))
            fail_msg("%s: '%s' lacks '%s'", bad[i], dlg_services_error(&fx->svc), want);
        cd_result r;
        assert_true(cd_run(fx->h, "allreduce", ov, 1, &r));
        assert_int_equal(r.setup_rc, -DLG_EINVAL);
    }
}

/* device: cpu, cuda or cuda:N, refused otherwise in one line naming it
 * (check() reads no hardware, so cuda:0 passes it here). */
static void test_device_refused(void **state)
{
    hfx_fixture *fx = *state;
    static const char *const bad[] = {"gpu", "cuda:8", "cuda:1x", "cuda:", "cuda-tf32:0", "auto"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char dev[32], want[64];
        snprintf(dev, sizeof dev, "device=%s", bad[i]);
        snprintf(want, sizeof want, "device = %s: expected cpu, cuda or cuda:N (N in 0..7)", bad[i]);
        const char *ov[] = {"bytes=4KiB", dev, NULL};
        int rc = 0;
        dlg_services_clear_error(&fx->svc);
        assert_true(cd_check(fx->h, i % 2 ? "p2p" : "allreduce", ov, &rc));
        assert_int_equal(rc, -DLG_EINVAL);
        if (!strstr(dlg_services_error(&fx->svc), want))
            fail_msg("%s: '%s' lacks '%s'", dev, dlg_services_error(&fx->svc), want);
    }
    static const char *const good[] = {"device=cpu", "device=cuda", "device=cuda:0", "device=cuda:7"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        const char *ov[] = {"bytes=4KiB", good[i], NULL};
        int rc = -1;
        assert_true(cd_check(fx->h, "allreduce", ov, &rc));
        assert_int_equal(rc, 0);
    }
}

/* No CUDA device (no CUDA module found: DLGAUGE_NN_MODULE_DIR names an
 * empty place): setup refuses with the nn workloads' line, nothing run. */
static void no_device(hfx_fixture *fx, const char *name, const char *dev, const char *want)
{
    const char *ov[] = {"bytes=4KiB", dev, NULL};
    cd_result r;
    dlg_services_clear_error(&fx->svc);
    assert_true(cd_run(fx->h, name, ov, 1, &r));
    assert_int_equal(r.check_rc, 0);
    assert_int_equal(r.setup_rc, -DLG_ENOTSUP);
    if (!strstr(dlg_services_error(&fx->svc), want))
        fail_msg("%s %s: '%s' lacks '%s'", name, dev, dlg_services_error(&fx->svc), want);
}

static void test_no_device(void **state)
{
    hfx_fixture *fx = *state;
    setenv("DLGAUGE_NN_MODULE_DIR", "/nonexistent/dlgauge-no-modules", 1);
    no_device(fx, "allreduce", "device=cuda:0", "device = cuda:0: no CUDA backend can run here: no CUDA device (");
    no_device(fx, "p2p", "device=cuda", "device = cuda: no CUDA backend can run here: no CUDA device (");
    unsetenv("DLGAUGE_NN_MODULE_DIR");
}

/* A host older than the collectives: refused in one line, no crash. */
static void test_host_without_comm(void **state)
{
    (void)state;
    mock_host m;
    mock_host_init(&m); /* fills no comm_* member */
    const char *ov[] = {"bytes=4KiB", NULL};
    int rc = 0;
    assert_true(cd_check(&m.host, "allreduce", ov, &rc));
    assert_int_equal(rc, -DLG_ENOTSUP);
    assert_non_null(strstr(m.last_error, "allreduce: this dlgauge has no collectives"));
    cd_result r;
    assert_true(cd_run(&m.host, "p2p", ov, 1, &r));
    assert_int_equal(r.setup_rc, -DLG_ENOTSUP);
    assert_non_null(strstr(m.last_error, "p2p: this dlgauge has no collectives"));
    mock_host_fini(&m);
}

static void many_ranks(const dlg_host *h, dlg_rank_info *out)
{
    (void)h;
    *out = (dlg_rank_info){sizeof *out, 0, 300000, "fake", "", 0, 1, 1};
}

/* 300000 ranks' sums of values up to 60 pass 2^24: float32 could not
 * hold them exactly, so its check could not tell right from wrong. */
static void test_float32_rank_limit(void **state)
{
    (void)state;
    mock_host m;
    mock_host_init(&m);
    m.host.comm_info = many_ranks;
    const char *f32[] = {"bytes=4KiB", "type=float32", NULL}, *f64[] = {"bytes=4KiB", "type=float64", NULL};
    int rc = 0;
    assert_true(cd_check(&m.host, "allreduce", f32, &rc));
    assert_int_equal(rc, -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "type = float32: the sums of 300000 ranks are not exact in float32"));
    assert_true(cd_check(&m.host, "allreduce", f64, &rc));
    assert_int_equal(rc, 0);
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_allreduce_f32, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_allreduce_f64, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_allreduce_i64, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_p2p_f32, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_p2p_i64, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_check_refuses, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_device_refused, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_ops_per_step, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_ops_refused, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_no_device, hfx_setup, hfx_teardown),
        cmocka_unit_test(test_host_without_comm),
        cmocka_unit_test(test_float32_rank_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
