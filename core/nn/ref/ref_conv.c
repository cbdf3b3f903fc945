/* Reference convolution (groups, stride, pad, dilation) and inner product. */
#include "ref.h"

#include <math.h>

typedef struct geom {
    int64_t n, c, h, w, oc, oh, ow, cin, cout; /* cin/cout: per group */
} geom;

static geom conv_geom(const dlg_layer *l)
{
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    int g = l->p.conv.groups;
    return (geom){x->d[0], x->d[1], x->d[2],     x->d[3],    y->d[1],
                  y->d[2], y->d[3], x->d[1] / g, y->d[1] / g};
}

static int conv_forward(void *ctx, dlg_layer *l, void *state)
{
    const dlg_conv_param *p = &l->p.conv;
    geom gm = conv_geom(l);
    const float *x = F(l->bottom[0]), *w = F(l->param[0]);
    const float *b = p->bias ? F(l->param[1]) : NULL;
    float *y = F(l->top[0]);
    for (int64_t n = 0; n < gm.n; n++)
        for (int64_t o = 0; o < gm.oc; o++) {
            int64_t g = o / gm.cout;
            double scale = 1, shift = 0; /* a folded batch norm, in double */
            if (p->bn) {
                const dlg_layer *bn = p->bn;
                scale = F(bn->param[0])[o] / sqrt((double)F(bn->param[3])[o] + bn->p.bn.eps);
                shift = F(bn->param[1])[o] - F(bn->param[2])[o] * scale;
            }
            for (int64_t oh = 0; oh < gm.oh; oh++)
                for (int64_t ow = 0; ow < gm.ow; ow++) {
                    double acc = b ? b[o] : 0.0;
                    for (int64_t ic = 0; ic < gm.cin; ic++)
                        for (int kh = 0; kh < p->kh; kh++) {
                            int64_t ih = oh * p->sh - p->ph + kh * p->dh;
                            if (ih < 0 || ih >= gm.h)
                                continue;
                            for (int kw = 0; kw < p->kw; kw++) {
                                int64_t iw = ow * p->sw - p->pw + kw * p->dw;
                                if (iw < 0 || iw >= gm.w)
                                    continue;
                                acc +=
                                    (double)
                                        x[((n * gm.c + g * gm.cin + ic) * gm.h + ih) * gm.w + iw] *
                                    w[((o * gm.cin + ic) * p->kh + kh) * p->kw + kw];
                            }
                        }
                    int64_t at = ((n * gm.oc + o) * gm.oh + oh) * gm.ow + ow;
                    /* the folded epilogue (dlg_conv_param), rounded to float
                     * after each stage as the unfused layers would store it */
                    float v = (float)acc;
                    if (p->bn)
                        v = (float)(scale * v + shift);
                    if (p->residual)
                        v += F(l->bottom[1])[at];
                    if (p->relu && v < 0)
                        v = 0;
                    y[at] = v;
                }
        }
    return 0;
}

/* Output index along one axis that input position i meets with kernel tap
 * k, or -1. */
static int64_t tap(int64_t i, int k, int s, int pad, int d, int64_t out)
{
    int64_t t = i + pad - (int64_t)k * d;
    if (t < 0 || t % s)
        return -1;
    return t / s < out ? t / s : -1;
}

static void conv_backward_data(const dlg_layer *l, const geom *gm)
{
    const dlg_conv_param *p = &l->p.conv;
    const float *dy = G(l->top[0]), *w = F(l->param[0]);
    float *dx = G(l->bottom[0]);
    for (int64_t n = 0; n < gm->n; n++)
        for (int64_t c = 0; c < gm->c; c++) {
            int64_t g = c / gm->cin, ic = c % gm->cin;
            for (int64_t ih = 0; ih < gm->h; ih++)
                for (int64_t iw = 0; iw < gm->w; iw++) {
                    double acc = 0;
                    for (int kh = 0; kh < p->kh; kh++) {
                        int64_t oh = tap(ih, kh, p->sh, p->ph, p->dh, gm->oh);
                        if (oh < 0)
                            continue;
                        for (int kw = 0; kw < p->kw; kw++) {
                            int64_t ow = tap(iw, kw, p->sw, p->pw, p->dw, gm->ow);
                            if (ow < 0)
                                continue;
                            for (int64_t oc = 0; oc < gm->cout; oc++) {
                                int64_t o = g * gm->cout + oc;
                                acc += (double)dy[((n * gm->oc + o) * gm->oh + oh) * gm->ow + ow] *
                                       w[((o * gm->cin + ic) * p->kh + kh) * p->kw + kw];
                            }
                        }
                    }
                    dx[((n * gm->c + c) * gm->h + ih) * gm->w + iw] = (float)acc;
                }
        }
}

