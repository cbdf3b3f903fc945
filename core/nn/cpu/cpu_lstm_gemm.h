/* The cpu-bf16 LSTM's training path on oneDNN matmuls (cpu_lstm_gemm.c)
 * and its gate loops (cpu_lstm_cell.c), structured as cuDNN and PyTorch
 * run it: one GEMM for every step's input projection, per step the
 * recurrent GEMM (B rows) and the gates; backward per step the gate
 * gradients and dh' = dG Wh^T, then one GEMM each for dWx, dWh and dx
 * over all steps.  Gates i, f, g, o and the ldigo weights as the net's
 * params mean them (I x 4H, H x 4H). */
#ifndef DLG_NN_CPU_LSTM_GEMM_H
#define DLG_NN_CPU_LSTM_GEMM_H

#include "cpu.h"

#include <stdint.h>

typedef struct cpu_lstm_gemm cpu_lstm_gemm;

/* Plans a training layer (matmuls, bf16 weight copies, the buffers its
 * forward keeps for backward); *ws: the scratch its steps need. */
int cpu_lstm_gemm_setup(cpu_ctx *c, const dlg_layer *l, cpu_lstm_gemm **out, size_t *ws, char *err,
                        size_t errlen);
int cpu_lstm_gemm_forward(cpu_ctx *c, dlg_layer *l, cpu_lstm_gemm *s);
int cpu_lstm_gemm_backward(cpu_ctx *c, dlg_layer *l, cpu_lstm_gemm *s);
void cpu_lstm_gemm_destroy(cpu_lstm_gemm *s);

/* ---- gate loops (cpu_lstm_cell.c), B rows of 4H gates [i f g o] ---- */

/* One step forward: g holds x Wx + b, r h' Wh; g becomes the activated
 * gates, c = f cp + i g~, y = o tanh(c) (fp32) and hb its bf16. */
void cpu_lstm_cell_fwd(int64_t B, int64_t H, float *g, const float *r, const float *cp, float *c,
                       float *y, uint16_t *hb);
/* One step backward from the gates g, cells cp (previous) and c, the
 * output's gradient dy plus dh (from the next step): the pre-activation
 * gradients dg (bf16) and dc, in place, becomes the previous cell's. */
void cpu_lstm_cell_bwd(int64_t B, int64_t H, const float *g, const float *cp, const float *c,
                       const float *dy, const float *dh, float *dc, uint16_t *dg);
/* fp32 -> bf16 (round to nearest even), on the backend's threads. */
void cpu_lstm_to_bf16(const float *src, uint16_t *dst, int64_t n);
/* out[j] = sum over rows of m[r][j] (bf16 m, fp32 sums). */
void cpu_lstm_colsum(const uint16_t *m, int64_t rows, int64_t cols, float *out);

#endif
