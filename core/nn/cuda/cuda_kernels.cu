// Small CUDA kernels of the CUDA backend: element-wise layers, the fused
// SGD update, Caffe-exact pooling and the softmax loss.  cuDNN/cuBLAS do
// the rest; these exist where no library call matches Caffe's semantics.
#include "cuda_kernels.h"
#include "../rng.h"
#include "cuda_kernel_common.cuh"
#include "cuda_pool_window.cuh"

#include <float.h>
#include <math.h>

namespace {

__global__ void k_sgd(float *w, const float *g, float *h, int64_t n, float lr, float m, float d)
{
    GRID_LOOP(i, n)
    {
        float v = m * h[i] + lr * (g[i] + d * w[i]);
        h[i] = v;
        w[i] -= v;
    }
}

// one block per chunk; lr/decay multiplied as the per-param path does.
// Scaled (fp16 loss scaling): nothing at all on an overflowed step, else
// the gradient times 1/scale.
template <bool Scaled>
__global__ void k_sgd_multi(const dlg_cuk_sgd_tensor *t, const dlg_cuk_sgd_chunk *c, float lr,
                            float m, float d, const dlg_scaler *sc)
{
    float gm = 1.f;
    if (Scaled) {
        if (sc->found_inf)
            return;
        gm = 1.f / sc->scale;
    }
    const dlg_cuk_sgd_chunk ch = c[blockIdx.x];
    const dlg_cuk_sgd_tensor tt = t[ch.tensor];
    const float l = lr * tt.lr_mult, dd = d * tt.decay_mult;
    int64_t end = ch.start + DLG_CUK_SGD_CHUNK < tt.n ? ch.start + DLG_CUK_SGD_CHUNK : tt.n;
    for (int64_t i = ch.start + threadIdx.x; i < end; i += blockDim.x) {
        float v = m * tt.h[i] + l * (Scaled ? tt.g[i] * gm + dd * tt.w[i] : tt.g[i] + dd * tt.w[i]);
        tt.h[i] = v;
        tt.w[i] -= v;
    }
}

// one block per chunk of the SGD table: any inf/NaN sets found_inf
__global__ void k_grad_check(const dlg_cuk_sgd_tensor *t, const dlg_cuk_sgd_chunk *c,
                             dlg_scaler *sc)
{
    const dlg_cuk_sgd_chunk ch = c[blockIdx.x];
    const dlg_cuk_sgd_tensor tt = t[ch.tensor];
    int64_t end = ch.start + DLG_CUK_SGD_CHUNK < tt.n ? ch.start + DLG_CUK_SGD_CHUNK : tt.n;
    int bad = 0;
    for (int64_t i = ch.start + threadIdx.x; i < end; i += blockDim.x)
        bad |= !isfinite(tt.g[i]);
    if (__syncthreads_or(bad) && threadIdx.x == 0)
        sc->found_inf = 1;
}

__global__ void k_scaler_update(dlg_scaler *sc) { dlg_scaler_update(sc); }

__global__ void k_relu_fwd(const float *x, float *y, int64_t n)
{
    GRID_LOOP(i, n) { y[i] = x[i] > 0.f ? x[i] : 0.f; }
}

__global__ void k_relu_bwd(const float *x, const float *dy, float *dx, int64_t n)
{
    GRID_LOOP(i, n) { dx[i] = x[i] > 0.f ? dy[i] : 0.f; }
}

__global__ void k_add(const float *a, const float *b, float *y, int64_t n)
{
    GRID_LOOP(i, n) { y[i] = a[i] + b[i]; }
}

__global__ void k_acc(float *y, const float *a, int64_t n)
{
    GRID_LOOP(i, n) { y[i] += a[i]; }
}

__global__ void k_mul(const float *a, const float *b, float *y, int64_t n)
{
    GRID_LOOP(i, n) { y[i] = a[i] * b[i]; }
}

// the step counter lives on the device, so a captured step draws a new mask
// on every replay; k_step_inc adds one after.  The stream is rng.h's, the
// one the cpu and ref backends draw.
__global__ void k_dropout(const float *x, float *y, float *mask, int64_t n, float ratio,
                          float scale, uint64_t base, const uint64_t *step)
{
    uint64_t seed = dlg_dropout_seed(base, *step);
    GRID_LOOP(i, n)
    {
        float m = dlg_dropout_u(seed, (uint64_t)i) >= ratio ? scale : 0.f;
        mask[i] = m;
        y[i] = x[i] * m;
    }
}

__global__ void k_step_inc(uint64_t *step) { *step += 1; }

__global__ void k_bias_rows(float *y, const float *b, int64_t rows, int64_t cols)
{
    GRID_LOOP(i, rows * cols) { y[i] += b[i % cols]; }
}

__global__ void k_col_sum(const float *dy, float *db, int64_t rows, int64_t cols)
{
    GRID_LOOP(j, cols)
    {
        float acc = 0.f;
        for (int64_t i = 0; i < rows; i++)
            acc += dy[i * cols + j];
        db[j] = acc;
    }
}

template <class T> __global__ void k_pool_fwd(dlg_cuk_pool p, const T *x, T *y, int *mask)
{
    GRID_LOOP(i, p.nc * p.oh * p.ow)
    {
        int64_t ow = i % p.ow, oh = (i / p.ow) % p.oh, nc = i / (p.ow * p.oh), arg = 0;
        st(y, i, pool_window(p, x, nc * p.h * p.w, 1, oh, ow, &arg));
        if (mask && p.max)
            mask[i] = (int)arg;
    }
}

// one thread per input element (pool_gather: no atomics)
template <class T> __global__ void k_pool_bwd(dlg_cuk_pool p, const T *dy, const int *mask, T *dx)
{
    GRID_LOOP(i, p.nc * p.h * p.w)
    {
        int64_t w = i % p.w, h = (i / p.w) % p.h, nc = i / (p.w * p.h);
        st(dx, i, pool_gather(p, dy, mask, nc * p.oh * p.ow, 1, h, w));
    }
}

__device__ float block_sum(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__device__ float block_max(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] = fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}


// ---- half storage (__nv_bfloat16 or __half), fp32 arithmetic ----------------------

template <class A, class B> __global__ void k_cvt(const A *x, B *y, int64_t n)
{
    GRID_LOOP(i, n) { st(y, i, ld(x, i)); }
}
template <class T> __global__ void k_relu_fwd_h(const T *x, T *y, int64_t n)
{
    GRID_LOOP(i, n) { st(y, i, fmaxf(ld(x, i), 0.f)); }
}
template <class T> __global__ void k_relu_bwd_h(const T *x, const T *dy, T *dx, int64_t n)
{
    GRID_LOOP(i, n) { st(dx, i, ld(x, i) > 0.f ? ld(dy, i) : 0.f); }
}
template <class T> __global__ void k_add_h(const T *a, const T *b, T *y, int64_t n)
{
    GRID_LOOP(i, n) { st(y, i, ld(a, i) + ld(b, i)); }
}
template <class T> __global__ void k_acc_h(T *y, const T *a, int64_t n)
{
    GRID_LOOP(i, n) { st(y, i, ld(y, i) + ld(a, i)); }
}
template <class T> __global__ void k_mul_h(const T *a, const float *m, T *y, int64_t n)
{
    GRID_LOOP(i, n) { st(y, i, ld(a, i) * m[i]); }
}
template <class T>
__global__ void k_dropout_h(const T *x, T *y, float *mask, int64_t n, float ratio, float scale,
                            uint64_t base, const uint64_t *step)
{
    uint64_t seed = dlg_dropout_seed(base, *step); // as k_dropout
    GRID_LOOP(i, n)
    {
        float m = dlg_dropout_u(seed, (uint64_t)i) >= ratio ? scale : 0.f;
        mask[i] = m;
        st(y, i, ld(x, i) * m);
    }
}
// 32-bit index arithmetic where the tensor allows (64-bit division is slow)
template <class T, class I> __global__ void k_bias_nchw_h(T *y, const float *b, I c, I hw, I total)
{
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (I)blockDim.x * gridDim.x)
        st(y, i, ld(y, i) + b[(i / hw) % c]);
}
// hw >= 32: grid (channel, image slice), contiguous rows of hw, partial
// sums added atomically
template <class T>
__global__ void k_bias_grad_nchw_h(const T *dy, float *db, int64_t n, int64_t c, int64_t hw)
{
    __shared__ float sh[kThreads];
    int64_t ch = blockIdx.x;
    float acc = 0.f;
    for (int64_t m = blockIdx.y; m < n; m += gridDim.y)
        for (int64_t i = threadIdx.x; i < hw; i += blockDim.x)
            acc += ld(dy, (m * c + ch) * hw + i);
    acc = block_sum(acc, sh);
    if (threadIdx.x == 0)
        atomicAdd(&db[ch], acc);
}
// hw < 32 (a fully connected layer: hw = 1): grid (channels / kThreads,
// slices of `each` values), a thread per channel and slice, so
// neighbouring threads read neighbouring channels; the slices' sums added
// atomically.  (A block per channel left most of its threads idle on a
// batch's few values and paid a tree of barriers for them.)
template <class T>
__global__ void k_bias_grad_cols_h(const T *dy, float *db, int64_t n, int64_t c, int64_t hw,
                                   int64_t each)
{
    int64_t ch = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= c)
        return;
    int64_t j = (int64_t)blockIdx.y * each, end = j + each < n * hw ? j + each : n * hw;
    float acc = 0.f;
    for (; j < end; j++)
        acc += ld(dy, ((j / hw) * c + ch) * hw + j % hw);
    atomicAdd(&db[ch], acc);
}

