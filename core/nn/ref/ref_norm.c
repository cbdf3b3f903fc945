/* Reference batch-norm (+scale), softmax and softmax cross-entropy loss. */
#include "ref.h"

#include <math.h>
#include <stdlib.h>

typedef struct bn_state {
    double *mean, *invstd; /* of the last forward, per channel */
} bn_state;

static int bn_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                    size_t errlen)
{
    int64_t C = l->bottom[0]->shape.d[1];
    bn_state *s = malloc(sizeof *s);
    double *m = malloc(2 * (size_t)C * sizeof(double));
    if (!s || !m) {
        free(s);
        free(m);
        return -DLG_ENOMEM;
    }
    s->mean = m;
    s->invstd = m + C;
    *state = s;
    *ws = 0;
    return 0;
}

static void bn_destroy(void *ctx, void *state)
{
    bn_state *s = state;
    free(s->mean);
    free(s);
}

static int bn_forward(void *ctx, dlg_layer *l, void *state)
{
    bn_state *st = state;
    const dlg_shape *s = &l->bottom[0]->shape;
    int64_t N = s->d[0], C = s->d[1], HW = s->d[2] * s->d[3], M = N * HW;
    const float *x = F(l->bottom[0]), *gamma = F(l->param[0]), *beta = F(l->param[1]);
    const float *res = l->p.bn.residual ? F(l->bottom[1]) : NULL;
    float *rmean = F(l->param[2]), *rvar = F(l->param[3]), *y = F(l->top[0]);
    double mom = l->p.bn.momentum;
    for (int64_t c = 0; c < C; c++) {
        double mean = rmean[c], var = rvar[c];
        if (l->train) {
            double sum = 0, sq = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < HW; i++)
                    sum += x[(n * C + c) * HW + i];
            mean = sum / (double)M;
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < HW; i++) {
                    double d = x[(n * C + c) * HW + i] - mean;
                    sq += d * d;
                }
            var = sq / (double)M;
            /* running variance is unbiased, as Caffe and PyTorch keep it */
            rmean[c] = (float)((1 - mom) * rmean[c] + mom * mean);
            rvar[c] = (float)((1 - mom) * rvar[c] + mom * var * (M > 1 ? M / (M - 1.0) : 1.0));
        }
        st->mean[c] = mean;
        st->invstd[c] = 1.0 / sqrt(var + l->p.bn.eps);
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < HW; i++) {
                int64_t k = (n * C + c) * HW + i;
                double v = gamma[c] * (x[k] - mean) * st->invstd[c] + beta[c] + (res ? res[k] : 0.0);
                y[k] = (float)(l->p.bn.relu && v < 0 ? 0 : v);
            }
    }
    return 0;
}

/* The output gradient at k (its diff, or the sum of a folded split's
 * output diffs), masked by a fused ReLU's y > 0. */
static inline double bn_dy(const dlg_layer *l, int64_t k)
{
    return l->p.bn.relu && !(F(l->top[0])[k] > 0) ? 0.0 : dlg_ref_top_grad(l, k);
}

/* Uses the statistics of the preceding forward, as frameworks do. */
static int bn_backward(void *ctx, dlg_layer *l, void *state)
{
    bn_state *st = state;
    const dlg_shape *s = &l->bottom[0]->shape;
    int64_t N = s->d[0], C = s->d[1], HW = s->d[2] * s->d[3], M = N * HW;
    const float *x = F(l->bottom[0]), *gamma = F(l->param[0]);
    if (l->p.bn.residual && l->prop_down[1]) /* the add's gradient to the shortcut */
        for (int64_t k = 0; k < l->top[0]->count; k++)
            G(l->bottom[1])[k] = (float)bn_dy(l, k);
    for (int64_t c = 0; c < C; c++) {
        double dg = 0, db = 0, mean = st->mean[c], is = st->invstd[c];
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < HW; i++) {
                int64_t k = (n * C + c) * HW + i;
                double d = bn_dy(l, k);
                dg += d * (x[k] - mean) * is;
                db += d;
            }
        if (l->param_grad) {
            G(l->param[0])[c] = (float)dg;
            G(l->param[1])[c] = (float)db;
        }
        if (!l->prop_down[0])
            continue;
        float *dx = G(l->bottom[0]);
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < HW; i++) {
                int64_t k = (n * C + c) * HW + i;
                double xhat = (x[k] - mean) * is;
                dx[k] =
                    l->train
                        ? (float)(gamma[c] * is / (double)M *
                                  ((double)M * bn_dy(l, k) - db - xhat * dg))
                        : (float)(gamma[c] * is * bn_dy(l, k));
            }
    }
    return 0;
}

/* fuses_residual: a folded add (dlg_bn_param.residual) and split
 * (top_parts) */
