/* NVML through dlopen, and the GPU peak-rate table. */
#include "gpu_nvml.h"

#include <dlgauge/plugin.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *nvml_dev; /* nvmlDevice_t */
typedef struct nvml_util {
    unsigned gpu, memory;
} nvml_util;
typedef struct nvml_mem {
    unsigned long long total, free, used;
} nvml_mem;

struct dlg_nvml {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned *);
    int (*handle)(unsigned, nvml_dev *);
    int (*name)(nvml_dev, char *, unsigned);
    int (*energy)(nvml_dev, unsigned long long *);
    int (*power)(nvml_dev, unsigned *);
    int (*util)(nvml_dev, nvml_util *);
    int (*mem)(nvml_dev, nvml_mem *);
};

int dlg_nvml_open(dlg_nvml **out, const char *path, char *why, size_t whylen)
{
    *out = NULL;
    void *lib = dlopen(path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, whylen, "NVML not available: %s", dlerror());
        return -DLG_ENOTSUP;
    }
    dlg_nvml *n = calloc(1, sizeof *n);
    if (!n) {
        dlclose(lib);
        return -DLG_ENOMEM;
    }
    n->lib = lib;
    *(void **)&n->init = dlsym(lib, "nvmlInit_v2");
    *(void **)&n->shutdown = dlsym(lib, "nvmlShutdown");
    *(void **)&n->count = dlsym(lib, "nvmlDeviceGetCount_v2");
    *(void **)&n->handle = dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&n->name = dlsym(lib, "nvmlDeviceGetName");
    *(void **)&n->energy = dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption");
    *(void **)&n->power = dlsym(lib, "nvmlDeviceGetPowerUsage");
    *(void **)&n->util = dlsym(lib, "nvmlDeviceGetUtilizationRates");
    *(void **)&n->mem = dlsym(lib, "nvmlDeviceGetMemoryInfo");
    if (!n->init || !n->shutdown || !n->count || !n->handle || !n->name) {
        snprintf(why, whylen, "NVML library lacks nvmlInit_v2/nvmlDeviceGetCount_v2");
        dlclose(lib);
        free(n);
        return -DLG_ENOTSUP;
    }
    int rc = n->init();
    if (rc != 0) {
        snprintf(why, whylen, "nvmlInit failed (NVML error %d): no driver?", rc);
        dlclose(lib);
        free(n);
        return -DLG_ENOTSUP;
    }
    *out = n;
    return 0;
}

void dlg_nvml_close(dlg_nvml *n)
{
    if (!n)
        return;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

int dlg_nvml_count(dlg_nvml *n)
{
    unsigned c = 0;
    return n && n->count(&c) == 0 ? (int)c : 0;
}

static int dev(dlg_nvml *n, int idx, nvml_dev *d)
{
    return n && idx >= 0 && n->handle((unsigned)idx, d) == 0 ? 0 : -DLG_EINVAL;
}

int dlg_nvml_name(dlg_nvml *n, int idx, char *buf, size_t len)
{
    nvml_dev d;
    if (dev(n, idx, &d) < 0 || n->name(d, buf, (unsigned)len) != 0)
        return -DLG_EINVAL;
    return 0;
}

int dlg_nvml_energy_mj(dlg_nvml *n, int idx, uint64_t *mj)
{
    nvml_dev d;
    unsigned long long v;
    if (dev(n, idx, &d) < 0 || !n->energy || n->energy(d, &v) != 0)
        return -DLG_ENOTSUP;
    *mj = v;
    return 0;
}

int dlg_nvml_sample(dlg_nvml *n, int idx, unsigned *power_mw, unsigned *util, uint64_t *mem_used)
{
    nvml_dev d;
    nvml_util u;
    nvml_mem m;
    if (dev(n, idx, &d) < 0 || !n->power || !n->util || !n->mem || n->power(d, power_mw) != 0 ||
        n->util(d, &u) != 0 || n->mem(d, &m) != 0)
        return -DLG_ENOTSUP;
    *util = u.gpu;
    *mem_used = m.used;
    return 0;
}

/* Dense peaks from NVIDIA's datasheets (SXM where both exist, boost clock,
 * tensor-core TF32/FP16 without sparsity). */
static const dlg_gpu_peak peaks[] = {
    {"H200", 67.0, 494.7, 989.4},   {"H100 PCIe", 51.2, 378.0, 756.0},
    {"H100", 67.0, 494.7, 989.4},   {"A100", 19.5, 156.0, 312.0},
    {"L40S", 91.6, 183.0, 362.0},   {"L40", 90.5, 90.5, 181.0},
    {"L4", 30.3, 60.0, 121.0},      {"A10G", 31.2, 35.0, 70.0},
    {"A10", 31.2, 62.5, 125.0},     {"V100", 15.7, 0, 125.0},
    {"T4", 8.1, 0, 65.0},           {"P100", 10.6, 0, 21.2},
    {"RTX 4090", 82.6, 82.6, 165.2}, {"B200", 80.0, 1100.0, 2250.0},
};

const dlg_gpu_peak *dlg_gpu_peak_find(const char *name)
{
    const dlg_gpu_peak *best = NULL;
    for (size_t i = 0; name && i < sizeof peaks / sizeof peaks[0]; i++)
        if (strstr(name, peaks[i].match) &&
            (!best || strlen(peaks[i].match) > strlen(best->match)))
            best = &peaks[i];
    return best;
}