// one block per row: lse, the label's logit, how many logits beat it
template <class T>
__global__ void k_loss_rows(const T *x, const float *labels, int64_t k, float *lse,
                            float *rowloss, float *rank, int *flag)
{
    __shared__ float sh[kThreads];
    int64_t r = blockIdx.x;
    const T *xr = x + r * k;
    float lab = labels[r];
    bool bad = !(lab >= 0.f && lab < (float)k) || lab != floorf(lab);
    int64_t y = bad ? 0 : (int64_t)lab;
    float mx = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < k; j += blockDim.x)
        mx = fmaxf(mx, ld(xr, j));
    mx = block_max(mx, sh);
    float s = 0.f, above = 0.f, xy = ld(xr, y);
    for (int64_t j = threadIdx.x; j < k; j += blockDim.x) {
        s += expf(ld(xr, j) - mx);
        above += ld(xr, j) > xy ? 1.f : 0.f;
    }
    s = block_sum(s, sh);
    above = block_sum(above, sh);
    if (threadIdx.x == 0) {
        float l = mx + logf(s);
        lse[r] = l;
        rowloss[r] = l - xy;
        rank[r] = above;
        if (bad)
            atomicExch(flag, 1); // rows' blocks may say it at once
    }
}

__global__ void k_loss_total(const float *rowloss, const float *rank, int64_t n, float *out)
{
    __shared__ float sh[kThreads];
    float l = 0.f, t1 = 0.f, t5 = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        l += rowloss[i];
        t1 += rank[i] < 1.f ? 1.f : 0.f;
        t5 += rank[i] < 5.f ? 1.f : 0.f;
    }
    l = block_sum(l, sh);
    t1 = block_sum(t1, sh);
    t5 = block_sum(t5, sh);
    if (threadIdx.x == 0) {
        out[0] = l / (float)n;
        out[1] = t1 / (float)n;
        out[2] = t5 / (float)n;
    }
}

