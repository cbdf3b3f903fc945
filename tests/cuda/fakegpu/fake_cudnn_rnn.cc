// fake_cudnn_rnn.cc — cuDNN's v8 RNN API (and the dropout descriptor it
// takes) on the host: the LSTM subset core/nn/cuda/cuda_lstm.c uses.
//
// Supported: CUDNN_LSTM, CUDNN_RNN_ALGO_STANDARD, unidirectional, linear
// input, any bias mode, any number of layers, FLOAT data and math
// precision (any math type), or HALF data with FLOAT math precision (any
// math type: what PyTorch passes for fp16, cuDNN's "pseudo half"; the
// half operands are widened, the fp32 maths runs, results are rounded to
// nearest even on store), no projection, no padded I/O, zero-rate
// dropout; data CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED or _UNPACKED with
// every sequence maxSeqLength long.  Everything else the API allows is
// CUDNN_STATUS_NOT_SUPPORTED; what it does not allow is BAD_PARAM.
//
// It is strict on purpose, to catch plumbing bugs in the backend:
// - the weight space is not densely packed (every matrix and bias starts
//   on a 64-byte boundary, with gaps), so only the addresses that
//   cudnnGetRNNWeightParams reports work;
// - the workspace is filled with NaN before and after every call (cuDNN
//   passes nothing through it; half data: before its operands are widened
//   and after its results are rounded back), so an input or output that
//   overlaps it shows as NaN (a size below cudnnGetRNNTempSpaceSizes' is
//   BAD_PARAM);
// - backward reads what forward left in the reserve space (activations,
//   cell states, inner layers' outputs), and backward-weights the gate
//   gradients backward-data left there, as cuDNN does; a header in the
//   reserve space records which call wrote it for which sizes, and a
//   call that finds the wrong one writes NaN to its outputs (the check
//   runs on the stream, where a status can no longer be returned);
// - devSeqLengths is read on the stream and must equal the descriptor's
//   lengths (a backend that forgot to fill it gets NaN);
// - every descriptor a call takes (x, y, h, c, and those GetRNNWeightParams
//   fills) has the RNN's data type, and the weight space's size is counted
//   in elements of it (half: 2 bytes each).
// All device work runs through fakegpu::submit with its arguments copied,
// so it can be captured into a graph and replayed.
#include "fakegpu.h"

#include <cmath>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <deque>
#include <limits>
#include <new>
#include <vector>

// What cudnnSetRNNDescriptor_v8 accepted; only the fields the maths needs
// (the rest is fixed by what is supported).
struct cudnnRNNStruct {
    bool set;
    cudnnRNNBiasMode_t bias;
    int in, hid, layers;
    cudnnDataType_t type; // dataType: FLOAT or HALF
};

struct cudnnRNNDataStruct {
    bool set;
    cudnnDataType_t type;
    cudnnRNNDataLayout_t layout;
    int max_len, batch, vec;
    std::vector<int> lens;
};

