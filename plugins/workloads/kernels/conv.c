/* conv: one convolution's forward, backward-data or backward-filter pass
 * (DeepBench's conv set) on oneDNN, in the layouts oneDNN prefers for the
 * shape (as a framework keeps them between layers), or by the engine's
 * Winograd kernels (algo = winograd) or im2col + sgemm backward filter
 * (algo = gemm) in the same layouts.  Items are FLOPs
 * (2 x N K P Q C R S, the same count for all three passes and both algos:
 * Winograd's rate is an effective one). */
#include "kernels.h"

#include "cpu/cpu_gemm_conv.h"
#include "cpu/cpu_wino1d.h"
#include "cpu/cpu_winograd.h"
#include "cpu/omp_team.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum {
    C_N, C_C, C_H, C_W, C_K, C_R, C_S, C_STRIDE, C_PAD, C_PAD_H, C_PAD_W, C_PASS, C_ALGO, C_KEPT,
    C_COUNT
};

static const dlg_option conv_options[] = {
    [C_N] = {"n", DLG_OPT_INT, "16", "1", "100000", NULL, "batch", 0},
    [C_C] = {"c", DLG_OPT_INT, "64", "1", "100000", NULL, "input channels", 0},
    [C_H] = {"h", DLG_OPT_INT, "56", "1", "100000", NULL, "input height", 0},
    [C_W] = {"w", DLG_OPT_INT, "56", "1", "100000", NULL, "input width", 0},
    [C_K] = {"k", DLG_OPT_INT, "64", "1", "100000", NULL, "output channels", 0},
    [C_R] = {"r", DLG_OPT_INT, "3", "1", "1000", NULL, "filter height", 0},
    [C_S] = {"s", DLG_OPT_INT, "3", "1", "1000", NULL, "filter width", 0},
    [C_STRIDE] = {"stride", DLG_OPT_INT, "1", "1", "1000", NULL, "stride (both axes)", 0},
    [C_PAD] = {"pad", DLG_OPT_INT, "1", "0", "1000", NULL, "zero padding (both axes)", 0},
    [C_PAD_H] = {"pad_h", DLG_OPT_INT, "-1", "-1", "1000", NULL,
                 "zero padding of the height (-1: pad), e.g. 3 for a 7x1 filter", 0},
    [C_PAD_W] = {"pad_w", DLG_OPT_INT, "-1", "-1", "1000", NULL,
                 "zero padding of the width (-1: pad), e.g. 3 for a 1x7 filter", 0},
    [C_PASS] = {"pass", DLG_OPT_ENUM, "fwd", NULL, NULL, "fwd|bwd_data|bwd_filter",
                "which pass one step runs", 0},
    [C_ALGO] = {"algo", DLG_OPT_ENUM, "direct", NULL, NULL, "direct|winograd|gemm",
                "direct: oneDNN's kernels; winograd: the engine's kernels, whatever the tile "
                "count: F(4x4,3x3) for 3x3 (pad 0-2 alike), F(2x2,5x5) for 5x5 (pad 0-4 alike), "
                "F(3,7) / F(4,3) for 1x7, 7x1, "
                "1x3, 3x1 (padded along the filter only); stride 1, channels in multiples of "
                "8, AVX2; gemm: the engine's im2col + sgemm backward filter (pass = bwd_filter; "
                "any stride, pad alike), whatever the size",
                0},
    [C_KEPT] = {"kept_filter", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
                "algo = winograd, pass = fwd, 3x3 or 5x5: transform the filter once at setup, as an "
                "inference plan does for layers with few tiles (false: every step, as training "
                "does)",
                0},
    [C_COUNT] = {0}};

enum { M_SRC, M_WEI, M_DST, M_SCRATCH, M_NMEM };
#define MAX_BYTES 64e9 /* tensors a conv may allocate */

