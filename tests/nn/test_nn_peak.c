/* Peak FP32 rate for "% of peak": FLOPs per cycle from the CPU's flags and
 * family (known answers from canned /proc/cpuinfo text), and the measured
 * clock that dlg_peak_detect puts in place of a VM's nominal one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peak.h"

static void test_flops_per_cycle_from_flags(void **st)
{
    dlg_peak p;
    dlg_peak_from_text(&p,
                       "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
                       "cpu MHz\t\t: 2445.404\nflags\t\t: fpu sse2 avx fma avx2\n",
                       NULL, 2);
    assert_int_equal(p.flops_per_cycle, 32);
    assert_true(fabs(p.ghz - 2.445404) < 1e-9);
    assert_true(fabs(p.flops - 2 * 2.445404e9 * 32) < 1);
    assert_string_equal(p.isa, "avx2+fma");
    /* Zen 1 splits 256-bit FMAs over 128-bit pipes */
    dlg_peak_from_text(&p, "vendor_id : AuthenticAMD\ncpu family : 23\nflags : avx2 fma\n",
                       "3000000", 4);
    assert_int_equal(p.flops_per_cycle, 16);
    assert_true(fabs(p.flops - 4 * 3e9 * 16) < 1);
    assert_non_null(strstr(p.source, "cpuinfo_max_freq"));
    /* Zen 2 (Rome, model 49) is family 23 too, with 256-bit pipes; "model
     * name" must not be read as "model" */
    dlg_peak_from_text(&p, "vendor_id : AuthenticAMD\ncpu family : 23\nmodel : 49\n"
                           "model name : AMD EPYC 7742 64-Core Processor\nflags : avx2 fma\n",
                       "3000000", 4);
    assert_int_equal(p.flops_per_cycle, 32);
    dlg_peak_from_text(&p, "vendor_id : AuthenticAMD\ncpu family : 23\nmodel : 1\n"
                           "model name : AMD EPYC 7601 32-Core Processor\nflags : avx2 fma\n",
                       "3000000", 4);
    assert_int_equal(p.flops_per_cycle, 16);
    /* AVX-512 on Intel: two 16-wide FMA units assumed */
    dlg_peak_from_text(&p, "vendor_id : GenuineIntel\ncpu family : 6\nflags : avx2 fma avx512f\n",
                       "2000000", 1);
    assert_int_equal(p.flops_per_cycle, 64);
    /* Zen 5 (family 26): 512-bit FMA pipes in EPYC Turin (model 2) and the
     * desktop parts, 256-bit ones in the mobile Strix Point (model 0x24),
     * and the source names the CPU, not a Xeon */
    dlg_peak_from_text(&p, "vendor_id : AuthenticAMD\ncpu family : 26\nmodel : 2\nflags : avx2 fma avx512f\n",
                       "2000000", 1);
    assert_int_equal(p.flops_per_cycle, 64);
    assert_non_null(strstr(p.source, "Zen 5's two 512-bit FMA pipes"));
    assert_null(strstr(p.source, "Xeon"));
    dlg_peak_from_text(&p, "vendor_id : AuthenticAMD\ncpu family : 26\nmodel : 36\nflags : avx2 fma avx512f\n",
                       "2000000", 1);
    assert_int_equal(p.flops_per_cycle, 32);
    assert_non_null(strstr(p.source, "mobile Zen 5"));
    /* nothing known: no peak rather than a made-up one */
    dlg_peak_from_text(&p, "flags : \n", NULL, 1);
    assert_true(p.flops == 0);
}

/* cpu-bf16's peak: AVX512_BF16 dot products at twice the FMA rate (Zen 4
 * too), AMX's tiles where present, else the fp32 rate (emulated) */
static void test_bf16_rate(void **st)
{
    dlg_peak p;
    const char *zen4 = "vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 17\nflags : avx2 fma avx512f avx512_bf16\n";
    dlg_peak_from_text_prec(&p, zen4, "3000000", 2, true);
    assert_int_equal(p.flops_per_cycle, 64);
    assert_non_null(strstr(p.source, "AVX512_BF16"));
    dlg_peak_from_text_prec(&p, zen4, "3000000", 2, false);
    assert_int_equal(p.flops_per_cycle, 32);
    dlg_peak_from_text_prec(&p, "vendor_id : GenuineIntel\ncpu family : 6\nflags : avx2 fma avx512f avx512_bf16 amx_bf16\n",
                            "2000000", 1, true);
    assert_int_equal(p.flops_per_cycle, 1024);
    dlg_peak_from_text_prec(&p, "vendor_id : GenuineIntel\ncpu family : 6\nflags : avx2 fma avx512f\n", "2000000", 1,
                            true);
    assert_int_equal(p.flops_per_cycle, 64);
    assert_non_null(strstr(p.source, "emulated"));
}