const dlg_kernels dlg_ref_bn = {.setup = bn_setup,
                                .forward = bn_forward,
                                .backward = bn_backward,
                                .destroy = bn_destroy,
                                .fuses_relu = true,
                                .fuses_residual = true};

/* Softmax over channels at every (n, h, w). */
static int softmax_forward(void *ctx, dlg_layer *l, void *state)
{
    const dlg_shape *s = &l->bottom[0]->shape;
    int64_t C = s->d[1], HW = dlg_shape_inner(s) / C;
    const float *x = F(l->bottom[0]);
    float *y = F(l->top[0]);
    for (int64_t n = 0; n < s->d[0]; n++)
        for (int64_t i = 0; i < HW; i++) {
            const float *xp = x + n * C * HW + i;
            float *yp = y + n * C * HW + i;
            double mx = -INFINITY, sum = 0;
            for (int64_t c = 0; c < C; c++)
                mx = xp[c * HW] > mx ? xp[c * HW] : mx;
            for (int64_t c = 0; c < C; c++)
                sum += exp(xp[c * HW] - mx);
            for (int64_t c = 0; c < C; c++)
                yp[c * HW] = (float)(exp(xp[c * HW] - mx) / sum);
        }
    return 0;
}

static int softmax_backward(void *ctx, dlg_layer *l, void *state)
{
    const dlg_shape *s = &l->bottom[0]->shape;
    int64_t C = s->d[1], HW = dlg_shape_inner(s) / C;
    for (int64_t n = 0; n < s->d[0]; n++)
        for (int64_t i = 0; i < HW; i++) {
            int64_t o = n * C * HW + i;
            const float *y = F(l->top[0]) + o, *dy = G(l->top[0]) + o;
            float *dx = G(l->bottom[0]) + o;
            double dot = 0;
            for (int64_t c = 0; c < C; c++)
                dot += (double)dy[c * HW] * y[c * HW];
            for (int64_t c = 0; c < C; c++)
                dx[c * HW] = (float)(y[c * HW] * (dy[c * HW] - dot));
        }
    return 0;
}

const dlg_kernels dlg_ref_softmax = {
    .setup = dlg_ref_setup_none, .forward = softmax_forward, .backward = softmax_backward};

/* log-sum-exp of one row, for a numerically safe log softmax */
static double row_lse(const float *x, int64_t K)
{
    double mx = -INFINITY, sum = 0;
    for (int64_t k = 0; k < K; k++)
        mx = x[k] > mx ? x[k] : mx;
    for (int64_t k = 0; k < K; k++)
        sum += exp(x[k] - mx);
    return mx + log(sum);
}

int dlg_ref_label(const dlg_layer *l, int64_t i, int64_t K, int64_t *out)
{
    float v = F(l->bottom[1])[i];
    if (!(v >= 0 && v < (float)K) || v != (float)(int64_t)v)
        return -DLG_EINVAL;
    *out = (int64_t)v;
    return 0;
}

/* Top: loss, top-1, top-5 (fractions of the batch). */
static int loss_forward(void *ctx, dlg_layer *l, void *state)
{
    int64_t N = l->bottom[0]->shape.d[0], K = dlg_shape_inner(&l->bottom[0]->shape);
    double loss = 0, top1 = 0, top5 = 0;
    for (int64_t i = 0; i < N; i++) {
        const float *x = F(l->bottom[0]) + i * K;
        int64_t y, above = 0;
        if (dlg_ref_label(l, i, K, &y) < 0)
            return -DLG_EINVAL;
        loss += row_lse(x, K) - x[y];
        /* a NaN ranks above everything, a NaN label score below (as cpu) */
        for (int64_t k = 0; k < K; k++)
            above += x[k] > x[y] || x[k] != x[k] || x[y] != x[y];
        top1 += above < 1;
        top5 += above < 5;
    }
    float *out = F(l->top[0]);
    out[0] = (float)(loss / (double)N);
    out[1] = (float)(top1 / (double)N);
    out[2] = (float)(top5 / (double)N);
    return 0;
}

static int loss_backward(void *ctx, dlg_layer *l, void *state)
{
    int64_t N = l->bottom[0]->shape.d[0], K = dlg_shape_inner(&l->bottom[0]->shape);
    for (int64_t i = 0; i < N; i++) {
        const float *x = F(l->bottom[0]) + i * K;
        float *dx = G(l->bottom[0]) + i * K;
        int64_t y;
        if (dlg_ref_label(l, i, K, &y) < 0)
            return -DLG_EINVAL;
        double lse = row_lse(x, K), w = l->p.loss_weight / (double)N;
        for (int64_t k = 0; k < K; k++)
            dx[k] = (float)((exp(x[k] - lse) - (k == y)) * w);
    }
    return 0;
}

const dlg_kernels dlg_ref_loss = {
    .setup = dlg_ref_setup_none, .forward = loss_forward, .backward = loss_backward};
