/* Layer semantics that do not depend on a backend: output shapes,
 * parameter shapes and fillers, parameter and multiply-add counts. */
#include "net.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[DLG_L_NTYPES] = {
    "input",   "conv",   "pool", "lrn",     "relu",         "batchnorm", "fc",
    "dropout", "concat", "add",  "softmax", "softmax_loss", "split",
    "embedding", "lstm"};

const char *dlg_layer_type_name(dlg_layer_type t)
{
    return (unsigned)t < DLG_L_NTYPES ? type_names[t] : "?";
}

static int add_top(dlg_net *net, dlg_node *n, const char *name, dlg_shape s)
{
    int id = dlg_net_add_blob(net, name, &s);
    if (id < 0)
        return id;
    net->blobs[id].producer = (int)(n - net->nodes);
    n->tops = malloc(sizeof(int));
    if (!n->tops)
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory in layer '%s'", name);
    n->tops[0] = id;
    n->l.ntop = 1;
    return 0;
}

static int add_param(dlg_net *net, dlg_node *n, dlg_shape s, dlg_filler f, int64_t fan_in,
                     float lr_mult, float decay_mult, bool counted)
{
    char name[300];
    int idx = n->l.nparam;
    snprintf(name, sizeof name, "%s/param%d", n->l.name, idx);
    int id = dlg_net_add_blob(net, name, &s);
    if (id < 0)
        return id;
    dlg_blob *b = &net->blobs[id];
    b->is_param = true;
    b->fill = f;
    b->fan_in = fan_in;
    b->lr_mult = lr_mult;
    b->decay_mult = decay_mult;
    n->params[idx] = id;
    n->l.nparam = idx + 1;
    b->is_state = !counted;
    if (counted)
        n->nparams += dlg_shape_count(&s);
    return 0;
}

/* n->macs = a * b, or a builder error when that overflows. */
static int set_macs(dlg_net *net, dlg_node *n, int64_t a, int64_t b)
{
    if (!dlg_mul_ok(a, b, &n->macs))
        return dlg_net_fail(net, DLG_EINVAL, "nn: layer '%s': multiply-adds overflow int64",
                            n->l.name);
    return 0;
}

static int need4d(dlg_net *net, const dlg_node *n, const dlg_shape *s)
{
    if (s->ndim != 4)
        return dlg_net_fail(net, DLG_EINVAL, "nn: layer '%s' (%s) needs a 4-d NCHW input, got %d-d",
                            n->l.name, dlg_layer_type_name(n->l.type), s->ndim);
    return 0;
}

static int infer_conv(dlg_net *net, dlg_node *n, const dlg_shape *x)
{
    dlg_conv_param *c = &n->l.p.conv;
    int64_t out = n->nparams;
    n->nparams = 0;
    if (need4d(net, n, x) < 0)
        return net->err;
    if (c->kh < 1 || c->kw < 1 || c->sh < 1 || c->sw < 1 || c->ph < 0 || c->pw < 0 || c->dh < 1 ||
        c->dw < 1 || c->groups < 1 || out < 1)
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: conv '%s': kernel, stride, dilation, groups and outputs must be "
                            "positive and pad non-negative",
                            n->l.name);
    if (x->d[1] % c->groups || out % c->groups)
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: conv '%s': %lld input and %lld output channels are not divisible "
                            "by %d groups",
                            n->l.name, (long long)x->d[1], (long long)out, c->groups);
    int64_t ekh = (int64_t)c->dh * (c->kh - 1) + 1, ekw = (int64_t)c->dw * (c->kw - 1) + 1;
    /* in int64: twice a pad above INT_MAX / 2 overflowed int */
    int64_t hp = x->d[2] + 2 * (int64_t)c->ph, wp = x->d[3] + 2 * (int64_t)c->pw;
    int64_t ho = (hp - ekh) / c->sh + 1, wo = (wp - ekw) / c->sw + 1;
    if (hp < ekh || wp < ekw)
        return dlg_net_fail(net, DLG_EINVAL, "nn: conv '%s': kernel larger than padded input",
                            n->l.name);
    int rc = add_top(net, n, n->l.name, dlg_shape4(x->d[0], out, ho, wo));
    int64_t cin = x->d[1] / c->groups;
    int64_t fan_in;
    if (!dlg_mul_ok(cin, (int64_t)c->kh * c->kw, &fan_in))
        fan_in = INT64_MAX; /* the weight blob below is then refused as too large */
    if (!rc)
        rc = add_param(net, n, dlg_shape4(out, cin, c->kh, c->kw), net->wfill, fan_in, 1, 1, true);
    if (!rc && c->bias) {
        dlg_shape bs = {1, {out, 1, 1, 1, 1}};
        rc = add_param(net, n, bs, net->bfill, fan_in, 2, 0, true);
    }
    return rc ? rc : set_macs(net, n, out * ho * wo, fan_in);
}