namespace {

const cudnnStatus_t OK = CUDNN_STATUS_SUCCESS;
const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM;
const cudnnStatus_t UNSUP = CUDNN_STATUS_NOT_SUPPORTED;

// Items in the weight space start on 16-float (64-byte) boundaries, so the
// space has gaps and a backend that assumes dense packing reads zeros.
const size_t kAlign = 16;
const size_t kNone = std::numeric_limits<size_t>::max();

size_t pad(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool has_bias(cudnnRNNBiasMode_t m, int lin)
{
    switch (m) {
    case CUDNN_RNN_DOUBLE_BIAS:
        return true;
    case CUDNN_RNN_SINGLE_INP_BIAS:
        return lin < 4;
    case CUDNN_RNN_SINGLE_REC_BIAS:
        return lin >= 4;
    default:
        return false;
    }
}

// The network as each queued op sees it (a copy, never the descriptor).
struct Net {
    int L, I, H;
    cudnnRNNBiasMode_t bias;
    cudnnDataType_t type;
    int in(int l) const { return l ? H : I; }
    size_t es() const { return fakegpu::type_size(type); } // bytes of an element
};

Net net_of(const cudnnRNNStruct *r)
{
    return Net{r->layers, r->in, r->hid, r->bias, r->type};
}

// Offsets in elements of each layer's linear-layer matrices and biases:
// per layer, W_i W_f W_g W_o (hidden x in), R_i R_f R_g R_o (hidden x
// hidden), then the biases that exist in linLayerID order.
struct WeightMap {
    std::vector<size_t> m, b; // [layer * 8 + lin]; b is kNone where absent
    size_t total;             // elements
};

WeightMap weight_map(const Net &n)
{
    WeightMap w;
    w.m.assign((size_t)n.L * 8, 0);
    w.b.assign((size_t)n.L * 8, kNone);
    size_t at = 0;
    for (int l = 0; l < n.L; l++) {
        for (int lin = 0; lin < 8; lin++) {
            w.m[(size_t)l * 8 + lin] = at;
            at = pad(at + (size_t)n.H * (lin < 4 ? n.in(l) : n.H));
        }
        for (int lin = 0; lin < 8; lin++)
            if (has_bias(n.bias, lin)) {
                w.b[(size_t)l * 8 + lin] = at;
                at = pad(at + (size_t)n.H);
            }
    }
    w.total = at;
    return w;
}

// Workspace (floats): two T x B x H sequences for the layers between the
// first and the last (forward, inference: their outputs; backward: the
// gradient of their outputs), B x 4H gate pre-activations, and B x H
// hidden and cell carries.
size_t ws_floats(const Net &n, int T, int B)
{
    size_t seq = n.L > 1 ? 2 * (size_t)T * B * n.H : 0;
    return seq + (size_t)B * 4 * n.H + 2 * (size_t)B * n.H;
}

size_t ws_bytes(const Net &n, int T, int B) { return ws_floats(n, T, B) * sizeof(float); }

// Reserve space: a header, then per layer, step and sequence the four
// activated gates, the cell state, the output of every layer but the last
// (the last one's is y, which backward-weights is given), and the gate
// gradients that backward-data leaves for backward-weights.
const uint64_t kMagic = 0x66616b65726e6e31ull; // "fakernn1"
const int32_t kFwd = 1, kBwdData = 2, kPoisoned = 3;

struct ReserveHeader {
    uint64_t magic;
    int32_t state, L, T, B, I, H;
};
const size_t kHeaderBytes = 64;
static_assert(sizeof(ReserveHeader) <= kHeaderBytes, "reserve header");

struct Reserve {
    void *hdr; // a ReserveHeader, accessed with memcpy (no alignment assumed)
    float *gates, *cell, *hid, *dgates;
};

size_t reserve_floats(const Net &n, int T, int B)
{
    size_t tb = (size_t)T * B, h = (size_t)n.H;
    return tb * (n.L * (4 * h + h + 4 * h) + (n.L - 1) * h);
}

size_t reserve_bytes(const Net &n, int T, int B)
{
    return kHeaderBytes + reserve_floats(n, T, B) * sizeof(float);
}

Reserve carve(void *base, const Net &n, int T, int B)
{
    size_t tbh = (size_t)T * B * n.H;
    Reserve r;
    r.hdr = base;
    r.gates = (float *)((char *)base + kHeaderBytes);
    r.cell = r.gates + n.L * 4 * tbh;
    r.hid = r.cell + n.L * tbh;
    r.dgates = r.hid + (n.L - 1) * tbh;
    return r;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// All bits set: NaN as float, and as each half of it read as fp16 or bf16
// (a float quiet NaN's low half is a zero there), so a half buffer in a
// poisoned workspace reads NaN too.
void fill_nan(float *p, size_t n)
{
    if (p)
        memset(p, 0xff, n * sizeof(float));
}

double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

// HALF data: a call's half operands as fp32 copies for the fp32 maths, and
// its outputs rounded back (nearest even) when it is done.  The queued
// work's argument structs keep float pointers; under HALF they hold the
// half buffers' addresses until swapped for these copies.
class Widened {
  public:
    explicit Widened(cudnnDataType_t t) : t_(t) {}
    const float *in(const void *p, size_t n)
    {
        if (!p)
            return nullptr;
        bufs_.emplace_back(n);
        for (size_t i = 0; i < n; i++)
            bufs_.back()[i] = fakegpu::load(p, t_, i);
        return bufs_.back().data();
    }
    // keep = false: the old contents are not read (NaN until written)
    float *out(void *p, size_t n, bool keep)
    {
        if (!p)
            return nullptr;
        float *f = keep ? (float *)in(p, n) : (bufs_.emplace_back(n, kNaN), bufs_.back().data());
        outs_.push_back({p, f, n});
        return f;
    }
    ~Widened()
    {
        for (const Out &o : outs_)
            for (size_t i = 0; i < o.n; i++)
                fakegpu::store(o.dst, t_, i, o.src[i]);
    }

  private:
    struct Out {
        void *dst;
        const float *src;
        size_t n;
    };
    cudnnDataType_t t_;
    std::deque<std::vector<float>> bufs_; // stable addresses
    std::vector<Out> outs_;
};

// cuDNN reads devSeqLengths on the device when the work runs: so does this.
bool lengths_ok(const int32_t *dev, const std::vector<int> &host, const char *fn)
{
    for (size_t b = 0; b < host.size(); b++)
        if (dev[b] != host[b]) {
            fprintf(stderr,
                    "fakegpu: %s: devSeqLengths[%zu] is %d, the RNN data descriptor says %d; "
                    "outputs set to NaN\n",
                    fn, b, (int)dev[b], host[b]);
            return false;
        }
    return true;
}

bool reserve_ok(const Reserve &r, const Net &n, int T, int B, bool need_bwd, const char *fn)
{
    ReserveHeader h;
    memcpy(&h, r.hdr, sizeof h);
    const char *why = nullptr;
    if (h.magic != kMagic || h.state == kPoisoned)
        why = "was not written by a successful training-mode cudnnRNNForward";
    else if (h.L != n.L || h.T != T || h.B != B || h.I != n.I || h.H != n.H)
        why = "was written for other sizes";
    else if (need_bwd && h.state != kBwdData)
        why = "holds no gate gradients (cudnnRNNBackwardData_v8 must run first)";
    if (!why)
        return true;
    fprintf(stderr, "fakegpu: %s: the reserve space %s; outputs set to NaN\n", fn, why);
    return false;
}

void stamp(Reserve &r, uint64_t magic, const Net &n, int T, int B, int32_t state)
{
    const ReserveHeader h{magic, state, n.L, T, B, n.I, n.H};
    memcpy(r.hdr, &h, sizeof h);
}

// One layer's matrices (or their gradients) and biases in a weight space.
struct LayerW {
    const float *W[4], *R[4], *bW[4], *bR[4];
};

LayerW layer_w(const float *base, const WeightMap &wm, int l)
{
    LayerW w;
    for (int g = 0; g < 4; g++) {
        size_t k = (size_t)l * 8;
        w.W[g] = base + wm.m[k + g];
        w.R[g] = base + wm.m[k + 4 + g];
        w.bW[g] = wm.b[k + g] == kNone ? nullptr : base + wm.b[k + g];
        w.bR[g] = wm.b[k + 4 + g] == kNone ? nullptr : base + wm.b[k + 4 + g];
    }
    return w;
}

// ---- forward ---------------------------------------------------------------

// What the queued work of every RNN call needs besides its own buffers.
struct RnnCall {
    Net n;
    WeightMap wm;
    int T, B;
    std::vector<int> lens;
    const int32_t *dev_lens;
    float *ws;
    void *reserve;
    // elements of x, y, and of h or c (all layers)
    size_t nx() const { return (size_t)T * B * n.I; }
    size_t ny() const { return (size_t)T * B * n.H; }
    size_t nh() const { return (size_t)n.L * B * n.H; }
};

// HALF data: body(h) widens the operands through h, runs the fp32 maths
// and h rounds the results back when it ends.  The workspace is NaN before
// the widening and after the rounding, as the fp32 calls leave it around
// their maths: an input or output overlapping it shows as NaN here too.
template <class Body> void widened_call(const RnnCall &c, Body body)
{
    fill_nan(c.ws, ws_floats(c.n, c.T, c.B));
    {
        Widened h(c.n.type);
        body(h);
    }
    fill_nan(c.ws, ws_floats(c.n, c.T, c.B));
}

struct FwdArgs : RnnCall {
    bool training;
    const float *x, *hx, *cx, *w;
    float *y, *hy, *cy;
};

void run_forward(const FwdArgs &a)
{
    const Net &n = a.n;
    const int T = a.T, B = a.B, H = n.H, L = n.L;
    const size_t tbh = (size_t)T * B * H, bh = (size_t)B * H;
    fill_nan(a.ws, ws_floats(n, T, B));
    Reserve rs{};
    if (a.training) {
        rs = carve(a.reserve, n, T, B);
        stamp(rs, 0, n, T, B, 0); // half-written until the end
    }
    if (!lengths_ok(a.dev_lens, a.lens, "cudnnRNNForward")) {
        fill_nan(a.y, tbh);
        fill_nan(a.hy, L * bh);
        fill_nan(a.cy, L * bh);
        if (a.training)
            stamp(rs, kMagic, n, T, B, kPoisoned);
        return;
    }
    float *seq[2] = {a.ws, a.ws + tbh};
    float *pre = a.ws + (L > 1 ? 2 * tbh : 0), *carry_c = pre + 4 * bh;
    for (int l = 0; l < L; l++) {
        const int in_l = n.in(l);
        const LayerW w = layer_w(a.w, a.wm, l);
        const float *in = l == 0 ? a.x : a.training ? rs.hid + (l - 1) * tbh : seq[(l - 1) % 2];
        float *out = l == L - 1 ? a.y : a.training ? rs.hid + l * tbh : seq[l % 2];
        float *gates = a.training ? rs.gates + l * 4 * tbh : nullptr;
        float *cell = a.training ? rs.cell + l * tbh : nullptr;
        for (int t = 0; t < T; t++) {
            // the input and recurrent GEMMs with their biases, into the workspace
            for (int b = 0; b < B; b++) {
                const float *xin = in + ((size_t)t * B + b) * in_l;
                const float *hp = t ? out + ((size_t)(t - 1) * B + b) * H
                                    : a.hx ? a.hx + ((size_t)l * B + b) * H : nullptr;
                for (int g = 0; g < 4; g++)
                    for (int h = 0; h < H; h++) {
                        double acc = (w.bW[g] ? w.bW[g][h] : 0.0) + (w.bR[g] ? w.bR[g][h] : 0.0);
                        const float *wr = w.W[g] + (size_t)h * in_l;
                        for (int k = 0; k < in_l; k++)
                            acc += (double)wr[k] * xin[k];
                        if (hp) {
                            const float *rr = w.R[g] + (size_t)h * H;
                            for (int j = 0; j < H; j++)
                                acc += (double)rr[j] * hp[j];
                        }
                        pre[(size_t)b * 4 * H + (size_t)g * H + h] = (float)acc;
                    }
            }
            // the cell
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++) {
                    const float *p = pre + (size_t)b * 4 * H;
                    size_t r = (size_t)t * B + b, bi = (size_t)b * H + h;
                    double gi = sigm(p[h]), gf = sigm(p[H + h]), gg = tanh(p[2 * H + h]),
                           go = sigm(p[3 * H + h]);
                    double cp = t ? (a.training ? cell[(r - B) * H + h] : carry_c[bi])
                                  : a.cx ? a.cx[(size_t)l * bh + bi] : 0.0;
                    float c = (float)(gf * cp + gi * gg);
                    if (a.training) {
                        float *gt = gates + r * 4 * H;
                        gt[h] = (float)gi;
                        gt[H + h] = (float)gf;
                        gt[2 * H + h] = (float)gg;
                        gt[3 * H + h] = (float)go;
                        cell[r * H + h] = c;
                    } else {
                        carry_c[bi] = c;
                    }
                    out[r * H + h] = (float)(go * tanh((double)c));
                }
        }
        const float *last_c = a.training ? cell + (size_t)(T - 1) * bh : carry_c;
        for (size_t k = 0; k < bh; k++) {
            if (a.hy)
                a.hy[l * bh + k] = out[(size_t)(T - 1) * bh + k];
            if (a.cy)
                a.cy[l * bh + k] = last_c[k];
        }
    }
    if (a.training)
        stamp(rs, kMagic, n, T, B, kFwd);
    fill_nan(a.ws, ws_floats(n, T, B));
}

// ---- backward data -----------------------------------------------------------

struct BwdDataArgs : RnnCall {
    const float *dy, *dhy, *cx, *dcy, *w;
    float *dx, *dhx, *dcx;
};

void run_backward_data(const BwdDataArgs &a)
{
    const Net &n = a.n;
    const int T = a.T, B = a.B, H = n.H, L = n.L;
    const size_t tbh = (size_t)T * B * H, bh = (size_t)B * H;
    fill_nan(a.ws, ws_floats(n, T, B));
    Reserve rs = carve(a.reserve, n, T, B);
    const char *fn = "cudnnRNNBackwardData_v8";
    if (!lengths_ok(a.dev_lens, a.lens, fn) || !reserve_ok(rs, n, T, B, false, fn)) {
        fill_nan(a.dx, (size_t)T * B * n.I);
        fill_nan(a.dhx, L * bh);
        fill_nan(a.dcx, L * bh);
        stamp(rs, kMagic, n, T, B, kPoisoned); // nor may backward-weights use it
        return;
    }
    float *seq[2] = {a.ws, a.ws + tbh};
    float *dh = a.ws + (L > 1 ? 2 * tbh : 0) + 4 * bh, *dc = dh + bh;
    for (int l = L - 1; l >= 0; l--) {
        const int in_l = n.in(l);
        const LayerW w = layer_w(a.w, a.wm, l);
        const float *dout = l == L - 1 ? a.dy : seq[(l + 1) % 2]; // d(this layer's output)
        float *din = l == 0 ? a.dx : seq[l % 2];                    // d(its input)
        const float *gates = rs.gates + l * 4 * tbh, *cell = rs.cell + l * tbh;
        float *dgates = rs.dgates + l * 4 * tbh;
        for (size_t k = 0; k < bh; k++) {
            dh[k] = a.dhy ? a.dhy[l * bh + k] : 0.0f;
            dc[k] = a.dcy ? a.dcy[l * bh + k] : 0.0f;
        }
        for (int t = T - 1; t >= 0; t--)
            for (int b = 0; b < B; b++) {
                size_t r = (size_t)t * B + b;
                const float *g = gates + r * 4 * H;
                float *dg = dgates + r * 4 * H;
                for (int h = 0; h < H; h++) {
                    size_t bi = (size_t)b * H + h;
                    double gi = g[h], gf = g[H + h], gg = g[2 * H + h], go = g[3 * H + h];
                    double c = cell[r * H + h];
                    double cp = t ? cell[(r - B) * H + h] : a.cx ? a.cx[l * bh + bi] : 0.0;
                    double tc = tanh(c), d = (double)dh[bi] + dout[r * H + h];
                    double dcell = dc[bi] + d * go * (1 - tc * tc);
                    dg[h] = (float)(dcell * gg * gi * (1 - gi));
                    dg[H + h] = (float)(dcell * cp * gf * (1 - gf));
                    dg[2 * H + h] = (float)(dcell * gi * (1 - gg * gg));
                    dg[3 * H + h] = (float)(d * tc * go * (1 - go));
                    dc[bi] = (float)(dcell * gf);
                }
                // dh(t-1) = sum_g R_g^T dg_g; d(input) = sum_g W_g^T dg_g
                for (int j = 0; j < H; j++) {
                    double acc = 0;
                    for (int gt = 0; gt < 4; gt++)
                        for (int h = 0; h < H; h++)
                            acc += (double)w.R[gt][(size_t)h * H + j] * dg[gt * H + h];
                    dh[(size_t)b * H + j] = (float)acc;
                }
                for (int k = 0; k < in_l; k++) {
                    double acc = 0;
                    for (int gt = 0; gt < 4; gt++)
                        for (int h = 0; h < H; h++)
                            acc += (double)w.W[gt][(size_t)h * in_l + k] * dg[gt * H + h];
                    din[r * in_l + k] = (float)acc;
                }
            }
        for (size_t k = 0; k < bh; k++) {
            if (a.dhx)
                a.dhx[l * bh + k] = dh[k];
            if (a.dcx)
                a.dcx[l * bh + k] = dc[k];
        }
    }
    stamp(rs, kMagic, n, T, B, kBwdData);
    fill_nan(a.ws, ws_floats(n, T, B));
}

// ---- backward weights ------------------------------------------------------

struct BwdWeightsArgs : RnnCall {
    const float *x, *hx, *y;
    float *dw;
};

void run_backward_weights(const BwdWeightsArgs &a)
{
    const Net &n = a.n;
    const int T = a.T, B = a.B, H = n.H, L = n.L;
    const size_t tbh = (size_t)T * B * H, bh = (size_t)B * H;
    fill_nan(a.ws, ws_floats(n, T, B));
    Reserve rs = carve(a.reserve, n, T, B);
    const char *fn = "cudnnRNNBackwardWeights_v8";
    if (!lengths_ok(a.dev_lens, a.lens, fn) || !reserve_ok(rs, n, T, B, true, fn)) {
        fill_nan(a.dw, a.wm.total);
        return;
    }
    for (int l = 0; l < L; l++) {
        const int in_l = n.in(l);
        const float *in = l == 0 ? a.x : rs.hid + (l - 1) * tbh;
        const float *out = l == L - 1 ? a.y : rs.hid + l * tbh;
        const float *dgates = rs.dgates + l * 4 * tbh;
        // the gradient space has the weight space's layout
        LayerW w = layer_w(a.dw, a.wm, l);
        for (int g = 0; g < 4; g++)
            for (int h = 0; h < H; h++) {
                float *dW = (float *)w.W[g] + (size_t)h * in_l;
                float *dR = (float *)w.R[g] + (size_t)h * H;
                for (int k = 0; k < in_l; k++) {
                    double acc = 0;
                    for (size_t r = 0; r < (size_t)T * B; r++)
                        acc += (double)dgates[r * 4 * H + (size_t)g * H + h] * in[r * in_l + k];
                    dW[k] += (float)acc;
                }
                for (int j = 0; j < H; j++) {
                    double acc = 0;
                    for (int t = 0; t < T; t++)
                        for (int b = 0; b < B; b++) {
                            size_t r = (size_t)t * B + b;
                            const float *hp = t ? out + (r - B) * H
                                                : a.hx ? a.hx + l * bh + (size_t)b * H : nullptr;
                            if (hp)
                                acc += (double)dgates[r * 4 * H + (size_t)g * H + h] * hp[j];
                        }
                    dR[j] += (float)acc;
                }
                double db = 0;
                for (size_t r = 0; r < (size_t)T * B; r++)
                    db += dgates[r * 4 * H + (size_t)g * H + h];
                // with two biases both get the gate's gradient
                if (w.bW[g])
                    ((float *)w.bW[g])[h] += (float)db;
                if (w.bR[g])
                    ((float *)w.bR[g])[h] += (float)db;
            }
    }
    fill_nan(a.ws, ws_floats(n, T, B));
}

// ---- argument checks ------------------------------------------------------------

bool rnn_ok(cudnnRNNDescriptor_t r) { return r && r->set; }

// x (vec = inputSize) or y (vec = hiddenSize) of this RNN
cudnnStatus_t check_data(cudnnRNNDataDescriptor_t d, int vec)
{
    return d && d->set && d->vec == vec ? OK : BAD;
}

// xDesc and yDesc describe the same sequences
cudnnStatus_t check_io(cudnnRNNDescriptor_t r, cudnnRNNDataDescriptor_t xd,
                       cudnnRNNDataDescriptor_t yd)
{
    if (check_data(xd, r->in) != OK || check_data(yd, r->hid) != OK || xd->type != r->type ||
        yd->type != r->type)
        return BAD;
    if (xd->max_len != yd->max_len || xd->batch != yd->batch || xd->layout != yd->layout ||
        xd->lens != yd->lens)
        return BAD;
    return OK;
}

// hDesc / cDesc: fully packed [numLayers][batch][hiddenSize] of the RNN's
// data type (no projection, so both have hiddenSize), as cuDNN documents
// them.
cudnnStatus_t check_state(cudnnTensorDescriptor_t d, cudnnRNNDescriptor_t r, int batch)
{
    if (!d || d->type != r->type || d->nb != 3)
        return BAD;
    const int dims[3] = {r->layers, batch, r->hid};
    const int strides[3] = {batch * r->hid, r->hid, 1};
    for (int i = 0; i < 3; i++)
        if (d->dim[i] != dims[i] || d->stride[i] != strides[i])
            return BAD;
    return OK;
}

// The weight space, workspace (and reserve space) are there and large
// enough; the sizes are those cudnnGetRNNWeightSpaceSize and
// cudnnGetRNNTempSpaceSizes report.
cudnnStatus_t check_spaces(const Net &n, int T, int B, size_t wsize, const void *wspace,
                           size_t work_size, const void *work, bool reserve, size_t res_size,
                           const void *res)
{
    if (!wspace || wsize < weight_map(n).total * n.es())
        return BAD;
    if (!work || work_size < ws_bytes(n, T, B))
        return BAD;
    if (reserve && (!res || res_size < reserve_bytes(n, T, B)))
        return BAD;
    return OK;
}

// The checks the three RNN calls share (each checks its own hidden and cell
// state descriptors), then what their queued work needs; the reserve space
// only where the call reads or writes it.
cudnnStatus_t begin_call(cudnnRNNDescriptor_t r, cudnnRNNDataDescriptor_t xd,
                         cudnnRNNDataDescriptor_t yd, const int32_t *dev_lens, size_t wsize,
                         const void *wspace, size_t work_size, void *work, bool reserve,
                         size_t res_size, void *res, RnnCall *c)
{
    if (check_io(r, xd, yd) != OK)
        return BAD;
    const Net n = net_of(r);
    const int T = xd->max_len, B = xd->batch;
    if (check_spaces(n, T, B, wsize, wspace, work_size, work, reserve, res_size, res) != OK)
        return BAD;
    *c = RnnCall{n, weight_map(n), T, B, xd->lens, dev_lens, (float *)work,
                 reserve ? res : nullptr};
    return OK;
}

void set_tensor(cudnnTensorDescriptor_t d, cudnnDataType_t t, int nb, const int *dims,
                const int *strides)
{
    d->type = t;
    d->nb = nb;
    for (int i = 0; i < fakegpu::kDimMax; i++) {
        d->dim[i] = i < nb ? dims[i] : 0;
        d->stride[i] = i < nb ? strides[i] : 0;
    }
}

} // namespace

// ---- dropout -------------------------------------------------------------------

extern "C" cudnnStatus_t cudnnCreateDropoutDescriptor(cudnnDropoutDescriptor_t *dropoutDesc)
{
    // NaN rate: not set yet (cudnnSetRNNDescriptor_v8 refuses it)
    return fakegpu::new_descriptor(__func__, dropoutDesc, cudnnDropoutStruct{kNaN});
}

extern "C" cudnnStatus_t cudnnDestroyDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc)
{
    delete dropoutDesc;
    return OK;
}

