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

int dlg_cudart_device_name(int device, char *name, size_t len)
{
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return -DLG_ENOTSUP;
    }
    snprintf(name, len, "%s", prop.name);
    return 0;
}
