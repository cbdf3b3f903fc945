// Channels-last (NHWC) kernels of the half backends: layout conversions
// (tiled transposes that also convert fp32 <-> bf16/fp16), Caffe pooling on
// NHWC, and the per-channel bias gradient of an NHWC tensor.
#include "cuda_nhwc_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <float.h>

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32, kRows = 8;
// grid z's hardware limit; the race-detector build of the kernel tests
// lowers it so that a few matrices take the transpose's m loop
#ifndef DLG_CUK_GRID_Z_MAX
#define DLG_CUK_GRID_Z_MAX 65535
#endif
constexpr int64_t kGridZMax = DLG_CUK_GRID_Z_MAX;

unsigned blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    if (b > 65535LL * 16)
        b = 65535LL * 16; // grid-stride loops cover the rest
    return (unsigned)(b > 0 ? b : 1);
}

int launched() { return (int)cudaGetLastError(); }

typedef __nv_bfloat16 bf;
__device__ __forceinline__ float ld(const bf *p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float ld(const __half *p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ void st(bf *p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void st(__half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void st(float *p, int64_t i, float v) { p[i] = v; }

#define GRID_LOOP(i, n)                                                                    \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);             \
         i += (int64_t)blockDim.x * gridDim.x)

// block (kTile, kRows) moves a kTile x kTile tile through shared memory, so
// both the reads and the writes are coalesced; grid z walks the n matrices
template <class A, class B>
__global__ void k_transpose(const A *x, B *y, int64_t n, int64_t a, int64_t b)
{
    __shared__ float tile[kTile][kTile + 1];
    int64_t b0 = (int64_t)blockIdx.x * kTile, a0 = (int64_t)blockIdx.y * kTile;
    for (int64_t m = blockIdx.z; m < n; m += gridDim.z) {
        const A *xs = x + m * a * b;
        B *ys = y + m * a * b;
        for (int i = threadIdx.y; i < kTile; i += kRows) {
            int64_t r = a0 + i, col = b0 + threadIdx.x;
            if (r < a && col < b)
                tile[i][threadIdx.x] = ld(xs, r * b + col);
        }
        __syncthreads();
        for (int i = threadIdx.y; i < kTile; i += kRows) {
            int64_t r = b0 + i, col = a0 + threadIdx.x;
            if (r < b && col < a)
                st(ys, r * a + col, tile[threadIdx.x][i]);
        }
        __syncthreads();
    }
}

template <class A, class B>
int launch_transpose(cudaStream_t s, const A *x, B *y, int64_t n, int64_t a, int64_t b)
{
    if (n <= 0 || a <= 0 || b <= 0)
        return 0;
    int64_t gx = (b + kTile - 1) / kTile, gy = (a + kTile - 1) / kTile;
    if (gy > 65535)
        return (int)cudaErrorInvalidConfiguration;
    dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)(n < kGridZMax ? n : kGridZMax));
    k_transpose<<<grid, dim3(kTile, kRows), 0, s>>>(x, y, n, a, b);
    return launched();
}

// Caffe windows (ceil mode; average divides by the window clipped to H + pad)
template <class T>
__global__ void k_pool_fwd_nhwc(dlg_cuk_pool p, int64_t C, const T *x, T *y, int *mask)
{
    GRID_LOOP(i, p.nc * p.oh * p.ow)
    {
        int64_t c = i % C, r = i / C;
        int64_t ow = r % p.ow, oh = (r / p.ow) % p.oh, n = r / (p.ow * p.oh);
        int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
        int64_t h1 = min(h0 + p.kh, p.h + p.ph), w1 = min(w0 + p.kw, p.w + p.pw);
        int64_t div = (h1 - h0) * (w1 - w0);
        h0 = max(h0, (int64_t)0);
        w0 = max(w0, (int64_t)0);
        h1 = min(h1, p.h);
        w1 = min(w1, p.w);
        const T *xp = x + n * p.h * p.w * C + c;
        if (p.max) {
            float best = -FLT_MAX;
            int64_t arg = h0 * p.w + w0;
            bool any = false;
            for (int64_t h = h0; h < h1; h++)
                for (int64_t w = w0; w < w1; w++) {
                    float v = ld(xp, (h * p.w + w) * C);
                    if (!any || v > best) {
                        best = v;
                        arg = h * p.w + w;
                        any = true;
                    }
                }
            st(y, i, best);
            if (mask)
                mask[i] = (int)arg;
        } else {
            float acc = 0.f;
            for (int64_t h = h0; h < h1; h++)
                for (int64_t w = w0; w < w1; w++)
                    acc += ld(xp, (h * p.w + w) * C);
            st(y, i, acc / (float)div);
        }
    }
}

// gather form, as the NCHW kernel: each input element sums the outputs
// whose window holds it, so no atomics
template <class T>
__global__ void k_pool_bwd_nhwc(dlg_cuk_pool p, int64_t C, const T *dy, const int *mask, T *dx)
{
    GRID_LOOP(i, p.nc * p.h * p.w)
    {
        int64_t c = i % C, r = i / C;
        int64_t w = r % p.w, h = (r / p.w) % p.h, n = r / (p.w * p.h);
        int64_t ph0 = (h + p.ph < p.kh) ? 0 : (h + p.ph - p.kh) / p.sh + 1;
        int64_t ph1 = min((h + p.ph) / p.sh + 1, p.oh);
        int64_t pw0 = (w + p.pw < p.kw) ? 0 : (w + p.pw - p.kw) / p.sw + 1;
        int64_t pw1 = min((w + p.pw) / p.sw + 1, p.ow);
        int64_t base = n * p.oh * p.ow * C + c;
        float acc = 0.f;
        for (int64_t oh = ph0; oh < ph1; oh++)
            for (int64_t ow = pw0; ow < pw1; ow++) {
                int64_t o = base + (oh * p.ow + ow) * C;
                if (p.max) {
                    if (mask[o] == (int)(h * p.w + w))
                        acc += ld(dy, o);
                } else {
                    int64_t a = oh * p.sh - p.ph, b = ow * p.sw - p.pw;
                    int64_t div = (min(a + p.kh, p.h + p.ph) - a) * (min(b + p.kw, p.w + p.pw) - b);
                    acc += ld(dy, o) / (float)div;
                }
            }
        st(dx, i, acc);
    }
}

// block (32 channels, kRows rows): coalesced along channels; the kRows
// partial sums are added in shared memory, then atomically per block
template <class T>
__global__ void k_bias_grad_nhwc(const T *dy, float *db, int64_t rows, int64_t C)
{
    __shared__ float sh[kRows][kTile + 1];
    int64_t c = (int64_t)blockIdx.x * kTile + threadIdx.x;
    float acc = 0.f;
    if (c < C)
        for (int64_t r = (int64_t)blockIdx.y * kRows + threadIdx.y; r < rows;
             r += (int64_t)gridDim.y * kRows)
            acc += ld(dy, r * C + c);
    sh[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        float t = 0.f;
        for (int k = 0; k < kRows; k++)
            t += sh[k][threadIdx.x];
        atomicAdd(&db[c], t);
    }
}

} // namespace

