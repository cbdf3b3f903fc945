/* NVML loaded with dlopen (libnvidia-ml.so.1): no link-time dependency, and
 * a machine without the driver simply has no GPUs.  Plus the peak-rate
 * table (dense FP32/TF32/FP16 TFLOP/s by GPU model) used for % of peak. */
#ifndef DLG_RUNTIME_GPU_NVML_H
#define DLG_RUNTIME_GPU_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dlg_nvml dlg_nvml;

/* 0 and *out, or -DLG_ENOTSUP with the reason in why (library or driver
 * absent).  path NULL = "libnvidia-ml.so.1" (tests pass a missing one). */
int dlg_nvml_open(dlg_nvml **out, const char *path, char *why, size_t whylen);
void dlg_nvml_close(dlg_nvml *n);
int dlg_nvml_count(dlg_nvml *n);
int dlg_nvml_name(dlg_nvml *n, int idx, char *buf, size_t len);
/* Energy since driver load in millijoules (Volta and later), or negative. */
int dlg_nvml_energy_mj(dlg_nvml *n, int idx, uint64_t *mj);
/* Power now (mW), utilisation (%), memory used (bytes). */
int dlg_nvml_sample(dlg_nvml *n, int idx, unsigned *power_mw, unsigned *util, uint64_t *mem_used);

/* The driver's version and the CUDA version it supports: "580.65.06,
 * CUDA 13.0" (what of it NVML answers). */
void dlg_nvml_driver(dlg_nvml *n, char *buf, size_t len);

/* A device as `dlgauge sysinfo` lists it; unknown numbers are -1 (0 for
 * memory).  nvlinks: active NVLink links, -1 when the device has none. */
typedef struct dlg_gpu_info {
    char name[96];
    uint64_t mem_total;
    int pcie[4]; /* PCIe link: current generation, width; maximum generation, width */
    int nvlinks;
} dlg_gpu_info;
int dlg_nvml_info(dlg_nvml *n, int idx, dlg_gpu_info *out);

typedef struct dlg_gpu_peak {
    const char *match; /* substring of the NVML/CUDA name */
    double fp32, tf32, fp16; /* dense TFLOP/s, SXM boost clocks, no sparsity */
} dlg_gpu_peak;

/* The table entry whose match is in name (longest match wins), or NULL. */
const dlg_gpu_peak *dlg_gpu_peak_find(const char *name);

#endif
