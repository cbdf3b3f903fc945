/* See cpu_fc_wgrad.h.  Four rows of dW at a time, sixteen columns a step:
 * each column vector of x (fp32, in the scratch) feeds four FMAs, and the
 * four sums go to memory once, past the caches where the rows are
 * aligned (streaming stores: dW is read next by SGD, long after). */
#include "cpu_fc_wgrad.h"
#include "cpu_bf16_simd.h"
#include "cpu_plan_time.h"

#include "../tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define ROWS 4
#define MAX_B 64

bool cpu_fc_wgrad_fits(const cpu_fc_wgrad_shape *s)
{
    return s->B >= 1 && s->B <= MAX_B && s->I >= 1 && s->O >= 1 && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
}

static int64_t up16(int64_t v) { return (v + 15) / 16 * 16; }

size_t cpu_fc_wgrad_scratch(const cpu_fc_wgrad_shape *s)
{
    return (size_t)(s->B * up16(s->I) + s->B * up16(s->O)) * sizeof(float);
}

/* to[b][i] = from[b][i], rounded through bf16 where s->bf16, rows padded
 * to 16 with zeros. */
BF16_TARGET static void stage(const cpu_fc_wgrad_shape *s, const float *from, int64_t n, float *to)
{
    int64_t np = up16(n);
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t i = 0; i < np; i += 16) {
            __mmask16 m = bf16_lanes(n - i);
            __m512 v = _mm512_maskz_loadu_ps(m, from + b * n + i);
            if (s->bf16)
                v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bf16_narrow(v)), 16));
            _mm512_store_ps(to + b * np + i, v);
        }
}

/* Rows [o0, o0 + rows) of dW, rows <= ROWS. */
BF16_TARGET static void rows_of(const cpu_fc_wgrad_shape *s, const float *x, const float *dy, int64_t o0, int rows,
                                float *dw)
{
    int64_t ip = up16(s->I), op = up16(s->O);
    float a[ROWS][MAX_B];
    for (int r = 0; r < ROWS; r++)
        for (int64_t b = 0; b < s->B; b++)
            a[r][b] = r < rows ? dy[b * op + o0 + r] : 0.0f;
    bool stream = s->I % 16 == 0 && ((uintptr_t)(dw + o0 * s->I) & 63) == 0;
    for (int64_t i = 0; i < ip; i += 16) {
        /* four named sums: an array of them stays in memory at -O2 */
        __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
        for (int64_t b = 0; b < s->B; b++) {
            __m512 xv = _mm512_load_ps(x + b * ip + i);
            c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[0][b]), xv, c0);
            c1 = _mm512_fmadd_ps(_mm512_set1_ps(a[1][b]), xv, c1);
            c2 = _mm512_fmadd_ps(_mm512_set1_ps(a[2][b]), xv, c2);
            c3 = _mm512_fmadd_ps(_mm512_set1_ps(a[3][b]), xv, c3);
        }
        __m512 c[ROWS] = {c0, c1, c2, c3};
        __mmask16 m = bf16_lanes(s->I - i);
        for (int r = 0; r < rows; r++) {
            float *to = dw + (o0 + r) * s->I + i;
            if (stream)
                _mm512_stream_ps(to, c[r]);
            else
                _mm512_mask_storeu_ps(to, m, c[r]);
        }
    }
}

void cpu_fc_wgrad(const cpu_fc_wgrad_shape *s, const float *x, const float *dy, float *dw, float *db,
                  void *scratch)
{
    float *xs = scratch, *ds = xs + s->B * up16(s->I);
    int team = s->threads > 0 ? s->threads : 1;
    stage(s, x, s->I, xs);
    stage(s, dy, s->O, ds);
    int64_t blocks = (s->O + ROWS - 1) / ROWS;
#pragma omp parallel num_threads(team)
    {
#pragma omp for schedule(static)
        for (int64_t k = 0; k < blocks; k++) {
            int64_t o0 = k * ROWS;
            rows_of(s, xs, ds, o0, s->O - o0 < ROWS ? (int)(s->O - o0) : ROWS, dw);
        }
        _mm_sfence(); /* each thread's streaming stores before anyone reads dW */
    }
    for (int64_t o = 0; db && o < s->O; o++) {
        float sum = 0;
        for (int64_t b = 0; b < s->B; b++)
            sum += ds[b * up16(s->O) + o];
        db[o] = sum;
    }
}

#define TIMED_BYTES ((int64_t)32 << 20)

/* What time_both times: oneDNN's primitive and ours on zeroed buffers, at
 * the timed outputs. */
typedef struct bench {
    cpu_ctx *c;
    cpu_fc_wgrad_shape s;
    dnnl_primitive_desc_t fwd; /* oneDNN's hint, kept while onednn lives */
    cpu_prim onednn;
    float *x, *dy, *dw, *db;
    void *ws;
} bench;

static int run_onednn(void *arg)
{
    bench *b = arg;
    void *ptrs[4] = {b->x, b->dy, b->dw, b->db};
    return cpu_prim_exec(b->c, &b->onednn, ptrs, b->ws);
}

