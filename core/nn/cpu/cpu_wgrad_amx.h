/* The weight gradient of a convolution with few input channels (a net's
 * first layer: 3 colours) on AMX bf16 tiles, in place of oneDNN 2.6's AMX
 * backward weights, which ran those layers at 85-330 GFLOP/s here
 * (GoogLeNet's and ResNet-50's 7x7 stride-2 conv1 at batch 16: 11.5 ms a
 * step against 3 ms forward).  dW^T (taps x oc) = im2col(x)^T . dy, with
 * the input split once per call into planes per channel and stride phase
 * so that each tap's row over an output row is a contiguous read, and dy's
 * pixel pairs interleaved for the tiles; the bias gradient is the tap row
 * of ones. */
#ifndef DLG_NN_CPU_WGRAD_AMX_H
#define DLG_NN_CPU_WGRAD_AMX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cpu_wgrad_shape {
    int64_t N, C, H, W; /* input, NHWC bf16, or NCHW fp32 (f32_nchw) */
    int64_t OC, OH, OW; /* output gradient, NHWC bf16 */
    int KH, KW;
    int S, P;   /* stride and top padding (along h) */
    int SW, PW; /* along w: cpu_wgrad_amx takes only SW == S and PW == P */
    int threads;
    /* x is the net's fp32 NCHW input (rounded to bf16 as oneDNN's reorder
     * rounds it for the forward) */
    bool f32_nchw;
} cpu_wgrad_shape;

/* Whether the kernel takes this shape: C x KH x KW + 1 (the bias) taps up
 * to 512, OC a multiple of 32 up to 256, stride 1 to 4, the same stride
 * and padding along both axes. */
bool cpu_wgrad_amx_fits(const cpu_wgrad_shape *s);
/* Whether this CPU and the OS let us use the tiles (asks the kernel for
 * them, as oneDNN does; once is enough, more is harmless). */
bool cpu_wgrad_amx_supported(void);
/* Scratch for cpu_wgrad_amx, 64-byte aligned. */
size_t cpu_wgrad_amx_scratch(const cpu_wgrad_shape *s);
/* dw (OIHW fp32) and db (fp32, NULL: none) from x (see f32_nchw) and dy
 * (NHWC bf16). */
void cpu_wgrad_amx(const cpu_wgrad_shape *s, const void *x, const uint16_t *dy, float *dw, float *db,
                   void *scratch);

#endif
