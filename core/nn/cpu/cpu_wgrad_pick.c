/* oneDNN 2.6's AMX backward weights against our kernels, timed (see
 * cpu_wgrad_pick.h).  Fixed rules stood here first, drawn from one
 * machine's timings (2 threads, in isolation): cpu_wgrad_amx 2.2-3.3x
 * faster on 3-channel first layers and 1.4-1.9x on Inception-v3's
 * 32-channel stem at 147 wide, but 0.36x on GoogLeNet's 16-channel 5x5
 * layer at 28 x 28, where the fixed cost of its chunks outweighs a small
 * product; the im2col and matmul 1.1-3.6x on ResNet-50's 3x3 layers over
 * 14 x 14 or fewer pixels, 0.3-0.5x over 28 x 28 and more.  Where those
 * lines fall moves with the core count (cpu_wgrad_amx's threads sum
 * private copies of the gradient) and the cache sizes, so each host
 * finds them for itself.  oneDNN's kernel is timed as a plan runs it: from
 * the tensors' layouts (the net's fp32 NCHW input, or NHWC bf16), through
 * any reorder into its kernel's, into the gradient's own layout (the
 * master takes it, cpu_conv_setup.c). */
#include "cpu_wgrad_pick.h"
#include "cpu_plan_time.h"
#include "cpu_wgrad_im2col.h"

#include "../tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMED_BYTES ((int64_t)64 << 20)

static const char *const kind_names[CPU_WGRAD_KINDS] = {"onednn", "amx", "im2col"};
static const char *const kind_said[CPU_WGRAD_KINDS] = {"oneDNN", "cpu_wgrad_amx", "im2col + matmul"};

/* The batch all are timed on: the layer's, or as many images as keep its
 * input and output gradient within 64 MiB (VGG16's first layer at batch
 * 16 would take 113 MB, all of it first-touched). */
static int64_t timed_batch(const cpu_wgrad_shape *s)
{
    int64_t per = s->C * s->H * s->W * (s->f32_nchw ? 4 : 2) + s->OC * s->OH * s->OW * 2;
    int64_t n = per > 0 ? TIMED_BYTES / per : 1;
    return n < 1 ? 1 : n > s->N ? s->N : n;
}

/* Every kernel's arguments, in one zeroed buffer. */
typedef struct bench {
    cpu_ctx *c;
    cpu_wgrad_shape s;         /* at the timed batch */
    dnnl_primitive_desc_t fwd; /* oneDNN's hint, kept while onednn lives */
    cpu_prim onednn;           /* its backward weights */
    cpu_im2col_wgrad im2col;
    bool bias, has_im2col;
    char *buf;
    void *x, *dy, *dw, *db, *ws;
} bench;

static int run_onednn(void *arg)
{
    bench *b = arg;
    void *ptrs[4] = {b->x, b->dy, b->dw, b->db};
    return cpu_prim_exec(b->c, &b->onednn, ptrs, b->ws);
}

static int run_amx(void *arg)
{
    bench *b = arg;
    cpu_wgrad_amx(&b->s, b->x, b->dy, b->dw, b->db, b->ws);
    return 0;
}

static int run_im2col(void *arg)
{
    bench *b = arg;
    return cpu_wgrad_im2col(b->c, &b->im2col, b->x, b->dy, b->dw, b->db, b->ws);
}

/* oneDNN's backward weights for b->s, as cpu_conv_setup.c makes it (the
 * forward's pd for a hint): 0, or -1 where oneDNN has none. */
static int onednn_prim(bench *b)
{
    const cpu_wgrad_shape *s = &b->s;
    int64_t xd[4] = {s->N, s->C, s->H, s->W}, yd[4] = {s->N, s->OC, s->OH, s->OW};
    int64_t wd[4] = {s->OC, s->C, s->KH, s->KW}, bd[1] = {s->OC};
    dnnl_memory_desc_t x_any = cpu_md_dt(4, xd, dnnl_format_tag_any, dnnl_bf16);
    dnnl_memory_desc_t y_any = cpu_md_dt(4, yd, dnnl_format_tag_any, dnnl_bf16);
    dnnl_memory_desc_t w_any = cpu_md_dt(4, wd, dnnl_format_tag_any, dnnl_bf16);
    dnnl_memory_desc_t dw_any = cpu_md(4, wd, dnnl_format_tag_any), bias = cpu_md(1, bd, dnnl_x);
    dnnl_memory_desc_t x = s->f32_nchw ? cpu_md(4, xd, dnnl_nchw) : cpu_md_dt(4, xd, dnnl_acdb, dnnl_bf16);
    dnnl_memory_desc_t y = cpu_md_dt(4, yd, dnnl_acdb, dnnl_bf16);
    dnnl_dims_t st = {s->S, s->SW}, dil = {0, 0}, pad = {s->P, s->PW};
    dnnl_convolution_desc_t d;
    dnnl_primitive_attr_t attr = cpu_attr();
    char err[256];
    bool ok = attr && dnnl_dilated_convolution_forward_desc_init(&d, dnnl_forward_training, dnnl_convolution_direct,
                                                                  &x_any, &w_any, b->bias ? &bias : NULL, &y_any, st,
                                                                  dil, pad, pad) == dnnl_success &&
              dnnl_primitive_desc_create(&b->fwd, &d, attr, b->c->eng, NULL) == dnnl_success &&
              dnnl_dilated_convolution_backward_weights_desc_init(&d, dnnl_convolution_direct, &x_any, &dw_any,
                                                                   b->bias ? &bias : NULL, &y_any, st, dil, pad,
                                                                   pad) == dnnl_success &&
              !cpu_prim_create(b->c, &b->onednn, &d, b->fwd, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->onednn, DNNL_ARG_SRC, &x, false, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->onednn, DNNL_ARG_DIFF_DST, &y, false, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->onednn, DNNL_ARG_DIFF_WEIGHTS, NULL, true, err, sizeof err) &&
              (!b->bias || !cpu_prim_arg(b->c, &b->onednn, DNNL_ARG_DIFF_BIAS, NULL, true, err, sizeof err));
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return ok ? 0 : -1;
}

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* The buffers all read and write, zeroed (no denormals): 0, or -1. */
static int bench_buffers(bench *b, unsigned can)
{
    const cpu_wgrad_shape *s = &b->s;
    const dnnl_memory_desc_t *dwmd = dnnl_primitive_desc_query_md(b->onednn.pd, dnnl_query_diff_weights_md, 0);
    size_t ws = b->onednn.ws;
    if (can & 1u << CPU_WGRAD_AMX)
        ws = max_size(ws, cpu_wgrad_amx_scratch(s));
    if (b->has_im2col)
        ws = max_size(ws, cpu_wgrad_im2col_ws(&b->im2col));
    size_t sizes[5] = {(size_t)(s->N * s->C * s->H * s->W) * (s->f32_nchw ? 4 : 2),
                       (size_t)(s->N * s->OC * s->OH * s->OW) * 2,
                       max_size(dnnl_memory_desc_get_size(dwmd), (size_t)(s->OC * s->C * s->KH * s->KW) * 4),
                       (size_t)s->OC * 4, ws};
    void **at[5] = {&b->x, &b->dy, &b->dw, &b->db, &b->ws};
    if (!(b->buf = cpu_zeroed_buffers(sizes, at, 5)))
        return -1;
    if (!b->bias)
        b->db = NULL;
    return 0;
}

