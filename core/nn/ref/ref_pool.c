/* Reference pooling (Caffe's windows and divisor; ceil or floor mode is
 * the output size the layer was given) and across-channel LRN. */
#include "ref.h"

#include <math.h>
#include <string.h>

/* Caffe's window along one axis: [*lo, *hi) clipped to the input, and the
 * average divisor extent (clipped to in + pad, not to in; in floor mode no
 * window passes in + pad, so it is k). */
static void window(int64_t o, int k, int s, int pad, int64_t in, int64_t *lo, int64_t *hi,
                   int64_t *div)
{
    int64_t a = o * s - pad, b = a + k;
    if (b > in + pad)
        b = in + pad;
    *div = b - a;
    *lo = a < 0 ? 0 : a;
    *hi = b > in ? in : b;
}

static int pool_forward(void *ctx, dlg_layer *l, void *state)
{
    const dlg_pool_param *p = &l->p.pool;
    const dlg_shape *xs = &l->bottom[0]->shape, *ys = &l->top[0]->shape;
    int64_t H = xs->d[2], W = xs->d[3], OH = ys->d[2], OW = ys->d[3];
    const float *x = F(l->bottom[0]);
    float *y = F(l->top[0]);
    for (int64_t nc = 0; nc < xs->d[0] * xs->d[1]; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t h0, h1, w0, w1, dh, dw;
                window(oh, p->kh, p->sh, p->ph, H, &h0, &h1, &dh);
                window(ow, p->kw, p->sw, p->pw, W, &w0, &w1, &dw);
                const float *xp = x + nc * H * W;
                double acc = p->mode == DLG_POOL_MAX ? -INFINITY : 0.0;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) {
                        if (p->mode == DLG_POOL_MAX)
                            acc = xp[h * W + w] > acc ? xp[h * W + w] : acc;
                        else
                            acc += xp[h * W + w];
                    }
                if (p->mode == DLG_POOL_AVG)
                    acc /= (double)(dh * dw);
                y[(nc * OH + oh) * OW + ow] = (float)acc;
            }
    return 0;
}

static int pool_backward(void *ctx, dlg_layer *l, void *state)
{
    const dlg_pool_param *p = &l->p.pool;
    const dlg_shape *xs = &l->bottom[0]->shape, *ys = &l->top[0]->shape;
    int64_t H = xs->d[2], W = xs->d[3], OH = ys->d[2], OW = ys->d[3];
    const float *x = F(l->bottom[0]), *dy = G(l->top[0]);
    float *dx = G(l->bottom[0]);
    memset(dx, 0, (size_t)l->bottom[0]->count * sizeof(float));
    for (int64_t nc = 0; nc < xs->d[0] * xs->d[1]; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t h0, h1, w0, w1, dh, dw;
                window(oh, p->kh, p->sh, p->ph, H, &h0, &h1, &dh);
                window(ow, p->kw, p->sw, p->pw, W, &w0, &w1, &dw);
                float g = dy[(nc * OH + oh) * OW + ow];
                const float *xp = x + nc * H * W;
                float *dxp = dx + nc * H * W;
                if (p->mode == DLG_POOL_AVG) {
                    for (int64_t h = h0; h < h1; h++)
                        for (int64_t w = w0; w < w1; w++)
                            dxp[h * W + w] += (float)(g / (double)(dh * dw));
                    continue;
                }
                int64_t best = h0 * W + w0; /* first maximum, as Caffe */
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++)
                        if (xp[h * W + w] > xp[best])
                            best = h * W + w;
                dxp[best] += g;
            }
    return 0;
}

const dlg_kernels dlg_ref_pool = {
    .setup = dlg_ref_setup_none, .forward = pool_forward, .backward = pool_backward};

/* scale at (n, c, hw) = k + alpha/size * sum of x^2 over nearby channels */
static double lrn_scale(const dlg_layer *l, const float *x, int64_t C, int64_t HW, int64_t c,
                        int64_t i)
{
    const dlg_lrn_param *p = &l->p.lrn;
    int half = p->size / 2;
    double s = 0;
    for (int64_t j = c - half; j <= c + half; j++)
        if (j >= 0 && j < C)
            s += (double)x[j * HW + i] * x[j * HW + i];
    return p->k + p->alpha / p->size * s;
}

static int lrn_forward(void *ctx, dlg_layer *l, void *state)
{
    const dlg_shape *s = &l->bottom[0]->shape;
    int64_t C = s->d[1], HW = s->d[2] * s->d[3];
    for (int64_t n = 0; n < s->d[0]; n++) {
        const float *x = F(l->bottom[0]) + n * C * HW;
        float *y = F(l->top[0]) + n * C * HW;
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < HW; i++)
                y[c * HW + i] =
                    (float)(x[c * HW + i] * pow(lrn_scale(l, x, C, HW, c, i), -l->p.lrn.beta));
    }
    return 0;
}

/* dx_c = dy_c s_c^-b - 2ab/size x_c sum_{j near c} dy_j x_j s_j^(-b-1) */
static int lrn_backward(void *ctx, dlg_layer *l, void *state)
{
    const dlg_lrn_param *p = &l->p.lrn;
    const dlg_shape *s = &l->bottom[0]->shape;
    int64_t C = s->d[1], HW = s->d[2] * s->d[3];
    int half = p->size / 2;
    for (int64_t n = 0; n < s->d[0]; n++) {
        const float *x = F(l->bottom[0]) + n * C * HW, *dy = G(l->top[0]) + n * C * HW;
        float *dx = G(l->bottom[0]) + n * C * HW;
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < HW; i++) {
                double sum = 0;
                for (int64_t j = c - half; j <= c + half; j++)
                    if (j >= 0 && j < C)
                        sum += dy[j * HW + i] * (double)x[j * HW + i] *
                               pow(lrn_scale(l, x, C, HW, j, i), -p->beta - 1.0);
                dx[c * HW + i] =
                    (float)(dy[c * HW + i] * pow(lrn_scale(l, x, C, HW, c, i), -p->beta) -
                            2.0 * p->alpha * p->beta / p->size * x[c * HW + i] * sum);
            }
    }
    return 0;
}

const dlg_kernels dlg_ref_lrn = {
    .setup = dlg_ref_setup_none, .forward = lrn_forward, .backward = lrn_backward};