// Rate 0 only (states may then be NULL with size 0): the stand-in has no
// random generator, and the backend uses no dropout inside the LSTM.
extern "C" cudnnStatus_t cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc,
                                                   cudnnHandle_t handle, float dropout,
                                                   void *states, size_t stateSizeInBytes,
                                                   unsigned long long seed)
{
    if (!dropoutDesc || !handle || !(dropout >= 0.0f && dropout <= 1.0f))
        return BAD;
    if (dropout > 0.0f)
        return UNSUP;
    dropoutDesc->rate = 0.0f;
    return OK;
}

// ---- RNN descriptor ------------------------------------------------------------

extern "C" cudnnStatus_t cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *rnnDesc)
{
    return fakegpu::new_descriptor(__func__, rnnDesc, cudnnRNNStruct{});
}

extern "C" cudnnStatus_t cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t rnnDesc)
{
    delete rnnDesc;
    return OK;
}

extern "C" cudnnStatus_t cudnnSetRNNDescriptor_v8(
    cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t algo, cudnnRNNMode_t cellMode,
    cudnnRNNBiasMode_t biasMode, cudnnDirectionMode_t dirMode, cudnnRNNInputMode_t inputMode,
    cudnnDataType_t dataType, cudnnDataType_t mathPrec, cudnnMathType_t mathType,
    int32_t inputSize, int32_t hiddenSize, int32_t projSize, int32_t numLayers,
    cudnnDropoutDescriptor_t dropoutDesc, uint32_t auxFlags)
{
    if (!rnnDesc)
        return BAD;
    rnnDesc->set = false; // a failed set leaves it unusable
    // values outside the enums, sizes and flags the API rejects
    if ((unsigned)algo >= (unsigned)CUDNN_RNN_ALGO_COUNT || (unsigned)cellMode > CUDNN_GRU ||
        (unsigned)biasMode > CUDNN_RNN_SINGLE_REC_BIAS || (unsigned)dirMode > CUDNN_BIDIRECTIONAL ||
        (unsigned)inputMode > CUDNN_SKIP_INPUT || (unsigned)mathType > CUDNN_FMA_MATH)
        return BAD;
    if (inputSize <= 0 || hiddenSize <= 0 || numLayers <= 0 || projSize <= 0 ||
        projSize > hiddenSize || (auxFlags & ~(uint32_t)CUDNN_RNN_PADDED_IO_ENABLED))
        return BAD;
    if (dataType != CUDNN_DATA_FLOAT && dataType != CUDNN_DATA_HALF &&
        dataType != CUDNN_DATA_DOUBLE)
        return BAD;
    // FLOAT data computes in FLOAT, DOUBLE in DOUBLE, HALF in HALF or FLOAT
    // (cudnn_adv.h: mathPrec is the compute precision)
    if (dataType == CUDNN_DATA_FLOAT ? mathPrec != CUDNN_DATA_FLOAT
        : dataType == CUDNN_DATA_DOUBLE ? mathPrec != CUDNN_DATA_DOUBLE
        : mathPrec != CUDNN_DATA_HALF && mathPrec != CUDNN_DATA_FLOAT)
        return BAD;
    if (projSize != hiddenSize && cellMode != CUDNN_LSTM)
        return BAD; // projection is an LSTM feature
    if (inputMode == CUDNN_SKIP_INPUT && inputSize != hiddenSize)
        return BAD;
    if (dropoutDesc && std::isnan(dropoutDesc->rate))
        return BAD; // created but never set
    // what the stand-in computes
    if (algo != CUDNN_RNN_ALGO_STANDARD || cellMode != CUDNN_LSTM ||
        dirMode != CUDNN_UNIDIRECTIONAL || inputMode != CUDNN_LINEAR_INPUT ||
        (dataType != CUDNN_DATA_FLOAT && dataType != CUDNN_DATA_HALF) ||
        mathPrec != CUDNN_DATA_FLOAT || projSize != hiddenSize ||
        auxFlags != CUDNN_RNN_PADDED_IO_DISABLED)
        return UNSUP;
    if (dropoutDesc && dropoutDesc->rate > 0.0f && numLayers > 1)
        return UNSUP;
    *rnnDesc = cudnnRNNStruct{true, biasMode, inputSize, hiddenSize, numLayers, dataType};
    return OK;
}

