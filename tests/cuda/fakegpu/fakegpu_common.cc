// fakegpu_common.cc — element access and tensor geometry for the fake
// libraries, and the hook that queues the emulated kernels on their stream.
#include "fakegpu.h"

#include <string.h>

#include <utility>

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

size_t type_size(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_INT64:
    case CUDNN_DATA_COMPLEX_FP32:
        return 8;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
        return 2;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_BOOLEAN:
    case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2:
    case CUDNN_DATA_FP8_E8M0:
        return 1;
    case CUDNN_DATA_COMPLEX_FP64:
        return 16;
    default:
        return 4;
    }
}

// the types the stand-in computes with (fakegpu::load/store)
bool computable(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

// Elements from the first to one past the last (strides may leave gaps).
int64_t extent(const cudnnTensorStruct &t)
{
    int64_t e = 1;
    for (int i = 0; i < t.nb; i++)
        e += (int64_t)(t.dim[i] - 1) * t.stride[i];
    return e;
}

// Whether two elements share one address: a written tensor laid out so
// would be a race on the GPU.  Sorted by stride, each dimension of extent
// > 1 must step over everything the smaller ones cover.
bool self_overlaps(const cudnnTensorStruct &t)
{
    std::pair<int64_t, int64_t> d[kDimMax];
    int n = 0;
    for (int i = 0; i < t.nb; i++)
        if (t.dim[i] > 1)
            d[n++] = {t.stride[i], t.dim[i]};
    for (int i = 1; i < n; i++) // insertion sort: at most 8 (std::sort trips -Warray-bounds)
        for (int j = i; j > 0 && d[j] < d[j - 1]; j--)
            std::swap(d[j], d[j - 1]);
    int64_t covered = 1;
    for (int i = 0; i < n; i++) {
        if (d[i].first < covered)
            return true;
        covered = d[i].first * d[i].second;
    }
    return false;
}

} // namespace fakegpu

// the emulated kernels (tests/cuda/emu) go through the streams like any work
void dlg_emu_submit(cudaStream_t s, std::function<void()> grid)
{
    fakegpu::submit(s, std::move(grid));
}
