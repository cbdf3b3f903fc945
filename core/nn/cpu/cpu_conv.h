/* The state of a oneDNN convolution or inner product layer, shared by its
 * setup (cpu_conv_setup.c) and its passes (cpu_conv.c). */
#ifndef DLG_NN_CPU_CONV_H
#define DLG_NN_CPU_CONV_H

#include "cpu.h"
#include "cpu_bn_bf16.h"
#include "cpu_fc_wgrad.h"
#include "cpu_gemm_conv.h"
#include "cpu_wino1d.h"
#include "cpu_wgrad_amx.h"
#include "cpu_wgrad_im2col.h"
#include "cpu_winograd.h"

typedef struct conv_state {
    cpu_prim fwd, bwd_data, bwd_weights;
    dnnl_alg_kind_t alg[3]; /* theirs: direct, or Winograd (cpu_conv_algo.h) */
    /* the residual add (+ ReLU) as its own primitive after fwd, where the
     * fused one would fall back to oneDNN's gemm kernel (unfused_residual):
     * fwd writes the first tmp_bytes of the workspace (the top may share
     * the residual's memory), add sums that and the residual into the top */
    cpu_prim add;
    size_t tmp_bytes;
    /* a ReLU folded in a training plan: fwd applies it (post-op), this
     * zeroes dy in place where the output is not > 0 before backward */
    cpu_prim relu_bwd;
    /* the top is the residual's memory (in_place_ok): fwd's sum post-op
     * adds the convolution into it (accumulate_in_place) */
    bool in_place;
    char impl[256]; /* "" or fwd's implementation with ", added in place", the matmul's and/or
                     * ", backward data by a transposed forward" */
    /* cpu-bf16, a strided 1x1 layer: bwd_data (a transposed forward)
     * writes the first scatter_bytes of the workspace, spread over dx */
    size_t scatter_bytes;
    /* who computes the weight gradient: bwd_weights as oneDNN's
     * convolution or inner product made it (WG_PRIM), bwd_weights as a
     * matmul (cpu-bf16 1x1 layers), or one of our kernels with no
     * primitive: cpu_wgrad_amx (few input channels), an im2col and a
     * matmul (into the master's OHWI layout), cpu_fc_wgrad's outer
     * products (an inner product at a small batch) */
    enum { WG_PRIM, WG_MATMUL, WG_AMX, WG_IM2COL, WG_OUTER } wgrad;
    /* WG_MATMUL batched over images where that timed faster: each image's
     * gradient (planes of plane floats) in the workspace after sub_bytes,
     * summed into dW after (0: one matmul over every pixel) */
    int64_t partials, plane;
    size_t partial_bytes;
    cpu_wgrad_shape wg;      /* WG_AMX's and WG_IM2COL's */
    cpu_im2col_wgrad im2col; /* WG_IM2COL's */
    cpu_fc_wgrad_shape fcw;  /* WG_OUTER's */
    /* cpu-bf16: bwd_data reads the fp32 master, not the bf16 copy, where
     * oneDNN would reorder the copy's layout on its generic loops */
    bool bwd_w_master;
    /* a strided one's: its input subsampled, compact, into the first
     * sub_bytes of the workspace before the matmul, by sub an image at a
     * time */
    cpu_prim sub;
    size_t sub_bytes;
    /* a biased one's: its bias gradient summed from dy after the matmul
     * (cpu_bf16_channel_sums over the workspace); rows 0: none */
    cpu_bn_shape bias_shape;
    dnnl_memory_desc_t top_md; /* the top's layout when it is not plain */
    dnnl_memory_desc_t w_md;   /* the weights' layout when it is not plain */
    cpu_fold fold;             /* a batch norm folded into the weights */
    cpu_wcopy wq;              /* cpu-bf16 without a fold: the bf16 weights */
    /* who runs it: oneDNN, cpu_winograd.c, cpu_wino1d.c, or oneDNN but
     * cpu_gemm_conv.c for the weights' gradient */
    enum { BY_PRIMS, BY_WINO, BY_WINO1D, BY_GEMM } by;
    wino_shape shape;
    wino1d_shape shape1d;
    gemm_conv_shape gshape;
    /* BY_WINO in an inference plan with few tiles (wino_keeps_filter):
     * transformed once, again only when the weights (or the folded batch
     * norm) move */
    float *u;
    uint64_t u_seen[6];
} conv_state;

/* dlg_kernels.destroy of both layers: every primitive, copy and buffer. */
void cpu_conv_destroy(void *ctx, void *state);
/* A 1x1 layer's weight gradient by its matmul (WG_MATMUL): x (NHWC
 * bf16, subsampled where strided), dy, into dw; ws: the workspace after
 * any subsampled copy. */
int cpu_conv_wgrad_matmul(cpu_ctx *c, conv_state *s, void *x, void *dy, float *dw, void *ws);
/* The scratch the layer's primitives need, the temporary top included. */
size_t cpu_conv_ws(const conv_state *s);
/* dlg_kernels.setup of a convolution (cpu_conv_setup.c). */
int cpu_conv_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err, size_t errlen);

#endif
