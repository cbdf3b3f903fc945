// fake_cudnn_conv.cc — cuDNN's 2-d convolutions on the host: descriptors,
// the algorithm search, forward (plain and fused with bias + activation),
// backward data, filter and bias.
//
// Every call checks its descriptors against each other as cuDNN documents
// it and refuses what does not fit (BAD_PARAM), or what neither cuDNN nor
// this stand-in does (NOT_SUPPORTED), before anything is queued.  The work
// itself copies the operands into packed fp32 NCHW / KCRS buffers (so any
// layout the strides describe computes the same), convolves there and
// blends the result into the destination through its own strides.
//
// Stricter than cuDNN in ways that only catch bugs: an output that overlaps
// an input or itself, or a workspace that overlaps a tensor, is refused; the
// workspace an algorithm asked for (cudnnFind's memory) must be passed, and
// is overwritten when the call runs, as a real algorithm's scratch would be.
// Every buffer must lie in a live allocation (fakegpu::device_range_ok), else
// the call fails with EXECUTION_FAILED, as an illegal address would.
// fp32 data with a math type other than CUDNN_FMA_MATH has its operands
// rounded to TF32, as tensor cores would (cuDNN permits it from Ampere on).

// cuDNN 9 marks this whole legacy API deprecated (warned under
// CUDNN_WARN_DEPRECATED); a stand-in for it has to name it
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "fakegpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <initializer_list>
#include <new>
#include <utility>
#include <vector>