// ---- RNN data descriptor -----------------------------------------------------------

extern "C" cudnnStatus_t cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *rnnDataDesc)
{
    return fakegpu::new_descriptor(__func__, rnnDataDesc, cudnnRNNDataStruct{});
}

extern "C" cudnnStatus_t cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc)
{
    delete rnnDataDesc;
    return OK;
}

extern "C" cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc,
                                                   cudnnDataType_t dataType,
                                                   cudnnRNNDataLayout_t layout, int maxSeqLength,
                                                   int batchSize, int vectorSize,
                                                   const int seqLengthArray[], void *paddingFill)
{
    if (!rnnDataDesc)
        return BAD;
    rnnDataDesc->set = false;
    if (dataType != CUDNN_DATA_FLOAT && dataType != CUDNN_DATA_HALF &&
        dataType != CUDNN_DATA_DOUBLE)
        return BAD;
    if ((unsigned)layout > CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED || maxSeqLength <= 0 ||
        batchSize <= 0 || vectorSize <= 0 || !seqLengthArray)
        return BAD;
    for (int b = 0; b < batchSize; b++)
        if (seqLengthArray[b] <= 0 || seqLengthArray[b] > maxSeqLength)
            return BAD;
    // the packed layout needs the lengths sorted, longest first
    for (int b = 1; b < batchSize; b++)
        if (layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED &&
            seqLengthArray[b] > seqLengthArray[b - 1])
            return BAD;
    // only sequence-major, every sequence full length, fp32 or fp16
    if (layout == CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED || dataType == CUDNN_DATA_DOUBLE)
        return UNSUP;
    for (int b = 0; b < batchSize; b++)
        if (seqLengthArray[b] != maxSeqLength)
            return UNSUP;
    rnnDataDesc->type = dataType;
    rnnDataDesc->layout = layout;
    rnnDataDesc->max_len = maxSeqLength;
    rnnDataDesc->batch = batchSize;
    rnnDataDesc->vec = vectorSize;
    rnnDataDesc->lens.assign(seqLengthArray, seqLengthArray + batchSize);
    rnnDataDesc->set = true;
    return OK;
}

