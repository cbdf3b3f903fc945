/* GPU metrics during timed steps: a thread samples NVML every period
 * (100 ms by default) for utilisation, memory and power; energy comes from
 * NVML's energy counter where the GPU has one, else from integrated power. */
#ifndef DLG_RUNTIME_GPU_SAMPLER_H
#define DLG_RUNTIME_GPU_SAMPLER_H

#include "gpu_nvml.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct dlg_gpu_sampler dlg_gpu_sampler;

typedef struct dlg_gpu_stats {
    int samples;
    double gpu_util;      /* mean %, over samples */
    uint64_t gpu_mem_peak; /* bytes used, highest sample */
    double power_avg_w;
    double energy_j;
    bool energy_counter; /* energy_j from the counter (else power x time) */
    double seconds;
} dlg_gpu_stats;

/* Starts sampling device idx of an open NVML; -DLG_ENOTSUP without NVML. */
int dlg_gpu_sampler_start(dlg_gpu_sampler **out, dlg_nvml *nv, int idx, int period_ms);
/* Stops, joins the thread, fills *st (zeros if it never sampled), frees. */
int dlg_gpu_sampler_stop(dlg_gpu_sampler *s, dlg_gpu_stats *st);

#endif
