/* Host-side logic of the CUDA backend, tested without a GPU: the conv
 * algorithm cache file, device/precision selection, the GPU peak table and
 * NVML being absent. */
#include "cuda/cuda_algo_cache.h"
#include "cuda/cuda_half_cvt.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_graph_sm.h"
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

    /* values cuDNN cannot have: each names its line and what is wrong */
    static const struct {
        const char *line, *why;
    } bad[] = {
        {"fwd:a 8 0 10\n", "algorithm 8: cuDNN has 8"},   /* FWD_ALGO_COUNT is 8 */
        {"bwdd:a 6 0 10\n", "algorithm 6: cuDNN has 6"},
        {"bwdf:a 7 0 10\n", "algorithm 7: cuDNN has 7"},
        {"fwd:a -1 0 10\n", "algorithm -1"},
        {"fwd:a 1 4 10\n", "math type 4"},
        {"fwd:a 1 0 -5\n", "workspace -5 bytes"},
        {"conv:a 1 0 10\n", "no direction"},
        {"fwd:a 1 0 10 extra\n", "expected '<key>"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(path, "w");
        fprintf(f, "dlgauge-algo-cache 1 tag\nbwdf:ok 6 3 0\n%s", bad[i].line);
        fclose(f);
        dlg_algo_cache_init(&c, "tag");
        err[0] = 0;
        assert_int_equal(dlg_algo_cache_load(&c, path, err, sizeof err), -DLG_ECORRUPT);
        if (!strstr(err, ":3: ") || !strstr(err, bad[i].why))
            fail_msg("'%s' gave '%s'", bad[i].line, err);
        dlg_algo_cache_free(&c);
    }

    /* an empty file (made before the first run) is an empty cache */
    f = fopen(path, "w");
    fclose(f);
    dlg_algo_cache_init(&c, "tag");
    assert_int_equal(dlg_algo_cache_load(&c, path, err, sizeof err), 0);
    assert_int_equal(c.n, 0);
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
    assert_int_equal(dlg_cuda_parse_backend("cuda-fp16:5", &dev, &tf32), 0);
    assert_int_equal(dev, 5);
    assert_int_equal(tf32, 3);
    assert_int_equal(dlg_cuda_parse_backend("cuda-fp16", &dev, &tf32), 0);
    assert_int_equal(dev, 0);
    assert_int_equal(tf32, 3);
    assert_int_equal(dlg_cuda_parse_backend("cuda-fp16:8", &dev, &tf32), -DLG_EINVAL);
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
    assert_int_equal(dlg_device_select("auto", NULL, 0, 0, "cpu", &c, err, sizeof err), 0);
    assert_false(c.cuda);
    assert_string_equal(c.backend, "cpu");
    assert_non_null(strstr(c.note, "no CUDA device"));
    assert_int_equal(dlg_device_select("auto", "fp32", 2, 0, "cpu", &c, err, sizeof err), 0);
    assert_true(c.cuda);
    assert_string_equal(c.backend, "cuda:0");
    assert_string_equal(c.note, "device = auto: rank 0 on its node: cuda:0 (local rank mod 2 GPUs)");
    assert_int_equal(dlg_device_select("auto", "tf32", 1, 0, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda-tf32:0");
    assert_int_equal(dlg_device_select("cuda:1", "fp32", 2, 0, "ref", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda:1");
    assert_int_equal(dlg_device_select("cpu", "fp32", 2, 0, "ref", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "ref");
    /* errors, each with a message */
    assert_int_equal(dlg_device_select("cuda:0", "fp32", 0, 0, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    assert_non_null(strstr(err, "no CUDA device"));
    assert_int_equal(dlg_device_select("cuda:2", "fp32", 2, 0, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    assert_non_null(strstr(err, "0..1"));
    assert_int_equal(dlg_device_select("gpu", "fp32", 1, 0, "cpu", &c, err, sizeof err), -DLG_EINVAL);
    assert_int_equal(dlg_device_select("auto", "fp64", 1, 0, "cpu", &c, err, sizeof err), -DLG_EINVAL);
    /* bf16 on the CPU: oneDNN's bf16 backend; the reference backend has none */
    assert_int_equal(dlg_device_select("cpu", "bf16", 1, 0, "cpu", &c, err, sizeof err), 0);
    assert_false(c.cuda);
    assert_string_equal(c.backend, "cpu-bf16");
    assert_int_equal(dlg_device_select("auto", "bf16", 0, 0, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cpu-bf16");
    assert_int_equal(dlg_device_select("cpu", "bf16", 0, 0, "ref", &c, err, sizeof err), -DLG_ENOTSUP);
    assert_non_null(strstr(err, "ref backend runs fp32 only"));
    assert_null(strstr(err, "needs a CUDA device")); /* backend = cpu runs it */
    assert_non_null(strstr(err, "backend = cpu runs bf16"));
    assert_int_equal(dlg_device_select("auto", "tf32", 0, 0, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    /* bf16 and fp16 have their backends; fp16 on the CPU is an error, not fp32 */
    assert_int_equal(dlg_device_select("cuda:1", "bf16", 2, 0, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda-bf16:1");
    assert_int_equal(dlg_device_select("cuda:1", "fp16", 2, 0, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda-fp16:1");
    assert_true(c.cuda);
    assert_int_equal(dlg_device_select("auto", "fp16", 1, 0, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda-fp16:0");
    err[0] = '\0';
    assert_int_equal(dlg_device_select("cpu", "fp16", 1, 0, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    assert_non_null(strstr(err, "'fp16' needs a CUDA device"));
    assert_int_equal(dlg_device_select("auto", "fp16", 0, 0, "cpu", &c, err, sizeof err),
                     -DLG_ENOTSUP);
    assert_non_null(strstr(err, "'fp16' needs a CUDA device"));
}

/* One GPU per rank of a node: auto and a bare cuda take cuda:(local rank
 * mod the GPUs), local ranks 0..3 over 1, 2 and 3 GPUs; cuda:N stays N. */
static void test_device_select_local_rank(void **st)
{
    (void)st;
    dlg_device_choice c;
    char err[200], want[32], why[160];
    static const char *const asks[] = {"auto", "cuda"};
    for (int ndev = 1; ndev <= 3; ndev++)
        for (int lr = 0; lr < 4; lr++)
            for (int a = 0; a < 2; a++) {
                const char *dev = asks[a];
                assert_int_equal(dlg_device_select(dev, "fp32", ndev, lr, "cpu", &c, err, sizeof err), 0);
                assert_true(c.cuda);
                snprintf(want, sizeof want, "cuda:%d", lr % ndev);
                assert_string_equal(c.backend, want);
                snprintf(why, sizeof why, "device = %s: rank %d on its node: cuda:%d (local rank mod %d GPU%s)",
                         dev, lr, lr % ndev, ndev, ndev == 1 ? "" : "s");
                assert_string_equal(c.note, why);
                /* the precision keeps its backend, on the same GPU */
                assert_int_equal(dlg_device_select(dev, "tf32", ndev, lr, "cpu", &c, err, sizeof err), 0);
                snprintf(want, sizeof want, "cuda-tf32:%d", lr % ndev);
                assert_string_equal(c.backend, want);
                /* an index written is the one taken, whatever the rank */
                assert_int_equal(dlg_device_select("cuda:0", "fp32", ndev, lr, "cpu", &c, err, sizeof err), 0);
                assert_string_equal(c.backend, "cuda:0");
                assert_string_equal(c.note, "");
            }
    assert_int_equal(dlg_device_select("cuda:1", "fp16", 2, 2, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda-fp16:1");
    /* no GPU: auto runs on the CPU whatever the rank, a bare cuda is refused */
    assert_int_equal(dlg_device_select("auto", "fp32", 0, 3, "cpu", &c, err, sizeof err), 0);
    assert_false(c.cuda);
    assert_string_equal(c.backend, "cpu");
    assert_int_equal(dlg_device_select("cuda", "fp32", 0, 1, "cpu", &c, err, sizeof err), -DLG_ENOTSUP);
    assert_non_null(strstr(err, "device = cuda: no CUDA backend can run here"));
    /* a host that could not say (a negative rank) counts as local rank 0 */
    assert_int_equal(dlg_device_select("auto", "fp32", 3, -1, "cpu", &c, err, sizeof err), 0);
    assert_string_equal(c.backend, "cuda:0");
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

    /* a window shorter than the period: one reading, taken at the stop */
    assert_int_equal(dlg_gpu_sampler_start(&s, n, 0, 1000), 0);
    assert_int_equal(dlg_gpu_sampler_stop(s, &g), 0);
    assert_int_equal(g.samples, 1);
    assert_true(g.gpu_util > 79.9 && g.gpu_util < 80.1);
    assert_true(g.power_avg_w > 249.9 && g.power_avg_w < 250.1);
    assert_true(g.gpu_mem_peak >= (1ull << 30));
    dlg_nvml_close(n);

    /* without NVML there is no sampler, and stopping none is harmless */
    assert_int_equal(dlg_gpu_sampler_start(&s, NULL, 0, 100), -DLG_ENOTSUP);
    assert_null(s);
    assert_int_equal(dlg_gpu_sampler_stop(NULL, &g), -DLG_EINVAL);
    assert_int_equal(g.samples, 0);
}

/* ---- CUDA graphs: eligibility and the capture state machine ------------- */
static void test_graph_eligible(void **st)
{
    char why[200];
    assert_true(dlg_graph_eligible(DLG_GRAPHS_AUTO, false, NULL, why, sizeof why));
    assert_string_equal(why, "");
    assert_true(dlg_graph_eligible(DLG_GRAPHS_ON, false, NULL, why, sizeof why));
    assert_false(dlg_graph_eligible(DLG_GRAPHS_OFF, false, NULL, why, sizeof why));
    assert_string_equal(why, "graphs = false");
    assert_false(dlg_graph_eligible(DLG_GRAPHS_AUTO, false, "lstm1", why, sizeof why));
    assert_non_null(strstr(why, "layer 'lstm1' cannot be captured"));
    assert_false(dlg_graph_eligible(DLG_GRAPHS_ON, false, "lstm1", why, sizeof why));
    assert_false(dlg_graph_eligible((dlg_graphs)7, false, NULL, why, sizeof why));
    /* a profile's marks need eager launches, whatever graphs says */
    assert_false(dlg_graph_eligible(DLG_GRAPHS_AUTO, true, NULL, why, sizeof why));
    assert_non_null(strstr(why, "profile = true"));
    assert_false(dlg_graph_eligible(DLG_GRAPHS_ON, true, NULL, why, sizeof why));
    assert_false(dlg_graph_eligible(DLG_GRAPHS_OFF, true, NULL, why, sizeof why));
    assert_string_equal(why, "graphs = false");
    (void)st;
}

/* runs action a for k with outcome ok and returns the next action */
static dlg_graph_action sm_step(dlg_graph_sm *sm, const dlg_graph_key *k, bool ok)
{
    dlg_graph_action a = dlg_graph_sm_next(sm, k);
    dlg_graph_sm_done(sm, a, k, ok);
    return a;
}

static void test_graph_sm_warmup_capture_replay(void **st)
{
    dlg_graph_sm sm;
    dlg_graph_key k = {true, true, 0.1f, 0.9f, 5e-4f, false, 0};
    dlg_graph_sm_init(&sm, true);
    for (int i = 0; i < DLG_GRAPH_WARMUP; i++)
        assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_EAGER);
    assert_true(DLG_GRAPH_WARMUP >= 2);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_CAPTURE);
    for (int i = 0; i < 10; i++)
        assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_REPLAY);
    assert_int_equal(sm.captures, 1);
    /* a replay that fails (cudaGraphLaunch refused): eager from then on */
    assert_int_equal(sm_step(&sm, &k, false), DLG_GRAPH_REPLAY);
    for (int i = 0; i < 4; i++)
        assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_EAGER);

    /* a failed eager step does not count as warm-up */
    dlg_graph_sm_init(&sm, true);
    assert_int_equal(sm_step(&sm, &k, false), DLG_GRAPH_EAGER);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_EAGER);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_EAGER);
    assert_int_equal(dlg_graph_sm_next(&sm, &k), DLG_GRAPH_CAPTURE);

    /* not eligible: eager for ever */
    dlg_graph_sm_init(&sm, false);
    for (int i = 0; i < 10; i++)
        assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_EAGER);
}

/* lr schedules: a step schedule re-captures once per change; an lr that
 * changes every step (clipping) turns graphs off after DLG_GRAPH_CHURN */
static void test_graph_sm_hyperparams(void **st)
{
    dlg_graph_sm sm;
    dlg_graph_key k = {true, true, 0.1f, 0.9f, 5e-4f, false, 0};
    dlg_graph_sm_init(&sm, true);
    while (dlg_graph_sm_next(&sm, &k) == DLG_GRAPH_EAGER)
        sm_step(&sm, &k, true);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_CAPTURE);
    for (int epoch = 0; epoch < 5; epoch++) { /* lr /= 10 every few steps */
        k.lr /= 10;
        assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_CAPTURE);
        assert_true(sm.key.lr == k.lr);
        assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_REPLAY);
        assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_REPLAY);
    }
    assert_int_equal(sm.captures, 6);
    assert_false(sm.off);
    k.momentum = 0.95f; /* any hyper-parameter counts */
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_CAPTURE);
    k.decay = 0;
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_CAPTURE);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_REPLAY); /* ends the run of changes */
    /* clipping holds other kernels, and its threshold is a kernel argument */
    k.clip = true, k.max_norm = 0.25;
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_CAPTURE);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_REPLAY);
    k.max_norm = 0.5;
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_CAPTURE);
    assert_true(sm.key.clip && sm.key.max_norm == 0.5);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_REPLAY);

    /* churn: a new lr on every step */
    bool turned_off = false;
    for (int i = 0; i < DLG_GRAPH_CHURN; i++) {
        k.lr *= 0.5f;
        dlg_graph_action a = dlg_graph_sm_next(&sm, &k);
        assert_int_equal(a, DLG_GRAPH_CAPTURE);
        turned_off = dlg_graph_sm_done(&sm, a, &k, true);
    }
    assert_true(turned_off);
    assert_true(sm.off);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_EAGER);
    assert_int_equal(sm_step(&sm, &k, true), DLG_GRAPH_EAGER);

    /* keys compare bitwise: a NaN lr is the same key, not a new one */
    dlg_graph_key n = {true, true, NAN, 0.9f, 0, false, 0};
    dlg_graph_sm_init(&sm, true);
    while (dlg_graph_sm_next(&sm, &n) == DLG_GRAPH_EAGER)
        sm_step(&sm, &n, true);
    assert_int_equal(sm_step(&sm, &n, true), DLG_GRAPH_CAPTURE);
    assert_int_equal(sm_step(&sm, &n, true), DLG_GRAPH_REPLAY);
}

/* a new phase warms up again before its kernels are captured; a failed
 * capture means eager for good */
static void test_graph_sm_phase_and_failure(void **st)
{
    dlg_graph_sm sm;
    dlg_graph_key tr = {true, false, 0, 0, 0, false, 0}, te = {false, false, 0, 0, 0, false, 0};
    dlg_graph_sm_init(&sm, true);
    while (dlg_graph_sm_next(&sm, &tr) == DLG_GRAPH_EAGER)
        sm_step(&sm, &tr, true);
    assert_int_equal(sm_step(&sm, &tr, true), DLG_GRAPH_CAPTURE);
    assert_int_equal(sm_step(&sm, &tr, true), DLG_GRAPH_REPLAY);
    for (int i = 0; i < DLG_GRAPH_WARMUP; i++)
        assert_int_equal(sm_step(&sm, &te, true), DLG_GRAPH_EAGER);
    assert_int_equal(sm_step(&sm, &te, true), DLG_GRAPH_CAPTURE);
    assert_int_equal(sm_step(&sm, &te, true), DLG_GRAPH_REPLAY);
    assert_int_equal(sm_step(&sm, &tr, true), DLG_GRAPH_EAGER); /* back: warm again */

    dlg_graph_sm_init(&sm, true);
    while (dlg_graph_sm_next(&sm, &tr) == DLG_GRAPH_EAGER)
        sm_step(&sm, &tr, true);
    assert_int_equal(sm_step(&sm, &tr, false), DLG_GRAPH_CAPTURE);
    assert_true(sm.off);
    for (int i = 0; i < 5; i++)
        assert_int_equal(sm_step(&sm, &tr, true), DLG_GRAPH_EAGER);
}

/* The engine side on a host backend: dlg_net_train_step is exactly
 * forward + backward + SGD; the timer says ENOTSUP without a sticky error;
 * the cuda-only plan options are accepted and ignored. */
static int tiny_net(dlg_net **net, const dlg_plan_opts *o, int *x, int *y, int *w)
{
    dlg_net_create(net, "tiny");
    *x = dlg_input(*net, "x", 4, 3, 6, 6);
    *y = dlg_labels(*net, "y", 4);
    int h = dlg_conv(*net, "conv", *x, 4, 3, 1, 1, 1);
    h = dlg_batchnorm(*net, "bn", h, 1e-5f);
    h = dlg_relu(*net, "relu", h);
    h = dlg_max_pool(*net, "pool", h, 2, 2, 0);
    h = dlg_fc(*net, "fc", h, 5);
    int loss = dlg_softmax_loss(*net, "loss", h, *y);
    *w = dlg_net_param(*net, "conv", 0);
    return dlg_net_plan(*net, o) < 0 ? -1 : loss;
}

/* n inputs in [-range, range), on a 1000-step grid, from an LCG */
static void random_inputs(float *in, size_t n, uint64_t *seed, float range)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        in[i] = (float)((*seed >> 40) % 1000) / (500.0f / range) - range;
    }
}

static void test_train_step_host(void **st)
{
    dlg_plan_opts o = {.backend = "ref", .train = true, .seed = 3, .algo_cache = "/nonexistent/x",
                       .workspace_bytes = 1, .deterministic = true, .graphs = DLG_GRAPHS_ON};
    dlg_net *a, *b;
    int x, y, w, la = tiny_net(&a, &o, &x, &y, &w), lb = tiny_net(&b, &o, &x, &y, &w);
    assert_true(la >= 0 && lb >= 0);
    dlg_sgd sgd = {0.05f, 0.9f, 1e-3f};
    float in[4 * 3 * 6 * 6], lab[4], ra[3], rb[3], wa[4 * 3 * 9], wb[4 * 3 * 9];
    uint64_t seed = 11;
    for (int step = 0; step < 4; step++) {
        random_inputs(in, sizeof in / sizeof in[0], &seed, 1.0f);
        for (int i = 0; i < 4; i++)
            lab[i] = (float)((step + i) % 5);
        for (int k = 0; k < 2; k++) {
            dlg_net *n = k ? b : a;
            assert_int_equal(dlg_net_write(n, x, DLG_DATA, in, sizeof in / sizeof in[0]), 0);
            assert_int_equal(dlg_net_write(n, y, DLG_DATA, lab, 4), 0);
        }
        assert_int_equal(dlg_net_forward(a), 0);
        assert_int_equal(dlg_net_backward(a), 0);
        assert_int_equal(dlg_net_sgd_step(a, &sgd), 0);
        assert_int_equal(dlg_net_timer_begin(b), -DLG_ENOTSUP);
        assert_int_equal(dlg_net_train_step(b, &sgd), 0);
        uint64_t ns = 99;
        assert_int_equal(dlg_net_timer_end(b, &ns), -DLG_ENOTSUP);
        assert_int_equal(ns, 0);
        assert_int_equal(dlg_net_read(a, la, DLG_DATA, ra, 3), 0);
        assert_int_equal(dlg_net_read(b, lb, DLG_DATA, rb, 3), 0);
        assert_memory_equal(ra, rb, sizeof ra);
        sgd.lr *= 0.5f;
    }
    assert_int_equal(dlg_net_read(a, w, DLG_DATA, wa, 4 * 3 * 9), 0);
    assert_int_equal(dlg_net_read(b, w, DLG_DATA, wb, 4 * 3 * 9), 0);
    assert_memory_equal(wa, wb, sizeof wa);
    assert_int_equal(dlg_net_status(b), 0);
    /* forward alone, as inference */
    assert_int_equal(dlg_net_set_train(b, false), 0);
    assert_int_equal(dlg_net_infer_step(b), 0);
    assert_int_equal(dlg_net_train_step(b, NULL), -DLG_EINVAL);
    dlg_net_destroy(a);
    dlg_net_destroy(b);
}

/* The clip as its definition says, without the lr shortcut: the
 * gradients times max_norm / (norm + 1e-6) when the norm is above
 * max_norm, then SGD with the plain lr. */
static void clip_by_definition(dlg_net *net, double max_norm, const dlg_sgd *sgd)
{
    double norm = 0;
    assert_int_equal(dlg_net_grad_norm(net, &norm), 0);
    if (norm > max_norm)
        assert_int_equal(dlg_net_scale_grads(net, (float)(max_norm / (norm + 1e-6))), 0);
    assert_int_equal(dlg_net_sgd_step(net, sgd), 0);
}

/* How far two weight updates (from w0) differ, relative to the larger. */
static double update_gap(const float *w0, const float *wa, const float *wb, size_t n)
{
    double gap = 0, big = 0;
    for (size_t i = 0; i < n; i++) {
        double da = (double)wa[i] - w0[i], db = (double)wb[i] - w0[i];
        gap = fmax(gap, fabs(da - db));
        big = fmax(big, fmax(fabs(da), fabs(db)));
    }
    return big > 0 ? gap / big : gap;
}

/* dlg_net_train_step_clip on a host backend: exactly forward + backward +
 * dlg_net_clip_grads + SGD as callers ran them before (no weight decay: the
 * clip factor scales the lr; with weight decay: the gradients), the same
 * clip statistics, and a max_norm that never clips changes nothing.  And
 * the known answer: a third net clipped by definition (scaled gradients,
 * the plain lr) over the same steps with momentum ends with the same
 * weights (to float rounding) -- the lr shortcut holds only because the
 * momentum is Caffe's (h = m*h + lr*g), which a PyTorch-style
 * h = m*h + g; w -= lr*h would break from the second step on. */
static void train_clip_pair(float decay, double max_norm)
{
    dlg_plan_opts o = {.backend = "ref", .train = true, .seed = 3};
    dlg_net *a, *b, *c;
    int x, y, w, la = tiny_net(&a, &o, &x, &y, &w), lb = tiny_net(&b, &o, &x, &y, &w);
    assert_true(la >= 0 && lb >= 0 && tiny_net(&c, &o, &x, &y, &w) >= 0);
    dlg_sgd sgd = {0.05f, 0.9f, decay};
    dlg_clip_stats sa = {0, 0}, sb = {0, 0};
    float in[4 * 3 * 6 * 6], lab[4], ra[3], rb[3], wa[4 * 3 * 9], wb[4 * 3 * 9], w0[4 * 3 * 9];
    assert_int_equal(dlg_net_read(c, w, DLG_DATA, w0, 4 * 3 * 9), 0);
    uint64_t seed = 5;
    for (int step = 0; step < 4; step++) {
        random_inputs(in, sizeof in / sizeof in[0], &seed, 5.0f);
        for (int i = 0; i < 4; i++)
            lab[i] = (float)((step + 2 * i) % 5);
        for (int k = 0; k < 3; k++) {
            dlg_net *n = k == 2 ? c : k ? b : a;
            assert_int_equal(dlg_net_write(n, x, DLG_DATA, in, sizeof in / sizeof in[0]), 0);
            assert_int_equal(dlg_net_write(n, y, DLG_DATA, lab, 4), 0);
        }
        float f = 1;
        assert_int_equal(dlg_net_forward(a), 0);
        assert_int_equal(dlg_net_backward(a), 0);
        assert_int_equal(dlg_net_clip_grads(a, max_norm, &sa, decay == 0 ? &f : NULL), 0);
        dlg_sgd sa_sgd = {sgd.lr * f, sgd.momentum, sgd.weight_decay};
        assert_int_equal(dlg_net_sgd_step(a, &sa_sgd), 0);
        assert_int_equal(dlg_net_train_step_clip(b, &sgd, max_norm, &sb), 0);
        assert_int_equal(dlg_net_forward(c), 0);
        assert_int_equal(dlg_net_backward(c), 0);
        clip_by_definition(c, max_norm, &sgd);
        assert_int_equal(dlg_net_read(a, la, DLG_DATA, ra, 3), 0);
        assert_int_equal(dlg_net_read(b, lb, DLG_DATA, rb, 3), 0);
        assert_memory_equal(ra, rb, sizeof ra);
        assert_true(sa.norm == sb.norm && sa.clipped == sb.clipped);
    }
    assert_int_equal(dlg_net_read(a, w, DLG_DATA, wa, 4 * 3 * 9), 0);
    assert_int_equal(dlg_net_read(b, w, DLG_DATA, wb, 4 * 3 * 9), 0);
    assert_memory_equal(wa, wb, sizeof wa);
    assert_int_equal(sb.clipped, max_norm < 1e9 ? 4 : 0);
    assert_int_equal(dlg_net_read(c, w, DLG_DATA, wa, 4 * 3 * 9), 0);
    double gap = update_gap(w0, wa, wb, 4 * 3 * 9);
    if (gap > 1e-5)
        fail_msg("train_step_clip's weights are %g (relative) from clipping by definition", gap);
    assert_int_equal(dlg_net_train_step_clip(b, NULL, 1, &sb), -DLG_EINVAL);
    dlg_net_destroy(a);
    dlg_net_destroy(b);
    dlg_net_destroy(c);
}

static void test_train_step_clip_host(void **st)
{
    (void)st;
    train_clip_pair(0, 1e-3);    /* clipped: the lr scaled */
    train_clip_pair(1e-2f, 1e-3); /* clipped with weight decay: the gradients scaled */
    train_clip_pair(0, 1e10);    /* never clipped */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_round_trip), cmocka_unit_test(test_cache_corrupt),
        cmocka_unit_test(test_parse_backend), cmocka_unit_test(test_bf16_convert),    cmocka_unit_test(test_device_select),
        cmocka_unit_test(test_device_select_local_rank),
        cmocka_unit_test(test_peak_table),       cmocka_unit_test(test_nvml_absent),
        cmocka_unit_test(test_nvml_fake_sampler),
        cmocka_unit_test(test_graph_eligible), cmocka_unit_test(test_graph_sm_warmup_capture_replay),
        cmocka_unit_test(test_graph_sm_hyperparams), cmocka_unit_test(test_graph_sm_phase_and_failure),
        cmocka_unit_test(test_train_step_host), cmocka_unit_test(test_train_step_clip_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
