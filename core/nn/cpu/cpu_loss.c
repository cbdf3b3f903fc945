/* Softmax cross-entropy loss on oneDNN's softmax.  The reference loop takes
 * exp() in double per element; at a language model's vocabulary (700 rows
 * x 10000 words for the PTB medium model) that was a quarter of the step.
 * Forward: oneDNN's log-softmax into the workspace, then the label's entry
 * per row, a chunk of rows at a time so that the workspace stays within
 * CHUNK_BYTES at any vocabulary; backward: oneDNN's softmax straight into the input gradient,
 * then one pass subtracts the label and applies the loss weight.  Top-1 and
 * top-5 rank the label's score among the row's raw scores, as the
 * reference does, so both agree on ties. */
#include "cpu.h"
#include "../ref/ref.h"

#include <stdlib.h>

#define CHUNK_BYTES ((size_t)32 << 20) /* log-probabilities held at a time */

typedef struct loss_state {
    cpu_prim logp[2]; /* forward: log-softmax of a chunk of rows, of the last chunk */
    cpu_prim prob;    /* backward: softmax of the scores into their gradient */
    size_t logp_off;  /* workspace offset of the log-probabilities */
    int64_t n, k;     /* rows (items) and classes */
    int64_t rows;     /* rows a chunk; the last one may have fewer */
} loss_state;

static void loss_destroy(void *ctx, void *state)
{
    loss_state *s = state;
    cpu_prim_destroy(&s->logp[0]);
    cpu_prim_destroy(&s->logp[1]);
    cpu_prim_destroy(&s->prob);
    free(s);
}

/* One softmax_v2 primitive over the rows of an n x k matrix. */
static int softmax_prim(cpu_ctx *c, cpu_prim *p, int64_t n, int64_t k, dnnl_alg_kind_t alg,
                        char *err, size_t errlen)
{
    int64_t dims[2] = {n, k};
    dnnl_memory_desc_t md = cpu_md(2, dims, dnnl_nc);
    dnnl_softmax_v2_desc_t d;
    dnnl_status_t st =
        dnnl_softmax_v2_forward_desc_init(&d, dnnl_forward_inference, alg, &md, &md, 1);
    if (st != dnnl_success)
        return cpu_fail(st, "softmax desc", err, errlen);
    int rc = cpu_prim_create(c, p, &d, NULL, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, p, DNNL_ARG_SRC, &md, false, err, errlen);
    if (!rc)
        rc = cpu_prim_arg(c, p, DNNL_ARG_DST, &md, true, err, errlen);
    return rc;
}

static int loss_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    if (l->bottom[0]->layout)
        return -DLG_ENOTSUP;
    loss_state *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    s->n = l->bottom[0]->shape.d[0];
    s->k = dlg_shape_inner(&l->bottom[0]->shape);
    int64_t fit = (int64_t)(CHUNK_BYTES / ((size_t)s->k * sizeof(float)));
    s->rows = fit < 1 ? 1 : fit < s->n ? fit : s->n;
    int rc = softmax_prim(ctx, &s->logp[0], s->rows, s->k, dnnl_softmax_log, err, errlen);
    if (!rc && s->n % s->rows)
        rc = softmax_prim(ctx, &s->logp[1], s->n % s->rows, s->k, dnnl_softmax_log, err, errlen);
    if (!rc && l->backward && l->prop_down[0])
        rc = softmax_prim(ctx, &s->prob, s->n, s->k, dnnl_softmax_accurate, err, errlen);
    if (rc) {
        loss_destroy(ctx, s);
        return rc;
    }
    size_t scratch = s->logp[0].ws > s->logp[1].ws ? s->logp[0].ws : s->logp[1].ws;
    s->logp_off = CPU_ALIGN(scratch);
    size_t fwd = s->logp_off + (size_t)s->rows * (size_t)s->k * sizeof(float);
    *ws = fwd > s->prob.ws ? fwd : s->prob.ws;
    *state = s;
    return 0;
}

/* Every label a class id, as the reference takes it, before any work;
 * else -DLG_EINVAL (the engine names the layer). */
