/* Host-side logic of the CUDA backend, tested without a GPU: the conv
 * algorithm cache file, device/precision selection, the GPU peak table and
 * NVML being absent. */
#include "cuda/cuda_algo_cache.h"
#include "cuda/cuda_half_cvt.h"
#include "cuda/cuda_device.h"
#include "gpu_nvml.h"
#include "gpu_sampler.h"

#include <dlgauge/plugin.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static void tmp_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "/tmp/dlg_cuda_host_%d_%s", (int)getpid(), name);
}

static void test_cache_round_trip(void **st)
{
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "algo.cache");
    dlg_algo_cache a, b, other;
    dlg_algo_cache_init(&a, "NVIDIA H200_cudnn91900_fp32");
    assert_int_equal(dlg_algo_cache_put(&a, "fwd:n64c3h224w224:o64:k7x7", 1, 2, 1234567), 0);
    assert_int_equal(dlg_algo_cache_put(&a, "bwdf:n64c64h56w56:o64:k3x3", 5, 0, 0), 0);
    assert_int_equal(dlg_algo_cache_put(&a, "fwd:n64c3h224w224:o64:k7x7", 6, 1, 42), 0); /* update */
    assert_int_equal(a.n, 2);
    assert_int_equal(dlg_algo_cache_put(&a, "has space", 1, 1, 1), -DLG_EINVAL);
    assert_int_equal(dlg_algo_cache_save(&a, path, err, sizeof err), 0);

    dlg_algo_cache_init(&b, "NVIDIA H200_cudnn91900_fp32");
    assert_int_equal(dlg_algo_cache_load(&b, path, err, sizeof err), 0);
    assert_int_equal(b.n, 2);
    assert_false(b.dirty);
    const dlg_algo_entry *e = dlg_algo_cache_get(&b, "fwd:n64c3h224w224:o64:k7x7");
    assert_non_null(e);
    assert_int_equal(e->algo, 6);
    assert_int_equal(e->math, 1);
    assert_int_equal(e->ws, 42);
    e = dlg_algo_cache_get(&b, "bwdf:n64c64h56w56:o64:k3x3");
    assert_non_null(e);
    assert_int_equal(e->algo, 5);
    assert_null(dlg_algo_cache_get(&b, "fwd:other"));

    /* another GPU's file is ignored, not an error */
    dlg_algo_cache_init(&other, "NVIDIA A100_cudnn91900_fp32");
    assert_int_equal(dlg_algo_cache_load(&other, path, err, sizeof err), 0);
    assert_int_equal(other.n, 0);
    /* a missing file is a first run */
    assert_int_equal(dlg_algo_cache_load(&other, "/nonexistent/algo.cache", err, sizeof err), 0);
    dlg_algo_cache_free(&a);
    dlg_algo_cache_free(&b);
    dlg_algo_cache_free(&other);
    unlink(path);
}

static void test_cache_corrupt(void **st)
{
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "bad.cache");
    FILE *f = fopen(path, "w");
    fputs("dlgauge-algo-cache 1 tag\nfwd:a 1 0 10\nfwd:b one 0 10\n", f);
    fclose(f);
    dlg_algo_cache c;
    dlg_algo_cache_init(&c, "tag");
    assert_int_equal(dlg_algo_cache_load(&c, path, err, sizeof err), -DLG_ECORRUPT);
    assert_non_null(strstr(err, ":3:"));
    assert_non_null(strstr(err, path));
    dlg_algo_cache_free(&c);

    f = fopen(path, "w");
    fputs("something else\n", f);
    fclose(f);
    dlg_algo_cache_init(&c, "tag");
    assert_int_equal(dlg_algo_cache_load(&c, path, err, sizeof err), -DLG_ECORRUPT);
    assert_non_null(strstr(err, ":1:"));
    dlg_algo_cache_free(&c);
    unlink(path);
}

