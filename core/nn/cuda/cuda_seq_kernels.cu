// Kernels of the sequence layers (embedding, the LSTM's weight packing for
// cuDNN) and of gradient clipping; see cuda_seq_kernels.h.
#include "cuda_seq_kernels.h"
#include "cuda_kernel_common.cuh"

namespace {

constexpr int kTile = 32;          // transpose tile (kTile x kTile, 32 x 8 threads)
constexpr int kTileRows = 8;
constexpr int64_t kGridYMax = 65535; // grid y's hardware limit

// The id a float holds, or -1 if it is not an integer in [0, vocab): the
// reference kernel's rule (ref_lstm.c), with the range checked before the
// conversion so a huge value never reaches it.
__device__ __forceinline__ int64_t token(float v, int64_t vocab)
{
    if (!(v >= 0.f) || !(v < (float)vocab))
        return -1;
    int64_t id = (int64_t)v;
    return (float)id == v ? id : -1;
}

__global__ void k_embed_fwd(const float *ids, const float *table, float *y, int64_t n, int64_t d,
                            int64_t vocab, int *flag)
{
    GRID_LOOP(i, n * d)
    {
        int64_t r = i / d, k = i - r * d, id = token(ids[r], vocab);
        if (id < 0) {
            y[i] = 0.f;
            if (k == 0)
                atomicExch(flag, 1); // rows may say it at once
        } else {
            y[i] = table[id * d + k];
        }
    }
}

// One block per row r.  Only the block of the first row holding an id
// works: per column, in row order, it sums dy over every row with that id
// (matches compacted tile by tile with a ballot, so the order is the
// rows'), and adds the sum to dt[id].  Each table row has one writer and
// one summation order: deterministic, no atomics, no sort; O(n^2) id
// comparisons, cheap for the batch x bptt rows of a language model.
__global__ void k_embed_bwd_rows(const float *ids, const float *dy, float *dt, int64_t n,
                                 int64_t d, int64_t vocab)
{
    __shared__ int64_t list[kThreads];
    __shared__ int wcount[kThreads / 32];
    const int64_t r = blockIdx.x, id = token(ids[r], vocab);
    if (id < 0)
        return; // the whole block: r is the block's
    int seen = 0;
    for (int64_t q = threadIdx.x; q < r; q += blockDim.x)
        seen |= token(ids[q], vocab) == id;
    if (__syncthreads_or(seen))
        return; // an earlier row's block owns this id
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int64_t k0 = 0; k0 < d; k0 += blockDim.x) {
        const int64_t k = k0 + threadIdx.x;
        float acc = 0.f;
        for (int64_t base = r; base < n; base += blockDim.x) {
            const int64_t q = base + threadIdx.x;
            const bool m = q < n && token(ids[q], vocab) == id;
            const unsigned bal = __ballot_sync(0xffffffffu, m);
            if (lane == 0)
                wcount[warp] = __popc(bal);
            __syncthreads();
            int off = 0, cnt = 0;
            for (int w = 0; w < nwarps; w++) {
                off += w < warp ? wcount[w] : 0;
                cnt += wcount[w];
            }
            if (m)
                list[off + __popc(bal & ((1u << lane) - 1u))] = q;
            __syncthreads();
            if (k < d)
                for (int j = 0; j < cnt; j++)
                    acc += dy[list[j] * d + k];
            __syncthreads(); // the next tile rewrites list and wcount
        }
        if (k < d)
            dt[id * d + k] += acc;
    }
}

// Many rows: one atomic add per element (the order of the additions, and
// so the last bits, may differ between runs).
__global__ void k_embed_bwd_atomic(const float *ids, const float *dy, float *dt, int64_t n,
                                   int64_t d, int64_t vocab)
{
    GRID_LOOP(i, n * d)
    {
        int64_t r = i / d, id = token(ids[r], vocab);
        if (id >= 0)
            atomicAdd(&dt[id * d + (i - r * d)], dy[i]);
    }
}

