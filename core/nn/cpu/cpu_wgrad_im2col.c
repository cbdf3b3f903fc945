/* See cpu_wgrad_im2col.h.  The im2col row of output pixel (n, oh, ow) is
 * its KH x KW taps one after another, each the ic channels of one input
 * pixel (a copy out of NHWC), or zeros where the tap falls in the padding;
 * so the matmul's columns are (kh, kw, ic), OHWI order. */
#include "cpu_wgrad_im2col.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int64_t pixels(const cpu_wgrad_shape *s) { return s->N * s->OH * s->OW; }
static int64_t row_len(const cpu_wgrad_shape *s) { return (int64_t)s->KH * s->KW * s->C; }

bool cpu_wgrad_im2col_fits(const cpu_wgrad_shape *s)
{
    return !s->f32_nchw && (size_t)(pixels(s) * row_len(s)) * 2 <= CPU_WGRAD_IM2COL_MAX;
}

dnnl_memory_desc_t cpu_wgrad_im2col_md(const cpu_wgrad_shape *s)
{
    int64_t wd[4] = {s->OC, s->C, s->KH, s->KW};
    return cpu_md(4, wd, dnnl_acdb);
}

int cpu_wgrad_im2col_init(cpu_ctx *c, cpu_im2col_wgrad *w, const cpu_wgrad_shape *s, bool bias)
{
    memset(w, 0, sizeof *w);
    w->s = *s;
    int64_t p = pixels(s), k = row_len(s);
    int64_t ad[2] = {s->OC, p}, bd[2] = {p, k}, cd[2] = {s->OC, k};
    dnnl_memory_desc_t a = cpu_md_dt(2, ad, dnnl_ba, dnnl_bf16), b = cpu_md_dt(2, bd, dnnl_ab, dnnl_bf16),
                       dst = cpu_md(2, cd, dnnl_ab);
    dnnl_matmul_desc_t d;
    char why[256];
    bool ok = dnnl_matmul_desc_init(&d, &a, &b, NULL, &dst) == dnnl_success &&
              cpu_prim_create(c, &w->mm, &d, NULL, why, sizeof why) == 0 &&
              strncmp(cpu_impl_name(w->mm.pd), "brg", 3) == 0 &&
              !cpu_prim_arg(c, &w->mm, DNNL_ARG_SRC, &a, false, why, sizeof why) &&
              !cpu_prim_arg(c, &w->mm, DNNL_ARG_WEIGHTS, &b, false, why, sizeof why) &&
              !cpu_prim_arg(c, &w->mm, DNNL_ARG_DST, &dst, true, why, sizeof why);
    for (int i = 0; i < w->mm.n && ok; i++)
        ok = !w->mm.a[i].reorder;
    if (!ok) {
        cpu_wgrad_im2col_destroy(w);
        return -1;
    }
    w->col_bytes = CPU_ALIGN((size_t)(p * k) * 2);
    if (bias)
        w->bias = (cpu_bn_shape){.rows = p, .C = s->OC, .threads = s->threads};
    return 0;
}

size_t cpu_wgrad_im2col_ws(const cpu_im2col_wgrad *w)
{
    size_t sums = w->bias.rows ? cpu_bn_bf16_scratch(&w->bias) : 0; /* after the matmul */
    return w->col_bytes + (w->mm.ws > sums ? w->mm.ws : sums);
}

/* The im2col rows of output pixels [p0, p1). */
static void im2col_rows(const cpu_wgrad_shape *s, const uint16_t *x, uint16_t *col, int64_t p0, int64_t p1)
{
    size_t bytes = (size_t)s->C * 2;
    for (int64_t p = p0; p < p1; p++) {
        int64_t ow = p % s->OW, oh = p / s->OW % s->OH, n = p / (s->OW * s->OH);
        int64_t ih0 = oh * s->S - s->P, iw0 = ow * s->SW - s->PW;
        uint16_t *to = col + p * row_len(s);
        for (int kh = 0; kh < s->KH; kh++) {
            int64_t ih = ih0 + kh;
            for (int kw = 0; kw < s->KW; kw++, to += s->C) {
                int64_t iw = iw0 + kw;
                if (ih < 0 || ih >= s->H || iw < 0 || iw >= s->W)
                    memset(to, 0, bytes);
                else
                    memcpy(to, x + ((n * s->H + ih) * s->W + iw) * s->C, bytes);
            }
        }
    }
}

int cpu_wgrad_im2col(cpu_ctx *c, cpu_im2col_wgrad *w, const uint16_t *x, const uint16_t *dy, float *dw,
                     float *db, void *ws)
{
    const cpu_wgrad_shape *s = &w->s;
    uint16_t *col = ws;
    int64_t p = pixels(s);
    int team = s->threads > 0 ? s->threads : 1;
#pragma omp parallel num_threads(team)
    {
#ifdef _OPENMP
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        int t = 0, nt = 1;
#endif
        im2col_rows(s, x, col, p * t / nt, p * (t + 1) / nt);
    }
    void *ptrs[3] = {(void *)dy, col, dw};
    int rc = cpu_prim_exec(c, &w->mm, ptrs, (char *)ws + w->col_bytes);
    if (!rc && db && w->bias.rows)
        cpu_bf16_channel_sums(&w->bias, dy, db, (char *)ws + w->col_bytes);
    return rc;
}

void cpu_wgrad_im2col_destroy(cpu_im2col_wgrad *w) { cpu_prim_destroy(&w->mm); }
