// Caffe's pooling arithmetic for one element, shared by the NCHW kernels
// (cuda_kernels.cu) and the NHWC ones (cuda_nhwc_kernels.cu): a plane's
// element (h, w) is at base + (h * W + w) * stride (NCHW: stride 1; NHWC:
// stride C, base at the channel).  Windows of the output size given (ceil
// or floor mode); the average divides by the window clipped to H + pad,
// Caffe's rule (k*k in floor mode, where no window passes it).
#ifndef DLG_CUDA_POOL_WINDOW_CUH
#define DLG_CUDA_POOL_WINDOW_CUH

#include "cuda_kernel_common.cuh"

#include <float.h>

namespace {

// Output (oh, ow)'s pooled value; the max's argmax (h * W + w, the first
// of equal maxima) into *arg.
template <class T>
__device__ __forceinline__ float pool_window(const dlg_cuk_pool &p, const T *x, int64_t base,
                                             int64_t stride, int64_t oh, int64_t ow, int64_t *arg)
{
    int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
    int64_t h1 = min(h0 + p.kh, p.h + p.ph), w1 = min(w0 + p.kw, p.w + p.pw);
    int64_t div = (h1 - h0) * (w1 - w0);
    h0 = max(h0, (int64_t)0);
    w0 = max(w0, (int64_t)0);
    h1 = min(h1, p.h);
    w1 = min(w1, p.w);
    if (!p.max) {
        float acc = 0.f;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++)
                acc += ld(x, base + (h * p.w + w) * stride);
        return acc / (float)div;
    }
    float best = -FLT_MAX;
    bool any = false;
    *arg = h0 * p.w + w0;
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++) {
            float v = ld(x, base + (h * p.w + w) * stride);
            if (!any || v > best) {
                best = v;
                *arg = h * p.w + w;
                any = true;
            }
        }
    return best;
}

// Gather form of the backward, so no atomics: input (h, w)'s gradient sums
// the outputs whose window holds it (max: those whose argmax it is); dy and
// mask hold the outputs at base + (oh * OW + ow) * stride.
template <class T>
__device__ __forceinline__ float pool_gather(const dlg_cuk_pool &p, const T *dy, const int *mask,
                                             int64_t base, int64_t stride, int64_t h, int64_t w)
{
    int64_t ph0 = (h + p.ph < p.kh) ? 0 : (h + p.ph - p.kh) / p.sh + 1;
    int64_t ph1 = min((h + p.ph) / p.sh + 1, p.oh);
    int64_t pw0 = (w + p.pw < p.kw) ? 0 : (w + p.pw - p.kw) / p.sw + 1;
    int64_t pw1 = min((w + p.pw) / p.sw + 1, p.ow);
    float acc = 0.f;
    for (int64_t oh = ph0; oh < ph1; oh++)
        for (int64_t ow = pw0; ow < pw1; ow++) {
            int64_t o = base + (oh * p.ow + ow) * stride;
            if (p.max) {
                if (mask[o] == (int)(h * p.w + w))
                    acc += ld(dy, o);
            } else {
                int64_t a = oh * p.sh - p.ph, b = ow * p.sw - p.pw;
                int64_t div = (min(a + p.kh, p.h + p.ph) - a) * (min(b + p.kw, p.w + p.pw) - b);
                acc += ld(dy, o) / (float)div;
            }
        }
    return acc;
}

} // namespace

#endif