// T is the device storage type that ht names
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

extern "C" {

int dlg_cuk_transpose(dlg_cu_stream s, dlg_cuk_htype ht, bool src_half, bool dst_half,
                      const void *x, void *y, int64_t n, int64_t a, int64_t b)
{
    int rc = 0;
    if (src_half && dst_half)
        HALF_CASE(ht, rc = launch_transpose(s, (const T *)x, (T *)y, n, a, b));
    else if (src_half)
        HALF_CASE(ht, rc = launch_transpose(s, (const T *)x, (float *)y, n, a, b));
    else if (dst_half)
        HALF_CASE(ht, rc = launch_transpose(s, (const float *)x, (T *)y, n, a, b));
    else
        rc = launch_transpose(s, (const float *)x, (float *)y, n, a, b);
    return rc;
}

int dlg_cuk_pool_fwd_nhwc_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_cuk_pool *p, int64_t c,
                            const dlg_half *x, dlg_half *y, int *mask)
{
    HALF_CASE(ht, k_pool_fwd_nhwc<<<blocks_for(p->nc * p->oh * p->ow), kThreads, 0, s>>>(
                      *p, c, (const T *)x, (T *)y, mask));
    return launched();
}

int dlg_cuk_pool_bwd_nhwc_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_cuk_pool *p, int64_t c,
                            const dlg_half *dy, const int *mask, dlg_half *dx)
{
    HALF_CASE(ht, k_pool_bwd_nhwc<<<blocks_for(p->nc * p->h * p->w), kThreads, 0, s>>>(
                      *p, c, (const T *)dy, mask, (T *)dx));
    return launched();
}

int dlg_cuk_bias_grad_nhwc_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *dy, float *db,
                             int64_t rows, int64_t c)
{
    cudaError_t e = cudaMemsetAsync(db, 0, (size_t)c * sizeof(float), s);
    if (e != cudaSuccess)
        return (int)e;
    int64_t gy = (rows + kRows * 64 - 1) / (kRows * 64);
    gy = gy < 1 ? 1 : gy > 1024 ? 1024 : gy;
    dim3 grid((unsigned)((c + kTile - 1) / kTile), (unsigned)gy);
    HALF_CASE(ht, k_bias_grad_nhwc<<<grid, dim3(kTile, kRows), 0, s>>>((const T *)dy, db, rows, c));
    return launched();
}

} // extern "C"
