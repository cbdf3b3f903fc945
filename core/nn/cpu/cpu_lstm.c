/* One LSTM layer on oneDNN's vanilla LSTM primitive (forward training or
 * inference, and backward).  The net's tensors map onto oneDNN's plain
 * layouts without copies: x and y are tnc (rows t*B + b), the states ldnc
 * with L = D = 1, Wx/Wh ldigo, the bias ldgo; the primitives take the
 * weights in whatever layout they prefer (reordered per call from the
 * plain parameters, which SGD and host IO see).
 *
 * cpu-bf16 inference: the forward primitive takes bf16 x, h and y and
 * bf16 weights, with the cell state and the bias fp32.  The net's x, y
 * and states stay plain fp32 (the embedding and dropout next to it are
 * fp32 reference loops), converted by the arguments' reorders; each
 * weight keeps a bf16 copy in the primitive's layout, made again only
 * when the fp32 master moves.  cpu-bf16 training runs on oneDNN matmuls
 * instead (cpu_lstm_gemm.c, use_gemm: oneDNN 2.6's bf16 LSTM backward is
 * slower than its fp32 one), so the backward primitive here is fp32. */
#include "cpu.h"
#include "cpu_lstm_gemm.h"

#include <stdlib.h>
#include <string.h>

typedef struct lstm_prims {
    cpu_prim fwd, bwd;
    dnnl_memory_t wsmem; /* forward -> backward workspace (training) */
    /* backward writes every bottom and param gradient: those the net does
     * not want (h0/c0 inputs, untrained params) go to these */
    float *spare[6];
    /* cpu-bf16 (inference): bf16 Wx, Wh in the forward's layouts */
    cpu_wcopy wq[2];
    /* cpu-bf16 training: the GEMM path instead (cpu_lstm_gemm.c) */
    cpu_lstm_gemm *gemm;
} lstm_prims;

static void lstm_destroy(void *ctx, void *state)
{
    lstm_prims *s = state;
    cpu_prim_destroy(&s->fwd);
    cpu_prim_destroy(&s->bwd);
    if (s->wsmem)
        dnnl_memory_destroy(s->wsmem);
    for (int i = 0; i < 6; i++)
        free(s->spare[i]);
    for (int i = 0; i < 2; i++)
        cpu_wcopy_destroy(&s->wq[i]);
    cpu_lstm_gemm_destroy(s->gemm);
    free(s);
}

/* Spare gradient buffers for tensors that will have no diff. */
static int make_spares(const dlg_layer *l, lstm_prims *s)
{
    for (int i = 0; i < 6; i++) {
        const dlg_tensor *t = i < 3 ? l->bottom[i] : l->param[i - 3];
        bool wanted = i < 3 ? l->prop_down[i] : l->param_grad;
        if (wanted)
            continue;
        s->spare[i] = calloc((size_t)t->count, sizeof(float));
        if (!s->spare[i])
            return -DLG_ENOMEM;
    }
    return 0;
}

static void *diff_or_spare(const dlg_tensor *t, float *spare)
{
    return spare ? (void *)spare : t->diff;
}

/* The memory descriptors of one layer: the net's (plain fp32) and the
 * kernels' (_k: x, h, y of the compute type; the cell state fp32). */
typedef struct lstm_mds {
    dnnl_memory_desc_t x, h0, wx, wh, b, y, wx_any, wh_any;
    dnnl_memory_desc_t x_k, h_k, y_k;
} lstm_mds;

