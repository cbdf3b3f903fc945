/* Channels-last (NHWC) storage of the half-precision CUDA backends:
 * host-side pieces that need no GPU, so CI tests them anywhere.
 *
 * Under an NHWC context (cuda-bf16:N / cuda-fp16:N unless the plan sets
 * half_nchw) every 4-d half tensor [N][C][H][W] is stored as
 * [N][H][W][C]; other ranks keep their plain order.  A tensor is seen as
 * N x C x S (S = H*W): NCHW index (n*C + c)*S + s, NHWC index (n*S + s)*C + c.
 * With S == 1 or C == 1 both orders are the same memory. */
#ifndef DLG_NN_CUDA_NHWC_H
#define DLG_NN_CUDA_NHWC_H

#include <dlgauge/nn.h>

#include <stdbool.h>
#include <stdint.h>

/* Whether a context stores half activations channels-last: half maths
 * (bf16, fp16) unless the plan asked for NCHW (dlg_plan_opts.half_nchw). */
bool dlg_nhwc_wanted(bool half_math, bool half_nchw);
/* n, c, s of a tensor; true if it is stored NHWC under an NHWC context. */
bool dlg_nhwc_dims(const dlg_shape *sh, int64_t *n, int64_t *c, int64_t *s);
/* Stored NHWC and not the same memory as NCHW (a conversion must move data). */
bool dlg_nhwc_moves(const dlg_shape *sh);

static inline int64_t dlg_nchw_index(int64_t n, int64_t c, int64_t s, int64_t C, int64_t S)
{
    return (n * C + c) * S + s;
}
static inline int64_t dlg_nhwc_index(int64_t n, int64_t c, int64_t s, int64_t C, int64_t S)
{
    return (n * S + s) * C + c;
}

/* Host conversions with the transpose (dlg_net_read/write of NHWC half
 * tensors): fp32 NCHW <-> 16-bit NHWC; fp16 true for binary16, else bf16. */
void dlg_half_from_f32_nhwc(bool fp16, const float *nchw, uint16_t *nhwc, int64_t n, int64_t c,
                            int64_t s);
void dlg_half_to_f32_nchw(bool fp16, const uint16_t *nhwc, float *nchw, int64_t n, int64_t c,
                          int64_t s);

/* Batch norm on half data (cuda_half_bn.c): which cuDNN path runs.  A
 * refusal (CUDNN_STATUS_NOT_SUPPORTED / BAD_PARAM) steps down, for good,
 * with a one-line note:
 *   EX_ACT  cudnnBatchNormalization*Ex, SPATIAL_PERSISTENT, bnOps
 *           BN_ACTIVATION (the planner folded a ReLU into the batch norm)
 *   EX      the same with bnOps BN (a folded ReLU runs as a kernel)
 *   PLAIN   cudnnBatchNormalizationForwardTraining/Backward, SPATIAL, half
 *   F32     the fp32 kernel on fp32 NCHW copies in the workspace */
typedef enum dlg_bn_tier {
    DLG_BN_EX_ACT = 0,
    DLG_BN_EX = 1,
    DLG_BN_PLAIN = 2,
    DLG_BN_F32 = 3
} dlg_bn_tier;

/* The first tier tried: Ex only for NHWC training plans whose workspace
 * and reserve-space queries succeeded (ex_ok), with BN_ACTIVATION iff a
 * ReLU is folded and its queries succeeded too (act_ok). */
dlg_bn_tier dlg_bn_tier_first(bool nhwc, bool train, bool relu, bool ex_ok, bool act_ok);
/* After a refusal in forward (bwd false) or backward: the next tier.  A
 * refused Ex backward skips EX: its reserve space was written by a forward
 * with other bnOps, so only the paths that read none may follow. */
dlg_bn_tier dlg_bn_tier_after_refusal(dlg_bn_tier t, bool bwd);
const char *dlg_bn_tier_name(dlg_bn_tier t);

#endif
