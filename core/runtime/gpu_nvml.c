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
    /* for dlgauge sysinfo; any may be absent from an older driver */
    int (*driver)(char *, unsigned);
    int (*cuda_driver)(int *);
    int (*pcie[4])(nvml_dev, unsigned *); /* current gen, width; max gen, width */
    int (*nvlink_state)(nvml_dev, unsigned, int *);
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
    *(void **)&n->driver = dlsym(lib, "nvmlSystemGetDriverVersion");
    *(void **)&n->cuda_driver = dlsym(lib, "nvmlSystemGetCudaDriverVersion_v2");
    static const char *const pcie[4] = {
        "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth",
        "nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkWidth"};
    for (int i = 0; i < 4; i++)
        *(void **)&n->pcie[i] = dlsym(lib, pcie[i]);
    *(void **)&n->nvlink_state = dlsym(lib, "nvmlDeviceGetNvLinkState");
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

void dlg_nvml_driver(dlg_nvml *n, char *buf, size_t len)
{
    char v[96] = "?";
    int cuda = 0;
    if (n->driver)
        n->driver(v, sizeof v);
    if (n->cuda_driver && n->cuda_driver(&cuda) == 0 && cuda > 0) /* 1000 * major + 10 * minor */
        snprintf(buf, len, "%s, CUDA %d.%d", v, cuda / 1000, cuda % 1000 / 10);
    else
        snprintf(buf, len, "%s", v);
}

/* NVLink links per device NVML knows of (NVML_NVLINK_MAX_LINKS) */
enum { NVML_LINKS = 18 };

int dlg_nvml_info(dlg_nvml *n, int idx, dlg_gpu_info *out)
{
    nvml_dev d;
    *out = (dlg_gpu_info){.pcie = {-1, -1, -1, -1}, .nvlinks = -1};
    if (dev(n, idx, &d) < 0)
        return -DLG_EINVAL;
    n->name(d, out->name, sizeof out->name);
    nvml_mem m;
    if (n->mem && n->mem(d, &m) == 0)
        out->mem_total = m.total;
    for (int i = 0; i < 4; i++) {
        unsigned v;
        if (n->pcie[i] && n->pcie[i](d, &v) == 0)
            out->pcie[i] = (int)v;
    }
    /* a device without NVLink answers "not supported" for link 0 */
    for (unsigned l = 0; n->nvlink_state && l < NVML_LINKS; l++) {
        int active = 0;
        if (n->nvlink_state(d, l, &active) != 0)
            break;
        out->nvlinks = (out->nvlinks < 0 ? 0 : out->nvlinks) + (active != 0);
    }
    return 0;
}