template <class T>
__global__ void k_loss_bwd(const T *x, const float *labels, const float *lse, int64_t n, int64_t k,
                           float weight, T *dx, const dlg_scaler *sc)
{
    const float scale = weight * (sc ? sc->scale : 1.f);
    GRID_LOOP(i, n * k)
    {
        int64_t r = i / k, j = i % k;
        float p = expf(ld(x, i) - lse[r]);
        st(dx, i, (p - ((float)j == labels[r] ? 1.f : 0.f)) / (float)n * scale);
    }
}

} // namespace

extern "C" {

int dlg_cuk_sgd(dlg_cu_stream s, float *w, const float *g, float *h, int64_t n, float lr,
                float momentum, float decay)
{
    k_sgd<<<blocks_for(n), kThreads, 0, s>>>(w, g, h, n, lr, momentum, decay);
    return launched();
}

int dlg_cuk_sgd_multi(dlg_cu_stream s, const dlg_cuk_sgd_tensor *t, const dlg_cuk_sgd_chunk *c,
                      int nchunks, float lr, float momentum, float decay)
{
    if (nchunks > 0)
        k_sgd_multi<false><<<(unsigned)nchunks, 512, 0, s>>>(t, c, lr, momentum, decay, nullptr);
    return launched();
}

int dlg_cuk_sgd_multi_scaled(dlg_cu_stream s, const dlg_cuk_sgd_tensor *t,
                             const dlg_cuk_sgd_chunk *c, int nchunks, float lr, float momentum,
                             float decay, const dlg_scaler *sc)
{
    if (nchunks > 0)
        k_sgd_multi<true><<<(unsigned)nchunks, 512, 0, s>>>(t, c, lr, momentum, decay, sc);
    return launched();
}

int dlg_cuk_grad_check_multi(dlg_cu_stream s, const dlg_cuk_sgd_tensor *t,
                             const dlg_cuk_sgd_chunk *c, int nchunks, dlg_scaler *sc)
{
    if (nchunks > 0)
        k_grad_check<<<(unsigned)nchunks, 512, 0, s>>>(t, c, sc);
    return launched();
}

int dlg_cuk_scaler_update(dlg_cu_stream s, dlg_scaler *sc)
{
    k_scaler_update<<<1, 1, 0, s>>>(sc);
    return launched();
}

int dlg_cuk_relu_fwd(dlg_cu_stream s, const float *x, float *y, int64_t n)
{
    k_relu_fwd<<<blocks_for(n), kThreads, 0, s>>>(x, y, n);
    return launched();
}

int dlg_cuk_relu_bwd(dlg_cu_stream s, const float *x, const float *dy, float *dx, int64_t n)
{
    k_relu_bwd<<<blocks_for(n), kThreads, 0, s>>>(x, dy, dx, n);
    return launched();
}

int dlg_cuk_add(dlg_cu_stream s, const float *a, const float *b, float *y, int64_t n)
{
    k_add<<<blocks_for(n), kThreads, 0, s>>>(a, b, y, n);
    return launched();
}

int dlg_cuk_acc(dlg_cu_stream s, float *y, const float *a, int64_t n)
{
    k_acc<<<blocks_for(n), kThreads, 0, s>>>(y, a, n);
    return launched();
}

int dlg_cuk_mul(dlg_cu_stream s, const float *a, const float *b, float *y, int64_t n)
{
    k_mul<<<blocks_for(n), kThreads, 0, s>>>(a, b, y, n);
    return launched();
}

int dlg_cuk_dropout_fwd(dlg_cu_stream s, const float *x, float *y, float *mask, int64_t n,
                        float ratio, uint64_t seed, uint64_t *step)
{
    k_dropout<<<blocks_for(n), kThreads, 0, s>>>(x, y, mask, n, ratio, 1.0f / (1.0f - ratio),
                                                 seed, step);
    int rc = launched();
    if (rc)
        return rc;
    k_step_inc<<<1, 1, 0, s>>>(step);
    return launched();
}

int dlg_cuk_bias_rows(dlg_cu_stream s, float *y, const float *b, int64_t rows, int64_t cols)
{
    k_bias_rows<<<blocks_for(rows * cols), kThreads, 0, s>>>(y, b, rows, cols);
    return launched();
}

int dlg_cuk_col_sum(dlg_cu_stream s, const float *dy, float *db, int64_t rows, int64_t cols)
{
    k_col_sum<<<blocks_for(cols), kThreads, 0, s>>>(dy, db, rows, cols);
    return launched();
}

int dlg_cuk_pool_fwd(dlg_cu_stream s, const dlg_cuk_pool *p, const float *x, float *y, int *mask)
{
    k_pool_fwd<<<blocks_for(p->nc * p->oh * p->ow), kThreads, 0, s>>>(*p, x, y, mask);
    return launched();
}

int dlg_cuk_pool_bwd(dlg_cu_stream s, const dlg_cuk_pool *p, const float *dy, const int *mask,
                     float *dx)
{
    k_pool_bwd<<<blocks_for(p->nc * p->h * p->w), kThreads, 0, s>>>(*p, dy, mask, dx);
    return launched();
}

int dlg_cuk_loss_fwd(dlg_cu_stream s, const float *x, const float *labels, int64_t n, int64_t k,
                     float *out, float *lse, int *flag)
{
    // lse holds 3n floats: lse, per-row loss, per-row rank
    k_loss_rows<<<(unsigned)n, kThreads, 0, s>>>(x, labels, k, lse, lse + n, lse + 2 * n, flag);
    k_loss_total<<<1, kThreads, 0, s>>>(lse + n, lse + 2 * n, n, out);
    return launched();
}

int dlg_cuk_loss_bwd(dlg_cu_stream s, const float *x, const float *labels, const float *lse,
                     int64_t n, int64_t k, float weight, float *dx)
{
    k_loss_bwd<<<blocks_for(n * k), kThreads, 0, s>>>(x, labels, lse, n, k, weight, dx, nullptr);
    return launched();
}

int dlg_cuk_f2h(dlg_cu_stream s, dlg_cuk_htype ht, const float *x, dlg_half *y, int64_t n)
{
    HALF_CASE(ht, k_cvt<<<blocks_for(n), kThreads, 0, s>>>(x, (T *)y, n));
    return launched();
}
int dlg_cuk_h2f(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *x, float *y, int64_t n)
{
    HALF_CASE(ht, k_cvt<<<blocks_for(n), kThreads, 0, s>>>((const T *)x, y, n));
    return launched();
}
int dlg_cuk_relu_fwd_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *x, dlg_half *y,
                       int64_t n)
{
    HALF_CASE(ht, k_relu_fwd_h<<<blocks_for(n), kThreads, 0, s>>>((const T *)x, (T *)y, n));
    return launched();
}
int dlg_cuk_relu_bwd_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *x, const dlg_half *dy,
                       dlg_half *dx, int64_t n)
{
    HALF_CASE(ht, k_relu_bwd_h<<<blocks_for(n), kThreads, 0, s>>>((const T *)x, (const T *)dy,
                                                                   (T *)dx, n));
    return launched();
}
int dlg_cuk_add_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *a, const dlg_half *b,
                  dlg_half *y, int64_t n)
{
    HALF_CASE(ht, k_add_h<<<blocks_for(n), kThreads, 0, s>>>((const T *)a, (const T *)b, (T *)y,
                                                              n));
    return launched();
}
int dlg_cuk_acc_h(dlg_cu_stream s, dlg_cuk_htype ht, dlg_half *y, const dlg_half *a, int64_t n)
{
    HALF_CASE(ht, k_acc_h<<<blocks_for(n), kThreads, 0, s>>>((T *)y, (const T *)a, n));
    return launched();
}
int dlg_cuk_mul_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *a, const float *mask,
                  dlg_half *y, int64_t n)
{
    HALF_CASE(ht, k_mul_h<<<blocks_for(n), kThreads, 0, s>>>((const T *)a, mask, (T *)y, n));
    return launched();
}
int dlg_cuk_dropout_fwd_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *x, dlg_half *y,
                          float *mask, int64_t n, float ratio, uint64_t seed, uint64_t *step)
{
    HALF_CASE(ht, k_dropout_h<<<blocks_for(n), kThreads, 0, s>>>(
                      (const T *)x, (T *)y, mask, n, ratio, 1.0f / (1.0f - ratio), seed, step));
    int rc = launched();
    if (rc)
        return rc;
    k_step_inc<<<1, 1, 0, s>>>(step);
    return launched();
}
int dlg_cuk_bias_nchw_h(dlg_cu_stream s, dlg_cuk_htype ht, dlg_half *y, const float *b, int64_t n,
                        int64_t c, int64_t hw)
{
    int64_t total = n * c * hw;
    // int indices only while i + the grid stride (at most 65535 * 16 blocks)
    // cannot pass INT_MAX (it would wrap negative and index before y)
    if (total <= 2147483647LL - 65535LL * 16 * kThreads)
        HALF_CASE(ht, k_bias_nchw_h<T, int><<<blocks_for(total), kThreads, 0, s>>>(
                          (T *)y, b, (int)c, (int)hw, (int)total));
    else
        HALF_CASE(ht, k_bias_nchw_h<T, int64_t><<<blocks_for(total), kThreads, 0, s>>>(
                          (T *)y, b, c, hw, total));
    return launched();
}
int dlg_cuk_bias_grad_nchw_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *dy, float *db,
                             int64_t n, int64_t c, int64_t hw)
{
    cudaError_t e = cudaMemsetAsync(db, 0, (size_t)c * sizeof(float), s);
    if (e != cudaSuccess)
        return (int)e;
    const int64_t per = n * hw; // values per channel
    if (per <= 0 || c <= 0)
        return 0; // no values: the zeros stand
    if (hw < 32) {
        // values a thread sums: 16, or more where grid y's 65535 slices
        // would not hold them all
        int64_t each = (per + 65534) / 65535;
        if (each < 16)
            each = 16;
        dim3 grid((unsigned)((c + kThreads - 1) / kThreads), (unsigned)((per + each - 1) / each));
        HALF_CASE(ht, k_bias_grad_cols_h<<<grid, kThreads, 0, s>>>((const T *)dy, db, n, c, hw, each));
        return launched();
    }
    int64_t slices = (per + 8191) / 8192; // at least 1
    if (slices > 64)
        slices = 64;
    if (slices > n)
        slices = n;
    dim3 grid((unsigned)c, (unsigned)slices);
    HALF_CASE(ht, k_bias_grad_nchw_h<<<grid, kThreads, 0, s>>>((const T *)dy, db, n, c, hw));
    return launched();
}
int dlg_cuk_pool_fwd_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_cuk_pool *p, const dlg_half *x,
                       dlg_half *y, int *mask)
{
    HALF_CASE(ht, k_pool_fwd<<<blocks_for(p->nc * p->oh * p->ow), kThreads, 0, s>>>(
                      *p, (const T *)x, (T *)y, mask));
    return launched();
}
int dlg_cuk_pool_bwd_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_cuk_pool *p,
                       const dlg_half *dy, const int *mask, dlg_half *dx)
{
    HALF_CASE(ht, k_pool_bwd<<<blocks_for(p->nc * p->h * p->w), kThreads, 0, s>>>(
                      *p, (const T *)dy, mask, (T *)dx));
    return launched();
}
int dlg_cuk_loss_fwd_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *x, const float *labels,
                       int64_t n, int64_t k, float *out, float *lse, int *flag)
{
    HALF_CASE(ht, k_loss_rows<<<(unsigned)n, kThreads, 0, s>>>((const T *)x, labels, k, lse,
                                                                lse + n, lse + 2 * n, flag));
    k_loss_total<<<1, kThreads, 0, s>>>(lse + n, lse + 2 * n, n, out);
    return launched();
}
int dlg_cuk_loss_bwd_h(dlg_cu_stream s, dlg_cuk_htype ht, const dlg_half *x, const float *labels,
                       const float *lse, int64_t n, int64_t k, float weight, dlg_half *dx,
                       const dlg_scaler *scale)
{
    HALF_CASE(ht, k_loss_bwd<<<blocks_for(n * k), kThreads, 0, s>>>((const T *)x, labels, lse, n,
                                                                     k, weight, (T *)dx, scale));
    return launched();
}

} // extern "C"