// ---- sizes and weights -------------------------------------------------------------

extern "C" cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t handle,
                                                    cudnnRNNDescriptor_t rnnDesc,
                                                    size_t *weightSpaceSize)
{
    if (!handle || !rnn_ok(rnnDesc) || !weightSpaceSize)
        return BAD;
    const Net n = net_of(rnnDesc);
    *weightSpaceSize = weight_map(n).total * n.es();
    return OK;
}

extern "C" cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t handle,
                                                   cudnnRNNDescriptor_t rnnDesc,
                                                   cudnnForwardMode_t fwdMode,
                                                   cudnnRNNDataDescriptor_t xDesc,
                                                   size_t *workSpaceSize,
                                                   size_t *reserveSpaceSize)
{
    if (!handle || !rnn_ok(rnnDesc) || check_data(xDesc, rnnDesc->in) != OK)
        return BAD;
    if (fwdMode != CUDNN_FWD_MODE_INFERENCE && fwdMode != CUDNN_FWD_MODE_TRAINING)
        return BAD;
    const Net n = net_of(rnnDesc);
    if (workSpaceSize)
        *workSpaceSize = ws_bytes(n, xDesc->max_len, xDesc->batch);
    if (reserveSpaceSize)
        *reserveSpaceSize = fwdMode == CUDNN_FWD_MODE_TRAINING
                                ? reserve_bytes(n, xDesc->max_len, xDesc->batch)
                                : 0;
    return OK;
}