// w: rows x 4h (row stride 4h).  gate g: h x rows, of type T (float, or
// a half type: st rounds to nearest even, ld widens).  Tiled
// through shared memory (fp32) so both the reads and the writes are
// coalesced.  Grid x walks the tiles along the contiguous side, grid y
// the other side's, looping where there are more than grid y holds
// (65535: 2 M rows); z is the gate.  A block's loop count is the same
// for all its threads, so the barriers stay uniform.
template <class T> __global__ void k_lstm_pack(const float *w, int64_t rows, int64_t h, dlg_cuk_gates gate)
{
    __shared__ float tile[kTile][kTile + 1];
    const int g = blockIdx.z;
    const int64_t c0 = (int64_t)blockIdx.x * kTile;
    T *dst = (T *)gate.p[g];
    for (int64_t r0 = (int64_t)blockIdx.y * kTile; r0 < rows; r0 += (int64_t)gridDim.y * kTile) {
        for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
            int64_t r = r0 + j, c = c0 + threadIdx.x;
            if (r < rows && c < h)
                tile[j][threadIdx.x] = w[r * 4 * h + g * h + c];
        }
        __syncthreads();
        for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
            int64_t c = c0 + j, r = r0 + threadIdx.x;
            if (c < h && r < rows)
                st(dst, c * rows + r, tile[threadIdx.x][j]);
        }
        __syncthreads(); // the next pass refills the tile
    }
}

template <class T> __global__ void k_lstm_unpack(dlg_cuk_gates gate, int64_t rows, int64_t h, float *w)
{
    __shared__ float tile[kTile][kTile + 1];
    const int g = blockIdx.z;
    const int64_t r0 = (int64_t)blockIdx.x * kTile;
    const T *src = (const T *)gate.p[g];
    for (int64_t c0 = (int64_t)blockIdx.y * kTile; c0 < h; c0 += (int64_t)gridDim.y * kTile) {
        for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
            int64_t c = c0 + j, r = r0 + threadIdx.x;
            if (c < h && r < rows)
                tile[j][threadIdx.x] = ld(src, c * rows + r);
        }
        __syncthreads();
        for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
            int64_t r = r0 + j, c = c0 + threadIdx.x;
            if (r < rows && c < h)
                w[r * 4 * h + g * h + c] = tile[threadIdx.x][j];
        }
        __syncthreads();
    }
}

template <class T> __global__ void k_lstm_pack_bias(const float *b, int64_t h, dlg_cuk_gates gate)
{
    GRID_LOOP(i, 4 * h)
    {
        int64_t g = i / h;
        st((T *)gate.p[g], i - g * h, b[i]);
    }
}

template <class T> __global__ void k_lstm_unpack_bias(dlg_cuk_gates gate, int64_t h, float *b)
{
    GRID_LOOP(i, 4 * h)
    {
        int64_t g = i / h;
        b[i] = ld((const T *)gate.p[g], i - g * h);
    }
}

// One block per slot, a fixed grid: which elements each thread sums, and
// the tree below, are the same on every run.
__global__ void k_sumsq(const float *g, int64_t n, double *slots, int first)
{
    __shared__ double part[kThreads];
    double s = 0;
    GRID_LOOP(i, n)
    {
        double v = g[i];
        s += v * v;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        slots[blockIdx.x] = (first ? 0.0 : slots[blockIdx.x]) + part[0];
}

__global__ void k_sumsq_total(const double *slots, double *out)
{
    double s = 0;
    for (int i = 0; i < DLG_CUK_SUMSQ_SLOTS; i++)
        s += slots[i];
    *out = s;
}

__global__ void k_scale(float *g, int64_t n, float f)
{
    GRID_LOOP(i, n) { g[i] *= f; }
}

// the same rule as the host's (torch.nn.utils.clip_grad_norm_), in double
__global__ void k_clip_coef(dlg_cuk_clip *st, const float *loss_scale, double max_norm)
{
    double norm = sqrt(st->total) / (loss_scale ? (double)*loss_scale : 1.0);
    bool clip = max_norm > 0 && norm > max_norm;
    st->norm = norm;
    st->coef = clip ? (float)(max_norm / (norm + 1e-6)) : 1.f;
    st->clipped += clip;
}

__global__ void k_scale_by(float *g, int64_t n, const float *coef)
{
    const float f = *coef;
    if (f == 1.f)
        return; // the common unclipped step reads and writes nothing
    GRID_LOOP(i, n) { g[i] *= f; }
}

// x: the tiles along cols; y: those along rows, at most max_gy (the
// kernels loop over the rest); z: the four gates.  false if x does not
// fit (cols above 2^36: more than any device holds) or max_gy < 1.
bool tiles(int64_t cols, int64_t rows, int64_t max_gy, dim3 *grid)
{
    int64_t gx = (cols + kTile - 1) / kTile, gy = (rows + kTile - 1) / kTile;
    if (gx > 2147483647 || max_gy < 1)
        return false;
    *grid = dim3((unsigned)(gx > 0 ? gx : 1), (unsigned)(gy < max_gy ? (gy > 0 ? gy : 1) : max_gy),
                 4);
    return true;
}

} // namespace

