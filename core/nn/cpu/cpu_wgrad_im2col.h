/* The weight gradient of a bf16 convolution as one matmul over an im2col
 * of its NHWC input: dW (oc x KH*KW*ic) = dY^T (oc x pixels) . col
 * (pixels x KH*KW*ic), oneDNN's brgemm matmul on AMX, the gradient
 * written OHWI (the master weights take that layout).  oneDNN 2.6's AMX
 * convolution backward weights ran ResNet-50's 3x3 layers over 7 x 7 and
 * its strided ones at 270-540 GFLOP/s (2 threads, batch 16: 512 -> 512
 * stride 2, 13.9 ms), the matmul at about 1 TFLOP/s (3.8 ms with the
 * im2col); where pixels are many and channels few the convolution's own
 * kernel is faster (64 -> 64 at 56 x 56: 3.3 against 12.9 ms), so which
 * runs is timed (cpu_wgrad_pick.h). */
#ifndef DLG_NN_CPU_WGRAD_IM2COL_H
#define DLG_NN_CPU_WGRAD_IM2COL_H

#include "cpu.h"
#include "cpu_bn_bf16.h"
#include "cpu_wgrad_amx.h"

/* The most an im2col takes (its pixels x KH*KW*ic bf16), in the
 * workspace: past it the convolution's own kernel was the faster. */
#define CPU_WGRAD_IM2COL_MAX ((size_t)32 << 20)

typedef struct cpu_im2col_wgrad {
    cpu_wgrad_shape s; /* x: NHWC bf16 (f32_nchw unused) */
    cpu_prim mm;       /* args: dy, col, dw */
    size_t col_bytes;  /* the im2col, at the workspace's start */
    cpu_bn_shape bias; /* rows 0: no bias; else its gradient from dy's channel sums */
} cpu_im2col_wgrad;

/* Whether it takes the shape: the im2col within CPU_WGRAD_IM2COL_MAX. */
bool cpu_wgrad_im2col_fits(const cpu_wgrad_shape *s);
/* The gradient's layout: OIHW dims, OHWI order (acdb), fp32. */
dnnl_memory_desc_t cpu_wgrad_im2col_md(const cpu_wgrad_shape *s);
/* Creates the matmul for s: 0, or -1 where oneDNN would not run it on
 * brgemm with both tensors as they are. */
int cpu_wgrad_im2col_init(cpu_ctx *c, cpu_im2col_wgrad *w, const cpu_wgrad_shape *s, bool bias);
/* The workspace a call needs. */
size_t cpu_wgrad_im2col_ws(const cpu_im2col_wgrad *w);
/* dw (OHWI) and db (NULL: none) from x and dy (NHWC bf16). */
int cpu_wgrad_im2col(cpu_ctx *c, cpu_im2col_wgrad *w, const uint16_t *x, const uint16_t *dy, float *dw,
                     float *db, void *ws);
void cpu_wgrad_im2col_destroy(cpu_im2col_wgrad *w);

#endif