typedef struct conv {
    const dlg_host *h;
    int threads;
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    dnnl_primitive_t prim;
    dnnl_memory_t mem[M_NMEM];
    int args[M_NMEM];
    kernel_stats st;
    /* algo = winograd or gemm: the tensors (nChw8c, weights 8i8o-blocked)
     * and scratch, no primitive */
    bool wino, one_d; /* one_d: cpu_wino1d.c's kernels for 1 x r, r x 1 */
    bool gemm;
    int pass;
    wino_shape shape;
    wino1d_shape shape1d;
    gemm_conv_shape gshape;
    float *x, *w, *y;
    float *u; /* kept_filter: the transformed filter */
    void *scratch;
} conv;

static void conv_teardown(void *state)
{
    conv *c = state;
    if (!c)
        return;
    for (int i = 0; i < M_NMEM; i++)
        if (c->mem[i]) {
            void *p = NULL;
            dnnl_memory_get_data_handle(c->mem[i], &p);
            dnnl_memory_destroy(c->mem[i]);
            free(p);
        }
    if (c->prim)
        dnnl_primitive_destroy(c->prim);
    free(c->x);
    free(c->w);
    free(c->y);
    free(c->scratch);
    free(c->u);
    if (c->stream)
        dnnl_stream_destroy(c->stream);
    if (c->eng)
        dnnl_engine_destroy(c->eng);
    free(c);
}

/* 64-byte aligned memory, touched here rather than in the timed step
 * (NULL for 0 bytes or none left). */
static void *touched(size_t bytes)
{
    void *p = NULL;
    if (!bytes || posix_memalign(&p, 64, (bytes + 63) / 64 * 64) != 0)
        return NULL;
    memset(p, 0, bytes);
    for (size_t i = 0; i < bytes / sizeof(float); i += 7)
        ((float *)p)[i] = 0.25f;
    return p;
}

/* Memory of descriptor md that this workload owns (freed at teardown). */
static int own(conv *c, int slot, int arg, const dnnl_memory_desc_t *md)
{
    size_t bytes = dnnl_memory_desc_get_size(md);
    void *p = touched(bytes);
    if (bytes && !p)
        return -1;
    c->args[slot] = arg;
    if (dnnl_memory_create(&c->mem[slot], md, c->eng, p) != dnnl_success) {
        free(p);
        return -1;
    }
    return 0;
}

static const dnnl_memory_desc_t *q(const_dnnl_primitive_desc_t pd, dnnl_query_t what)
{
    return dnnl_primitive_desc_query_md(pd, what, 0);
}

/* pad_h / pad_w, or pad where they are -1 */
static int64_t pad_of(const dlg_value *o, int which)
{
    return o[which].i >= 0 ? o[which].i : o[C_PAD].i;
}

/* Bytes of input, filter and output, in double: the products of options
 * up to 10^5 overflow 64-bit integers. */
static double tensor_bytes(const dlg_value *o)
{
    double oh = (double)((o[C_H].i + 2 * pad_of(o, C_PAD_H) - o[C_R].i) / o[C_STRIDE].i + 1);
    double ow = (double)((o[C_W].i + 2 * pad_of(o, C_PAD_W) - o[C_S].i) / o[C_STRIDE].i + 1);
    double n = (double)o[C_N].i, ch = (double)o[C_C].i, k = (double)o[C_K].i;
    return 4.0 * (n * ch * (double)o[C_H].i * (double)o[C_W].i +
                  k * ch * (double)o[C_R].i * (double)o[C_S].i + n * k * oh * ow);
}

/* The shape checks every algo needs before sizing anything from it. */
static int check_shape(const dlg_host *h, const dlg_value *o)
{
    int64_t ph = pad_of(o, C_PAD_H), pw = pad_of(o, C_PAD_W);
    int64_t eh = o[C_H].i + 2 * ph, ew = o[C_W].i + 2 * pw;
    if (eh < o[C_R].i || ew < o[C_S].i)
        return h->error(h, DLG_EINVAL, "r, s = %lld, %lld: filter larger than the padded %lldx%lld input",
                        (long long)o[C_R].i, (long long)o[C_S].i, (long long)eh, (long long)ew);
    double bytes = tensor_bytes(o);
    if (bytes > MAX_BYTES)
        return h->error(h, DLG_ENOMEM, "this shape needs %.1f GB of tensors, over the %.0f GB limit",
                        bytes / 1e9, MAX_BYTES / 1e9);
    return 0;
}

