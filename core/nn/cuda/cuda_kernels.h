/* Small CUDA kernels where no library call exists (cuda_kernels.cu).
 * All launch on the given stream and return a cudaError_t as int
 * (0 = launched).  Plain C prototypes so host code needs no nvcc. */
#ifndef DLG_NN_CUDA_KERNELS_H
#define DLG_NN_CUDA_KERNELS_H

#include "cuda_scaler.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *dlg_cu_stream;

/* Caffe SGD: h = m*h + lr*(g + decay*w); w -= h (fused, one pass). */
int dlg_cuk_sgd(dlg_cu_stream s, float *w, const float *g, float *h, int64_t n, float lr,
                float momentum, float decay);
/* Multi-tensor SGD: the same update for many params in one launch.
 * Device tables: tensors[], then chunks[] of DLG_CUK_SGD_CHUNK elements
 * (one block each; the last chunk of a tensor may be shorter). */
#define DLG_CUK_SGD_CHUNK 16384
typedef struct dlg_cuk_sgd_tensor {
    float *w;
    const float *g;
    float *h;
    int64_t n;
    float lr_mult, decay_mult;
} dlg_cuk_sgd_tensor;
typedef struct dlg_cuk_sgd_chunk {
    int64_t tensor, start;
} dlg_cuk_sgd_chunk;
int dlg_cuk_sgd_multi(dlg_cu_stream s, const dlg_cuk_sgd_tensor *t, const dlg_cuk_sgd_chunk *c,
                      int nchunks, float lr, float momentum, float decay);
int dlg_cuk_relu_fwd(dlg_cu_stream s, const float *x, float *y, int64_t n);
int dlg_cuk_relu_bwd(dlg_cu_stream s, const float *x, const float *dy, float *dx, int64_t n);
/* y = a + b */
int dlg_cuk_add(dlg_cu_stream s, const float *a, const float *b, float *y, int64_t n);
/* y += a */
int dlg_cuk_acc(dlg_cu_stream s, float *y, const float *a, int64_t n);
/* Inverted dropout; mask[i] = 0 or 1/(1-ratio), drawn from (seed + golden
 * x (*step + 1), i); then *step += 1 on the device (a captured step draws a
 * new mask on every replay). */
int dlg_cuk_dropout_fwd(dlg_cu_stream s, const float *x, float *y, float *mask, int64_t n,
                        float ratio, uint64_t seed, uint64_t *step);
int dlg_cuk_mul(dlg_cu_stream s, const float *a, const float *b, float *y, int64_t n);
/* y[i*cols + j] += b[j] */
int dlg_cuk_bias_rows(dlg_cu_stream s, float *y, const float *b, int64_t rows, int64_t cols);
/* db[j] = sum_i dy[i*cols + j] */
int dlg_cuk_col_sum(dlg_cu_stream s, const float *dy, float *db, int64_t rows, int64_t cols);

/* Caffe pooling windows (average divides by the window clipped to
 * H + pad) over the output size given: ceil or floor mode alike, as the
 * backward gathers only from outputs that exist.  mask: argmax index per
 * output for max pooling. */
typedef struct dlg_cuk_pool {
    int64_t nc, h, w, oh, ow;
    int kh, kw, sh, sw, ph, pw;
    int max; /* 1 max, 0 average */
} dlg_cuk_pool;
int dlg_cuk_pool_fwd(dlg_cu_stream s, const dlg_cuk_pool *p, const float *x, float *y, int *mask);
int dlg_cuk_pool_bwd(dlg_cu_stream s, const dlg_cuk_pool *p, const float *dy, const int *mask,
                     float *dx);

/* Softmax cross-entropy over rows of K logits.  out: loss, top1, top5
 * (batch means); lse: per-row log-sum-exp kept for backward; *flag set to
 * 1 on a label outside 0..K-1 or not integral. */
int dlg_cuk_loss_fwd(dlg_cu_stream s, const float *x, const float *labels, int64_t n, int64_t k,
                     float *out, float *lse, int *flag);
