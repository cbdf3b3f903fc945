/* The cpu-bf16 LSTM's training path on oneDNN matmuls (cpu_lstm_gemm.h):
 * bf16 inputs and weights, fp32 accumulation, gates, cell state and
 * gradients.  oneDNN 2.6's bf16 LSTM backward takes 3x its forward
 * (PTB-medium's two layers: 72-80 ms against 25 ms), these GEMMs 2.2x
 * (53.5 ms), near the 2x of the arithmetic.  The forward keeps, for
 * backward, the bf16 x and h (h0 first) and the fp32 gates and cells;
 * every buffer is allocated and touched at setup, the matmuls'
 * scratchpads come from the net's workspace. */
#include "cpu_lstm_gemm.h"

#include <stdlib.h>
#include <string.h>

/* x Wx + b (all steps); h' Wh (one step); dh' = dG Wh^T (one step);
 * dx = dG Wx^T, dWx = x^T dG, dWh = h'^T dG (all steps) */
enum { MM_IN, MM_REC, MM_DH, MM_DX, MM_DWX, MM_DWH, MM_N };
/* bf16 copies in the matmuls' layouts: Wx, Wh; Wx^T, Wh^T */
enum { W_X, W_H, W_XT, W_HT, W_N };

struct cpu_lstm_gemm {
    int64_t T, B, I, H;
    cpu_prim mm[MM_N];
    cpu_wcopy w[W_N];
    float *gates; /* T*B x 4H: x Wx + b, then the activated gates */
    float *cell;  /* T*B x H */
    float *rec;   /* B x 4H: h' Wh of the step */
    float *dh;    /* B x H: the gradient into the previous step's h */
    float *dc;    /* B x H: the same of c */
    uint16_t *xb; /* T*B x I: x in bf16 */
    uint16_t *hb; /* (T+1)*B x H: h0, h_1 .. h_T in bf16 */
    uint16_t *dg; /* T*B x 4H: pre-activation gradients in bf16 */
    void *block;  /* holds them all */
};

static dnnl_memory_desc_t md2(int64_t r, int64_t c, dnnl_data_type_t dt, dnnl_format_tag_t tag)
{
    int64_t d[2] = {r, c};
    return cpu_md_dt(2, d, tag, dt);
}

/* dst = src . wei (+ bias); arguments in that order, then bias; the
 * weights' user layout is the primitive's (bf16 copies made for it). */
static int matmul(cpu_ctx *c, cpu_prim *p, dnnl_memory_desc_t src, dnnl_memory_desc_t wei,
                  const dnnl_memory_desc_t *bias, dnnl_memory_desc_t dst, char *err, size_t errlen)
{
    dnnl_matmul_desc_t d;
    dnnl_status_t st = dnnl_matmul_desc_init(&d, &src, &wei, bias, &dst);
    if (st != dnnl_success)
        return cpu_fail(st, "lstm matmul desc", err, errlen);
    int rc = cpu_prim_create(c, p, &d, NULL, err, errlen);
    int a[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS};
    for (int i = 0; i < (bias ? 4 : 3) && !rc; i++)
        rc = cpu_prim_arg(c, p, a[i], NULL, i == 2, err, errlen);
    return rc;
}

/* One matmul's operands: rows x cols and layout of src, weights, dst
 * (dst plain); whether it adds the bias. */
typedef struct mm_spec {
    int64_t d[6];
    dnnl_format_tag_t src, wei;
    bool bias;
} mm_spec;

static int make_matmuls(cpu_ctx *c, cpu_lstm_gemm *s, char *err, size_t errlen)
{
    int64_t TB = s->T * s->B, B = s->B, I = s->I, H = s->H, G4 = 4 * H;
    const dnnl_format_tag_t ab = dnnl_ab, any = dnnl_format_tag_any;
    /* x^T and h'^T (dWx, dWh): the row-major bf16 buffers read as ba */
    const mm_spec spec[MM_N] = {
        [MM_IN] = {{TB, I, I, G4, TB, G4}, ab, any, true},
        [MM_REC] = {{B, H, H, G4, B, G4}, ab, any, false},
        [MM_DH] = {{B, G4, G4, H, B, H}, ab, any, false},
        [MM_DX] = {{TB, G4, G4, I, TB, I}, ab, any, false},
        [MM_DWX] = {{I, TB, TB, G4, I, G4}, dnnl_ba, ab, false},
        [MM_DWH] = {{H, TB, TB, G4, H, G4}, dnnl_ba, ab, false},
    };
    dnnl_memory_desc_t bias = md2(1, G4, dnnl_f32, ab);
    int rc = 0;
    for (int k = 0; k < MM_N && !rc; k++) {
        const int64_t *d = spec[k].d;
        rc = matmul(c, &s->mm[k], md2(d[0], d[1], dnnl_bf16, spec[k].src),
                    md2(d[2], d[3], dnnl_bf16, spec[k].wei), spec[k].bias ? &bias : NULL,
                    md2(d[4], d[5], dnnl_f32, ab), err, errlen);
    }
    return rc;
}