// mDesc {1, rows, cols}, bDesc {1, hiddenSize, 1}; a matrix or bias that
// does not exist (the projection, linLayerID 8, is off; a bias the bias
// mode has not) is reported with 0 dimensions and a NULL address.
extern "C" cudnnStatus_t cudnnGetRNNWeightParams(cudnnHandle_t handle,
                                                 cudnnRNNDescriptor_t rnnDesc,
                                                 int32_t pseudoLayer, size_t weightSpaceSize,
                                                 const void *weightSpace, int32_t linLayerID,
                                                 cudnnTensorDescriptor_t mDesc, void **mAddr,
                                                 cudnnTensorDescriptor_t bDesc, void **bAddr)
{
    if (!handle || !rnn_ok(rnnDesc) || !mDesc || !mAddr || !bDesc || !bAddr)
        return BAD;
    const Net n = net_of(rnnDesc);
    const WeightMap wm = weight_map(n);
    if (pseudoLayer < 0 || pseudoLayer >= n.L || linLayerID < 0 || linLayerID > 8 ||
        !weightSpace || weightSpaceSize < wm.total * n.es())
        return BAD;
    const int none[1] = {0};
    if (linLayerID == 8) {
        set_tensor(mDesc, n.type, 0, none, none);
        set_tensor(bDesc, n.type, 0, none, none);
        *mAddr = *bAddr = nullptr;
        return OK;
    }
    char *base = (char *)weightSpace;
    const size_t k = (size_t)pseudoLayer * 8 + linLayerID;
    const int rows = n.H, cols = linLayerID < 4 ? n.in(pseudoLayer) : n.H;
    const int md[3] = {1, rows, cols}, ms[3] = {rows * cols, cols, 1};
    set_tensor(mDesc, n.type, 3, md, ms);
    *mAddr = base + wm.m[k] * n.es();
    if (wm.b[k] == kNone) {
        set_tensor(bDesc, n.type, 0, none, none);
        *bAddr = nullptr;
    } else {
        const int bd[3] = {1, rows, 1}, bs[3] = {rows, 1, 1};
        set_tensor(bDesc, n.type, 3, bd, bs);
        *bAddr = base + wm.b[k] * n.es();
    }
    return OK;
}