static int create(conv *c, const dlg_value *o)
{
    const dlg_host *h = c->h;
    int64_t n = o[C_N].i, ch = o[C_C].i, ih = o[C_H].i, iw = o[C_W].i, k = o[C_K].i;
    int64_t r = o[C_R].i, s = o[C_S].i, st = o[C_STRIDE].i, ph = pad_of(o, C_PAD_H),
            pw = pad_of(o, C_PAD_W);
    int64_t oh = (ih + 2 * ph - r) / st + 1, ow = (iw + 2 * pw - s) / st + 1;
    double bytes = tensor_bytes(o);
    c->st.flops = 2.0 * (double)n * k * oh * ow * ch * r * s;
    dnnl_dims_t sd = {n, ch, ih, iw}, wd = {k, ch, r, s}, dd = {n, k, oh, ow};
    dnnl_dims_t strides = {st, st}, pads = {ph, pw};
    dnnl_memory_desc_t src, wei, dst;
    dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&wei, 4, wd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, dnnl_format_tag_any);
    dnnl_primitive_attr_t attr;
    dnnl_primitive_attr_create(&attr);
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    dnnl_convolution_desc_t fd, bd;
    dnnl_primitive_desc_t fpd = NULL, pd = NULL;
    int pass = (int)o[C_PASS].i, rc = 0;
    dnnl_status_t e = dnnl_convolution_forward_desc_init(
        &fd, pass == 0 ? dnnl_forward_inference : dnnl_forward_training, dnnl_convolution_direct,
        &src, &wei, NULL, &dst, strides, pads, pads);
    if (e == dnnl_success)
        e = dnnl_primitive_desc_create(&fpd, &fd, pass == 0 ? attr : NULL, c->eng, NULL);
    if (e == dnnl_success && pass == 1) {
        e = dnnl_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct, &src, &wei, &dst,
                                                     strides, pads, pads);
        if (e == dnnl_success)
            e = dnnl_primitive_desc_create(&pd, &bd, attr, c->eng, fpd);
    } else if (e == dnnl_success && pass == 2) {
        e = dnnl_convolution_backward_weights_desc_init(&bd, dnnl_convolution_direct, &src, &wei,
                                                        NULL, &dst, strides, pads, pads);
        if (e == dnnl_success)
            e = dnnl_primitive_desc_create(&pd, &bd, attr, c->eng, fpd);
    } else if (e == dnnl_success) {
        pd = fpd;
        fpd = NULL;
    }
    if (e == dnnl_success && dnnl_primitive_create(&c->prim, pd) != dnnl_success)
        e = dnnl_runtime_error;
    if (e != dnnl_success) {
        rc = h->error(h, DLG_ENOTSUP, "oneDNN cannot run this convolution (%s pass): status %d",
                      o[C_PASS].text, (int)e);
    } else {
        static const int qs[3][3] = {{dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md},
                                     {dnnl_query_diff_src_md, dnnl_query_weights_md, dnnl_query_diff_dst_md},
                                     {dnnl_query_src_md, dnnl_query_diff_weights_md, dnnl_query_diff_dst_md}};
        static const int as[3][3] = {{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                                     {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST},
                                     {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST}};
        for (int i = 0; i < 3 && !rc; i++)
            if (own(c, i, as[pass][i], q(pd, (dnnl_query_t)qs[pass][i])) < 0)
                rc = h->error(h, DLG_ENOMEM, "conv: out of memory for %.1f GB of tensors", bytes / 1e9);
        if (!rc && own(c, M_SCRATCH, DNNL_ARG_SCRATCHPAD, q(pd, dnnl_query_scratchpad_md)) < 0)
            rc = h->error(h, DLG_ENOMEM, "conv: out of memory for the scratchpad");
    }
    if (fpd)
        dnnl_primitive_desc_destroy(fpd);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
    return rc;
}

