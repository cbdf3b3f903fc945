/* Dynamic loss scaling for fp16 (cuda-fp16:N): the state lives in device
 * memory and every step of it runs on the device, so no step waits for the
 * host and the whole step can be captured in a CUDA graph.
 *
 * Per training step: the loss kernel's backward multiplies the loss
 * gradient by `scale`; after backward one multi-tensor pass over the param
 * gradients sets `found_inf` on any inf/NaN; the SGD launch skips every
 * update when it is set, else multiplies each gradient by 1/scale; then
 * dlg_scaler_update (one thread) adjusts the scale and clears the flag.
 *
 * The rule is torch.cuda.amp.GradScaler's (torch/amp/grad_scaler.py and
 * _amp_update_scale_cuda_kernel in aten/src/ATen/native/cuda/AmpKernels.cu):
 * its default init_scale 2^16, growth_factor 2, backoff_factor 0.5 and
 * growth_interval 2000.  Like PyTorch, the scale has no lower bound, and
 * it never grows to infinity.  Plain C and a header, so the very same rule
 * is compiled into the kernel and into the host unit test. */
#ifndef DLG_NN_CUDA_SCALER_H
#define DLG_NN_CUDA_SCALER_H

#include <stdint.h>

#ifdef __CUDACC__
#define DLG_SCALER_FN __host__ __device__ static inline
#else
#define DLG_SCALER_FN static inline
#endif

#define DLG_SCALER_INIT 65536.0f  /* GradScaler init_scale 2**16 */
#define DLG_SCALER_GROWTH 2.0f    /* growth_factor */
#define DLG_SCALER_BACKOFF 0.5f   /* backoff_factor */
#define DLG_SCALER_INTERVAL 2000  /* growth_interval: clean steps per doubling */

typedef struct dlg_scaler {
    float scale;     /* S: the loss gradient is multiplied by it */
    int32_t found_inf; /* this step's gradients hold an inf or NaN */
    int32_t good;    /* clean steps since the scale last changed */
    int32_t pad;
    int64_t skipped; /* updates skipped for an inf/NaN, since open */
} dlg_scaler;

DLG_SCALER_FN void dlg_scaler_init(dlg_scaler *s)
{
    s->scale = DLG_SCALER_INIT;
    s->found_inf = 0;
    s->good = 0;
    s->pad = 0;
    s->skipped = 0;
}

/* After a step's SGD launch: halve on overflow, double after
 * DLG_SCALER_INTERVAL clean steps in a row (unless that overflows fp32). */
DLG_SCALER_FN void dlg_scaler_update(dlg_scaler *s)
{
    if (s->found_inf) {
        s->scale *= DLG_SCALER_BACKOFF;
        s->good = 0;
        s->skipped++;
    } else if (s->good + 1 >= DLG_SCALER_INTERVAL) {
        float grown = s->scale * DLG_SCALER_GROWTH;
        if (grown - grown == 0.0f) /* finite */
            s->scale = grown;
        s->good = 0;
    } else {
        s->good++;
    }
    s->found_inf = 0;
}

#endif