/* dx = weight * (softmax(x) - onehot(label)) / n (weight: the layer's
 * loss weight, e.g. 0.4 for Inception-v3's auxiliary head) */
int dlg_cuk_loss_bwd(dlg_cu_stream s, const float *x, const float *labels, const float *lse,
                     int64_t n, int64_t k, float weight, float *dx);

/* ---- half storage: activations stored as 16-bit floats (uint16_t here;
 * __nv_bfloat16 or __half on the device, by the dlg_cuk_htype argument),
 * arithmetic in fp32.  One templated kernel per operation serves both. */
typedef uint16_t dlg_half;
typedef enum dlg_cuk_htype { DLG_CUK_BF16 = 0, DLG_CUK_FP16 = 1 } dlg_cuk_htype;
int dlg_cuk_f2h(dlg_cu_stream s, dlg_cuk_htype t, const float *x, dlg_half *y, int64_t n);
int dlg_cuk_h2f(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *x, float *y, int64_t n);
int dlg_cuk_relu_fwd_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *x, dlg_half *y,
                       int64_t n);
int dlg_cuk_relu_bwd_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *x, const dlg_half *dy,
                       dlg_half *dx, int64_t n);
int dlg_cuk_add_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *a, const dlg_half *b,
                  dlg_half *y, int64_t n);
int dlg_cuk_acc_h(dlg_cu_stream s, dlg_cuk_htype t, dlg_half *y, const dlg_half *a, int64_t n);
int dlg_cuk_mul_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *a, const float *mask,
                  dlg_half *y, int64_t n);
int dlg_cuk_dropout_fwd_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *x, dlg_half *y,
                          float *mask, int64_t n, float ratio, uint64_t seed, uint64_t *step);
/* NCHW bias: y[n,c,i] += b[c]; db[c] = sum over n, i of dy[n,c,i] */
int dlg_cuk_bias_nchw_h(dlg_cu_stream s, dlg_cuk_htype t, dlg_half *y, const float *b, int64_t n,
                        int64_t c, int64_t hw);
int dlg_cuk_bias_grad_nchw_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *dy, float *db,
                             int64_t n, int64_t c, int64_t hw);
int dlg_cuk_pool_fwd_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_cuk_pool *p, const dlg_half *x,
                       dlg_half *y, int *mask);
int dlg_cuk_pool_bwd_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_cuk_pool *p,
                       const dlg_half *dy, const int *mask, dlg_half *dx);
int dlg_cuk_loss_fwd_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *x, const float *labels,
                       int64_t n, int64_t k, float *out, float *lse, int *flag);
/* dx = weight * scale * (softmax(x) - onehot(label)) / n; scale: the
 * loss scale in device memory (cuda_scaler.h), NULL for 1 */
int dlg_cuk_loss_bwd_h(dlg_cu_stream s, dlg_cuk_htype t, const dlg_half *x, const float *labels,
                       const float *lse, int64_t n, int64_t k, float weight, dlg_half *dx,
                       const dlg_scaler *scale);

/* ---- dynamic loss scaling (cuda_scaler.h), all on the device ---- */
/* found_inf |= any inf/NaN in the gradients of the SGD table */
int dlg_cuk_grad_check_multi(dlg_cu_stream s, const dlg_cuk_sgd_tensor *t,
                             const dlg_cuk_sgd_chunk *c, int nchunks, dlg_scaler *sc);
/* dlg_cuk_sgd_multi that reads the gradients times 1/scale, and updates
 * nothing when found_inf is set */
int dlg_cuk_sgd_multi_scaled(dlg_cu_stream s, const dlg_cuk_sgd_tensor *t,
                             const dlg_cuk_sgd_chunk *c, int nchunks, float lr, float momentum,
                             float decay, const dlg_scaler *sc);
/* one thread: dlg_scaler_update */
int dlg_cuk_scaler_update(dlg_cu_stream s, dlg_scaler *sc);

#ifdef __cplusplus
}
#endif
#endif
