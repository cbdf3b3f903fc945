/* Reference backend: host memory, reference kernels. */
#include "ref.h"

#include <stdlib.h>
#include <string.h>

static int ref_open(const dlg_backend_opts *o, void **ctx, char *err, size_t errlen)
{
    *ctx = NULL;
    return 0;
}

static void ref_close(void *ctx) {}

static void *ref_alloc(void *ctx, size_t bytes)
{
    /* 64-byte aligned so oneDNN can use the same buffers */
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64))
        return NULL;
    memset(p, 0, bytes);
    return p;
}

static void ref_free(void *ctx, void *p) { free(p); }

static int ref_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return 0;
}

static int ref_zero(void *ctx, void *dst, size_t bytes)
{
    memset(dst, 0, bytes);
    return 0;
}

static int ref_sync(void *ctx) { return 0; }

int dlg_ref_sgd(void *ctx, dlg_tensor *w, float lr, float momentum, float decay)
{
    float *x = F(w), *g = G(w), *h = w->hist;
    for (int64_t i = 0; i < w->count; i++) {
        h[i] = momentum * h[i] + lr * (g[i] + decay * x[i]);
        x[i] -= h[i];
    }
    return 0;
}

int dlg_ref_setup_none(void *ctx, const dlg_layer *l, void **state, size_t *ws, char *err,
                       size_t errlen)
{
    *state = NULL;
    *ws = 0;
    return 0;
}

const dlg_backend dlg_backend_ref = {
    .name = "ref",
    .open = ref_open,
    .close = ref_close,
    .alloc = ref_alloc,
    .free = ref_free,
    .upload = ref_copy,
    .download = ref_copy,
    .zero = ref_zero,
    .sync = ref_sync,
    .sgd = dlg_ref_sgd,
    .kernels =
        {
            [DLG_L_CONV] = &dlg_ref_conv,
            [DLG_L_POOL] = &dlg_ref_pool,
            [DLG_L_LRN] = &dlg_ref_lrn,
            [DLG_L_RELU] = &dlg_ref_relu,
            [DLG_L_BN] = &dlg_ref_bn,
            [DLG_L_FC] = &dlg_ref_fc,
            [DLG_L_DROPOUT] = &dlg_ref_dropout,
            [DLG_L_CONCAT] = &dlg_ref_concat,
            [DLG_L_ADD] = &dlg_ref_add,
            [DLG_L_SOFTMAX] = &dlg_ref_softmax,
            [DLG_L_LOSS] = &dlg_ref_loss,
            [DLG_L_SPLIT] = &dlg_ref_split,
            [DLG_L_EMBED] = &dlg_ref_embed,
            [DLG_L_LSTM] = &dlg_ref_lstm,
        },
    .fallback = NULL,
};