/* Pooling output size.  Floor mode (PyTorch, MXNet 'valid'): every
 * window lies inside the padded input, and with pad < kernel none lies
 * wholly in the padding, so nothing needs clipping.  Caffe's ceil mode
 * lets the last window start inside: Caffe drops one that starts in the
 * padding only when there is padding; with a stride above the kernel and
 * none, one can start past the input and cover nothing (-inf max, 0/0
 * average), so it goes too. */
static int64_t pool_out(int64_t in, int k, int s, int p, bool floor)
{
    if (floor)
        return (in + 2 * (int64_t)p - k) / s + 1;
    int64_t o = (in + 2 * (int64_t)p - k + s - 1) / s + 1;
    if ((o - 1) * s >= in + p)
        o--;
    return o;
}

static int infer_pool(dlg_net *net, dlg_node *n, const dlg_shape *x)
{
    dlg_pool_param *p = &n->l.p.pool;
    if (need4d(net, n, x) < 0)
        return net->err;
    if (p->global) {
        /* the window is int: a larger extent must not wrap to a small one */
        if (x->d[2] > INT_MAX || x->d[3] > INT_MAX)
            return dlg_net_fail(net, DLG_EINVAL,
                                "nn: pool '%s': global pooling over %lld x %lld pixels (at most "
                                "%d each way)",
                                n->l.name, (long long)x->d[2], (long long)x->d[3], INT_MAX);
        p->kh = (int)x->d[2];
        p->kw = (int)x->d[3];
    }
    if (p->kh < 1 || p->kw < 1 || p->sh < 1 || p->sw < 1 || p->ph < 0 || p->pw < 0 ||
        p->ph >= p->kh || p->pw >= p->kw || x->d[2] + 2 * (int64_t)p->ph < p->kh ||
        x->d[3] + 2 * (int64_t)p->pw < p->kw)
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: pool '%s': need kernel, stride >= 1, 0 <= pad < kernel and "
                            "kernel <= padded input",
                            n->l.name);
    return add_top(net, n, n->l.name,
                   dlg_shape4(x->d[0], x->d[1], pool_out(x->d[2], p->kh, p->sh, p->ph, p->floor),
                              pool_out(x->d[3], p->kw, p->sw, p->pw, p->floor)));
}

static int infer_fc(dlg_net *net, dlg_node *n, const dlg_shape *x)
{
    int64_t out = n->nparams, in = dlg_shape_inner(x);
    n->nparams = 0;
    if (out < 1)
        return dlg_net_fail(net, DLG_EINVAL, "nn: fc '%s': outputs must be positive", n->l.name);
    int rc = add_top(net, n, n->l.name, dlg_shape4(x->d[0], out, 1, 1));
    if (!rc)
        rc = add_param(net, n, dlg_shape4(out, in, 1, 1), net->wfill, in, 1, 1, true);
    dlg_shape bs = {1, {out, 1, 1, 1, 1}};
    if (!rc)
        rc = add_param(net, n, bs, net->bfill, in, 2, 0, true);
    return rc ? rc : set_macs(net, n, in, out);
}

static int infer_bn(dlg_net *net, dlg_node *n, const dlg_shape *x)
{
    if (need4d(net, n, x) < 0)
        return net->err;
    if (!(n->l.p.bn.eps > 0))
        return dlg_net_fail(net, DLG_EINVAL, "nn: batchnorm '%s': eps must be > 0", n->l.name);
    dlg_shape cs = {1, {x->d[1], 1, 1, 1, 1}};
    int rc = add_top(net, n, n->l.name, *x);
    /* gamma, beta are trained (and counted, as frameworks do); the running
     * statistics are state, like Caffe's BatchNorm blobs with lr_mult 0. */
    if (!rc)
        rc = add_param(net, n, cs, (dlg_filler){DLG_FILL_CONSTANT, 1}, 1, 1, 0, true);
    if (!rc)
        rc = add_param(net, n, cs, (dlg_filler){DLG_FILL_CONSTANT, 0}, 1, 1, 0, true);
    if (!rc)
        rc = add_param(net, n, cs, (dlg_filler){DLG_FILL_CONSTANT, 0}, 1, 0, 0, false);
    if (!rc)
        rc = add_param(net, n, cs, (dlg_filler){DLG_FILL_CONSTANT, 1}, 1, 0, 0, false);
    return rc;
}