// ---- forward and backward ------------------------------------------------------------

extern "C" cudnnStatus_t cudnnRNNForward(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnForwardMode_t fwdMode,
    const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
    cudnnRNNDataDescriptor_t yDesc, void *y, cudnnTensorDescriptor_t hDesc, const void *hx,
    void *hy, cudnnTensorDescriptor_t cDesc, const void *cx, void *cy, size_t weightSpaceSize,
    const void *weightSpace, size_t workSpaceSize, void *workSpace, size_t reserveSpaceSize,
    void *reserveSpace)
{
    if (!handle || !rnn_ok(rnnDesc) || !devSeqLengths || !x || !y)
        return BAD;
    if (fwdMode != CUDNN_FWD_MODE_INFERENCE && fwdMode != CUDNN_FWD_MODE_TRAINING)
        return BAD;
    const bool training = fwdMode == CUDNN_FWD_MODE_TRAINING;
    RnnCall c;
    // inference mode neither reads nor checks the reserve space
    if (begin_call(rnnDesc, xDesc, yDesc, devSeqLengths, weightSpaceSize, weightSpace,
                   workSpaceSize, workSpace, training, reserveSpaceSize, reserveSpace, &c) != OK ||
        check_state(hDesc, rnnDesc, c.B) != OK || check_state(cDesc, rnnDesc, c.B) != OK)
        return BAD;
    FwdArgs a{c, training, (const float *)x, (const float *)hx, (const float *)cx,
              (const float *)weightSpace, (float *)y, (float *)hy, (float *)cy};
    fakegpu::submit(handle->stream, [a]() {
        if (a.n.type == CUDNN_DATA_FLOAT)
            return run_forward(a);
        widened_call(a, [&a](Widened &h) {
            const size_t nx = a.nx(), ny = a.ny(), nh = a.nh();
            FwdArgs f = a;
            f.x = h.in(a.x, nx), f.hx = h.in(a.hx, nh), f.cx = h.in(a.cx, nh);
            f.w = h.in(a.w, a.wm.total);
            f.y = h.out(a.y, ny, false), f.hy = h.out(a.hy, nh, false);
            f.cy = h.out(a.cy, nh, false);
            run_forward(f);
        });
    });
    return OK;
}