static float f_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* bf16 host conversion: round to nearest even, NaN/inf, exact round trip */
static void test_bf16_convert(void **st)
{
    (void)st;
    assert_int_equal(dlg_bf16_from_f32(1.0f), 0x3f80);
    assert_true(dlg_bf16_to_f32(0x3f80) == 1.0f);
    assert_int_equal(dlg_bf16_from_f32(f_of(0x3f808000u)), 0x3f80); /* tie, even stays */
    assert_int_equal(dlg_bf16_from_f32(f_of(0x3f818000u)), 0x3f82); /* tie, odd rounds up */
    assert_int_equal(dlg_bf16_from_f32(f_of(0x3f808001u)), 0x3f81); /* above the tie */
    assert_int_equal(dlg_bf16_from_f32(f_of(0x3f807fffu)), 0x3f80); /* below the tie */
    assert_int_equal(dlg_bf16_from_f32(-2.5f), 0xc020);
    assert_int_equal(dlg_bf16_from_f32(3.14159265f), 0x4049);
    assert_int_equal(dlg_bf16_from_f32(INFINITY), 0x7f80);
    assert_int_equal(dlg_bf16_from_f32(-INFINITY), 0xff80);
    assert_int_equal(dlg_bf16_from_f32(f_of(0x7f7fffffu)), 0x7f80); /* FLT_MAX overflows */
    assert_true(isnan(dlg_bf16_to_f32(dlg_bf16_from_f32(NAN))));
    assert_true(isnan(dlg_bf16_to_f32(dlg_bf16_from_f32(f_of(0x7f800001u))))); /* stays NaN */
    int bad = 0;
    for (uint32_t v = 0; v < 0x10000u; v++) {
        float f = dlg_bf16_to_f32((uint16_t)v);
        if (!isnan(f) && dlg_bf16_from_f32(f) != v)
            bad++;
    }
    assert_int_equal(bad, 0);
    float src[3] = {0.5f, -0.0f, 1e-3f}, back[3];
    uint16_t mid[3];
    dlg_bf16_from_f32_n(src, mid, 3);
    dlg_bf16_to_f32_n(mid, back, 3);
    assert_int_equal(mid[1], 0x8000);
    assert_true(back[0] == 0.5f && back[1] == 0.0f && signbit(back[1]));
    assert_true(fabsf(back[2] - 1e-3f) <= 1e-3f / 256);
}

static void test_parse_backend(void **st)
{
    int dev = -1, tf32 = -1;
    assert_int_equal(dlg_cuda_parse_backend("cuda", &dev, &tf32), 0);
    assert_int_equal(dev, 0);
    assert_int_equal(tf32, 0);
    assert_int_equal(dlg_cuda_parse_backend("cuda:3", &dev, &tf32), 0);
    assert_int_equal(dev, 3);
    assert_int_equal(dlg_cuda_parse_backend("cuda-tf32:7", &dev, &tf32), 0);
    assert_int_equal(dev, 7);
    assert_int_equal(tf32, 1);
    assert_int_equal(dlg_cuda_parse_backend("cuda-bf16:2", &dev, &tf32), 0);
    assert_int_equal(dev, 2);
    assert_int_equal(tf32, 2);
    assert_int_equal(dlg_cuda_parse_backend("cuda-bf16x", &dev, &tf32), -DLG_EINVAL);
    assert_int_equal(dlg_cuda_parse_backend("cuda:8", &dev, &tf32), -DLG_EINVAL);
    assert_int_equal(dlg_cuda_parse_backend("cuda:", &dev, &tf32), -DLG_EINVAL);
    assert_int_equal(dlg_cuda_parse_backend("cuda:-1", &dev, &tf32), -DLG_EINVAL);
    assert_int_equal(dlg_cuda_parse_backend("cuda:1x", &dev, &tf32), -DLG_EINVAL);
    assert_int_equal(dlg_cuda_parse_backend("cudax", &dev, &tf32), -DLG_EINVAL);
    assert_int_equal(dlg_cuda_parse_backend("cpu", &dev, &tf32), -DLG_EINVAL);
}

