// fake_cudnn_ops.cc — CPU stand-ins for the cuDNN "ops" calls the backend
// makes: activation and LRN descriptors, batch normalization (plain and Ex,
// with workspace and reserve space), LRN across channels and softmax.
//
// Strict on purpose: the point is to catch plumbing bugs in core/nn/cuda, so
// arguments are checked as cuDNN documents them (BAD_PARAM), configurations
// cuDNN refuses are refused (NOT_SUPPORTED), and the Ex calls really depend
// on their workspace and reserve space, so a buffer that is too small,
// shared with another tensor or not the one the forward wrote gives wrong
// numbers.  Checks happen at call time, as cuDNN's do; the maths runs through
// fakegpu::submit on the handle's stream with every descriptor and scalar
// copied (the stream may be capturing a graph).  Arithmetic in double,
// stored with fakegpu::store (rounded for half data).
#include "fakegpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <vector>

namespace {

using fakegpu::computable;

using Tensor = cudnnTensorStruct;

const cudnnStatus_t OK = CUDNN_STATUS_SUCCESS;
const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM;
const cudnnStatus_t UNSUPPORTED = CUDNN_STATUS_NOT_SUPPORTED;


// A descriptor that was set: 1..8 dims, all positive, positive strides.  A
// created but never set descriptor (nb 0) is a BAD_PARAM, as in cuDNN.
bool set(const Tensor *d)
{
    if (!d || d->nb < 1 || d->nb > 8)
        return false;
    for (int k = 0; k < d->nb; ++k)
        if (d->dim[k] < 1 || d->stride[k] < 1)
            return false;
    return true;
}

bool same_shape(const Tensor &a, const Tensor &b)
{
    if (a.nb != b.nb || a.type != b.type)
        return false;
    for (int k = 0; k < a.nb; ++k)
        if (a.dim[k] != b.dim[k])
            return false;
    return true;
}

size_t count_of(const Tensor &d)
{
    size_t n = 1;
    for (int k = 0; k < d.nb; ++k)
        n *= (size_t)d.dim[k];
    return n;
}

// product of the dims after N and C (H*W, or D*H*W)
size_t spatial_of(const Tensor &d)
{
    size_t n = 1;
    for (int k = 2; k < d.nb; ++k)
        n *= (size_t)d.dim[k];
    return n;
}

// Memory offsets (in elements) of every element, in logical row-major order
// of the dims (N, C, then the spatial dims): strides decide the layout, so
// NCHW and NHWC tensors go through the same loops.
std::vector<size_t> offsets(const Tensor &d)
{
    std::vector<size_t> off(count_of(d));
    for (size_t i = 0; i < off.size(); ++i) {
        size_t r = i, o = 0;
        for (int k = d.nb - 1; k >= 0; --k) {
            o += (r % (size_t)d.dim[k]) * (size_t)d.stride[k];
            r /= (size_t)d.dim[k];
        }
        off[i] = o;
    }
    return off;
}

// Channels fastest (NHWC / NDHWC), fully packed.  Dims of size 1 may have
// any stride: with H = W = 1 the NCHW and NHWC descriptors are one layout.
bool channels_last(const Tensor &d)
{
    size_t want = 1;
    int order[fakegpu::kDimMax] = {1};
    int n = 1;
    for (int k = d.nb - 1; k >= 2; --k)
        order[n++] = k;
    order[n++] = 0;
    for (int j = 0; j < n; ++j) {
        int k = order[j];
        if (d.dim[k] > 1 && (size_t)d.stride[k] != want)
            return false;
        want *= (size_t)d.dim[k];
    }
    return true;
}

float host_scalar(const void *p) { return *(const float *)p; }

float nan_f() { return std::numeric_limits<float>::quiet_NaN(); }

// Unaligned-safe access to doubles in caller-provided scratch (workspace).
double ws_get(const void *base, size_t i)
{
    double v;
    memcpy(&v, (const char *)base + i * sizeof v, sizeof v);
    return v;
}

void ws_put(void *base, size_t i, double v) { memcpy((char *)base + i * sizeof v, &v, sizeof v); }

// ---- batch normalization: shapes and checks --------------------------------

bool bn_mode_ok(cudnnBatchNormMode_t m)
{
    return m == CUDNN_BATCHNORM_PER_ACTIVATION || m == CUDNN_BATCHNORM_SPATIAL ||
           m == CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
}

// SPATIAL and SPATIAL_PERSISTENT: one statistic per channel over N and the
// spatial dims (the same maths; PERSISTENT is only a faster kernel in
// cuDNN).  PER_ACTIVATION: one per (c, spatial position), over N.
struct BnGeo {
    size_t count = 0;    // elements of x
    size_t c = 0, s = 0; // channels, spatial size
    size_t params = 1;   // statistics: C, or C*S per activation
    size_t m = 0;        // elements reduced into each statistic
    bool per_act = false;