/* The bf16 weight copies, from the fp32 ldigo params (Wx I x 4H, Wh
 * H x 4H; their transposes read as ba) into the matmuls' layouts. */
static int make_copies(cpu_lstm_gemm *s)
{
    int64_t I = s->I, H = s->H, G4 = 4 * H;
    const dnnl_format_tag_t ab = dnnl_ab, ba = dnnl_ba;
    dnnl_memory_desc_t from[W_N] = {md2(I, G4, dnnl_f32, ab), md2(H, G4, dnnl_f32, ab),
                                    md2(G4, I, dnnl_f32, ba), md2(G4, H, dnnl_f32, ba)};
    const int mm[W_N] = {MM_IN, MM_REC, MM_DX, MM_DH};
    for (int k = 0; k < W_N; k++) {
        const dnnl_memory_desc_t *to =
            dnnl_primitive_desc_query_md(s->mm[mm[k]].pd, dnnl_query_weights_md, 0);
        int rc = to ? cpu_wcopy_init(&s->w[k], &from[k], to) : -DLG_EINTERNAL;
        if (rc)
            return rc;
    }
    return 0;
}

/* Every buffer in one block (64-byte aligned parts), its pages touched
 * now rather than in the first timed step. */
static int make_buffers(cpu_lstm_gemm *s)
{
    int64_t TB = s->T * s->B, BH = s->B * s->H, G4 = 4 * s->H;
    size_t f = sizeof(float), h = sizeof(uint16_t);
    size_t sz[8] = {CPU_ALIGN((size_t)(TB * G4) * f), CPU_ALIGN((size_t)(TB * s->H) * f),
                    CPU_ALIGN((size_t)(s->B * G4) * f), CPU_ALIGN((size_t)BH * f),
                    CPU_ALIGN((size_t)BH * f), CPU_ALIGN((size_t)(TB * s->I) * h),
                    CPU_ALIGN((size_t)(TB * s->H + BH) * h), CPU_ALIGN((size_t)(TB * G4) * h)};
    size_t off[8], total = 0;
    for (int i = 0; i < 8; i++) {
        off[i] = total;
        total += sz[i];
    }
    if (posix_memalign(&s->block, 64, total) != 0) {
        s->block = NULL;
        return -DLG_ENOMEM;
    }
    memset(s->block, 0, total);
    char *p = s->block;
    s->gates = (float *)(p + off[0]);
    s->cell = (float *)(p + off[1]);
    s->rec = (float *)(p + off[2]);
    s->dh = (float *)(p + off[3]);
    s->dc = (float *)(p + off[4]);
    s->xb = (uint16_t *)(p + off[5]);
    s->hb = (uint16_t *)(p + off[6]);
    s->dg = (uint16_t *)(p + off[7]);
    return 0;
}

void cpu_lstm_gemm_destroy(cpu_lstm_gemm *s)
{
    if (!s)
        return;
    for (int k = 0; k < MM_N; k++)
        cpu_prim_destroy(&s->mm[k]);
    for (int k = 0; k < W_N; k++)
        cpu_wcopy_destroy(&s->w[k]);
    free(s->block);
    free(s);
}

int cpu_lstm_gemm_setup(cpu_ctx *c, const dlg_layer *l, cpu_lstm_gemm **out, size_t *ws, char *err,
                        size_t errlen)
{
    cpu_lstm_gemm *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    dlg_lstm_dims d = dlg_lstm_dims_of(l);
    s->T = d.T, s->B = d.B, s->I = d.I, s->H = d.H;
    int rc = make_matmuls(c, s, err, errlen);
    if (!rc)
        rc = make_copies(s);
    if (!rc)
        rc = make_buffers(s);
    if (rc) {
        cpu_lstm_gemm_destroy(s);
        return rc;
    }
    *ws = 0;
    for (int k = 0; k < MM_N; k++)
        *ws = s->mm[k].ws > *ws ? s->mm[k].ws : *ws;
    *out = s;
    return 0;
}

