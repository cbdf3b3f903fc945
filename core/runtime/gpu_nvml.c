/* NVML through dlopen (the GPU peak-rate table is in gpu_peak.c). */
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
