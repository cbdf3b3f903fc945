/* A stand-in libnvidia-ml for tests: one "NVIDIA H200 (fake)" drawing a
 * constant 250 W at 80% utilisation, 1 GiB + (ms % 1000) MiB of memory
 * used, and an energy counter that follows the monotonic clock at 250 W;
 * driver 580.65.06 for CUDA 13.0, PCIe gen 5 x16 (running at gen 4 x16),
 * 18 NVLink links of which 16 are active.  FAKEGPU_DEVICES=N (as the
 * fake cudart's, tests/cuda/fakegpu) makes it N GPUs, GPU i > 0 named
 * "NVIDIA H200 (fake GPU i)" and 10 points less busy per index, so a test
 * sees which GPU a row's stats came from. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct fake_util {
    unsigned gpu, memory;
} fake_util;
typedef struct fake_mem {
    unsigned long long total, free, used;
} fake_mem;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d);
int nvmlDeviceGetName(void *d, char *buf, unsigned len);
int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj);
int nvmlDeviceGetPowerUsage(void *d, unsigned *mw);
int nvmlDeviceGetUtilizationRates(void *d, fake_util *u);
int nvmlDeviceGetMemoryInfo(void *d, fake_mem *m);
int nvmlSystemGetDriverVersion(char *buf, unsigned len);
int nvmlSystemGetCudaDriverVersion_v2(int *v);
int nvmlDeviceGetCurrPcieLinkGeneration(void *d, unsigned *v);
int nvmlDeviceGetCurrPcieLinkWidth(void *d, unsigned *v);
int nvmlDeviceGetMaxPcieLinkGeneration(void *d, unsigned *v);
int nvmlDeviceGetMaxPcieLinkWidth(void *d, unsigned *v);
int nvmlDeviceGetNvLinkState(void *d, unsigned link, int *active);

#define FAKE_MAX_GPUS 16
static const char dev_token[FAKE_MAX_GPUS]; /* a handle is &dev_token[index] */

static unsigned gpu_count(void)
{
    const char *v = getenv("FAKEGPU_DEVICES");
    long n = v ? strtol(v, NULL, 10) : 1;
    return n >= 1 && n <= FAKE_MAX_GPUS ? (unsigned)n : 1;
}

static unsigned index_of(const void *d) { return (unsigned)((const char *)d - dev_token); }

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = gpu_count();
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
    if (i >= gpu_count())
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *d = (void *)&dev_token[i];
    return 0;
}

int nvmlDeviceGetName(void *d, char *buf, unsigned len)
{
    unsigned i = index_of(d);
    if (i == 0)
        snprintf(buf, len, "NVIDIA H200 (fake)");
    else
        snprintf(buf, len, "NVIDIA H200 (fake GPU %u)", i);
    return 0;
}

int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    /* 250 W = 250 mJ per ms */
    *mj = (unsigned long long)t.tv_sec * 250000ull + (unsigned long long)t.tv_nsec / 4000ull;
    return 0;
}

int nvmlDeviceGetPowerUsage(void *d, unsigned *mw)
{
    *mw = 250000;
    return 0;
}

int nvmlDeviceGetUtilizationRates(void *d, fake_util *u)
{
    u->gpu = 80 - 10 * index_of(d);
    u->memory = 40;
    return 0;
}

int nvmlDeviceGetMemoryInfo(void *d, fake_mem *m)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    unsigned long long ms = (unsigned long long)t.tv_nsec / 1000000ull;
    m->total = 141ull << 30;
    m->used = (1ull << 30) + ms * (1ull << 20);
    m->free = m->total - m->used;
    return 0;
}

int nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
    snprintf(buf, len, "580.65.06");
    return 0;
}

int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    *v = 13000;
    return 0;
}

int nvmlDeviceGetCurrPcieLinkGeneration(void *d, unsigned *v)
{
    *v = 4;
    return 0;
}

int nvmlDeviceGetCurrPcieLinkWidth(void *d, unsigned *v)
{
    *v = 16;
    return 0;
}

int nvmlDeviceGetMaxPcieLinkGeneration(void *d, unsigned *v)
{
    *v = 5;
    return 0;
}

int nvmlDeviceGetMaxPcieLinkWidth(void *d, unsigned *v)
{
    *v = 16;
    return 0;
}

int nvmlDeviceGetNvLinkState(void *d, unsigned link, int *active)
{
    if (link >= 18)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *active = link < 16;
    return 0;
}
