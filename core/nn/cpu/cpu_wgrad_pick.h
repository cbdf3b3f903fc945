/* Which kernel computes the weight gradient of a layer cpu_wgrad_amx fits:
 * cpu_wgrad_amx, or oneDNN's AMX backward weights. */
#ifndef DLG_NN_CPU_WGRAD_PICK_H
#define DLG_NN_CPU_WGRAD_PICK_H

#include "cpu.h"
#include "cpu_wgrad_amx.h"

/* Whether cpu_wgrad_amx is the faster for layer l of shape s (which it
 * fits, on a CPU that has the tiles): both timed once per host, layer
 * shape, thread count and oneDNN on up to the layer's batch, the choice
 * kept in the host's tuning record (../tune.h) and read back by later
 * plans, as cpu_conv_algo.c keeps oneDNN's Winograd or direct.  Without a
 * record ($DLGAUGE_TUNE=off) every plan times.  cpu_wgrad_amx must be 10%
 * faster to win.  Test hook: DLG_NN_WGRAD_TIMES="<oneDNN s>,<amx s>"
 * stands for both timings. */
bool cpu_wgrad_amx_picked(cpu_ctx *c, const dlg_layer *l, const cpu_wgrad_shape *s);

#endif
