/* Which kernel computes a cpu-bf16 convolution's weight gradient where
 * one of ours takes it: oneDNN's AMX backward weights, cpu_wgrad_amx (few
 * input channels) or an im2col and a matmul (cpu_wgrad_im2col.h). */
#ifndef DLG_NN_CPU_WGRAD_PICK_H
#define DLG_NN_CPU_WGRAD_PICK_H

#include "cpu.h"
#include "cpu_wgrad_amx.h"

typedef enum cpu_wgrad_kind { CPU_WGRAD_ONEDNN, CPU_WGRAD_AMX, CPU_WGRAD_IM2COL, CPU_WGRAD_KINDS } cpu_wgrad_kind;

/* The fastest for layer l of shape s among oneDNN's and those of ours in
 * can (a bit, 1 << kind, for each that takes the shape): all timed once
 * per host, layer shape, thread count and oneDNN on up to the layer's
 * batch, the choice kept in the host's tuning record (../tune.h) and read
 * back by later plans, as cpu_conv_algo.c keeps oneDNN's Winograd or
 * direct.  Without a record ($DLGAUGE_TUNE=off) every plan times.  Ours
 * must be 10% faster than oneDNN's to win.  Test hook:
 * DLG_NN_WGRAD_TIMES="<oneDNN s>,<amx s>,<im2col s>" stands for the
 * timings (a missing one: that kernel cannot run). */
cpu_wgrad_kind cpu_wgrad_pick(cpu_ctx *c, const dlg_layer *l, const cpu_wgrad_shape *s, unsigned can);

#endif