static void make_mds(const dlg_layer *l, dnnl_data_type_t dt, lstm_mds *m)
{
    dlg_lstm_dims d = dlg_lstm_dims_of(l);
    int64_t T = d.T, B = d.B, I = d.I, H = d.H;
    int64_t xd[3] = {T, B, I}, yd[3] = {T, B, H}, sd[4] = {1, 1, B, H};
    int64_t wxd[5] = {1, 1, I, 4, H}, whd[5] = {1, 1, H, 4, H}, bd[4] = {1, 1, 4, H};
    m->x = cpu_md(3, xd, dnnl_tnc);
    m->y = cpu_md(3, yd, dnnl_tnc);
    m->h0 = cpu_md(4, sd, dnnl_ldnc);
    m->wx = cpu_md(5, wxd, dnnl_ldigo);
    m->wh = cpu_md(5, whd, dnnl_ldigo);
    m->wx_any = cpu_md_dt(5, wxd, dnnl_format_tag_any, dt);
    m->wh_any = cpu_md_dt(5, whd, dnnl_format_tag_any, dt);
    m->b = cpu_md(4, bd, dnnl_ldgo);
    m->x_k = cpu_md_dt(3, xd, dnnl_tnc, dt);
    m->y_k = cpu_md_dt(3, yd, dnnl_tnc, dt);
    m->h_k = cpu_md_dt(4, sd, dnnl_ldnc, dt);
}

/* The user layouts of a primitive's weights: plain fp32 as out[] comes
 * (reordered per call), or under cpu-bf16 the kernel's own, read from
 * bf16 copies made here (wq[0]: Wx, wq[1]: Wh). */
static int weight_mds(cpu_ctx *c, const cpu_prim *p, const lstm_mds *m, cpu_wcopy wq[2],
                      const dnnl_memory_desc_t *out[2])
{
    if (!c->bf16)
        return 0;
    for (int i = 0; i < 2; i++) {
        out[i] = dnnl_primitive_desc_query_md(p->pd, dnnl_query_exec_arg_md,
                                              i ? DNNL_ARG_WEIGHTS_ITER : DNNL_ARG_WEIGHTS_LAYER);
        int rc = out[i] ? cpu_wcopy_init(&wq[i], i ? &m->wh : &m->wx, out[i]) : -DLG_EINTERNAL;
        if (rc)
            return rc;
    }
    return 0;
}

/* Adds n args with user layouts md[i]; those from index first_out on
 * are outputs. */
static int add_args(cpu_ctx *c, cpu_prim *p, const int *a, const dnnl_memory_desc_t *const *md,
                    int n, int first_out, char *err, size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = cpu_prim_arg(c, p, a[i], md[i], i >= first_out, err, errlen);
    return rc;
}

static int setup_fwd(cpu_ctx *c, const dlg_layer *l, lstm_prims *s, const lstm_mds *m,
                     char *err, size_t errlen)
{
    dnnl_rnn_desc_t d;
    dnnl_status_t st = dnnl_lstm_forward_desc_init(
        &d, l->backward ? dnnl_forward_training : dnnl_forward_inference,
        dnnl_unidirectional_left2right, &m->x_k, &m->h_k, &m->h0, &m->wx_any, &m->wh_any, &m->b,
        &m->y_k, &m->h_k, &m->h0, 0);
    if (st != dnnl_success)
        return cpu_fail(st, "lstm forward desc", err, errlen);
    const dnnl_memory_desc_t *w[2] = {&m->wx, &m->wh};
    int rc = cpu_prim_create(c, &s->fwd, &d, NULL, err, errlen);
    if (!rc)
        rc = weight_mds(c, &s->fwd, m, s->wq, w);
    int a[9] = {DNNL_ARG_SRC_LAYER, DNNL_ARG_SRC_ITER,  DNNL_ARG_SRC_ITER_C,
                DNNL_ARG_WEIGHTS_LAYER, DNNL_ARG_WEIGHTS_ITER, DNNL_ARG_BIAS,
                DNNL_ARG_DST_LAYER, DNNL_ARG_DST_ITER,  DNNL_ARG_DST_ITER_C};
    const dnnl_memory_desc_t *md[9] = {&m->x, &m->h0, &m->h0, w[0], w[1],
                                       &m->b, &m->y,  &m->h0, &m->h0};
    if (!rc)
        rc = add_args(c, &s->fwd, a, md, 9, 6, err, errlen);
    if (!rc && l->backward) {
        const dnnl_memory_desc_t *wmd =
            dnnl_primitive_desc_query_md(s->fwd.pd, dnnl_query_workspace_md, 0);
        st = wmd ? dnnl_memory_create(&s->wsmem, wmd, c->eng, DNNL_MEMORY_ALLOCATE)
                 : dnnl_invalid_arguments;
        rc = st != dnnl_success ? cpu_fail(st, "lstm workspace", err, errlen)
                                : cpu_prim_fixed(&s->fwd, DNNL_ARG_WORKSPACE, s->wsmem);
    }
    return rc;
}

