/* cpu_wgrad_amx against oneDNN 2.6's AMX backward weights, timed (see
 * cpu_wgrad_pick.h).  A fixed rule stood here first, drawn from one
 * machine's timings (2 threads, in isolation): 3-channel first layers
 * 2.2-3.3x faster on cpu_wgrad_amx, Inception-v3's 32-channel stem at
 * 147 wide 1.4-1.9x, but GoogLeNet's 16-channel 5x5 layer at 28 x 28
 * 0.36x, where the fixed cost of its chunks outweighs a small product.
 * Where that line falls moves with the core count (the kernel's threads
 * sum private copies of the gradient) and the cache sizes, so each host
 * finds it for itself.  oneDNN's side is timed as a plan runs it: from
 * the tensors' layouts (the net's fp32 NCHW input, or NHWC bf16), through
 * any reorder into its kernel's, into the gradient's own layout (the
 * master takes it, cpu_conv_setup.c). */
#include "cpu_wgrad_pick.h"
#include "cpu_plan_time.h"

#include "../tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMX_MARGIN 0.9
#define TIMED_BYTES ((int64_t)64 << 20)

/* The batch both are timed on: the layer's, or as many images as keep
 * its input and output gradient within 64 MiB (VGG16's first layer at
 * batch 16 would take 113 MB, all of it first-touched). */
static int64_t timed_batch(const cpu_wgrad_shape *s)
{
    int64_t per = s->C * s->H * s->W * (s->f32_nchw ? 4 : 2) + s->OC * s->OH * s->OW * 2;
    int64_t n = per > 0 ? TIMED_BYTES / per : 1;
    return n < 1 ? 1 : n > s->N ? s->N : n;
}

/* Both kernels' arguments, in one zeroed buffer. */
typedef struct bench {
    cpu_ctx *c;
    cpu_wgrad_shape s; /* at the timed batch */
    dnnl_primitive_desc_t fwd; /* oneDNN's hint, kept while p lives */
    cpu_prim p;                /* oneDNN's backward weights */
    bool bias;
    char *buf;
    void *x, *dy, *dw, *db, *ws;
} bench;

static int run_onednn(void *arg)
{
    bench *b = arg;
    void *ptrs[4] = {b->x, b->dy, b->dw, b->db};
    return cpu_prim_exec(b->c, &b->p, ptrs, b->ws);
}

static int run_amx(void *arg)
{
    bench *b = arg;
    cpu_wgrad_amx(&b->s, b->x, b->dy, b->dw, b->db, b->ws);
    return 0;
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
    dnnl_dims_t st = {s->S, s->S}, dil = {0, 0}, pad = {s->P, s->P};
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
              !cpu_prim_create(b->c, &b->p, &d, b->fwd, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->p, DNNL_ARG_SRC, &x, false, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->p, DNNL_ARG_DIFF_DST, &y, false, err, sizeof err) &&
              !cpu_prim_arg(b->c, &b->p, DNNL_ARG_DIFF_WEIGHTS, NULL, true, err, sizeof err) &&
              (!b->bias || !cpu_prim_arg(b->c, &b->p, DNNL_ARG_DIFF_BIAS, NULL, true, err, sizeof err));
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return ok ? 0 : -1;
}

/* The buffers both read and write, zeroed (no denormals): 0, or -1. */
static int bench_buffers(bench *b)
{
    const cpu_wgrad_shape *s = &b->s;
    const dnnl_memory_desc_t *dwmd = dnnl_primitive_desc_query_md(b->p.pd, dnnl_query_diff_weights_md, 0);
    size_t amx = cpu_wgrad_amx_scratch(s);
    size_t sizes[5] = {(size_t)(s->N * s->C * s->H * s->W) * (s->f32_nchw ? 4 : 2),
                       (size_t)(s->N * s->OC * s->OH * s->OW) * 2, dnnl_memory_desc_get_size(dwmd),
                       (size_t)s->OC * 4, amx > b->p.ws ? amx : b->p.ws};
    size_t total = 0;
    for (int i = 0; i < 5; i++)
        total += CPU_ALIGN(sizes[i]);
    if (posix_memalign((void **)&b->buf, 64, total) != 0) {
        b->buf = NULL;
        return -1;
    }
    memset(b->buf, 0, total);
    void **at[5] = {&b->x, &b->dy, &b->dw, &b->db, &b->ws};
    size_t off = 0;
    for (int i = 0; i < 5; i++) {
        *at[i] = b->buf + off;
        off += CPU_ALIGN(sizes[i]);
    }
    if (!b->bias)
        b->db = NULL;
    return 0;
}

