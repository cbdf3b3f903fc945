/* The cpu backend: oneDNN primitives, host memory shared with the
 * reference backend (which runs the layers oneDNN does not cover). */
#ifndef DLG_NN_CPU_H
#define DLG_NN_CPU_H

#include "../backend.h"

#include <oneapi/dnnl/dnnl.h>

extern const dlg_backend dlg_backend_cpu, dlg_backend_cpu_bf16;
extern const dlg_kernels dlg_cpu_conv, dlg_cpu_fc, dlg_cpu_pool, dlg_cpu_lrn, dlg_cpu_bn, dlg_cpu_bn_bf16,
    dlg_cpu_relu, dlg_cpu_softmax, dlg_cpu_add, dlg_cpu_split, dlg_cpu_concat;
/* cpu_lstm.c, cpu_loss.c */
extern const dlg_kernels dlg_cpu_lstm, dlg_cpu_loss;

typedef struct cpu_ctx {
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    int threads;
    bool winograd; /* 3x3 stride-1 convolutions by cpu_winograd.c */
    /* "cpu-bf16": bf16 activations, weights and gradients (fp32
     * accumulation, biases, master weights and their gradients); see
     * cpu_bf16.c */
    bool bf16;
    /* dlg_backend_opts.stop, asked between a convolution's timed passes */
    bool (*stop)(void *ctx);
    void *stop_ctx;
    /* dlg_backend_opts.note, for what a convolution's timing found */
    void (*note)(void *ctx, const char *line);
    void *note_ctx;
} cpu_ctx;

/* The threads a layer's own parallel passes run on, fixed at setup where
 * it sizes their scratch: the plan's threads, else OpenMP's default. */
int cpu_team_size(const cpu_ctx *c);

#define CPU_MAX_ARGS 24 /* LSTM backward has 18 arguments */
/* workspace offsets: 64-byte aligned (a cache line) */
#define CPU_ALIGN(x) (((x) + 63) & ~(size_t)63)

/* One primitive argument.  `user` wraps the net's buffer (NCHW); when the
 * primitive wants another layout, `prim` lives in the net's shared
 * workspace and `reorder` converts before (inputs) or after (outputs). */
typedef struct cpu_arg {
    int arg;
    bool out;
    dnnl_memory_t user, prim, fixed;
    dnnl_primitive_t reorder;
    size_t off;
} cpu_arg;

/* A primitive created once at plan time with its arguments; scratchpad
 * and layout buffers come from the workspace, so executing allocates
 * nothing. */
typedef struct cpu_prim {
    dnnl_primitive_t p;
    const_dnnl_primitive_desc_t pd; /* owned by p */
    cpu_arg a[CPU_MAX_ARGS];
    int n;
    dnnl_memory_t scratch;
    size_t scratch_off, ws;
} cpu_prim;

/* A batch norm folded into convolution weights (cpu_conv_fold.c). */
typedef struct cpu_fold {
    void *w;                    /* scaled weights, in the kernel's layout (w_md) */
    float *b, *scale, *shift;   /* folded bias; the batch norm's affine map */
    dnnl_memory_desc_t from_md, w_md; /* the weights' layout; the kernel's (bf16: another type) */
    int64_t oc;
    int mask;                   /* output-channel dims of the weights */
    uint64_t seen[6];           /* versions of w, bias, gamma, beta, mean, var */
} cpu_fold;
int cpu_fold_init(cpu_fold *f, const dlg_layer *l, const dnnl_memory_desc_t *from_md,
                  const dnnl_memory_desc_t *w_md);
/* Rebuilds the folded weights and bias if a param they derive from moved. */
int cpu_fold_refresh(cpu_ctx *c, cpu_fold *f, const dlg_layer *l);
void cpu_fold_destroy(cpu_fold *f);

/* A parameter kept as a copy in another layout and type (bf16 weights
 * of a cpu-bf16 plan), converted again only when the parameter's version
 * moves, so steps convert nothing (cpu_bf16.c). */
typedef struct cpu_wcopy {
    void *buf;
    dnnl_memory_desc_t from, to;
    uint64_t seen;
} cpu_wcopy;
int cpu_wcopy_init(cpu_wcopy *w, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to);
/* The copy of t's data, refreshed if t moved; NULL on failure. */
void *cpu_wcopy_get(cpu_ctx *c, cpu_wcopy *w, const dlg_tensor *t);
void cpu_wcopy_destroy(cpu_wcopy *w);

