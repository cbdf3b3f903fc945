// fakegpu_common.cc — element access for the fake libraries, and the hook
// that queues the emulated kernels on their stream.
#include "fakegpu.h"

#include <string.h>

namespace fakegpu {

float load(const void *p, cudnnDataType_t t, size_t i)
{
    switch (t) {
    case CUDNN_DATA_HALF:
        return __half2float(((const __half *)p)[i]);
    case CUDNN_DATA_BFLOAT16:
        return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case CUDNN_DATA_INT32:
        return (float)((const int32_t *)p)[i];
    default:
        return ((const float *)p)[i];
    }
}

void store(void *p, cudnnDataType_t t, size_t i, float v)
{
    switch (t) {
    case CUDNN_DATA_HALF:
        ((__half *)p)[i] = __float2half_rn(v);
        break;
    case CUDNN_DATA_BFLOAT16:
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
        break;
    case CUDNN_DATA_INT32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    default:
        ((float *)p)[i] = v;
    }
}

void blend(void *p, cudnnDataType_t t, size_t i, float alpha, float beta, float v)
{
    store(p, t, i, beta == 0.0f ? alpha * v : alpha * v + beta * load(p, t, i));
}

} // namespace fakegpu

// the emulated kernels (tests/cuda/emu) go through the streams like any work
void dlg_emu_submit(cudaStream_t s, std::function<void()> grid)
{
    fakegpu::submit(s, std::move(grid));
}