namespace {

using fakegpu::computable;
using fakegpu::extent;
using fakegpu::kDimMax;
using fakegpu::self_overlaps;
using fakegpu::type_size;

// A buffer as the bytes from its first to one past its last element.
struct Span {
    const void *p;
    size_t bytes;
};

Span span(const void *p, const cudnnTensorStruct &t)
{
    return {p, (size_t)extent(t) * type_size(t.type)};
}

Span span(const void *p, const cudnnFilterStruct &f)
{
    return {p, (size_t)f.k * f.c * f.h * f.w * type_size(f.type)};
}

bool overlap(Span a, Span b)
{
    uintptr_t x = (uintptr_t)a.p, y = (uintptr_t)b.p;
    return a.bytes && b.bytes && x < y + b.bytes && y < x + a.bytes;
}

bool aligned(const void *p, cudnnDataType_t t) { return (uintptr_t)p % type_size(t) == 0; }

size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

// One convolution's sizes: x N C H W, filter K (C/G) R S, y N K P Q.
struct Geo {
    int n, c, h, w, k, r, s, p, q, g, cg, kg;
    int ph, pw, u, v, dh, dw;
    bool flip; // CUDNN_CONVOLUTION: the filter is applied mirrored
    bool tf32; // fp32 operands rounded to TF32 (tensor-op math)
    size_t es; // element size of x, w and y
};

// Sizes from the convolution, x and w descriptors, checked against each
// other (cudnnGetConvolution2dForwardOutputDim's rules).
cudnnStatus_t geometry(const cudnnConvolutionStruct *cd, const cudnnTensorStruct *x,
                       const cudnnFilterStruct *w, Geo *g)
{
    if (!cd || !x || !w)
        return CUDNN_STATUS_BAD_PARAM;
    // never set (created only), or not 2-d: a 2-d descriptor takes 4-d data
    if (cd->u == 0 || w->k == 0 || x->nb != 4)
        return CUDNN_STATUS_BAD_PARAM;
    Geo e = {};
    e.n = x->dim[0];
    e.c = x->dim[1];
    e.h = x->dim[2];
    e.w = x->dim[3];
    e.k = w->k;
    e.r = w->h;
    e.s = w->w;
    e.g = cd->groups;
    e.ph = cd->pad_h;
    e.pw = cd->pad_w;
    e.u = cd->u;
    e.v = cd->v;
    e.dh = cd->dil_h;
    e.dw = cd->dil_w;
    e.flip = cd->mode == CUDNN_CONVOLUTION;
    // input channels split in groups; the filter holds one group's
    if (e.g < 1 || e.c % e.g != 0 || e.k % e.g != 0 || w->c != e.c / e.g)
        return CUDNN_STATUS_BAD_PARAM;
    e.cg = e.c / e.g;
    e.kg = e.k / e.g;
    // the dilated filter must fit in the padded input
    int64_t er = (int64_t)(e.r - 1) * e.dh + 1, es = (int64_t)(e.s - 1) * e.dw + 1;
    int64_t hp = (int64_t)e.h + 2 * e.ph, wp = (int64_t)e.w + 2 * e.pw;
    if (er > hp || es > wp)
        return CUDNN_STATUS_BAD_PARAM;
    e.p = (int)((hp - er) / e.u + 1);
    e.q = (int)((wp - es) / e.v + 1);
    e.es = type_size(x->type);
    e.tf32 = x->type == CUDNN_DATA_FLOAT && cd->math != CUDNN_FMA_MATH;
    *g = e;
    return CUDNN_STATUS_SUCCESS;
}

// x, w and y of one type; the compute type one cuDNN pairs with it
// (FLOAT_CONFIG, TRUE_HALF_CONFIG, PSEUDO_HALF_CONFIG, PSEUDO_BFLOAT16_CONFIG).
cudnnStatus_t check_types(const cudnnConvolutionStruct *cd, cudnnDataType_t x, cudnnDataType_t w,
                          cudnnDataType_t y)
{
    if (x != w || x != y)
        return CUDNN_STATUS_BAD_PARAM;
    if (!computable(x))
        return CUDNN_STATUS_NOT_SUPPORTED; // double, int8, fp8: not done here
    bool ok = cd->compute == CUDNN_DATA_FLOAT || (x == CUDNN_DATA_HALF &&
                                                  cd->compute == CUDNN_DATA_HALF);
    return ok ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
}

// Everything the descriptors of one convolution must agree on: y (or dy)
// is N x K x P x Q as the output-dim rule gives it.
cudnnStatus_t check_descs(const cudnnConvolutionStruct *cd, const cudnnTensorStruct *x,
                          const cudnnFilterStruct *w, const cudnnTensorStruct *y, Geo *g)
{
    if (!y)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = geometry(cd, x, w, g);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (y->nb != 4 || y->dim[0] != g->n || y->dim[1] != g->k || y->dim[2] != g->p ||
        y->dim[3] != g->q)
        return CUDNN_STATUS_BAD_PARAM;
    return check_types(cd, x->type, w->type, y->type);
}

// Workspace bytes each algorithm asks for (what cudnnFind reports and the
// call then requires): some need none, so a workspace limit changes the pick.
enum Dir { FWD, BWD_DATA, BWD_FILTER };

size_t ws_need(Dir d, int algo, const Geo &g)
{
    if (d == FWD && algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        return align256((size_t)g.r * g.s * g.p * g.q * sizeof(int)); // precomputed indices
    if (d == FWD && algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM) // one image's im2col
        return align256((size_t)g.cg * g.r * g.s * g.p * g.q * g.es);
    if (d == BWD_DATA && algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0) // transposed filter
        return align256((size_t)g.k * g.cg * g.r * g.s * g.es);
    if (d == BWD_FILTER && algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0) // fp32 partial sums
        return align256((size_t)g.k * g.cg * g.r * g.s * sizeof(float));
    return 0;
}

// The algorithm value's range; cuDNN's own header marks
// BWD_FILTER_ALGO_WINOGRAD as having no kernel, so it is NOT_SUPPORTED.
cudnnStatus_t check_algo(Dir d, int algo)
{
    int count = d == FWD        ? (int)CUDNN_CONVOLUTION_FWD_ALGO_COUNT
                : d == BWD_DATA ? (int)CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                                : (int)CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    if (algo < 0 || algo >= count)
        return CUDNN_STATUS_BAD_PARAM;
    if (d == BWD_FILTER && algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD)
        return CUDNN_STATUS_NOT_SUPPORTED;
    return CUDNN_STATUS_SUCCESS;
}

// The pointer-level checks of one call: data present and element-aligned,
// the output neither self-overlapping nor overlapping an input, and the
// workspace the algorithm needs passed, large enough and apart from all.
cudnnStatus_t check_buffers(const void *in0, cudnnDataType_t t0, Span s0, const void *in1,
                            cudnnDataType_t t1, Span s1, void *out, cudnnDataType_t tout,
                            Span sout, const void *ws, size_t ws_bytes, size_t need)
{
    if (!in0 || !in1 || !out)
        return CUDNN_STATUS_BAD_PARAM;
    if (!aligned(in0, t0) || !aligned(in1, t1) || !aligned(out, tout))
        return CUDNN_STATUS_BAD_PARAM;
    if (overlap(sout, s0) || overlap(sout, s1))
        return CUDNN_STATUS_BAD_PARAM;
    if (need && (!ws || ws_bytes < need))
        return CUDNN_STATUS_BAD_PARAM;
    Span w = {ws, need};
    if (overlap(w, s0) || overlap(w, s1) || overlap(w, sout))
        return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

// Every buffer inside one live allocation (fake_runtime's record): a
// descriptor larger than its data, or a pointer past its block, would read
// or write out of bounds on the device, so the call fails as it would there
// (an illegal address: EXECUTION_FAILED), with a line saying which buffer.
bool live(const char *api, std::initializer_list<std::pair<const char *, Span>> bufs)
{
    bool ok = true;
    for (const auto &b : bufs) {
        char what[96];
        snprintf(what, sizeof what, "%s %s", api, b.first);
        ok = fakegpu::device_range_ok(b.second.p, b.second.bytes, what) && ok;
    }
    return ok;
}

// the workspace as the caller declares it (all of it must be there)
Span ws_span(const void *ws, size_t bytes) { return {ws, ws ? bytes : 0}; }

// one buffer of a call, named for the messages
struct Operand {
    const char *name;
    const void *p;
    cudnnDataType_t type;
    Span span;
};

Operand operand(const char *name, const void *p, const cudnnTensorStruct &t)
{
    return {name, p, t.type, span(p, t)};
}

Operand operand(const char *name, const void *p, const cudnnFilterStruct &f)
{
    return {name, p, f.type, span(p, f)};
}

// What each convolution call checks once its descriptors agree: the
// algorithm, an output tensor that does not overlap itself (out_t; NULL
// for a filter), the buffers against each other and the workspace *need
// bytes, and that every buffer lies in a live allocation.
cudnnStatus_t check_call(const char *api, Dir d, int algo, const Geo &g, Operand in0,
                         Operand in1, Operand out, const cudnnTensorStruct *out_t, void *ws,
                         size_t ws_bytes, size_t *need)
{
    cudnnStatus_t st = check_algo(d, algo);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *need = ws_need(d, algo, g);
    if (out_t && self_overlaps(*out_t))
        return CUDNN_STATUS_BAD_PARAM;
    st = check_buffers(in0.p, in0.type, in0.span, in1.p, in1.type, in1.span, (void *)out.p,
                       out.type, out.span, ws, ws_bytes, *need);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (!live(api, {{in0.name, in0.span}, {in1.name, in1.span}, {out.name, out.span},
                    {"workspace", ws_span(ws, ws_bytes)}}))
        return CUDNN_STATUS_EXECUTION_FAILED;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- packing between the caller's layouts and packed fp32 ----------------- */

// fp32 rounded to TF32 (10 mantissa bits, to nearest, ties away), as a
// tensor core reads fp32 operands
float to_tf32(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    if ((b & 0x7f800000u) == 0x7f800000u) // inf, NaN: as they are
        return f;
    b = (b + 0x1000u) & 0xffffe000u;
    memcpy(&f, &b, 4);
    return f;
}

// a 4-d tensor, any strides, as packed NCHW fp32
std::vector<float> pack(const void *p, const cudnnTensorStruct &t, bool tf32)
{
    std::vector<float> out((size_t)t.dim[0] * t.dim[1] * t.dim[2] * t.dim[3]);
    size_t i = 0;
    for (int a = 0; a < t.dim[0]; a++)
        for (int b = 0; b < t.dim[1]; b++)
            for (int c = 0; c < t.dim[2]; c++)
                for (int d = 0; d < t.dim[3]; d++) {
                    size_t o = (size_t)a * t.stride[0] + (size_t)b * t.stride[1] +
                               (size_t)c * t.stride[2] + (size_t)d * t.stride[3];
                    float f = fakegpu::load(p, t.type, o);
                    out[i++] = tf32 ? to_tf32(f) : f;
                }
    return out;
}

// packed NCHW fp32 blended into a 4-d tensor: alpha * v + beta * old
void unpack(void *p, const cudnnTensorStruct &t, const float *v, float alpha, float beta)
{
    size_t i = 0;
    for (int a = 0; a < t.dim[0]; a++)
        for (int b = 0; b < t.dim[1]; b++)
            for (int c = 0; c < t.dim[2]; c++)
                for (int d = 0; d < t.dim[3]; d++) {
                    size_t o = (size_t)a * t.stride[0] + (size_t)b * t.stride[1] +
                               (size_t)c * t.stride[2] + (size_t)d * t.stride[3];
                    fakegpu::blend(p, t.type, o, alpha, beta, v[i++]);
                }
}

// where filter element (k, c, r, s) lies: KCRS for NCHW, KRSC for NHWC
size_t filter_at(const cudnnFilterStruct &f, int k, int c, int r, int s)
{
    if (f.format == CUDNN_TENSOR_NHWC)
        return (((size_t)k * f.h + r) * f.w + s) * f.c + c;
    return (((size_t)k * f.c + c) * f.h + r) * f.w + s;
}

// the filter as packed KCRS fp32, mirrored for CUDNN_CONVOLUTION so the
// kernels below only cross-correlate
std::vector<float> pack_filter(const void *p, const cudnnFilterStruct &f, bool flip, bool tf32)
{
    std::vector<float> out((size_t)f.k * f.c * f.h * f.w);
    size_t i = 0;
    for (int k = 0; k < f.k; k++)
        for (int c = 0; c < f.c; c++)
            for (int r = 0; r < f.h; r++)
                for (int s = 0; s < f.w; s++) {
                    int rr = flip ? f.h - 1 - r : r, ss = flip ? f.w - 1 - s : s;
                    float v = fakegpu::load(p, f.type, filter_at(f, k, c, rr, ss));
                    out[i++] = tf32 ? to_tf32(v) : v;
                }
    return out;
}

void unpack_filter(void *p, const cudnnFilterStruct &f, bool flip, const float *v, float alpha,
                   float beta)
{
    size_t i = 0;
    for (int k = 0; k < f.k; k++)
        for (int c = 0; c < f.c; c++)
            for (int r = 0; r < f.h; r++)
                for (int s = 0; s < f.w; s++) {
                    int rr = flip ? f.h - 1 - r : r, ss = flip ? f.w - 1 - s : s;
                    fakegpu::blend(p, f.type, filter_at(f, k, c, rr, ss), alpha, beta, v[i++]);
                }
}

/* ---- the three convolutions on packed fp32 -------------------------------- */

// Output positions o in [lo, hi) whose input o * stride + off lies in
// [0, in): the taps of one filter row or column that miss the padding.
void taps(int off, int stride, int in, int out, int *lo, int *hi)
{
    int l = off >= 0 ? 0 : (-off + stride - 1) / stride;
    int h = in - 1 - off < 0 ? 0 : (in - 1 - off) / stride + 1;
    *hi = std::min(h, out);
    *lo = std::min(l, *hi);
}

// y[i] += a * x[i * stride], the rows of the kernels below.  Eight at a
// time in a fixed-count loop where the stride is 1: -O2 vectorizes that
// (not an open-ended loop), which keeps ResNet-sized layers near 0.5 s.
// Not inlined: inlined, the pointers lose __restrict and the vectorizing.
__attribute__((noinline))
void axpy(float *__restrict y, const float *__restrict x, float a, int n, int stride)
{
    int i = 0;
    if (stride == 1)
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++)
                y[i + j] += a * x[i + j];
    for (; i < n; i++)
        y[i] += a * x[(size_t)i * stride];
}

// y[i * stride] += a * x[i]
__attribute__((noinline))
void axpy_scatter(float *__restrict y, const float *__restrict x, float a, int n, int stride)
{
    int i = 0;
    if (stride == 1)
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++)
                y[i + j] += a * x[i + j];
    for (; i < n; i++)
        y[(size_t)i * stride] += a * x[i];
}

// sum of y[i] * x[i * stride], in eight fp32 partial sums
__attribute__((noinline))
float dot(const float *__restrict y, const float *__restrict x, int n, int stride)
{
    float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int i = 0;
    if (stride == 1)
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++)
                part[j] += y[i + j] * x[i + j];
    for (; i < n; i++)
        part[0] += y[i] * x[(size_t)i * stride];
    return ((part[0] + part[1]) + (part[2] + part[3])) +
           ((part[4] + part[5]) + (part[6] + part[7]));
}

// y[n][k] = sum over the group's c, r, s of w[k][c][r][s] * x[n][c] shifted
void conv_fwd(const Geo &g, const float *x, const float *w, float *y)
{
    const size_t hw = (size_t)g.h * g.w, pq = (size_t)g.p * g.q;
    for (int n = 0; n < g.n; n++)
        for (int k = 0; k < g.k; k++) {
            float *__restrict yp = y + ((size_t)n * g.k + k) * pq;
            std::fill(yp, yp + pq, 0.f);
            int grp = k / g.kg;
            for (int c = 0; c < g.cg; c++) {
                const float *xp = x + ((size_t)n * g.c + grp * g.cg + c) * hw;
                const float *wp = w + ((size_t)k * g.cg + c) * g.r * g.s;
                for (int r = 0; r < g.r; r++) {
                    int offh = r * g.dh - g.ph, oh0, oh1;
                    taps(offh, g.u, g.h, g.p, &oh0, &oh1);
                    for (int s = 0; s < g.s; s++) {
                        int offw = s * g.dw - g.pw, ow0, ow1;
                        taps(offw, g.v, g.w, g.q, &ow0, &ow1);
                        const float wv = wp[r * g.s + s];
                        for (int oh = oh0; oh < oh1; oh++)
                            axpy(yp + (size_t)oh * g.q + ow0,
                                 xp + (size_t)(oh * g.u + offh) * g.w + offw +
                                     (size_t)ow0 * g.v,
                                 wv, ow1 - ow0, g.v);
                    }
                }
            }
        }
}

// dx[n][c] = sum over the group's k, r, s of w[k][c][r][s] * dy[n][k]
// scattered back to the input positions it was read from
void conv_bwd_data(const Geo &g, const float *dy, const float *w, float *dx)
{
    const size_t hw = (size_t)g.h * g.w, pq = (size_t)g.p * g.q;
    for (int n = 0; n < g.n; n++)
        for (int c = 0; c < g.c; c++) {
            float *__restrict xp = dx + ((size_t)n * g.c + c) * hw;
            std::fill(xp, xp + hw, 0.f);
            int grp = c / g.cg, cc = c % g.cg;
            for (int kk = 0; kk < g.kg; kk++) {
                int k = grp * g.kg + kk;
                const float *yp = dy + ((size_t)n * g.k + k) * pq;
                const float *wp = w + ((size_t)k * g.cg + cc) * g.r * g.s;
                for (int r = 0; r < g.r; r++) {
                    int offh = r * g.dh - g.ph, oh0, oh1;
                    taps(offh, g.u, g.h, g.p, &oh0, &oh1);
                    for (int s = 0; s < g.s; s++) {
                        int offw = s * g.dw - g.pw, ow0, ow1;
                        taps(offw, g.v, g.w, g.q, &ow0, &ow1);
                        const float wv = wp[r * g.s + s];
                        for (int oh = oh0; oh < oh1; oh++)
                            axpy_scatter(xp + (size_t)(oh * g.u + offh) * g.w + offw +
                                             (size_t)ow0 * g.v,
                                         yp + (size_t)oh * g.q + ow0, wv, ow1 - ow0, g.v);
                    }
                }
            }
        }
}

// dw[k][c][r][s] = sum over n, oh, ow of dy[n][k][oh][ow] * x[n][c] at the
// tap; each row summed in fp32, the rows in double
void conv_bwd_filter(const Geo &g, const float *x, const float *dy, float *dw)
{
    const size_t hw = (size_t)g.h * g.w, pq = (size_t)g.p * g.q, rs = (size_t)g.r * g.s;
    std::vector<double> acc((size_t)g.k * g.cg * rs, 0.0);
    for (int n = 0; n < g.n; n++)
        for (int k = 0; k < g.k; k++) {
            const float *yp = dy + ((size_t)n * g.k + k) * pq;
            int grp = k / g.kg;
            for (int c = 0; c < g.cg; c++) {
                const float *xp = x + ((size_t)n * g.c + grp * g.cg + c) * hw;
                double *a = acc.data() + ((size_t)k * g.cg + c) * rs;
                for (int r = 0; r < g.r; r++) {
                    int offh = r * g.dh - g.ph, oh0, oh1;
                    taps(offh, g.u, g.h, g.p, &oh0, &oh1);
                    for (int s = 0; s < g.s; s++) {
                        int offw = s * g.dw - g.pw, ow0, ow1;
                        taps(offw, g.v, g.w, g.q, &ow0, &ow1);
                        double sum = 0;
                        for (int oh = oh0; oh < oh1; oh++)
                            sum += dot(yp + (size_t)oh * g.q + ow0,
                                       xp + (size_t)(oh * g.u + offh) * g.w + offw +
                                           (size_t)ow0 * g.v,
                                       ow1 - ow0, g.v);
                        a[r * g.s + s] += sum;
                    }
                }
            }
        }
    for (size_t i = 0; i < acc.size(); i++)
        dw[i] = (float)acc[i];
}

// cudnnFind*'s answer: a few algorithms that all work, fastest first; the
// fastest needs a workspace, so a small limit (or determinism) picks another
// FAKEGPU_NO_NHWC_GROUPED=1 (a test switch): no algorithm for a grouped
// convolution on channels-last data, as some cuDNN versions have none, so
// the backend's fallback to NCHW copies ("island") runs in CI too.
bool refuse_nhwc_grouped(const cudnnTensorStruct *x, const cudnnConvolutionStruct *cd)
{
    const char *e = getenv("FAKEGPU_NO_NHWC_GROUPED");
    return e && strcmp(e, "1") == 0 && cd->groups > 1 && x->nb == 4 && x->dim[1] > 1 &&
           x->stride[1] == 1;
}

// FAKEGPU_FIND_MATH=tensor_op (a test switch): every measured result says
// CUDNN_TENSOR_OP_MATH whatever math the descriptor asked for, as real
// cuDNN may report for fp32 data; a caller that copies it back onto its
// descriptor gets TF32 maths, which the fp32 checks then see.
cudnnMathType_t reported_math(cudnnMathType_t asked)
{
    const char *e = getenv("FAKEGPU_FIND_MATH");
    return e && strcmp(e, "tensor_op") == 0 ? CUDNN_TENSOR_OP_MATH : asked;
}

template <typename Perf, typename Algo>
cudnnStatus_t find(cudnnHandle_t handle, Dir d, const Geo &g, cudnnMathType_t math,
                   int requested, int *returned, Perf *perf)
{
    if (!handle || requested < 1 || !returned || !perf)
        return CUDNN_STATUS_BAD_PARAM;
    // cudnnFind runs and times every algorithm and allocates: not possible
    // while the stream is capturing a graph
    if (fakegpu::capturing(handle->stream))
        return CUDNN_STATUS_EXECUTION_FAILED_CUDART;
    struct Choice {
        int algo;
        cudnnDeterminism_t det;
    };
    static const Choice fwd[] = {
        {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_DETERMINISTIC},
        {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_DETERMINISTIC},
        {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_DETERMINISTIC}};
    static const Choice bwdd[] = {
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_NON_DETERMINISTIC},
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, CUDNN_DETERMINISTIC}};
    static const Choice bwdf[] = {
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, CUDNN_NON_DETERMINISTIC},
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_DETERMINISTIC},
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, CUDNN_NON_DETERMINISTIC}};
    const Choice *list = d == FWD ? fwd : d == BWD_DATA ? bwdd : bwdf;
    int n = d == FWD ? 3 : d == BWD_DATA ? 2 : 3;
    n = std::min(n, requested);
    for (int i = 0; i < n; i++) {
        memset(&perf[i], 0, sizeof perf[i]);
        perf[i].algo = (Algo)list[i].algo;
        perf[i].status = CUDNN_STATUS_SUCCESS;
        perf[i].time = 0.1f * (float)(i + 1);
        perf[i].memory = ws_need(d, list[i].algo, g);
        perf[i].determinism = list[i].det;
        perf[i].mathType = reported_math(math);
    }
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

