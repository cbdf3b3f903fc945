/* Half-storage mixed precision for the CUDA backend: "cuda-bf16:N" (bf16)
 * and "cuda-fp16:N" (IEEE fp16, with dynamic loss scaling: cuda_scaler.h).
 * One code path serves both; the storage type comes from the context's
 * math (dlg_cuda_htype, dlg_cuda_half_dnn, dlg_cuda_half_blas in cuda.h).
 *
 * Activations and their gradients are stored as half wherever the net
 * allows a backend layout (the tensor's layout is dlg_cuda_half_layout);
 * net inputs, outputs nobody reads and labels stay fp32, and a layer
 * converts those at its edges through its own staging buffers (half_io).
 * Params, their gradients and SGD stay fp32 (master weights); conv and fc
 * convert the weights to a half copy in forward and accumulate in fp32.
 * Batch norm runs on cuDNN with half data and fp32 params if cuDNN takes
 * it; LRN and softmax (and a refused batch norm) run the fp32 cuDNN
 * kernels on fp32 copies in the workspace (half I/O, fp32 compute). */
#ifndef DLG_NN_CUDA_HALF_H
#define DLG_NN_CUDA_HALF_H

#include "cuda.h"

extern const char dlg_cuda_half_layout[];

/* Per-layer staging of fp32 (plain) bottoms and tops as half. */
typedef struct dlg_half_io {
    int nb, nt;
    dlg_half **sx, **sdx; /* [nb]: half copies of plain bottoms' data/diff */
    dlg_half **sy, **sdy; /* [nt]: half results for plain tops */
} dlg_half_io;

/* Lay out tops as half where allowed, allocate staging for the rest.
 * skip_bottom: bit j set = bottom j is read as is (labels). */
int dlg_half_io_setup(const dlg_layer *l, dlg_half_io *io, unsigned skip_bottom, bool stage_tops,
                    char *err, size_t errlen);
void dlg_half_io_free(dlg_half_io *io);
/* Convert plain bottoms in (forward) / plain top diffs in (backward). */
int dlg_half_pre_fwd(dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io);
int dlg_half_post_fwd(dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io);
int dlg_half_pre_bwd(dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io);
int dlg_half_post_bwd(dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io);
/* half views of bottom/top data and diffs (staged or the tensor's own). */
dlg_half *dlg_half_x(const dlg_layer *l, const dlg_half_io *io, int j);
dlg_half *dlg_half_dx(const dlg_layer *l, const dlg_half_io *io, int j);
dlg_half *dlg_half_y(const dlg_layer *l, const dlg_half_io *io, int t);
dlg_half *dlg_half_dy(const dlg_layer *l, const dlg_half_io *io, int t);

int dlg_cuda_half_read(void *ctx, const dlg_tensor *t, const void *mem, float *host);
int dlg_cuda_half_write(void *ctx, const dlg_tensor *t, void *mem, const float *host);

extern const dlg_kernels dlg_cuda_conv_h, dlg_cuda_fc_h, dlg_cuda_pool_h, dlg_cuda_staged_h,
    dlg_cuda_relu_h, dlg_cuda_dropout_h, dlg_cuda_concat_h, dlg_cuda_add_h, dlg_cuda_loss_h,
    dlg_cuda_split_h;

#endif