static void conv_backward_weights(const dlg_layer *l, const geom *gm)
{
    const dlg_conv_param *p = &l->p.conv;
    const float *dy = G(l->top[0]), *x = F(l->bottom[0]);
    float *dw = G(l->param[0]);
    for (int64_t o = 0; o < gm->oc; o++) {
        int64_t g = o / gm->cout;
        for (int64_t ic = 0; ic < gm->cin; ic++)
            for (int kh = 0; kh < p->kh; kh++)
                for (int kw = 0; kw < p->kw; kw++) {
                    double acc = 0;
                    for (int64_t n = 0; n < gm->n; n++)
                        for (int64_t oh = 0; oh < gm->oh; oh++) {
                            int64_t ih = oh * p->sh - p->ph + kh * p->dh;
                            if (ih < 0 || ih >= gm->h)
                                continue;
                            for (int64_t ow = 0; ow < gm->ow; ow++) {
                                int64_t iw = ow * p->sw - p->pw + kw * p->dw;
                                if (iw < 0 || iw >= gm->w)
                                    continue;
                                acc +=
                                    (double)dy[((n * gm->oc + o) * gm->oh + oh) * gm->ow + ow] *
                                    x[((n * gm->c + g * gm->cin + ic) * gm->h + ih) * gm->w + iw];
                            }
                        }
                    dw[((o * gm->cin + ic) * p->kh + kh) * p->kw + kw] = (float)acc;
                }
    }
    if (p->bias) {
        float *db = G(l->param[1]);
        for (int64_t o = 0; o < gm->oc; o++) {
            double acc = 0;
            for (int64_t n = 0; n < gm->n; n++)
                for (int64_t i = 0; i < gm->oh * gm->ow; i++)
                    acc += dy[(n * gm->oc + o) * gm->oh * gm->ow + i];
            db[o] = (float)acc;
        }
    }
}

static int conv_backward(void *ctx, dlg_layer *l, void *state)
{
    geom gm = conv_geom(l);
    if (l->p.conv.relu) { /* a folded ReLU (training): dy where the output is > 0 */
        const float *y = F(l->top[0]);
        float *dy = G(l->top[0]);
        for (int64_t i = 0; i < l->top[0]->count; i++)
            dy[i] = y[i] > 0 ? dy[i] : 0.0f;
    }
    if (l->prop_down[0])
        conv_backward_data(l, &gm);
    if (l->param_grad)
        conv_backward_weights(l, &gm);
    return 0;
}

const dlg_kernels dlg_ref_conv = {
    .setup = dlg_ref_setup_none,
    .forward = conv_forward,
    .backward = conv_backward,
    .fuses_relu = true,
    .fuses_epilogue = true};

static int fc_forward(void *ctx, dlg_layer *l, void *state)
{
    int64_t n = l->bottom[0]->shape.d[0], in = dlg_shape_inner(&l->bottom[0]->shape);
    int64_t out = l->top[0]->shape.d[1];
    const float *x = F(l->bottom[0]), *w = F(l->param[0]), *b = F(l->param[1]);
    float *y = F(l->top[0]);
    for (int64_t i = 0; i < n; i++)
        for (int64_t o = 0; o < out; o++) {
            double acc = b[o];
            for (int64_t k = 0; k < in; k++)
                acc += (double)x[i * in + k] * w[o * in + k];
            y[i * out + o] = (float)acc;
        }
    return 0;
}

static int fc_backward(void *ctx, dlg_layer *l, void *state)
{
    int64_t n = l->bottom[0]->shape.d[0], in = dlg_shape_inner(&l->bottom[0]->shape);
    int64_t out = l->top[0]->shape.d[1];
    const float *x = F(l->bottom[0]), *w = F(l->param[0]), *dy = G(l->top[0]);
    if (l->prop_down[0]) {
        float *dx = G(l->bottom[0]);
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < in; k++) {
                double acc = 0;
                for (int64_t o = 0; o < out; o++)
                    acc += (double)dy[i * out + o] * w[o * in + k];
                dx[i * in + k] = (float)acc;
            }
    }
    if (l->param_grad) {
        float *dw = G(l->param[0]), *db = G(l->param[1]);
        for (int64_t o = 0; o < out; o++) {
            double bacc = 0;
            for (int64_t k = 0; k < in; k++) {
                double acc = 0;
                for (int64_t i = 0; i < n; i++)
                    acc += (double)dy[i * out + o] * x[i * in + k];
                dw[o * in + k] = (float)acc;
            }
            for (int64_t i = 0; i < n; i++)
                bacc += dy[i * out + o];
            db[o] = (float)bacc;
        }
    }
    return 0;
}

const dlg_kernels dlg_ref_fc = {
    .setup = dlg_ref_setup_none, .forward = fc_forward, .backward = fc_backward};
