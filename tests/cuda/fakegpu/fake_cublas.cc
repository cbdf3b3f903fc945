// fake_cublas.cc — the cuBLAS calls the backend makes: handles, and
// column-major GEMM (fp32, and fp16/bf16 inputs with an fp32 or matching
// output) computed on the host, accumulated in double, rounded on store.
//
// Arguments are validated as cuBLAS does (sizes, transposes, leading
// dimensions, type combinations), and the operands must lie in live device
// allocations: a wrong leading dimension or offset fails here, loudly,
// instead of reading a neighbour's memory.  Only host pointer mode exists:
// alpha and beta are read at the call, and the work is queued on the
// handle's stream with every argument copied, so a captured GEMM replays
// with the values it was captured with.
#include "fakegpu.h"

#include <stdio.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <vector>

namespace {

std::mutex g_mu; // guards g_handles
std::set<cublasHandle_t> g_handles;

bool handle_ok(cublasHandle_t h)
{
    std::lock_guard<std::mutex> lock(g_mu);
    return h && g_handles.count(h);
}

/* ---- element access ------------------------------------------------------ */
inline float ld(const float *p, size_t i) { return p[i]; }
inline float ld(const __half *p, size_t i) { return __half2float(p[i]); }
inline float ld(const __nv_bfloat16 *p, size_t i) { return __bfloat162float(p[i]); }
inline void st(float *p, size_t i, float v) { p[i] = v; }
inline void st(__half *p, size_t i, float v) { p[i] = __float2half_rn(v); }
inline void st(__nv_bfloat16 *p, size_t i, float v) { p[i] = __float2bfloat16_rn(v); }

/* ---- GEMM ---------------------------------------------------------------- */
// One GEMM's arguments, by value (alpha and beta already read).
struct gemm_args {
    bool ta, tb; // op(A) = A^T, op(B) = B^T
    int m, n, k;
    float alpha, beta;
    const void *a, *b;
    void *c;
    int lda, ldb, ldc;
};

// C = alpha * op(A) * op(B) + beta * C, column-major; C is not read when
// beta == 0, A and B are not when alpha == 0 or k == 0 (as BLAS defines).
template <class TA, class TC> void gemm_run(const gemm_args &g)
{
    const TA *a = (const TA *)g.a, *b = (const TA *)g.b;
    TC *c = (TC *)g.c;
    const bool product = g.alpha != 0.0f && g.k > 0;
    std::vector<double> acc(g.m);
    std::vector<float> bcol(g.k);
    for (int j = 0; j < g.n; j++) {
        std::fill(acc.begin(), acc.end(), 0.0);
        if (product) {
            for (int l = 0; l < g.k; l++) // column j of op(B)
                bcol[l] = g.tb ? ld(b, j + (size_t)l * g.ldb) : ld(b, l + (size_t)j * g.ldb);
            if (!g.ta) { // row i of op(A) is strided: walk columns of A
                for (int l = 0; l < g.k; l++) {
                    const double bl = bcol[l];
                    const size_t col = (size_t)l * g.lda;
                    for (int i = 0; i < g.m; i++)
                        acc[i] += (double)ld(a, col + i) * bl;
                }
            } else { // row i of op(A) is column i of A: a dot product
                int i = 0;
                // four rows at a time: independent sums, each still in order
                for (; i + 4 <= g.m; i += 4) {
                    const size_t c0 = (size_t)i * g.lda;
                    const size_t c1 = c0 + g.lda, c2 = c1 + g.lda, c3 = c2 + g.lda;
                    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
                    for (int l = 0; l < g.k; l++) {
                        const double bl = bcol[l];
                        s0 += (double)ld(a, c0 + l) * bl;
                        s1 += (double)ld(a, c1 + l) * bl;
                        s2 += (double)ld(a, c2 + l) * bl;
                        s3 += (double)ld(a, c3 + l) * bl;
                    }
                    acc[i] = s0;
                    acc[i + 1] = s1;
                    acc[i + 2] = s2;
                    acc[i + 3] = s3;
                }
                for (; i < g.m; i++) {
                    const size_t col = (size_t)i * g.lda;
                    double s = 0.0;
                    for (int l = 0; l < g.k; l++)
                        s += (double)ld(a, col + l) * bcol[l];
                    acc[i] = s;
                }
            }
        }
        const size_t col = (size_t)j * g.ldc;
        for (int i = 0; i < g.m; i++) {
            double v = product ? (double)g.alpha * acc[i] : 0.0;
            if (g.beta != 0.0f)
                v += (double)g.beta * ld(c, col + i);
            st(c, col + i, (float)v);
        }
    }
}

using gemm_fn = void (*)(const gemm_args &);

bool op_ok(cublasOperation_t op)
{
    // C (conjugate transpose) is T for real data
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

// Validates a GEMM as cuBLAS does, reads alpha and beta, checks the
// operands' memory (asz, csz: element sizes), then queues fn.
cublasStatus_t gemm(const char *api, cublasHandle_t handle, cublasOperation_t transa,
                    cublasOperation_t transb, int m, int n, int k, const float *alpha,
                    const void *A, size_t asz, int lda, const void *B, int ldb, const float *beta,
                    void *C, size_t csz, int ldc, gemm_fn fn)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
    // A is stored ra x ca, B rb x cb (column-major, before op())
    const int ra = ta ? k : m, ca = ta ? m : k, rb = tb ? n : k, cb = tb ? k : n;
    if (!op_ok(transa) || !op_ok(transb) || m < 0 || n < 0 || k < 0 ||
        lda < std::max(1, ra) || ldb < std::max(1, rb) || ldc < std::max(1, m) || !alpha ||
        !beta) {
        fprintf(stderr,
                "fakegpu: %s: invalid value (trans %d %d, m %d n %d k %d, lda %d ldb %d ldc %d)\n",
                api, (int)transa, (int)transb, m, n, k, lda, ldb, ldc);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    gemm_args g{ta, tb, m, n, k, *alpha, *beta, A, B, C, lda, ldb, ldc};
    // the bytes each operand spans; A and B only when they are read
    auto span = [](int rows, int cols, int ld, size_t esz) {
        return ((size_t)(cols - 1) * ld + rows) * esz;
    };
    char what[64];
    bool ok = true;
    if (g.alpha != 0.0f && k > 0) {
        snprintf(what, sizeof what, "%s A", api);
        ok = fakegpu::device_range_ok(A, span(ra, ca, lda, asz), what);
        snprintf(what, sizeof what, "%s B", api);
        ok = fakegpu::device_range_ok(B, span(rb, cb, ldb, asz), what) && ok;
    }
    snprintf(what, sizeof what, "%s C", api);
    ok = fakegpu::device_range_ok(C, span(m, n, ldc, csz), what) && ok;
    if (!ok) // on the device: an illegal address
        return CUBLAS_STATUS_EXECUTION_FAILED;
    fakegpu::submit(handle->stream, [g, fn]() { fn(g); });
    return CUBLAS_STATUS_SUCCESS;
}

bool fp32_compute(cublasComputeType_t t)
{
    return t == CUBLAS_COMPUTE_32F || t == CUBLAS_COMPUTE_32F_PEDANTIC;
}

// The fp32-input compute types that may round inputs down (computed here
// in full precision all the same).
bool fast_fp32_compute(cublasComputeType_t t)
{
    return t == CUBLAS_COMPUTE_32F_FAST_16F || t == CUBLAS_COMPUTE_32F_FAST_16BF ||
           t == CUBLAS_COMPUTE_32F_FAST_TF32 || t == CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
}

size_t type_size(cudaDataType t) { return t == CUDA_R_32F ? 4 : 2; }

// The emulated GemmEx type combinations (cuBLAS's table, fp32 compute
// rows); null for any other.
gemm_fn gemm_ex_fn(cudaDataType at, cudaDataType bt, cudaDataType ct,
                   cublasComputeType_t compute)
{
    if (at != bt)
        return nullptr;
    if (fast_fp32_compute(compute))
        return at == CUDA_R_32F && ct == CUDA_R_32F ? gemm_run<float, float> : nullptr;
    if (!fp32_compute(compute))
        return nullptr;
    switch (at) {
    case CUDA_R_32F:
        return ct == CUDA_R_32F ? gemm_run<float, float> : nullptr;
    case CUDA_R_16F:
        return ct == CUDA_R_16F   ? gemm_run<__half, __half>
               : ct == CUDA_R_32F ? gemm_run<__half, float>
                                  : nullptr;
    case CUDA_R_16BF:
        return ct == CUDA_R_16BF  ? gemm_run<__nv_bfloat16, __nv_bfloat16>
               : ct == CUDA_R_32F ? gemm_run<__nv_bfloat16, float>
                                  : nullptr;
    default:
        return nullptr;
    }
}

bool algo_ok(cublasGemmAlgo_t a)
{
    return (a >= CUBLAS_GEMM_DEFAULT && a <= CUBLAS_GEMM_ALGO23) ||
           (a >= CUBLAS_GEMM_DEFAULT_TENSOR_OP && a <= CUBLAS_GEMM_ALGO15_TENSOR_OP) ||
           a == CUBLAS_GEMM_AUTOTUNE;
}

} // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (fakegpu::resource_fails("cublasCreate"))
        return CUBLAS_STATUS_ALLOC_FAILED;
    cublasHandle_t h = new cublasContext{nullptr, nullptr, 0, CUBLAS_DEFAULT_MATH};
    std::lock_guard<std::mutex> lock(g_mu);
    g_handles.insert(h);
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (!handle || !g_handles.erase(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case MAJOR_VERSION:
        *value = 13;
        return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION:
        *value = 1;
        return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL:
        *value = 0;
        return CUBLAS_STATUS_SUCCESS;
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    switch ((int)mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) {
    case CUBLAS_DEFAULT_MATH:
    case CUBLAS_TENSOR_OP_MATH:
    case CUBLAS_PEDANTIC_MATH:
    case CUBLAS_TF32_TENSOR_OP_MATH:
    case CUBLAS_FP32_EMULATED_BF16X9_MATH:
    case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH:
        handle->math = mode;
        return CUBLAS_STATUS_SUCCESS;
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = streamId;
    // as documented: setting the stream resets the workspace to the
    // library's default pool, so a workspace set before it is dropped
    handle->workspace = nullptr;
    handle->workspace_bytes = 0;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                     size_t workspaceSizeInBytes)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if ((uintptr_t)workspace % 256) // cuBLAS requires 256-byte alignment
        return CUBLAS_STATUS_INVALID_VALUE;
    if (workspace && !fakegpu::device_range_ok(workspace, workspaceSizeInBytes,
                                               "cublasSetWorkspace workspace"))
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->workspace = workspace;
    handle->workspace_bytes = workspace ? workspaceSizeInBytes : 0;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float *alpha,
                              const float *A, int lda, const float *B, int ldb, const float *beta,
                              float *C, int ldc)
{
    return gemm("cublasSgemm", handle, transa, transb, m, n, k, alpha, A, sizeof(float), lda, B,
                ldb, beta, C, sizeof(float), ldc, gemm_run<float, float>);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo)
{
    if (!handle_ok(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!algo_ok(algo))
        return CUBLAS_STATUS_INVALID_VALUE;
    gemm_fn fn = gemm_ex_fn(Atype, Btype, Ctype, computeType);
    if (!fn) {
        // cuBLAS supports more (int8, fp64, complex, fp16 compute with half
        // scalars); none is emulated, so say which
        fprintf(stderr,
                "fakegpu: cublasGemmEx: types A %d B %d C %d compute %d not supported here\n",
                (int)Atype, (int)Btype, (int)Ctype, (int)computeType);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    // fp32 compute types scale by float alpha and beta
    return gemm("cublasGemmEx", handle, transa, transb, m, n, k, (const float *)alpha, A,
                type_size(Atype), lda, B, ldb, (const float *)beta, C, type_size(Ctype), ldc, fn);
}

} // extern "C"
