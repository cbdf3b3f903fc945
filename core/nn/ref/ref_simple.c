/* Reference element-wise and data-movement layers: relu, dropout, concat,
 * add, split.  Memory-bound, so the cpu backend uses them too. */
#include "ref.h"
#include "../rng.h"

#include <stdlib.h>
#include <string.h>

static int relu_forward(void *ctx, dlg_layer *l, void *state)
{
    const float *x = F(l->bottom[0]);
    float *y = F(l->top[0]);
    for (int64_t i = 0; i < l->top[0]->count; i++)
        y[i] = x[i] > 0 ? x[i] : 0.0f;
    return 0;
}

static int relu_backward(void *ctx, dlg_layer *l, void *state)
{
    const float *x = F(l->bottom[0]), *dy = G(l->top[0]);
    float *dx = G(l->bottom[0]);
    for (int64_t i = 0; i < l->top[0]->count; i++)
        dx[i] = x[i] > 0 ? dy[i] : 0.0f;
    return 0;
}

const dlg_kernels dlg_ref_relu = {
    .setup = dlg_ref_setup_none, .forward = relu_forward, .backward = relu_backward};

typedef struct dropout_state {
    uint64_t base, step; /* the layer's seed; training forwards so far */
    unsigned char *keep;
} dropout_state;

static int dropout_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                         size_t errlen)
{
    dropout_state *s = malloc(sizeof *s);
    unsigned char *k = malloc((size_t)l->top[0]->count);
    if (!s || !k) {
        free(s);
        free(k);
        return -DLG_ENOMEM;
    }
    s->base = l->seed;
    s->step = 0;
    s->keep = k;
    *state = s;
    *ws = 0;
    return 0;
}

static void dropout_destroy(void *ctx, void *state)
{
    dropout_state *s = state;
    free(s->keep);
    free(s);
}

/* The mask of rng.h's dropout stream, as the cpu and cuda backends draw it. */
static int dropout_forward(void *ctx, dlg_layer *l, void *state)
{
    dropout_state *s = state;
    const float *x = F(l->bottom[0]);
    float *y = F(l->top[0]);
    float r = l->p.dropout_ratio, scale = 1.0f / (1.0f - r);
    uint64_t seed = dlg_dropout_seed(s->base, s->step);
    unsigned char *keep = s->keep;
    bool train = l->train;
    s->step += train;
    DLG_REF_PARALLEL_FOR
    for (int64_t i = 0; i < l->top[0]->count; i++) {
        keep[i] = !train || dlg_dropout_u(seed, (uint64_t)i) >= r;
        y[i] = train ? (keep[i] ? x[i] * scale : 0.0f) : x[i];
    }
    return 0;
}

static int dropout_backward(void *ctx, dlg_layer *l, void *state)
{
    dropout_state *s = state;
    const float *dy = G(l->top[0]);
    float *dx = G(l->bottom[0]);
    const unsigned char *keep = s->keep;
    float scale = l->train ? 1.0f / (1.0f - l->p.dropout_ratio) : 1.0f;
    DLG_REF_PARALLEL_FOR
    for (int64_t i = 0; i < l->top[0]->count; i++)
        dx[i] = keep[i] ? dy[i] * scale : 0.0f;
    return 0;
}

const dlg_kernels dlg_ref_dropout = {.setup = dropout_setup,
                                     .forward = dropout_forward,
                                     .backward = dropout_backward,
                                     .destroy = dropout_destroy};

/* Concat along channels: per image, inputs are contiguous slices. */
static void concat_copy(dlg_layer *l, bool back)
{
    int64_t N = l->top[0]->shape.d[0], top_inner = dlg_shape_inner(&l->top[0]->shape), off = 0;
    for (int b = 0; b < l->nbottom; b++) {
        int64_t inner = dlg_shape_inner(&l->bottom[b]->shape);
        if (!back || l->prop_down[b])
            for (int64_t n = 0; n < N; n++) {
                size_t bytes = (size_t)inner * sizeof(float);
                if (back)
                    memcpy(G(l->bottom[b]) + n * inner, G(l->top[0]) + n * top_inner + off, bytes);
                else
                    memcpy(F(l->top[0]) + n * top_inner + off, F(l->bottom[b]) + n * inner, bytes);
            }
        off += inner;
    }
}

static int concat_forward(void *ctx, dlg_layer *l, void *state)
{
    concat_copy(l, false);
    return 0;
}

static int concat_backward(void *ctx, dlg_layer *l, void *state)
{
    concat_copy(l, true);
    return 0;
}

const dlg_kernels dlg_ref_concat = {
    .setup = dlg_ref_setup_none, .forward = concat_forward, .backward = concat_backward};

static int add_forward(void *ctx, dlg_layer *l, void *state)
{
    const float *a = F(l->bottom[0]), *b = F(l->bottom[1]);
    float *y = F(l->top[0]);
    bool relu = l->p.add.relu;
    for (int64_t i = 0; i < l->top[0]->count; i++) {
        float v = a[i] + b[i];
        y[i] = relu && v < 0 ? 0 : v;
    }
    return 0;
}

float dlg_ref_top_grad(const dlg_layer *l, int64_t i)
{
    if (!l->ntop_parts)
        return G(l->top[0])[i];
    double g = 0;
    for (int p = 0; p < l->ntop_parts; p++)
        g += G(l->top_parts[p])[i];
    return (float)g;
}

static int add_backward(void *ctx, dlg_layer *l, void *state)
{
    const float *y = F(l->top[0]);
    for (int b = 0; b < 2; b++) {
        if (!l->prop_down[b])
            continue;
        float *dx = G(l->bottom[b]);
        for (int64_t i = 0; i < l->top[0]->count; i++)
            dx[i] = l->p.add.relu && !(y[i] > 0) ? 0 : dlg_ref_top_grad(l, i);
    }
    return 0;
}

/* fuses_relu: a folded ReLU (dlg_add_param); sums_top_parts: a folded
 * split's backward (dlg_layer.top_parts) */
const dlg_kernels dlg_ref_add = {.setup = dlg_ref_setup_none,
                                 .forward = add_forward,
                                 .backward = add_backward,
                                 .fuses_relu = true,
                                 .sums_top_parts = true};

/* Split outputs alias the input's data: forward has nothing to do. */
static int split_forward(void *ctx, dlg_layer *l, void *state) { return 0; }

static int split_backward(void *ctx, dlg_layer *l, void *state)
{
    float *dx = G(l->bottom[0]);
    for (int64_t i = 0; i < l->bottom[0]->count; i++) {
        double acc = 0;
        for (int t = 0; t < l->ntop; t++)
            if (l->top[t]->diff)
                acc += G(l->top[t])[i];
        dx[i] = (float)acc;
    }
    return 0;
}

const dlg_kernels dlg_ref_split = {
    .setup = dlg_ref_setup_none, .forward = split_forward, .backward = split_backward};
