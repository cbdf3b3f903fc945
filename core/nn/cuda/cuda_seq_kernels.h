/* CUDA kernels of the sequence layers and of gradient clipping
 * (cuda_seq_kernels.cu): embedding gather and scatter-add, the LSTM's
 * weight packing into and out of cuDNN's weight space, and sums of squares
 * and scaling over parameter gradients.  All launch on the given stream
 * and return a cudaError_t as int (0 = launched); plain C prototypes, so
 * host code needs no nvcc. */
#ifndef DLG_NN_CUDA_SEQ_KERNELS_H
#define DLG_NN_CUDA_SEQ_KERNELS_H

#include "cuda_kernels.h" /* dlg_cu_stream */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- embedding ------------------------------------------------------------ */
/* y[r, :] = table[ids[r], :] for r < n (rows of d floats).  ids are floats
 * holding integers; one that is not an integer in [0, vocab) gives a zero
 * row and sets *flag = 1 (the backend's sticky bad-input flag). */
int dlg_cuk_embed_fwd(dlg_cu_stream s, const float *ids, const float *table, float *y, int64_t n,
                      int64_t d, int64_t vocab, int *flag);
/* dtable[v, :] (+)= sum of dy[r, :] over the rows r with ids[r] == v
 * (accumulate = 0: the table gradient is zeroed first, the engine's
 * overwrite rule).  Up to DLG_CUK_EMBED_ROWS_MAX rows, or with
 * deterministic set, each table row is summed by one block in row order
 * (no atomics, no sort: the same bits on every run); beyond, with atomic
 * adds (fast, the last bits may vary between runs). */
#define DLG_CUK_EMBED_ROWS_MAX 65536
int dlg_cuk_embed_bwd(dlg_cu_stream s, const float *ids, const float *dy, float *dtable,
                      int64_t n, int64_t d, int64_t vocab, int accumulate, int deterministic);

/* ---- LSTM weights <-> cuDNN weight space ----------------------------------- */
/* The engine keeps W (rows x 4H, gates i f g o side by side in each row);
 * cuDNN keeps one H x rows matrix per gate (row-major, its "linear layer"
 * matrices), wherever cudnnGetRNNWeightParams says they are, in the RNN's
 * data type.  pack: gate[g][h * rows + r] = w[r * 4H + g * H + h]; unpack
 * is the inverse.  The engine's side is always fp32 (master weights).
 * Any size: grid y loops past 65535 tiles (rows or H above 2 M). */
typedef struct dlg_cuk_gates {
    void *p[4]; /* float, or half of the call's dlg_cuk_htype */
} dlg_cuk_gates;
int dlg_cuk_lstm_pack(dlg_cu_stream s, const float *w, int64_t rows, int64_t h,
                      dlg_cuk_gates gate);
int dlg_cuk_lstm_unpack(dlg_cu_stream s, dlg_cuk_gates gate, int64_t rows, int64_t h, float *w);
/* pack / unpack (hspace = 0) or their _h forms (hspace = 1, type ht) with
 * grid y capped at max_gy (>= 1) instead of the hardware's 65535, so that
 * the kernel tests take the loop over grid y (rows or h above 2 M) with a
 * matrix small enough for the emulator. */
int dlg_cuk_lstm_pack_grid(dlg_cu_stream s, int hspace, dlg_cuk_htype ht, const float *w,
                           int64_t rows, int64_t h, dlg_cuk_gates gate, int64_t max_gy);
int dlg_cuk_lstm_unpack_grid(dlg_cu_stream s, int hspace, dlg_cuk_htype ht, dlg_cuk_gates gate,
                             int64_t rows, int64_t h, float *w, int64_t max_gy);
/* Bias (4H, gates side by side) to and from cuDNN's four H-vectors. */
int dlg_cuk_lstm_pack_bias(dlg_cu_stream s, const float *b, int64_t h, dlg_cuk_gates gate);
int dlg_cuk_lstm_unpack_bias(dlg_cu_stream s, dlg_cuk_gates gate, int64_t h, float *b);
/* The same into and out of a half weight space (cuda-fp16): pack rounds
 * the fp32 master weights to nearest even; unpack widens the half weight
 * gradient into the fp32 param gradient. */
int dlg_cuk_lstm_pack_h(dlg_cu_stream s, dlg_cuk_htype t, const float *w, int64_t rows,
                        int64_t h, dlg_cuk_gates gate);
int dlg_cuk_lstm_unpack_h(dlg_cu_stream s, dlg_cuk_htype t, dlg_cuk_gates gate, int64_t rows,
                          int64_t h, float *w);
int dlg_cuk_lstm_pack_bias_h(dlg_cu_stream s, dlg_cuk_htype t, const float *b, int64_t h,
                             dlg_cuk_gates gate);
int dlg_cuk_lstm_unpack_bias_h(dlg_cu_stream s, dlg_cuk_htype t, dlg_cuk_gates gate, int64_t h,
                               float *b);

/* ---- gradient clipping ------------------------------------------------------ */
/* Partial sums of squares of g[0..n) in double: slots[b] (+)= the part of
 * block b of up to DLG_CUK_SUMSQ_SLOTS (as many as n fills); first = 1
 * overwrites the slots (those of no block with 0).  Calls
 * on one stream run in order, so a list of arrays accumulates without
 * atomics and the result does not depend on timing. */
#define DLG_CUK_SUMSQ_SLOTS 256
int dlg_cuk_sumsq(dlg_cu_stream s, const float *g, int64_t n, double *slots, int first);
/* *out = slots[0] + slots[1] + ... + slots[DLG_CUK_SUMSQ_SLOTS - 1], in
 * that order (one thread: the result is the same on every run). */
int dlg_cuk_sumsq_total(dlg_cu_stream s, const double *slots, double *out);
/* g[0..n) *= f */
int dlg_cuk_scale(dlg_cu_stream s, float *g, int64_t n, float f);
/* Clipping without the host (torch.nn.utils.clip_grad_norm_): what one
 * thread derives from the sum of squares, in device memory, for the
 * dlg_cuk_scale_by launches after it. */
typedef struct dlg_cuk_clip {
    double total;                /* sum of squares (dlg_cuk_sumsq_total's out) */
    double norm;                 /* sqrt(total) / the loss scale: the last step's */
    unsigned long long clipped;  /* steps whose gradients were scaled, since open */
    float coef;                  /* this step's factor: 1, or max_norm / (norm + 1e-6) */
    float pad;
} dlg_cuk_clip;
/* st->norm = sqrt(st->total) / (loss_scale ? *loss_scale : 1); with
 * max_norm > 0 and norm > max_norm, coef = max_norm / (norm + 1e-6) and
 * clipped++, else coef = 1 (max_norm <= 0 measures only).  An inf norm
 * (an fp16 step that overflowed) gives coef 0, and the gradients stay
 * non-finite, so the loss scaler still skips that step. */
int dlg_cuk_clip_coef(dlg_cu_stream s, dlg_cuk_clip *st, const float *loss_scale,
                      double max_norm);
/* g[0..n) *= *coef, read on the device (nothing written when it is 1) */
int dlg_cuk_scale_by(dlg_cu_stream s, float *g, int64_t n, const float *coef);

#ifdef __cplusplus
}
#endif
#endif