/* Creates the primitive from a descriptor (op desc + optional hint). */
int cpu_prim_create(cpu_ctx *c, cpu_prim *p, const void *op_desc, const_dnnl_primitive_desc_t hint,
                    char *err, size_t errlen);
/* The same with post-ops (NULL: none) applied as the output is written. */
int cpu_prim_create_po(cpu_ctx *c, cpu_prim *p, const void *op_desc,
                       const_dnnl_primitive_desc_t hint, const_dnnl_post_ops_t po, char *err,
                       size_t errlen);
/* One reorder, created, run and destroyed here (host IO, rare rebuilds). */
int cpu_reorder_once(cpu_ctx *c, const dnnl_memory_desc_t *from_md, void *from,
                     const dnnl_memory_desc_t *to_md, void *to, const_dnnl_primitive_attr_t attr);
/* The same from a primitive descriptor made otherwise (sum); takes it. */
int cpu_prim_from_pd(cpu_ctx *c, cpu_prim *p, dnnl_primitive_desc_t pd, char *err, size_t errlen);
/* Attributes every primitive uses (user-managed scratchpad); caller
 * destroys them. */
dnnl_primitive_attr_t cpu_attr(void);
/* Adds an argument whose user buffer has layout user_md (NULL: same as
 * the primitive's, e.g. plain-layout primitives). */
int cpu_prim_arg(cpu_ctx *c, cpu_prim *p, int arg, const dnnl_memory_desc_t *user_md, bool out,
                 char *err, size_t errlen);
/* Adds an argument bound to persistent memory (workspace, statistics). */
int cpu_prim_fixed(cpu_prim *p, int arg, dnnl_memory_t mem);
/* Runs with ptrs[i] the user buffer of the i-th added (non-fixed) arg. */
int cpu_prim_exec(cpu_ctx *c, cpu_prim *p, void *const *ptrs, void *ws);
void cpu_prim_destroy(cpu_prim *p);
/* dst (layout dst) = the sum of n inputs (layouts src[0..n)), a copy
 * where n is 1 (a reorder into another layout), into p (cpu_misc.c). */
int cpu_sum_prim(cpu_ctx *c, cpu_prim *p, const dnnl_memory_desc_t *dst, int n, const dnnl_memory_desc_t *src,
                 char *err, size_t errlen);
/* A folded ReLU's backward into p (cpu_misc.c): dx (layout x) = dy (layout
 * dy) where the output (layout top) is > 0, else 0; oneDNN's relu from its
 * output, which may run in place (dx in dy's memory).  Its args: y, dy,
 * dx. */
int cpu_relu_bwd(cpu_ctx *c, cpu_prim *p, const dnnl_memory_desc_t *top, const dnnl_memory_desc_t *dy,
                 const dnnl_memory_desc_t *x, char *err, size_t errlen);

/* Plain memory descriptor of dims with a format tag. */
dnnl_memory_desc_t cpu_md(int ndims, const int64_t *dims, dnnl_format_tag_t tag);
/* The same of another element type (bf16 activations). */
dnnl_memory_desc_t cpu_md_dt(int ndims, const int64_t *dims, dnnl_format_tag_t tag, dnnl_data_type_t dt);
/* The element type a layer's computed activations take: bf16 under
 * cpu-bf16, else f32. */
dnnl_data_type_t cpu_act_dt(const cpu_ctx *c);
/* A tensor's layout: its oneDNN one, else plain (nchw, x, nc, ncdhw). */
dnnl_memory_desc_t cpu_tensor_md(const dlg_tensor *t);
dnnl_memory_desc_t cpu_plain_md(const dlg_tensor *t);
/* Gives a top the primitive's layout md when the net allows (kept in
 * *store, which lives in the layer state), else plain; returns the
 * layout the top's memory has. */
dnnl_memory_desc_t cpu_publish(dlg_tensor *t, dnnl_memory_desc_t *store,
                               const dnnl_memory_desc_t *md);
/* Host <-> tensor in its oneDNN layout (not for timed loops: creates a
 * reorder each call). */
int cpu_read_opaque(void *ctx, const dlg_tensor *t, const void *mem, float *host);
int cpu_write_opaque(void *ctx, const dlg_tensor *t, void *mem, const float *host);
/* oneDNN's name for the implementation pd runs ("brgconv:avx512_core",
 * "ref:any"); "" when it says none. */
const char *cpu_impl_name(const_dnnl_primitive_desc_t pd);
/* Fills err with the call's name and oneDNN status; returns -code. */
int cpu_fail(dnnl_status_t st, const char *what, char *err, size_t errlen);

#endif
