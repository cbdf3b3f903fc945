/* Lifetime-based memory sharing.  An activation of an inference net lives
 * from its producer's forward to its last reader's forward; a gradient of a
 * training net from its reader's backward (which writes it) to its
 * producer's backward (which reads it; for a split's outputs, the backward
 * of the add that took the split's over).  Buffers whose lifetimes do not
 * overlap share one arena region, placed greedily by size (largest first,
 * best-fitting gap), as TFLite's planner does.  Net inputs, outputs (blobs
 * nobody reads), the loss, params and blobs marked "keep" are never shared.
 * Training keeps every activation some backward kernel reads (kernels say
 * which they do not: bwd_no_bottom_data / bwd_no_top_data); the others,
 * e.g. the input of a ReLU that differentiates from its output, share as
 * in inference. */
#include "net.h"

#include <stdlib.h>
#include <string.h>

#define SHARE_ALIGN 64

typedef struct span {
    int blob;
    int first, last; /* step indices, inclusive */
    size_t bytes, off;
} span;

static size_t blob_bytes(const dlg_blob *b)
{
    /* a backend layout's own size, which a 2-byte type (cpu-bf16) makes
     * smaller than count floats; else count, or more when padded */
    int64_t n = b->t.layout && b->t.alloc_count > 0 ? b->t.alloc_count
                : b->t.alloc_count > b->t.count    ? b->t.alloc_count
                                                   : b->t.count;
    size_t bytes = (size_t)n * sizeof(float);
    return (bytes + SHARE_ALIGN - 1) / SHARE_ALIGN * SHARE_ALIGN;
}

static int by_size_desc(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->first - y->first;
}

static int by_off(const void *a, const void *b)
{
    const span *x = *(const span *const *)a, *y = *(const span *const *)b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Places spans[0..n) (sorted by size) and returns the arena size. */
static size_t place(span *s, int n, const span **tmp)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        int m = 0;
        for (int j = 0; j < i; j++)
            if (s[j].first <= s[i].last && s[i].first <= s[j].last)
                tmp[m++] = &s[j];
        qsort(tmp, (size_t)m, sizeof *tmp, by_off);
        size_t at = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
        for (int j = 0; j < m; j++) {
            if (tmp[j]->off >= at) {
                size_t gap = tmp[j]->off - at;
                if (gap >= s[i].bytes && gap < best_gap) {
                    best = at;
                    best_gap = gap;
                }
            }
            if (tmp[j]->off + tmp[j]->bytes > at)
                at = tmp[j]->off + tmp[j]->bytes;
        }
        s[i].off = best != SIZE_MAX ? best : at;
        if (s[i].off + s[i].bytes > total)
            total = s[i].off + s[i].bytes;
    }
    return total;
}

/* Steps at which each non-alias blob's data is last read in forward (an
 * alias counts as its base); -1 if never read.  A layer folded into
 * another reads nothing: what it read, the one it joined reads. */
static void last_readers(const dlg_net *net, int *last)
{
    for (int b = 0; b < net->nblobs; b++)
        last[b] = -1;
    for (int i = 0; i < net->nnodes; i++)
        for (int j = 0; j < net->nodes[i].l.nbottom && !net->nodes[i].fused; j++) {
            int b = net->nodes[i].bottoms[j];
            if (net->blobs[b].alias_of >= 0)
                b = net->blobs[b].alias_of;
            last[b] = i;
        }
    /* a split's outputs are read by their consumers, so the base lives on */
    for (int b = 0; b < net->nblobs; b++) {
        int a = net->blobs[b].alias_of;
        if (a >= 0 && last[b] > last[a])
            last[a] = last[b];
    }
}

static int base_of(const dlg_net *net, int b)
{
    return net->blobs[b].alias_of >= 0 ? net->blobs[b].alias_of : b;
}