static int infer_concat(dlg_net *net, dlg_node *n)
{
    const dlg_shape *s0 = &net->blobs[n->bottoms[0]].t.shape;
    if (need4d(net, n, s0) < 0)
        return net->err;
    int64_t c = 0;
    for (int i = 0; i < n->l.nbottom; i++) {
        const dlg_shape *s = &net->blobs[n->bottoms[i]].t.shape;
        if (s->ndim != 4 || s->d[0] != s0->d[0] || s->d[2] != s0->d[2] || s->d[3] != s0->d[3])
            return dlg_net_fail(
                net, DLG_EINVAL,
                "nn: concat '%s': input %d ('%s') differs from input 0 in N, H or W", n->l.name, i,
                net->blobs[n->bottoms[i]].name);
        c += s->d[1];
    }
    return add_top(net, n, n->l.name, dlg_shape4(s0->d[0], c, s0->d[2], s0->d[3]));
}

static int infer_loss(dlg_net *net, dlg_node *n, const dlg_shape *x)
{
    int64_t ny = net->blobs[n->bottoms[1]].t.count;
    if (ny != x->d[0])
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: softmax_loss '%s': %lld labels for a batch of %lld", n->l.name,
                            (long long)ny, (long long)x->d[0]);
    dlg_shape s = {1, {3, 1, 1, 1, 1}};
    return add_top(net, n, n->l.name, s);
}

int dlg_layer_infer(dlg_net *net, dlg_node *n)
{
    /* a copy: adding the output blob may move net->blobs */
    dlg_shape xs = net->blobs[n->bottoms[0]].t.shape;
    const dlg_shape *x = &xs;
    switch (n->l.type) {
    case DLG_L_CONV:
        return infer_conv(net, n, x);
    case DLG_L_POOL:
        return infer_pool(net, n, x);
    case DLG_L_FC:
        return infer_fc(net, n, x);
    case DLG_L_BN:
        return infer_bn(net, n, x);
    case DLG_L_CONCAT:
        return infer_concat(net, n);
    case DLG_L_LOSS:
        return infer_loss(net, n, x);
    case DLG_L_LRN:
        if (need4d(net, n, x) < 0)
            return net->err;
        if (n->l.p.lrn.size < 1 || n->l.p.lrn.size % 2 == 0 || !(n->l.p.lrn.k > 0))
            return dlg_net_fail(net, DLG_EINVAL, "nn: lrn '%s': size must be odd, k > 0",
                                n->l.name);
        return add_top(net, n, n->l.name, *x);
    case DLG_L_DROPOUT:
        if (!(n->l.p.dropout_ratio >= 0 && n->l.p.dropout_ratio < 1))
            return dlg_net_fail(net, DLG_EINVAL, "nn: dropout '%s': ratio must be in [0, 1)",
                                n->l.name);
        return add_top(net, n, n->l.name, *x);
    case DLG_L_ADD: {
        dlg_shape b = net->blobs[n->bottoms[1]].t.shape;
        if (b.ndim != x->ndim || memcmp(b.d, x->d, sizeof(int64_t) * (size_t)x->ndim))
            return dlg_net_fail(net, DLG_EINVAL, "nn: add '%s': inputs differ in shape", n->l.name);
        return add_top(net, n, n->l.name, *x);
    }
    case DLG_L_RELU:
    case DLG_L_SOFTMAX:
        return add_top(net, n, n->l.name, *x);
    case DLG_L_EMBED:
    case DLG_L_LSTM:
        return dlg_layer_infer_seq(net, n);
    default:
        return dlg_net_fail(net, DLG_EINTERNAL, "nn: layer '%s': no shape rule for type %d",
                            n->l.name, (int)n->l.type);
    }
}

/* For layer files beside this one (seq.c). */
int dlg_layer_add_top(dlg_net *net, dlg_node *n, const char *name, dlg_shape s)
{
    return add_top(net, n, name, s);
}

int dlg_layer_add_param(dlg_net *net, dlg_node *n, dlg_shape s, dlg_filler f, int64_t fan_in,
                        float lr_mult, float decay_mult)
{
    return add_param(net, n, s, f, fan_in, lr_mult, decay_mult, true);
}