static int run_ours(void *arg)
{
    bench *b = arg;
    cpu_fc_wgrad(&b->s, b->x, b->dy, b->dw, b->db, b->ws);
    return 0;
}

/* oneDNN's backward weights for b->s as cpu_conv.c's fc_setup makes it for
 * a plain input: fp32 tensors (bf16 in the kernel under cpu-bf16), the
 * forward's pd for a hint: 0, or -1. */
static int onednn_prim(bench *b)
{
    const cpu_fc_wgrad_shape *s = &b->s;
    int64_t sd[2] = {s->B, s->I}, wd[2] = {s->O, s->I}, dd[2] = {s->B, s->O}, bd[1] = {s->O};
    dnnl_data_type_t dt = s->bf16 ? dnnl_bf16 : dnnl_f32;
    dnnl_memory_desc_t src = cpu_md(2, sd, dnnl_nc), dst = cpu_md(2, dd, dnnl_nc), w = cpu_md(2, wd, dnnl_oi);
    dnnl_memory_desc_t bias = cpu_md(1, bd, dnnl_x), src_k = cpu_md_dt(2, sd, dnnl_nc, dt),
                       dst_k = cpu_md_dt(2, dd, dnnl_nc, dt),
                       w_any = s->bf16 ? cpu_md_dt(2, wd, dnnl_format_tag_any, dnnl_bf16) : w;
    dnnl_inner_product_desc_t d;
    dnnl_primitive_attr_t attr = cpu_attr();
    char err[256];
    bool ok = attr && dnnl_inner_product_forward_desc_init(&d, dnnl_forward_training, &src_k, &w_any, &bias, &dst) ==
                          dnnl_success &&
              dnnl_primitive_desc_create(&b->fwd, &d, attr, b->c->eng, NULL) == dnnl_success &&
              dnnl_inner_product_backward_weights_desc_init(&d, &src_k, &w, &bias, &dst_k) == dnnl_success &&
              !cpu_prim_create(b->c, &b->onednn, &d, b->fwd, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->onednn, DNNL_ARG_SRC, &src, false, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->onednn, DNNL_ARG_DIFF_DST, &dst, false, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->onednn, DNNL_ARG_DIFF_WEIGHTS, &w, true, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->onednn, DNNL_ARG_DIFF_BIAS, &bias, true, err, sizeof err);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return ok ? 0 : -1;
}

static int time_both(void *arg, double *t)
{
    bench *b = arg;
    const cpu_fc_wgrad_shape *s = &b->s;
    if (onednn_prim(b) != 0)
        return 1;
    size_t ours = cpu_fc_wgrad_scratch(s);
    size_t sizes[5] = {(size_t)(s->B * s->I) * 4, (size_t)(s->B * s->O) * 4, (size_t)(s->O * s->I) * 4,
                       (size_t)s->O * 4, b->onednn.ws > ours ? b->onednn.ws : ours};
    void **at[5] = {(void **)&b->x, (void **)&b->dy, (void **)&b->dw, (void **)&b->db, &b->ws};
    char *buf = cpu_zeroed_buffers(sizes, at, 5);
    if (!buf)
        return -1;
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        if (b->c->stop && b->c->stop(b->c->stop_ctx))
            rc = -1;
        else
            t[k] = cpu_time_best(k ? run_ours : run_onednn, b);
    }
    free(buf);
    return rc;
}

bool cpu_fc_wgrad_picked(cpu_ctx *c, const dlg_layer *l, const cpu_fc_wgrad_shape *s)
{
    static const char *const names[2] = {"onednn", "outer"}, *const said[2] = {"oneDNN", "cpu_fc_wgrad"};
    const cpu_tune_menu menu = {names, said, 2, 1u << 1, "DLG_NN_FC_WGRAD_TIMES"};
    const dnnl_version_t *v = dnnl_version();
    char key[DLG_TUNE_KEY_MAX], what[160], how[64];
    snprintf(key, sizeof key, "fcwgrad1:dnnl%d.%d.%d:t%d:b%lldi%lldo%lld:%s", v->major, v->minor, v->patch,
             s->threads, (long long)s->B, (long long)s->I, (long long)s->O, s->bf16 ? "bf16" : "f32");
    snprintf(what, sizeof what, "%s's weight gradient", l->name);
    bench b = {.c = c, .s = *s};
    int64_t rows = TIMED_BYTES / (s->I * 4) / ROWS * ROWS;
    b.s.O = rows < ROWS ? ROWS : rows < s->O ? rows : s->O;
    snprintf(how, sizeof how, "on %lld of its %lld outputs", (long long)b.s.O, (long long)s->O);
    int pick = cpu_tuned_pick(c, key, &menu, time_both, &b, what, how);
    cpu_prim_destroy(&b.onednn);
    if (b.fwd)
        dnnl_primitive_desc_destroy(b.fwd);
    return pick == 1;
}
