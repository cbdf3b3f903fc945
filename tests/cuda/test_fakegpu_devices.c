/* The stand-in cudart with FAKEGPU_DEVICES=2 (fakegpu/fake_runtime.cc):
 * two devices, a current one per thread (0 until a thread sets one), ids
 * past the last refused as cudaErrorInvalidDevice, each device's memory
 * counted apart, and FAKEGPU_TRACE_DEVICE's lines naming the device set,
 * allocated on and given a stream.  Called directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda_runtime.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char trace_path[64];

static void test_count_and_ids(void **state)
{
    (void)state;
    int n = 0, d = -1;
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    assert_int_equal(n, 2);
    assert_int_equal(cudaGetDevice(&d), cudaSuccess);
    assert_int_equal(d, 0);
    assert_int_equal(cudaSetDevice(2), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaSetDevice(-1), cudaErrorInvalidDevice);
    cudaGetLastError();
    struct cudaDeviceProp p0, p1, p2;
    assert_int_equal(cudaGetDeviceProperties(&p0, 0), cudaSuccess);
    assert_int_equal(cudaGetDeviceProperties(&p1, 1), cudaSuccess);
    assert_int_not_equal(p0.pciBusID, p1.pciBusID);
    assert_int_equal(cudaGetDeviceProperties(&p2, 2), cudaErrorInvalidDevice);
    cudaGetLastError();
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaGetDevice(&d), cudaSuccess);
    assert_int_equal(d, 1);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

static void *other_thread(void *arg)
{
    int *d = arg;
    cudaGetDevice(d); /* a new thread starts on device 0 */
    return NULL;
}

static void test_per_thread(void **state)
{
    (void)state;
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    pthread_t t;
    int d = -1;
    assert_int_equal(pthread_create(&t, NULL, other_thread, &d), 0);
    pthread_join(t, NULL);
    assert_int_equal(d, 0);
    assert_int_equal(cudaGetDevice(&d), cudaSuccess);
    assert_int_equal(d, 1);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

/* 1 MiB on device 1 lowers device 1's free memory only */
static void test_memory_per_device(void **state)
{
    (void)state;
    size_t free0, free1, free1b, total, after0;
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&free1, &total), cudaSuccess);
    void *p = NULL;
    cudaStream_t s;
    assert_int_equal(cudaMalloc(&p, 1 << 20), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&free1b, &total), cudaSuccess);
    assert_true(free1 - free1b == 1 << 20);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&free0, &total), cudaSuccess);
    assert_true(free0 == total);
    assert_int_equal(cudaFree(p), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&after0, &total), cudaSuccess);
    assert_true(after0 == free1);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

/* every (what, device) once, in the order first done: the tests above */
static void test_trace(void **state)
{
    (void)state;
    FILE *f = fopen(trace_path, "r");
    assert_non_null(f);
    char got[512] = "", line[96];
    while (fgets(line, sizeof line, f))
        strncat(got, line, sizeof got - strlen(got) - 1);
    fclose(f);
    char want[512];
    long pid = (long)getpid();
    snprintf(want, sizeof want, "- %ld set 1\n- %ld set 0\n- %ld malloc 1\n- %ld stream 1\n", pid,
             pid, pid, pid);
    assert_string_equal(got, want);
}

int main(void)
{
    /* before the first call: the stand-in reads them once */
    snprintf(trace_path, sizeof trace_path, "/tmp/fakegpu_devices.%ld.trace", (long)getpid());
    unlink(trace_path);
    setenv("FAKEGPU_DEVICES", "2", 1);
    setenv("FAKEGPU_TRACE_DEVICE", trace_path, 1);
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    unsetenv("SLURM_PROCID");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_and_ids), cmocka_unit_test(test_per_thread),
        cmocka_unit_test(test_memory_per_device), cmocka_unit_test(test_trace)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(trace_path);
    return rc;
}
