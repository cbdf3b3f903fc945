/* How many CUDA devices: cudaGetDeviceCount, with "no driver" and "no
 * device" turned into 0 and a reason rather than an error. */
#include "cuda_device.h"

#include <cuda_runtime.h>
#include <stdio.h>

int dlg_cuda_device_count(int *n, char *why, size_t whylen)
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