// the descriptors checked, then the search (x is dx for backward data)
template <typename Perf, typename Algo>
cudnnStatus_t find_checked(cudnnHandle_t handle, Dir d, const cudnnConvolutionStruct *cd,
                           const cudnnTensorStruct *x, const cudnnFilterStruct *w,
                           const cudnnTensorStruct *y, int requested, int *returned, Perf *perf)
{
    Geo g;
    cudnnStatus_t st = check_descs(cd, x, w, y, &g);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (refuse_nhwc_grouped(x, cd))
        return CUDNN_STATUS_NOT_SUPPORTED;
    return find<Perf, Algo>(handle, d, g, cd->math, requested, returned, perf);
}


// One of the three convolutions: x, w and y as cuDNN names them for the
// forward (dx, dw or dy where the direction reads or writes those), d saying
// which of them is written.  Checks, then queues the maths with the
// scalars and descriptors copied: a captured graph replays it later.
cudnnStatus_t convolve(const char *api, Dir d, cudnnHandle_t handle, const void *alpha,
                       const void *beta, const cudnnConvolutionStruct *cd, int algo,
                       const cudnnTensorStruct *xDesc, const void *x,
                       const cudnnFilterStruct *wDesc, const void *w,
                       const cudnnTensorStruct *yDesc, const void *y, void *workSpace,
                       size_t workSpaceSizeInBytes)
{
    if (!handle || !alpha || !beta)
        return CUDNN_STATUS_BAD_PARAM;
    Geo g;
    size_t need = 0;
    cudnnStatus_t st = check_descs(cd, xDesc, wDesc, yDesc, &g);
    if (st == CUDNN_STATUS_SUCCESS) {
        Operand ox = operand(d == BWD_DATA ? "dx" : "x", x, *xDesc),
                ow = operand(d == BWD_FILTER ? "dw" : "w", w, *wDesc),
                oy = operand(d == FWD ? "y" : "dy", y, *yDesc);
        st = d == FWD        ? check_call(api, d, algo, g, ox, ow, oy, yDesc, workSpace,
                                          workSpaceSizeInBytes, &need)
             : d == BWD_DATA ? check_call(api, d, algo, g, oy, ow, ox, xDesc, workSpace,
                                          workSpaceSizeInBytes, &need)
                             : check_call(api, d, algo, g, ox, oy, ow, NULL, workSpace,
                                          workSpaceSizeInBytes, &need);
    }
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const float al = *(const float *)alpha, be = *(const float *)beta;
    const cudnnTensorStruct xd = *xDesc, yd = *yDesc;
    const cudnnFilterStruct wd = *wDesc;
    fakegpu::submit(handle->stream, [=]() {
        if (need)
            memset(workSpace, 0xff, need); // scratch: NaN for whoever reads it after
        std::vector<float> xs = d == BWD_DATA ? std::vector<float>((size_t)g.n * g.c * g.h * g.w)
                                              : pack(x, xd, g.tf32);
        std::vector<float> ws = d == BWD_FILTER ? std::vector<float>((size_t)g.k * g.cg * g.r * g.s)
                                                : pack_filter(w, wd, g.flip, g.tf32);
        std::vector<float> ys = d == FWD ? std::vector<float>((size_t)g.n * g.k * g.p * g.q)
                                         : pack(y, yd, g.tf32);
        if (d == FWD) {
            conv_fwd(g, xs.data(), ws.data(), ys.data());
            unpack((void *)y, yd, ys.data(), al, be);
        } else if (d == BWD_DATA) {
            conv_bwd_data(g, ys.data(), ws.data(), xs.data());
            unpack((void *)x, xd, xs.data(), al, be);
        } else {
            conv_bwd_filter(g, xs.data(), ys.data(), ws.data());
            unpack_filter((void *)w, wd, g.flip, ws.data(), al, be);
        }
    });
    return CUDNN_STATUS_SUCCESS;
}
} // namespace