extern "C" {

int dlg_cuk_embed_fwd(dlg_cu_stream s, const float *ids, const float *table, float *y, int64_t n,
                      int64_t d, int64_t vocab, int *flag)
{
    k_embed_fwd<<<blocks_for(n * d), kThreads, 0, s>>>(ids, table, y, n, d, vocab, flag);
    return launched();
}

int dlg_cuk_embed_bwd(dlg_cu_stream s, const float *ids, const float *dy, float *dtable,
                      int64_t n, int64_t d, int64_t vocab, int accumulate, int deterministic)
{
    if (!accumulate) {
        cudaError_t e = cudaMemsetAsync(dtable, 0, (size_t)(vocab * d) * sizeof(float), s);
        if (e != cudaSuccess)
            return (int)e;
    }
    if (n <= DLG_CUK_EMBED_ROWS_MAX || deterministic)
        k_embed_bwd_rows<<<(unsigned)n, kThreads, 0, s>>>(ids, dy, dtable, n, d, vocab);
    else
        k_embed_bwd_atomic<<<blocks_for(n * d), kThreads, 0, s>>>(ids, dy, dtable, n, d, vocab);
    return launched();
}

int dlg_cuk_lstm_pack_grid(dlg_cu_stream s, int hspace, dlg_cuk_htype ht, const float *w,
                           int64_t rows, int64_t h, dlg_cuk_gates gate, int64_t max_gy)
{
    dim3 grid;
    if (!tiles(h, rows, max_gy, &grid))
        return (int)cudaErrorInvalidConfiguration;
    if (hspace)
        HALF_CASE(ht, k_lstm_pack<T><<<grid, dim3(kTile, kTileRows), 0, s>>>(w, rows, h, gate));
    else
        k_lstm_pack<float><<<grid, dim3(kTile, kTileRows), 0, s>>>(w, rows, h, gate);
    return launched();
}

int dlg_cuk_lstm_unpack_grid(dlg_cu_stream s, int hspace, dlg_cuk_htype ht, dlg_cuk_gates gate,
                             int64_t rows, int64_t h, float *w, int64_t max_gy)
{
    dim3 grid;
    if (!tiles(rows, h, max_gy, &grid))
        return (int)cudaErrorInvalidConfiguration;
    if (hspace)
        HALF_CASE(ht, k_lstm_unpack<T><<<grid, dim3(kTile, kTileRows), 0, s>>>(gate, rows, h, w));
    else
        k_lstm_unpack<float><<<grid, dim3(kTile, kTileRows), 0, s>>>(gate, rows, h, w);
    return launched();
}

int dlg_cuk_lstm_pack(dlg_cu_stream s, const float *w, int64_t rows, int64_t h,
                      dlg_cuk_gates gate)
{
    return dlg_cuk_lstm_pack_grid(s, 0, DLG_CUK_BF16, w, rows, h, gate, kGridYMax);
}

int dlg_cuk_lstm_unpack(dlg_cu_stream s, dlg_cuk_gates gate, int64_t rows, int64_t h, float *w)
{
    return dlg_cuk_lstm_unpack_grid(s, 0, DLG_CUK_BF16, gate, rows, h, w, kGridYMax);
}

int dlg_cuk_lstm_pack_bias(dlg_cu_stream s, const float *b, int64_t h, dlg_cuk_gates gate)
{
    k_lstm_pack_bias<float><<<blocks_for(4 * h), kThreads, 0, s>>>(b, h, gate);
    return launched();
}

int dlg_cuk_lstm_unpack_bias(dlg_cu_stream s, dlg_cuk_gates gate, int64_t h, float *b)
{
    k_lstm_unpack_bias<float><<<blocks_for(4 * h), kThreads, 0, s>>>(gate, h, b);
    return launched();
}

int dlg_cuk_lstm_pack_h(dlg_cu_stream s, dlg_cuk_htype ht, const float *w, int64_t rows,
                        int64_t h, dlg_cuk_gates gate)
{
    return dlg_cuk_lstm_pack_grid(s, 1, ht, w, rows, h, gate, kGridYMax);
}

int dlg_cuk_lstm_unpack_h(dlg_cu_stream s, dlg_cuk_htype ht, dlg_cuk_gates gate, int64_t rows,
                          int64_t h, float *w)
{
    return dlg_cuk_lstm_unpack_grid(s, 1, ht, gate, rows, h, w, kGridYMax);
}

int dlg_cuk_lstm_pack_bias_h(dlg_cu_stream s, dlg_cuk_htype ht, const float *b, int64_t h,
                             dlg_cuk_gates gate)
{
    HALF_CASE(ht, k_lstm_pack_bias<T><<<blocks_for(4 * h), kThreads, 0, s>>>(b, h, gate));
    return launched();
}

int dlg_cuk_lstm_unpack_bias_h(dlg_cu_stream s, dlg_cuk_htype ht, dlg_cuk_gates gate, int64_t h,
                               float *b)
{
    HALF_CASE(ht, k_lstm_unpack_bias<T><<<blocks_for(4 * h), kThreads, 0, s>>>(gate, h, b));
    return launched();
}

int dlg_cuk_sumsq(dlg_cu_stream s, const float *g, int64_t n, double *slots, int first)
{
    // as many blocks as the array fills, up to one per slot: a bias of 64
    // values is one block, not 256 blocks of which 255 reduce zeros
    // through 9 barriers (on the CPU stand-in GPU most of a clipped LSTM
    // step's time); the slots no block writes are cleared first
    unsigned blocks = blocks_for(n);
    if (blocks > DLG_CUK_SUMSQ_SLOTS)
        blocks = DLG_CUK_SUMSQ_SLOTS;
    if (first && blocks < DLG_CUK_SUMSQ_SLOTS) {
        cudaError_t e = cudaMemsetAsync(slots, 0, DLG_CUK_SUMSQ_SLOTS * sizeof(double), s);
        if (e != cudaSuccess)
            return (int)e;
        first = 0;
    }
    k_sumsq<<<blocks, kThreads, 0, s>>>(g, n, slots, first);
    return launched();
}

int dlg_cuk_sumsq_total(dlg_cu_stream s, const double *slots, double *out)
{
    k_sumsq_total<<<1, 1, 0, s>>>(slots, out);
    return launched();
}

int dlg_cuk_scale(dlg_cu_stream s, float *g, int64_t n, float f)
{
    k_scale<<<blocks_for(n), kThreads, 0, s>>>(g, n, f);
    return launched();
}

int dlg_cuk_clip_coef(dlg_cu_stream s, dlg_cuk_clip *st, const float *loss_scale,
                      double max_norm)
{
    k_clip_coef<<<1, 1, 0, s>>>(st, loss_scale, max_norm);
    return launched();
}

int dlg_cuk_scale_by(dlg_cu_stream s, float *g, int64_t n, const float *coef)
{
    k_scale_by<<<blocks_for(n), kThreads, 0, s>>>(g, n, coef);
    return launched();
}

} // extern "C"
