/* The GPU peak-rate table (declared in gpu_nvml.h), in a file of its own
 * so that the nn engine (core/nn/peak_gpu.c, built into dlgauge_nn for the
 * workloads' % of peak) and the runtime (`dlgauge sysinfo`) share it
 * without the engine carrying the NVML code. */
#include "gpu_nvml.h"

#include <string.h>

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
