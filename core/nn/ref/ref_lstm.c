/* Reference embedding and LSTM kernels (double accumulation, activations
 * kept in double for backward).  The LSTM is the textbook one that oneDNN
 * and PyTorch implement, gates i, f, g, o:
 *   [i f g o] = [sig sig tanh sig](x Wx + h' Wh + b),
 *   c = f c' + i g,  h = o tanh(c). */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- embedding ------------------------------------------------------------ */

/* The id of row r, or -1 if it is not an integer in [0, vocab). */
static int64_t token(const dlg_layer *l, int64_t r)
{
    float v = F(l->bottom[0])[r];
    /* range first: casting NaN or a float past int64 is undefined */
    if (!(v >= 0 && (double)v < (double)l->p.embed.vocab))
        return -1;
    int64_t id = (int64_t)v;
    return (float)id == v ? id : -1;
}

static int embed_forward(void *ctx, dlg_layer *l, void *state)
{
    int64_t N = l->top[0]->shape.d[0], D = dlg_shape_inner(&l->top[0]->shape);
    for (int64_t r = 0; r < N; r++) {
        int64_t id = token(l, r);
        if (id < 0)
            return -DLG_EINVAL;
        memcpy(F(l->top[0]) + r * D, F(l->param[0]) + id * D, (size_t)D * sizeof(float));
    }
    return 0;
}

static int embed_backward(void *ctx, dlg_layer *l, void *state)
{
    int64_t N = l->top[0]->shape.d[0], D = dlg_shape_inner(&l->top[0]->shape);
    if (l->prop_down[0]) /* ids are not differentiable */
        memset(G(l->bottom[0]), 0, (size_t)l->bottom[0]->count * sizeof(float));
    if (!l->param_grad)
        return 0;
    float *dw = G(l->param[0]);
    if (!l->p.embed.accumulate)
        memset(dw, 0, (size_t)l->param[0]->count * sizeof(float));
    for (int64_t r = 0; r < N; r++) {
        int64_t id = token(l, r);
        if (id < 0)
            return -DLG_EINVAL;
        const float *dy = G(l->top[0]) + r * D;
        for (int64_t k = 0; k < D; k++)
            dw[id * D + k] += dy[k];
    }
    return 0;
}

const dlg_kernels dlg_ref_embed = {
    .setup = dlg_ref_setup_none, .forward = embed_forward, .backward = embed_backward};

/* ---- LSTM ------------------------------------------------------------------ */

typedef struct lstm_state {
    int64_t T, B, I, H;
    double *gates;   /* T*B x 4H, after the activations */
    double *cell;    /* T*B x H */
    double *acc;     /* 4H: one row's pre-activations */
    double *dgates;  /* B x 4H */
    double *dh, *dc; /* B x H: gradient flowing to the previous step */
    double *dw;      /* (I + H) x 4H, then 4H: parameter gradients */
} lstm_state;

static void lstm_destroy(void *ctx, void *state)
{
    lstm_state *s = state;
    if (!s)
        return;
    free(s->gates);
    free(s->cell);
    free(s->acc);
    free(s->dgates);
    free(s->dh);
    free(s->dc);
    free(s->dw);
    free(s);
}

static int lstm_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    lstm_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    dlg_lstm_dims d = dlg_lstm_dims_of(l);
    s->T = d.T, s->B = d.B, s->I = d.I, s->H = d.H;
    size_t rows = (size_t)(s->T * s->B), G4 = (size_t)(4 * s->H), BH = (size_t)(s->B * s->H);
    s->gates = malloc(rows * G4 * sizeof(double));
    s->cell = malloc(rows * (size_t)s->H * sizeof(double));
    s->acc = malloc(G4 * sizeof(double));
    s->dgates = malloc((size_t)s->B * G4 * sizeof(double));
    s->dh = malloc(BH * sizeof(double));
    s->dc = malloc(BH * sizeof(double));
    s->dw = malloc(((size_t)(s->I + s->H) * G4 + G4) * sizeof(double));
    if (!s->gates || !s->cell || !s->acc || !s->dgates || !s->dh || !s->dc || !s->dw) {
        lstm_destroy(ctx, s);
        return -DLG_ENOMEM;
    }
    for (int t = 0; t < l->ntop; t++)
        l->top[t]->layout = NULL;
    *state = s;
    *ws = 0;
    return 0;
}

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

/* acc += v * row for a 4H row of a weight matrix */
static void axpy(double *acc, double v, const float *row, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        acc[k] += v * row[k];
}

static int lstm_forward(void *ctx, dlg_layer *l, void *state)
{
    lstm_state *s = state;
    int64_t T = s->T, B = s->B, I = s->I, H = s->H, G4 = 4 * H;
    const float *x = F(l->bottom[0]), *h0 = F(l->bottom[1]), *c0 = F(l->bottom[2]);
    const float *wx = F(l->param[0]), *wh = F(l->param[1]), *bias = F(l->param[2]);
    float *y = F(l->top[0]);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            int64_t r = t * B + b;
            const float *hp = t ? y + (r - B) * H : h0 + b * H;
            for (int64_t k = 0; k < G4; k++)
                s->acc[k] = bias[k];
            for (int64_t i = 0; i < I; i++)
                axpy(s->acc, x[r * I + i], wx + i * G4, G4);
            for (int64_t j = 0; j < H; j++)
                axpy(s->acc, hp[j], wh + j * G4, G4);
            double *g = s->gates + r * G4, *c = s->cell + r * H;
            for (int64_t h = 0; h < H; h++) {
                double cp = t ? s->cell[(r - B) * H + h] : c0[b * H + h];
                g[h] = sigm(s->acc[h]);
                g[H + h] = sigm(s->acc[H + h]);
                g[2 * H + h] = tanh(s->acc[2 * H + h]);
                g[3 * H + h] = sigm(s->acc[3 * H + h]);
                c[h] = g[H + h] * cp + g[h] * g[2 * H + h];
                y[r * H + h] = (float)(g[3 * H + h] * tanh(c[h]));
            }
        }
    int64_t last = (T - 1) * B * H;
    for (int64_t k = 0; k < B * H; k++) {
        F(l->top[1])[k] = y[last + k];
        F(l->top[2])[k] = (float)s->cell[last + k];
    }
    return 0;
}