    BnGeo() = default;
    BnGeo(const Tensor &x, cudnnBatchNormMode_t mode)
        : count(count_of(x)), c((size_t)x.dim[1]), s(spatial_of(x)),
          per_act(mode == CUDNN_BATCHNORM_PER_ACTIVATION)
    {
        params = per_act ? c * s : c;
        m = count / params;
    }
    // statistic of the i-th element (logical order); also the logical index
    // of that statistic in the 1xCx1x1 / 1xCxHxW parameter tensor
    size_t param(size_t i) const { return per_act ? i % (c * s) : (i / s) % c; }
};

// x, y, dx, dy: set, 4 or 5 dims (cuDNN's batch norm takes no other rank),
// the same dims and data type.
cudnnStatus_t bn_data(const Tensor *x, std::initializer_list<const Tensor *> others)
{
    if (!set(x) || x->nb < 4 || x->nb > 5)
        return BAD;
    for (const Tensor *o : others)
        if (!set(o) || !same_shape(*x, *o))
            return BAD;
    if (!computable(x->type))
        return x->type == CUDNN_DATA_DOUBLE ? UNSUPPORTED : BAD;
    // FAKEGPU_NO_HALF_BN=1 (a test switch): no batch norm on half data, so
    // the half backends step down to their fp32 fallback in CI too
    const char *e = getenv("FAKEGPU_NO_HALF_BN");
    if (e && strcmp(e, "1") == 0 && x->type != CUDNN_DATA_FLOAT)
        return UNSUPPORTED;
    return OK;
}

// the scale/bias/mean/variance descriptor: what cudnnDeriveBNTensorDescriptor
// gives for x and the mode (1xCx1x1 or 1xCxHxW, FLOAT for non-double data)
cudnnStatus_t bn_param(const Tensor *p, const Tensor &x, cudnnBatchNormMode_t mode)
{
    if (!set(p) || p->nb != x.nb || p->type != CUDNN_DATA_FLOAT || p->dim[0] != 1 ||
        p->dim[1] != x.dim[1])
        return BAD;
    for (int k = 2; k < x.nb; ++k)
        if (p->dim[k] != (mode == CUDNN_BATCHNORM_PER_ACTIVATION ? x.dim[k] : 1))
            return BAD;
    return OK;
}

bool one_null(const void *a, const void *b) { return (a == nullptr) != (b == nullptr); }

// What the Ex calls add.  BN_ACTIVATION: a ReLU descriptor is required (NULL
// is BAD_PARAM); like cuDNN, the fused kernel is the persistent NHWC one, so
// any other mode, layout, data type than HALF/FLOAT, or activation than ReLU
// is NOT_SUPPORTED.  BN_ADD_ACTIVATION is NOT_SUPPORTED too: the backend
// never asks for it, so the stand-in has no add path.
cudnnStatus_t ex_ops(cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
                     cudnnActivationDescriptor_t act,
                     std::initializer_list<const Tensor *> layout_checked)
{
    if (ops == CUDNN_BATCHNORM_OPS_BN)
        return OK;
    if (ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION)
        return UNSUPPORTED;
    if (ops != CUDNN_BATCHNORM_OPS_BN_ACTIVATION || !act)
        return BAD;
    if (act->mode != CUDNN_ACTIVATION_RELU || mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
        return UNSUPPORTED;
    for (const Tensor *t : layout_checked) {
        if (!t)
            continue;
        if (!channels_last(*t) || (t->type != CUDNN_DATA_HALF && t->type != CUDNN_DATA_FLOAT))
            return UNSUPPORTED;
    }
    return OK;
}

// Workspace: two doubles per statistic (sums in backward; mean and variance
// in forward), really used as the scratch of the reductions, so a workspace
// that is too small or overlaps a tensor corrupts the results.
size_t ex_workspace(const BnGeo &g) { return 2 * g.params * sizeof(double); }

// Reserve space, written by the forward and read by the backward instead of
// recomputing: a header (which forward wrote it), the batch mean and inverse
// std as float, and with BN_ACTIVATION one bit per element, set where the
// pre-activation value was > 0.
struct RsHeader {
    uint64_t magic, ops, count, params;
};
const uint64_t RS_MAGIC = 0x5352204e42656b66ull; // "fkeBN RS"

size_t ex_reserve(const BnGeo &g, bool act)
{
    size_t n = sizeof(RsHeader) + 2 * g.params * sizeof(float) + (act ? (g.count + 7) / 8 : 0);
    return (n + 15) & ~(size_t)15;
}

float *rs_stats(void *rs) { return (float *)((char *)rs + sizeof(RsHeader)); }
uint8_t *rs_bits(void *rs, const BnGeo &g)
{
    return (uint8_t *)(rs_stats(rs) + 2 * g.params);
}

// ---- batch normalization: the maths ----------------------------------------

// everything a training forward reads, by value (descriptors, scalars)
struct BnFwd {
    BnGeo g;
    bool act = false, nan_prop = false;
    cudnnBatchNormOps_t ops = CUDNN_BATCHNORM_OPS_BN;
    float alpha = 1, beta = 0;
    Tensor xd{}, yd{}, pd{};
    const void *x = nullptr;
    void *y = nullptr;
    const void *scale = nullptr, *bias = nullptr;
    double factor = 0;
    void *rmean = nullptr, *rvar = nullptr;
    double eps = 0;
    void *smean = nullptr, *sinv = nullptr;
    void *ws = nullptr; // 2*params doubles; NULL: private scratch
    void *rs = nullptr; // reserve space (Ex) or NULL
};

// Training forward: batch mean and biased variance (normalisation), the
// running averages with the unbiased variance (cuDNN: var * m / (m - 1);
// with m == 1 the biased one, to stay finite), saved mean and 1/sqrt(var +
// eps), then y = alpha * act(scale * xhat + bias) + beta * y.
void bn_fwd_train(const BnFwd &a)
{
    const BnGeo &g = a.g;
    const size_t P = g.params;
    std::vector<double> own;
    void *ws = a.ws;
    if (!ws) {
        own.resize(2 * P);
        ws = own.data();
    }
    std::vector<size_t> xo = offsets(a.xd), yo = offsets(a.yd), po = offsets(a.pd);
    // pass 1: sums -> means, in the workspace
    for (size_t p = 0; p < P; ++p)
        ws_put(ws, p, 0.0);
    for (size_t i = 0; i < g.count; ++i) {
        size_t p = g.param(i);
        ws_put(ws, p, ws_get(ws, p) + fakegpu::load(a.x, a.xd.type, xo[i]));
    }
    for (size_t p = 0; p < P; ++p)
        ws_put(ws, p, ws_get(ws, p) / (double)g.m);
    // pass 2: squared deviations -> biased variance (two passes: no
    // cancellation for data with a large mean)
    for (size_t p = 0; p < P; ++p)
        ws_put(ws, P + p, 0.0);
    for (size_t i = 0; i < g.count; ++i) {
        size_t p = g.param(i);
        double d = fakegpu::load(a.x, a.xd.type, xo[i]) - ws_get(ws, p);
        ws_put(ws, P + p, ws_get(ws, P + p) + d * d);
    }
    for (size_t p = 0; p < P; ++p)
        ws_put(ws, P + p, ws_get(ws, P + p) / (double)g.m);

    for (size_t p = 0; p < P; ++p) {
        double mean = ws_get(ws, p), var = ws_get(ws, P + p);
        double inv = 1.0 / sqrt(var + a.eps);
        if (a.rmean) {
            double unb = g.m > 1 ? var * (double)g.m / (double)(g.m - 1) : var;
            double f = a.factor;
            float rm = fakegpu::load(a.rmean, CUDNN_DATA_FLOAT, po[p]);
            float rv = fakegpu::load(a.rvar, CUDNN_DATA_FLOAT, po[p]);
            fakegpu::store(a.rmean, CUDNN_DATA_FLOAT, po[p], (float)((1 - f) * rm + f * mean));
            fakegpu::store(a.rvar, CUDNN_DATA_FLOAT, po[p], (float)((1 - f) * rv + f * unb));
        }
        if (a.smean) {
            fakegpu::store(a.smean, CUDNN_DATA_FLOAT, po[p], (float)mean);
            fakegpu::store(a.sinv, CUDNN_DATA_FLOAT, po[p], (float)inv);
        }
        if (a.rs) {
            rs_stats(a.rs)[p] = (float)mean;
            rs_stats(a.rs)[P + p] = (float)inv;
        }
    }
    if (a.rs) {
        RsHeader h = {RS_MAGIC, (uint64_t)a.ops, g.count, P};
        memcpy(a.rs, &h, sizeof h);
    }
    uint8_t *bits = a.rs && a.act ? rs_bits(a.rs, g) : nullptr;
    if (bits)
        memset(bits, 0, (g.count + 7) / 8);
    // y from the workspace's statistics (read back per element, so a
    // workspace overlapping y shows)
    for (size_t i = 0; i < g.count; ++i) {
        size_t p = g.param(i);
        double inv = 1.0 / sqrt(ws_get(ws, P + p) + a.eps);
        double v = fakegpu::load(a.scale, CUDNN_DATA_FLOAT, po[p]) *
                       (fakegpu::load(a.x, a.xd.type, xo[i]) - ws_get(ws, p)) * inv +
                   fakegpu::load(a.bias, CUDNN_DATA_FLOAT, po[p]);
        if (a.act) {
            if (v > 0 && bits)
                bits[i / 8] |= (uint8_t)(1u << (i % 8));
            if (!(v > 0))
                v = isnan(v) && a.nan_prop ? v : 0.0;
        }
        fakegpu::blend(a.y, a.yd.type, yo[i], a.alpha, a.beta, (float)v);
    }
}

// everything a backward reads, by value
struct BnBwd {
    BnGeo g;
    bool act = false, ex = false;
    float ad = 1, bd = 0, ap = 1, bp = 0;
    Tensor xd{}, yd{}, dyd{}, dxd{}, pd{};
    const void *x = nullptr, *y = nullptr, *dy = nullptr;
    void *dx = nullptr;
    const void *scale = nullptr;
    void *dscale = nullptr, *dbias = nullptr;
    double eps = 0;
    const void *smean = nullptr, *sinv = nullptr;
    void *ws = nullptr;       // 2*params doubles; NULL: private scratch
    const void *rs = nullptr; // Ex: the reserve space the forward wrote
};

void bn_poison(const BnBwd &a, const char *why)
{
    fprintf(stderr,
            "fakegpu: cudnnBatchNormalizationBackwardEx: %s; writing NaN to dx, dScale and dBias\n",
            why);
    std::vector<size_t> dxo = offsets(a.dxd), po = offsets(a.pd);
    for (size_t i = 0; i < a.g.count; ++i)
        fakegpu::store(a.dx, a.dxd.type, dxo[i], nan_f());
    for (size_t p = 0; p < a.g.params; ++p) {
        fakegpu::store(a.dscale, CUDNN_DATA_FLOAT, po[p], nan_f());
        fakegpu::store(a.dbias, CUDNN_DATA_FLOAT, po[p], nan_f());
    }
}

// Statistics for the backward.  Ex: from the reserve space, which must hold
// what a matching forward wrote; saved mean / inverse std, when given, must
// agree with it bit for bit (they were written from the same values).  A
// mismatch is a backend bug that real cuDNN would not report but would turn
// into wrong gradients, so it becomes NaNs with a message, never a refusal
// (the backend would step down silently).  Plain: the saved values, or
// recomputed from x (biased variance) when both are NULL.
bool bn_bwd_stats(const BnBwd &a, std::vector<double> &mean, std::vector<double> &inv)
{
    const BnGeo &g = a.g;
    const size_t P = g.params;
    std::vector<size_t> po = offsets(a.pd);
    if (a.ex) {
        RsHeader h;
        memcpy(&h, a.rs, sizeof h);
        if (h.magic != RS_MAGIC || h.count != g.count || h.params != P) {
            bn_poison(a, "the reserve space was not written by a forward of this shape");
            return false;
        }
        if (a.act && h.ops != CUDNN_BATCHNORM_OPS_BN_ACTIVATION) {
            bn_poison(a, "BN_ACTIVATION backward on a reserve space from a forward without it");
            return false;
        }
        const float *st = rs_stats(const_cast<void *>(a.rs));
        for (size_t p = 0; p < P; ++p) {
            mean[p] = st[p];
            inv[p] = st[P + p];
            if (!a.smean)
                continue;
            float sm = fakegpu::load(a.smean, CUDNN_DATA_FLOAT, po[p]);
            float si = fakegpu::load(a.sinv, CUDNN_DATA_FLOAT, po[p]);
            if (memcmp(&sm, &st[p], sizeof sm) || memcmp(&si, &st[P + p], sizeof si)) {
                bn_poison(a, "savedMean/savedInvVariance disagree with the reserve space");
                return false;
            }
        }
        return true;
    }
    if (a.smean) {
        for (size_t p = 0; p < P; ++p) {
            mean[p] = fakegpu::load(a.smean, CUDNN_DATA_FLOAT, po[p]);
            inv[p] = fakegpu::load(a.sinv, CUDNN_DATA_FLOAT, po[p]);
        }
        return true;
    }
    std::vector<size_t> xo = offsets(a.xd);
    std::vector<double> var(P, 0.0);
    std::fill(mean.begin(), mean.end(), 0.0);
    for (size_t i = 0; i < g.count; ++i)
        mean[g.param(i)] += fakegpu::load(a.x, a.xd.type, xo[i]);
    for (size_t p = 0; p < P; ++p)
        mean[p] /= (double)g.m;
    for (size_t i = 0; i < g.count; ++i) {
        double d = fakegpu::load(a.x, a.xd.type, xo[i]) - mean[g.param(i)];
        var[g.param(i)] += d * d;
    }
    for (size_t p = 0; p < P; ++p)
        inv[p] = 1.0 / sqrt(var[p] / (double)g.m + a.eps);
    return true;
}

// dBias = sum dy', dScale = sum dy' * xhat,
// dx = scale * inv / m * (m * dy' - dBias - xhat * dScale),
// where dy' = dy, or with BN_ACTIVATION dy masked by the forward's ReLU: the
// reserve space's bit AND y > 0 (the bit is cuDNN's own record; y > 0 is
// the mask the backend's unfused tiers use, and reading y makes a wrong y
// pointer show).  The sums live in the workspace.
void bn_bwd(const BnBwd &a)
{
    const BnGeo &g = a.g;
    const size_t P = g.params;
    std::vector<double> mean(P), inv(P);
    if (!bn_bwd_stats(a, mean, inv))
        return;
    std::vector<double> own;
    void *ws = a.ws;
    if (!ws) {
        own.resize(2 * P);
        ws = own.data();
    }
    std::vector<size_t> xo = offsets(a.xd), dyo = offsets(a.dyd), dxo = offsets(a.dxd);
    std::vector<size_t> po = offsets(a.pd), yo;
    const uint8_t *bits = nullptr;
    if (a.act) {
        yo = offsets(a.yd);
        bits = rs_bits(const_cast<void *>(a.rs), g);
    }
    auto dy_of = [&](size_t i) -> double {
        double d = fakegpu::load(a.dy, a.dyd.type, dyo[i]);
        if (a.act && !((bits[i / 8] >> (i % 8) & 1) && fakegpu::load(a.y, a.yd.type, yo[i]) > 0))
            d = 0.0;
        return d;
    };
    for (size_t p = 0; p < 2 * P; ++p)
        ws_put(ws, p, 0.0);
    for (size_t i = 0; i < g.count; ++i) {
        size_t p = g.param(i);
        double d = dy_of(i), xh = (fakegpu::load(a.x, a.xd.type, xo[i]) - mean[p]) * inv[p];
        ws_put(ws, p, ws_get(ws, p) + d);
        ws_put(ws, P + p, ws_get(ws, P + p) + d * xh);
    }
    for (size_t i = 0; i < g.count; ++i) {
        size_t p = g.param(i);
        double d = dy_of(i), xh = (fakegpu::load(a.x, a.xd.type, xo[i]) - mean[p]) * inv[p];
        double sc = fakegpu::load(a.scale, CUDNN_DATA_FLOAT, po[p]);
        double v = sc * inv[p] / (double)g.m *
                   ((double)g.m * d - ws_get(ws, p) - xh * ws_get(ws, P + p));
        fakegpu::blend(a.dx, a.dxd.type, dxo[i], a.ad, a.bd, (float)v);
    }
    for (size_t p = 0; p < P; ++p) {
        fakegpu::blend(a.dscale, CUDNN_DATA_FLOAT, po[p], a.ap, a.bp, (float)ws_get(ws, P + p));
        fakegpu::blend(a.dbias, CUDNN_DATA_FLOAT, po[p], a.ap, a.bp, (float)ws_get(ws, p));
    }
}

// the checks every training forward shares (plain and Ex)
cudnnStatus_t bn_fwd_check(cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha,
                           const void *beta, const Tensor *xd, const void *x, const Tensor *yd,
                           const void *y, const Tensor *pd, const void *scale, const void *bias,
                           const void *rmean, const void *rvar, double eps, const void *smean,
                           const void *sinv)
{
    if (!h || !bn_mode_ok(mode) || !alpha || !beta || !x || !y || !scale || !bias)
        return BAD;
    cudnnStatus_t st = bn_data(xd, {yd});
    if (st != OK)
        return st;
    if (bn_param(pd, *xd, mode) != OK || one_null(rmean, rvar) || one_null(smean, sinv) ||
        !(eps >= CUDNN_BN_MIN_EPSILON))
        return BAD;
    return OK;
}

cudnnStatus_t bn_bwd_check(cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *ad,
                           const void *bd, const void *ap, const void *bp, const Tensor *xd,
                           const void *x, const Tensor *dyd, const void *dy, const Tensor *dxd,
                           const void *dx, const Tensor *pd, const void *scale,
                           const void *dscale, const void *dbias, double eps, const void *smean,
                           const void *sinv)
{
    if (!h || !bn_mode_ok(mode) || !ad || !bd || !ap || !bp || !x || !dy || !dx || !scale ||
        !dscale || !dbias)
        return BAD;
    cudnnStatus_t st = bn_data(xd, {dyd, dxd});
    if (st != OK)
        return st;
    if (bn_param(pd, *xd, mode) != OK || one_null(smean, sinv) || !(eps >= CUDNN_BN_MIN_EPSILON))
        return BAD;
    return OK;
}

// the plain calls' arguments (checked), copied; the Ex calls add theirs
BnFwd bn_fwd_args(cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
                  const Tensor *xd, const void *x, const Tensor *yd, void *y, const Tensor *pd,
                  const void *scale, const void *bias, double factor, void *rmean, void *rvar,
                  double eps, void *smean, void *sinv)
{
    BnFwd a;
    a.g = BnGeo(*xd, mode);
    a.alpha = host_scalar(alpha);
    a.beta = host_scalar(beta);
    a.xd = *xd;
    a.yd = *yd;
    a.pd = *pd;
    a.x = x;
    a.y = y;
    a.scale = scale;
    a.bias = bias;
    a.factor = factor;
    a.rmean = rmean;
    a.rvar = rvar;
    a.eps = eps;
    a.smean = smean;
    a.sinv = sinv;
    return a;
}

BnBwd bn_bwd_args(cudnnBatchNormMode_t mode, const void *ad, const void *bd, const void *ap,
                  const void *bp, const Tensor *xd, const void *x, const Tensor *dyd,
                  const void *dy, const Tensor *dxd, void *dx, const Tensor *pd,
                  const void *scale, void *dscale, void *dbias, double eps, const void *smean,
                  const void *sinv)
{
    BnBwd a;
    a.g = BnGeo(*xd, mode);
    a.ad = host_scalar(ad);
    a.bd = host_scalar(bd);
    a.ap = host_scalar(ap);
    a.bp = host_scalar(bp);
    a.xd = *xd;
    a.dyd = *dyd;
    a.dxd = *dxd;
    a.pd = *pd;
    a.x = x;
    a.dy = dy;
    a.dx = dx;
    a.scale = scale;
    a.dscale = dscale;
    a.dbias = dbias;
    a.eps = eps;
    a.smean = smean;
    a.sinv = sinv;
    return a;
}

// ---- LRN and softmax: shared shape checks -------------------------------------

// x-like tensors for LRN and softmax: set, same dims and type, 3..5 dims
// (fewer: BAD_PARAM; more: NOT_SUPPORTED), a data type computed here.
cudnnStatus_t nd_data(const Tensor *x, std::initializer_list<const Tensor *> others, int min_nb)
{
    if (!set(x) || x->nb < min_nb)
        return BAD;
    for (const Tensor *o : others)
        if (!set(o) || !same_shape(*x, *o))
            return BAD;
    if (x->nb > 5)
        return UNSUPPORTED;
    if (!computable(x->type))
        return x->type == CUDNN_DATA_DOUBLE ? UNSUPPORTED : BAD;
    return OK;
}

bool lrn_params_ok(unsigned n, double beta, double k)
{
    return n >= CUDNN_LRN_MIN_N && n <= CUDNN_LRN_MAX_N && k >= CUDNN_LRN_MIN_K &&
           beta >= CUDNN_LRN_MIN_BETA;
}

// the channel window of c: [c - floor((n-1)/2), c + floor(n/2)], clipped
struct LrnWin {
    int behind, ahead;
    explicit LrnWin(unsigned n) : behind((int)(n - 1) / 2), ahead((int)n / 2) {}
};

// k + alpha/n * sum of x^2 over each channel's window, for one (n, s) column
void lrn_scale(const cudnnLRNStruct &d, const std::vector<double> &x, std::vector<double> &sc)
{
    LrnWin w(d.n);
    int C = (int)x.size();
    for (int c = 0; c < C; ++c) {
        double sum = 0;
        for (int j = std::max(0, c - w.behind); j <= std::min(C - 1, c + w.ahead); ++j)
            sum += x[j] * x[j];
        sc[c] = d.k + d.alpha / d.n * sum;
    }
}

bool softmax_args_ok(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode)
{
    return (algo == CUDNN_SOFTMAX_FAST || algo == CUDNN_SOFTMAX_ACCURATE ||
            algo == CUDNN_SOFTMAX_LOG) &&
           (mode == CUDNN_SOFTMAX_MODE_INSTANCE || mode == CUDNN_SOFTMAX_MODE_CHANNEL);
}

// Softmax groups: CHANNEL, one per (n, spatial position) over C; INSTANCE,
// one per n over C*S.  index(g, k) is the logical index of member k.
struct SoftmaxGroups {
    size_t n, c, s;
    bool channel;
    SoftmaxGroups(const Tensor &d, cudnnSoftmaxMode_t mode)
        : n((size_t)d.dim[0]), c((size_t)d.dim[1]), s(spatial_of(d)),
          channel(mode == CUDNN_SOFTMAX_MODE_CHANNEL)
    {
    }
    size_t groups() const { return channel ? n * s : n; }
    size_t size() const { return channel ? c : c * s; }
    size_t index(size_t g, size_t k) const
    {
        return channel ? ((g / s) * c + k) * s + g % s : g * c * s + k;
    }
};

} // namespace

extern "C" {

// ---- activation descriptor ----------------------------------------------------

// Created with no valid mode, so a descriptor used before
// cudnnSetActivationDescriptor is refused by every check of the mode.  One
// past the last enumerator: still a value of the enum's type (-1 is not;
// UBSan reports loading it).
const cudnnActivationMode_t ACT_UNSET = (cudnnActivationMode_t)(CUDNN_ACTIVATION_SWISH + 1);

cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *activationDesc)
{
    return fakegpu::new_descriptor(__func__, activationDesc,
                                   cudnnActivationStruct{ACT_UNSET, CUDNN_NOT_PROPAGATE_NAN, 0.0});
}

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t activationDesc,
                                           cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t reluNanOpt, double coef)
{
    if (!activationDesc || (int)mode < CUDNN_ACTIVATION_SIGMOID ||
        (int)mode > CUDNN_ACTIVATION_SWISH ||
        (reluNanOpt != CUDNN_NOT_PROPAGATE_NAN && reluNanOpt != CUDNN_PROPAGATE_NAN))
        return BAD;
    activationDesc->mode = mode;
    activationDesc->nan = reluNanOpt;
    activationDesc->coef = coef;
    return OK;
}

cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t activationDesc)
{
    delete activationDesc; // NULL is fine, as with cuDNN's destroy calls
    return OK;
}

// ---- batch normalization --------------------------------------------------------

// 1xCx1x1 (SPATIAL, SPATIAL_PERSISTENT) or 1xCxHxW (PER_ACTIVATION), packed;
// FLOAT for HALF, BFLOAT16 and FLOAT data, DOUBLE for DOUBLE.
cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derivedBnDesc,
                                            const cudnnTensorDescriptor_t xDesc,
                                            cudnnBatchNormMode_t mode)
{
    if (!derivedBnDesc || !set(xDesc) || xDesc->nb < 4 || xDesc->nb > 5 || !bn_mode_ok(mode))
        return BAD;
    if (!computable(xDesc->type) && xDesc->type != CUDNN_DATA_DOUBLE)
        return BAD;
    Tensor d = {};
    d.type = xDesc->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    d.nb = xDesc->nb;
    for (int k = 0; k < d.nb; ++k)
        d.dim[k] = k == 1 || (k > 1 && mode == CUDNN_BATCHNORM_PER_ACTIVATION) ? xDesc->dim[k] : 1;
    int stride = 1;
    for (int k = d.nb - 1; k >= 0; --k) {
        d.stride[k] = stride;
        stride *= d.dim[k];
    }
    *derivedBnDesc = d;
    return OK;
}

cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc,
    void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean,
    void *resultSaveInvVariance)
{
    cudnnStatus_t st = bn_fwd_check(handle, mode, alpha, beta, xDesc, x, yDesc, y,
                                    bnScaleBiasMeanVarDesc, bnScale, bnBias, resultRunningMean,
                                    resultRunningVariance, epsilon, resultSaveMean,
                                    resultSaveInvVariance);
    if (st != OK)
        return st;
    BnFwd a = bn_fwd_args(mode, alpha, beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc,
                          bnScale, bnBias, exponentialAverageFactor, resultRunningMean,
                          resultRunningVariance, epsilon, resultSaveMean, resultSaveInvVariance);
    fakegpu::submit(handle->stream, [a]() { bn_fwd_train(a); });
    return OK;
}

// y = alpha * (scale * (x - estimatedMean) / sqrt(estimatedVariance + eps) + bias)
//     + beta * y
cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc,
    void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, const void *estimatedMean, const void *estimatedVariance,
    double epsilon)
{
    if (!handle || !bn_mode_ok(mode) || !alpha || !beta || !x || !y || !bnScale || !bnBias ||
        !estimatedMean || !estimatedVariance)
        return BAD;
    cudnnStatus_t st = bn_data(xDesc, {yDesc});
    if (st != OK)
        return st;
    if (bn_param(bnScaleBiasMeanVarDesc, *xDesc, mode) != OK || !(epsilon >= CUDNN_BN_MIN_EPSILON))
        return BAD;
    BnGeo g(*xDesc, mode);
    Tensor xd = *xDesc, yd = *yDesc, pd = *bnScaleBiasMeanVarDesc;
    float al = host_scalar(alpha), be = host_scalar(beta);
    fakegpu::submit(handle->stream, [=]() {
        std::vector<size_t> xo = offsets(xd), yo = offsets(yd), po = offsets(pd);
        for (size_t i = 0; i < g.count; ++i) {
            size_t p = po[g.param(i)];
            double v = fakegpu::load(bnScale, CUDNN_DATA_FLOAT, p) *
                           (fakegpu::load(x, xd.type, xo[i]) -
                            fakegpu::load(estimatedMean, CUDNN_DATA_FLOAT, p)) /
                           sqrt(fakegpu::load(estimatedVariance, CUDNN_DATA_FLOAT, p) + epsilon) +
                       fakegpu::load(bnBias, CUDNN_DATA_FLOAT, p);
            fakegpu::blend(y, yd.type, yo[i], al, be, (float)v);
        }
    });
    return OK;
}

cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alphaDataDiff,
    const void *betaDataDiff, const void *alphaParamDiff, const void *betaParamDiff,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t dyDesc,
    const void *dy, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale, void *dBnScaleResult,
    void *dBnBiasResult, double epsilon, const void *savedMean, const void *savedInvVariance)
{
    cudnnStatus_t st = bn_bwd_check(handle, mode, alphaDataDiff, betaDataDiff, alphaParamDiff,
                                    betaParamDiff, xDesc, x, dyDesc, dy, dxDesc, dx,
                                    dBnScaleBiasDesc, bnScale, dBnScaleResult, dBnBiasResult,
                                    epsilon, savedMean, savedInvVariance);
    if (st != OK)
        return st;
    BnBwd a = bn_bwd_args(mode, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc,
                          x, dyDesc, dy, dxDesc, dx, dBnScaleBiasDesc, bnScale, dBnScaleResult,
                          dBnBiasResult, epsilon, savedMean, savedInvVariance);
    fakegpu::submit(handle->stream, [a]() { bn_bwd(a); });
    return OK;
}

// Size queries answer for the configurations the calls accept and refuse the
// others the same way, so the backend's setup sees cuDNN's refusals there.
// zDesc / yDesc / dzDesc are ignored unless the ops need them: PyTorch (and
// the backend) pass x's descriptor for all of them with bnOps BN.
cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t zDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes)
{
    (void)zDesc;
    if (!handle || !sizeInBytes || !bn_mode_ok(mode))
        return BAD;
    cudnnStatus_t st = bn_data(xDesc, {yDesc});
    if (st == OK && bn_param(bnScaleBiasMeanVarDesc, *xDesc, mode) != OK)
        st = BAD;
    if (st == OK)
        st = ex_ops(mode, bnOps, activationDesc, {xDesc, yDesc});
    if (st != OK)
        return st;
    *sizeInBytes = ex_workspace(BnGeo(*xDesc, mode));
    return OK;
}

cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes)
{
    (void)dzDesc;
    if (!handle || !sizeInBytes || !bn_mode_ok(mode))
        return BAD;
    bool act = bnOps == CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    if (act && !yDesc)
        return BAD;
    cudnnStatus_t st =
        act ? bn_data(xDesc, {yDesc, dyDesc, dxDesc}) : bn_data(xDesc, {dyDesc, dxDesc});
    if (st == OK && bn_param(dBnScaleBiasDesc, *xDesc, mode) != OK)
        st = BAD;
    if (st == OK)
        st = ex_ops(mode, bnOps, activationDesc, {xDesc, act ? yDesc : nullptr, dyDesc, dxDesc});
    if (st != OK)
        return st;
    *sizeInBytes = ex_workspace(BnGeo(*xDesc, mode));
    return OK;
}

cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t xDesc,
    size_t *sizeInBytes)
{
    if (!handle || !sizeInBytes || !bn_mode_ok(mode))
        return BAD;
    cudnnStatus_t st = bn_data(xDesc, {});
    if (st == OK)
        st = ex_ops(mode, bnOps, activationDesc, {xDesc});
    if (st != OK)
        return st;
    *sizeInBytes = ex_reserve(BnGeo(*xDesc, mode), bnOps == CUDNN_BATCHNORM_OPS_BN_ACTIVATION);
    return OK;
}

// Ex forward: as the plain call, plus bnOps.  zDesc/zData must be NULL
// unless BN_ADD_ACTIVATION (cuDNN says they are "only used" then; refusing
// them is stricter, so a backend that thinks it adds z learns it does not).
// The workspace must hold what the query says; NULL with size 0 is cuDNN's
// documented fallback to the non-extended path, accepted for bnOps BN only
// (the fused ReLU is the persistent kernel, which needs it).  The reserve
// space is required, at least the queried size.
cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alpha,
    const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t zDesc, const void *zData, const cudnnTensorDescriptor_t yDesc,
    void *yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean,
    void *resultSaveInvVariance, cudnnActivationDescriptor_t activationDesc, void *workspace,
    size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    cudnnStatus_t st = bn_fwd_check(handle, mode, alpha, beta, xDesc, xData, yDesc, yData,
                                    bnScaleBiasMeanVarDesc, bnScale, bnBias, resultRunningMean,
                                    resultRunningVariance, epsilon, resultSaveMean,
                                    resultSaveInvVariance);
    if (st != OK)
        return st;
    if (bnOps != CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && (zDesc || zData))
        return BAD;
    st = ex_ops(mode, bnOps, activationDesc, {xDesc, yDesc});
    if (st != OK)
        return st;
    bool act = bnOps == CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    BnGeo g(*xDesc, mode);
    bool fallback = !act && !workspace && workSpaceSizeInBytes == 0;
    if (!fallback && (!workspace || workSpaceSizeInBytes < ex_workspace(g)))
        return BAD;
    if (!reserveSpace || reserveSpaceSizeInBytes < ex_reserve(g, act))
        return BAD;
    BnFwd a = bn_fwd_args(mode, alpha, beta, xDesc, xData, yDesc, yData, bnScaleBiasMeanVarDesc,
                          bnScale, bnBias, exponentialAverageFactor, resultRunningMean,
                          resultRunningVariance, epsilon, resultSaveMean, resultSaveInvVariance);
    a.act = act;
    a.nan_prop = act && activationDesc->nan == CUDNN_PROPAGATE_NAN;
    a.ops = bnOps;
    a.ws = fallback ? nullptr : workspace;
    a.rs = reserveSpace;
    fakegpu::submit(handle->stream, [a]() { bn_fwd_train(a); });
    return OK;
}