int cpu_lstm_gemm_forward(cpu_ctx *c, dlg_layer *l, cpu_lstm_gemm *s)
{
    int64_t T = s->T, B = s->B, H = s->H, BH = B * H, G4 = 4 * H;
    void *wx = cpu_wcopy_get(c, &s->w[W_X], l->param[0]);
    void *wh = cpu_wcopy_get(c, &s->w[W_H], l->param[1]);
    if (!wx || !wh)
        return -DLG_EINTERNAL;
    const float *c0 = l->bottom[2]->data;
    float *y = l->top[0]->data;
    cpu_lstm_to_bf16(l->bottom[0]->data, s->xb, T * B * s->I);
    cpu_lstm_to_bf16(l->bottom[1]->data, s->hb, BH);
    void *in[4] = {s->xb, wx, s->gates, l->param[2]->data};
    int rc = cpu_prim_exec(c, &s->mm[MM_IN], in, l->ws);
    for (int64_t t = 0; t < T && !rc; t++) {
        void *rec[3] = {s->hb + t * BH, wh, s->rec};
        rc = cpu_prim_exec(c, &s->mm[MM_REC], rec, l->ws);
        if (!rc)
            cpu_lstm_cell_fwd(B, H, s->gates + t * B * G4, s->rec,
                              t ? s->cell + (t - 1) * BH : c0, s->cell + t * BH, y + t * BH,
                              s->hb + (t + 1) * BH);
    }
    memcpy(l->top[1]->data, y + (T - 1) * BH, (size_t)BH * sizeof(float));
    memcpy(l->top[2]->data, s->cell + (T - 1) * BH, (size_t)BH * sizeof(float));
    return rc;
}

/* dh, dc from the final states' gradients (none: zero). */
static void start_state(const dlg_layer *l, cpu_lstm_gemm *s)
{
    size_t bytes = (size_t)(s->B * s->H) * sizeof(float);
    const float *dhT = l->top[1]->diff, *dcT = l->top[2]->diff;
    if (dhT)
        memcpy(s->dh, dhT, bytes);
    else
        memset(s->dh, 0, bytes);
    if (dcT)
        memcpy(s->dc, dcT, bytes);
    else
        memset(s->dc, 0, bytes);
}

/* dx and the parameters' gradients, one GEMM (column sums) each. */
static int grads(cpu_ctx *c, dlg_layer *l, cpu_lstm_gemm *s)
{
    int rc = 0;
    if (l->prop_down[0]) {
        void *wxt = cpu_wcopy_get(c, &s->w[W_XT], l->param[0]);
        void *dx[3] = {s->dg, wxt, l->bottom[0]->diff};
        rc = wxt ? cpu_prim_exec(c, &s->mm[MM_DX], dx, l->ws) : -DLG_EINTERNAL;
    }
    if (rc || !l->param_grad)
        return rc;
    void *dwx[3] = {s->xb, s->dg, l->param[0]->diff}, *dwh[3] = {s->hb, s->dg, l->param[1]->diff};
    rc = cpu_prim_exec(c, &s->mm[MM_DWX], dwx, l->ws);
    if (!rc)
        rc = cpu_prim_exec(c, &s->mm[MM_DWH], dwh, l->ws);
    if (!rc)
        cpu_lstm_colsum(s->dg, s->T * s->B, 4 * s->H, l->param[2]->diff);
    return rc;
}

int cpu_lstm_gemm_backward(cpu_ctx *c, dlg_layer *l, cpu_lstm_gemm *s)
{
    int64_t T = s->T, B = s->B, H = s->H, BH = B * H, G4 = 4 * H;
    void *wht = cpu_wcopy_get(c, &s->w[W_HT], l->param[1]);
    if (!wht)
        return -DLG_EINTERNAL;
    const float *c0 = l->bottom[2]->data, *dy = l->top[0]->diff;
    start_state(l, s);
    int rc = 0;
    for (int64_t t = T - 1; t >= 0 && !rc; t--) {
        uint16_t *dg = s->dg + t * B * G4;
        cpu_lstm_cell_bwd(B, H, s->gates + t * B * G4, t ? s->cell + (t - 1) * BH : c0,
                          s->cell + t * BH, dy + t * BH, s->dh, s->dc, dg);
        void *dh[3] = {dg, wht, s->dh};
        if (t > 0 || l->prop_down[1])
            rc = cpu_prim_exec(c, &s->mm[MM_DH], dh, l->ws);
    }
    if (!rc && l->prop_down[1])
        memcpy(l->bottom[1]->diff, s->dh, (size_t)BH * sizeof(float));
    if (!rc && l->prop_down[2])
        memcpy(l->bottom[2]->diff, s->dc, (size_t)BH * sizeof(float));
    return rc ? rc : grads(c, l, s);
}