/* The shape as the Winograd kernels see it: 2-d (3x3 or 5x5, pad alike,
 * below the filter) or 1-d (1 x r, r x 1 padded along the filter); false
 * if neither takes it. */
static bool wino_shape_of(conv *c, const dlg_value *o)
{
    int64_t r = o[C_R].i, s = o[C_S].i, ph = pad_of(o, C_PAD_H), pw = pad_of(o, C_PAD_W);
    if (o[C_STRIDE].i != 1)
        return false;
    if ((r == 3 || r == 5) && s == r && ph == pw && ph < r) {
        c->shape = (wino_shape){.n = o[C_N].i, .c = o[C_C].i, .k = o[C_K].i, .h = o[C_H].i,
                                .w = o[C_W].i, .pad = ph, .r = r};
        return true;
    }
    bool along_w = r == 1 && ph == 0, along_h = s == 1 && pw == 0;
    if (along_w == along_h)
        return false;
    c->one_d = true;
    c->shape1d = (wino1d_shape){.n = o[C_N].i, .c = o[C_C].i, .k = o[C_K].i, .h = o[C_H].i,
                                .w = o[C_W].i, .axis = along_w, .r = (int)(along_w ? s : r),
                                .pad = along_w ? pw : ph};
    return true;
}

/* The engine kernels' tensors and scratch; outputs of a `stride` conv. */
static int engine_tensors(conv *c, const dlg_value *o, int64_t stride, size_t ws)
{
    const dlg_host *h = c->h;
    int64_t r = o[C_R].i, s = o[C_S].i, ph = pad_of(o, C_PAD_H), pw = pad_of(o, C_PAD_W);
    int64_t n = o[C_N].i, ch = o[C_C].i, k = o[C_K].i, ih = o[C_H].i, iw = o[C_W].i;
    int64_t oh = (ih + 2 * ph - r) / stride + 1, ow = (iw + 2 * pw - s) / stride + 1;
    double bytes = tensor_bytes(o) + (double)ws;
    if (bytes > MAX_BYTES)
        return h->error(h, DLG_ENOMEM, "this shape needs %.1f GB with the kernels' scratch, over the "
                        "%.0f GB limit", bytes / 1e9, MAX_BYTES / 1e9);
    c->pass = (int)o[C_PASS].i;
    c->st.flops = 2.0 * (double)n * k * oh * ow * ch * r * s;
    c->x = touched(sizeof(float) * (size_t)(n * ch * ih * iw));
    c->w = touched(sizeof(float) * (size_t)(k * ch * r * s));
    c->y = touched(sizeof(float) * (size_t)(n * k * oh * ow));
    c->scratch = touched(ws);
    if (!c->x || !c->w || !c->y || !c->scratch)
        return h->error(h, DLG_ENOMEM, "conv: out of memory for %.1f GB", bytes / 1e9);
    return 0;
}

