// fake_cudnn_core.cc — cuDNN's handle, its status strings, tensor and filter
// descriptors, and cudnnAddTensor, on the host.
//
// The descriptors are checked the way cuDNN documents it (BAD_PARAM for
// what cuDNN calls invalid, NOT_SUPPORTED for what it, or this stand-in,
// does not do) so that a backend bug surfaces as a failed call instead of
// as quietly wrong numbers.

// cuDNN 9 marks this whole legacy API deprecated (warned under
// CUDNN_WARN_DEPRECATED); a stand-in for it has to name it
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "fakegpu.h"

#include <stdint.h>

#include <new>
#include <utility>

namespace {

using fakegpu::computable;
using fakegpu::extent;
using fakegpu::kDimMax;
using fakegpu::self_overlaps;
using fakegpu::type_size;

// cuDNN describes at most 2 Giga-elements
constexpr int64_t kMaxElements = (int64_t)1 << 31;

bool valid_type(cudnnDataType_t t)
{
    return (int)t >= (int)CUDNN_DATA_FLOAT && (int)t <= (int)CUDNN_DATA_COMPLEX_FP64;
}





bool aligned(const void *p, cudnnDataType_t t)
{
    return (uintptr_t)p % type_size(t) == 0;
}

bool byte_ranges_overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + bn && y < x + an;
}

