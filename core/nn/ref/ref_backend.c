/* Reference backend: host memory, reference kernels. */
#include "ref.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int ref_open(const dlg_backend_opts *o, void **ctx, char *err, size_t errlen)
{
    *ctx = NULL;
    return 0;
}

static void ref_close(void *ctx) {}

/* Blocks of at least this size come from mmap: the kernel hands them out
 * zeroed without touching them, so planning a net costs address space, not
 * resident memory, until a kernel first writes it (a workload can compare
 * dlg_net_memory_bytes with the memory it may use before any page is
 * touched).  Every block has a 64-byte header in front saying how it was
 * made (the mapping's length, or 0 for posix_memalign). */
#if defined(__SANITIZE_ADDRESS__)
#define REF_MMAP_MIN SIZE_MAX /* AddressSanitizer checks malloc'd blocks only */
#else
#define REF_MMAP_MIN ((size_t)1 << 20)
#endif
#define REF_PAGE ((size_t)4096)
#define REF_HDR ((size_t)64)

static void *ref_alloc(void *ctx, size_t bytes)
{
    /* 64-byte aligned so oneDNN can use the same buffers */
    char *p = NULL;
    size_t mapped = 0;
    if (bytes >= REF_MMAP_MIN) {
        mapped = REF_PAGE + bytes;
        p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        /* transparent huge pages where the kernel offers them on request:
         * one fault per 2 MiB instead of per 4 KiB, fewer TLB misses */
        (void)madvise(p, mapped, MADV_HUGEPAGE);
        p += REF_PAGE - REF_HDR;
    } else {
        if (posix_memalign((void **)&p, 64, REF_HDR + (bytes ? bytes : 64)))
            return NULL;
        memset(p + REF_HDR, 0, bytes);
    }
    memcpy(p, &mapped, sizeof mapped);
    return p + REF_HDR;
}

static void ref_free(void *ctx, void *ptr)
{
    if (!ptr)
        return;
    char *p = (char *)ptr - REF_HDR;
    size_t mapped;
    memcpy(&mapped, p, sizeof mapped);
    if (mapped)
        munmap(p - (REF_PAGE - REF_HDR), mapped);
    else
        free(p);
}

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
