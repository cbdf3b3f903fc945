/* oneDNN's own Winograd convolution (jit_wino_4x3, F(4x4,3x3); oneDNN 2.6
 * has it on AVX-512 only) against its direct kernels, per pass, timed at
 * plan time once per host and layer shape, then kept in the host's tuning
 * record.  On a loaded Zen 4 EPYC it ran ResNet-50's and VGG16's 3x3
 * layers 1.1-3.8x faster than brgconv (one thread), and lost 4x on a
 * 3-channel input: a machine decides for itself instead of a table.  But
 * timed in every plan, a close layer flipped with the load (ResNet-50
 * inference, three runs: 3, 9 and 6 Winograd layers, and its loss and
 * plan bytes with them): the record makes the first timing stand. */
#include "cpu_conv_algo.h"
#include "cpu_plan_time.h"

#include "../tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PASS_FWD, PASS_BWD_DATA, PASS_BWD_WEIGHTS, NPASS };

/* Winograd must beat direct by this much: timing noise never flips a
 * layer to a kernel that is no faster. */
#define WINO_MARGIN 0.9

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

/* One run of a primitive and its arguments (time_pass). */
typedef struct pass_run {
    cpu_ctx *c;
    dnnl_primitive_t prim;
    dnnl_exec_arg_t ex[NARGS];
    int n;
} pass_run;

static int run_pass(void *arg)
{
    pass_run *r = arg;
    return dnnl_primitive_execute(r->prim, r->c->stream, r->n, r->ex) != dnnl_success ||
                   dnnl_stream_wait(r->c->stream) != dnnl_success
               ? -1
               : 0;
}

/* Best of two runs after a warm-up, on zeroed buffers (no denormals):
 * seconds, or -1 where it cannot run. */
static double time_pass(cpu_ctx *c, const_dnnl_primitive_desc_t pd, char *buf)
{
    pass_run r = {.c = c};
    size_t off = 0;
    double best = -1;
    for (int i = 0; i < NARGS; i++) {
        size_t sz = arg_bytes(pd, conv_args[i]);
        if (!sz)
            continue;
        const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, conv_args[i]);
        if (dnnl_memory_create(&r.ex[r.n].memory, md, c->eng, buf + off) != dnnl_success)
            goto out;
        r.ex[r.n++].arg = conv_args[i];
        off += CPU_ALIGN(sz);
    }
    if (dnnl_primitive_create(&r.prim, pd) == dnnl_success)
        best = cpu_time_best(run_pass, &r);
out:
    if (r.prim)
        dnnl_primitive_destroy(r.prim);
    for (int i = 0; i < r.n; i++)
        dnnl_memory_destroy(r.ex[i].memory);
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

/* The tuning record's key of a layer's pass (tune.h): everything that
 * can change which kernel is faster.  The CPU is the record's own. */
static void tune_key(const cpu_ctx *c, const dlg_layer *l, int pass, char *key, size_t n)
{
    static const char *const names[NPASS] = {"fwd", "bwdd", "bwdw"};
    const dlg_conv_param *p = &l->p.conv;
    const dlg_shape *x = &l->bottom[0]->shape, *y = &l->top[0]->shape;
    const dnnl_version_t *v = dnnl_version();
    snprintf(key, n, "conv:dnnl%d.%d.%d:t%d:%s:%s:n%lldc%lldh%lldw%lld:o%lld:p%dx%d:%s:%s", v->major, v->minor,
             v->patch, c->threads, c->bf16 ? "bf16" : "f32", l->backward ? "train" : "infer", (long long)x->d[0],
             (long long)x->d[1], (long long)x->d[2], (long long)x->d[3], (long long)y->d[1], (int)p->ph,
             (int)p->pw, p->bias || p->bn ? "bias" : "nobias", names[pass]);
}

/* The record's choice for key: true with *alg set where it holds one. */
static bool recorded(const char *path, const char *key, dnnl_alg_kind_t *alg)
{
    char val[DLG_TUNE_VAL_MAX];
    if (!dlg_tune_get(path, key, val, sizeof val))
        return false;
    if (strcmp(val, "winograd") == 0 || strcmp(val, "direct") == 0) {
        *alg = val[0] == 'w' ? dnnl_convolution_winograd : dnnl_convolution_direct;
        return true;
    }
    fprintf(stderr, "dlgauge: tuning record %s: %s '%s' is neither winograd nor direct; timed again\n", path,
            key, val);
    return false;
}

/* Test hook: DLG_NN_CONV_TIMES="<direct s>,<winograd s>" stands for every
 * timing (tests of the record, whatever the machine's own speeds). */