static int check_labels(const dlg_layer *l, int64_t n, int64_t k)
{
    int64_t c;
    for (int64_t i = 0; i < n; i++)
        if (dlg_ref_label(l, i, k, &c) < 0)
            return -DLG_EINVAL;
    return 0;
}

/* Entries of x[0..k) ranked above v, eight at a time: a NaN ranks above
 * everything (as argmax does), and a NaN v is ranked below all k, so a
 * diverged row never counts as a hit. */
static int64_t count_above(const float *x, int64_t k, float v)
{
    typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
    typedef int32_t v8i __attribute__((vector_size(32)));
    if (v != v)
        return k;
    v8 t = {v, v, v, v, v, v, v, v};
    v8i acc = {0};
    int64_t i = 0, n = 0;
    for (; i + 8 <= k; i += 8) {
        v8 e = *(const v8 *)(x + i);
        acc -= (v8i)(e > t) | (v8i)(e != e); /* true is -1 */
    }
    for (int j = 0; j < 8; j++)
        n += acc[j];
    for (; i < k; i++)
        n += x[i] > v || x[i] != x[i];
    return n;
}

/* Top: loss (mean per row), top-1, top-5 (fractions of the rows). */
static int loss_forward(void *ctx, dlg_layer *l, void *state)
{
    loss_state *s = state;
    if (check_labels(l, s->n, s->k) < 0)
        return -DLG_EINVAL;
    float *logp = (float *)((char *)l->ws + s->logp_off);
    const float *x = l->bottom[0]->data, *y = l->bottom[1]->data;
    double loss = 0;
    int64_t top1 = 0, top5 = 0, k = s->k;
    for (int64_t r0 = 0; r0 < s->n; r0 += s->rows) {
        int64_t m = s->n - r0 < s->rows ? s->n - r0 : s->rows;
        void *ptrs[2] = {(void *)(x + r0 * k), logp};
        int rc = cpu_prim_exec(ctx, &s->logp[m < s->rows], ptrs, l->ws);
        if (rc)
            return rc;
#pragma omp parallel for reduction(+ : loss, top1, top5) schedule(static)
        for (int64_t i = 0; i < m; i++) {
            const float *row = x + (r0 + i) * k;
            int64_t c = (int64_t)y[r0 + i], above = count_above(row, k, row[c]);
            float lp = logp[i * k + c];
            /* oneDNN's vector log can round a certain class's 0 up; a NaN
             * (diverged scores) must reach the mean */
            loss -= lp > 0 ? 0 : lp;
            top1 += above < 1;
            top5 += above < 5;
        }
    }
    float *out = l->top[0]->data;
    out[0] = (float)(loss / (double)s->n);
    out[1] = (float)((double)top1 / (double)s->n);
    out[2] = (float)((double)top5 / (double)s->n);
    return 0;
}

/* d loss / d x = (softmax(x) - onehot(label)) * loss_weight / rows */
static int loss_backward(void *ctx, dlg_layer *l, void *state)
{
    loss_state *s = state;
    if (!s->prob.p) /* planned without a gradient to the scores */
        return 0;
    if (check_labels(l, s->n, s->k) < 0)
        return -DLG_EINVAL;
    float *dx = l->bottom[0]->diff;
    void *ptrs[2] = {l->bottom[0]->data, dx};
    int rc = cpu_prim_exec(ctx, &s->prob, ptrs, l->ws);
    if (rc)
        return rc;
    const float *y = l->bottom[1]->data;
    float w = (float)(l->p.loss_weight / (double)s->n);
    int64_t k = s->k;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < s->n; i++) {
        float *row = dx + i * k;
#pragma omp simd
        for (int64_t j = 0; j < k; j++)
            row[j] *= w;
        row[(int64_t)y[i]] -= w;
    }
    return 0;
}

const dlg_kernels dlg_cpu_loss = {.setup = loss_setup,
                                  .forward = loss_forward,
                                  .backward = loss_backward,
                                  .destroy = loss_destroy};