static int setup_bwd(cpu_ctx *c, const dlg_layer *l, lstm_prims *s, const lstm_mds *m,
                     char *err, size_t errlen)
{
    dnnl_rnn_desc_t d;
    dnnl_status_t st = dnnl_lstm_backward_desc_init(
        &d, dnnl_backward, dnnl_unidirectional_left2right, &m->x_k, &m->h_k, &m->h0, &m->wx_any,
        &m->wh_any, &m->b, &m->y_k, &m->h_k, &m->h0, &m->x, &m->h0, &m->h0, &m->wx, &m->wh, &m->b,
        &m->y, &m->h0, &m->h0, 0);
    if (st != dnnl_success)
        return cpu_fail(st, "lstm backward desc", err, errlen);
    const dnnl_memory_desc_t *w[2] = {&m->wx, &m->wh};
    int rc = cpu_prim_create(c, &s->bwd, &d, s->fwd.pd, err, errlen);
    int a[18] = {DNNL_ARG_SRC_LAYER,       DNNL_ARG_SRC_ITER,         DNNL_ARG_SRC_ITER_C,
                 DNNL_ARG_WEIGHTS_LAYER,   DNNL_ARG_WEIGHTS_ITER,     DNNL_ARG_BIAS,
                 DNNL_ARG_DST_LAYER,       DNNL_ARG_DST_ITER,         DNNL_ARG_DST_ITER_C,
                 DNNL_ARG_DIFF_DST_LAYER,  DNNL_ARG_DIFF_DST_ITER,    DNNL_ARG_DIFF_DST_ITER_C,
                 DNNL_ARG_DIFF_SRC_LAYER,  DNNL_ARG_DIFF_SRC_ITER,    DNNL_ARG_DIFF_SRC_ITER_C,
                 DNNL_ARG_DIFF_WEIGHTS_LAYER, DNNL_ARG_DIFF_WEIGHTS_ITER, DNNL_ARG_DIFF_BIAS};
    const dnnl_memory_desc_t *md[18] = {&m->x,  &m->h0, &m->h0, w[0], w[1], &m->b,
                                        &m->y,  &m->h0, &m->h0, &m->y,  &m->h0, &m->h0,
                                        &m->x,  &m->h0, &m->h0, &m->wx, &m->wh, &m->b};
    if (!rc)
        rc = add_args(c, &s->bwd, a, md, 18, 12, err, errlen);
    if (!rc)
        rc = cpu_prim_fixed(&s->bwd, DNNL_ARG_WORKSPACE, s->wsmem);
    /* oneDNN accumulates into diff weights: they must be the user's
     * buffers (zeroed before each call), not reorder scratch */
    for (int i = 15; i < 18 && !rc; i++)
        if (s->bwd.a[i].prim)
            rc = cpu_fail(dnnl_unimplemented, "lstm backward wants blocked diff weights", err,
                          errlen);
    return rc;
}

/* cpu-bf16 training runs on matmuls (cpu_lstm_gemm.c): oneDNN 2.6's bf16
 * LSTM backward is slower than its fp32 one, the GEMMs' run at the
 * forward's rate (docs/architecture.md has the figures).  Inference and
 * fp32 keep the primitive, as fast or faster there (fp32 training on f32
 * matmuls measured within 4% of it: both run at the sgemm rate). */