// Ex backward: the reserve space is required and read (statistics, ReLU
// mask); BN_ACTIVATION also needs y (yDesc/yData) and the bias (cuDNN: "needed
// if there is activation"); dzDesc/dzData NULL unless BN_ADD_ACTIVATION.
cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const void *alphaDataDiff, const void *betaDataDiff, const void *alphaParamDiff,
    const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t yDesc, const void *yData, const cudnnTensorDescriptor_t dyDesc,
    const void *dyData, const cudnnTensorDescriptor_t dzDesc, void *dzData,
    const cudnnTensorDescriptor_t dxDesc, void *dxData,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScaleData,
    const void *bnBiasData, void *dBnScaleData, void *dBnBiasData, double epsilon,
    const void *savedMean, const void *savedInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workSpace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    cudnnStatus_t st = bn_bwd_check(handle, mode, alphaDataDiff, betaDataDiff, alphaParamDiff,
                                    betaParamDiff, xDesc, xData, dyDesc, dyData, dxDesc, dxData,
                                    dBnScaleBiasDesc, bnScaleData, dBnScaleData, dBnBiasData,
                                    epsilon, savedMean, savedInvVariance);
    if (st != OK)
        return st;
    bool act = bnOps == CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    if (bnOps != CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && (dzDesc || dzData))
        return BAD;
    if (act && (!yData || !bnBiasData || bn_data(xDesc, {yDesc}) != OK))
        return BAD;
    st = ex_ops(mode, bnOps, activationDesc, {xDesc, act ? yDesc : nullptr, dyDesc, dxDesc});
    if (st != OK)
        return st;
    BnGeo g(*xDesc, mode);
    bool fallback = !act && !workSpace && workSpaceSizeInBytes == 0;
    if (!fallback && (!workSpace || workSpaceSizeInBytes < ex_workspace(g)))
        return BAD;
    if (!reserveSpace || reserveSpaceSizeInBytes < ex_reserve(g, act))
        return BAD;
    BnBwd a = bn_bwd_args(mode, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc,
                          xData, dyDesc, dyData, dxDesc, dxData, dBnScaleBiasDesc, bnScaleData,
                          dBnScaleData, dBnBiasData, epsilon, savedMean, savedInvVariance);
    a.act = act;
    a.ex = true;
    if (act) {
        a.yd = *yDesc;
        a.y = yData;
    }
    a.ws = fallback ? nullptr : workSpace;
    a.rs = reserveSpace;
    fakegpu::submit(handle->stream, [a]() { bn_bwd(a); });
    return OK;
}

// ---- LRN across channels ----------------------------------------------------------

// cuDNN's defaults (Krizhevsky et al. 2012, as cudnn_ops.h says)
cudnnStatus_t cudnnCreateLRNDescriptor(cudnnLRNDescriptor_t *normDesc)
{
    return fakegpu::new_descriptor(__func__, normDesc, cudnnLRNStruct{5, 1e-4, 0.75, 2.0});
}

cudnnStatus_t cudnnSetLRNDescriptor(cudnnLRNDescriptor_t normDesc, unsigned lrnN,
                                    double lrnAlpha, double lrnBeta, double lrnK)
{
    if (!normDesc || !lrn_params_ok(lrnN, lrnBeta, lrnK))
        return BAD;
    *normDesc = cudnnLRNStruct{lrnN, lrnAlpha, lrnBeta, lrnK};
    return OK;
}

cudnnStatus_t cudnnDestroyLRNDescriptor(cudnnLRNDescriptor_t lrnDesc)
{
    delete lrnDesc;
    return OK;
}

// y = x / (k + alpha/n * sum_window x^2)^beta, blended: alpha * that + beta * y
cudnnStatus_t cudnnLRNCrossChannelForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                          cudnnLRNMode_t lrnMode, const void *alpha,
                                          const cudnnTensorDescriptor_t xDesc, const void *x,
                                          const void *beta, const cudnnTensorDescriptor_t yDesc,
                                          void *y)
{
    if (!handle || !normDesc || lrnMode != CUDNN_LRN_CROSS_CHANNEL_DIM1 || !alpha || !beta ||
        !x || !y)
        return BAD;
    cudnnStatus_t st = nd_data(xDesc, {yDesc}, 3);
    if (st != OK)
        return st;
    if (!lrn_params_ok(normDesc->n, normDesc->beta, normDesc->k))
        return BAD;
    cudnnLRNStruct d = *normDesc;
    Tensor xd = *xDesc, yd = *yDesc;
    float al = host_scalar(alpha), be = host_scalar(beta);
    fakegpu::submit(handle->stream, [=]() {
        std::vector<size_t> xo = offsets(xd), yo = offsets(yd);
        size_t N = (size_t)xd.dim[0], C = (size_t)xd.dim[1], S = spatial_of(xd);
        std::vector<double> col(C), sc(C);
        for (size_t n = 0; n < N; ++n)
            for (size_t s = 0; s < S; ++s) {
                for (size_t c = 0; c < C; ++c)
                    col[c] = fakegpu::load(x, xd.type, xo[(n * C + c) * S + s]);
                lrn_scale(d, col, sc);
                for (size_t c = 0; c < C; ++c)
                    fakegpu::blend(y, yd.type, yo[(n * C + c) * S + s], al, be,
                                   (float)(col[c] * pow(sc[c], -d.beta)));
            }
    });
    return OK;
}