static void test_detect_measures_the_clock(void **st)
{
    dlg_peak p;
    dlg_peak_detect(&p, 1);
    printf("  %s\n", p.source);
#if defined(__x86_64__)
    if (p.flops_per_cycle > 0) {
        assert_non_null(strstr(p.source, "measured"));
        assert_true(p.ghz > 0.2 && p.ghz < 10);
        assert_true(fabs(p.flops - p.ghz * 1e9 * p.flops_per_cycle) < 1e3);
    }
#endif
}

/* GPU peaks come from the table `dlgauge sysinfo` uses, by the math the
 * backend runs; a cpu backend name keeps the cores' peak. */
static void test_gpu_peak_by_math(void **st)
{
    dlg_peak p;
    dlg_peak_from_gpu(&p, "NVIDIA H200", 0);
    assert_true(p.flops == 67.0e12);
    assert_non_null(strstr(p.source, "NVIDIA H200: dense FP32 peak 67.0 TFLOP/s"));
    dlg_peak_from_gpu(&p, "NVIDIA H200", 1);
    assert_true(p.flops == 494.7e12);
    dlg_peak_from_gpu(&p, "NVIDIA H200", 2);
    assert_true(p.flops == 989.4e12);
    assert_non_null(strstr(p.source, "BF16 tensor-core"));
    dlg_peak_from_gpu(&p, "NVIDIA A100-SXM4-80GB", 3);
    assert_true(p.flops == 312.0e12);
    assert_non_null(strstr(p.source, "FP16 tensor-core"));
    dlg_peak_from_gpu(&p, "Tesla V100-SXM2-16GB", 1); /* no TF32: the FP32 rate */
    assert_true(p.flops == 15.7e12);
    assert_non_null(strstr(p.source, "no TF32"));
    dlg_peak_from_gpu(&p, "Some Future GPU", 2);
    assert_true(p.flops == 0);
    assert_non_null(strstr(p.source, "not in dlgauge's peak table"));
    dlg_peak_for_backend(&p, "ref", 1);
    assert_string_not_equal(p.isa, "gpu");
    assert_non_null(strstr(p.source, "cores"));
}

/* dlg_fields is the host's; here a record of what was added. */
struct dlg_fields {
    const char *key[8];
    double num[8];
    const char *str[8];
    int n;
};
static void rec_double(dlg_fields *f, const char *k, double v) { f->key[f->n] = k, f->num[f->n++] = v; }
static void rec_int(dlg_fields *f, const char *k, int64_t v) { f->key[f->n] = k, f->num[f->n++] = (double)v; }
static void rec_string(dlg_fields *f, const char *k, const char *v) { f->key[f->n] = k, f->str[f->n++] = v; }

static int rec_find(const dlg_fields *f, const char *k)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->key[i], k) == 0)
            return i;
    return -1;
}

/* 10 items of 2 GFLOP in 4 s on a 10 GFLOP/s machine: 5 GFLOP/s, 50%. */
static void test_speed_fields(void **st)
{
    (void)st;
    const dlg_report_api api = {rec_double, rec_int, rec_string};
    dlg_peak p = {.flops = 10e9};
    snprintf(p.source, sizeof p.source, "test peak");
    dlg_fields f = {0};
    dlg_peak_report(&p, 2e9, 10, 4000000000ull, &api, &f);
    assert_int_equal(f.n, 5);
    assert_true(f.num[rec_find(&f, "flops_per_item")] == 2e9);
    assert_true(fabs(f.num[rec_find(&f, "gflops")] - 5) < 1e-12);
    assert_true(fabs(f.num[rec_find(&f, "pct_peak")] - 50) < 1e-12);
    assert_true(fabs(f.num[rec_find(&f, "peak_gflops")] - 10) < 1e-12);
    assert_string_equal(f.str[rec_find(&f, "peak_source")], "test peak");
    /* nothing timed, peak unknown: no rate, no percentage, no peak */
    dlg_peak none = {0};
    dlg_fields g = {0};
    dlg_peak_report(&none, 2e9, 0, 0, &api, &g);
    assert_int_equal(g.n, 2);
    assert_true(rec_find(&g, "gflops") < 0 && rec_find(&g, "peak_gflops") < 0);
}

int main(void)
{
    setenv("DLGAUGE_TUNE", "off", 1); /* measured every call: no record of this host touched */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flops_per_cycle_from_flags),
        cmocka_unit_test(test_bf16_rate), cmocka_unit_test(test_detect_measures_the_clock),
        cmocka_unit_test(test_gpu_peak_by_math),
        cmocka_unit_test(test_speed_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
