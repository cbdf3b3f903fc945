/* The plain-C reference backend: naive loops with double accumulation.
 * It is the ground truth in tests and the cpu backend's fallback. */
#ifndef DLG_NN_REF_H
#define DLG_NN_REF_H

#include "../backend.h"

extern const dlg_backend dlg_backend_ref;

extern const dlg_kernels dlg_ref_conv, dlg_ref_fc, dlg_ref_pool, dlg_ref_lrn, dlg_ref_bn,
    dlg_ref_softmax, dlg_ref_loss, dlg_ref_relu, dlg_ref_dropout, dlg_ref_concat, dlg_ref_add,
    dlg_ref_split;
/* ref_lstm.c */
extern const dlg_kernels dlg_ref_embed, dlg_ref_lstm;

/* setup for kernels without state or scratch */
int dlg_ref_setup_none(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                       size_t errlen);
/* The output's gradient at i: its diff, or the sum of a folded split's
 * output diffs (top_parts: an add or a batch norm that took the split's
 * backward over). */
float dlg_ref_top_grad(const dlg_layer *l, int64_t i);
/* The softmax loss's label of row i (bottom[1]) as a class id in [0, K),
 * or -DLG_EINVAL for anything else; shared with the cpu backend. */
int dlg_ref_label(const dlg_layer *l, int64_t i, int64_t K, int64_t *out);
/* Caffe SGD on host memory, shared with the cpu backend. */
int dlg_ref_sgd(void *ctx, dlg_tensor *w, float lr, float momentum, float decay);

/* Element-wise loops the cpu backend borrows (dropout) run on its OpenMP
 * team where the build has one; each element is independent, so the
 * result does not depend on the thread count. */
#ifdef _OPENMP
#define DLG_REF_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define DLG_REF_PARALLEL_FOR
#endif

#define F(t) ((float *)(t)->data)
#define G(t) ((float *)(t)->diff)

#endif
