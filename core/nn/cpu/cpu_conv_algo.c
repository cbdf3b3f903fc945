/* oneDNN's own Winograd convolution (jit_wino_4x3, F(4x4,3x3); oneDNN 2.6
 * has it on AVX-512 only) against its direct kernels, per pass, timed at
 * plan time.  On a loaded Zen 4 EPYC it ran ResNet-50's and VGG16's 3x3
 * layers 1.1-3.8x faster than brgconv (one thread), and lost 4x on a
 * 3-channel input: a machine decides for itself instead of a table. */
#include "cpu_conv_algo.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PASS_FWD, PASS_BWD_DATA, PASS_BWD_WEIGHTS, NPASS };

/* Winograd must beat direct by this much: timing noise never flips a
 * layer to a kernel that is no faster. */
#define WINO_MARGIN 0.9

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A 3x3 stride-1 undilated ungrouped layer with channels enough to tile
 * (jit_wino_4x3 wants 16-channel blocks; a 3-channel input loses 4x). */
static bool candidate(const dlg_layer *l)
{
    const dlg_conv_param *p = &l->p.conv;
    return p->groups == 1 && p->kh == 3 && p->kw == 3 && p->sh == 1 && p->sw == 1 && p->dh == 1 && p->dw == 1 &&
           l->bottom[0]->shape.d[1] >= 16 && l->top[0]->shape.d[1] >= 16;
}

/* The batch timed: the layer's own, but its input and output within
 * 32 MiB (a small batch leaves Winograd's tiles too few to share out, and
 * VGG16's first layers at batch 16 would take 400 MB for a moment). */
static int64_t timed_batch(const dlg_layer *l)
{
    int64_t per = (dlg_shape_inner(&l->bottom[0]->shape) + dlg_shape_inner(&l->top[0]->shape)) *
                  (int64_t)sizeof(float);
    int64_t n = per > 0 ? ((int64_t)32 << 20) / per : 1;
    return n < 1 ? 1 : n > l->bottom[0]->shape.d[0] ? l->bottom[0]->shape.d[0] : n;
}

/* The three passes' primitive descriptors for the timed batch, or NULL
 * where oneDNN has no such kernel (or the pass is not wanted). */
static void describe(cpu_ctx *c, const dlg_layer *l, dnnl_alg_kind_t alg, bool want[NPASS],
                     dnnl_primitive_desc_t pd[NPASS])
{
    const dlg_conv_param *p = &l->p.conv;
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    int64_t n = timed_batch(l);
    int64_t xd[4] = {n, x->d[1], x->d[2], x->d[3]}, yd[4] = {n, y->d[1], y->d[2], y->d[3]};
    int64_t wd[4] = {y->d[1], x->d[1], 3, 3}, bd[1] = {y->d[1]};
    dnnl_memory_desc_t src = cpu_md(4, xd, dnnl_format_tag_any), dst = cpu_md(4, yd, dnnl_format_tag_any);
    dnnl_memory_desc_t w = cpu_md(4, wd, dnnl_format_tag_any), b = cpu_md(1, bd, dnnl_x);
    dnnl_dims_t st = {1, 1}, pl = {p->ph, p->pw}, pr = {p->ph, p->pw};
    bool bias = p->bias || p->bn;
    dnnl_convolution_desc_t d;
    dnnl_primitive_attr_t attr = cpu_attr();
    memset(pd, 0, NPASS * sizeof *pd);
    if (!attr)
        return;
    if (dnnl_convolution_forward_desc_init(&d, cpu_conv_prop(l, alg), alg, &src, &w, bias ? &b : NULL, &dst, st,
                                           pl, pr) != dnnl_success ||
        dnnl_primitive_desc_create(&pd[PASS_FWD], &d, attr, c->eng, NULL) != dnnl_success)
        pd[PASS_FWD] = NULL;
    if (pd[PASS_FWD] && want[PASS_BWD_DATA] &&
        (dnnl_convolution_backward_data_desc_init(&d, alg, &src, &w, &dst, st, pl, pr) != dnnl_success ||
         dnnl_primitive_desc_create(&pd[PASS_BWD_DATA], &d, attr, c->eng, pd[PASS_FWD]) != dnnl_success))
        pd[PASS_BWD_DATA] = NULL;
    if (pd[PASS_FWD] && want[PASS_BWD_WEIGHTS] &&
        (dnnl_convolution_backward_weights_desc_init(&d, alg, &src, &w, bias ? &b : NULL, &dst, st, pl, pr) !=
             dnnl_success ||
         dnnl_primitive_desc_create(&pd[PASS_BWD_WEIGHTS], &d, attr, c->eng, pd[PASS_FWD]) != dnnl_success))
        pd[PASS_BWD_WEIGHTS] = NULL;
    dnnl_primitive_attr_destroy(attr);
    for (int i = 0; alg == dnnl_convolution_winograd && i < NPASS; i++)
        if (pd[i] && !cpu_conv_is_winograd(pd[i])) {
            dnnl_primitive_desc_destroy(pd[i]);
            pd[i] = NULL;
        }
}

/* Every argument a convolution pass may take. */
static const int conv_args[] = {DNNL_ARG_SRC,      DNNL_ARG_WEIGHTS,      DNNL_ARG_BIAS,      DNNL_ARG_DST,
                                DNNL_ARG_DIFF_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS, DNNL_ARG_DIFF_DST,
                                DNNL_ARG_SCRATCHPAD};