extern "C" {

/* ---- convolution descriptors --------------------------------------------- */

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc)
{
    // u == 0 marks "never set"; one group and the default math until set
    cudnnConvolutionStruct d = {};
    d.groups = 1;
    d.math = CUDNN_DEFAULT_MATH;
    d.compute = CUDNN_DATA_FLOAT;
    d.mode = CUDNN_CROSS_CORRELATION;
    return fakegpu::new_descriptor(__func__, convDesc, d);
}

cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc)
{
    delete convDesc; // NULL accepted: teardown after a half-done setup
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc, int pad_h,
                                              int pad_w, int u, int v, int dilation_h,
                                              int dilation_w, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t computeType)
{
    if (!convDesc || pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dilation_h <= 0 ||
        dilation_w <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION)
        return CUDNN_STATUS_BAD_PARAM;
    if ((int)computeType < (int)CUDNN_DATA_FLOAT || (int)computeType > (int)CUDNN_DATA_COMPLEX_FP64)
        return CUDNN_STATUS_BAD_PARAM;
    // the group count and math type are set apart and kept
    convDesc->pad_h = pad_h;
    convDesc->pad_w = pad_w;
    convDesc->u = u;
    convDesc->v = v;
    convDesc->dil_h = dilation_h;
    convDesc->dil_w = dilation_w;
    convDesc->mode = mode;
    convDesc->compute = computeType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount)
{
    if (!convDesc || groupCount < 1)
        return CUDNN_STATUS_BAD_PARAM;
    convDesc->groups = groupCount;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                          cudnnMathType_t mathType)
{
    if (!convDesc || (int)mathType < (int)CUDNN_DEFAULT_MATH || (int)mathType > (int)CUDNN_FMA_MATH)
        return CUDNN_STATUS_BAD_PARAM;
    convDesc->math = mathType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                    const cudnnTensorDescriptor_t inputTensorDesc,
                                                    const cudnnFilterDescriptor_t filterDesc,
                                                    int *n, int *c, int *h, int *w)
{
    if (!n || !c || !h || !w)
        return CUDNN_STATUS_BAD_PARAM;
    Geo g;
    cudnnStatus_t st = geometry(convDesc, inputTensorDesc, filterDesc, &g);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *n = g.n;
    *c = g.k;
    *h = g.p;
    *w = g.q;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- algorithm search ------------------------------------------------------ */

cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle,
                                                   const cudnnTensorDescriptor_t xDesc,
                                                   const cudnnFilterDescriptor_t wDesc,
                                                   const cudnnConvolutionDescriptor_t convDesc,
                                                   const cudnnTensorDescriptor_t yDesc,
                                                   const int requestedAlgoCount,
                                                   int *returnedAlgoCount,
                                                   cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    return find_checked<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(
        handle, FWD, convDesc, xDesc, wDesc, yDesc, requestedAlgoCount, returnedAlgoCount,
        perfResults);
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    return find_checked<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
        handle, BWD_DATA, convDesc, dxDesc, wDesc, dyDesc, requestedAlgoCount, returnedAlgoCount,
        perfResults);
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc,
    const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    return find_checked<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
        handle, BWD_FILTER, convDesc, xDesc, dwDesc, dyDesc, requestedAlgoCount,
        returnedAlgoCount, perfResults);
}

