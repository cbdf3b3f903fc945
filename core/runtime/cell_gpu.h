/* The GPU whose NVML stats a cell records: the one its workload runs on,
 * chosen as core/nn's dlg_device_select chooses (one GPU per rank). */
#ifndef DLG_RUNTIME_CELL_GPU_H
#define DLG_RUNTIME_CELL_GPU_H

#include "comm.h"
#include "gpu_nvml.h"
#include "plan.h"

/* device (a workload's `device` option: auto | cpu | cuda | cuda:N),
 * this process's rank on its node and the GPUs NVML counts -> the GPU's
 * index: N for cuda:N when it exists, (local_rank mod ngpus) for auto and
 * a bare cuda; -1 for none (cpu, no GPU, anything else). */
int dlg_gpu_of_device(const char *device, int local_rank, int ngpus);

/* The cell's GPU from its workload's `device` option and the run's ranks;
 * -1 when it has none or nv is NULL (no driver). */
int dlg_cell_gpu(const dlg_cell *cell, const dlg_comm *comm, dlg_nvml *nv);

#endif
