/* fakegpu.h — a CPU stand-in for the CUDA runtime, cuBLAS and the part of
 * cuDNN the backend calls, so the whole backend module (cuda.so: its host
 * code, plans, layouts, staging, batch-norm tiers, LSTM packing, graphs,
 * input path) runs in CI under cuda_check's layer checks against the ref
 * backend.  The kernels of core/nn/cuda's .cu files run on the fiber emulator
 * (tests/cuda/emu); the library calls here compute the same maths on the
 * host in fp32 (half data is rounded on store).
 *
 * What it can catch: wrong buffers, strides, layouts, sizes, offsets,
 * descriptors that disagree with the data, missing conversions, graph
 * replays that use stale arguments, missing event waits between streams
 * (work runs late and in a shuffled order: fake_runtime.cc).  What it
 * cannot: whether the real cuDNN accepts a configuration or agrees with
 * this reading of its documentation, timing, and two pieces of work
 * running at the same time (one runs at a time).
 *
 * Out of memory on demand: FAKEGPU_FAIL_AT=n fails the n-th call that
 * takes a resource (fake_faults.cc), for tests/cuda/fakegpu_oom_sweep.sh.
 *
 * Memory is host memory ("device" pointers are plain pointers).  Work on a
 * stream is queued, or recorded into the graph if the stream is capturing
 * (fakegpu::submit), with every argument copied either way. */
#ifndef DLG_FAKEGPU_H
#define DLG_FAKEGPU_H

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <new>

namespace fakegpu {

/* cuDNN describes at most CUDNN_DIM_MAX dimensions */
constexpr int kDimMax = 8;

/* Queues op on s (fake_runtime.cc: it runs when its turn comes), or
 * records it when s is capturing (cudaStreamBeginCapture). */
void submit(cudaStream_t s, std::function<void()> op);
bool capturing(cudaStream_t s);

/* Whether this call taking a resource (memory, a stream, an event, a
 * graph, a handle or descriptor; api names it) is the one FAKEGPU_FAIL_AT
 * makes fail, as out of memory (fake_faults.cc). */
bool resource_fails(const char *api);

/* *out = a new T copied from init: every cudnnCreate* stand-in, api its
 * name (NULL out: BAD_PARAM; no memory: HOST_ALLOCATION_FAILED, as cuDNN 9
 * says it). */
template <class T> cudnnStatus_t new_descriptor(const char *api, T **out, const T &init)
{
    if (!out)
        return CUDNN_STATUS_BAD_PARAM;
    if (resource_fails(api)) // *out left as it was: the backend must not read it
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    *out = new (std::nothrow) T(init);
    return *out ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

/* true when [p, p + bytes) lies inside one live cudaMalloc/cudaHostAlloc
 * block; else false and one "fakegpu: <what>: ..." line on stderr */
bool device_range_ok(const void *p, size_t bytes, const char *what);

/* One element of a cuDNN data type (FLOAT, HALF, BFLOAT16; also INT32
 * read as an integer value), as float. */
float load(const void *p, cudnnDataType_t t, size_t i);
void store(void *p, cudnnDataType_t t, size_t i, float v);
/* Bytes of one element (any cuDNN type), and whether load/store handle it
 * (FLOAT, HALF, BFLOAT16). */
size_t type_size(cudnnDataType_t t);
bool computable(cudnnDataType_t t);
/* p[i] = alpha * v + beta * p[i]; with beta == 0 the old value is not read
 * (it may be NaN), as cuDNN and cuBLAS define it. */
void blend(void *p, cudnnDataType_t t, size_t i, float alpha, float beta, float v);

} // namespace fakegpu

/* Test hooks (fake_runtime.cc), callable from C: the nth cudaEventCreate*
 * from now fails with cudaErrorMemoryAllocation (0: none); live events. */
extern "C" void fakegpu_fail_event_create(int nth);
extern "C" size_t fakegpu_live_events(void);
/* Calls so far that wait for the device on the host (cudaStreamSynchronize,
 * cudaEventSynchronize, cudaMemcpy), refused ones included. */
extern "C" uint64_t fakegpu_host_waits(void);

/* ---- cuDNN's opaque types ------------------------------------------------ */
struct cudnnContext {
    cudaStream_t stream;
};

/* nb dims, each with its stride in elements (4-d NCHW/NHWC descriptors
 * store their strides too) */
struct cudnnTensorStruct {
    cudnnDataType_t type;
    int nb;
    int dim[fakegpu::kDimMax];
    int stride[fakegpu::kDimMax];
};

namespace fakegpu {
/* Elements from a tensor's first to one past its last (strides may leave
 * gaps), and whether two of its elements share an address (a written
 * tensor laid out so would be a race on a GPU). */
int64_t extent(const cudnnTensorStruct &t);
bool self_overlaps(const cudnnTensorStruct &t);
} // namespace fakegpu

/* K x C x H x W filter; format NCHW (KCRS) or NHWC (KRSC) */
struct cudnnFilterStruct {
    cudnnDataType_t type;
    cudnnTensorFormat_t format;
    int k, c, h, w;
};

struct cudnnConvolutionStruct {
    int pad_h, pad_w, u, v, dil_h, dil_w;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    int groups;
    cudnnMathType_t math;
};

struct cudnnActivationStruct {
    cudnnActivationMode_t mode;
    cudnnNanPropagation_t nan;
    double coef;
};

struct cudnnLRNStruct {
    unsigned n;
    double alpha, beta, k;
};

struct cudnnDropoutStruct {
    float rate;
};

/* ---- cuBLAS -------------------------------------------------------------- */
struct cublasContext {
    cudaStream_t stream;
    void *workspace;
    size_t workspace_bytes;
    cublasMath_t math;
};

#endif