static bool fake_times(double *td, double *tw)
{
    const char *env = getenv("DLG_NN_CONV_TIMES");
    return env && sscanf(env, "%lf,%lf", td, tw) == 2;
}

/* Times direct against Winograd for the passes in untimed[] (the rest keep
 * alg[]), each 10% faster to win. */
static void time_passes(cpu_ctx *c, const dlg_layer *l, const bool untimed[NPASS], dnnl_primitive_desc_t wino[NPASS],
                        dnnl_alg_kind_t alg[NPASS], double td[NPASS], double tw[NPASS])
{
    bool want[NPASS];
    for (int i = 0; i < NPASS; i++) {
        want[i] = i == PASS_FWD || untimed[i];
        td[i] = tw[i] = -1;
    }
    dnnl_primitive_desc_t direct[NPASS];
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
        if (!untimed[i] || !direct[i])
            continue;
        /* a layer's passes can take a second: a plan asked to stop fails
         * after this layer, whatever it picked */
        if (c->stop && c->stop(c->stop_ctx))
            break;
        if (!fake_times(&td[i], &tw[i])) {
            td[i] = time_pass(c, direct[i], buf);
            tw[i] = time_pass(c, wino[i], buf);
        }
        if (tw[i] > 0 && td[i] > 0 && tw[i] < WINO_MARGIN * td[i])
            alg[i] = dnnl_convolution_winograd;
    }
    free(buf);
    for (int i = 0; i < NPASS; i++)
        if (direct[i])
            dnnl_primitive_desc_destroy(direct[i]);
}

/* Keeps the passes just timed in the record, and says so once a layer. */
static void store(const cpu_ctx *c, const dlg_layer *l, const char *path, const bool untimed[NPASS],
                  const dnnl_alg_kind_t alg[NPASS], const double td[NPASS], const double tw[NPASS])
{
    static const char *const names[NPASS] = {"forward", "backward data", "backward weights"};
    char line[512] = "", key[DLG_TUNE_KEY_MAX];
    size_t len = 0;
    for (int i = 0; i < NPASS; i++) {
        if (!untimed[i] || td[i] <= 0 || tw[i] <= 0)
            continue; /* cut short, or a pass that cannot run: not a choice */
        const char *pick = alg[i] == dnnl_convolution_winograd ? "winograd" : "direct";
        tune_key(c, l, i, key, sizeof key);
        if (dlg_tune_put(path, key, pick) < 0)
            return;
        int w = snprintf(line + len, sizeof line - len, "%s %s %s (direct %.3g ms, winograd %.3g ms)",
                         len ? ";" : "", names[i], pick, td[i] * 1e3, tw[i] * 1e3);
        len = w > 0 && (size_t)w < sizeof line - len ? len + (size_t)w : len;
    }
    if (!len)
        return;
    char said[1024];
    snprintf(said, sizeof said, "cpu: %s timed direct vs oneDNN winograd:%s; kept in tuning record %s", l->name, line,
             path);
    cpu_say(c, said);
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
    dnnl_primitive_desc_t wino[NPASS];
    describe(c, l, dnnl_convolution_winograd, want, wino);
    if (!wino[PASS_FWD])
        return; /* no Winograd on this ISA (AVX2: cpu_winograd.c's instead) */
    if (force && strcmp(force, "winograd") == 0) {
        for (int i = 0; i < NPASS; i++)
            alg[i] = wino[i] ? dnnl_convolution_winograd : dnnl_convolution_direct;
    } else {
        /* Once per host: timing again in every cell would flip layers with
         * the load it meets, and with them results and memory (tune.h). */
        char path[DLG_TUNE_PATH_MAX], key[DLG_TUNE_KEY_MAX];
        bool rec = dlg_tune_path(path, sizeof path), untimed[NPASS], any = false;
        int lock = rec ? dlg_tune_lock(path) : -1; /* ranks of a host time one at a time */
        for (int i = 0; i < NPASS; i++) {
            if (rec && wino[i])
                tune_key(c, l, i, key, sizeof key);
            untimed[i] = wino[i] && !(rec && recorded(path, key, &alg[i]));
            any |= untimed[i];
        }
        double td[NPASS], tw[NPASS];
        if (any) {
            time_passes(c, l, untimed, wino, alg, td, tw);
            if (rec)
                store(c, l, path, untimed, alg, td, tw);
        }
        dlg_tune_unlock(lock);
    }
    for (int i = 0; i < NPASS; i++)
        if (wino[i])
            dnnl_primitive_desc_destroy(wino[i]);
}
