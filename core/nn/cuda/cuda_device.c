/* The cudart device queries of both CUDA modules: "no driver" and "no
 * device" become 0 devices and a reason rather than an error. */
#include "cuda_module.h"

#include <cuda_runtime.h>
#include <stdio.h>

int dlg_cudart_device_count(int *n, char *why, size_t whylen)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    *n = 0;
    if (why && whylen)
        why[0] = '\0';
    if (e != cudaSuccess) {
        if (why)
            snprintf(why, whylen, "%s (CUDA error %d)", cudaGetErrorString(e), (int)e);
        cudaGetLastError(); /* clear it: later calls must not see it */
        return 0;
    }
    if (count == 0 && why)
        snprintf(why, whylen, "no CUDA device");
    *n = count;
    return 0;
}

int dlg_cudart_device_props(int device, dlg_cuda_props *out)
{
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return -DLG_ENOTSUP;
    }
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->sm_count = prop.multiProcessorCount;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->mem_bytes = (uint64_t)prop.totalGlobalMem;
    return 0;
}

/* CUDA encodes versions as 1000 * major + 10 * minor. */
void dlg_cudart_versions(char *buf, size_t len)
{
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    if (cudaDriverGetVersion(&drv) != cudaSuccess)
        cudaGetLastError();
    if (drv > 0)
        snprintf(buf, len, "CUDA runtime %d.%d, driver %d.%d", rt / 1000, rt % 1000 / 10,
                 drv / 1000, drv % 1000 / 10);
    else
        snprintf(buf, len, "CUDA runtime %d.%d, no driver", rt / 1000, rt % 1000 / 10);
}