/* What time_all times. */
typedef struct timing {
    cpu_ctx *c;
    const dlg_layer *l;
    const cpu_wgrad_shape *s;
    unsigned can;
} timing;

/* Times oneDNN's and ours in can into t[kind] (-1: not timed): 0; 1
 * where oneDNN has no kernel for the layer (ours are then the only ones,
 * t untimed); -1 where one cannot run or the plan was asked to stop. */
static int time_all(void *arg, double *t)
{
    const timing *tm = arg;
    cpu_ctx *c = tm->c;
    const dlg_layer *l = tm->l;
    const cpu_wgrad_shape *s = tm->s;
    unsigned can = tm->can;
    static int (*const runs[CPU_WGRAD_KINDS])(void *) = {run_onednn, run_amx, run_im2col};
    bench b = {.c = c, .s = *s, .bias = l->p.conv.bias};
    b.s.N = timed_batch(s);
    int rc = onednn_prim(&b) != 0 ? 1 : 0;
    if (!rc && (can & 1u << CPU_WGRAD_IM2COL))
        b.has_im2col = cpu_wgrad_im2col_init(c, &b.im2col, &b.s, b.bias) == 0;
    if (!rc && bench_buffers(&b, can) != 0)
        rc = -1;
    for (int k = 0; k < CPU_WGRAD_KINDS && rc == 0; k++) {
        if (k != CPU_WGRAD_ONEDNN && !(can & 1u << k))
            continue;
        if (c->stop && c->stop(c->stop_ctx))
            rc = -1;
        else if (k != CPU_WGRAD_IM2COL || b.has_im2col)
            t[k] = cpu_time_best(runs[k], &b);
    }
    free(b.buf);
    if (b.has_im2col)
        cpu_wgrad_im2col_destroy(&b.im2col);
    cpu_prim_destroy(&b.onednn);
    if (b.fwd)
        dnnl_primitive_desc_destroy(b.fwd);
    return rc == 0 && t[CPU_WGRAD_ONEDNN] <= 0 ? -1 : rc;
}

/* The record's key: everything that can change which is faster (the CPU
 * is the record's own) and which of ours were offered; "wgrad2" is the
 * version of our kernels, to be raised when a change to one could move
 * the lines. */
static void tune_key(const cpu_wgrad_shape *s, bool bias, unsigned can, char *key, size_t n)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(key, n, "wgrad2:dnnl%d.%d.%d:t%d:n%lldc%lldh%lldw%lld:o%lld:k%dx%d:s%dx%d:p%dx%d:%s:%s:%s%s", v->major,
             v->minor, v->patch, s->threads, (long long)s->N, (long long)s->C, (long long)s->H, (long long)s->W,
             (long long)s->OC, s->KH, s->KW, s->S, s->SW, s->P, s->PW, bias ? "bias" : "nobias", s->f32_nchw ? "xf32" : "xbf16",
             can & 1u << CPU_WGRAD_AMX ? "amx" : "", can & 1u << CPU_WGRAD_IM2COL ? "im2col" : "");
}

cpu_wgrad_kind cpu_wgrad_pick(cpu_ctx *c, const dlg_layer *l, const cpu_wgrad_shape *s, unsigned can)
{
    static const cpu_tune_menu menu = {kind_names, kind_said, CPU_WGRAD_KINDS, 0, "DLG_NN_WGRAD_TIMES"};
    cpu_tune_menu m = menu;
    m.can = can;
    char key[DLG_TUNE_KEY_MAX], what[160], how[40];
    tune_key(s, l->p.conv.bias, can, key, sizeof key);
    snprintf(what, sizeof what, "%s's weight gradient", l->name);
    snprintf(how, sizeof how, "at batch %lld", (long long)timed_batch(s));
    timing tm = {c, l, s, can};
    return (cpu_wgrad_kind)cpu_tuned_pick(c, key, &m, time_all, &tm, what, how);
}