enum { NARGS = sizeof conv_args / sizeof *conv_args };

static size_t arg_bytes(const_dnnl_primitive_desc_t pd, int arg)
{
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
    return md ? dnnl_memory_desc_get_size(md) : 0;
}

/* Bytes pd's arguments take laid out one after another (time_pass). */
static size_t args_bytes(const_dnnl_primitive_desc_t pd)
{
    size_t sum = 0;
    for (int i = 0; i < NARGS; i++)
        sum += CPU_ALIGN(arg_bytes(pd, conv_args[i]));
    return sum;
}

/* Best of two runs after a warm-up, on zeroed buffers (no denormals):
 * seconds, or -1 where it cannot run. */
static double time_pass(cpu_ctx *c, const_dnnl_primitive_desc_t pd, char *buf)
{
    dnnl_exec_arg_t ex[NARGS];
    int n = 0;
    size_t off = 0;
    dnnl_primitive_t prim = NULL;
    double best = -1;
    for (int i = 0; i < NARGS; i++) {
        size_t sz = arg_bytes(pd, conv_args[i]);
        if (!sz)
            continue;
        const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, conv_args[i]);
        if (dnnl_memory_create(&ex[n].memory, md, c->eng, buf + off) != dnnl_success)
            goto out;
        ex[n++].arg = conv_args[i];
        off += CPU_ALIGN(sz);
    }
    if (dnnl_primitive_create(&prim, pd) != dnnl_success)
        goto out;
    for (int r = 0; r < 3; r++) {
        double t0 = now_s();
        if (dnnl_primitive_execute(prim, c->stream, n, ex) != dnnl_success ||
            dnnl_stream_wait(c->stream) != dnnl_success) {
            best = -1;
            break;
        }
        double t = now_s() - t0;
        if (r > 0 && (best < 0 || t < best))
            best = t;
    }
out:
    if (prim)
        dnnl_primitive_destroy(prim);
    for (int i = 0; i < n; i++)
        dnnl_memory_destroy(ex[i].memory);
    return best;
}

bool cpu_conv_is_winograd(const_dnnl_primitive_desc_t pd) { return strstr(cpu_impl_name(pd), "wino") != NULL; }

dnnl_prop_kind_t cpu_conv_prop(const dlg_layer *l, dnnl_alg_kind_t alg)
{
    /* Winograd's inference kernel keeps its weights pre-transformed in a
     * format of its own, which the batch-norm fold (a reorder within the
     * weights' layout) cannot scale: the training kernel takes them blocked */
    return l->backward || alg == dnnl_convolution_winograd ? dnnl_forward_training : dnnl_forward_inference;
}

void cpu_conv_pick_algos(cpu_ctx *c, const dlg_layer *l, dnnl_alg_kind_t alg[3])
{
    /* tests and diagnosis: "winograd" wherever oneDNN has it, "direct" never */
    const char *force = getenv("DLG_NN_CONV_ALGO");
    for (int i = 0; i < NPASS; i++)
        alg[i] = dnnl_convolution_direct;
    if (!c->winograd || !candidate(l) || (force && strcmp(force, "direct") == 0))
        return;
    bool want[NPASS] = {true, l->backward && l->prop_down[0], l->backward && l->param_grad};
    dnnl_primitive_desc_t direct[NPASS], wino[NPASS];
    describe(c, l, dnnl_convolution_winograd, want, wino);
    if (!wino[PASS_FWD])
        return; /* no Winograd on this ISA (AVX2: cpu_winograd.c's instead) */
    if (force && strcmp(force, "winograd") == 0) {
        for (int i = 0; i < NPASS; i++) {
            alg[i] = wino[i] ? dnnl_convolution_winograd : dnnl_convolution_direct;
            if (wino[i])
                dnnl_primitive_desc_destroy(wino[i]);
        }
        return;
    }
    describe(c, l, dnnl_convolution_direct, want, direct);
    size_t bytes = 0;
    for (int i = 0; i < NPASS; i++) {
        size_t a = direct[i] ? args_bytes(direct[i]) : 0, b = wino[i] ? args_bytes(wino[i]) : 0;
        bytes = a > bytes ? a : bytes;
        bytes = b > bytes ? b : bytes;
    }
    char *buf = NULL; /* 64-byte aligned, as oneDNN's kernels load it; zeroed */
    if (posix_memalign((void **)&buf, 64, bytes ? bytes : 64) != 0)
        buf = NULL;
    else
        memset(buf, 0, bytes);
    for (int i = 0; buf && i < NPASS; i++) {
        if (!want[i] || !direct[i] || !wino[i])
            continue;
        /* a layer's passes can take a second: a plan asked to stop fails
         * after this layer, whatever it picked */
        if (c->stop && c->stop(c->stop_ctx))
            break;
        double td = time_pass(c, direct[i], buf), tw = time_pass(c, wino[i], buf);
        if (tw > 0 && td > 0 && tw < WINO_MARGIN * td)
            alg[i] = dnnl_convolution_winograd;
    }
    free(buf);
    for (int i = 0; i < NPASS; i++) {
        if (direct[i])
            dnnl_primitive_desc_destroy(direct[i]);
        if (wino[i])
            dnnl_primitive_desc_destroy(wino[i]);
    }
}