/* need[b]: some backward that runs reads blob b's (or an alias's) data. */
static void backward_reads(const dlg_net *net, bool *need)
{
    for (int b = 0; b < net->nblobs; b++)
        need[b] = false;
    for (int i = 0; i < net->nnodes; i++) {
        const dlg_node *n = &net->nodes[i];
        if (!n->need_backward || n->fused || n->bwd_into >= 0)
            continue;
        for (int j = 0; j < n->l.nbottom && !n->k->bwd_no_bottom_data; j++)
            need[base_of(net, n->bottoms[j])] = true;
        bool top = n->k->bwd_reads_top ? n->k->bwd_reads_top(&n->l) : !n->k->bwd_no_top_data;
        for (int t = 0; t < n->l.ntop && top; t++)
            need[base_of(net, n->tops[t])] = true;
    }
}

/* The layer whose backward reads blob b's gradient: its producer, or the
 * add that took over the producer's (a split's) backward. */
static int reads_diff(const dlg_net *net, int b)
{
    int p = net->blobs[b].producer;
    return net->nodes[p].bwd_into >= 0 ? net->nodes[p].bwd_into : p;
}

static bool shareable(const dlg_blob *b, bool keep_all)
{
    return !keep_all && !b->keep && !b->is_param && !b->is_input && b->producer >= 0;
}

static int root_of(const dlg_net *net, int b)
{
    while (net->blobs[b].alias_of >= 0)
        b = net->blobs[b].alias_of;
    return b;
}

/* A convolution of an inference plan may write its top into its
 * residual's memory when that memory is shareable (nobody keeps or reads
 * it from outside) and read by nothing after it, and its top is read
 * later (an output read after forward must not sit in the arena). */
void dlg_net_offer_in_place(dlg_net *net)
{
    int *last = malloc((size_t)net->nblobs * sizeof(int));
    if (!last)
        return; /* offers nothing: still correct */
    last_readers(net, last);
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        if (n->l.type != DLG_L_CONV || !n->l.p.conv.residual || n->fused)
            continue;
        int r = root_of(net, n->bottoms[1]), t = n->tops[0];
        n->l.p.conv.in_place_ok = !net->train && !n->need_backward && shareable(&net->blobs[r], net->keep_all) &&
                                  shareable(&net->blobs[t], net->keep_all) && last[r] == i && last[t] > i &&
                                  r != root_of(net, n->bottoms[0]);
    }
    free(last);
}

/* The top becomes an alias of the residual's root, as a split's outputs
 * are of their blob, and so do the top's own aliases: one buffer then
 * carries a whole stage's residual stream, each block adding into it. */
void dlg_net_take_in_place(dlg_net *net)
{
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        if (n->fused || n->l.type != DLG_L_CONV || !n->l.p.conv.in_place_ok || !n->k->in_place ||
            !n->k->in_place(n->state))
            continue;
        int r = root_of(net, n->bottoms[1]), t = n->tops[0];
        for (int b = 0; b < net->nblobs; b++)
            if (net->blobs[b].alias_of == t)
                net->blobs[b].alias_of = r;
        net->blobs[t].alias_of = r;
    }
}

/* Lifetimes of data (which == DLG_DATA; in training only data no backward
 * reads), in forward steps, or of a training net's diffs, in backward steps. */
static int collect(const dlg_net *net, dlg_which which, span *s)
{
    int *last = malloc((size_t)net->nblobs * sizeof(int));
    int *first_bw = malloc((size_t)net->nblobs * sizeof(int));
    bool *need = malloc((size_t)net->nblobs * sizeof(bool));
    int n = 0;
    if (!last || !first_bw || !need) {
        free(last);
        free(first_bw);
        free(need);
        return -1;
    }
    last_readers(net, last);
    backward_reads(net, need);
    /* the first backward step touching a diff: its earliest-run reader */
    for (int b = 0; b < net->nblobs; b++)
        first_bw[b] = -1;
    for (int i = 0; i < net->nnodes; i++)
        for (int j = 0; j < net->nodes[i].l.nbottom; j++)
            first_bw[net->nodes[i].bottoms[j]] = i;
    for (int b = 0; b < net->nblobs; b++) {
        const dlg_blob *bl = &net->blobs[b];
        if (!shareable(bl, net->keep_all) || bl->dead)
            continue;
        if (which == DLG_DATA && bl->alias_of < 0 && last[b] >= 0 && !(net->train && need[b]))
            s[n++] = (span){b, bl->producer, last[b], blob_bytes(bl), 0};
        else if (which == DLG_DIFF && bl->needs_grad && first_bw[b] >= 0)
            s[n++] = (span){b, net->nnodes - 1 - first_bw[b], net->nnodes - 1 - reads_diff(net, b),
                            blob_bytes(bl), 0};
    }
    free(last);
    free(first_bw);
    free(need);
    return n;
}

