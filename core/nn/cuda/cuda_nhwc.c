/* NHWC storage of the half backends: dims, host conversions with the
 * transpose, and the batch-norm path tiers (cuda_nhwc.h).  No CUDA calls. */
#include "cuda_nhwc.h"
#include "cuda_half_cvt.h"

bool dlg_nhwc_wanted(bool half_math, bool half_nchw)
{
    return half_math && !half_nchw;
}

bool dlg_nhwc_dims(const dlg_shape *sh, int64_t *n, int64_t *c, int64_t *s)
{
    int64_t N = sh->ndim > 0 ? sh->d[0] : 1, C = sh->ndim > 1 ? sh->d[1] : 1, S = 1;
    for (int i = 2; i < sh->ndim; i++)
        S *= sh->d[i];
    *n = N;
    *c = C;
    *s = S;
    return sh->ndim == 4;
}

bool dlg_nhwc_moves(const dlg_shape *sh)
{
    int64_t n, c, s;
    return dlg_nhwc_dims(sh, &n, &c, &s) && c > 1 && s > 1;
}

/* one image at a time, the NCHW side read in order */
void dlg_half_from_f32_nhwc(bool fp16, const float *nchw, uint16_t *nhwc, int64_t n, int64_t c,
                            int64_t s)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t j = 0; j < s; j++) {
                float v = nchw[dlg_nchw_index(i, k, j, c, s)];
                nhwc[dlg_nhwc_index(i, k, j, c, s)] =
                    fp16 ? dlg_fp16_from_f32(v) : dlg_bf16_from_f32(v);
            }
}

void dlg_half_to_f32_nchw(bool fp16, const uint16_t *nhwc, float *nchw, int64_t n, int64_t c,
                          int64_t s)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t j = 0; j < s; j++) {
                uint16_t v = nhwc[dlg_nhwc_index(i, k, j, c, s)];
                nchw[dlg_nchw_index(i, k, j, c, s)] = fp16 ? dlg_fp16_to_f32(v) : dlg_bf16_to_f32(v);
            }
}

dlg_bn_tier dlg_bn_tier_first(bool nhwc, bool train, bool relu, bool ex_ok, bool act_ok)
{
    if (!nhwc || !train || !ex_ok)
        return DLG_BN_PLAIN;
    return relu && act_ok ? DLG_BN_EX_ACT : DLG_BN_EX;
}

dlg_bn_tier dlg_bn_tier_after_refusal(dlg_bn_tier t, bool bwd)
{
    switch (t) {
    case DLG_BN_EX_ACT:
        return bwd ? DLG_BN_PLAIN : DLG_BN_EX;
    case DLG_BN_EX:
        return DLG_BN_PLAIN;
    default:
        return DLG_BN_F32;
    }
}

const char *dlg_bn_tier_name(dlg_bn_tier t)
{
    static const char *const names[] = {"cuDNN Ex persistent + fused ReLU", "cuDNN Ex persistent",
                                        "cuDNN spatial", "fp32 copies"};
    return (unsigned)t < 4 ? names[t] : "?";
}