// Stores the descriptor only when it is valid, so a refused call leaves
// the previous contents (as it would be used by mistake) unchanged.
cudnnStatus_t set_nd(cudnnTensorStruct *d, cudnnDataType_t type, int nb, const int *dim,
                            const int *stride)
{
    if (!valid_type(type))
        return CUDNN_STATUS_BAD_PARAM;
    cudnnTensorStruct t = {};
    t.type = type;
    t.nb = nb;
    for (int i = 0; i < nb; i++) {
        // a stride only matters where the dimension has more than one
        // element; there it must step forward (no broadcast, no reversal)
        if (dim[i] <= 0 || stride[i] < 0 || (stride[i] == 0 && dim[i] > 1))
            return CUDNN_STATUS_BAD_PARAM;
        t.dim[i] = dim[i];
        t.stride[i] = stride[i];
    }
    if (extent(t) > kMaxElements)
        return CUDNN_STATUS_NOT_SUPPORTED;
    *d = t;
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C" {

/* ---- handle, version, status strings ------------------------------------ */

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    // on the legacy default stream, as cuDNN starts
    return fakegpu::new_descriptor(__func__, handle, cudnnContext{nullptr});
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    if (!handle)
        return CUDNN_STATUS_BAD_PARAM;
    delete handle;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    if (!handle)
        return CUDNN_STATUS_BAD_PARAM;
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

// the headers this stand-in is compiled against (9.19.0 -> 91900)
size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

const char *cudnnGetErrorString(cudnnStatus_t status)
{
    // by value: the deprecated aliases (INVALID_VALUE = 2001) share the
    // switch without naming deprecated enumerators
    switch ((int)status) {
#define S(x)                                                                                      \
    case x:                                                                                       \
        return #x
        S(CUDNN_STATUS_SUCCESS);
        S(CUDNN_STATUS_NOT_INITIALIZED);
        S(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH);
        S(CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH);
        S(CUDNN_STATUS_DEPRECATED);
        S(CUDNN_STATUS_LICENSE_ERROR);
        S(CUDNN_STATUS_RUNTIME_IN_PROGRESS);
        S(CUDNN_STATUS_RUNTIME_FP_OVERFLOW);
        S(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED);
        S(CUDNN_STATUS_BAD_PARAM);
        S(CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
        S(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER);
        S(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
        S(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
        S(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
        S(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH);
        S(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);
        S(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES);
        S(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE);
        S(CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH);
        S(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE);
        S(CUDNN_STATUS_NOT_SUPPORTED);
        S(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN);
        S(CUDNN_STATUS_NOT_SUPPORTED_SHAPE);
        S(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE);
        S(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT);
        S(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER);
        S(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART);
        S(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH);
        S(CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING);
        S(CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE);
        S(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT);
        S(CUDNN_STATUS_NOT_SUPPORTED_PADDING);
        S(CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM);
        S(CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API);
        S(CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE);
        S(CUDNN_STATUS_INTERNAL_ERROR);
        S(CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED);
        S(CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE);
        S(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
        S(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED);
        S(CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM);
        S(CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED);
        S(CUDNN_STATUS_EXECUTION_FAILED);
        S(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER);
        S(CUDNN_STATUS_EXECUTION_FAILED_CUBLAS);
        S(CUDNN_STATUS_EXECUTION_FAILED_CUDART);
        S(CUDNN_STATUS_EXECUTION_FAILED_CURAND);
#undef S
    case 2001:
        return "CUDNN_STATUS_INVALID_VALUE";
    default:
        return "CUDNN_STATUS_UNKNOWN";
    }
}

/* ---- tensor descriptors -------------------------------------------------- */

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc)
{
    // nb == 0 marks "created, never set": every operation refuses it
    return fakegpu::new_descriptor(__func__, tensorDesc, cudnnTensorStruct{});
}

// NULL is accepted, as by cuDNN: teardown after a half-done setup
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc)
{
    delete tensorDesc;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc,
                                         cudnnTensorFormat_t format, cudnnDataType_t dataType,
                                         int n, int c, int h, int w)
{
    if (!tensorDesc)
        return CUDNN_STATUS_BAD_PARAM;
    const int dim[4] = {n, c, h, w};
    if (n <= 0 || c <= 0 || h <= 0 || w <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    if ((int64_t)c * h * w > INT32_MAX) // the strides would not fit an int
        return CUDNN_STATUS_NOT_SUPPORTED;
    // dims always in N, C, H, W order; the format only sets the strides
    switch (format) {
    case CUDNN_TENSOR_NCHW: {
        const int stride[4] = {c * h * w, h * w, w, 1};
        return set_nd(tensorDesc, dataType, 4, dim, stride);
    }
    case CUDNN_TENSOR_NHWC: {
        const int stride[4] = {h * w * c, 1, w * c, c};
        return set_nd(tensorDesc, dataType, 4, dim, stride);
    }
    case CUDNN_TENSOR_NCHW_VECT_C: // int8x4/x32 vectors: no backend call uses them
        return valid_type(dataType) ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_BAD_PARAM;
    default:
        return CUDNN_STATUS_BAD_PARAM;
    }
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc,
                                         cudnnDataType_t dataType, int nbDims, const int dimA[],
                                         const int strideA[])
{
    if (!tensorDesc || !dimA || !strideA)
        return CUDNN_STATUS_BAD_PARAM;
    // cuDNN takes 3 (RNN states) to CUDNN_DIM_MAX dimensions
    if (nbDims < 3 || nbDims > kDimMax)
        return nbDims <= 0 ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_NOT_SUPPORTED;
    return set_nd(tensorDesc, dataType, nbDims, dimA, strideA);
}

cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc,
                                         int nbDimsRequested, cudnnDataType_t *dataType,
                                         int *nbDims, int dimA[], int strideA[])
{
    if (!tensorDesc || !dataType || !nbDims || nbDimsRequested < 0 ||
        (nbDimsRequested > 0 && (!dimA || !strideA)))
        return CUDNN_STATUS_BAD_PARAM;
    if (tensorDesc->nb == 0) // never set: nothing that could be read back
        return CUDNN_STATUS_BAD_PARAM;
    *dataType = tensorDesc->type;
    *nbDims = tensorDesc->nb;
    for (int i = 0; i < nbDimsRequested && i < tensorDesc->nb; i++) {
        dimA[i] = tensorDesc->dim[i];
        strideA[i] = tensorDesc->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- filter descriptors -------------------------------------------------- */

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc)
{
    // k == 0 marks "never set"
    return fakegpu::new_descriptor(__func__, filterDesc, cudnnFilterStruct{});
}

cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc)
{
    delete filterDesc;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc,
                                         cudnnDataType_t dataType, cudnnTensorFormat_t format,
                                         int k, int c, int h, int w)
{
    if (!filterDesc || !valid_type(dataType) || k <= 0 || c <= 0 || h <= 0 || w <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    if (format == CUDNN_TENSOR_NCHW_VECT_C)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC)
        return CUDNN_STATUS_BAD_PARAM;
    if ((int64_t)k * c * h * w > INT32_MAX)
        return CUDNN_STATUS_NOT_SUPPORTED;
    filterDesc->type = dataType;
    filterDesc->format = format; // NCHW: K C R S in memory; NHWC: K R S C
    filterDesc->k = k;
    filterDesc->c = c;
    filterDesc->h = h;
    filterDesc->w = w;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- cudnnAddTensor ------------------------------------------------------- */

// C = alpha * A + beta * C, each dimension of A equal to C's or 1 (then
// broadcast).  Both sides are addressed through their own strides, so a
// 1xCx1x1 bias lands on NCHW and NHWC outputs alike.
cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void *alpha,
                             const cudnnTensorDescriptor_t aDesc, const void *A, const void *beta,
                             const cudnnTensorDescriptor_t cDesc, void *C)
{
    if (!handle || !alpha || !beta || !aDesc || !cDesc || !A || !C)
        return CUDNN_STATUS_BAD_PARAM;
    if (aDesc->nb == 0 || cDesc->nb == 0 || aDesc->nb != cDesc->nb ||
        aDesc->type != cDesc->type)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < cDesc->nb; i++)
        if (aDesc->dim[i] != cDesc->dim[i] && aDesc->dim[i] != 1)
            return CUDNN_STATUS_BAD_PARAM;
    // cuDNN: up to 5 dimensions; double would need double scaling factors
    if (cDesc->nb > 5 || !computable(cDesc->type))
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (!aligned(A, aDesc->type) || !aligned(C, cDesc->type))
        return CUDNN_STATUS_BAD_PARAM;
    size_t es = type_size(cDesc->type);
    // a C whose elements share addresses, or that overlaps A, would race
    size_t abytes = (size_t)extent(*aDesc) * es, cbytes = (size_t)extent(*cDesc) * es;
    if (self_overlaps(*cDesc) || byte_ranges_overlap(A, abytes, C, cbytes))
        return CUDNN_STATUS_BAD_PARAM;
    // both inside live allocations: past them the device would fault
    bool ok = fakegpu::device_range_ok(A, abytes, "cudnnAddTensor A");
    if (!fakegpu::device_range_ok(C, cbytes, "cudnnAddTensor C") || !ok)
        return CUDNN_STATUS_EXECUTION_FAILED;
    // scaling factors are read now, as cuDNN reads host scalars at the call
    const float al = *(const float *)alpha, be = *(const float *)beta;
    const cudnnTensorStruct a = *aDesc, c = *cDesc;
    fakegpu::submit(handle->stream, [=]() {
        int idx[kDimMax] = {0};
        int64_t total = 1;
        for (int i = 0; i < c.nb; i++)
            total *= c.dim[i];
        for (int64_t e = 0; e < total; e++) {
            size_t oa = 0, oc = 0;
            for (int i = 0; i < c.nb; i++) {
                oc += (size_t)idx[i] * c.stride[i];
                if (a.dim[i] != 1)
                    oa += (size_t)idx[i] * a.stride[i];
            }
            fakegpu::blend(C, c.type, oc, al, be, fakegpu::load(A, a.type, oa));
            for (int i = c.nb - 1; i >= 0 && ++idx[i] == c.dim[i]; i--)
                idx[i] = 0;
        }
    });
    return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