/* Plans one arena; sets the shared flag of every blob placed in it. */
static int share(dlg_net *net, dlg_which which)
{
    span *s = malloc((size_t)net->nblobs * sizeof *s);
    const span **tmp = malloc((size_t)net->nblobs * sizeof *tmp);
    int n = s && tmp ? collect(net, which, s) : -1;
    int rc = 0;
    if (n < 0) {
        rc = dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
        goto out;
    }
    qsort(s, (size_t)n, sizeof *s, by_size_desc);
    size_t total = place(s, n, tmp);
    void **arena = &net->arena[which == DLG_DIFF];
    if (total && !(*arena = net->bk->alloc(net->ctx, total))) {
        rc = dlg_net_fail(net, DLG_ENOMEM,
                          "nn: net '%s': out of %s memory for a %zu-byte shared %s arena",
                          net->name, net->bk->name, total,
                          which == DLG_DIFF ? "gradient" : "activation");
        goto out;
    }
    net->arena_bytes[which == DLG_DIFF] = total;
    for (int i = 0; i < n; i++) {
        dlg_blob *bl = &net->blobs[s[i].blob];
        void *p = (char *)*arena + s[i].off;
        if (which == DLG_DIFF) {
            bl->t.diff = p;
            bl->shared_diff = true;
        } else {
            bl->t.data = p;
            bl->shared_data = true;
        }
    }
out:
    free(s);
    free(tmp);
    return rc;
}

int dlg_net_alloc_blobs(dlg_net *net)
{
    const dlg_backend *bk = net->bk;
    int rc = share(net, DLG_DATA);
    if (!rc && net->train)
        rc = share(net, DLG_DIFF);
    if (rc)
        return rc;
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < net->nblobs; b++) {
            dlg_blob *bl = &net->blobs[b];
            size_t bytes = blob_bytes(bl);
            if ((bl->alias_of >= 0) != (pass == 1) || bl->dead)
                continue;
            if (bl->alias_of >= 0) {
                bl->t.data = net->blobs[bl->alias_of].t.data;
                bl->shared_data = net->blobs[bl->alias_of].shared_data;
            } else if (!bl->shared_data) {
                if (!(bl->t.data = bk->alloc(net->ctx, bytes)))
                    goto oom;
                net->own_bytes += bytes;
            }
            if (bl->needs_grad && !bl->shared_diff) {
                if (!(bl->t.diff = bk->alloc(net->ctx, bytes)))
                    goto oom;
                net->own_bytes += bytes;
            }
            if (bl->needs_grad && bl->is_param) {
                if (!(bl->t.hist = bk->alloc(net->ctx, bytes)))
                    goto oom;
                net->own_bytes += bytes;
            }
        }
    return 0;
oom:
    return dlg_net_fail(net, DLG_ENOMEM, "nn: net '%s': out of %s memory for activations",
                        net->name, bk->name);
}

void dlg_net_free_blobs(dlg_net *net)
{
    for (int b = 0; b < net->nblobs; b++) {
        dlg_blob *bl = &net->blobs[b];
        dlg_tensor *t = &bl->t;
        if (bl->alias_of < 0 && !bl->shared_data)
            net->bk->free(net->ctx, t->data);
        if (!bl->shared_diff)
            net->bk->free(net->ctx, t->diff);
        net->bk->free(net->ctx, t->hist);
        t->data = t->diff = t->hist = NULL;
        t->layout = NULL; /* pointed into kernel state */
        bl->shared_data = bl->shared_diff = false;
    }
    for (int i = 0; i < 2; i++) {
        net->bk->free(net->ctx, net->arena[i]);
        net->arena[i] = NULL;
        net->arena_bytes[i] = 0;
    }
    net->own_bytes = 0;
}
