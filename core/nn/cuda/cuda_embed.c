/* Embedding on the CUDA backend: forward gathers table rows; backward
 * scatter-adds the output gradient into the table's gradient
 * (cuda_seq_kernels.cu): for up to 65536 rows (bptt x batch), or always
 * when the plan asks for determinism, each table row is summed by one
 * block in row order, so the result has the same bits on every run; for
 * more rows, atomic adds.  An id that is not an integer in [0, vocab) sets
 * the backend's sticky bad-input flag (as a bad label does), which the
 * next loss forward, sync or read of results reports as -DLG_EINVAL;
 * forward itself never waits, so it can be captured in a CUDA graph. */
#include "cuda_seq.h"

#define K(call) dlg_cuda_ok((cudaError_t)(call))

static int embed_setup(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                       size_t errlen)
{
    l->top[0]->layout = NULL;
    *state = NULL;
    *ws = 0;
    return 0;
}

static int embed_forward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    int64_t n = l->top[0]->shape.d[0], d = dlg_shape_inner(&l->top[0]->shape);
    return K(dlg_cuk_embed_fwd(c->stream, CF(l->bottom[0]), CF(l->param[0]), CF(l->top[0]), n, d,
                               l->p.embed.vocab, c->flag_dev));
}

static int embed_backward(void *ctx, dlg_layer *l, void *st)
{
    dlg_cuda_ctx *c = ctx;
    int64_t n = l->top[0]->shape.d[0], d = dlg_shape_inner(&l->top[0]->shape);
    int rc = 0;
    if (l->prop_down[0] && l->bottom[0]->diff) /* ids are not differentiable */
        rc = dlg_cuda_ok(cudaMemsetAsync(l->bottom[0]->diff, 0,
                                         (size_t)l->bottom[0]->count * sizeof(float), c->stream));
    if (rc || !l->param_grad || !CG(l->param[0]))
        return rc;
    /* accumulate: a tied decoder's backward has already written the
     * table's gradient (seq.c, dlg_net_tie) */
    return K(dlg_cuk_embed_bwd(c->stream, CF(l->bottom[0]), CG(l->top[0]), CG(l->param[0]), n, d,
                               l->p.embed.vocab, l->p.embed.accumulate, c->deterministic));
}

/* backward reads the ids and dy, never the output */
const dlg_kernels dlg_cuda_embed = {.setup = embed_setup,
                                    .forward = embed_forward,
                                    .backward = embed_backward,
                                    .bwd_no_top_data = true};