/* Test hook: DLG_NN_WGRAD_TIMES="<oneDNN s>,<amx s>" stands for both. */
static bool fake_times(double *t_onednn, double *t_amx)
{
    const char *env = getenv("DLG_NN_WGRAD_TIMES");
    return env && sscanf(env, "%lf,%lf", t_onednn, t_amx) == 2;
}

/* Times both into t[0] (oneDNN) and t[1] (amx): 0; 1 where oneDNN has no
 * kernel for the layer (cpu_wgrad_amx is then the only one); -1 where
 * one cannot run or the plan was asked to stop first. */
static int time_both(cpu_ctx *c, const dlg_layer *l, const cpu_wgrad_shape *s, double t[2])
{
    bench b = {.c = c, .s = *s, .bias = l->p.conv.bias};
    b.s.N = timed_batch(s);
    if (fake_times(&t[0], &t[1]))
        return 0;
    int rc = onednn_prim(&b) != 0 ? 1 : bench_buffers(&b) != 0 ? -1 : 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        t[i] = c->stop && c->stop(c->stop_ctx) ? -1 : cpu_time_best(i ? run_amx : run_onednn, &b);
        rc = t[i] > 0 ? 0 : -1;
    }
    free(b.buf);
    cpu_prim_destroy(&b.p);
    if (b.fwd)
        dnnl_primitive_desc_destroy(b.fwd);
    return rc;
}

/* The record's key: everything that can change which is faster (the CPU
 * is the record's own); "amx1" is cpu_wgrad_amx's version, to be raised
 * when a change to it could move the line. */
static void tune_key(const cpu_wgrad_shape *s, bool bias, char *key, size_t n)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(key, n, "wgrad:amx1:dnnl%d.%d.%d:t%d:n%lldc%lldh%lldw%lld:o%lld:k%dx%d:s%d:p%d:%s:%s", v->major,
             v->minor, v->patch, s->threads, (long long)s->N, (long long)s->C, (long long)s->H, (long long)s->W,
             (long long)s->OC, s->KH, s->KW, s->S, s->P, bias ? "bias" : "nobias", s->f32_nchw ? "xf32" : "xbf16");
}

/* The record's choice for key: 1 (amx), 0 (oneDNN), -1 where it holds
 * none (or something else, said once). */
static int recorded(const char *path, const char *key)
{
    char val[DLG_TUNE_VAL_MAX];
    if (!dlg_tune_get(path, key, val, sizeof val))
        return -1;
    if (strcmp(val, "amx") == 0 || strcmp(val, "onednn") == 0)
        return val[0] == 'a';
    fprintf(stderr, "dlgauge: tuning record %s: %s '%s' is neither amx nor onednn; timed again\n", path, key, val);
    return -1;
}

bool cpu_wgrad_amx_picked(cpu_ctx *c, const dlg_layer *l, const cpu_wgrad_shape *s)
{
    char path[DLG_TUNE_PATH_MAX], key[DLG_TUNE_KEY_MAX];
    bool rec = dlg_tune_path(path, sizeof path);
    int lock = rec ? dlg_tune_lock(path) : -1; /* ranks of a host time one at a time */
    tune_key(s, l->p.conv.bias, key, sizeof key);
    int pick = rec ? recorded(path, key) : -1;
    double t[2];
    int timed = pick < 0 ? time_both(c, l, s, t) : -1;
    if (timed == 1)
        pick = 1;
    if (timed == 0) {
        pick = t[1] < AMX_MARGIN * t[0];
        bool kept = rec && dlg_tune_put(path, key, pick ? "amx" : "onednn") == 0;
        char said[768];
        snprintf(said, sizeof said,
                 "cpu: %s's weight gradient timed at batch %lld: oneDNN %.3g ms, cpu_wgrad_amx %.3g ms: %s%s%s",
                 l->name, (long long)timed_batch(s), t[0] * 1e3, t[1] * 1e3, pick ? "cpu_wgrad_amx" : "oneDNN",
                 kept ? "; kept in tuning record " : "", kept ? path : "");
        cpu_say(c, said);
    }
    dlg_tune_unlock(lock);
    return pick == 1;
}