static bool use_gemm(const cpu_ctx *c, const dlg_layer *l) { return c->bf16 && l->backward; }

static int lstm_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                      size_t errlen)
{
    lstm_prims *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    lstm_mds m;
    make_mds(l, cpu_act_dt(ctx), &m);
    for (int t = 0; t < l->ntop; t++)
        l->top[t]->layout = NULL;
    if (use_gemm(ctx, l)) {
        int rc = cpu_lstm_gemm_setup(ctx, l, &s->gemm, ws, err, errlen);
        if (rc)
            lstm_destroy(ctx, s);
        else
            *state = s;
        return rc;
    }
    int rc = setup_fwd(ctx, l, s, &m, err, errlen);
    if (!rc && l->backward)
        rc = setup_bwd(ctx, l, s, &m, err, errlen);
    if (!rc && l->backward)
        rc = make_spares(l, s);
    if (rc) {
        lstm_destroy(ctx, s);
        return rc;
    }
    *state = s;
    *ws = s->fwd.ws > s->bwd.ws ? s->fwd.ws : s->bwd.ws;
    return 0;
}

/* Wx and Wh as the forward primitive reads them: the params, or under
 * cpu-bf16 their copies, refreshed if a master moved; false if a copy
 * failed.  The backward primitive runs fp32 only: it reads the params. */
static bool weights(cpu_ctx *c, const dlg_layer *l, lstm_prims *s, void *w[2])
{
    for (int i = 0; i < 2; i++)
        w[i] = s->wq[i].buf ? cpu_wcopy_get(c, &s->wq[i], l->param[i]) : l->param[i]->data;
    return w[0] && w[1];
}

static int lstm_forward(void *ctx, dlg_layer *l, void *state)
{
    if (((lstm_prims *)state)->gemm)
        return cpu_lstm_gemm_forward(ctx, l, ((lstm_prims *)state)->gemm);
    void *w[2];
    if (!weights(ctx, l, state, w))
        return -DLG_EINTERNAL;
    void *p[9] = {l->bottom[0]->data, l->bottom[1]->data, l->bottom[2]->data,
                  w[0],               w[1],               l->param[2]->data,
                  l->top[0]->data,    l->top[1]->data,    l->top[2]->data};
    return cpu_prim_exec(ctx, &((lstm_prims *)state)->fwd, p, l->ws);
}

static int lstm_backward(void *ctx, dlg_layer *l, void *state)
{
    lstm_prims *s = state;
    if (s->gemm)
        return cpu_lstm_gemm_backward(ctx, l, s->gemm);
    void *p[18] = {l->bottom[0]->data, l->bottom[1]->data, l->bottom[2]->data,
                   l->param[0]->data,  l->param[1]->data,  l->param[2]->data,
                   l->top[0]->data,    l->top[1]->data,    l->top[2]->data,
                   l->top[0]->diff,    l->top[1]->diff,    l->top[2]->diff};
    for (int i = 0; i < 6; i++) {
        const dlg_tensor *t = i < 3 ? l->bottom[i] : l->param[i - 3];
        p[12 + i] = diff_or_spare(t, s->spare[i]);
    }
    for (int i = 3; i < 6; i++) /* accumulated into: start from zero */
        memset(p[12 + i], 0, (size_t)l->param[i - 3]->count * sizeof(float));
    return cpu_prim_exec(ctx, &s->bwd, p, l->ws);
}

static const char *lstm_impl(const void *state)
{
    const lstm_prims *s = state;
    return s->gemm ? "matmul" : cpu_impl_name(s->fwd.pd);
}

const dlg_kernels dlg_cpu_lstm = {.setup = lstm_setup,
                                  .forward = lstm_forward,
                                  .backward = lstm_backward,
                                  .destroy = lstm_destroy,
                                  .impl = lstm_impl};