// dx_i = dy_i * scale_i^-beta
//        - 2 * alpha * beta / n * x_i * sum_{j: i in window(j)} dy_j * y_j / scale_j
// (the derivative of the forward; scale from x, y as given, as cuDNN reads it)
cudnnStatus_t cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                           cudnnLRNMode_t lrnMode, const void *alpha,
                                           const cudnnTensorDescriptor_t yDesc, const void *y,
                                           const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                           const cudnnTensorDescriptor_t xDesc, const void *x,
                                           const void *beta, const cudnnTensorDescriptor_t dxDesc,
                                           void *dx)
{
    if (!handle || !normDesc || lrnMode != CUDNN_LRN_CROSS_CHANNEL_DIM1 || !alpha || !beta ||
        !y || !dy || !x || !dx)
        return BAD;
    cudnnStatus_t st = nd_data(xDesc, {yDesc, dyDesc, dxDesc}, 3);
    if (st != OK)
        return st;
    if (!lrn_params_ok(normDesc->n, normDesc->beta, normDesc->k))
        return BAD;
    cudnnLRNStruct d = *normDesc;
    Tensor xd = *xDesc, yd = *yDesc, dyd = *dyDesc, dxd = *dxDesc;
    float al = host_scalar(alpha), be = host_scalar(beta);
    fakegpu::submit(handle->stream, [=]() {
        std::vector<size_t> xo = offsets(xd), yo = offsets(yd), dyo = offsets(dyd);
        std::vector<size_t> dxo = offsets(dxd);
        size_t N = (size_t)xd.dim[0], C = (size_t)xd.dim[1], S = spatial_of(xd);
        std::vector<double> xc(C), sc(C), t(C), out(C);
        LrnWin w(d.n);
        int Ci = (int)C;
        for (size_t n = 0; n < N; ++n)
            for (size_t s = 0; s < S; ++s) {
                for (size_t c = 0; c < C; ++c)
                    xc[c] = fakegpu::load(x, xd.type, xo[(n * C + c) * S + s]);
                lrn_scale(d, xc, sc);
                for (size_t c = 0; c < C; ++c) {
                    size_t i = (n * C + c) * S + s;
                    t[c] = fakegpu::load(dy, dyd.type, dyo[i]) *
                           fakegpu::load(y, yd.type, yo[i]) / sc[c];
                }
                // all reads of this column happen before its writes: dx may
                // be dy (in place)
                for (int c = 0; c < Ci; ++c) {
                    double sum = 0;
                    for (int j = std::max(0, c - w.ahead); j <= std::min(Ci - 1, c + w.behind);
                         ++j)
                        sum += t[j];
                    size_t i = (n * C + (size_t)c) * S + s;
                    out[c] = fakegpu::load(dy, dyd.type, dyo[i]) * pow(sc[c], -d.beta) -
                             2.0 * d.alpha * d.beta / d.n * xc[c] * sum;
                }
                for (size_t c = 0; c < C; ++c)
                    fakegpu::blend(dx, dxd.type, dxo[(n * C + c) * S + s], al, be, (float)out[c]);
            }
    });
    return OK;
}

// ---- softmax ----------------------------------------------------------------------

// FAST and ACCURATE: the same max-subtracted softmax; LOG: its logarithm,
// x - max - log(sum exp(x - max)).  Each group is read whole before it is
// written, so y may be x.
cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                  cudnnSoftmaxMode_t mode, const void *alpha,
                                  const cudnnTensorDescriptor_t xDesc, const void *x,
                                  const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    if (!handle || !softmax_args_ok(algo, mode) || !alpha || !beta || !x || !y)
        return BAD;
    cudnnStatus_t st = nd_data(xDesc, {yDesc}, 4);
    if (st != OK)
        return st;
    Tensor xd = *xDesc, yd = *yDesc;
    float al = host_scalar(alpha), be = host_scalar(beta);
    fakegpu::submit(handle->stream, [=]() {
        std::vector<size_t> xo = offsets(xd), yo = offsets(yd);
        SoftmaxGroups gr(xd, mode);
        std::vector<double> v(gr.size());
        for (size_t g = 0; g < gr.groups(); ++g) {
            double mx = -INFINITY, sum = 0;
            for (size_t k = 0; k < v.size(); ++k) {
                v[k] = fakegpu::load(x, xd.type, xo[gr.index(g, k)]);
                mx = std::max(mx, v[k]);
            }
            for (double e : v)
                sum += exp(e - mx);
            for (size_t k = 0; k < v.size(); ++k) {
                double r = algo == CUDNN_SOFTMAX_LOG ? v[k] - mx - log(sum) : exp(v[k] - mx) / sum;
                fakegpu::blend(y, yd.type, yo[gr.index(g, k)], al, be, (float)r);
            }
        }
    });
    return OK;
}

// dx = y * (dy - sum(dy * y)); LOG (y = log softmax): dx = dy - exp(y) * sum(dy)
cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                   cudnnSoftmaxMode_t mode, const void *alpha,
                                   const cudnnTensorDescriptor_t yDesc, const void *y,
                                   const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                   const void *beta, const cudnnTensorDescriptor_t dxDesc,
                                   void *dx)
{
    if (!handle || !softmax_args_ok(algo, mode) || !alpha || !beta || !y || !dy || !dx)
        return BAD;
    cudnnStatus_t st = nd_data(yDesc, {dyDesc, dxDesc}, 4);
    if (st != OK)
        return st;
    Tensor yd = *yDesc, dyd = *dyDesc, dxd = *dxDesc;
    float al = host_scalar(alpha), be = host_scalar(beta);
    fakegpu::submit(handle->stream, [=]() {
        std::vector<size_t> yo = offsets(yd), dyo = offsets(dyd), dxo = offsets(dxd);
        SoftmaxGroups gr(yd, mode);
        std::vector<double> yv(gr.size()), dv(gr.size());
        for (size_t g = 0; g < gr.groups(); ++g) {
            double sum = 0;
            for (size_t k = 0; k < yv.size(); ++k) {
                size_t i = gr.index(g, k);
                yv[k] = fakegpu::load(y, yd.type, yo[i]);
                dv[k] = fakegpu::load(dy, dyd.type, dyo[i]);
                sum += algo == CUDNN_SOFTMAX_LOG ? dv[k] : dv[k] * yv[k];
            }
            for (size_t k = 0; k < yv.size(); ++k) {
                double r = algo == CUDNN_SOFTMAX_LOG ? dv[k] - exp(yv[k]) * sum
                                                     : yv[k] * (dv[k] - sum);
                fakegpu::blend(dx, dxd.type, dxo[gr.index(g, k)], al, be, (float)r);
            }
        }
    });
    return OK;
}

} // extern "C"
