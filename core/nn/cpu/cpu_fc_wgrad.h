/* An inner product's weight and bias gradients at a small batch, B outer
 * products summed: dW (O x I) = dY^T (O x B) . X (B x I), written once with
 * streaming stores.  With B a few rows the product is nothing and the
 * bytes of dW everything: oneDNN 2.6 ran VGG16's fc6 at batch 4 (411 MB of
 * fp32 gradient) in 36 ms on its gemm (x64:gemm:jit), about 11 GB/s, this
 * in 11 ms; AlexNet's fc6 at batch 16 in 20 against 6 ms.  Past 32 rows
 * the gemm wins, so which runs is timed (cpu_fc_wgrad_picked). */
#ifndef DLG_NN_CPU_FC_WGRAD_H
#define DLG_NN_CPU_FC_WGRAD_H

#include "cpu.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cpu_fc_wgrad_shape {
    int64_t B, I, O; /* batch, inputs, outputs: x is B x I, dy B x O, dW O x I, all plain fp32 */
    bool bf16;       /* x and dy rounded to bf16 first, as cpu-bf16's kernels take them */
    int threads;
} cpu_fc_wgrad_shape;

/* Whether it takes the shape on this CPU (AVX-512; B up to 64). */
bool cpu_fc_wgrad_fits(const cpu_fc_wgrad_shape *s);
/* Scratch (64-byte aligned) for a call: x and dy as the products read them. */
size_t cpu_fc_wgrad_scratch(const cpu_fc_wgrad_shape *s);
/* dw and db (NULL: no bias) from x and dy. */
void cpu_fc_wgrad(const cpu_fc_wgrad_shape *s, const float *x, const float *dy, float *dw, float *db,
                  void *scratch);
/* Whether it runs layer l (shape s, which it fits, plain input) rather
 * than oneDNN's backward weights: both timed once per host, layer shape
 * and thread count, on as many of the layer's outputs as keep dW within
 * 32 MiB (VGG16's fc6 would first-touch 411 MB, and the run's peak RSS
 * with it), kept in the tuning record (cpu_plan_time.h), as
 * cpu_wgrad_pick.h does for convolutions.  Test hook:
 * DLG_NN_FC_WGRAD_TIMES="<oneDNN s>,<ours s>". */
bool cpu_fc_wgrad_picked(cpu_ctx *c, const dlg_layer *l, const cpu_fc_wgrad_shape *s);

#endif
