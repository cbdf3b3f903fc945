/* Which oneDNN convolution algorithm each pass of a layer runs. */
#ifndef DLG_NN_CPU_CONV_ALGO_H
#define DLG_NN_CPU_CONV_ALGO_H

#include "cpu.h"

/* alg[0..2] for forward, backward data, backward weights: Winograd where
 * oneDNN has it for the layer and it ran faster when first timed on this
 * host (on up to the layer's batch, cpu_conv_algo.c), else direct.  The
 * choice is kept in the host's tuning record (../tune.h) and read back by
 * later plans of the same layer, thread count and oneDNN, so a
 * configuration runs the same kernels every time ($DLGAUGE_TUNE=off:
 * timed in every plan).  Never Winograd when the plan asked for direct
 * convolutions (dlg_plan_opts.direct_conv). */
void cpu_conv_pick_algos(cpu_ctx *c, const dlg_layer *l, dnnl_alg_kind_t alg[3]);
/* Whether oneDNN gave pd its Winograd kernel: it takes the Winograd
 * algorithm into its reference implementation too (ref:any, slow) where
 * the kernel refuses, e.g. a post-op it does not take. */
bool cpu_conv_is_winograd(const_dnnl_primitive_desc_t pd);
/* The forward prop kind a layer's primitive is created with for alg. */
dnnl_prop_kind_t cpu_conv_prop(const dlg_layer *l, dnnl_alg_kind_t alg);

#endif