/* ---- the convolutions ------------------------------------------------------ */

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                      const cudnnTensorDescriptor_t xDesc, const void *x,
                                      const cudnnFilterDescriptor_t wDesc, const void *w,
                                      const cudnnConvolutionDescriptor_t convDesc,
                                      cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                      size_t workSpaceSizeInBytes, const void *beta,
                                      const cudnnTensorDescriptor_t yDesc, void *y)
{
    return convolve("cudnnConvolutionForward", FWD, handle, alpha, beta, convDesc, algo, xDesc, x,
                    wDesc, w, yDesc, y, workSpace, workSpaceSizeInBytes);
}

// y = act(alpha1 * conv(x, w) + alpha2 * z + bias), cuDNN's fused form: no
// beta, z takes its place (z may be y itself).
cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void *workSpace, size_t workSpaceSizeInBytes,
    const void *alpha2, const cudnnTensorDescriptor_t zDesc, const void *z,
    const cudnnTensorDescriptor_t biasDesc, const void *bias,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void *y)
{
    if (!handle || !alpha1 || !alpha2 || !zDesc || !z || !biasDesc || !bias || !activationDesc)
        return CUDNN_STATUS_BAD_PARAM;
    Geo g;
    cudnnStatus_t st = check_descs(convDesc, xDesc, wDesc, yDesc, &g);
    if (st == CUDNN_STATUS_SUCCESS)
        st = check_algo(FWD, algo);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    // z as y; the bias one value per output channel, in y's type
    if (zDesc->nb != 4 || biasDesc->nb != 4 || zDesc->type != yDesc->type ||
        biasDesc->type != yDesc->type)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < 4; i++)
        if (zDesc->dim[i] != yDesc->dim[i] || biasDesc->dim[i] != (i == 1 ? g.k : 1))
            return CUDNN_STATUS_BAD_PARAM;
    // cuDNN fuses RELU and IDENTITY only, without NaN propagation, and
    // IDENTITY with IMPLICIT_PRECOMP_GEMM only
    const cudnnActivationStruct act = *activationDesc;
    if (act.nan != CUDNN_NOT_PROPAGATE_NAN)
        return CUDNN_STATUS_BAD_PARAM;
    if (act.mode != CUDNN_ACTIVATION_RELU && act.mode != CUDNN_ACTIVATION_IDENTITY)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (act.mode == CUDNN_ACTIVATION_IDENTITY &&
        algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        return CUDNN_STATUS_NOT_SUPPORTED;
    size_t need = ws_need(FWD, algo, g);
    if (self_overlaps(*yDesc))
        return CUDNN_STATUS_BAD_PARAM;
    st = check_buffers(x, xDesc->type, span(x, *xDesc), w, wDesc->type, span(w, *wDesc), y,
                       yDesc->type, span(y, *yDesc), workSpace, workSpaceSizeInBytes, need);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    // z may be y, in place, but then exactly y; the bias apart from both
    Span sy = span(y, *yDesc), sz = span(z, *zDesc), sb = span(bias, *biasDesc);
    bool z_is_y = z == y && memcmp(zDesc->stride, yDesc->stride, sizeof yDesc->stride) == 0;
    if (!aligned(z, zDesc->type) || !aligned(bias, biasDesc->type) ||
        (overlap(sy, sz) && !z_is_y) || overlap(sy, sb) || overlap({workSpace, need}, sz) ||
        overlap({workSpace, need}, sb))
        return CUDNN_STATUS_BAD_PARAM;
    if (!live("cudnnConvolutionBiasActivationForward",
              {{"x", span(x, *xDesc)}, {"w", span(w, *wDesc)}, {"y", sy}, {"z", sz}, {"bias", sb},
               {"workspace", ws_span(workSpace, workSpaceSizeInBytes)}}))
        return CUDNN_STATUS_EXECUTION_FAILED;
    const float a1 = *(const float *)alpha1, a2 = *(const float *)alpha2;
    const cudnnTensorStruct xd = *xDesc, yd = *yDesc, zd = *zDesc, bd = *biasDesc;
    const cudnnFilterStruct wd = *wDesc;
    const bool relu = act.mode == CUDNN_ACTIVATION_RELU;
    fakegpu::submit(handle->stream, [=]() {
        if (need)
            memset(workSpace, 0xff, need);
        std::vector<float> xs = pack(x, xd, g.tf32), ws = pack_filter(w, wd, g.flip, g.tf32);
        std::vector<float> ys((size_t)g.n * g.k * g.p * g.q);
        conv_fwd(g, xs.data(), ws.data(), ys.data());
        // alpha2 == 0: z is not read, as a zero beta leaves y unread (it is
        // y's prior value when z is y, and may be NaN)
        std::vector<float> zs;
        if (a2 != 0.f)
            zs = pack(z, zd, false);
        const size_t pq = (size_t)g.p * g.q;
        for (size_t i = 0; i < ys.size(); i++) {
            int k = (int)(i / pq % (size_t)g.k);
            float v = a1 * ys[i] + fakegpu::load(bias, bd.type, (size_t)k * bd.stride[1]);
            if (a2 != 0.f)
                v += a2 * zs[i];
            ys[i] = relu && !(v > 0.f) ? 0.f : v;
        }
        unpack(y, yd, ys.data(), 1.f, 0.f);
    });
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                           const cudnnFilterDescriptor_t wDesc, const void *w,
                                           const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                           size_t workSpaceSizeInBytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    return convolve("cudnnConvolutionBackwardData", BWD_DATA, handle, alpha, beta, convDesc, algo,
                    dxDesc, dx, wDesc, w, dyDesc, dy, workSpace, workSpaceSizeInBytes);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                                             size_t workSpaceSizeInBytes, const void *beta,
                                             const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    return convolve("cudnnConvolutionBackwardFilter", BWD_FILTER, handle, alpha, beta, convDesc,
                    algo, xDesc, x, dwDesc, dw, dyDesc, dy, workSpace, workSpaceSizeInBytes);
}

