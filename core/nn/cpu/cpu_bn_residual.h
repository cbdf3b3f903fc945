/* The residual add a batch norm took over in a training plan
 * (dlg_bn_param.residual): forward y = relu?(bn(x) + r), backward the
 * output's gradient (a folded split's summed: top_parts), masked by y > 0,
 * into r's gradient and on to the batch norm's own backward.  Where the
 * batch norm runs on cpu_bn_bf16 (NHWC bf16 throughout), the add is in
 * its output pass and the backward one pass (cpu_grad_sum_bf16) before
 * the batch norm's; elsewhere oneDNN primitives do what the add's kernel
 * did, so the fold costs nothing there. */
#ifndef DLG_NN_CPU_BN_RESIDUAL_H
#define DLG_NN_CPU_BN_RESIDUAL_H

#include "cpu.h"

typedef struct cpu_bn_res {
    bool one_pass;        /* NHWC bf16 throughout: cpu_grad_sum_bf16 */
    int64_t count;        /* values of the output */
    cpu_prim add;         /* top = relu?(top + r), in place: !one_pass, or inference */
    cpu_prim sum;         /* the split's gradients summed into g (parts only) */
    cpu_prim mask;        /* g zeroed where y <= 0, in place (relu only) */
    cpu_prim copy;        /* g into r's gradient, in r's layout */
    size_t g_bytes;       /* g at the workspace's start where no gradient holds it */
} cpu_bn_res;

/* Sets up r for layer l, whose output has layout top (the batch norm's
 * own primitives are made without the ReLU where !one_pass: it follows
 * the add); one_pass: l's batch norm runs on cpu_bn_bf16. */
int cpu_bn_res_setup(cpu_ctx *c, const dlg_layer *l, cpu_bn_res *r, const dnnl_memory_desc_t *top, bool one_pass,
                     char *err, size_t errlen);
/* Workspace bytes its calls take (backward puts g first, the batch
 * norm's scratch after it: cpu_bn_res_bwd's *rest). */
size_t cpu_bn_res_ws(const cpu_bn_res *r);
/* Forward after the batch norm wrote its output (all but one_pass
 * training, where cpu_bn_bf16 adds r itself). */
int cpu_bn_res_fwd(cpu_ctx *c, const dlg_layer *l, cpu_bn_res *r);
/* Backward before the batch norm's: g, the gradient it then takes as its
 * output's, into *g (r's gradient, the output's own, or the workspace), and
 * *rest the workspace left to it. */
int cpu_bn_res_bwd(cpu_ctx *c, dlg_layer *l, cpu_bn_res *r, void **g, void **rest);
void cpu_bn_res_destroy(cpu_bn_res *r);

#endif