/* Gate gradients of step t for every stream, from dh/dc of step t+1. */
static void step_gates(lstm_state *s, const dlg_layer *l, int64_t t)
{
    int64_t B = s->B, H = s->H, G4 = 4 * H;
    const float *dy = G(l->top[0]), *c0 = F(l->bottom[2]);
    for (int64_t b = 0; b < B; b++) {
        int64_t r = t * B + b;
        const double *g = s->gates + r * G4, *c = s->cell + r * H;
        double *dg = s->dgates + b * G4, *dh = s->dh + b * H, *dc = s->dc + b * H;
        for (int64_t h = 0; h < H; h++) {
            double cp = t ? s->cell[(r - B) * H + h] : c0[b * H + h];
            double gi = g[h], gf = g[H + h], gg = g[2 * H + h], go = g[3 * H + h];
            double tc = tanh(c[h]), d = dh[h] + dy[r * H + h];
            double dcell = dc[h] + d * go * (1 - tc * tc);
            dg[h] = dcell * gg * gi * (1 - gi);
            dg[H + h] = dcell * cp * gf * (1 - gf);
            dg[2 * H + h] = dcell * gi * (1 - gg * gg);
            dg[3 * H + h] = d * tc * go * (1 - go);
            dc[h] = dcell * gf;
        }
    }
}

/* dx, dh' and the weight gradients of step t from its gate gradients. */
static void step_back(lstm_state *s, dlg_layer *l, int64_t t)
{
    int64_t B = s->B, I = s->I, H = s->H, G4 = 4 * H;
    const float *x = F(l->bottom[0]), *h0 = F(l->bottom[1]), *y = F(l->top[0]);
    const float *wx = F(l->param[0]), *wh = F(l->param[1]);
    double *dwx = s->dw, *dwh = s->dw + I * G4, *db = s->dw + (I + H) * G4;
    for (int64_t b = 0; b < B; b++) {
        int64_t r = t * B + b;
        const double *dg = s->dgates + b * G4;
        const float *hp = t ? y + (r - B) * H : h0 + b * H;
        if (l->prop_down[0])
            for (int64_t i = 0; i < I; i++) {
                double a = 0;
                for (int64_t k = 0; k < G4; k++)
                    a += dg[k] * wx[i * G4 + k];
                G(l->bottom[0])[r * I + i] = (float)a;
            }
        for (int64_t j = 0; j < H; j++) {
            double a = 0;
            for (int64_t k = 0; k < G4; k++)
                a += dg[k] * wh[j * G4 + k];
            s->dh[b * H + j] = a;
        }
        if (!l->param_grad)
            continue;
        for (int64_t i = 0; i < I; i++)
            for (int64_t k = 0; k < G4; k++)
                dwx[i * G4 + k] += x[r * I + i] * dg[k];
        for (int64_t j = 0; j < H; j++)
            for (int64_t k = 0; k < G4; k++)
                dwh[j * G4 + k] += hp[j] * dg[k];
        for (int64_t k = 0; k < G4; k++)
            db[k] += dg[k];
    }
}

static int lstm_backward(void *ctx, dlg_layer *l, void *state)
{
    lstm_state *s = state;
    int64_t T = s->T, BH = s->B * s->H, nw = (s->I + s->H + 1) * 4 * s->H;
    const float *dhT = G(l->top[1]), *dcT = G(l->top[2]);
    for (int64_t k = 0; k < BH; k++) {
        s->dh[k] = dhT ? dhT[k] : 0;
        s->dc[k] = dcT ? dcT[k] : 0;
    }
    memset(s->dw, 0, (size_t)nw * sizeof(double));
    for (int64_t t = T - 1; t >= 0; t--) {
        step_gates(s, l, t);
        step_back(s, l, t);
    }
    for (int64_t k = 0; k < BH; k++) {
        if (l->prop_down[1])
            G(l->bottom[1])[k] = (float)s->dh[k];
        if (l->prop_down[2])
            G(l->bottom[2])[k] = (float)s->dc[k];
    }
    if (l->param_grad) {
        int64_t nx = s->I * 4 * s->H, nh = s->H * 4 * s->H;
        for (int64_t k = 0; k < nw; k++) {
            float v = (float)s->dw[k];
            if (k < nx)
                G(l->param[0])[k] = v;
            else if (k < nx + nh)
                G(l->param[1])[k - nx] = v;
            else
                G(l->param[2])[k - nx - nh] = v;
        }
    }
    return 0;
}

const dlg_kernels dlg_ref_lstm = {.setup = lstm_setup,
                                  .forward = lstm_forward,
                                  .backward = lstm_backward,
                                  .destroy = lstm_destroy};