// db = alpha * (dy summed over every dimension but the channels) + beta * db
cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void *alpha,
                                           const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                           const void *beta, const cudnnTensorDescriptor_t dbDesc,
                                           void *db)
{
    if (!handle || !alpha || !beta || !dyDesc || !dbDesc || !dy || !db)
        return CUDNN_STATUS_BAD_PARAM;
    const cudnnTensorStruct yd = *dyDesc, bd = *dbDesc;
    if (yd.nb < 3 || yd.nb != bd.nb || yd.type != bd.type)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < yd.nb; i++)
        if (bd.dim[i] != (i == 1 ? yd.dim[1] : 1))
            return CUDNN_STATUS_BAD_PARAM;
    if (yd.nb > 5 || !computable(yd.type))
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (!aligned(dy, yd.type) || !aligned(db, bd.type) || overlap(span(dy, yd), span(db, bd)))
        return CUDNN_STATUS_BAD_PARAM;
    if (!live("cudnnConvolutionBackwardBias", {{"dy", span(dy, yd)}, {"db", span(db, bd)}}))
        return CUDNN_STATUS_EXECUTION_FAILED;
    const float al = *(const float *)alpha, be = *(const float *)beta;
    fakegpu::submit(handle->stream, [=]() {
        std::vector<double> sum((size_t)yd.dim[1], 0.0);
        int idx[kDimMax] = {0};
        int64_t total = 1;
        for (int i = 0; i < yd.nb; i++)
            total *= yd.dim[i];
        for (int64_t e = 0; e < total; e++) {
            size_t o = 0;
            for (int i = 0; i < yd.nb; i++)
                o += (size_t)idx[i] * yd.stride[i];
            sum[(size_t)idx[1]] += fakegpu::load(dy, yd.type, o);
            for (int i = yd.nb - 1; i >= 0 && ++idx[i] == yd.dim[i]; i--)
                idx[i] = 0;
        }
        for (int c = 0; c < yd.dim[1]; c++)
            fakegpu::blend(db, bd.type, (size_t)c * bd.stride[1], al, be, (float)sum[(size_t)c]);
    });
    return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