static void test_device_select(void **st)
{
    dlg_device_choice c;
    char err[200];
    /* auto: CPU with a one-line note when there is no device */
    assert_int_equal(dlg_device_select("auto", NULL, 0, "cpu", &c, err, sizeof err), 0);
    assert_false(c.cuda);
    assert_string_equal(c.backend, "cpu");
    assert_non_null(strstr(c.note, "no CUDA device"));
    assert_int_equal(dlg_device_select("auto", "fp32", 2, "cpu", &c, err, sizeof err), 0);
    assert_true(c.cuda);
    assert_string_equal(c.backend, "cuda:0");
    assert_string_equal(c.note, "");
    assert_int_equal(dlg_device_select("auto", "tf32", 1, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda-tf32:0");
    assert_int_equal(dlg_device_select("cuda:1", "fp32", 2, "ref", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda:1");
    assert_int_equal(dlg_device_select("cpu", "fp32", 2, "ref", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "ref");
    /* errors, each with a message */
    assert_int_equal(dlg_device_select("cuda:0", "fp32", 0, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    assert_non_null(strstr(err, "no CUDA device"));
    assert_int_equal(dlg_device_select("cuda:2", "fp32", 2, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    assert_non_null(strstr(err, "0..1"));
    assert_int_equal(dlg_device_select("gpu", "fp32", 1, "cpu", &c, err, sizeof err), -DLG_EINVAL);
    assert_int_equal(dlg_device_select("auto", "fp64", 1, "cpu", &c, err, sizeof err), -DLG_EINVAL);
    assert_int_equal(dlg_device_select("cpu", "bf16", 1, "cpu", &c, err, sizeof err), -DLG_ENOTSUP);
    assert_int_equal(dlg_device_select("auto", "tf32", 0, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    /* bf16 has its backend; fp16 is not there yet: said, not ignored */
    assert_int_equal(dlg_device_select("cuda:1", "bf16", 2, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda-bf16:1");
    assert_int_equal(dlg_device_select("cuda:0", "fp16", 1, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    assert_non_null(strstr(err, "not implemented"));
}

static void test_peak_table(void **st)
{
    const dlg_gpu_peak *p = dlg_gpu_peak_find("NVIDIA H200");
    assert_non_null(p);
    assert_true(p->fp32 > 60 && p->fp32 < 70);
    assert_true(p->tf32 > 400 && p->fp16 > 900);
    p = dlg_gpu_peak_find("NVIDIA H100 PCIe");
    assert_non_null(p);
    assert_string_equal(p->match, "H100 PCIe"); /* longest match wins over "H100" */
    p = dlg_gpu_peak_find("NVIDIA L40S");
    assert_string_equal(p->match, "L40S");
    p = dlg_gpu_peak_find("NVIDIA A100-SXM4-80GB");
    assert_string_equal(p->match, "A100");
    assert_null(dlg_gpu_peak_find("Some Future GPU"));
    assert_null(dlg_gpu_peak_find(NULL));
}

static void test_nvml_absent(void **st)
{
    dlg_nvml *n = (dlg_nvml *)1;
    char why[256] = "";
    assert_int_equal(dlg_nvml_open(&n, "/nonexistent/libnvidia-ml.so.1", why, sizeof why),
                     -DLG_ENOTSUP);
    assert_null(n);
    assert_non_null(strstr(why, "NVML not available"));
    /* every query on a missing NVML is a clean "no" */
    uint64_t mj;
    char name[64];
    assert_int_equal(dlg_nvml_count(NULL), 0);
    assert_true(dlg_nvml_energy_mj(NULL, 0, &mj) < 0);
    assert_true(dlg_nvml_name(NULL, 0, name, sizeof name) < 0);
    dlg_nvml_close(NULL);
}

/* NVML present (a fake library): names, peak lookup, the sampler. */
static void test_nvml_fake_sampler(void **st)
{
    dlg_nvml *n = NULL;
    char why[256] = "", name[96];
    assert_int_equal(dlg_nvml_open(&n, DLG_FAKE_NVML, why, sizeof why), 0);
    assert_int_equal(dlg_nvml_count(n), 1);
    assert_int_equal(dlg_nvml_name(n, 0, name, sizeof name), 0);
    assert_string_equal(name, "NVIDIA H200 (fake)");
    assert_string_equal(dlg_gpu_peak_find(name)->match, "H200");
    assert_true(dlg_nvml_name(n, 1, name, sizeof name) < 0);

    dlg_gpu_sampler *s;
    assert_int_equal(dlg_gpu_sampler_start(&s, n, 3, 10), -DLG_ENOTSUP); /* no such GPU */
    assert_int_equal(dlg_gpu_sampler_start(&s, n, 0, 10), 0);
    struct timespec d = {0, 250000000}; /* 0.25 s at 250 W = 62.5 J */
    nanosleep(&d, NULL);
    dlg_gpu_stats g;
    assert_int_equal(dlg_gpu_sampler_stop(s, &g), 0);
    printf("  samples %d util %.1f%% power %.1f W energy %.2f J over %.3f s, mem peak %llu\n",
           g.samples, g.gpu_util, g.power_avg_w, g.energy_j, g.seconds,
           (unsigned long long)g.gpu_mem_peak);
    assert_true(g.samples >= 3 && g.samples <= 26); /* 10 ms period, 0.25 s; a busy CI host may skip some */
    assert_true(g.gpu_util > 79.9 && g.gpu_util < 80.1);
    assert_true(g.power_avg_w > 249.9 && g.power_avg_w < 250.1);
    assert_true(g.energy_counter);
    /* the counter covers start..stop: 250 W x the measured time */
    assert_true(fabs(g.energy_j - 250.0 * g.seconds) < 0.5);
    assert_true(g.gpu_mem_peak >= (1ull << 30) && g.gpu_mem_peak < (2ull << 30));
    dlg_nvml_close(n);

    /* without NVML there is no sampler, and stopping none is harmless */
    assert_int_equal(dlg_gpu_sampler_start(&s, NULL, 0, 100), -DLG_ENOTSUP);
    assert_null(s);
    assert_int_equal(dlg_gpu_sampler_stop(NULL, &g), -DLG_EINVAL);
    assert_int_equal(g.samples, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_round_trip), cmocka_unit_test(test_cache_corrupt),
        cmocka_unit_test(test_parse_backend), cmocka_unit_test(test_bf16_convert),    cmocka_unit_test(test_device_select),
        cmocka_unit_test(test_peak_table),       cmocka_unit_test(test_nvml_absent),
        cmocka_unit_test(test_nvml_fake_sampler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
