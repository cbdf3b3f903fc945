/* cuda-probe.so: device count and names for the engine (cuda_module.h),
 * linked with cudart only, so asking costs no cuBLAS/cuDNN load. */
#include "cuda_module.h"

__attribute__((visibility("default"))) const dlg_cuda_module dlg_cuda_module_v1 = {
    .abi = DLG_CUDA_MODULE_ABI,
    .engine_sig = DLG_CUDA_ENGINE_SIG,
    .device_count = dlg_cudart_device_count,
    .device_props = dlg_cudart_device_props,
    .versions = dlg_cudart_versions,
};
