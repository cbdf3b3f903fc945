/* Workload-owned fields cover the timed steps only: each workload's
 * begin_timed (called by the runner after the warm-up) restarts them
 * (stream, io, gemm, and the CNN workloads' gflops and profile).
 * Warm-up steps are made measurably different: stream's run on a fake
 * clock 1000x faster, io's reads are counted. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "workload_run.h"

/* A mock host whose clock advances `tick` ns per reading. */
typedef struct fake_clock {
    mock_host m; /* first: the plugin's host pointer is this */
    uint64_t now, tick;
} fake_clock;

static uint64_t fake_now(const dlg_host *h)
{
    fake_clock *c = (fake_clock *)(void *)h;
    return c->now += c->tick;
}

typedef struct drive {
    fake_clock c;
    const dlg_workload_ops *ops;
    void *state;
    wr_result r; /* report fields, through workload_run's API */
} drive;

/* setup; `warmup` steps at clock tick 1 ns; begin_timed; `timed` steps at
 * 1000 ns; report. */
static void run(drive *d, const char *so, const char *name, const char *const *over, int warmup, int timed)
{
    memset(d, 0, sizeof *d);
    const dlg_plugin_desc *desc = mock_load_plugin(so, DLG_KIND_WORKLOAD, name);
    assert_non_null(desc);
    d->ops = desc->ops;
    assert_true(d->ops->version >= 2 && d->ops->begin_timed);
    dlg_value vals[64];
    memset(vals, 0, sizeof vals);
    assert_int_equal(mock_options(desc->options, vals, over), 0);
    mock_host_init(&d->c.m);
    d->c.m.host.now_ns = fake_now;
    d->c.tick = 1;
    dlg_job_info job = {.struct_size = sizeof job, .job = "t", .cpus = 1, .seed = 7};
    if (d->ops->setup(&d->c.m.host, vals, &job, &d->state) != 0)
        fail_msg("setup: %s", d->c.m.last_error);
    dlg_step s;
    for (int i = 0; i < warmup; i++)
        assert_int_equal(d->ops->step(d->state, &s), 0);
    assert_int_equal(d->ops->begin_timed(d->state), 0);
    d->c.tick = 1000;
    for (int i = 0; i < timed; i++)
        assert_int_equal(d->ops->step(d->state, &s), 0);
    if (d->ops->report(d->state, &wr_api, (dlg_fields *)&d->r) != 0)
        fail_msg("report: %s", d->c.m.last_error);
    d->ops->teardown(d->state);
    mock_host_fini(&d->c.m);
}

/* stream's best rate: 1 KiB arrays (128 doubles), copy moves 2048 bytes
 * per pass, 1000 ns per timed pass; the warm-up's 1 ns passes are not it. */
static void stream_best_is_timed(void **st)
{
    (void)st;
    static const char *const over[] = {"array_size=1KiB", "kernel=copy", "threads=1", NULL};
    drive d;
    run(&d, "diag.so", "stream", over, 3, 2);
    assert_true(wr_double(&d.r, "copy_bytes_per_s") == 2048.0 * 1e9 / 1000.0);
}

/* io: 3 warm-up steps of 2 reads, 1 timed step: ios and bytes of that step. */
static void io_counts_are_timed(void **st)
{
    (void)st;
    char path[] = TOOLS_TEST_DIR "/timed-io-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static char block[64 * 1024];
    memset(block, 7, sizeof block);
    assert_int_equal(write(fd, block, sizeof block), (ssize_t)sizeof block);
    close(fd);
    char data[600];
    snprintf(data, sizeof data, "data=raw:%s", path);
    const char *const over[] = {data, "block=4KiB", "step_ios=2", "cache=none", "checksum=true", NULL};
    drive d;
    run(&d, "tools.so", "io", over, 3, 1);
    unlink(path);
    assert_int_equal(wr_int(&d.r, "ios"), 2);
    assert_int_equal(wr_int(&d.r, "io_bytes"), 8192);
}

/* gemm: no timed step yet, so no gflops from the warm-up's steps. */
static void gemm_gflops_are_timed(void **st)
{
    (void)st;
    static const char *const over[] = {"m=16", "n=16", "k=16", NULL};
    drive d;
    run(&d, "kernels.so", "gemm", over, 3, 0);
    assert_null(wr_field(&d.r, "gflops"));
    run(&d, "kernels.so", "gemm", over, 3, 2);
    assert_true(wr_double(&d.r, "gflops") > 0);
}

/* The CNN workloads (caffe's four, inception-v3): gflops, pct_peak and
 * the layer profile leave out the warm-up steps too. */
static void cnn_gflops_are_timed(void **st)
{
    (void)st;
    static const char *const over[] = {"batch=1", "crop=67", "classes=10", "mode=infer", "profile=true", NULL};
    drive d;
    run(&d, "caffe.so", "alexnet", over, 2, 0);
    assert_null(wr_field(&d.r, "gflops"));
    assert_true(wr_double(&d.r, "layers_ms") == 0);
    run(&d, "caffe.so", "alexnet", over, 2, 1);
    assert_true(wr_double(&d.r, "gflops") > 0);
    assert_true(wr_double(&d.r, "layers_ms") > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_best_is_timed),
        cmocka_unit_test(io_counts_are_timed),
        cmocka_unit_test(gemm_gflops_are_timed),
        cmocka_unit_test(cnn_gflops_are_timed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