static int create_wino(conv *c, const dlg_value *o)
{
    const dlg_host *h = c->h;
    int64_t r = o[C_R].i, s = o[C_S].i;
    (void)wino_shape_of(c, o); /* it takes this shape: conv_opts_check */
    if (c->one_d ? !wino1d_supported(&c->shape1d) : !wino_supported(&c->shape))
        return h->error(h, DLG_ENOTSUP,
                        "algo = winograd needs AVX2 with FMA, c and k in multiples of 8, r 3, 5 "
                        "or 7 and a non-empty output (c = %lld, k = %lld, r = %lld, s = %lld, h = "
                        "%lld, w = %lld)",
                        (long long)o[C_C].i, (long long)o[C_K].i, (long long)r, (long long)s,
                        (long long)o[C_H].i, (long long)o[C_W].i);
    c->wino = true;
    size_t ws = c->one_d ? wino1d_ws_bytes(&c->shape1d) : wino_ws_bytes(&c->shape);
    int rc = engine_tensors(c, o, 1, ws);
    if (rc < 0 || !o[C_KEPT].i)
        return rc;
    c->u = touched(wino_filter_bytes(&c->shape));
    if (!c->u)
        return h->error(h, DLG_ENOMEM, "conv: out of memory for the kept filter");
    wino_transform_filters(&c->shape, c->w, c->u);
    return 0;
}

static int create_gemm(conv *c, const dlg_value *o)
{
    const dlg_host *h = c->h;
    int64_t ph = pad_of(o, C_PAD_H), pw = pad_of(o, C_PAD_W);
    c->gshape = (gemm_conv_shape){.n = o[C_N].i, .c = o[C_C].i, .k = o[C_K].i, .h = o[C_H].i,
                                  .w = o[C_W].i, .kh = o[C_R].i, .kw = o[C_S].i,
                                  .stride = o[C_STRIDE].i, .pad = ph};
    if (ph != pw || !gemm_conv_supported(&c->gshape))
        return h->error(h, DLG_ENOTSUP,
                        "algo = gemm needs AVX2 with FMA, c and k in multiples of 8, the same pad "
                        "both ways, below the filter size (c = %lld, k = %lld, r = %lld, s = "
                        "%lld, pad %lld, %lld)",
                        (long long)o[C_C].i, (long long)o[C_K].i, (long long)o[C_R].i,
                        (long long)o[C_S].i, (long long)ph, (long long)pw);
    c->gemm = true;
    return engine_tensors(c, o, o[C_STRIDE].i, gemm_conv_ws_bytes(&c->gshape));
}

/* The options' own rules, before anything is created: the workload's
 * check, and the first thing setup applies (what this CPU runs stays the
 * create_* functions' to say). */
static int conv_opts_check(const dlg_host *h, const dlg_value *o)
{
    if (o[C_KEPT].i && o[C_ALGO].i != 1)
        return h->error(h, DLG_EINVAL, "kept_filter = true takes algo = winograd");
    int rc = check_shape(h, o);
    if (rc < 0)
        return rc;
    conv shape = {0};
    int64_t ph = pad_of(o, C_PAD_H), pw = pad_of(o, C_PAD_W);
    if (o[C_ALGO].i == 1 && !wino_shape_of(&shape, o))
        return h->error(h, DLG_EINVAL,
                        "algo = winograd: takes stride 1 and 3x3 or 5x5 filters padded alike "
                        "(less than the filter) or 1 x r, r x 1 padded along the filter only (got r = %lld, s = %lld, "
                        "stride %lld, pad %lld, %lld)",
                        (long long)o[C_R].i, (long long)o[C_S].i, (long long)o[C_STRIDE].i, (long long)ph,
                        (long long)pw);
    if (o[C_ALGO].i == 1 && o[C_KEPT].i && (shape.one_d || o[C_PASS].i != 0))
        return h->error(h, DLG_EINVAL, "kept_filter = true takes a 3x3 or 5x5 filter and pass = fwd");
    if (o[C_ALGO].i == 2 && o[C_PASS].i != 2)
        return h->error(h, DLG_EINVAL,
                        "algo = gemm runs pass = bwd_filter only (forward and backward data stay "
                        "with oneDNN)");
    return 0;
}

static int conv_check(const dlg_host *h, const dlg_value *o, const dlg_job_info *job)
{
    return conv_opts_check(h, o);
}

