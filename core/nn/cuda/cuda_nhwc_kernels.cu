// Channels-last (NHWC) kernels of the half backends: layout conversions
// (tiled transposes that also convert fp32 <-> bf16/fp16), Caffe pooling on
// NHWC, and the per-channel bias gradient of an NHWC tensor.
#include "cuda_nhwc_kernels.h"
#include "cuda_kernel_common.cuh"
#include "cuda_pool_window.cuh"

namespace {

constexpr int kTile = 32, kRows = 8;
// grid y's and z's hardware limit (and x's, which is 2^31 - 1)
constexpr int64_t kGridYZMax = 65535, kGridXMax = 2147483647;

// block (kTile, kRows) moves a kTile x kTile tile through shared memory, so
// both the reads and the writes are coalesced.  Grid y walks the rows of
// tiles and grid z the n matrices, each looping where the tensor has more
// than the grid holds (NHWC -> NCHW of a 1449 x 1449 image: a = H*W needs
// 65613 rows of tiles); a block's loop counts are its threads' (barriers
// stay uniform).
template <class A, class B>
__global__ void k_transpose(const A *x, B *y, int64_t n, int64_t a, int64_t b)
{
    __shared__ float tile[kTile][kTile + 1];
    const int64_t b0 = (int64_t)blockIdx.x * kTile;
    for (int64_t m = blockIdx.z; m < n; m += gridDim.z) {
        const A *xs = x + m * a * b;
        B *ys = y + m * a * b;
        for (int64_t a0 = (int64_t)blockIdx.y * kTile; a0 < a; a0 += (int64_t)gridDim.y * kTile) {
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
            __syncthreads(); // the tile is refilled by the next pass
        }
    }
}

// b < kTile (an image's 3 channels last, a 3x3 or 5x5 filter's taps): a
// tile kTile wide would leave most of its threads idle, so a thread per
// element instead, reading in order (coalesced) and writing b interleaved
// runs of a; no shared memory and no barrier
template <class A, class B>
__global__ void k_transpose_narrow(const A *x, B *y, int64_t n, int64_t a, int64_t b)
{
    GRID_LOOP(k, n * a * b)
    {
        int64_t j = k % b, i = (k / b) % a, m = k / (a * b);
        st(y, (m * b + j) * a + i, ld(x, k));
    }
}

int64_t capped(int64_t want, int64_t limit) { return want < limit ? want : limit; }

template <class A, class B>
int launch_transpose(cudaStream_t s, const A *x, B *y, int64_t n, int64_t a, int64_t b,
                     int64_t max_gy, int64_t max_gz)
{
    if (n <= 0 || a <= 0 || b <= 0)
        return 0;
    if (max_gy < 1 || max_gz < 1)
        return (int)cudaErrorInvalidValue;
    if (b < kTile) {
        k_transpose_narrow<<<blocks_for(n * a * b), kThreads, 0, s>>>(x, y, n, a, b);
        return launched();
    }
    int64_t gx = (b + kTile - 1) / kTile;
    if (gx > kGridXMax) // b above 2^36 elements: more than any device holds
        return (int)cudaErrorInvalidConfiguration;
    dim3 grid((unsigned)gx, (unsigned)capped((a + kTile - 1) / kTile, max_gy),
              (unsigned)capped(n, max_gz));
    k_transpose<<<grid, dim3(kTile, kRows), 0, s>>>(x, y, n, a, b);
    return launched();
}

// one thread per output (n, oh, ow, c): channels adjacent, so coalesced
template <class T>
__global__ void k_pool_fwd_nhwc(dlg_cuk_pool p, int64_t C, const T *x, T *y, int *mask)
{
    GRID_LOOP(i, p.nc * p.oh * p.ow)
    {
        int64_t c = i % C, r = i / C, arg = 0;
        int64_t ow = r % p.ow, oh = (r / p.ow) % p.oh, n = r / (p.ow * p.oh);
        st(y, i, pool_window(p, x, n * p.h * p.w * C + c, C, oh, ow, &arg));
        if (mask && p.max)
            mask[i] = (int)arg;
    }
}

// one thread per input element (pool_gather: no atomics)
template <class T>
__global__ void k_pool_bwd_nhwc(dlg_cuk_pool p, int64_t C, const T *dy, const int *mask, T *dx)
{
    GRID_LOOP(i, p.nc * p.h * p.w)
    {
        int64_t c = i % C, r = i / C;
        int64_t w = r % p.w, h = (r / p.w) % p.h, n = r / (p.w * p.h);
        st(dx, i, pool_gather(p, dy, mask, n * p.oh * p.ow * C + c, C, h, w));
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

extern "C" {

int dlg_cuk_transpose_grid(dlg_cu_stream s, dlg_cuk_htype ht, bool src_half, bool dst_half,
                           const void *x, void *y, int64_t n, int64_t a, int64_t b,
                           int64_t max_gy, int64_t max_gz)
{
    int rc = 0;
    if (src_half && dst_half)
        HALF_CASE(ht, rc = launch_transpose(s, (const T *)x, (T *)y, n, a, b, max_gy, max_gz));
    else if (src_half)
        HALF_CASE(ht, rc = launch_transpose(s, (const T *)x, (float *)y, n, a, b, max_gy, max_gz));
    else if (dst_half)
        HALF_CASE(ht, rc = launch_transpose(s, (const float *)x, (T *)y, n, a, b, max_gy, max_gz));
    else
        rc = launch_transpose(s, (const float *)x, (float *)y, n, a, b, max_gy, max_gz);
    return rc;
}

int dlg_cuk_transpose(dlg_cu_stream s, dlg_cuk_htype ht, bool src_half, bool dst_half,
                      const void *x, void *y, int64_t n, int64_t a, int64_t b)
{
    return dlg_cuk_transpose_grid(s, ht, src_half, dst_half, x, y, n, a, b, kGridYZMax,
                                  kGridYZMax);
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