extern "C" cudnnStatus_t cudnnRNNBackwardData_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, const int32_t devSeqLengths[],
    cudnnRNNDataDescriptor_t yDesc, const void *y, const void *dy, cudnnRNNDataDescriptor_t xDesc,
    void *dx, cudnnTensorDescriptor_t hDesc, const void *hx, const void *dhy, void *dhx,
    cudnnTensorDescriptor_t cDesc, const void *cx, const void *dcy, void *dcx,
    size_t weightSpaceSize, const void *weightSpace, size_t workSpaceSize, void *workSpace,
    size_t reserveSpaceSize, void *reserveSpace)
{
    // y is part of the API (and checked) but not needed: the reserve space
    // holds what the LSTM's gradients depend on
    if (!handle || !rnn_ok(rnnDesc) || !devSeqLengths || !y || !dy || !dx)
        return BAD;
    RnnCall c;
    if (begin_call(rnnDesc, xDesc, yDesc, devSeqLengths, weightSpaceSize, weightSpace,
                   workSpaceSize, workSpace, true, reserveSpaceSize, reserveSpace, &c) != OK ||
        check_state(hDesc, rnnDesc, c.B) != OK || check_state(cDesc, rnnDesc, c.B) != OK)
        return BAD;
    BwdDataArgs a{c, (const float *)dy, (const float *)dhy, (const float *)cx, (const float *)dcy,
                  (const float *)weightSpace, (float *)dx, (float *)dhx, (float *)dcx};
    fakegpu::submit(handle->stream, [a]() {
        if (a.n.type == CUDNN_DATA_FLOAT)
            return run_backward_data(a);
        widened_call(a, [&a](Widened &h) {
            const size_t nx = a.nx(), ny = a.ny(), nh = a.nh();
            BwdDataArgs f = a;
            f.dy = h.in(a.dy, ny), f.dhy = h.in(a.dhy, nh), f.cx = h.in(a.cx, nh);
            f.dcy = h.in(a.dcy, nh), f.w = h.in(a.w, a.wm.total);
            f.dx = h.out(a.dx, nx, false), f.dhx = h.out(a.dhx, nh, false);
            f.dcx = h.out(a.dcx, nh, false);
            run_backward_data(f);
        });
    });
    return OK;
}

extern "C" cudnnStatus_t cudnnRNNBackwardWeights_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnWgradMode_t addGrad,
    const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
    cudnnTensorDescriptor_t hDesc, const void *hx, cudnnRNNDataDescriptor_t yDesc, const void *y,
    size_t weightSpaceSize, void *dweightSpace, size_t workSpaceSize, void *workSpace,
    size_t reserveSpaceSize, void *reserveSpace)
{
    if (!handle || !rnn_ok(rnnDesc) || !devSeqLengths || !x || !y)
        return BAD;
    if (addGrad != CUDNN_WGRAD_MODE_ADD && addGrad != CUDNN_WGRAD_MODE_SET)
        return BAD;
    // cuDNN documents ADD as the only mode this function supports
    if (addGrad != CUDNN_WGRAD_MODE_ADD)
        return UNSUP;
    RnnCall c;
    if (begin_call(rnnDesc, xDesc, yDesc, devSeqLengths, weightSpaceSize, dweightSpace,
                   workSpaceSize, workSpace, true, reserveSpaceSize, reserveSpace, &c) != OK ||
        check_state(hDesc, rnnDesc, c.B) != OK)
        return BAD;
    BwdWeightsArgs a{c, (const float *)x, (const float *)hx, (const float *)y,
                     (float *)dweightSpace};
    fakegpu::submit(handle->stream, [a]() {
        if (a.n.type == CUDNN_DATA_FLOAT)
            return run_backward_weights(a);
        widened_call(a, [&a](Widened &h) {
            const size_t nx = a.nx(), ny = a.ny(), nh = a.nh();
            BwdWeightsArgs f = a;
            f.x = h.in(a.x, nx), f.hx = h.in(a.hx, nh), f.y = h.in(a.y, ny);
            f.dw = h.out(a.dw, a.wm.total, true); // CUDNN_WGRAD_MODE_ADD reads it
            run_backward_weights(f);
        });
    });
    return OK;
}