static int conv_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *job, void **state)
{
    *state = NULL;
    conv *c = calloc(1, sizeof *c);
    if (!c)
        return h->error(h, DLG_ENOMEM, "out of memory");
    c->h = h;
    c->threads = job && job->cpus > 0 ? job->cpus : 1;
    /* oneDNN splits a primitive's work by the team size when it is made;
     * the team's pool threads are moved onto this cell's CPUs */
    dlg_omp_team(c->threads);
    int rc = conv_opts_check(h, o);
    if (!rc && (dnnl_engine_create(&c->eng, dnnl_cpu, 0) != dnnl_success ||
                dnnl_stream_create(&c->stream, c->eng, dnnl_stream_default_flags) != dnnl_success))
        rc = h->error(h, DLG_ENOTSUP, "oneDNN: cannot create a cpu engine");
    if (!rc)
        rc = o[C_ALGO].i == 1 ? create_wino(c, o) : o[C_ALGO].i == 2 ? create_gemm(c, o)
                                                                     : create(c, o);
    if (rc < 0) {
        conv_teardown(c);
        return rc;
    }
    dlg_peak_detect(&c->st.peak, c->threads);
    *state = c;
    return 0;
}

static void wino_step(conv *c)
{
    const wino_shape *s = &c->shape;
    const wino1d_shape *s1 = &c->shape1d;
    if (c->one_d && c->pass == 0)
        wino1d_forward(s1, c->x, c->w, NULL, NULL, false, c->y, c->scratch);
    else if (c->one_d && c->pass == 1)
        wino1d_backward_data(s1, c->y, c->w, c->x, c->scratch);
    else if (c->one_d)
        wino1d_backward_weights(s1, c->x, c->y, c->w, c->scratch);
    else if (c->pass == 0 && c->u)
        wino_forward_transformed(s, c->x, c->u, NULL, NULL, false, c->y, c->scratch);
    else if (c->pass == 0)
        wino_forward(s, c->x, c->w, NULL, NULL, false, c->y, c->scratch);
    else if (c->pass == 1)
        wino_backward_data(s, c->y, c->w, c->x, c->scratch);
    else
        wino_backward_weights(s, c->x, c->y, c->w, c->scratch);
}

static void engine_step(conv *c)
{
    if (c->gemm)
        gemm_conv_backward_weights(&c->gshape, c->x, c->y, c->w, c->scratch);
    else
        wino_step(c);
}

static int conv_step(void *state, dlg_step *out)
{
    conv *c = state;
    omp_set_num_threads(c->threads);
    if (c->wino || c->gemm) {
        uint64_t t0 = kernel_now_ns();
        engine_step(c);
        kernel_count(&c->st, t0, kernel_now_ns());
        out->items = (uint64_t)c->st.flops;
        return 0;
    }
    dnnl_exec_arg_t a[M_NMEM];
    for (int i = 0; i < M_NMEM; i++)
        a[i] = (dnnl_exec_arg_t){c->args[i], c->mem[i]};
    uint64_t t0 = kernel_now_ns();
    dnnl_status_t e = dnnl_primitive_execute(c->prim, c->stream, M_NMEM, a);
    if (e == dnnl_success)
        e = dnnl_stream_wait(c->stream);
    uint64_t t1 = kernel_now_ns();
    if (e != dnnl_success)
        return c->h->error(c->h, DLG_EINTERNAL, "oneDNN convolution failed: status %d", (int)e);
    kernel_count(&c->st, t0, t1);
    out->items = (uint64_t)c->st.flops;
    return 0;
}

static int conv_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    return kernel_report(&((conv *)state)->st, api, f);
}

static int conv_begin_timed(void *state)
{
    kernel_begin_timed(&((conv *)state)->st);
    return 0;
}

static const dlg_workload_ops conv_ops = {3,           "flops",          conv_setup, conv_step, conv_report,
                                          conv_teardown, conv_begin_timed, conv_check};

const dlg_plugin_desc conv_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "conv", "1.0",
                                   "DeepBench-style single convolution: fwd, bwd_data or bwd_filter",
                                   conv_options, kernel_metrics, &conv_ops};
