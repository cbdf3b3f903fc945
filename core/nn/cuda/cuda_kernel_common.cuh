// What the CUDA backend's kernel files (cuda_kernels.cu, cuda_nhwc_kernels.cu,
// cuda_seq_kernels.cu) share: the launch shape of a grid-stride kernel,
// float loads and stores of the half storage types, and HALF_CASE, which
// runs a statement with T bound to the storage type a dlg_cuk_htype names.
// No launches and no __shared__ here: tests/cuda/emu rewrites the .cu files
// (the launches inside a HALF_CASE stand at its call sites), not headers.
#ifndef DLG_CUDA_KERNEL_COMMON_CUH
#define DLG_CUDA_KERNEL_COMMON_CUH

#include "cuda_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

inline unsigned blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    if (b > 65535LL * 16)
        b = 65535LL * 16; // grid-stride loops cover the rest
    return (unsigned)(b > 0 ? b : 1);
}

inline int launched() { return (int)cudaGetLastError(); }

typedef __nv_bfloat16 bf;
__device__ __forceinline__ float ld(const bf *p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float ld(const __half *p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ void st(bf *p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void st(__half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void st(float *p, int64_t i, float v) { p[i] = v; }

} // namespace

#define GRID_LOOP(i, n)                                                                    \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);             \
         i += (int64_t)blockDim.x * gridDim.x)

// T is the device storage type that ht names (fp16, else bf16)
#define HALF_CASE(ht, ...)                                                                      \
    do {                                                                                       \
        if ((ht) == DLG_CUK_FP16) {                                                            \
            typedef __half T;                                                                  \
            __VA_ARGS__;                                                                       \
        } else {                                                                               \
            typedef bf T;                                                                      \
            __VA_ARGS__;                                                                       \
        }                                                                                      \
    } while (0)

#endif
