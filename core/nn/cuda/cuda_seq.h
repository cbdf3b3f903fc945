/* Sequence layers of the CUDA backend: the embedding (own kernels,
 * cuda_embed.c) and the LSTM (cuDNN's v8 RNN API, cuda_lstm.c), and the
 * device side of gradient clipping (cuda_clip.c).  The embedding computes
 * in fp32 on every CUDA backend, and so does the LSTM except under
 * cuda-fp16 (half data, fp32 math: cuda_lstm.c); fp32 inputs and outputs
 * meet half neighbours through staging at the edges (cuda_half.h). */
#ifndef DLG_NN_CUDA_SEQ_H
#define DLG_NN_CUDA_SEQ_H

#include "cuda.h"
#include "cuda_seq_kernels.h"

extern const dlg_kernels dlg_cuda_embed, dlg_cuda_lstm;

/* Note bits of this file's kernels (dlg_cuda_note_once); 16 and up, so
 * they never collide with cuda.h's. */
enum { DLG_CUDA_NOTE_RNN_MATH = 1u << 16 };

/* The clipping buffers in the context (norm_dev, norm_host, clip_dev,
 * clip_host): allocated at open, freed at close (NULL-safe). */
int dlg_cuda_clip_open(dlg_cuda_ctx *c, char *err, size_t errlen);
void dlg_cuda_clip_close(dlg_cuda_ctx *c);
/* Sum of squares of n float arrays in device memory (p[i]: c[i] floats),
 * summed in double in a fixed order, waited for and returned on the host
 * (one stream sync).  -DLG_EINVAL if a loss or embedding kernel has seen
 * a bad label or id. */
int dlg_cuda_sumsq(void *ctx, const float *const *p, const int64_t *c, int n, double *out);
/* p[i][0 .. c[i]) *= f for every array; enqueued, no sync. */
int dlg_cuda_scale(void *ctx, float *const *p, const int64_t *c, int n, float f);
/* The backend's grad_clip (see backend.h): sum of squares, factor and
 * scaling, all enqueued on the net's stream (no sync, nothing allocated:
 * capturable); the state (dlg_cuk_clip) stays on the device. */
int dlg_cuda_clip(void *ctx, float *const *p, const int64_t *c, int n, double max_norm);
/* clip_stats: waits for the stream, then the last norm dlg_cuda_clip saw
 * and how many of its calls scaled; -DLG_EINVAL after a bad label or id. */
int dlg_cuda_clip_stats(void *ctx, double *last_norm, int64_t *clipped);

#endif
