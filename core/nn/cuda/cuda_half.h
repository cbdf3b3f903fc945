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
 * kernels on fp32 copies in the workspace (half I/O, fp32 compute).
 *
 * Order: under an NHWC context (c->nhwc, the default of the half maths)
 * 4-d half tensors, and the staging copies of 4-d fp32 tensors, are
 * channels-last (cuda_nhwc.h); the conversions at fp32 edges transpose. */
#ifndef DLG_NN_CUDA_HALF_H
#define DLG_NN_CUDA_HALF_H

#include "cuda.h"
#include "cuda_nhwc.h"
#include "cuda_nhwc_kernels.h"

/* The layouts of half tensors: NCHW order, and NHWC order (4-d tensors
 * of an NHWC context).  dlg_half_layout_for: the one a top gets. */
extern const char dlg_cuda_half_layout[], dlg_cuda_half_nhwc_layout[];
const void *dlg_half_layout_for(const dlg_cuda_ctx *c, const dlg_shape *s);
bool dlg_half_is_layout(const void *layout);
/* A tensor of this shape is stored NHWC in this context (staging copies
 * included); _moves: and that is not the NCHW memory (C > 1, H*W > 1). */
bool dlg_half_nhwc(const dlg_cuda_ctx *c, const dlg_shape *s);
bool dlg_half_moves(const dlg_cuda_ctx *c, const dlg_shape *s);
/* A half tensor descriptor in the context's order for this shape. */
int dlg_half_desc(cudnnTensorDescriptor_t *d, const dlg_cuda_ctx *c, const dlg_shape *s,
                  char *err, size_t errlen);
/* On the stream: fp32 NCHW <-> half in the context's order; half in the
 * context's order <-> half NCHW (only where dlg_half_moves, else a copy). */
int dlg_half_from_f32(dlg_cuda_ctx *c, const dlg_shape *s, const float *x, dlg_half *y);
int dlg_half_to_f32(dlg_cuda_ctx *c, const dlg_shape *s, const dlg_half *x, float *y);
int dlg_half_to_nchw(dlg_cuda_ctx *c, const dlg_shape *s, const dlg_half *x, dlg_half *y);
int dlg_half_from_nchw(dlg_cuda_ctx *c, const dlg_shape *s, const dlg_half *x, dlg_half *y);

/* Per-layer staging of fp32 (plain) bottoms and tops as half. */
typedef struct dlg_half_io {
    int nb, nt;
    dlg_half **sx, **sdx; /* [nb]: half copies of plain bottoms' data/diff */
    dlg_half **sy, **sdy; /* [nt]: half results for plain tops */
} dlg_half_io;

/* Lay out tops as half where allowed, allocate staging for the rest.
 * skip_bottom: bit j set = bottom j is read as is (labels). */
int dlg_half_io_setup(const dlg_cuda_ctx *c, const dlg_layer *l, dlg_half_io *io,
                      unsigned skip_bottom, bool stage_tops, char *err, size_t errlen);
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

/* An fp32 kernel behind a half face (LRN, softmax, batch norm's F32
 * tier): a shadow of the layer with one bottom and one top, fp32 NCHW
 * copies the caller stages in scratch.  The struct points into itself:
 * keep it where it was initialised. */
typedef struct dlg_half_shadow {
    dlg_layer l;
    dlg_tensor b, t;
    dlg_tensor *pb, *pt;
} dlg_half_shadow;

void dlg_half_shadow_init(dlg_half_shadow *s, const dlg_layer *l);
/* Point the shadow at this call: ws for the inner kernel, x for its four
 * copies of n elements each (x, y, dy, dx); returns x. */
float *dlg_half_shadow_bind(dlg_half_shadow *s, const dlg_layer *l, void *ws, float *x);

int dlg_cuda_half_read(void *ctx, const dlg_tensor *t, const void *mem, float *host);
int dlg_cuda_half_write(void *ctx, const dlg_tensor *t, void *mem, const float *host);

extern const dlg_kernels dlg_cuda_conv_h, dlg_cuda_fc_h, dlg_cuda_pool_h, dlg_cuda_staged_h,
    dlg_cuda_relu_h, dlg_cuda_dropout_h, dlg_cuda_concat_h, dlg_cuda_add_h, dlg_cuda_loss_h,
    dlg_cuda_split_h, dlg_cuda_bn_h;

#endif
